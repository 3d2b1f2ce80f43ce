//! Message ingestion throughput and latency.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use octopus_app::AppConfig;
use octopus_app::settings::StorageBackend;
use octopus_client::operations as op;
use octopus_core::appending::AppendMessages;
use octopus_core::message::Role;
use octopus_core::store::{EpisodeStore, Store};
use octopus_core::{TenantId, now};
use octopus_engine::{EngineConfig, Octopus};
use serde_json::{Value, json};

use crate::latency::{ms, percentile};
use crate::{corpus, setup};

#[derive(clap::Args)]
pub struct Options {
    /// Messages appended through the store API.
    #[arg(long, default_value_t = 200_000)]
    store_messages: usize,
    /// Messages appended over HTTP in each HTTP run.
    #[arg(long, default_value_t = 50_000)]
    http_messages: usize,
    /// Single-message appends timed for latency.
    #[arg(long, default_value_t = 5_000)]
    latency_samples: usize,
    /// Concurrent HTTP clients.
    #[arg(long, default_value_t = 8)]
    clients: usize,
    /// Message text: the LoCoMo dev split's folder: one JSON file per conversation.
    #[arg(long, env = "OCTOPUS_LOCOMO_DIR")]
    corpus: PathBuf,
    /// A PostgreSQL server (`scripts/postgres.sh url`): the same runs on a
    /// fresh database of it, beside SQLite's.
    #[arg(long, env = "OCTOPUS_BENCH_DATABASE_URL")]
    postgres: Option<String>,
}

/// Where a run keeps its data.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        }
    }
}

struct Row {
    what: String,
    figure: String,
    note: String,
}

pub fn run(options: Options) -> anyhow::Result<()> {
    let turns = Arc::new(corpus::chat_turns(&options.corpus)?);
    let mean_len = turns.iter().map(String::len).sum::<usize>() / turns.len();
    println!(
        "message text: {} LoCoMo turns, mean {mean_len} bytes",
        turns.len()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut rows = Vec::new();
    rows.extend(runtime.block_on(store_api(&options, &turns, false))?);
    rows.extend(runtime.block_on(store_api(&options, &turns, true))?);
    rows.extend(runtime.block_on(http(&options, &turns, Backend::Sqlite))?);
    if let Some(server) = &options.postgres {
        rows.extend(runtime.block_on(postgres_store_api(&options, &turns, server))?);
        rows.extend(runtime.block_on(http(&options, &turns, Backend::Postgres))?);
    }
    print_table(&rows);
    Ok(())
}

/// The store API's append on PostgreSQL: batches of 100 from `callers`
/// concurrent callers, each on its own conversations.
async fn postgres_store_api(
    options: &Options,
    turns: &Arc<Vec<String>>,
    server: &str,
) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for callers in [1usize, 8] {
        let url = octopus_postgres::testing::fresh_database_on(server).await;
        let store =
            octopus_postgres::PostgresStore::connect(octopus_postgres::PostgresOptions::new(&url))
                .await?;
        let octopus = Octopus::with_store(
            Arc::new(store.clone()) as Arc<dyn Store>,
            Default::default(),
        );
        let world = Arc::new(seed(&octopus).await?);
        let batches = options.store_messages / 100 / callers;
        let started = Instant::now();
        let mut tasks = Vec::new();
        for c in 0..callers {
            let (store, world, turns) = (store.clone(), Arc::clone(&world), Arc::clone(turns));
            tasks.push(tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(batches);
                for b in 0..batches {
                    let messages = (0..100)
                        .map(|i| {
                            let n = (c * batches + b) * 100 + i;
                            let role = if n.is_multiple_of(2) {
                                Role::User
                            } else {
                                Role::Assistant
                            };
                            setup::text_message(turns[n % turns.len()].clone(), role, now())
                        })
                        .collect();
                    let batch = AppendMessages {
                        conversation_id: world.1[(c + b * callers) % world.1.len()],
                        messages,
                        idle_timeout: chrono::Duration::hours(1),
                        now: now(),
                        work_class: octopus_core::memory_jobs::WorkClass::Live,
                        follows: None,
                        learn_every: 0,
                    };
                    let t = Instant::now();
                    store.append_messages(world.0, batch).await?;
                    latencies.push(t.elapsed());
                }
                anyhow::Ok(latencies)
            }));
        }
        let mut latencies = Vec::new();
        for task in tasks {
            latencies.extend(task.await??);
        }
        let elapsed = started.elapsed();
        let sent = batches * 100 * callers;
        rows.push(Row {
            what: format!(
                "PostgreSQL: store API append, batches of 100, {callers} caller{}",
                if callers == 1 { "" } else { "s" }
            ),
            figure: format!("{:.0} msg/s", sent as f64 / elapsed.as_secs_f64()),
            note: format!(
                "{sent} messages in {:.2} s; batch p50 {} p99 {}; full-text entries written with the rows",
                elapsed.as_secs_f64(),
                ms(percentile(&mut latencies, 0.5)),
                ms(percentile(&mut latencies, 0.99))
            ),
        });
        store.close().await;
    }
    Ok(rows)
}

