//! The SQLite store against the storage contract, plus SQLite-specific checks.

#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use octopus_core::store::Store;
use octopus_core::vectors::VectorIndex;
use octopus_sqlite::{SqliteOptions, SqliteStore};
use octopus_testkit::{Backend, WrapVectors, store_conformance_tests};
use octopus_vector::{DEFAULT_HNSW_THRESHOLD, EmbeddedVectors};

mod graph_index;
mod sqlite_specific;

/// A store in a fresh temporary data directory.
pub struct TempSqlite {
    pub dir: tempfile::TempDir,
    /// The directories of the empty stores opened beside it, kept while it lives.
    others: std::sync::Mutex<Vec<tempfile::TempDir>>,
}

impl Default for TempSqlite {
    fn default() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            others: std::sync::Mutex::default(),
        }
    }
}

#[async_trait]
impl Backend for TempSqlite {
    async fn open(&self) -> Arc<dyn Store> {
        Arc::new(open(self.dir.path(), DEFAULT_HNSW_THRESHOLD))
    }

    async fn open_empty(&self) -> Arc<dyn Store> {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), DEFAULT_HNSW_THRESHOLD);
        self.others.lock().unwrap().push(dir);
        Arc::new(store)
    }

    async fn open_wrapping(&self, wrap: WrapVectors) -> Arc<dyn Store> {
        let vectors = embedded_vectors(self.dir.path(), DEFAULT_HNSW_THRESHOLD);
        Arc::new(SqliteStore::open(SqliteOptions::new(self.dir.path()), wrap(vectors)).unwrap())
    }
}

store_conformance_tests!(TempSqlite::default());

/// Vectors searched in this process, their graphs under `dir`, as a server
/// on SQLite keeps them.
fn embedded_vectors(dir: &Path, hnsw_threshold: usize) -> Arc<dyn VectorIndex> {
    Arc::new(EmbeddedVectors::new(dir.join("vectors"), hnsw_threshold))
}

/// The store in `dir`, with embedded vectors.
pub fn open(dir: &Path, hnsw_threshold: usize) -> SqliteStore {
    SqliteStore::open(
        SqliteOptions::new(dir),
        embedded_vectors(dir, hnsw_threshold),
    )
    .unwrap()
}
