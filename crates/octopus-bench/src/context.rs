//! Context assembly latency with a large store: one agent with 100k knowledge
//! chunks and 10k closed episodes of its users, then the context of a new turn
//! built one request at a time, the query's embedding included.
//!
//! Embedding 210k texts with the local model would take hours on this
//! machine, so the store is filled with the documentation-sentence corpus and
//! its cached vectors (the `vectors` bench's): chunks are sentences, and each
//! episode's turns are consecutive sentences. Vectors go in through the store's
//! own calls (`store_chunks`, and completing the queued memory jobs), so the
//! indexes are the ones the server builds. The measured turns are LoCoMo chat
//! turns, embedded live by the local model as a server would.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use octopus_app::AppConfig;
use octopus_core::chunking::Format;
use octopus_core::conversation::ConversationSpec;
use octopus_core::knowledge::SearchMode;
use octopus_core::knowledge::{ChunkMetadata, NewChunk};
use octopus_core::message::{NewMessage, Role};
use octopus_core::recall::{RecallMode, RecallQuery};
use octopus_core::store::KnowledgeStore;
use octopus_core::{AgentId, ConversationId, TenantId, now};
use octopus_engine::{EngineConfig, IngestDocument, KnowledgeQuery, Octopus};
use serde::{Deserialize, Serialize};

use crate::latency::p50_p95_max;
use crate::vectors::cache::{self, Vectors};
use crate::{corpus, setup};

#[derive(clap::Args)]
pub struct Options {
    #[arg(long, default_value_t = 100_000)]
    chunks: usize,
    #[arg(long, default_value_t = 10_000)]
    episodes: usize,
    /// Users of the agent; the episodes are shared out among them.
    #[arg(long, default_value_t = 100)]
    users: usize,
    /// Turns in each past episode.
    #[arg(long, default_value_t = 10)]
    turns: usize,
    /// Turns already in each user's open episode: the history.
    #[arg(long, default_value_t = 10)]
    history: usize,
    /// Turns whose context is built and timed.
    #[arg(long, default_value_t = 300)]
    queries: usize,
    /// Keep the filled store here and reuse it on later runs with the same
    /// sizes [default: a temporary folder, filled on every run].
    #[arg(long)]
    store: Option<PathBuf>,
    /// The LoCoMo dev split's folder: one JSON file per conversation.
    #[arg(long, env = "OCTOPUS_LOCOMO_DIR")]
    data: PathBuf,
    #[arg(long, default_value = "Cargo.lock")]
    lockfile: PathBuf,
    /// Also take each timed turn through the agent's model, a loopback
    /// server that answers at once, and report what a turn adds to its
    /// context assembly.
    #[arg(long)]
    with_model: bool,
    /// Then this many clients at once, each sending its next turn as soon
    /// as its last context came back: latency under load, and throughput.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Turns each of those clients sends.
    #[arg(long, default_value_t = 40)]
    turns_per_client: usize,
}

/// What a kept store holds, so a run with other sizes fills a new one.
#[derive(Serialize, Deserialize, PartialEq)]
struct Filled {
    chunks: usize,
    episodes: usize,
    users: usize,
    turns: usize,
    history: usize,
    tenant: TenantId,
    agent: AgentId,
    /// Each user's conversation with an open episode.
    conversations: Vec<ConversationId>,
}

const FILLED: &str = "context-bench.json";

pub fn run(options: Options) -> anyhow::Result<()> {
    anyhow::ensure!(
        options.users > 0 && options.episodes.is_multiple_of(options.users),
        "--episodes must be a multiple of --users"
    );
    let corpus_size = options.chunks.max(options.episodes * options.turns);
    let cache_dir = octopus_embed::model_dir::cache_dir().with_file_name("bench");
    let model = octopus_embed::model_dir::default_model_dir();
    let texts = cache::corpus(&cache_dir, corpus_size, || {
        corpus::doc_sentences(&options.lockfile, corpus_size)
    })?;
    let vectors = cache::embeddings(&texts, &model, &cache_dir)?;

    let temporary = tempfile::tempdir()?;
    let dir = options
        .store
        .clone()
        .unwrap_or_else(|| temporary.path().to_owned());
    let filled = match read_filled(&dir, &options) {
        Some(filled) => filled,
        None => {
            let started = Instant::now();
            let filled =
                tokio::runtime::Runtime::new()?.block_on(fill(&dir, &options, &texts, &vectors))?;
            std::fs::write(dir.join(FILLED), serde_json::to_vec(&filled)?)?;
            eprintln!(
                "context: store filled in {:.0} s",
                started.elapsed().as_secs_f64()
            );
            filled
        }
    };

    let turns = corpus::chat_turns(&options.data)?;
    // One request at a time on one runtime thread, as the issue asks; SQLite
    // reads and the model still run on their own threads (RAYON_NUM_THREADS
    // sets the model's).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(measure(&dir, &filled, &turns, &options))
}

