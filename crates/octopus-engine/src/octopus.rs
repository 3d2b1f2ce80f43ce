//! The [`Octopus`] service's state: what it is handed ([`Ports`]), the
//! settings it runs with, and the caches its operations share. Each area of
//! operations is a file of `service/`, an `impl Octopus` of its own.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use octopus_core::agent::Agent;
use octopus_core::chat::ChatModels;
use octopus_core::embedding::{Embedder, EmbedderSource};
use octopus_core::memory_jobs::MemoryQueue;
use octopus_core::recall_ranking::RankingWeights;
use octopus_core::store::Store;
use octopus_core::tenant::KeyHash;
use octopus_core::tokens::{ApproximateTokenCounter, TokenCounter};
use octopus_core::webhook_sender::WebhookSender;
use octopus_core::{AgentId, ConversationId, TenantId};

use crate::cache::TtlCache;
use crate::config::{EngineConfig, Limits};
use crate::embedding_stats::EmbeddingStats;
use crate::error::{Error, Result};

/// The Octopus service. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Octopus {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) tokens: Arc<dyn TokenCounter>,
    pub(crate) limits: Limits,
    /// The admin key's hash, read once: every request compares against it.
    pub(crate) admin_key: Arc<RwLock<Option<KeyHash>>>,
    pub(crate) caches: Arc<Caches>,
    pub(crate) embedding: Arc<Embedding>,
    /// Wakes the memory worker when this process queues work.
    pub(crate) work_signal: Arc<crate::work_signal::WorkSignal>,
    pub(crate) history: Arc<crate::history::HistoryCache>,
    pub(crate) embedding_stats: Arc<EmbeddingStats>,
    pub(crate) job_stats: Arc<crate::job_stats::MemoryJobStats>,
    pub(crate) quotas: Arc<crate::quotas::QuotaState>,
    pub(crate) chat: Arc<dyn ChatModels>,
    /// Whether and how often agents' models are asked for summaries.
    pub(crate) summaries: Summaries,
    /// How long the memory worker holds the jobs it claims.
    pub(crate) job_lease: Duration,
    pub(crate) procedure_matchers: Arc<crate::procedure_matching::MatcherCache>,
    /// Compiled sizes of trigger patterns, by pattern, for the tenants'
    /// quota on them (a pattern is compiled once to be measured).
    pub(crate) pattern_sizes: Arc<TtlCache<String, usize>>,
    /// How recall weighs its evidence.
    pub(crate) recall_weights: RankingWeights,
    /// Vectors of recent query texts, when `query_cache_entries` keeps any:
    /// users repeat themselves, a client asking for recall and then for the
    /// context of one message sends it twice, and embedding is most of a
    /// query's time. A text's vector changes only with the model.
    pub(crate) query_vectors: Option<Arc<QueryVectors>>,
    /// Each tenant's share of the embedder's queue of readers' queries.
    pub(crate) query_turns: Arc<crate::tenant_turns::TenantTurns>,
    /// Sends webhook deliveries under the `[webhooks]` rules.
    pub(crate) webhooks: Arc<crate::webhooks::Sender>,
    /// The users whose profile summary is being written.
    pub(crate) profile_writes: Arc<crate::service::profile_summaries::ProfileWrites>,
}

/// What the service is handed besides its settings: the store, and the
/// adapters it calls out through. `octopus-app` builds them from the
/// configuration.
#[derive(Clone)]
pub struct Ports {
    pub store: Arc<dyn Store>,
    /// The embedder, loaded on first use.
    pub embedder: Arc<dyn EmbedderSource>,
    /// The agents' chat models.
    pub chat_models: Arc<dyn ChatModels>,
    /// Carries webhook deliveries.
    pub webhooks: Arc<dyn WebhookSender>,
}

/// Refuses the engine's own settings that cannot work: recall weights out
/// of range, a webhook schedule without sane waits. (The adapters' settings
/// are their builders' to check.) Cheap; a process calls it before opening
/// its backends.
pub fn check_config(config: &EngineConfig) -> Result<()> {
    config
        .recall
        .validate()
        .map_err(|e| Error::Config(e.to_string()))?;
    config.webhooks.validate()?;
    Ok(())
}

