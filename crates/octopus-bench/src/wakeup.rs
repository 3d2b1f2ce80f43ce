//! How soon a server's idle memory worker takes up work another server
//! queued on the same PostgreSQL database: the time from a message appended
//! through one engine (running no worker) to the first claim by the other
//! (a worker, idle before). The database tells every server when work is
//! queued (`LISTEN`/`NOTIFY`); without it, the wait was the worker's poll, up
//! to 2 s.

use std::time::{Duration, Instant};

use octopus_app::AppConfig;
use octopus_app::settings::StorageBackend;
use octopus_engine::EngineConfig;
use serde_json::json;

#[derive(clap::Args)]
pub struct Options {
    /// A PostgreSQL server to make a fresh database on (any database's URL).
    #[arg(long)]
    postgres: String,
    /// Messages appended, one at a time, each after the last was claimed.
    #[arg(long, default_value_t = 100)]
    rounds: usize,
}

pub fn run(options: Options) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let url = octopus_postgres::testing::fresh_database_on(&options.postgres).await;
        let dir = tempfile::tempdir()?;
        let config = |name: &str| {
            let mut config = AppConfig::in_dir(dir.path().join(name), EngineConfig::default());
            config.storage.backend = StorageBackend::Postgres;
            config.storage.postgres.url = url.clone();
            config.engine.llm.summarise_episodes = false;
            config
        };
        let writer = octopus_app::connect(&config("writer")).await?;
        let worker = octopus_app::connect(&config("worker")).await?;
        worker.start_memory_worker();
        let tenant = writer.create_tenant("bench").await?.id;
        let spec = serde_json::from_value(json!({"name": "a", "llm": {"provider": "ollama", "model": "m"}}))?;
        let agent = writer.create_agent(tenant, spec).await?.id;
        let spec = serde_json::from_value(json!({"agent_id": agent, "user_id": "u"}))?;
        let conversation = writer.create_conversation(tenant, spec).await?.id;
        // The worker's model loaded, and its first claim made, before timing.
        let mut times = Vec::with_capacity(options.rounds);
        for round in 0..=options.rounds {
            let claimed = worker.memory_job_stats().claimed();
            let message = serde_json::from_value(json!({"role": "user",
                "content": format!("Round {round}: the parcel left the depot this morning")}))?;
            // Timed from before the append: its commit is part of the wait.
            let appended = Instant::now();
            writer
                .append_messages(tenant, conversation, vec![message])
                .await?;
            while worker.memory_job_stats().claimed() == claimed {
                anyhow::ensure!(
                    appended.elapsed() < Duration::from_secs(30),
                    "the worker claimed nothing for 30 s"
                );
                tokio::time::sleep(Duration::from_micros(200)).await;
            }
            let waited = appended.elapsed();
            // Let the worker finish the job and go idle again.
            while worker.pending_memory_jobs().await? > 0 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            if round > 0 {
                times.push(waited);
            }
        }
        let (p50, p95, max) = crate::latency::p50_p95_max(times);
        println!(
            "\nAn idle worker taking up work another engine queued, {} rounds (PostgreSQL LISTEN/NOTIFY; the poll is 2 s)\n",
            options.rounds
        );
        println!("| from append to the other server's first claim | p50 ms | p95 ms | max ms |\n|---|---|---|---|");
        println!("| | {p50:.2} | {p95:.2} | {max:.2} |");
        Ok(())
    })
}
