//! The [`Octopus`] service, one file per area of operations.

mod absent;
mod agents;
mod completions;
mod context;
mod conversations;
mod dumps;
mod episodes;
mod erasure;
mod facts;
mod import_names;
mod knowledge;
mod learning;
mod memory_jobs;
mod procedures;
mod recall;
mod summaries;
mod tenants;
mod transcript;
mod turns;
mod webhooks;

pub use completions::{ClientMessage, ClientRole, CompletionRequest, PreparedCompletion};
pub use context::WorkingMemory;
pub use conversations::ImportReport;
pub use dumps::{ImportInto, ImportReport as DumpImportReport};
pub use knowledge::{IngestDocument, IngestReport, KnowledgeQuery};
use octopus_core::DomainCode;
pub use octopus_core::chat::TurnReply;
use octopus_core::recall_ranking::RankingWeights;
pub use procedures::ProcedureUpdate;
pub use turns::{MAX_TOOLS, PreparedTurn, ToolResult, TurnInput};

use std::sync::{Arc, RwLock};
use std::time::Duration;

use octopus_core::agent::Agent;
use octopus_core::chat::ChatModels;
use octopus_core::embedding::{EmbedError, Embedder, EmbedderSource};
use octopus_core::memory_jobs::MemoryQueue;
use octopus_core::webhook_sender::WebhookSender;
use octopus_core::{AgentId, ConversationId, TenantId};

use octopus_core::store::Store;
use octopus_core::tenant::KeyHash;
use octopus_core::tokens::{ApproximateTokenCounter, TokenCounter};

use crate::cache::TtlCache;
use crate::config::{EngineConfig, Limits};
use crate::embedding_stats::{EmbeddingPurpose, EmbeddingStats};
use crate::keys::{self, Caller};
use crate::{Error, Result};

