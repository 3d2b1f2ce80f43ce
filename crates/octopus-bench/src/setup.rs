//! What several benches set up the same way: an agent, plain text messages,
//! and a server on loopback.

use chrono::{DateTime, Utc};
use octopus_core::agent::Agent;
use octopus_core::appending::MessageRecord;
use octopus_core::message::{MessageContent, Role};
use octopus_core::{MessageId, TenantId};
use octopus_engine::Octopus;
use serde_json::json;

/// An agent named `name` with default memory settings.
pub async fn agent(octopus: &Octopus, tenant: TenantId, name: &str) -> anyhow::Result<Agent> {
    let spec = serde_json::from_value(
        json!({"name": name, "llm": {"provider": "openai", "model": "gpt-4o"}}),
    )?;
    Ok(octopus.create_agent(tenant, spec).await?)
}

/// A plain text message at `at`, with the usual 4-bytes-per-token estimate.
pub fn text_message(text: String, role: Role, at: DateTime<Utc>) -> MessageRecord {
    MessageRecord {
        id: MessageId::new(),
        role,
        token_count: u32::try_from(text.len() / 4).unwrap_or(u32::MAX),
        content: Some(MessageContent::Text(text)),
        name: None,
        tool_call_id: None,
        tool_calls: Vec::new(),
        timestamp: at,
        agent_id: None,
        contains_pii: false,
        redacted_content: None,
        accounting: Default::default(),
    }
}

/// Imports `days` of turns (each day a session, its turns 30 s apart, the
/// user's and the agent's in turn) as a conversation between `user` and
/// `agent`, the first day on `first_day`; the conversation's id.
pub async fn import_days(
    octopus: &Octopus,
    (tenant, agent): (TenantId, octopus_core::AgentId),
    user: &str,
    first_day: DateTime<Utc>,
    days: Vec<Vec<String>>,
) -> anyhow::Result<octopus_core::ConversationId> {
    use octopus_core::conversation::{ConversationImport, ImportedSession};
    use octopus_core::message::NewMessage;
    let sessions = days
        .into_iter()
        .enumerate()
        .map(|(day, turns)| ImportedSession {
            messages: turns
                .into_iter()
                .enumerate()
                .map(|(turn, text)| {
                    let role = if turn % 2 == 0 {
                        Role::User
                    } else {
                        Role::Assistant
                    };
                    NewMessage {
                        timestamp: Some(
                            first_day
                                + chrono::Duration::days(day as i64)
                                + chrono::Duration::seconds(turn as i64 * 30),
                        ),
                        ..NewMessage::text(role, text)
                    }
                })
                .collect(),
        })
        .collect();
    let import = ConversationImport {
        agent_id: agent,
        user_id: user.to_owned(),
        title: None,
        metadata: Default::default(),
        sessions,
    };
    Ok(octopus
        .import_conversation(tenant, import)
        .await?
        .conversation
        .id)
}

/// The `octopus` binary a bench runs: the one given, else the one beside
/// the bench's own (as `cargo build --release -p octopus-cli` leaves it).
pub fn server_binary(given: Option<&std::path::Path>) -> anyhow::Result<std::path::PathBuf> {
    let binary = match given {
        Some(path) => path.to_owned(),
        None => std::env::current_exe()?.with_file_name("octopus"),
    };
    anyhow::ensure!(
        binary.is_file(),
        "{} is missing: build it with `cargo build --release -p octopus-cli`, or pass --server",
        binary.display()
    );
    Ok(binary)
}

/// A SQLite store in `dir` with its vectors in this process, as
/// `octopus serve` opens it by default.
pub fn sqlite_store(dir: &std::path::Path) -> anyhow::Result<octopus_sqlite::SqliteStore> {
    let vectors = std::sync::Arc::new(octopus_vector::EmbeddedVectors::new(
        dir.join("vectors"),
        octopus_vector::DEFAULT_HNSW_THRESHOLD,
    ));
    Ok(octopus_sqlite::SqliteStore::open(
        octopus_sqlite::SqliteOptions::new(dir),
        vectors,
    )?)
}

/// Serves the API over `octopus` on a free loopback port, for as long as the
/// process runs; its base URL.
pub async fn serve_on_loopback(octopus: Octopus) -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        octopus_server::serve(
            listener,
            octopus,
            &Default::default(),
            std::future::pending(),
        )
        .await
    });
    Ok(url)
}

