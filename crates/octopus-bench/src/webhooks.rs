//! What webhooks cost the write path: single-message append latency over
//! HTTP with no endpoint registered and with one registered for every
//! event, its dispatcher running and delivering to a loopback endpoint;
//! every so many appends the episode is closed, which writes an
//! `episode.closed` event in the close's transaction. Also the close's own
//! latency, and how long a delivery takes from the close to the endpoint.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use octopus_app::AppConfig;
use octopus_app::settings::StorageBackend;
use octopus_client::operations as op;
use octopus_engine::EngineConfig;
use octopus_engine::webhooks::{Destinations, WebhookSettings};
use octopus_testkit::webhook_receiver::Receiver;
use serde_json::{Value, json};

use crate::corpus;
use crate::latency::{ms, percentile};

#[derive(clap::Args)]
pub struct Options {
    /// Single-message appends timed per run.
    #[arg(long, default_value_t = 3_000)]
    samples: usize,
    /// Appends between two closes of the episode.
    #[arg(long, default_value_t = 20)]
    close_every: usize,
    /// Message text: the LoCoMo dev split's folder: one JSON file per conversation.
    #[arg(long, env = "OCTOPUS_LOCOMO_DIR")]
    corpus: PathBuf,
    /// A PostgreSQL server (`scripts/postgres.sh url`): the same runs on a
    /// fresh database of it, beside SQLite's.
    #[arg(long, env = "OCTOPUS_BENCH_DATABASE_URL")]
    postgres: Option<String>,
}

struct Run {
    appends: Vec<Duration>,
    closes: Vec<Duration>,
    /// From a close's answer to its event's arrival.
    lags: Vec<Duration>,
}

pub fn run(options: Options) -> anyhow::Result<()> {
    let turns = corpus::chat_turns(&options.corpus)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let mut backends = vec![("SQLite", None)];
    if let Some(server) = &options.postgres {
        backends.push(("PostgreSQL", Some(server.clone())));
    }
    println!(
        "\n| backend | endpoint | append p50 / p99 | close p50 / p99 | delivery after the close p50 / p99 |\n|---|---|---|---|---|"
    );
    for (name, postgres) in backends {
        for with_endpoint in [false, true] {
            let run = runtime.block_on(measure(
                &options,
                &turns,
                postgres.as_deref(),
                with_endpoint,
            ))?;
            let (mut appends, mut closes, mut lags) = (run.appends, run.closes, run.lags);
            let pair = |samples: &mut Vec<Duration>| match samples.is_empty() {
                true => "—".to_owned(),
                false => format!(
                    "{} / {}",
                    ms(percentile(samples, 0.5)),
                    ms(percentile(samples, 0.99))
                ),
            };
            println!(
                "| {name} | {} | {} | {} | {} |",
                if with_endpoint {
                    "one, for every event"
                } else {
                    "none"
                },
                pair(&mut appends),
                pair(&mut closes),
                pair(&mut lags),
            );
        }
    }
    println!(
        "\n{} appends per run, one client, keep-alive; the episode closed every {} appends.",
        options.samples, options.close_every
    );
    Ok(())
}

async fn measure(
    options: &Options,
    turns: &[String],
    postgres: Option<&str>,
    with_endpoint: bool,
) -> anyhow::Result<Run> {
    let dir = tempfile::tempdir()?;
    let mut config = AppConfig::in_dir(dir.path(), EngineConfig::default());
    config.engine.webhooks = WebhookSettings {
        destinations: Destinations::Any,
        ..WebhookSettings::default()
    };
    if let Some(server) = postgres {
        config.storage.backend = StorageBackend::Postgres;
        config.storage.postgres.url = octopus_postgres::testing::fresh_database_on(server).await;
    }
    let octopus = octopus_app::connect(&config).await?;
    octopus.start_webhook_dispatcher();
    let tenant = octopus.create_tenant("bench").await?;
    let agent = crate::setup::agent(&octopus, tenant.id, "bench").await?;
    let (_, key) = octopus.create_api_key(tenant.id, "bench").await?;
    let url = crate::setup::serve_on_loopback(octopus.clone()).await?;
    let api = octopus_client::Client::new(&url, Some(&key));
    let call = |operation: octopus_client::Operation, path: Option<&str>, body: Value| {
        let call = api.call(operation).json(&body);
        match path {
            Some(value) => call.param(value),
            None => call,
        }
        .send()
    };
    let receiver = Receiver::start(&[]).await;
    if with_endpoint {
        let events: Vec<&str> = octopus_core::webhook::EventType::ALL
            .iter()
            .map(|e| e.as_str())
            .collect();
        call(
            op::CREATE_WEBHOOK,
            None,
            json!({"url": receiver.url, "events": events}),
        )
        .await?;
    }
    let conversation = call(
        op::CREATE_CONVERSATION,
        None,
        json!({"agent_id": agent.id, "user_id": "alice"}),
    )
    .await?["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();

    let mut run = Run {
        appends: Vec::new(),
        closes: Vec::new(),
        lags: Vec::new(),
    };
    let mut closed_at: HashMap<String, Instant> = HashMap::new();
    let warm_up = 200;
    for i in 0..options.samples + warm_up {
        let body = json!({"role": "user", "content": turns[i % turns.len()]});
        let started = Instant::now();
        let stored = call(op::APPEND_MESSAGES, Some(&conversation), body).await?;
        if i >= warm_up {
            run.appends.push(started.elapsed());
        }
        if (i + 1) % options.close_every == 0 {
            let episode = stored["messages"][0]["episode_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let started = Instant::now();
            call(
                op::CLOSE_EPISODE,
                Some(&episode),
                json!({"end_reason": "user_closed"}),
            )
            .await?;
            if i >= warm_up {
                run.closes.push(started.elapsed());
                closed_at.insert(episode, Instant::now());
            }
        }
    }
    if with_endpoint {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let received = receiver.received();
            for arrival in &received {
                let body: Value = serde_json::from_str(&arrival.body)?;
                let episode = body["data"]["episode_id"].as_str().unwrap_or_default();
                if body["type"] != "episode.closed" {
                    continue;
                }
                if let Some(closed) = closed_at.remove(episode) {
                    run.lags.push(arrival.at.saturating_duration_since(closed));
                }
            }
            if closed_at.is_empty() || Instant::now() > deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        anyhow::ensure!(
            closed_at.is_empty(),
            "{} closes were never delivered",
            closed_at.len()
        );
    }
    Ok(run)
}