/// The Octopus service. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Octopus {
    store: Arc<dyn Store>,
    tokens: Arc<dyn TokenCounter>,
    limits: Limits,
    /// The admin key's hash, read once: every request compares against it.
    admin_key: Arc<RwLock<Option<KeyHash>>>,
    caches: Arc<Caches>,
    embedding: Arc<Embedding>,
    /// Wakes the memory worker when this process queues work.
    work_signal: Arc<memory_jobs::WorkSignal>,
    history: Arc<crate::history::HistoryCache>,
    embedding_stats: Arc<EmbeddingStats>,
    job_stats: Arc<crate::job_stats::MemoryJobStats>,
    quotas: Arc<crate::quotas::QuotaState>,
    chat: Arc<dyn ChatModels>,
    /// Whether and how often agents' models are asked for summaries.
    summaries: Summaries,
    /// How long the memory worker holds the jobs it claims.
    job_lease: Duration,
    procedure_matchers: Arc<crate::procedure_matching::MatcherCache>,
    /// Compiled sizes of trigger patterns, by pattern, for the tenants'
    /// quota on them (a pattern is compiled once to be measured).
    pattern_sizes: Arc<TtlCache<String, usize>>,
    /// How recall weighs its evidence.
    recall_weights: RankingWeights,
    /// Vectors of recent query texts, when `query_cache_entries` keeps any:
    /// users repeat themselves, a client asking for recall and then for the
    /// context of one message sends it twice, and embedding is most of a
    /// query's time. A text's vector changes only with the model.
    query_vectors: Option<Arc<QueryVectors>>,
    /// Sends webhook deliveries under the `[webhooks]` rules.
    webhooks: Arc<crate::webhooks::Sender>,
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
struct Summaries {
    ask_models: bool,
    retry_base: Duration,
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
struct Embedding {
    source: Arc<dyn EmbedderSource>,
    loaded: tokio::sync::OnceCell<Arc<dyn Embedder>>,
    /// One ingestion batch embeds at a time, so a large ingest leaves CPU for
    /// the queries of live conversations, which do not wait on this.
    ingest_permits: tokio::sync::Semaphore,
}

impl Embedding {
    fn new(source: Arc<dyn EmbedderSource>) -> Self {
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
struct Caches {
    key_tenants: TtlCache<KeyHash, TenantId>,
    /// The name of a live key, which records of a person's changes carry
    /// (every MCP request over HTTP asks for it).
    key_names: TtlCache<KeyHash, String>,
    agents: TtlCache<(TenantId, AgentId), Agent>,
    /// A conversation's agent never changes, so this one is never stale.
    conversation_agents: TtlCache<(TenantId, ConversationId), AgentId>,
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
            embedding: Arc::new(Embedding::new(Arc::new(absent::Absent))),
            work_signal: Arc::default(),
            history: Arc::new(crate::history::HistoryCache::new(HISTORY_CACHE_BYTES)),
            embedding_stats: Arc::default(),
            job_stats: Arc::default(),
            quotas: Arc::default(),
            chat: Arc::new(absent::Absent),
            summaries: Summaries::new(&Default::default()),
            job_lease: Duration::from_secs(crate::config::WorkerSettings::default().job_lease_secs),
            procedure_matchers: Arc::default(),
            pattern_sizes: Arc::new(TtlCache::new(Duration::from_secs(3600), 100_000)),
            recall_weights: RankingWeights::default(),
            query_vectors: query_vectors(
                octopus_core::embedding_settings::EmbeddingSettings::default()
                    .query_cache_entries(),
            ),
            webhooks: Arc::new(crate::webhooks::Sender::new(
                Default::default(),
                Arc::new(absent::Absent),
            )),
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

    /// Makes sure an admin key exists. A configured key replaces whatever was
    /// stored. With none configured and none stored, mints one and returns its
    /// secret, which the caller shows once: it is not recoverable afterwards.
    pub async fn ensure_admin_key(&self, configured: Option<&str>) -> Result<Option<String>> {
        let (hash, minted) = match (configured, self.store.admin_key_hash().await?) {
            (Some(secret), _) => {
                let hash = keys::hash(secret);
                self.store.set_admin_key_hash(&hash).await?;
                (hash, None)
            }
            (None, Some(stored)) => (stored, None),
            (None, None) => {
                let key = keys::mint();
                self.store.set_admin_key_hash(&key.hash).await?;
                (key.hash, Some(key.secret))
            }
        };
        *self.admin_key.write().unwrap_or_else(|p| p.into_inner()) = Some(hash);
        Ok(minted)
    }

    /// Who a presented key belongs to.
    pub async fn authenticate(&self, secret: &str) -> Result<Caller> {
        let hash = keys::hash(secret);
        let admin = *self.admin_key.read().unwrap_or_else(|p| p.into_inner());
        if admin.is_some_and(|admin| keys::same_hash(&admin, &hash)) {
            return Ok(Caller::Admin);
        }
        if let Some(tenant) = self.caches.key_tenants.get(&hash) {
            return Ok(Caller::Tenant(tenant));
        }
        match self.store.tenant_for_key(&hash).await? {
            Some(tenant) => {
                self.caches.key_tenants.insert(hash, tenant);
                Ok(Caller::Tenant(tenant))
            }
            None => Err(Error::Unauthenticated),
        }
    }

    /// The name of the tenant's live key whose secret this is, for the
    /// record of who wrote or approved a procedure version or changed a
    /// fact; from the cache when it was read in the last few seconds.
    pub async fn key_name(&self, tenant: TenantId, secret: &str) -> Result<Option<String>> {
        let hash = keys::hash(secret);
        if let Some(name) = self.caches.key_names.get(&hash) {
            return Ok(Some(name));
        }
        let name = self
            .store
            .list_api_keys(tenant)
            .await?
            .into_iter()
            .find(|key| keys::same_hash(&key.hash, &hash) && key.revoked_at.is_none())
            .map(|key| key.name);
        if let Some(name) = &name {
            self.caches.key_names.insert(hash, name.clone());
        }
        Ok(name)
    }

    /// An agent, from the cache when it was read in the last few seconds.
    pub(crate) async fn cached_agent(&self, tenant: TenantId, id: AgentId) -> Result<Agent> {
        if let Some(agent) = self.caches.agents.get(&(tenant, id)) {
            return Ok(agent);
        }
        let agent = self.store.get_agent(tenant, id).await?;
        self.caches.agents.insert((tenant, id), agent.clone());
        Ok(agent)
    }

    /// An agent that may take new memory or run a turn. A deactivated agent
    /// is read-only: its memory stays readable and searchable (for audits and
    /// exports), but it takes no new conversations, messages, imports or
    /// documents, and assembles no context (`Conflict`, `agent_inactive`),
    /// until a `PATCH` sets `is_active` again.
    pub(crate) async fn active_agent(&self, tenant: TenantId, id: AgentId) -> Result<Agent> {
        let agent = self.cached_agent(tenant, id).await?;
        if !agent.is_active {
            return Err(octopus_core::Error::conflict(
                DomainCode::AgentInactive,
                format!(
                    "agent {id} is deactivated; reactivate it with PATCH {{\"is_active\": true}}"
                ),
            )
            .into());
        }
        Ok(agent)
    }

    /// The active agent of a conversation that exists. The conversation is
    /// not "not found" when its agent was deleted: that is a conflict
    /// (`agent_deleted`), not a 404 of the route.
    pub(crate) async fn conversation_active_agent(
        &self,
        tenant: TenantId,
        agent: AgentId,
    ) -> Result<Agent> {
        match self.active_agent(tenant, agent).await {
            Err(Error::Domain(octopus_core::Error::NotFound { .. })) => {
                Err(octopus_core::Error::conflict(
                    DomainCode::AgentDeleted,
                    format!("the conversation's agent {agent} was deleted"),
                )
                .into())
            }
            other => other,
        }
    }

    /// The agent of a conversation.
    pub(crate) async fn conversation_agent(
        &self,
        tenant: TenantId,
        id: ConversationId,
    ) -> Result<AgentId> {
        if let Some(agent) = self.caches.conversation_agents.get(&(tenant, id)) {
            return Ok(agent);
        }
        let conversation = self.store.get_conversation(tenant, id).await?;
        self.caches
            .conversation_agents
            .insert((tenant, id), conversation.agent_id);
        Ok(conversation.agent_id)
    }

    /// Uses `embedder` instead of the configured model.
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        let embedding = Embedding::new(Arc::new(Arc::clone(&embedder)));
        embedding.loaded.set(embedder).ok();
        self.embedding = Arc::new(embedding);
        self
    }

    /// The embedder, loaded on first use; a local model's number format is
    /// kept for the statistics.
    pub async fn embedder(&self) -> Result<Arc<dyn Embedder>> {
        let loaded = self
            .embedding
            .loaded
            .get_or_try_init(|| async {
                let loaded = self.embedding.source.load().await?;
                if let Some(precision) = loaded.precision {
                    self.embedding_stats.set_precision(precision);
                }
                Ok::<_, Error>(loaded.embedder)
            })
            .await?;
        Ok(Arc::clone(loaded))
    }

    /// The vector of one query text.
    pub(crate) async fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let cache = self.query_vectors.as_deref();
        if let Some(known) = cache.and_then(|c| c.get(&text.to_owned())) {
            return Ok(known.as_ref().clone());
        }
        let embedder = self.embedder().await?;
        let texts = [text.to_owned()];
        let vectors = self
            .embed_counted(EmbeddingPurpose::Query, embedder.as_ref(), &texts)
            .await?;
        let vector = vectors.into_iter().next().unwrap_or_default();
        if let Some(cache) = cache {
            cache.insert(text.to_owned(), Arc::new(vector.clone()));
        }
        Ok(vector)
    }

