//! Embedding throughput of the local model, side by side with sentence-transformers.
//!
//! Each (runtime, threads) pair runs in its own process, so that thread-pool sizes
//! are set before either runtime starts: candle reads `RAYON_NUM_THREADS`, and the
//! Python reference calls `torch.set_num_threads`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use octopus_embed::local::{BatchLimits, LocalEmbedder};
use serde_json::{Value, json};

use crate::corpus;

#[derive(clap::Args)]
pub struct Options {
    /// Short chat messages embedded per run.
    #[arg(long, default_value_t = 2000)]
    short: usize,
    /// ~300-token chunks embedded per run.
    #[arg(long, default_value_t = 200)]
    long: usize,
    /// A Python with sentence-transformers installed, to measure the reference too.
    #[arg(long)]
    reference_python: Option<PathBuf>,
    /// Model folder [default: the model cache's all-MiniLM-L6-v2].
    #[arg(long)]
    model: Option<PathBuf>,
    #[arg(long, default_value = "../shared/data/locomo-dev")]
    corpus: PathBuf,
}

/// Runs one measurement in this process: the worker side of [`run`].
#[derive(clap::Args)]
pub struct WorkerOptions {
    #[arg(long)]
    texts: PathBuf,
    #[arg(long)]
    model: PathBuf,
    /// Most tokens in one forward pass.
    #[arg(long, default_value_t = octopus_embed::local::BatchLimits::default().max_tokens)]
    batch_tokens: usize,
}

pub fn run(options: Options) -> anyhow::Result<()> {
    let model = options
        .model
        .clone()
        .unwrap_or_else(octopus_embed::model_dir::default_model_dir);
    let turns = corpus::chat_turns(&options.corpus)?;
    let short: Vec<&String> = turns.iter().cycle().take(options.short).collect();
    // Consecutive turns joined until about 1,200 characters: ~300 tokens of English.
    let mut long = Vec::new();
    let mut current = String::new();
    for turn in turns.iter().cycle() {
        if long.len() == options.long {
            break;
        }
        current.push_str(turn);
        current.push(' ');
        if current.len() >= 1200 {
            long.push(std::mem::take(&mut current));
        }
    }
    let texts_file = tempfile::NamedTempFile::new()?;
    std::fs::write(
        texts_file.path(),
        serde_json::to_vec(&json!({"short": short, "long": long}))?,
    )?;
    println!(
        "texts: {} chat messages (mean {} bytes), {} chunks (mean {} bytes); batch 32",
        short.len(),
        short.iter().map(|t| t.len()).sum::<usize>() / short.len().max(1),
        long.len(),
        long.iter().map(String::len).sum::<usize>() / long.len().max(1)
    );

    println!("\n| runtime | threads | chat messages/s | 300-token chunks/s |\n|---|---|---|---|");
    for threads in [1, 2] {
        let ours = worker(
            Command::new(std::env::current_exe()?)
                .args(["embed-worker", "--texts"])
                .arg(texts_file.path())
                .arg("--model")
                .arg(&model)
                .env("RAYON_NUM_THREADS", threads.to_string()),
        )?;
        print_row("octopus (candle)", threads, &ours);
        if let Some(python) = &options.reference_python {
            let reference = worker(
                Command::new(python)
                    .arg("scripts/reference/embed_throughput.py")
                    .arg(&model)
                    .arg(texts_file.path())
                    .arg(threads.to_string())
                    .env("HF_HUB_OFFLINE", "1"),
            )?;
            print_row("sentence-transformers (PyTorch)", threads, &reference);
            println!(
                "| ratio octopus / reference | {threads} | {:.2}x | {:.2}x |",
                ours["short"].as_f64().unwrap_or(0.0)
                    / reference["short"].as_f64().unwrap_or(f64::NAN),
                ours["long"].as_f64().unwrap_or(0.0)
                    / reference["long"].as_f64().unwrap_or(f64::NAN)
            );
        }
    }
    Ok(())
}

fn worker(command: &mut Command) -> anyhow::Result<Value> {
    let output = command.output().context("start a measurement process")?;
    if !output.status.success() {
        bail!(
            "measurement failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).with_context(|| format!("read the measurement from {last:?}"))
}

fn print_row(runtime: &str, threads: usize, rates: &Value) {
    println!(
        "| {runtime} | {threads} | {:.1} | {:.1} |",
        rates["short"].as_f64().unwrap_or(0.0),
        rates["long"].as_f64().unwrap_or(0.0)
    );
}

pub fn run_worker(options: WorkerOptions) -> anyhow::Result<()> {
    let sets: serde_json::Map<String, Value> =
        serde_json::from_slice(&std::fs::read(&options.texts)?)?;
    let limits = BatchLimits {
        max_tokens: options.batch_tokens,
        ..BatchLimits::default()
    };
    let model = LocalEmbedder::load_with(&options.model, limits)?;
    let text = |name: &str| -> Vec<String> {
        sets[name]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect()
    };
    let warm_up = text("short");
    model.embed_blocking(
        &warm_up
            .iter()
            .take(64)
            .map(String::as_str)
            .collect::<Vec<_>>(),
    )?;
    let mut rates = serde_json::Map::new();
    for name in ["short", "long"] {
        let texts = text(name);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let started = Instant::now();
        model.embed_blocking(&refs)?;
        rates.insert(
            name.into(),
            json!(texts.len() as f64 / started.elapsed().as_secs_f64()),
        );
    }
    println!("{}", Value::Object(rates));
    Ok(())
}
