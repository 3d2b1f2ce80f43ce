//! What the OpenAI-compatible endpoint adds to a model call: the same
//! client request sent straight to a provider, and through Octopus to the
//! same provider, whole and streamed (time to the first token).
//!
//! The provider is the loopback fake of the tests (`octopus_testkit::
//! fake_chat`), which answers at once, so the difference is Octopus's own
//! work: the key, the agent and conversation found, the user's message
//! stored, the working memory assembled (the query embedded by the local
//! model, knowledge and episodes searched, history read), and the reply
//! stored, with the memory worker embedding each stored message beside it.
//! Direct calls go to the fake's OpenAI route; Octopus calls it on its Ollama
//! route, which needs no key, so the bench sets no key in the environment.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use octopus_app::AppConfig;
use octopus_client::Client;
use octopus_client::operations as op;
use octopus_engine::EngineConfig;
use octopus_testkit::fake_chat::{self, ChatProvider};
use serde_json::{Value, json};

use crate::latency::p50_p95_max;

#[derive(clap::Args)]
pub struct Options {
    /// Measured requests per mode (whole, streamed) and per path.
    #[arg(long, default_value_t = 200)]
    requests: usize,
    /// Requests through Octopus before measuring, which also give the
    /// conversation a history to assemble.
    #[arg(long, default_value_t = 20)]
    warmup: usize,
}

pub fn run(options: Options) -> anyhow::Result<()> {
    tokio::runtime::Runtime::new()?.block_on(measure(options))
}

struct Paths {
    /// For the fake provider called straight.
    http: reqwest::Client,
    fake: String,
    octopus: Client,
}

impl Paths {
    /// Posts one completion; the time to its whole answer, or to its first
    /// piece of text when streamed.
    async fn complete(
        &self,
        through_octopus: bool,
        stream: bool,
        text: &str,
    ) -> anyhow::Result<Duration> {
        let messages = json!([{"role": "user", "content": text}]);
        let started = Instant::now();
        let mut response = if through_octopus {
            self.octopus
                .call(op::CHAT_COMPLETION)
                .json(&json!({"model": "bench", "user": "bench-user", "stream": stream, "messages": messages}))
                .open()
                .await?
        } else {
            let response = self
                .http
                .post(format!("{}/v1/chat/completions", self.fake))
                .bearer_auth("sk-test")
                .json(&json!({"model": "gpt-4o-mini", "stream": stream, "messages": messages}))
                .send()
                .await?;
            anyhow::ensure!(response.status().is_success(), "{}", response.status());
            response
        };
        if !stream {
            let body: Value = response.json().await?;
            anyhow::ensure!(
                body["choices"][0]["message"]["content"].is_string(),
                "{body}"
            );
            return Ok(started.elapsed());
        }
        let mut seen = String::new();
        let mut first = None;
        while let Some(bytes) = response.chunk().await? {
            seen.push_str(&String::from_utf8_lossy(&bytes));
            if first.is_none() && first_text(&seen) {
                first = Some(started.elapsed());
            }
        }
        first.context("the stream carried no text")
    }
}

/// Whether the events so far carry a piece of text.
fn first_text(events: &str) -> bool {
    events
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .any(|chunk| {
            chunk["choices"][0]["delta"]["content"]
                .as_str()
                .is_some_and(|t| !t.is_empty())
        })
}

async fn measure(options: Options) -> anyhow::Result<()> {
    let fake = fake_chat::serve(Arc::new(ChatProvider::default())).await;
    let dir = tempfile::tempdir()?;
    let mut engine = EngineConfig::default();
    engine.llm.allowed_base_urls = vec![fake.clone()];
    engine.llm.max_retries = 0;
    let octopus = octopus_app::connect(&AppConfig::in_dir(dir.path(), engine)).await?;
    octopus.start_memory_worker();
    let tenant = octopus.create_tenant("bench").await?;
    let (_, key) = octopus.create_api_key(tenant.id, "bench").await?;
    let url = crate::setup::serve_on_loopback(octopus).await?;
    let paths = Paths {
        http: reqwest::Client::new(),
        fake: fake.clone(),
        octopus: Client::new(&url, Some(&key)),
    };
    let agent = json!({"name": "bench", "system_prompt": "You are a support agent.",
        "llm": {"provider": "ollama", "model": "bench", "base_url": fake}});
    paths
        .octopus
        .call(op::CREATE_AGENT)
        .json(&agent)
        .send()
        .await?;
    for i in 0..options.warmup {
        paths.complete(true, false, &question(i)).await?;
        paths.complete(false, false, &question(i)).await?;
    }

    println!(
        "OpenAI-compatible endpoint: {} requests per row, after {} warm-up turns (the conversation grows by one turn per request)\n",
        options.requests, options.warmup
    );
    println!(
        "| mode | direct p50 | direct p95 | through Octopus p50 | through Octopus p95 | added p50 | added p95 |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (mode, stream) in [("whole answer", false), ("first streamed token", true)] {
        let (mut direct, mut proxied) = (Vec::new(), Vec::new());
        // Interleaved, so that drift in the machine's load falls on both.
        for i in 0..options.requests {
            let text = question(options.warmup + i);
            direct.push(paths.complete(false, stream, &text).await?);
            proxied.push(paths.complete(true, stream, &text).await?);
        }
        let (d50, d95, _) = p50_p95_max(direct);
        let (p50, p95, _) = p50_p95_max(proxied);
        println!(
            "| {mode} | {d50:.2} ms | {d95:.2} ms | {p50:.2} ms | {p95:.2} ms | {:.2} ms | {:.2} ms |",
            p50 - d50,
            p95 - d95
        );
    }
    Ok(())
}

fn question(i: usize) -> String {
    format!("Question {i}: where is my order number {}?", 1000 + i)
}