/// Whether episode summaries are asked of the agents' models, and the first
/// wait before asking again when none could write one (`[llm]`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Summaries {
    pub(crate) ask_models: bool,
    pub(crate) retry_base: Duration,
}

impl Summaries {
    fn new(settings: &octopus_core::llm_settings::LlmSettings) -> Self {
        Self {
            ask_models: settings.summarise_episodes,
            retry_base: Duration::from_secs(settings.summary_retry_secs.max(1)),
        }
    }
}

/// Memory the history cache may hold.
const HISTORY_CACHE_BYTES: usize = 64 << 20;

/// The embedder, loaded on first use: a server that never embeds never pays for
/// loading the model.
pub(crate) struct Embedding {
    pub(crate) source: Arc<dyn EmbedderSource>,
    pub(crate) loaded: tokio::sync::OnceCell<Arc<dyn Embedder>>,
    /// One ingestion batch embeds at a time, so a large ingest leaves CPU for
    /// the queries of live conversations, which do not wait on this.
    pub(crate) ingest_permits: tokio::sync::Semaphore,
}

impl Embedding {
    pub(crate) fn new(source: Arc<dyn EmbedderSource>) -> Self {
        Self {
            source,
            loaded: tokio::sync::OnceCell::new(),
            ingest_permits: tokio::sync::Semaphore::new(1),
        }
    }
}

/// How long another process's change (a revoked key, an edited agent) may go
/// unseen here.
const CACHE_TTL: Duration = Duration::from_secs(5);
const CACHE_CAPACITY: usize = 100_000;

type QueryVectors = TtlCache<String, Arc<Vec<f32>>>;

/// A query-vector cache of `entries`, none for 0. Its entries never go
/// stale; the hour only bounds how long a vector nobody asks for stays.
fn query_vectors(entries: usize) -> Option<Arc<QueryVectors>> {
    (entries > 0).then(|| Arc::new(TtlCache::new(Duration::from_secs(3600), entries)))
}

/// What every append would otherwise read from the store before writing.
pub(crate) struct Caches {
    pub(crate) key_tenants: TtlCache<KeyHash, TenantId>,
    /// The name of a live key, which records of a person's changes carry
    /// (every MCP request over HTTP asks for it).
    pub(crate) key_names: TtlCache<KeyHash, String>,
    pub(crate) agents: TtlCache<(TenantId, AgentId), Agent>,
    /// A conversation's agent never changes, so this one is never stale.
    pub(crate) conversation_agents: TtlCache<(TenantId, ConversationId), AgentId>,
}

impl Octopus {
    /// The service over `ports`, with `config`'s settings; refuses settings
    /// that cannot work (see [`check_config`]).
    pub fn new(config: &EngineConfig, ports: Ports) -> Result<Self> {
        check_config(config)?;
        let mut octopus = Self::with_store(ports.store, config.limits);
        octopus.embedding = Arc::new(Embedding::new(ports.embedder));
        octopus.chat = ports.chat_models;
        octopus.summaries = Summaries::new(&config.llm);
        octopus.quotas = Arc::new(crate::quotas::QuotaState::new(config.quotas.clone()));
        octopus.job_lease = Duration::from_secs(config.worker.job_lease_secs.max(1));
        octopus.recall_weights = config.recall;
        octopus.query_vectors = query_vectors(config.embedding.query_cache_entries());
        octopus.webhooks = Arc::new(crate::webhooks::Sender::new(
            config.webhooks.clone(),
            ports.webhooks,
        ));
        Ok(octopus)
    }

