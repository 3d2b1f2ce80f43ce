//! Whether one tenant can slow the others, over HTTP on loopback, on SQLite:
//!
//! - **A reader held open**: another connection keeps a read snapshot of the
//!   database (a backup tool, a long report) while tenant A forgets a user;
//!   tenant B's appends meanwhile, beside the same appends with no reader.
//! - **A silent endpoint**: tenant E's endpoints accept and never answer (each
//!   attempt waits out the timeout) while its events keep coming; tenant D's
//!   deliveries to an endpoint that answers, from the change to the arrival.
//! - **Long histories**: contexts of an agent at the largest budget the
//!   server allows over an episode of 1 MiB messages, three at once; the
//!   process's resident memory before and at its peak, and another tenant's
//!   recall meanwhile.

use std::time::{Duration, Instant};

use octopus_app::AppConfig;
use octopus_client::Operation;
use octopus_client::operations as op;
use octopus_engine::EngineConfig;
use octopus_engine::webhooks::{Destinations, WebhookSettings};
use octopus_testkit::webhook_receiver::Receiver;
use serde_json::{Value, json};

use crate::latency::{ms, percentile};

#[derive(clap::Args)]
pub struct Options {
    /// Tenant B's single-message appends timed in each case.
    #[arg(long, default_value_t = 400)]
    appends: usize,
    /// Tenant D's facts whose deliveries are timed.
    #[arg(long, default_value_t = 40)]
    deliveries: usize,
    /// Messages of 1 MiB in the long episode.
    #[arg(long, default_value_t = 40)]
    long_messages: usize,
}

pub fn run(options: Options) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        println!("\n| case | what is measured | p50 | p99 |\n|---|---|---|---|");
        held_reader(&options).await?;
        silent_endpoint(&options).await?;
        long_histories(&options).await
    })
}

/// A server of its own in a fresh data directory, and an HTTP client.
struct Bench {
    _dir: tempfile::TempDir,
    dir: std::path::PathBuf,
    octopus: octopus_engine::Octopus,
    api: octopus_client::Client,
}

impl Bench {
    async fn start(adjust: impl FnOnce(&mut EngineConfig)) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let mut engine = EngineConfig::default();
        adjust(&mut engine);
        let config = AppConfig::in_dir(dir.path(), engine);
        let octopus = octopus_app::connect(&config).await?;
        octopus.start_webhook_dispatcher();
        let url = crate::setup::serve_on_loopback(octopus.clone()).await?;
        Ok(Self {
            dir: dir.path().to_owned(),
            _dir: dir,
            octopus,
            api: octopus_client::Client::new(&url, None),
        })
    }

    /// A tenant with an agent (`memory` its memory settings) and a key.
    async fn tenant(&self, name: &str, memory: Value) -> anyhow::Result<(String, String)> {
        let tenant = self.octopus.create_tenant(name).await?;
        let spec = serde_json::from_value(json!({
            "name": "bench", "llm": {"provider": "openai", "model": "gpt-4o"}, "memory": memory
        }))?;
        let agent = self.octopus.create_agent(tenant.id, spec).await?;
        let (_, key) = self.octopus.create_api_key(tenant.id, "bench").await?;
        Ok((key, agent.id.to_string()))
    }

    /// `operation` as tenant `key`, its path filled with `path`.
    async fn call(
        &self,
        key: &str,
        operation: Operation,
        path: &[&str],
        body: Value,
    ) -> anyhow::Result<Value> {
        let mut call = self.api.call(operation).key(key);
        for value in path {
            call = call.param(value);
        }
        Ok(call.json(&body).send().await?)
    }

    async fn conversation(&self, key: &str, agent: &str, user: &str) -> anyhow::Result<String> {
        let created = self
            .call(
                key,
                op::CREATE_CONVERSATION,
                &[],
                json!({"agent_id": agent, "user_id": user}),
            )
            .await?;
        Ok(created["id"].as_str().unwrap_or_default().to_owned())
    }

    /// Tenant B's single-message appends, timed.
    async fn appends(
        &self,
        key: &str,
        conversation: &str,
        count: usize,
    ) -> anyhow::Result<Vec<Duration>> {
        let mut took = Vec::with_capacity(count);
        for i in 0..count {
            let started = Instant::now();
            self.call(
                key,
                op::APPEND_MESSAGES,
                &[conversation],
                json!({"role": "user", "content": format!("note {i} about the garden")}),
            )
            .await?;
            took.push(started.elapsed());
        }
        Ok(took)
    }
}