/// The store API's append, each message first through PII detection and
/// redaction when `detect` (what the engine does before it appends).
async fn store_api(options: &Options, turns: &[String], detect: bool) -> anyhow::Result<Vec<Row>> {
    let dir = tempfile::tempdir()?;
    let store = crate::setup::sqlite_store(dir.path())?;
    let octopus = Octopus::with_store(
        Arc::new(store.clone()) as Arc<dyn Store>,
        Default::default(),
    );
    let world = seed(&octopus).await?;
    let batches = options.store_messages / 100;
    let started = Instant::now();
    let mut latencies = Vec::with_capacity(batches);
    for b in 0..batches {
        let mut messages: Vec<octopus_core::appending::MessageRecord> = (0..100)
            .map(|i| {
                let n = b * 100 + i;
                setup::text_message(
                    turns[n % turns.len()].clone(),
                    if n % 2 == 0 {
                        Role::User
                    } else {
                        Role::Assistant
                    },
                    now(),
                )
            })
            .collect();
        if detect {
            for message in &mut messages {
                let text = message
                    .content
                    .as_ref()
                    .map(|c| c.text())
                    .unwrap_or_default();
                let findings = octopus_core::pii::detect(&text);
                if !findings.is_empty() {
                    message.contains_pii = true;
                    message.redacted_content = Some(octopus_core::pii::redact(&text, &findings));
                }
            }
        }
        let conversation = world.1[b % world.1.len()];
        let batch = AppendMessages {
            conversation_id: conversation,
            messages,
            idle_timeout: chrono::Duration::hours(1),
            now: now(),
            work_class: octopus_core::memory_jobs::WorkClass::Live,
            follows: None,
            learn_every: 0,
        };
        let t = Instant::now();
        store.append_messages(world.0, batch).await?;
        latencies.push(t.elapsed());
    }
    let elapsed = started.elapsed();
    let rate = (batches * 100) as f64 / elapsed.as_secs_f64();
    if detect {
        return Ok(vec![Row {
            what: "store API append with PII detection, batches of 100".into(),
            figure: format!("{rate:.0} msg/s"),
            note: format!(
                "{} messages in {:.2} s; batch p50 {} p99 {}",
                batches * 100,
                elapsed.as_secs_f64(),
                ms(percentile(&mut latencies, 0.5)),
                ms(percentile(&mut latencies, 0.99))
            ),
        }]);
    }

    let left_behind = store.catch_up_search_index()?;
    drop(store);
    let db_bytes = std::fs::metadata(dir.path().join("octopus.sqlite"))?.len()
        + std::fs::metadata(dir.path().join("octopus.sqlite-wal"))
            .map(|m| m.len())
            .unwrap_or(0);

    // The indexer keeps up in the background during the ingest above, so measure
    // its rate on a rebuild: delete the index file and index every message again.
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(dir.path().join(format!("search.sqlite{suffix}")));
    }
    let index_started = Instant::now();
    let store = crate::setup::sqlite_store(dir.path())?;
    store.catch_up_search_index()?;
    let index_elapsed = index_started.elapsed();
    let indexed = batches * 100;

    Ok(vec![
        Row {
            what: "store API append, batches of 100, 1 caller".into(),
            figure: format!("{rate:.0} msg/s"),
            note: format!(
                "{} messages in {:.2} s; batch p50 {} p99 {}",
                batches * 100,
                elapsed.as_secs_f64(),
                ms(percentile(&mut latencies, 0.5)),
                ms(percentile(&mut latencies, 0.99))
            ),
        },
        Row {
            what: "full-text index rebuild (FTS5), from the messages table".into(),
            figure: format!("{:.0} msg/s", indexed as f64 / index_elapsed.as_secs_f64()),
            note: format!(
                "{indexed} messages in {:.2} s; during the ingest the background indexer kept up ({left_behind} left when the last append returned)",
                index_elapsed.as_secs_f64()
            ),
        },
        Row {
            what: "database size after store-API ingest".into(),
            figure: format!("{:.1} MB", db_bytes as f64 / 1e6),
            note: format!(
                "{:.0} bytes/message",
                db_bytes as f64 / (batches * 100) as f64
            ),
        },
    ])
}

