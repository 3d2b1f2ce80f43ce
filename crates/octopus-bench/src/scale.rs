//! A million messages on one server: the store filled through the engine,
//! then the real release binary serving it, measured as clients see it.
//!
//! Filling: one tenant, `--agents` agents, `--users` users each talking to
//! one agent, each user's history imported as sessions of 20 messages a day
//! apart (the imported episodes are closed, so each queues its summary). The
//! messages are sentences from the dependencies' documentation, and their
//! memory jobs are done with those sentences' cached vectors (the `vectors`
//! bench's corpus): embedding a million texts with the local model would
//! take hours here, and its speed is the `embed` bench's subject. The
//! indexes are the ones the server builds, through the store's own calls.
//!
//! Then `octopus serve` over that data: its resident memory idle, recall and
//! context latency at 1, 8 and 32 concurrent clients (the query embedded by
//! the local model each time), and appends' latency under the 8-client load.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use octopus_app::AppConfig;
use octopus_app::settings::StorageBackend;
use octopus_client::operations as op;
use octopus_core::chunking::Format;
use octopus_core::{ConversationId, TenantId, now};
use octopus_engine::{EngineConfig, IngestDocument};
use octopus_testkit::soak::{ADMIN_KEY, SoakServer};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::vectors::cache;
use crate::{corpus, setup};

#[derive(clap::Args)]
pub struct Options {
    #[arg(long, default_value_t = 1_000_000)]
    messages: usize,
    #[arg(long, default_value_t = 10_000)]
    users: usize,
    #[arg(long, default_value_t = 10)]
    agents: usize,
    /// A PostgreSQL server (`scripts/postgres.sh start`): the store goes in
    /// a fresh database on it, vectors in pgvector.
    #[arg(long)]
    postgres: Option<String>,
    /// Concurrent clients for each latency measurement.
    #[arg(long, value_delimiter = ',', default_value = "1,8,32")]
    clients: Vec<usize>,
    /// Seconds each measurement runs.
    #[arg(long, default_value_t = 20)]
    seconds: u64,
    /// Keep the filled store here (SQLite) and reuse it on later runs with
    /// the same sizes [default: a temporary folder].
    #[arg(long)]
    store: Option<PathBuf>,
    /// The `octopus` binary [default: beside this one].
    #[arg(long)]
    server: Option<PathBuf>,
    #[arg(long, default_value = "Cargo.lock")]
    lockfile: PathBuf,
    /// What clients ask: the turns of the LoCoMo dev split in this folder
    /// (one JSON file per conversation); else corpus sentences.
    #[arg(long, env = "OCTOPUS_LOCOMO_DIR")]
    data: Option<PathBuf>,
}

/// What a kept store holds.
#[derive(Serialize, Deserialize, PartialEq)]
struct Filled {
    messages: usize,
    users: usize,
    agents: usize,
    database: Option<String>,
    tenant: TenantId,
    /// Per user: the agent, the user's id and the conversation.
    conversations: Vec<(String, String, ConversationId)>,
}

const FILLED: &str = "scale-bench.json";

pub fn run(options: Options) -> anyhow::Result<()> {
    anyhow::ensure!(
        options.users > 0 && options.agents > 0 && options.messages >= options.users,
        "--messages must be at least --users, and both above zero"
    );
    let binary = crate::setup::server_binary(options.server.as_deref())?;
    let corpus_size = 100_000.min(options.messages);
    let cache_dir = octopus_embed::model_dir::cache_dir().with_file_name("bench");
    let model_dir = octopus_embed::model_dir::default_model_dir();
    let texts = cache::corpus(&cache_dir, corpus_size, || {
        corpus::doc_sentences(&options.lockfile, corpus_size)
    })?;
    let vectors = cache::embeddings(&texts, &model_dir, &cache_dir)?;
    let questions = options
        .data
        .as_deref()
        .and_then(|data| corpus::chat_turns(data).ok())
        .unwrap_or_else(|| texts.clone());

    let temporary = tempfile::tempdir()?;
    let dir = options
        .store
        .clone()
        .unwrap_or_else(|| temporary.path().to_owned());
    std::fs::create_dir_all(&dir)?;
    let runtime = tokio::runtime::Runtime::new()?;
    let filled = match read_filled(&dir, &options) {
        Some(filled) => filled,
        None => {
            let filled = runtime.block_on(fill(&dir, &options, &texts, &vectors))?;
            std::fs::write(dir.join(FILLED), serde_json::to_vec(&filled)?)?;
            filled
        }
    };
    println!("\non disk:");
    match &filled.database {
        None => print_sizes(&dir),
        Some(url) => runtime.block_on(print_database_sizes(url))?,
    }
    runtime.block_on(measure(&binary, &dir, &filled, &questions, &options))
}

