//! Document ingestion end to end: Markdown files read, chunked, embedded by the
//! local model and stored with their full-text and vector indexes, through the
//! same engine call the HTTP route and `octopus ingest` use.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use octopus_app::AppConfig;
use octopus_core::chunking::Format;
use octopus_engine::{EngineConfig, IngestDocument};

use crate::{corpus, setup};

#[derive(clap::Args)]
pub struct Options {
    /// Markdown documents ingested: the READMEs of the workspace's dependencies.
    #[arg(long, default_value_t = 40)]
    documents: usize,
    #[arg(long, default_value = "Cargo.lock")]
    lockfile: PathBuf,
}

pub fn run(options: Options) -> anyhow::Result<()> {
    let documents = corpus::readmes(&options.lockfile, options.documents)?;
    let bytes: usize = documents.iter().map(|(_, text)| text.len()).sum();
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let dir = tempfile::tempdir()?;
        let config = AppConfig::in_dir(dir.path(), EngineConfig::default());
        let octopus = tokio::task::spawn_blocking(move || octopus_app::open(&config)).await??;
        let tenant = octopus.create_tenant("bench").await?;
        let agent = setup::agent(&octopus, tenant.id, "docs").await?;
        // Load the model outside the measurement.
        octopus.embedder().await?;
        let started = Instant::now();
        let mut chunks = 0;
        let mut tokens = 0;
        for (source, text) in documents.iter().cloned() {
            let document = IngestDocument {
                source,
                text,
                format: Format::Markdown,
                category: None,
            };
            let report = octopus
                .ingest_document(tenant.id, agent.id, document)
                .await
                .context("ingest")?;
            chunks += report.chunks;
            tokens += report.tokens;
        }
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "{} Markdown files ({:.1} MB), {chunks} chunks, {tokens} tokens, threads: {}\n",
            documents.len(),
            bytes as f64 / 1e6,
            std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "all cores".into())
        );
        println!("| measurement | figure |\n|---|---|");
        println!("| chunks/s, end to end | {:.1} |", chunks as f64 / seconds);
        println!("| documents/s | {:.2} |", documents.len() as f64 / seconds);
        println!("| tokens/s | {:.0} |", tokens as f64 / seconds);
        println!(
            "| mean tokens per chunk | {:.0} |",
            tokens as f64 / chunks.max(1) as f64
        );
        anyhow::Ok(())
    })
}
