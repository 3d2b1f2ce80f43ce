//! Embedding throughput of the local model, side by side with candle's BERT
//! (what Octopus ran before its own encoder) and sentence-transformers; and
//! the latency of embedding one short query.
//!
//! Each (runtime, threads) pair runs in its own process, so that thread-pool sizes
//! are set before either runtime starts: Octopus and candle read `RAYON_NUM_THREADS`,
//! and the Python reference calls `torch.set_num_threads`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use octopus_core::embedding::Embedder;
use octopus_embed::local::{Batching, Int8Instructions, LocalEmbedder, Precision};
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
    /// The LoCoMo dev split's folder: one JSON file per conversation.
    #[arg(long, env = "OCTOPUS_LOCOMO_DIR")]
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
    #[arg(long, default_value_t = Batching::default().max_tokens)]
    batch_tokens: usize,
    /// Which forward pass runs the model.
    #[arg(long, value_enum, default_value_t = Runtime::Encoder)]
    runtime: Runtime,
    /// The fastest instructions int8 products may use (`avx512-vnni`,
    /// `avx-vnni`, `avx2`, `scalar`): an older CPU's path on this one.
    #[arg(long)]
    int8_instructions: Option<String>,
}

/// The variants measured, each in its own process; candle's BERT with the
/// `candle` feature only (its crates are the slowest of the bench's build).
const RUNTIMES: &[(&str, Runtime)] = &[
    #[cfg(feature = "candle")]
    ("candle BERT (before)", Runtime::Candle),
    ("octopus encoder, f32", Runtime::Encoder),
    ("octopus encoder, bf16", Runtime::EncoderBf16),
    ("octopus encoder, int8", Runtime::EncoderInt8),
];

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Runtime {
    /// Octopus's own encoder.
    Encoder,
    /// The encoder with bf16 dense layers.
    EncoderBf16,
    /// The encoder with int8 dense layers.
    EncoderInt8,
    /// candle's BERT, the implementation before it.
    #[cfg(feature = "candle")]
    Candle,
}

impl Runtime {
    fn name(self) -> &'static str {
        match self {
            Runtime::Encoder => "encoder",
            Runtime::EncoderBf16 => "encoder-bf16",
            Runtime::EncoderInt8 => "encoder-int8",
            #[cfg(feature = "candle")]
            Runtime::Candle => "candle",
        }
    }
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

    println!(
        "\n| runtime | threads | chat messages/s | 300-token chunks/s | one query p50 / p95 |\n|---|---|---|---|---|"
    );
    for threads in [1, 2] {
        let mut rows = Vec::new();
        for (label, runtime) in RUNTIMES {
            if matches!(runtime, Runtime::EncoderBf16)
                && !Precision::available().contains(&Precision::Bf16)
            {
                println!("| {label} | {threads} | not on this CPU | | |");
                continue;
            }
            // int8 once on each instruction set this CPU has (bar the
            // scalar loop), so that one host shows the paths older CPUs take.
            let int8_paths: Vec<Option<Int8Instructions>> = match runtime {
                Runtime::EncoderInt8 => Int8Instructions::present_accelerated()
                    .into_iter()
                    .map(Some)
                    .collect(),
                _ => vec![None],
            };
            for instructions in int8_paths {
                let mut command = Command::new(std::env::current_exe()?);
                command
                    .args(["embed-worker", "--runtime", runtime.name(), "--texts"])
                    .arg(texts_file.path())
                    .arg("--model")
                    .arg(&model)
                    .env("RAYON_NUM_THREADS", threads.to_string());
                let label = match instructions {
                    Some(instructions) => {
                        command.args(["--int8-instructions", instructions.name()]);
                        format!("{label} ({})", instructions.name())
                    }
                    None => (*label).to_owned(),
                };
                let rates = worker(&mut command)?;
                print_row(&label, threads, &rates);
                rows.push((label, rates));
            }
        }
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
            for (label, rates) in &rows {
                let ratio = |set: &str| {
                    rates[set].as_f64().unwrap_or(0.0) / reference[set].as_f64().unwrap_or(f64::NAN)
                };
                // A latency's ratio the other way round: the reference's
                // time over ours, so that above 1 is faster here too.
                let query = reference["query_p50_ms"].as_f64().unwrap_or(f64::NAN)
                    / rates["query_p50_ms"].as_f64().unwrap_or(f64::NAN);
                println!(
                    "| {label} / reference | {threads} | {:.2}x | {:.2}x | {query:.2}x (p50) |",
                    ratio("short"),
                    ratio("long")
                );
            }
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
    let latency = match (
        rates["query_p50_ms"].as_f64(),
        rates["query_p95_ms"].as_f64(),
    ) {
        (Some(p50), Some(p95)) => format!("{p50:.2} / {p95:.2} ms"),
        _ => "—".into(),
    };
    println!(
        "| {runtime} | {threads} | {:.1} | {:.1} | {latency} |",
        rates["short"].as_f64().unwrap_or(0.0),
        rates["long"].as_f64().unwrap_or(0.0)
    );
}

pub fn run_worker(options: WorkerOptions) -> anyhow::Result<()> {
    let sets: serde_json::Map<String, Value> =
        serde_json::from_slice(&std::fs::read(&options.texts)?)?;
    if let Some(name) = &options.int8_instructions {
        Int8Instructions::from_name(name)
            .with_context(|| format!("no int8 instructions named {name}"))?
            .limit_to();
    }
    let batching = Batching {
        max_tokens: options.batch_tokens,
        ..Batching::default()
    };
    let model = match options.runtime {
        Runtime::Encoder => LocalEmbedder::load_with(&options.model, batching)?,
        Runtime::EncoderBf16 | Runtime::EncoderInt8 => LocalEmbedder::load_with(
            &options.model,
            Batching {
                precision: if matches!(options.runtime, Runtime::EncoderBf16) {
                    Precision::Bf16
                } else {
                    Precision::Int8
                },
                ..batching
            },
        )?,
        #[cfg(feature = "candle")]
        Runtime::Candle => LocalEmbedder::load_candle(&options.model, batching)?,
    };
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
    // One query at a time, as recall embeds a question: short chat messages
    // of at most 32 tokens, each alone.
    let queries: Vec<String> = text("short")
        .into_iter()
        .filter(|t| model.count_tokens(t).is_some_and(|n| n + 2 <= 32))
        .take(500)
        .collect();
    let mut times = Vec::with_capacity(queries.len());
    for query in &queries {
        let started = Instant::now();
        model.embed_blocking(&[query.as_str()])?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    rates.insert("query_p50_ms".into(), json!(at(0.5)));
    rates.insert("query_p95_ms".into(), json!(at(0.95)));
    println!("{}", Value::Object(rates));
    Ok(())
}
