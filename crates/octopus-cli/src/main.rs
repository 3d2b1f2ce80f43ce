//! The `octopus` binary: serves the API, migrates the data directory, and drives
//! a running server from the terminal. `anyhow` lives here and nowhere else.

#![forbid(unsafe_code)]

mod chat;
mod chat_imports;
mod cli;
mod commands;
mod config;
mod dumps;
mod ingest;
mod mcp;
mod output;
mod serve;
mod start;
mod table;

use clap::Parser;

fn main() -> std::process::ExitCode {
    octopus_engine::free_memory::limit_arenas();
    octopus_embed::http::install_tls_provider();
    let cli = cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // A backstop: the database and the embedding model bound their own
        // blocking work, and each idle blocking thread keeps a malloc arena.
        .max_blocking_threads(64)
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: start the async runtime: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(cli))
}

async fn run(cli: cli::Cli) -> std::process::ExitCode {
    let outcome = match cli.command {
        cli::Command::Serve(args) => serve::serve(args).await,
        cli::Command::Migrate(args) => serve::migrate(args).await,
        cli::Command::Chat(args) => chat::chat(args).await,
        cli::Command::Mcp(args) => mcp::run(args).await,
        other => commands::run(other, cli.output).await,
    };
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
