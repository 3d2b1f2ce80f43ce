//! Resident memory of the server process around a burst of embedding: the
//! real `octopus serve` binary as a child process, idle; while its memory
//! worker embeds imported messages; and once the worker is idle again.
//!
//! Messages are LoCoMo chat turns, imported through the HTTP API in sessions
//! of 20 turns shared among 100 users of one agent, as a client migrating
//! its history would.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use octopus_client::Client;
use octopus_client::operations as op;

use crate::corpus;

const ADMIN_KEY: &str = "oct_memory_bench_admin";
const USERS: usize = 100;
const SESSION_TURNS: usize = 20;
/// Messages per import request.
const IMPORT_MESSAGES: usize = 2000;

#[derive(clap::Args)]
pub struct Options {
    /// Messages imported (and embedded by the server's worker).
    #[arg(long, default_value_t = 100_000)]
    messages: usize,
    /// The `octopus` binary [default: beside this one, as `cargo build
    /// --release -p octopus-cli` leaves it].
    #[arg(long)]
    server: Option<PathBuf>,
    /// The LoCoMo dev split's folder: one JSON file per conversation.
    #[arg(long, env = "OCTOPUS_LOCOMO_DIR")]
    data: PathBuf,
    /// Seconds to wait once the worker is idle before the last reading.
    #[arg(long, default_value_t = 5)]
    settle: u64,
}

/// Resident set size of a process, in MiB: all of it (`VmRSS` of
/// `/proc/PID/status`), and the part that is the process's own memory
/// (`RssAnon`) rather than pages of mapped files, which the kernel can drop
/// and share.
#[derive(Clone, Copy)]
struct Resident {
    total: f64,
    own: f64,
}

impl std::fmt::Display for Resident {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.0} MiB ({:.0} MiB its own)", self.total, self.own)
    }
}

fn resident(pid: u32) -> anyhow::Result<Resident> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let field = |name: &str| -> anyhow::Result<f64> {
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .with_context(|| format!("no {name} in /proc/PID/status"))?;
        Ok(kib / 1024.0)
    };
    Ok(Resident {
        total: field("VmRSS:")?,
        own: field("RssAnon:")?,
    })
}

fn larger(a: Resident, b: Resident) -> Resident {
    Resident {
        total: a.total.max(b.total),
        own: a.own.max(b.own),
    }
}

struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(binary: &PathBuf, data_dir: &std::path::Path) -> anyhow::Result<Server> {
    // No model to call here: episode summaries are extractive, as on a
    // server without one, so the worker's queue empties once all is embedded.
    let config = data_dir.join("octopus.toml");
    std::fs::write(&config, "[llm]\nsummarise_episodes = false\n")?;
    let mut child = Command::new(binary)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--log",
            "error",
            "--admin-key",
            ADMIN_KEY,
        ])
        .arg("--config")
        .arg(&config)
        .arg("--data-dir")
        .arg(data_dir)
        .env_remove("OCTOPUS_CONFIG")
        .env_remove("OCTOPUS_DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("start {}", binary.display()))?;
    let stdout = child.stdout.take().context("the server's stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let url = loop {
        let Some(line) = lines.next() else {
            bail!("octopus exited before listening")
        };
        if let Some(url) = line?.strip_prefix("Octopus listening on ") {
            break url.trim().to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Ok(Server { child, url })
}

pub fn run(options: Options) -> anyhow::Result<()> {
    let binary = crate::setup::server_binary(options.server.as_deref())?;
    let turns = corpus::chat_turns(&options.data)?;
    let dir = tempfile::tempdir()?;
    let server = start(&binary, dir.path())?;
    let pid = server.child.id();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let admin = Client::new(&server.url, Some(ADMIN_KEY));
        let tenant = admin
            .call(op::CREATE_TENANT)
            .json(&json!({"name": "memory-bench"}))
            .send()
            .await?;
        let tenant = tenant["id"].as_str().unwrap_or_default().to_owned();
        let key = admin
            .call(op::CREATE_API_KEY)
            .param(&tenant)
            .json(&json!({"name": "bench"}))
            .send()
            .await?;
        let api = admin.with_key(key["key"].as_str().unwrap_or_default());
        let agent = api
            .call(op::CREATE_AGENT)
            .json(&json!({"name": "memory-bench", "llm": {"provider": "openai", "model": "gpt-4o"}}))
            .send()
            .await?;
        let agent = agent["id"].as_str().unwrap_or_default().to_owned();
        tokio::time::sleep(Duration::from_secs(2)).await;
        let idle = resident(pid)?;

        // A year ago, one message a minute: an import keeps the original times.
        let base = chrono::Utc::now() - chrono::Duration::days(365);
        let started = Instant::now();
        let mut peak = idle;
        let mut sent = 0;
        let mut texts = turns.iter().cycle();
        while sent < options.messages {
            let count = IMPORT_MESSAGES.min(options.messages - sent);
            let user = format!("user-{}", (sent / IMPORT_MESSAGES) % USERS);
            let sessions: Vec<Value> = (0..count.div_ceil(SESSION_TURNS))
                .map(|s| {
                    let messages: Vec<Value> = (0..SESSION_TURNS.min(count - s * SESSION_TURNS))
                        .map(|i| {
                            let role = if i % 2 == 0 { "user" } else { "assistant" };
                            let n = sent + s * SESSION_TURNS + i;
                            let at = base + chrono::Duration::minutes(n as i64);
                            json!({"role": role, "content": texts.next().map_or("", String::as_str),
                                   "timestamp": at})
                        })
                        .collect();
                    json!({"messages": messages})
                })
                .collect();
            api.call(op::IMPORT_CONVERSATION)
                .json(&json!({"agent_id": agent, "user_id": user, "sessions": sessions}))
                .send()
                .await?;
            sent += count;
            peak = larger(peak, resident(pid)?);
        }
        let imported = started.elapsed().as_secs_f64();
        // A line every half minute: how the worker's pace and the memory
        // move as the store grows.
        println!("| seconds | jobs queued | jobs done per second since the last line | resident |\n|---|---|---|---|");
        let mut last = (Instant::now(), f64::NAN);
        loop {
            let now = resident(pid)?;
            peak = larger(peak, now);
            let queued = crate::api::queued_jobs(&admin).await?;
            if queued == 0.0 {
                break;
            }
            if last.1.is_nan() || last.0.elapsed() >= Duration::from_secs(30) {
                let pace = (last.1 - queued) / last.0.elapsed().as_secs_f64();
                println!(
                    "| {:.0} | {queued:.0} | {} | {now} |",
                    started.elapsed().as_secs_f64(),
                    if pace.is_nan() { "—".into() } else { format!("{pace:.0}") }
                );
                last = (Instant::now(), queued);
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        let embedded = started.elapsed().as_secs_f64();
        let done = resident(pid)?;
        tokio::time::sleep(Duration::from_secs(options.settle)).await;
        let after = resident(pid)?;
        println!(
            "{} messages imported in {imported:.1} s, embedded by the worker after {embedded:.1} s \
             ({:.0} messages/s)",
            options.messages,
            options.messages as f64 / embedded
        );
        println!("\n| server process | resident memory |\n|---|---|");
        println!("| idle, before the burst | {idle} |");
        println!("| peak while importing and embedding | {peak} |");
        println!("| when the worker's queue emptied | {done} |");
        println!(
            "| {} s later, idle, {} messages stored | {after} |",
            options.settle, options.messages
        );
        anyhow::Ok(())
    })
}
