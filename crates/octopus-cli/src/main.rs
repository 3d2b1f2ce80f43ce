//! The `octopus` binary: serves the API, migrates the data directory, and drives
//! a running server from the terminal. `anyhow` lives here and nowhere else.

mod cli;
mod client;
mod commands;
mod config;
mod serve;

use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = cli::Cli::parse();
    let outcome = match cli.command {
        cli::Command::Serve(args) => serve::serve(args).await,
        cli::Command::Migrate(args) => serve::migrate(args).await,
        other => commands::run(other).await,
    };
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