/// Does every queued memory job as the worker would, with vectors the
/// caller already has (`vector_of` a turn's text): each message its own,
/// each closed episode a stand-in summary (its first two turns, and their
/// mean vector). For benches that fill a store faster than the local model
/// embeds. Jobs are completed `at_once` at a time: a server store commits
/// each in its own transaction, and concurrent commits share the flush to
/// disk. Returns how many jobs were done; `bench` names the progress lines.
pub async fn complete_memory_jobs<'a>(
    store: &dyn octopus_core::store::MemoryStore,
    model: &str,
    vector_of: impl Fn(&str) -> anyhow::Result<&'a [f32]>,
    dimension: usize,
    at_once: usize,
    bench: &str,
) -> anyhow::Result<usize> {
    use futures_util::{StreamExt, TryStreamExt};
    let started = std::time::Instant::now();
    let mut done = 0;
    loop {
        let jobs = store
            .claim_memory_jobs(
                1_000,
                octopus_core::now(),
                std::time::Duration::from_secs(600),
            )
            .await?;
        if jobs.is_empty() {
            return Ok(done);
        }
        let outcomes = jobs
            .iter()
            .map(|job| Ok((job, stand_in_outcome(&job.work, &vector_of, dimension)?)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        futures_util::stream::iter(outcomes)
            .map(|(job, outcome)| {
                store.complete_memory_job(job, outcome, model, octopus_core::now())
            })
            .buffer_unordered(at_once.max(1))
            .try_collect::<Vec<bool>>()
            .await?;
        done += jobs.len();
        eprintln!(
            "{bench}: {done} memory jobs done ({:.0} s)",
            started.elapsed().as_secs_f64()
        );
    }
}

/// What the worker would make of one job, from vectors already at hand.
fn stand_in_outcome<'a>(
    work: &octopus_core::memory_jobs::MemoryWork,
    vector_of: &impl Fn(&str) -> anyhow::Result<&'a [f32]>,
    dimension: usize,
) -> anyhow::Result<octopus_core::memory_jobs::JobOutcome> {
    use octopus_core::embedded_text::embedded_text;
    use octopus_core::episode::{EpisodeSummary, SummarySource};
    use octopus_core::memory_jobs::{JobOutcome, MemoryWork, SummarisedEpisode};
    Ok(match work {
        MemoryWork::EmbedMessage(message) => JobOutcome::MessageEmbedded {
            message: message.id,
            vector: vector_of(&embedded_text(message, false))?.to_vec(),
        },
        MemoryWork::EmbedFact(_) | MemoryWork::LearnFacts(_) => JobOutcome::Skipped,
        MemoryWork::SummariseEpisode(episode) => {
            let first: Vec<String> = episode
                .messages
                .iter()
                .take(2)
                .map(|m| embedded_text(m, false))
                .collect();
            let mut mean = vec![0.0f32; dimension];
            for text in &first {
                for (sum, x) in mean.iter_mut().zip(vector_of(text)?) {
                    *sum += x;
                }
            }
            let norm = mean
                .iter()
                .map(|x| x * x)
                .sum::<f32>()
                .sqrt()
                .max(f32::EPSILON);
            mean.iter_mut().for_each(|x| *x /= norm);
            JobOutcome::EpisodeSummarised(SummarisedEpisode {
                episode: episode.episode.id,
                generated: Some(EpisodeSummary {
                    summary: first.join(" "),
                    key_facts: Vec::new(),
                    embedding: None,
                }),
                source: SummarySource::Extractive,
                retry: None,
                vector: mean,
                facts: Vec::new(),
            })
        }
    })
}

/// A configuration in `dir` whose embeddings come from the local model in
/// `model_dir` (the default cache when `None`) at `precision` (auto, f32,
/// bf16 or int8), with no model to summarise episodes: summaries are
/// extractive, as on a server without one.
pub fn local_model_config(
    dir: &std::path::Path,
    model_dir: Option<std::path::PathBuf>,
    precision: &str,
) -> anyhow::Result<octopus_app::AppConfig> {
    use octopus_core::embedding_settings::{EmbeddingSettings, LocalEmbedding};
    let mut config = octopus_app::AppConfig::in_dir(dir, octopus_engine::EngineConfig::default());
    config.engine.embedding = EmbeddingSettings::Local(LocalEmbedding {
        model_dir,
        precision: serde_json::from_value(serde_json::Value::String(precision.to_owned()))
            .map_err(|e| anyhow::anyhow!("--precision: {e}"))?,
        ..LocalEmbedding::default()
    });
    config.engine.llm.summarise_episodes = false;
    Ok(config)
}

/// The admin key of the servers the benches start on loopback.
pub const ADMIN_KEY: &str = "oct_bench_admin";

/// A server on loopback over `config`, its memory worker running as
/// `octopus serve`'s does, and a client holding the key of a new tenant
/// named `tenant` (its admin key is [`ADMIN_KEY`]).
pub async fn tenant_on_loopback(
    config: &octopus_app::AppConfig,
    tenant: &str,
) -> anyhow::Result<octopus_client::Client> {
    let octopus = octopus_app::connect(config).await?;
    octopus.ensure_admin_key(Some(ADMIN_KEY)).await?;
    let tenant = octopus.create_tenant(tenant).await?;
    let (_, key) = octopus.create_api_key(tenant.id, "bench").await?;
    octopus.start_memory_worker();
    let url = serve_on_loopback(octopus).await?;
    Ok(octopus_client::Client::new(&url, Some(&key)))
}

/// `operation` sent with the JSON `body`, `path` its one path parameter.
pub async fn send(
    api: &octopus_client::Client,
    operation: octopus_client::Operation,
    path: Option<&str>,
    body: serde_json::Value,
) -> octopus_client::Result<serde_json::Value> {
    let call = api.call(operation).json(&body);
    match path {
        Some(value) => call.param(value).send().await,
        None => call.send().await,
    }
}
