//! Octopus benchmarks. Each subcommand measures one thing on this machine and
//! prints a table; targets are compared in the closing notes, never asserted.
//!
//! `cargo run --release -p octopus-bench -- ingest`
//! `cargo run --release -p octopus-bench -- embed --reference-python PATH`
//! `cargo run --release -p octopus-bench -- vectors`
//! `cargo run --release -p octopus-bench -- documents`
//! `cargo run --release -p octopus-bench -- locomo`
//! `cargo run --release -p octopus-bench -- beam --data DIR`
//! `cargo run --release -p octopus-bench -- context`
//! `cargo run --release -p octopus-bench -- procedures`
//! `cargo run --release -p octopus-bench -- memory` (after `cargo build --release -p octopus-cli`)
//! `cargo run --release -p octopus-bench -- wakeup --postgres URL`
//! `cargo run --release -p octopus-bench -- scale [--postgres URL]` (after `cargo build --release -p octopus-cli`)
//! `cargo run --release -p octopus-bench -- soak` (after `cargo build --release -p octopus-cli`; needs wrk)

#![forbid(unsafe_code)]
#![allow(clippy::unwrap_used)] // a benchmark: a panic is how it reports a broken setup

mod api;
mod beam;
mod beam_bench;
mod context;
mod corpus;
mod dev_set;
mod dev_set_http;
mod documents;
mod embed;
mod fairness;
mod ingest;
mod latency;
mod learning;
mod locomo;
mod locomo_answers;
mod locomo_bench;
mod locomo_context;
mod locomo_cv;
mod locomo_http;
mod memory;
mod procedures;
mod profile;
mod proxy;
mod scale;
mod selection;
mod setup;
mod soak;
mod tokenizer_check;
mod vectors;
mod wakeup;
mod webhooks;

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
    /// Local embedding throughput, beside sentence-transformers when given its Python.
    Embed(embed::Options),
    /// Document ingestion end to end: Markdown files to stored, indexed chunks.
    Documents(documents::Options),
    /// Evidence recall on the LoCoMo dev split, in keyword, vector and hybrid modes.
    Locomo(locomo_bench::Options),
    /// Evidence recall on BEAM's user–assistant chats, by ability; `--select` chooses recall's methods by k-fold over BEAM and LoCoMo.
    Beam(beam_bench::Options),
    /// What learning facts during sessions adds, in model calls and tokens, on the LoCoMo conversations.
    Learning(learning::Options),
    /// Context assembly latency with 100k knowledge chunks and 10k episodes in store.
    Context(context::Options),
    /// A user's profile with a thousand facts: read through the engine and over HTTP.
    Profile(profile::Options),
    /// Procedure matching: precision and recall on the labelled set, and speed at 10k procedures.
    Procedures(procedures::Options),
    /// Vector search: exact and HNSW at 100k real and 1M synthetic embeddings.
    Vectors(vectors::Options),
    /// Resident memory of `octopus serve` before, during and after embedding a burst of imports.
    Memory(memory::Options),
    /// How soon an idle worker takes up work another server queued on PostgreSQL.
    Wakeup(wakeup::Options),
    /// What the OpenAI-compatible endpoint adds to a model call, whole and to the first streamed token.
    Proxy(proxy::Options),
    /// A million messages on one server: filled, then recall, context and append latency at 1, 8 and 32 clients.
    Scale(scale::Options),
    /// Ten minutes of mixed load from wrk on the real binary, with a kill -9 halfway: memory, latency, the queue, nothing lost.
    Soak(soak::Options),
    /// What webhooks add to appends and closes, and how soon a delivery arrives.
    Webhooks(webhooks::Options),
    /// Whether one tenant slows another: a reader held open during a forget, silent webhook endpoints, long histories.
    Fairness(fairness::Options),
    /// One embedding measurement (run by `embed` in a child process).
    #[command(hide = true)]
    EmbedWorker(embed::WorkerOptions),
}

fn main() -> anyhow::Result<()> {
    octopus_embed::http::install_tls_provider();
    match Cli::parse().bench {
        Bench::Ingest(options) => ingest::run(options),
        Bench::Embed(options) => embed::run(options),
        Bench::Vectors(options) => vectors::run(options),
        Bench::Proxy(options) => proxy::run(options),
        Bench::Learning(options) => learning::run(options),
        Bench::Soak(options) => soak::run(options),
        Bench::Scale(options) => scale::run(options),
        Bench::Context(options) => context::run(options),
        Bench::Documents(options) => documents::run(options),
        Bench::Locomo(options) => locomo_bench::run(options),
        Bench::Beam(options) => beam_bench::run(options),
        Bench::Procedures(options) => procedures::run(options),
        Bench::Profile(options) => profile::run(options),
        Bench::Memory(options) => memory::run(options),
        Bench::Wakeup(options) => wakeup::run(options),
        Bench::Webhooks(options) => webhooks::run(options),
        Bench::Fairness(options) => fairness::run(options),
        Bench::EmbedWorker(options) => embed::run_worker(options),
    }
}