/// A tenant, an agent and 16 conversations of different users.
async fn seed(octopus: &Octopus) -> anyhow::Result<(TenantId, Vec<octopus_core::ConversationId>)> {
    let tenant = octopus.create_tenant("bench").await?;
    let agent = setup::agent(octopus, tenant.id, "bench").await?;
    let mut conversations = Vec::new();
    for u in 0..16 {
        let spec =
            serde_json::from_value(json!({"agent_id": agent.id, "user_id": format!("user{u}")}))?;
        conversations.push(octopus.create_conversation(tenant.id, spec).await?.id);
    }
    Ok((tenant.id, conversations))
}

struct HttpServer {
    url: String,
    key: String,
    conversations: Vec<String>,
    _dir: tempfile::TempDir,
}

async fn start_http(options: &Options, backend: Backend) -> anyhow::Result<HttpServer> {
    let dir = tempfile::tempdir()?;
    let mut config = AppConfig::in_dir(dir.path(), EngineConfig::default());
    if let (Backend::Postgres, Some(server)) = (backend, &options.postgres) {
        config.storage.backend = StorageBackend::Postgres;
        config.storage.postgres.url = octopus_postgres::testing::fresh_database_on(server).await;
    }
    let octopus = octopus_app::connect(&config).await?;
    octopus.ensure_admin_key(Some("oct_bench_admin")).await?;
    let (tenant, conversations) = seed(&octopus).await?;
    let (_, key) = octopus.create_api_key(tenant, "bench").await?;
    let conversations = conversations.iter().map(ToString::to_string).collect();
    let url = crate::setup::serve_on_loopback(octopus).await?;
    Ok(HttpServer {
        url,
        key,
        conversations,
        _dir: dir,
    })
}

async fn http(
    options: &Options,
    turns: &Arc<Vec<String>>,
    backend: Backend,
) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for batch_size in [100usize, 1] {
        let server = start_http(options, backend).await?;
        let api = octopus_client::Client::new(&server.url, Some(&server.key));
        let per_client = options.http_messages / options.clients / batch_size;
        let started = Instant::now();
        let mut tasks = Vec::new();
        for c in 0..options.clients {
            let (api, turns) = (api.clone(), Arc::clone(turns));
            let conversation = server.conversations[c % server.conversations.len()].clone();
            tasks.push(tokio::spawn(async move {
                for r in 0..per_client {
                    let messages: Vec<Value> = (0..batch_size)
                        .map(|i| json!({"role": "user", "content": turns[(c * 7919 + r * batch_size + i) % turns.len()]}))
                        .collect();
                    api.call(op::APPEND_MESSAGES)
                        .param(&conversation)
                        .json(&json!({"messages": messages}))
                        .send()
                        .await?;
                }
                anyhow::Ok(())
            }));
        }
        for task in tasks {
            task.await??;
        }
        let elapsed = started.elapsed();
        let sent = per_client * options.clients * batch_size;
        rows.push(Row {
            what: format!(
                "{}: HTTP append, {} clients, {} message{} per request",
                backend.name(),
                options.clients,
                batch_size,
                if batch_size == 1 { "" } else { "s" }
            ),
            figure: format!("{:.0} msg/s", sent as f64 / elapsed.as_secs_f64()),
            note: format!(
                "{sent} messages in {:.2} s, client in the same process",
                elapsed.as_secs_f64()
            ),
        });
    }

    let server = start_http(options, backend).await?;
    let api = octopus_client::Client::new(&server.url, Some(&server.key));
    let mut latencies = Vec::with_capacity(options.latency_samples);
    for i in 0..options.latency_samples + 200 {
        let body = json!({"role": "user", "content": turns[i % turns.len()]});
        let t = Instant::now();
        api.call(op::APPEND_MESSAGES)
            .param(&server.conversations[0])
            .json(&body)
            .send()
            .await?;
        if i >= 200 {
            latencies.push(t.elapsed()); // the first 200 warm connections and caches
        }
    }
    rows.push(Row {
        what: format!(
            "{}: HTTP single-message append latency, 1 client",
            backend.name()
        ),
        figure: format!(
            "p50 {} / p99 {}",
            ms(percentile(&mut latencies, 0.5)),
            ms(percentile(&mut latencies, 0.99))
        ),
        note: format!(
            "{} sequential requests, keep-alive; max {}",
            latencies.len(),
            ms(percentile(&mut latencies, 1.0))
        ),
    });
    Ok(rows)
}

fn print_table(rows: &[Row]) {
    println!("\n| measurement | figure | detail |\n|---|---|---|");
    for row in rows {
        println!("| {} | {} | {} |", row.what, row.figure, row.note);
    }
}
