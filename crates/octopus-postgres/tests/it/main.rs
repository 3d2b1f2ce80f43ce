//! The PostgreSQL store against the storage contract, on a real server
//! (`octopus_postgres::testing`), with vectors searched by pgvector and by
//! an index in the process derived from the rows; and pgvector by itself
//! against the vector port's contract. Each test gets databases of its own.

#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

use std::sync::Arc;

use async_trait::async_trait;
use octopus_core::store::Store;
use octopus_postgres::{PostgresOptions, PostgresStore, testing};
use octopus_testkit::{Backend, WrapVectors};

mod pgvector_on_this_cpu;
mod postgres_specific;

/// A fresh database on the test server, created at first open, and where an
/// embedded index saves its graphs.
pub struct TempPostgres {
    url: tokio::sync::OnceCell<String>,
    embedded: bool,
    dir: tempfile::TempDir,
}

impl TempPostgres {
    pub fn pgvector() -> Self {
        Self::new(false)
    }

    pub fn embedded() -> Self {
        Self::new(true)
    }

    fn new(embedded: bool) -> Self {
        Self {
            url: tokio::sync::OnceCell::new(),
            embedded,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub async fn url(&self) -> &str {
        self.url.get_or_init(testing::fresh_database).await
    }

    pub async fn store(&self) -> PostgresStore {
        let options = PostgresOptions::new(self.url().await);
        if self.embedded {
            PostgresStore::connect_with_vectors(options, self.embedded_vectors())
                .await
                .unwrap()
        } else {
            PostgresStore::connect(options).await.unwrap()
        }
    }

    /// Vectors searched in this process, derived from the rows.
    fn embedded_vectors(&self) -> Arc<dyn octopus_core::vectors::VectorIndex> {
        Arc::new(octopus_vector::EmbeddedVectors::new(
            self.dir.path().join("vectors"),
            octopus_vector::DEFAULT_HNSW_THRESHOLD,
        ))
    }
}

#[async_trait]
impl Backend for TempPostgres {
    async fn open(&self) -> Arc<dyn Store> {
        Arc::new(self.store().await)
    }

    async fn open_empty(&self) -> Arc<dyn Store> {
        Arc::new(TempPostgres::new(self.embedded).store().await)
    }

    async fn open_wrapping(&self, wrap: WrapVectors) -> Arc<dyn Store> {
        let options = PostgresOptions::new(self.url().await);
        let inner: Arc<dyn octopus_core::vectors::VectorIndex> = if self.embedded {
            self.embedded_vectors()
        } else {
            Arc::new(
                octopus_postgres::PgvectorIndex::connect(&options)
                    .await
                    .unwrap(),
            )
        };
        Arc::new(
            PostgresStore::connect_with_vectors(options, wrap(inner))
                .await
                .unwrap(),
        )
    }
}

mod pgvector {
    use super::TempPostgres;
    octopus_testkit::store_conformance_tests!(TempPostgres::pgvector());
}

mod embedded {
    use super::TempPostgres;
    octopus_testkit::store_conformance_tests!(TempPostgres::embedded());
}

/// pgvector by itself, on a fresh database; each `open` is another server
/// on it.
struct PgvectorOnly {
    url: tokio::sync::OnceCell<String>,
}

#[async_trait]
impl octopus_testkit::vectors::VectorBackend for PgvectorOnly {
    async fn open(&self) -> Arc<dyn octopus_core::vectors::VectorIndex> {
        let url = self.url.get_or_init(testing::fresh_database).await;
        let options = PostgresOptions::new(url.as_str());
        Arc::new(
            octopus_postgres::PgvectorIndex::connect(&options)
                .await
                .unwrap(),
        )
    }
}

mod pgvector_index {
    use super::PgvectorOnly;
    octopus_testkit::vector_conformance_tests!(PgvectorOnly {
        url: tokio::sync::OnceCell::new()
    });
}