fn read_filled(dir: &Path, options: &Options) -> Option<Filled> {
    let filled: Filled = serde_json::from_slice(&std::fs::read(dir.join(FILLED)).ok()?).ok()?;
    let same = filled.messages == options.messages
        && filled.users == options.users
        && filled.agents == options.agents
        && filled.database.is_some() == options.postgres.is_some();
    same.then_some(filled)
}

fn config(dir: &Path, database: Option<&str>) -> AppConfig {
    let mut engine = EngineConfig::default();
    // The fill queues a million messages' jobs before doing them all at once
    // with cached vectors; a tenant's default quota stops at 200,000.
    engine.quotas.max_queued_memory_jobs = u64::MAX;
    let mut config = AppConfig::in_dir(dir, engine);
    if let Some(url) = database {
        config.storage.backend = StorageBackend::Postgres;
        config.storage.postgres.url = url.to_owned();
    }
    config
}

async fn fill(
    dir: &Path,
    options: &Options,
    texts: &[String],
    vectors: &cache::Vectors,
) -> anyhow::Result<Filled> {
    let database = match &options.postgres {
        Some(server) => Some(octopus_postgres::testing::fresh_database_on(server).await),
        None => None,
    };
    let octopus = octopus_app::connect(&config(dir, database.as_deref())).await?;
    let tenant = octopus.create_tenant("scale").await?.id;
    let mut agents = Vec::new();
    for a in 0..options.agents {
        agents.push(
            setup::agent(&octopus, tenant, &format!("agent-{a}"))
                .await?
                .id,
        );
    }
    // The model's name, which the memory collections must carry for the
    // server's own embeddings to join them: a first document's collection says it.
    octopus
        .ingest_document(
            tenant,
            agents[0],
            IngestDocument {
                source: "welcome.md".into(),
                text: "Welcome to the documentation of this project's dependencies.".into(),
                format: Format::Markdown,
                category: None,
            },
        )
        .await?;
    let model = octopus
        .knowledge_collection(tenant, agents[0])
        .await?
        .context("the first document made no collection")?
        .model;

    let per_user = options.messages / options.users;
    let started = Instant::now();
    let first_day = now() - chrono::Duration::days(per_user.div_ceil(20) as i64 + 1);
    let mut conversations = Vec::with_capacity(options.users);
    for user in 0..options.users {
        let agent = agents[user % agents.len()];
        let user_id = format!("user-{user}");
        let turns: Vec<String> = (0..per_user)
            .map(|turn| texts[(user * per_user + turn) % texts.len()].clone())
            .collect();
        let days = turns.chunks(20).map(<[String]>::to_vec).collect();
        let conversation =
            setup::import_days(&octopus, (tenant, agent), &user_id, first_day, days).await?;
        conversations.push((agent.to_string(), user_id, conversation));
        if (user + 1) % 1000 == 0 {
            eprintln!(
                "scale: {} users imported ({:.0} s)",
                user + 1,
                started.elapsed().as_secs_f64()
            );
        }
    }
    let imported_secs = started.elapsed().as_secs_f64();
    let messages = per_user * options.users;
    println!(
        "imported {messages} messages of {} users in {imported_secs:.0} s ({:.0} messages/s)",
        options.users,
        messages as f64 / imported_secs
    );

    let vector_of: HashMap<&str, usize> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| (t.as_str(), i))
        .collect();
    let lookup = |text: &str| -> anyhow::Result<&[f32]> {
        let at = vector_of
            .get(text)
            .context("a stored message that is not in the corpus")?;
        Ok(vectors.get(*at))
    };
    let jobs_started = Instant::now();
    let jobs = setup::complete_memory_jobs(
        octopus.store().as_ref(),
        &model,
        lookup,
        vectors.dimension,
        // SQLite has one writer; PostgreSQL commits many jobs in one flush.
        if database.is_some() { 16 } else { 1 },
        "scale",
    )
    .await?;
    let jobs_secs = jobs_started.elapsed().as_secs_f64();
    println!(
        "memory jobs (message vectors and summaries) done with cached vectors: {jobs} in {jobs_secs:.0} s ({:.0}/s)",
        jobs as f64 / jobs_secs
    );
    // Searching catches the full-text index up first: the first search after
    // the import pays for indexing whatever it has not caught yet.
    let search_started = Instant::now();
    let last = &texts[(messages - 1) % texts.len()];
    let query = octopus_core::search::MessageSearchQuery {
        text: last.clone(),
        agent_id: None,
        user_id: None,
        conversation_id: None,
        from: None,
        to: None,
        limit: 1,
    };
    octopus.search_messages(tenant, &query).await?;
    println!(
        "first full-text search after the import (the index caught up): {:.1} s; all recallable {:.0} s after the import began",
        search_started.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    if let Some(url) = &database {
        // Measured right after a bulk load, PostgreSQL would plan with its
        // empty tables' statistics until autovacuum caught up, mid-run.
        let analyze_started = Instant::now();
        octopus_postgres::testing::analyze(url).await;
        println!(
            "ANALYZE after the fill: {:.0} s",
            analyze_started.elapsed().as_secs_f64()
        );
    }
    Ok(Filled {
        messages: options.messages,
        users: options.users,
        agents: options.agents,
        database,
        tenant,
        conversations,
    })
}