impl Bench {
    /// Tenant B's appends while tenant A forgets `user`, and how long the
    /// forget took to answer: two rows of `case`.
    async fn appends_beside_a_forget(
        &self,
        a_key: &str,
        user: &str,
        b_key: &str,
        b_talk: &str,
        count: usize,
        case: &str,
    ) -> anyhow::Result<()> {
        let forgetting = {
            let (api, user, a_key) = (self.api.clone(), user.to_owned(), a_key.to_owned());
            tokio::spawn(async move {
                let started = Instant::now();
                let answer = api
                    .call(op::FORGET_USER)
                    .key(&a_key)
                    .param(user)
                    .send()
                    .await;
                (started.elapsed(), answer)
            })
        };
        let mut beside = self.appends(b_key, b_talk, count).await?;
        let (forgot_in, status) = forgetting.await?;
        row(
            case,
            "tenant B's append, during tenant A's forget",
            &mut beside,
        );
        let status = status.map_or_else(|e| e.to_string(), |_| "ok".to_owned());
        println!(
            "| {case} | tenant A's forget answered ({status}) | {} | |",
            ms(forgot_in)
        );
        Ok(())
    }
}

fn row(case: &str, what: &str, samples: &mut [Duration]) {
    println!(
        "| {case} | {what} | {} | {} |",
        ms(percentile(samples, 0.5)),
        ms(percentile(samples, 0.99))
    );
}

async fn held_reader(options: &Options) -> anyhow::Result<()> {
    let bench = Bench::start(|_| {}).await?;
    let (a_key, a_agent) = bench.tenant("a", json!({})).await?;
    let (b_key, b_agent) = bench.tenant("b", json!({})).await?;
    let a_talk = bench.conversation(&a_key, &a_agent, "leaving").await?;
    for batch in 0..15 {
        let messages: Vec<Value> = (0..100)
            .map(|i| json!({"role": "user", "content": format!("{batch}-{i} {}", "words to erase ".repeat(540))}))
            .collect();
        bench
            .call(
                &a_key,
                op::APPEND_MESSAGES,
                &[&a_talk],
                json!({"messages": messages}),
            )
            .await?;
    }
    let b_talk = bench.conversation(&b_key, &b_agent, "staying").await?;
    let mut alone = bench.appends(&b_key, &b_talk, options.appends).await?;
    row(
        "a reader held open",
        "tenant B's append, no reader, no erasure",
        &mut alone,
    );

    // An export to a client that reads nothing past the headers, then a
    // forget of another of tenant A's users: the export holds no snapshot.
    let unread = bench.api.call(op::EXPORT_DUMP).key(&a_key).open().await?;
    let other_talk = bench.conversation(&a_key, &a_agent, "also-leaving").await?;
    bench
        .call(
            &a_key,
            op::APPEND_MESSAGES,
            &[&other_talk],
            json!({"role": "user", "content": "bye"}),
        )
        .await?;
    bench
        .appends_beside_a_forget(
            &a_key,
            "also-leaving",
            &b_key,
            &b_talk,
            options.appends,
            "an export nobody reads",
        )
        .await?;
    drop(unread);

    // A reader holds a snapshot of both files until it is dropped.
    let mut readers = Vec::new();
    for file in ["octopus.sqlite", "search.sqlite"] {
        let reader = rusqlite::Connection::open(bench.dir.join(file))?;
        reader.execute_batch("BEGIN")?;
        let _: i64 = reader.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
        readers.push(reader);
    }
    bench
        .appends_beside_a_forget(
            &a_key,
            "leaving",
            &b_key,
            &b_talk,
            options.appends,
            "a reader held open",
        )
        .await?;
    drop(readers);
    let released = Instant::now();
    while bench.octopus.erased_words_waiting().is_some()
        && released.elapsed() < Duration::from_secs(60)
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    println!(
        "| a reader held open | erased words out of the logs after the reader ended | {} | |",
        ms(released.elapsed())
    );
    Ok(())
}

