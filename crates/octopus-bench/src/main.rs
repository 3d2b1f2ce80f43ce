//! Octopus benchmarks. Each subcommand measures one thing on this machine and
//! prints a table; targets are compared in the closing notes, never asserted.
//!
//! `cargo run --release -p octopus-bench -- ingest`

mod corpus;
mod ingest;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "octopus-bench", about = "Measure Octopus on this machine")]
struct Cli {
    #[command(subcommand)]
    bench: Bench,
}

#[derive(Subcommand)]
enum Bench {
    /// Message ingestion: store API, HTTP with concurrent clients, single-append latency.
    Ingest(ingest::Options),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().bench {
        Bench::Ingest(options) => ingest::run(options),
    }
}