fn print_sizes(dir: &Path) {
    let mut total = 0;
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.flatten().collect())
        .unwrap_or_default();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let size = tree_size(&entry.path());
        total += size;
        println!(
            "  {}: {:.1} MiB",
            entry.file_name().to_string_lossy(),
            size as f64 / 1048576.0
        );
    }
    println!("  all: {:.1} MiB", total as f64 / 1048576.0);
}

fn tree_size(path: &Path) -> u64 {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::read_dir(path)
            .map(|d| d.flatten().map(|e| tree_size(&e.path())).sum())
            .unwrap_or(0),
        Ok(meta) => meta.len(),
        Err(_) => 0,
    }
}

async fn print_database_sizes(url: &str) -> anyhow::Result<()> {
    let sizes = octopus_postgres::testing::table_sizes(url).await;
    let mut total = 0;
    for (table, bytes) in sizes {
        total += bytes;
        println!("  {table}: {:.1} MiB", bytes as f64 / 1048576.0);
    }
    println!(
        "  all tables with their indexes: {:.1} MiB",
        total as f64 / 1048576.0
    );
    Ok(())
}

/// One measurement's latencies.
struct Timed {
    requests: usize,
    seconds: f64,
    times: Vec<Duration>,
    errors: usize,
}

impl Timed {
    fn row(&self, what: &str, clients: usize) -> String {
        let (p50, p95, p99) = percentiles(self.times.clone());
        format!(
            "| {what} | {clients} | {:.0} | {p50:.1} | {p95:.1} | {p99:.1} | {} |",
            self.requests as f64 / self.seconds,
            self.errors
        )
    }
}

fn percentiles(mut times: Vec<Duration>) -> (f64, f64, f64) {
    times.sort();
    let at = |p: f64| {
        let index = ((times.len() as f64 * p) as usize).min(times.len().saturating_sub(1));
        times.get(index).map_or(f64::NAN, |t| t.as_secs_f64() * 1e3)
    };
    (at(0.5), at(0.95), at(0.99))
}

#[derive(Clone, Copy, PartialEq)]
enum Request {
    Recall,
    Context,
    Append,
}

/// `clients` clients, each sending its next request as soon as the last
/// is answered, for `length`; what `pick` chooses, the `n`th request of a client.
async fn load(
    server: &Client,
    clients: usize,
    length: Duration,
    pick: impl Fn(usize) -> Request + Send + Sync + Clone + 'static,
) -> HashMap<u8, Timed> {
    let deadline = Instant::now() + length;
    let mut tasks = Vec::new();
    for client in 0..clients {
        let (server, pick) = (server.clone(), pick.clone());
        tasks.push(tokio::spawn(async move {
            let mut n = client * 7919;
            let mut timed: Vec<(Request, Duration, bool)> = Vec::new();
            while Instant::now() < deadline {
                n += 1;
                let request = pick(n);
                let began = Instant::now();
                let ok = server.send(request, n).await;
                timed.push((request, began.elapsed(), ok));
            }
            timed
        }));
    }
    let started = Instant::now();
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap_or_default());
    }
    let seconds = started.elapsed().as_secs_f64();
    let mut by_kind: HashMap<u8, Timed> = HashMap::new();
    for (request, took, ok) in all {
        let timed = by_kind.entry(request as u8).or_insert(Timed {
            requests: 0,
            seconds,
            times: Vec::new(),
            errors: 0,
        });
        timed.requests += 1;
        timed.times.push(took);
        timed.errors += usize::from(!ok);
    }
    by_kind
}

#[derive(Clone)]
struct Client {
    api: octopus_client::Client,
    users: Arc<Vec<(String, String, ConversationId)>>,
    questions: Arc<Vec<String>>,
}