async fn silent_endpoint(options: &Options) -> anyhow::Result<()> {
    let bench = Bench::start(|engine| {
        engine.webhooks = WebhookSettings {
            destinations: Destinations::Any,
            ..WebhookSettings::default()
        };
    })
    .await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let silent = format!("http://{}/hook", listener.local_addr()?);
    tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    let (e_key, e_agent) = bench.tenant("e", json!({})).await?;
    for _ in 0..16 {
        bench
            .call(
                &e_key,
                op::CREATE_WEBHOOK,
                &[],
                json!({"url": silent, "events": ["fact.added"]}),
            )
            .await?;
    }
    let (d_key, d_agent) = bench.tenant("d", json!({})).await?;
    let receiver = Receiver::start(&[]).await;
    bench
        .call(
            &d_key,
            op::CREATE_WEBHOOK,
            &[],
            json!({"url": receiver.url, "events": ["fact.added"]}),
        )
        .await?;
    let mut lags = Vec::new();
    for i in 0..options.deliveries {
        // Tenant E's events keep coming, for new users each time.
        bench
            .call(
                &e_key,
                op::ADD_FACT,
                &[&e_agent, &format!("e{i}")],
                json!({"text": format!("E fact {i}")}),
            )
            .await?;
        let before = receiver.received().len();
        let started = Instant::now();
        bench
            .call(
                &d_key,
                op::ADD_FACT,
                &[&d_agent, &format!("d{i}")],
                json!({"text": format!("D fact {i}")}),
            )
            .await?;
        while receiver.received().len() == before && started.elapsed() < Duration::from_secs(120) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        lags.push(started.elapsed());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    row(
        "16 silent endpoints of tenant E",
        "tenant D's delivery, from its change to the arrival",
        &mut lags,
    );
    Ok(())
}

async fn long_histories(options: &Options) -> anyhow::Result<()> {
    let bench = Bench::start(|_| {}).await?;
    let ceiling = octopus_engine::Limits::default();
    let (key, agent) = bench
        .tenant(
            "long",
            json!({"max_working_memory_tokens": ceiling.max_working_memory_tokens,
                   "history_max_messages": ceiling.max_history_messages}),
        )
        .await?;
    let talk = bench.conversation(&key, &agent, "talker").await?;
    // 1 MiB less a little, so each fits `max_message_bytes` with its JSON.
    let long = "a long message of many words ".repeat(36_000);
    for i in 0..options.long_messages {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        bench
            .call(
                &key,
                op::APPEND_MESSAGES,
                &[&talk],
                json!({"role": role, "content": format!("{i} {long}")}),
            )
            .await?;
    }
    let (other_key, other_agent) = bench.tenant("other", json!({})).await?;
    let other = bench
        .conversation(&other_key, &other_agent, "quiet")
        .await?;
    bench.appends(&other_key, &other, 50).await?;
    let recall = |bench: &Bench| {
        let (api, agent, key) = (bench.api.clone(), other_agent.clone(), other_key.clone());
        async move {
            let mut took = Vec::new();
            for i in 0..60 {
                let started = Instant::now();
                api.call(op::RECALL)
                    .key(&key)
                    .param(&agent)
                    .json(&json!({"user_id": "quiet", "query": format!("garden note {i}"), "mode": "keyword"}))
                    .send()
                    .await?;
                took.push(started.elapsed());
            }
            anyhow::Ok(took)
        }
    };
    // The local embedding model loads at the first search by meaning: one
    // context first, so its weights are not counted as the contexts' memory.
    bench
        .call(
            &other_key,
            op::BUILD_CONTEXT,
            &[&other],
            json!({"message": "warm up"}),
        )
        .await?;
    let mut recall_alone = recall(&bench).await?;
    release_spare_memory();
    let before = resident_kib("RssAnon");
    // The peak of the process's own memory (not the files it maps), sampled
    // every millisecond while the contexts run.
    let sampling = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let sampler = {
        let sampling = sampling.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while sampling.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(resident_kib("RssAnon"));
                std::thread::sleep(Duration::from_millis(1));
            }
            peak
        })
    };
    let contexts: Vec<_> = (0..3)
        .map(|_| {
            let (api, key, talk) = (bench.api.clone(), key.clone(), talk.clone());
            tokio::spawn(async move {
                let answer = api
                    .call(op::BUILD_CONTEXT)
                    .key(&key)
                    .param(&talk)
                    .json(&json!({"message": "what did I say last?"}))
                    .send()
                    .await?;
                anyhow::Ok(answer.to_string().len())
            })
        })
        .collect();
    let mut recall_beside = recall(&bench).await?;
    let mut answered = 0;
    for context in contexts {
        answered += context.await??;
    }
    sampling.store(false, std::sync::atomic::Ordering::Relaxed);
    let peak = sampler.join().unwrap_or(0);
    row(
        "contexts of 1 MiB messages",
        "another tenant's recall, alone",
        &mut recall_alone,
    );
    row(
        "contexts of 1 MiB messages",
        "another tenant's recall, beside three contexts",
        &mut recall_beside,
    );
    println!(
        "\nLong histories: {} messages of 1 MiB, budget {} tokens; three contexts answered {:.3} MB together; the process's own resident memory (not the files it maps) {:.1} MB before, {:.1} MB at the peak (+{:.1} MB).",
        options.long_messages,
        ceiling.max_working_memory_tokens,
        answered as f64 / 1e6,
        before as f64 / 1024.0,
        peak as f64 / 1024.0,
        peak.saturating_sub(before) as f64 / 1024.0,
    );
    Ok(())
}

/// A figure of this process's from /proc (kB), 0 where there is none.
fn resident_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                line.strip_prefix(field)?
                    .trim_start_matches(':')
                    .trim()
                    .trim_end_matches(" kB")
                    .parse()
                    .ok()
            })
        })
        .unwrap_or(0)
}

fn release_spare_memory() {
    octopus_engine::free_memory::release();
}
