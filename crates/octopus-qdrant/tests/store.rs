//! The SQLite store with its vectors on Qdrant, against the whole storage
//! contract: knowledge and memory search, erasure, dumps, isolation, all
//! through the store as a server uses it.

#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

use std::sync::Arc;

use async_trait::async_trait;
use octopus_core::store::Store;
use octopus_qdrant::{QdrantLayout, QdrantOptions, QdrantVectors, testing};
use octopus_sqlite::{SqliteOptions, SqliteStore};
use octopus_testkit::{Backend, WrapVectors, store_conformance_tests};

/// A SQLite store in a fresh directory, its vectors under a fresh prefix.
struct SqliteOnQdrant {
    dir: tempfile::TempDir,
    options: QdrantOptions,
    others: std::sync::Mutex<Vec<tempfile::TempDir>>,
}

impl SqliteOnQdrant {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            options: testing::fresh_options(QdrantLayout::Shared),
            others: std::sync::Mutex::default(),
        }
    }
}

async fn open(dir: &std::path::Path, options: &QdrantOptions) -> Arc<dyn Store> {
    let vectors = Arc::new(QdrantVectors::connect(options).await.unwrap());
    Arc::new(SqliteStore::open(SqliteOptions::new(dir), vectors).unwrap())
}

#[async_trait]
impl Backend for SqliteOnQdrant {
    async fn open(&self) -> Arc<dyn Store> {
        open(self.dir.path(), &self.options).await
    }

    async fn open_empty(&self) -> Arc<dyn Store> {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), &testing::fresh_options(QdrantLayout::Shared)).await;
        self.others.lock().unwrap().push(dir);
        store
    }

    async fn open_wrapping(&self, wrap: WrapVectors) -> Arc<dyn Store> {
        let vectors = Arc::new(QdrantVectors::connect(&self.options).await.unwrap());
        Arc::new(SqliteStore::open(SqliteOptions::new(self.dir.path()), wrap(vectors)).unwrap())
    }
}

store_conformance_tests!(SqliteOnQdrant::new());