impl Client {
    /// Sends request `n` of its kind: a user and a question drawn by `n`.
    async fn send(&self, request: Request, n: usize) -> bool {
        let (agent, user, conversation) =
            &self.users[n.wrapping_mul(2654435761) % self.users.len()];
        let question = &self.questions[n.wrapping_mul(40503) % self.questions.len()];
        let call = match request {
            Request::Recall => self
                .api
                .call(op::RECALL)
                .param(agent)
                .json(&json!({"user_id": user, "query": question, "top_k": 10})),
            Request::Context => self
                .api
                .call(op::BUILD_CONTEXT)
                .param(conversation)
                .json(&json!({"message": question})),
            Request::Append => self
                .api
                .call(op::APPEND_MESSAGES)
                .param(conversation)
                .json(&json!({"messages": [{"role": "user", "content": question}]})),
        };
        call.send().await.is_ok()
    }
}

async fn measure(
    binary: &Path,
    dir: &Path,
    filled: &Filled,
    questions: &[String],
    options: &Options,
) -> anyhow::Result<()> {
    let config = dir.join("scale-serve.toml");
    let storage = match &filled.database {
        Some(url) => {
            format!("[storage]\nbackend = \"postgres\"\n[storage.postgres]\nurl = \"{url}\"\n")
        }
        None => String::new(),
    };
    // Every request's question embedded, as a question not asked before
    // is: the clients draw from a few thousand texts, which the server's
    // cache of query vectors would soon hold.
    std::fs::write(
        &config,
        format!(
            "{storage}[llm]\nsummarise_episodes = false\n[embedding]\nquery_cache_entries = 0\n"
        ),
    )?;
    let server = tokio::task::block_in_place(|| SoakServer::start(binary, dir, Some(&config)))
        .context("start octopus serve")?;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()?;
    let admin = octopus_client::Client::with_http(http, &server.url, Some(ADMIN_KEY));
    let key = admin
        .call(op::CREATE_API_KEY)
        .param(filled.tenant)
        .json(&json!({"name": "scale"}))
        .send()
        .await?["key"]
        .as_str()
        .context("a key")?
        .to_owned();
    let client = Client {
        api: admin.with_key(&key),
        users: Arc::new(filled.conversations.clone()),
        questions: Arc::new(questions.to_vec()),
    };
    tokio::time::sleep(Duration::from_secs(5)).await;
    println!(
        "\nserver idle over {} messages: {}",
        filled.messages,
        resident(&server)
    );
    // A warm-up: the first requests load the model and the caches.
    load(&client, 2, Duration::from_secs(5), |n| {
        if n % 2 == 0 {
            Request::Recall
        } else {
            Request::Context
        }
    })
    .await;

    let length = Duration::from_secs(options.seconds);
    println!("\n| request | clients | per second | p50 ms | p95 ms | p99 ms | errors |");
    println!("|---|---|---|---|---|---|---|");
    for &clients in &options.clients {
        for request in [Request::Recall, Request::Context] {
            let timed = load(&client, clients, length, move |_| request).await;
            if let Some(t) = timed.get(&(request as u8)) {
                let what = if request == Request::Recall {
                    "recall"
                } else {
                    "context"
                };
                println!("{}", t.row(what, clients));
            }
        }
    }
    // Appends from one more client, while eight recall and assemble contexts.
    let loaded = {
        let client = client.clone();
        tokio::spawn(async move {
            load(&client, 8, length, |n| {
                if n % 2 == 0 {
                    Request::Recall
                } else {
                    Request::Context
                }
            })
            .await
        })
    };
    let appends = load(&client, 1, length, |_| Request::Append).await;
    let loaded = loaded.await?;
    for (request, what) in [
        (Request::Recall, "recall, beside appends"),
        (Request::Context, "context, beside appends"),
    ] {
        if let Some(t) = loaded.get(&(request as u8)) {
            println!("{}", t.row(what, 8));
        }
    }
    if let Some(t) = appends.get(&(Request::Append as u8)) {
        println!("{}", t.row("append, 1 client beside 8 recalling", 1));
    }
    println!("\nserver after the load: {}", resident(&server));
    // Idle again: the appends' memory jobs done (the worker then lets go of
    // spare memory), and nothing asked since.
    let waited = Instant::now();
    while crate::api::queued_jobs(&admin).await? > 0.0
        && waited.elapsed() < Duration::from_secs(300)
    {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    println!(
        "server idle after the load, its queue empty: {}",
        resident(&server)
    );
    println!(
        "server pid {} (for a profiler: the run is over)",
        server.pid()
    );
    Ok(())
}

/// The server's resident memory now, as the bench prints it.
fn resident(server: &SoakServer) -> String {
    let now = server.resident();
    let mib = |bytes: u64| bytes as f64 / 1048576.0;
    format!(
        "{:.0} MiB resident ({:.0} MiB its own, {:.0} MiB of mapped files)",
        mib(now.total),
        mib(now.own),
        mib(now.files)
    )
}
