//! The SQLite store against the storage contract, plus SQLite-specific checks.

#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

use std::sync::Arc;

use async_trait::async_trait;
use octopus_core::store::Store;
use octopus_sqlite::{SqliteOptions, SqliteStore};
use octopus_testkit::{Backend, WrapVectors, store_conformance_tests};

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
        Arc::new(SqliteStore::open(SqliteOptions::new(self.dir.path())).unwrap())
    }

    async fn open_empty(&self) -> Arc<dyn Store> {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(SqliteOptions::new(dir.path())).unwrap();
        self.others.lock().unwrap().push(dir);
        Arc::new(store)
    }

    async fn open_wrapping(&self, wrap: WrapVectors) -> Arc<dyn Store> {
        let options = SqliteOptions::new(self.dir.path());
        let vectors = Arc::new(octopus_vector::EmbeddedVectors::new(
            self.dir.path().join("vectors"),
            options.hnsw_threshold,
        ));
        Arc::new(SqliteStore::open_with_vectors(options, wrap(vectors)).unwrap())
    }
}

store_conformance_tests!(TempSqlite::default());
