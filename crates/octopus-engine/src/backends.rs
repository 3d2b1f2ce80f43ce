//! The backends the configuration names, built in one place. A new storage
//! or vector backend is a variant of `StorageBackend` or `VectorBackend`, a
//! crate behind a cargo feature, and an arm here; it must pass
//! `octopus_testkit::store_conformance_tests!`.

use std::sync::Arc;

use octopus_core::store::Store;
use octopus_sqlite::{Durability, SqliteOptions, SqliteStore};

use crate::config::{DurabilityLevel, EngineConfig, StorageBackend, VectorBackend};
use crate::{Error, Result};

/// Opens the store `config` names, applying its migrations. Blocks: with
/// PostgreSQL, call it from a blocking thread of a tokio runtime (as
/// `tokio::task::spawn_blocking` gives).
pub(crate) fn open_store(config: &EngineConfig) -> Result<Arc<dyn Store>> {
    match config.storage.backend {
        StorageBackend::Sqlite => open_sqlite(config),
        StorageBackend::Postgres => {
            let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
                Error::Config("PostgreSQL storage is opened from within a tokio runtime".into())
            })?;
            runtime.block_on(connect_postgres(config))
        }
    }
}

/// [`open_store`] for async callers: SQLite's blocking open runs on a
/// blocking thread.
pub(crate) async fn connect_store(config: &EngineConfig) -> Result<Arc<dyn Store>> {
    match config.storage.backend {
        StorageBackend::Sqlite => {
            let config = config.clone();
            tokio::task::spawn_blocking(move || open_sqlite(&config))
                .await
                .map_err(|e| Error::OpenStore(Box::new(e)))?
        }
        StorageBackend::Postgres => connect_postgres(config).await,
    }
}

fn vector_backend(config: &EngineConfig) -> VectorBackend {
    config
        .vectors
        .backend
        .unwrap_or(match config.storage.backend {
            StorageBackend::Sqlite => VectorBackend::Embedded,
            StorageBackend::Postgres => VectorBackend::Pgvector,
        })
}

fn open_sqlite(config: &EngineConfig) -> Result<Arc<dyn Store>> {
    if vector_backend(config) != VectorBackend::Embedded {
        return Err(Error::Config(
            "[vectors] backend = \"pgvector\" needs [storage] backend = \"postgres\"".into(),
        ));
    }
    let mut options = SqliteOptions::new(&config.data_dir);
    options.durability = match config.storage.sqlite.durability {
        DurabilityLevel::Process => Durability::Process,
        DurabilityLevel::PowerLoss => Durability::PowerLoss,
    };
    options.hnsw_threshold = config.vectors.embedded.hnsw_threshold;
    let store = SqliteStore::open(options).map_err(|e| Error::OpenStore(Box::new(e)))?;
    Ok(Arc::new(store))
}

#[cfg(feature = "postgres")]
async fn connect_postgres(config: &EngineConfig) -> Result<Arc<dyn Store>> {
    use octopus_postgres::{PostgresOptions, PostgresStore, VectorMode};

    let settings = &config.storage.postgres;
    if settings.url.is_empty() {
        return Err(Error::Config(
            "[storage] backend = \"postgres\" needs a database URL: set OCTOPUS_DATABASE_URL or [storage.postgres] url".into(),
        ));
    }
    let mut options = PostgresOptions::new(&settings.url);
    options.max_connections = settings.max_connections.max(1);
    options.acquire_timeout = std::time::Duration::from_secs(settings.connect_timeout_secs.max(1));
    options.vectors = match vector_backend(config) {
        VectorBackend::Pgvector => VectorMode::Pgvector,
        // Each server derives its own index from the database's rows.
        VectorBackend::Embedded => VectorMode::Embedded {
            dir: config.data_dir.join("vectors"),
            hnsw_threshold: config.vectors.embedded.hnsw_threshold,
        },
    };
    let store = PostgresStore::connect(options)
        .await
        .map_err(|e| Error::OpenStore(Box::new(e)))?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "postgres"))]
async fn connect_postgres(_: &EngineConfig) -> Result<Arc<dyn Store>> {
    Err(Error::Config(
        "this build of Octopus has no PostgreSQL backend: build it with the `postgres` feature"
            .into(),
    ))
}
