//! The PostgreSQL store against the storage contract, on a real server:
//! `OCTOPUS_TEST_DATABASE_URL` names one (`scripts/test.sh` starts a
//! throwaway cluster with `scripts/postgres.sh` and sets it). Each test gets
//! databases of its own.

#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

use std::sync::Arc;

use async_trait::async_trait;
use octopus_core::store::Store;
use octopus_postgres::{PostgresOptions, PostgresStore};
use octopus_testkit::{Backend, store_conformance_tests};
use sqlx_core::executor::Executor;

mod postgres_specific;

/// A fresh database on the test server, created at first open.
pub struct TempPostgres {
    url: String,
    created: tokio::sync::Mutex<bool>,
}

impl Default for TempPostgres {
    fn default() -> Self {
        Self {
            url: fresh_database(),
            created: tokio::sync::Mutex::new(false),
        }
    }
}

/// The server's URL, or a panic that says how to get one. Without
/// `OCTOPUS_TEST_DATABASE_URL`, `None`: the suite says it did not run.
pub fn server_url() -> Option<String> {
    std::env::var("OCTOPUS_TEST_DATABASE_URL")
        .ok()
        .filter(|u| !u.is_empty())
}

/// The URL of a database no other test uses (not yet created).
fn fresh_database() -> String {
    let base = server_url().expect(
        "OCTOPUS_TEST_DATABASE_URL is not set: run `scripts/test.sh`, or start a server with \
         `scripts/postgres.sh start` and export OCTOPUS_TEST_DATABASE_URL=$(scripts/postgres.sh url)",
    );
    let (server, _) = base.rsplit_once('/').unwrap();
    format!("{server}/octopus_test_{}", uuid::Uuid::now_v7().simple())
}

/// Creates the database `url` names, connecting to the server's `postgres`
/// database to do it.
pub async fn create_database(url: &str) {
    let (server, name) = url.rsplit_once('/').unwrap();
    let mut admin = <sqlx_postgres::PgConnection as sqlx_core::connection::Connection>::connect(
        &format!("{server}/postgres"),
    )
    .await
    .unwrap();
    admin
        .execute(format!("CREATE DATABASE {name}").as_str())
        .await
        .unwrap();
}

impl TempPostgres {
    pub fn url(&self) -> &str {
        &self.url
    }

    pub async fn store(&self) -> PostgresStore {
        let mut created = self.created.lock().await;
        if !*created {
            create_database(&self.url).await;
            *created = true;
        }
        PostgresStore::connect(PostgresOptions::new(&self.url))
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
