//! `octopus serve` and `octopus migrate`.

use std::io::IsTerminal;

use anyhow::Context;
use octopus_engine::Octopus;

use crate::cli::ServerArgs;
use crate::config::{Config, Overrides};
use octopus_app::DataDirLock;
use octopus_app::settings::StorageBackend;

pub fn load(args: &ServerArgs) -> anyhow::Result<Config> {
    let overrides = Overrides {
        admin_key: args.admin_key.clone(),
        listen: args.listen.clone(),
        data_dir: args.data_dir.clone(),
        database_url: args.database_url.clone(),
        qdrant_url: args.qdrant_url.clone(),
        durability: args.durability.map(Into::into),
        log: args.log.clone(),
    };
    Config::load(args.config.as_deref(), overrides)
}

pub fn init_logging(filter: &str) {
    // The MCP library logs every error a tool answers with as a warning;
    // those are the callers' mistakes, answered to them, not the server's.
    let filter = if filter.contains("rmcp") {
        filter.to_owned()
    } else {
        format!("{filter},rmcp=error")
    };
    let filter = tracing_subscriber::EnvFilter::try_new(&filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour codes only where a person reads them, not in a log file.
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

/// The data opened by this process: the engine, and the data directory
/// held while it lives (one process at a time).
pub struct Opened {
    pub octopus: Octopus,
    _data_dir: Option<DataDirLock>,
}

pub async fn open(config: &Config) -> anyhow::Result<Opened> {
    let app = config.app();
    // Taken before anything in the directory is opened or migrated.
    let data_dir = DataDirLock::for_config(&app)?;
    let octopus =
        octopus_app::connect(&app)
            .await
            .with_context(|| match config.storage.backend {
                StorageBackend::Sqlite => format!(
                    "open the data directory {}",
                    config.storage.data_dir.display()
                ),
                StorageBackend::Postgres => "open the PostgreSQL database".to_owned(),
            })?;
    Ok(Opened {
        octopus,
        _data_dir: data_dir,
    })
}

pub async fn serve(args: ServerArgs) -> anyhow::Result<()> {
    let config = load(&args)?;
    init_logging(&config.log.filter);
    // The port first: a server that cannot listen must not create or migrate
    // a data directory on its way to failing.
    let listener = tokio::net::TcpListener::bind(&config.server.listen)
        .await
        .with_context(|| format!("listen on {}", config.server.listen))?;
    let address = listener.local_addr()?;
    let opened = open(&config).await?;
    let octopus = &opened.octopus;
    let generated = octopus
        .ensure_admin_key(config.admin_key.as_deref())
        .await?;
    // Tests and scripts read this line to find a port chosen with :0.
    println!("Octopus listening on http://{address}");
    println!("The console: http://{address}/console");
    tracing::info!(%address, data_dir = %config.storage.data_dir.display(), "serving");
    start_workers(octopus, &config);
    if let Some(secret) = generated {
        // Printed once, last, where it is seen: only its hash is kept.
        println!(
            "\nNo admin key was set, so Octopus made one. It is shown only this once: keep it.\n\
             \n    export OCTOPUS_ADMIN_KEY={secret}\n\
             \nTo choose the key yourself, start the server with OCTOPUS_ADMIN_KEY set; it then\n\
             replaces this one.\n"
        );
    }
    octopus_server::serve(listener, octopus.clone(), &config.server, shutdown_signal())
        .await
        .context("serve HTTP")?;
    tracing::info!("stopped");
    Ok(())
}

/// The background work of a process that holds the data: the memory
/// worker and the webhook dispatcher (unless this server leaves the queue
/// to others) and the idle and retention sweeps.
pub fn start_workers(octopus: &Octopus, config: &Config) {
    if config.worker.memory_worker {
        octopus.start_memory_worker();
        octopus.start_webhook_dispatcher();
    } else {
        if config.storage.backend == StorageBackend::Sqlite {
            tracing::warn!(
                "[worker] memory_worker is off on SQLite: no other server shares this data, so nothing will be embedded or summarised"
            );
        }
        tracing::info!(
            "memory worker off ([worker] memory_worker); other servers do the queue's work"
        );
    }
    octopus.start_idle_sweeper(std::time::Duration::from_secs(
        config.worker.idle_sweep_secs.max(1),
    ));
    octopus.start_retention_sweeper(std::time::Duration::from_secs(
        config.worker.retention_sweep_secs.max(1),
    ));
}

pub async fn migrate(args: ServerArgs) -> anyhow::Result<()> {
    let config = load(&args)?;
    init_logging(&config.log.filter);
    open(&config).await?;
    println!(
        "The schema in {} is up to date.",
        config.storage.data_dir.display()
    );
    Ok(())
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(_) => return interrupt.await.unwrap_or(()),
            };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    interrupt.await.unwrap_or(());
}