fn read_filled(dir: &Path, options: &Options) -> Option<Filled> {
    let filled: Filled = serde_json::from_slice(&std::fs::read(dir.join(FILLED)).ok()?).ok()?;
    let same = (
        filled.chunks,
        filled.episodes,
        filled.users,
        filled.turns,
        filled.history,
    ) == (
        options.chunks,
        options.episodes,
        options.users,
        options.turns,
        options.history,
    );
    same.then_some(filled)
}

async fn fill(
    dir: &Path,
    options: &Options,
    texts: &[String],
    vectors: &Vectors,
) -> anyhow::Result<Filled> {
    let octopus = octopus_app::open(&AppConfig::in_dir(dir, EngineConfig::default()))?;
    let tenant = octopus.create_tenant("context-bench").await?.id;
    let agent = setup::agent(&octopus, tenant, "context-bench").await?.id;
    // The engine creates the collection, named after its model, with a first
    // document; the corpus follows through the store.
    octopus
        .ingest_document(
            tenant,
            agent,
            IngestDocument {
                source: "welcome.md".into(),
                text: "Welcome to the documentation of this project's dependencies.".into(),
                format: Format::Markdown,
                category: None,
            },
        )
        .await?;
    let model = octopus
        .knowledge_collection(tenant, agent)
        .await?
        .context("the first document made no collection")?
        .model;
    let store = crate::setup::sqlite_store(dir)?;

    let started = Instant::now();
    let at = now();
    for (batch, start) in (0..options.chunks).step_by(5_000).enumerate() {
        let chunks = (start..(start + 5_000).min(options.chunks))
            .map(|i| NewChunk {
                id: uuid::Uuid::now_v7(),
                content: texts[i].clone(),
                embedding: vectors.get(i).to_vec(),
                metadata: ChunkMetadata {
                    source: format!("doc-{}.md", i / 100),
                    chunk_index: (i % 100) as u32,
                    category: None,
                    heading: None,
                    indexed_at: at,
                },
            })
            .collect();
        store.store_chunks(tenant, agent, chunks).await?;
        eprintln!(
            "context: {} chunks stored ({:.0} s)",
            (batch + 1) * 5_000,
            started.elapsed().as_secs_f64()
        );
    }

    // Past episodes, one a day per user, then each user's open conversation.
    let per_user = options.episodes / options.users;
    let mut next_text = 0;
    let mut said = || {
        let text = texts[next_text % texts.len()].clone();
        next_text += 1;
        text
    };
    let first_day = at - chrono::Duration::days(per_user as i64 + 1);
    let mut conversations = Vec::with_capacity(options.users);
    for user in 0..options.users {
        let user_id = format!("user-{user}");
        let days = (0..per_user)
            .map(|_| (0..options.turns).map(|_| said()).collect())
            .collect();
        setup::import_days(&octopus, (tenant, agent), &user_id, first_day, days).await?;
        let spec = ConversationSpec {
            agent_id: agent,
            user_id,
            title: None,
            metadata: Default::default(),
        };
        let conversation = octopus.create_conversation(tenant, spec).await?.id;
        let history = (0..options.history)
            .map(|turn| NewMessage::text(role(turn), said()))
            .collect();
        octopus
            .append_messages(tenant, conversation, history)
            .await?;
        conversations.push(conversation);
    }
    eprintln!(
        "context: {} episodes stored ({:.0} s)",
        options.episodes,
        started.elapsed().as_secs_f64()
    );

    // The memory worker's jobs, done with the corpus's vectors.
    let vector_of: HashMap<&str, usize> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i))
        .collect();
    let lookup = |text: &str| -> anyhow::Result<&[f32]> {
        let at = vector_of
            .get(text)
            .context("a stored turn that is not in the corpus")?;
        Ok(vectors.get(*at))
    };
    setup::complete_memory_jobs(&store, &model, lookup, vectors.dimension, 1, "context").await?;
    Ok(Filled {
        chunks: options.chunks,
        episodes: options.episodes,
        users: options.users,
        turns: options.turns,
        history: options.history,
        tenant,
        agent,
        conversations,
    })
}

