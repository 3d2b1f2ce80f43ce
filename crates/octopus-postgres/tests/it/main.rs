//! The PostgreSQL store against the storage contract, on a real server
//! (`octopus_postgres::testing`). Each test gets databases of its own.

#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

use std::sync::Arc;

use async_trait::async_trait;
use octopus_core::store::Store;
use octopus_postgres::{PostgresOptions, PostgresStore, testing};
use octopus_testkit::{Backend, store_conformance_tests};

mod postgres_specific;

/// A fresh database on the test server, created at first open.
#[derive(Default)]
pub struct TempPostgres {
    url: tokio::sync::OnceCell<String>,
}

impl TempPostgres {
    pub async fn url(&self) -> &str {
        self.url.get_or_init(testing::fresh_database).await
    }

    pub async fn store(&self) -> PostgresStore {
        PostgresStore::connect(PostgresOptions::new(self.url().await))
            .await
            .unwrap()
    }
}

#[async_trait]
impl Backend for TempPostgres {
    async fn open(&self) -> Arc<dyn Store> {
        Arc::new(self.store().await)
    }

    async fn open_empty(&self) -> Arc<dyn Store> {
        Arc::new(TempPostgres::default().store().await)
    }
}

store_conformance_tests!(TempPostgres::default());
