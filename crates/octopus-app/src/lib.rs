//! The composition root of Octopus: reads which backends and adapters the
//! configuration names, builds them, and hands them to the engine as its
//! ports (`octopus_engine::Ports`).
//!
//! The engine knows the ports (`octopus_core::store::Store`,
//! `octopus_core::vectors::VectorIndex`, `octopus_core::embedding::EmbedderSource`,
//! `octopus_core::chat::ChatModels`, `octopus_core::webhook_sender::WebhookSender`)
//! and nothing of their adapters; this is the one crate that knows both.
//! The stores are built in `backends`, the rest in `adapters`. A new
//! storage backend is a variant in [`settings`], a crate behind a cargo
//! feature, and an arm in `backends`; it must pass
//! `octopus_testkit::store_conformance_tests!`.

#![forbid(unsafe_code)]

mod adapters;
mod backends;
pub mod data_dir;
pub mod settings;

use std::sync::Arc;

use octopus_core::store::Store;
use octopus_engine::{EngineConfig, Octopus, Ports};

pub use data_dir::DataDirLock;
pub use settings::{StorageSettings, VectorSettings};

/// What a process runs with: its backends, and the engine's own settings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AppConfig {
    pub storage: StorageSettings,
    pub vectors: VectorSettings,
    pub engine: EngineConfig,
}

impl AppConfig {
    /// The embedded default (SQLite and vectors in this process) in
    /// `data_dir`, with `engine`'s settings.
    pub fn in_dir(data_dir: impl Into<std::path::PathBuf>, engine: EngineConfig) -> Self {
        Self {
            storage: StorageSettings {
                data_dir: data_dir.into(),
                ..StorageSettings::default()
            },
            vectors: VectorSettings::default(),
            engine,
        }
    }
}

/// Why the backends or the engine could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration cannot work.
    #[error("configuration: {0}")]
    Config(String),

    #[error("open the store: {0}")]
    OpenStore(Box<dyn std::error::Error + Send + Sync>),

    /// Another process holds the data directory ([`DataDirLock`]).
    #[error("{} is in use by another Octopus process{}: one process holds a data directory at a time; stop it, or reach it through its server (octopus mcp --url, or the client commands)", dir.display(), pid.map(|pid| format!(" (pid {pid})")).unwrap_or_default())]
    DataDirInUse {
        dir: std::path::PathBuf,
        pid: Option<u32>,
    },

    #[error(transparent)]
    Engine(#[from] octopus_engine::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Opens the backends `config` names and the engine over them. Blocks while
/// migrations run; with PostgreSQL or Qdrant, call it from a blocking thread
/// of a tokio runtime (or use [`connect`]).
pub fn open(config: &AppConfig) -> Result<Octopus> {
    open_wrapping(config, |store| store)
}

/// [`open`], with the store passed through `wrap` before the engine gets
/// it: a decorator that traces, counts or checks the engine's calls.
pub fn open_wrapping(
    config: &AppConfig,
    wrap: impl FnOnce(Arc<dyn Store>) -> Arc<dyn Store>,
) -> Result<Octopus> {
    check(config)?;
    let store = backends::open_store(&config.storage, &config.vectors)?;
    engine(config, wrap(store))
}

/// Refuses settings that cannot work, before any backend is touched.
pub fn check(config: &AppConfig) -> Result<()> {
    octopus_engine::check_config(&config.engine)?;
    adapters::check(&config.engine)
}

/// The engine over `store`, with the adapters `config` names.
fn engine(config: &AppConfig, store: Arc<dyn Store>) -> Result<Octopus> {
    let engine = &config.engine;
    let ports = Ports {
        store,
        embedder: adapters::embedder(engine)?,
        chat_models: adapters::chat_models(engine),
        webhooks: adapters::webhook_sender(engine),
    };
    Ok(Octopus::new(engine, ports)?)
}

/// [`open`] for async callers; what a crash left of forgetting a user is
/// finished before it returns, so a server serves only whole erasures.
pub async fn connect(config: &AppConfig) -> Result<Octopus> {
    check(config)?;
    let store = backends::connect_store(&config.storage, &config.vectors).await?;
    store
        .finish_erasures()
        .await
        .map_err(octopus_engine::Error::from)?;
    engine(config, store)
}