fn role(turn: usize) -> Role {
    match turn % 2 {
        0 => Role::User,
        _ => Role::Assistant,
    }
}

async fn measure(
    dir: &Path,
    filled: &Filled,
    turns: &[String],
    options: &Options,
) -> anyhow::Result<()> {
    let queries = options.queries;
    let started = Instant::now();
    let octopus = octopus_app::open(&AppConfig::in_dir(dir, EngineConfig::default()))?;
    let (tenant, agent) = (filled.tenant, filled.agent);
    let conversation = |i: usize| filled.conversations[i % filled.conversations.len()];
    let user = |i: usize| format!("user-{}", i % filled.conversations.len());
    // Warm-up: loads the model and both vector indexes, as a server's first
    // turns would; not timed.
    for (i, turn) in turns.iter().take(5).enumerate() {
        octopus.build_context(tenant, conversation(i), turn).await?;
    }
    eprintln!(
        "context: warmed up in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let asked: Vec<&String> = turns.iter().skip(5).take(queries).collect();
    let mut context = Vec::with_capacity(asked.len());
    let (mut kept_knowledge, mut kept_episodic, mut tokens) = (0, 0, 0u64);
    for (i, turn) in asked.iter().enumerate() {
        let t = Instant::now();
        let memory = octopus.build_context(tenant, conversation(i), turn).await?;
        context.push(t.elapsed());
        kept_knowledge += memory.trace.knowledge.len();
        kept_episodic += memory.trace.episodic.len();
        tokens += u64::from(memory.trace.total_tokens);
    }
    // Its parts alone, each with its own embedding of the turn.
    let embedder = octopus.embedder().await?;
    let mut parts: Vec<(&str, Vec<Duration>)> = [
        "  embedding the turn",
        "  knowledge search, hybrid (with its embedding)",
        "    by words only",
        "  recall, hybrid (with its embedding)",
        "    by words only",
    ]
    .into_iter()
    .map(|name| (name, Vec::new()))
    .collect();
    for (i, turn) in asked.iter().enumerate() {
        let t = Instant::now();
        embedder.embed(&[turn.to_string()]).await?;
        parts[0].1.push(t.elapsed());
        for (at, mode) in [(1, SearchMode::Hybrid), (2, SearchMode::Keyword)] {
            let query = KnowledgeQuery {
                text: turn.to_string(),
                top_k: None,
                min_score: None,
                filter: Default::default(),
                mode,
            };
            let t = Instant::now();
            octopus.search_knowledge(tenant, agent, query).await?;
            parts[at].1.push(t.elapsed());
        }
        for (at, mode) in [(3, RecallMode::Hybrid), (4, RecallMode::Keyword)] {
            let mut query = RecallQuery::new(user(i), turn.as_str());
            query.top_k = 3;
            query.mode = mode;
            let t = Instant::now();
            octopus.recall(tenant, agent, &query).await?;
            parts[at].1.push(t.elapsed());
        }
    }

    let mut rows: Vec<(&str, Vec<Duration>)> = Vec::new();
    if options.with_model {
        rows = turn_overhead(&octopus, filled, &asked).await?;
    }

    let n = asked.len().max(1);
    println!(
        "{} knowledge chunks, {} closed episodes of {} turns among {} users, {} turns of history; {} turns timed one at a time",
        filled.chunks,
        filled.episodes,
        filled.turns,
        filled.users,
        filled.history,
        asked.len()
    );
    println!(
        "per context: {:.1} knowledge chunks and {:.1} past snippets retrieved, {:.0} tokens\n",
        kept_knowledge as f64 / n as f64,
        kept_episodic as f64 / n as f64,
        tokens as f64 / n as f64
    );
    println!("| step | p50 ms | p95 ms | max ms |\n|---|---|---|---|");
    for (name, times) in std::iter::once(("context assembly (all of it)", context))
        .chain(parts)
        .chain(rows)
    {
        let (p50, p95, max) = p50_p95_max(times);
        println!("| {name} | {p50:.2} | {p95:.2} | {max:.2} |");
    }
    if options.clients > 1 {
        // Turns not asked before, so that no query vector comes from the cache.
        let fresh: Vec<String> = turns
            .iter()
            .skip(5 + queries)
            .take(options.clients * options.turns_per_client)
            .cloned()
            .collect();
        concurrent(&octopus, filled, fresh, options.clients).await?;
    }
    Ok(())
}

/// Context assembly for `clients` clients at once, each with its own users'
/// conversations, on as many tasks.
async fn concurrent(
    octopus: &Octopus,
    filled: &Filled,
    turns: Vec<String>,
    clients: usize,
) -> anyhow::Result<()> {
    let per_client = turns.len() / clients;
    anyhow::ensure!(
        per_client > 0,
        "not enough LoCoMo turns for {clients} clients"
    );
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for client in 0..clients {
        let octopus = octopus.clone();
        let tenant = filled.tenant;
        let conversations = filled.conversations.clone();
        let mine = turns[client * per_client..(client + 1) * per_client].to_vec();
        tasks.spawn(async move {
            let mut times = Vec::with_capacity(mine.len());
            for (i, turn) in mine.iter().enumerate() {
                let conversation = conversations[(client * per_client + i) % conversations.len()];
                let t = Instant::now();
                octopus.build_context(tenant, conversation, turn).await?;
                times.push(t.elapsed());
            }
            anyhow::Ok(times)
        });
    }
    let mut times = Vec::new();
    while let Some(done) = tasks.join_next().await {
        times.extend(done??);
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!(
        "\n{clients} clients at once, {per_client} turns each: {:.1} contexts/s\n",
        times.len() as f64 / elapsed
    );
    let (p50, p95, max) = p50_p95_max(times);
    println!("| step | p50 ms | p95 ms | max ms |\n|---|---|---|---|");
    println!("| context assembly under load | {p50:.2} | {p95:.2} | {max:.2} |");
    Ok(())
}

/// Each turn through the agent's model, a loopback Ollama that answers at
/// once: the whole turn, and what it adds to its own context assembly (storing
/// the message and the reply, the HTTP call, parsing).
async fn turn_overhead<'a>(
    octopus: &Octopus,
    filled: &Filled,
    asked: &[&String],
) -> anyhow::Result<Vec<(&'a str, Vec<Duration>)>> {
    let provider = std::sync::Arc::new(octopus_testkit::fake_chat::ChatProvider::default());
    let url = octopus_testkit::fake_chat::serve(provider).await;
    // The loopback provider is the operator's own.
    let models = octopus_llm::AgentModels::new(
        &octopus_core::llm_settings::LlmSettings {
            allowed_base_urls: vec![url.clone()],
            ..Default::default()
        },
        std::sync::Arc::new(|name| std::env::var(name).ok()),
    );
    let octopus = &octopus
        .clone()
        .with_chat_models(std::sync::Arc::new(models));
    let patch =
        serde_json::json!({"llm": {"provider": "ollama", "model": "bench", "base_url": url}});
    octopus
        .update_agent(filled.tenant, filled.agent, &patch)
        .await?;
    let conversation = |i: usize| filled.conversations[i % filled.conversations.len()];
    let (mut whole, mut added) = (Vec::new(), Vec::new());
    for (i, turn) in asked.iter().enumerate() {
        let input = octopus_engine::TurnInput {
            message: Some(turn.to_string()),
            ..Default::default()
        };
        let t = Instant::now();
        let prepared = octopus
            .prepare_turn(filled.tenant, conversation(i), input)
            .await?;
        let context = prepared.context_elapsed();
        prepared.run(None).await?;
        let elapsed = t.elapsed();
        whole.push(elapsed);
        added.push(elapsed.saturating_sub(context));
    }
    Ok(vec![
        ("a turn, loopback model answering at once", whole),
        ("  what the turn adds to its context assembly", added),
    ])
}
