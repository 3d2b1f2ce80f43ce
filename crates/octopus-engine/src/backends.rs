//! The backends the configuration names, built in one place. A new storage
//! or vector backend is a variant of `StorageBackend` or `VectorBackend`, a
//! crate behind a cargo feature, and an arm here; it must pass
//! `octopus_testkit::store_conformance_tests!`.

use std::sync::Arc;

use octopus_core::store::Store;
use octopus_core::vectors::VectorIndex;
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
    let vectors: Option<Arc<dyn VectorIndex>> = match vector_backend(config) {
        VectorBackend::Embedded => None,
        VectorBackend::Pgvector => {
            return Err(Error::Config(
                "[vectors] backend = \"pgvector\" needs [storage] backend = \"postgres\"".into(),
            ));
        }
        VectorBackend::Qdrant => {
            let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
                Error::Config("Qdrant is connected to from within a tokio runtime".into())
            })?;
            Some(runtime.block_on(connect_qdrant(config))?)
        }
    };
    let mut options = SqliteOptions::new(&config.data_dir);
    options.durability = match config.storage.sqlite.durability {
        DurabilityLevel::Process => Durability::Process,
        DurabilityLevel::PowerLoss => Durability::PowerLoss,
    };
    options.hnsw_threshold = config.vectors.embedded.hnsw_threshold;
    let store = match vectors {
        Some(vectors) => SqliteStore::open_with_vectors(options, vectors),
        None => SqliteStore::open(options),
    }
    .map_err(|e| Error::OpenStore(Box::new(e)))?;
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
        VectorBackend::Qdrant => VectorMode::Other(connect_qdrant(config).await?),
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

/// Connects to the Qdrant server `[vectors.qdrant]` names; refuses to go on
/// when it does not answer or runs an unsupported version.
#[cfg(feature = "qdrant")]
async fn connect_qdrant(config: &EngineConfig) -> Result<Arc<dyn VectorIndex>> {
    use crate::config::QdrantLayout;
    use octopus_qdrant::{Layout, QdrantOptions, QdrantVectors};

    let settings = &config.vectors.qdrant;
    if settings.url.is_empty() {
        return Err(Error::Config(
            "[vectors] backend = \"qdrant\" needs Qdrant's gRPC URL: set OCTOPUS_QDRANT_URL or [vectors.qdrant] url".into(),
        ));
    }
    if !(settings.url.starts_with("http://") || settings.url.starts_with("https://")) {
        return Err(Error::Config(format!(
            "[vectors.qdrant] url {:?} must start with http:// or https:// (Qdrant's gRPC URL, such as http://127.0.0.1:6334)",
            settings.url
        )));
    }
    let mut options = QdrantOptions::new(&settings.url);
    if let Some(variable) = &settings.api_key_env {
        let key = std::env::var(variable).map_err(|_| {
            Error::Config(format!(
                "[vectors.qdrant] api_key_env names {variable}, which is not set"
            ))
        })?;
        options.api_key = Some(key);
    }
    options.timeout = std::time::Duration::from_secs(settings.timeout_secs.max(1));
    options.connect_timeout = std::time::Duration::from_secs(settings.connect_timeout_secs.max(1));
    options.layout = match settings.layout {
        QdrantLayout::Shared => Layout::Shared,
        QdrantLayout::PerSet => Layout::PerSet,
    };
    options.prefix = settings.collection_prefix.clone();
    let vectors = QdrantVectors::connect(&options)
        .await
        .map_err(|e| Error::Config(format!("cannot use Qdrant: {e}")))?;
    Ok(Arc::new(vectors))
}

#[cfg(not(feature = "qdrant"))]
async fn connect_qdrant(_: &EngineConfig) -> Result<Arc<dyn VectorIndex>> {
    Err(Error::Config(
        "this build of Octopus has no Qdrant backend: build it with the `qdrant` feature".into(),
    ))
}