    /// Embeds `texts`, counted in the embedding statistics, and checks that
    /// the embedder kept its contract: one vector per text, each of its
    /// dimension. A short or malformed answer is an error, never a silently
    /// missing or empty vector.
    pub(crate) async fn embed_counted(
        &self,
        purpose: EmbeddingPurpose,
        embedder: &dyn Embedder,
        texts: &[String],
    ) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
        let started = std::time::Instant::now();
        let vectors = embedder.embed(texts).await?;
        if vectors.len() != texts.len() {
            return Err(EmbedError::Model(format!(
                "{} returned {} vectors for {} texts",
                embedder.model(),
                vectors.len(),
                texts.len()
            )));
        }
        if let Some(wrong) = vectors.iter().find(|v| v.len() != embedder.dimension()) {
            return Err(EmbedError::Model(format!(
                "{} returned a vector of {} dimensions where it has {}",
                embedder.model(),
                wrong.len(),
                embedder.dimension()
            )));
        }
        self.embedding_stats
            .record(purpose, texts.len(), started.elapsed());
        Ok(vectors)
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
}

/// A query's vector, embedded on first use and shared by the searches of one
/// request. Searches by words start at once; only those by meaning wait.
pub(crate) struct QueryVector {
    text: String,
    vector: tokio::sync::OnceCell<Vec<f32>>,
}

impl QueryVector {
    pub(crate) fn new(text: &str) -> Self {
        Self {
            text: text.to_owned(),
            vector: tokio::sync::OnceCell::new(),
        }
    }

    pub(crate) async fn get(&self, octopus: &Octopus) -> Result<Vec<f32>> {
        let vector = self
            .vector
            .get_or_try_init(|| octopus.embed_query(&self.text))
            .await?;
        Ok(vector.clone())
    }
}

impl Octopus {
    /// Is the store able to serve?
    pub async fn ready(&self) -> Result<()> {
        Ok(self.store.ready().await?)
    }
}
