//! The scale-out relational store of Octopus: PostgreSQL, shared by any number
//! of stateless `octopus serve` processes.
//!
//! Layout:
//! - [`db`](PostgresOptions): the connection pool, migrations and the checks
//!   made at start;
//! - `vectors`: pgvector's `vector` type on the wire, and one HNSW index per
//!   dimension in use;
//! - `rows`: how values are read out of rows;
//! - one module per storage port, as in `octopus-sqlite`.
//!
//! Several servers share one database, so every decision that SQLite's single
//! writer made implicitly is made here by locks: appends lock their
//! conversation's row, sweeps and the memory queue take rows with
//! `FOR UPDATE SKIP LOCKED`, so each is done by exactly one server.

mod agents;
mod conversations;
mod db;
mod dump;
mod embedded;
mod episodes;
mod error;
mod forget;
mod knowledge;
mod memory;
mod messages;
mod procedures;
mod rows;
mod search;
mod tenants;
mod vectors;

use async_trait::async_trait;

pub use db::{PostgresOptions, VectorMode};
pub use error::Error;

/// Octopus's store on PostgreSQL. Cheap to clone; clones share the pool.
#[derive(Clone)]
pub struct PostgresStore {
    pool: sqlx_postgres::PgPool,
    /// pgvector's HNSW indexes this process made sure exist.
    vectors: std::sync::Arc<vectors::VectorIndexes>,
    /// With [`VectorMode::Embedded`], the indexes in this process that
    /// searches use instead of pgvector's.
    embedded: Option<std::sync::Arc<embedded::EmbeddedIndexes>>,
}

impl PostgresStore {
    /// Connects, checks for pgvector and applies pending migrations.
    pub async fn connect(options: PostgresOptions) -> Result<Self, Error> {
        let pool = db::connect(&options).await?;
        tracing::info!(target = %options.redacted_url(), "opened PostgreSQL store");
        let embedded = match &options.vectors {
            VectorMode::Pgvector => None,
            VectorMode::Embedded {
                dir,
                hnsw_threshold,
            } => Some(std::sync::Arc::new(embedded::EmbeddedIndexes::new(
                dir.clone(),
                *hnsw_threshold,
            ))),
        };
        Ok(Self {
            pool,
            vectors: std::sync::Arc::default(),
            embedded,
        })
    }

    /// Closes every connection of the pool.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

#[async_trait]
impl octopus_core::store::Health for PostgresStore {
    async fn ready(&self) -> octopus_core::Result<()> {
        sqlx_core::query::query("SELECT 1")
            .execute(&self.pool)
            .await
            .map_err(Error::from)?;
        Ok(())
    }
}

/// Runs the body of a port method, whose errors are this crate's, and hands
/// its outcome to the caller in the domain's terms.
async fn domain<T>(
    work: impl std::future::Future<Output = Result<T, Error>>,
) -> octopus_core::Result<T> {
    Ok(work.await?)
}

pub mod testing;