    /// The service over a store alone, with the default settings and no
    /// adapters: embedding, model calls and webhook endpoints are refused,
    /// naming what is missing. For tools that only write and read records.
    pub fn with_store(store: Arc<dyn Store>, limits: Limits) -> Self {
        let caches = Caches {
            key_tenants: TtlCache::new(CACHE_TTL, CACHE_CAPACITY),
            key_names: TtlCache::new(CACHE_TTL, CACHE_CAPACITY),
            agents: TtlCache::new(CACHE_TTL, CACHE_CAPACITY),
            conversation_agents: TtlCache::new(CACHE_TTL, CACHE_CAPACITY),
        };
        Self {
            store,
            tokens: Arc::new(ApproximateTokenCounter),
            limits,
            admin_key: Arc::new(RwLock::new(None)),
            caches: Arc::new(caches),
            embedding: Arc::new(Embedding::new(Arc::new(crate::absent::Absent))),
            work_signal: Arc::default(),
            history: Arc::new(crate::history::HistoryCache::new(HISTORY_CACHE_BYTES)),
            embedding_stats: Arc::default(),
            job_stats: Arc::default(),
            quotas: Arc::default(),
            chat: Arc::new(crate::absent::Absent),
            summaries: Summaries::new(&Default::default()),
            job_lease: Duration::from_secs(crate::config::WorkerSettings::default().job_lease_secs),
            procedure_matchers: Arc::default(),
            pattern_sizes: Arc::new(TtlCache::new(Duration::from_secs(3600), 100_000)),
            recall_weights: RankingWeights::default(),
            query_vectors: query_vectors(
                octopus_core::embedding_settings::EmbeddingSettings::default()
                    .query_cache_entries(),
            ),
            query_turns: Arc::new(crate::tenant_turns::TenantTurns::per_core()),
            webhooks: Arc::new(crate::webhooks::Sender::new(
                Default::default(),
                Arc::new(crate::absent::Absent),
            )),
            profile_writes: Arc::default(),
        }
    }

    /// The same service, sharing everything, with agents' models from
    /// `models` (a test's, calling a loopback provider).
    pub fn with_chat_models(mut self, models: Arc<dyn ChatModels>) -> Self {
        self.chat = models;
        self
    }

    /// The same service, sharing everything, with recall weighing its
    /// evidence by `weights`: how the LoCoMo bench compares weights over one
    /// import.
    pub fn with_recall_weights(mut self, weights: RankingWeights) -> Self {
        self.recall_weights = weights;
        self
    }

    /// The same service, sharing everything but its query vectors: this
    /// one keeps the last `entries` (the bench compares recall's weights
    /// over the same questions without embedding them again).
    pub fn with_query_cache(mut self, entries: usize) -> Self {
        self.query_vectors = query_vectors(entries);
        self
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// What the embedder has done since the process started.
    pub fn embedding_stats(&self) -> &EmbeddingStats {
        &self.embedding_stats
    }

    /// The memory jobs this process's worker completed.
    pub fn memory_job_stats(&self) -> &crate::job_stats::MemoryJobStats {
        &self.job_stats
    }

    /// Every tenant's waiting memory work.
    pub async fn memory_queues(&self) -> Result<Vec<MemoryQueue>> {
        Ok(self.store.memory_queues().await?)
    }

    /// How long erased words have waited to leave the store's files, held
    /// back by a reader; `None` when none wait.
    pub fn erased_words_waiting(&self) -> Option<std::time::Duration> {
        self.store.erased_words_waiting()
    }

    /// Is the store able to serve?
    pub async fn ready(&self) -> Result<()> {
        Ok(self.store.ready().await?)
    }

    /// What keeps the data: the database and the vector index.
    pub fn backends(&self) -> octopus_core::store::Backends {
        self.store.backends()
    }

    /// Why the agent's summary model cannot be called as the server is set
    /// up (no key for its provider, a base URL the rules forbid), so that
    /// summaries and facts wait; `None` when it can be called, which says
    /// nothing of whether it answers.
    pub fn model_problem(&self, agent: &octopus_core::agent::Agent) -> Option<String> {
        self.chat
            .for_agent(agent, octopus_core::chat::ChatPurpose::Summary)
            .err()
            .map(|error| error.message)
    }

    /// The embedding model's name and dimension, once it is loaded (it is
    /// loaded at the first text to embed, not for asking).
    pub fn embedder_in_use(&self) -> Option<(String, usize)> {
        self.embedding
            .loaded
            .get()
            .map(|embedder| (embedder.model().to_owned(), embedder.dimension()))
    }
}
