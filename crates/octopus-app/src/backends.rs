//! The backends the settings name, built in one place.

use std::sync::Arc;

use octopus_core::store::Store;
use octopus_core::vectors::VectorIndex;
use octopus_sqlite::{SqliteOptions, SqliteStore};
use octopus_vector::EmbeddedVectors;

use crate::settings::{StorageBackend, StorageSettings, VectorBackend, VectorSettings};
use crate::{Error, Result};

/// Opens the store `storage` names, applying its migrations. Blocks: with
/// PostgreSQL or Qdrant, call it from a blocking thread of a tokio runtime
/// (as `tokio::task::spawn_blocking` gives).
pub(crate) fn open_store(
    storage: &StorageSettings,
    vectors: &VectorSettings,
) -> Result<Arc<dyn Store>> {
    match storage.backend {
        StorageBackend::Sqlite => open_sqlite(storage, vectors),
        StorageBackend::Postgres => {
            let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
                Error::Config("PostgreSQL storage is opened from within a tokio runtime".into())
            })?;
            runtime.block_on(connect_postgres(storage, vectors))
        }
    }
}

/// [`open_store`] for async callers: SQLite's blocking open runs on a
/// blocking thread.
pub(crate) async fn connect_store(
    storage: &StorageSettings,
    vectors: &VectorSettings,
) -> Result<Arc<dyn Store>> {
    match storage.backend {
        StorageBackend::Sqlite => {
            let (storage, vectors) = (storage.clone(), vectors.clone());
            tokio::task::spawn_blocking(move || open_sqlite(&storage, &vectors))
                .await
                .map_err(|e| Error::OpenStore(Box::new(e)))?
        }
        StorageBackend::Postgres => connect_postgres(storage, vectors).await,
    }
}

/// The vector backend `vectors` names, else the storage backend's own.
fn vector_backend(storage: &StorageSettings, vectors: &VectorSettings) -> VectorBackend {
    vectors.backend.unwrap_or(match storage.backend {
        StorageBackend::Sqlite => VectorBackend::Embedded,
        StorageBackend::Postgres => VectorBackend::Pgvector,
    })
}

/// Vectors searched in this process, derived from the database's rows; the
/// graphs are saved under the data directory.
fn embedded_vectors(storage: &StorageSettings, vectors: &VectorSettings) -> Arc<dyn VectorIndex> {
    Arc::new(EmbeddedVectors::new(
        storage.data_dir.join("vectors"),
        vectors.embedded.hnsw_threshold,
    ))
}

fn open_sqlite(storage: &StorageSettings, vectors: &VectorSettings) -> Result<Arc<dyn Store>> {
    let index = match vector_backend(storage, vectors) {
        VectorBackend::Embedded => embedded_vectors(storage, vectors),
        VectorBackend::Pgvector => {
            return Err(Error::Config(
                "[vectors] backend = \"pgvector\" needs [storage] backend = \"postgres\"".into(),
            ));
        }
        VectorBackend::Qdrant => {
            let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
                Error::Config("Qdrant is connected to from within a tokio runtime".into())
            })?;
            runtime.block_on(connect_qdrant(vectors))?
        }
    };
    let mut options = SqliteOptions::new(&storage.data_dir);
    options.durability = storage.sqlite.durability;
    let store = SqliteStore::open(options, index).map_err(|e| Error::OpenStore(Box::new(e)))?;
    Ok(Arc::new(store))
}

#[cfg(feature = "postgres")]
async fn connect_postgres(
    storage: &StorageSettings,
    vectors: &VectorSettings,
) -> Result<Arc<dyn Store>> {
    use octopus_postgres::{PostgresOptions, PostgresStore};

    let settings = &storage.postgres;
    if settings.url.is_empty() {
        return Err(Error::Config(
            "[storage] backend = \"postgres\" needs a database URL: set OCTOPUS_DATABASE_URL or [storage.postgres] url".into(),
        ));
    }
    let mut options = PostgresOptions::new(&settings.url);
    options.max_connections = settings.max_connections.max(1);
    options.acquire_timeout = std::time::Duration::from_secs(settings.connect_timeout_secs.max(1));
    let store = match vector_backend(storage, vectors) {
        VectorBackend::Pgvector => PostgresStore::connect(options).await,
        // Each server derives its own index from the database's rows.
        VectorBackend::Embedded => {
            PostgresStore::connect_with_vectors(options, embedded_vectors(storage, vectors)).await
        }
        VectorBackend::Qdrant => {
            PostgresStore::connect_with_vectors(options, connect_qdrant(vectors).await?).await
        }
    }
    .map_err(|e| Error::OpenStore(Box::new(e)))?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "postgres"))]
async fn connect_postgres(_: &StorageSettings, _: &VectorSettings) -> Result<Arc<dyn Store>> {
    Err(Error::Config(
        "this build of Octopus has no PostgreSQL backend: build it with the `postgres` feature"
            .into(),
    ))
}

/// Connects to the Qdrant server `[vectors.qdrant]` names; refuses to go on
/// when it does not answer or runs an unsupported version.
#[cfg(feature = "qdrant")]
async fn connect_qdrant(vectors: &VectorSettings) -> Result<Arc<dyn VectorIndex>> {
    use crate::settings::QdrantLayout;
    use octopus_qdrant::{QdrantOptions, QdrantVectors};

    let settings = &vectors.qdrant;
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
        QdrantLayout::Shared => octopus_qdrant::QdrantLayout::Shared,
        QdrantLayout::PerSet => octopus_qdrant::QdrantLayout::PerSet,
    };
    options.prefix = settings.collection_prefix.clone();
    let vectors = QdrantVectors::connect(&options)
        .await
        .map_err(|e| Error::Config(format!("cannot use Qdrant: {e}")))?;
    Ok(Arc::new(vectors))
}

#[cfg(not(feature = "qdrant"))]
async fn connect_qdrant(_: &VectorSettings) -> Result<Arc<dyn VectorIndex>> {
    Err(Error::Config(
        "this build of Octopus has no Qdrant backend: build it with the `qdrant` feature".into(),
    ))
}
