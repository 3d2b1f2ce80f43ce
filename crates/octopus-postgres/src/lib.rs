//! The scale-out relational store of Octopus: PostgreSQL, shared by any number
//! of stateless `octopus serve` processes.
//!
//! Layout:
//! - [`db`](PostgresOptions): the connection pool, migrations and the checks
//!   made at start;
//! - `vector_sets`: where each kind of vector set lives, for the vector index
//!   (the port in `octopus_core::vectors`) to follow and reconcile from;
//! - `pgvector`: the vector port on pgvector, in its own tables;
//! - `vectors`: pgvector's `vector` type on the wire, and one HNSW index per
//!   dimension in use;
//! - `rows`: how values are read out of rows;
//! - one module per storage port, as in `octopus-sqlite`.
//!
//! Several servers share one database, so every decision that SQLite's single
//! writer made implicitly is made here by locks: appends lock their
//! conversation's row, sweeps and the memory queue take rows with
//! `FOR UPDATE SKIP LOCKED`, so each is done by exactly one server.

#![forbid(unsafe_code)]

mod agents;
mod claims;
mod closing;
mod conversations;
mod db;
mod dump;
mod episodes;
mod error;
mod fact_changes;
mod fact_rows;
mod facts;
mod forget;
mod jobs;
mod knowledge;
mod memory;
mod message_erasure;
mod messages;
mod pgvector;
mod procedures;
mod profile_summaries;
mod rows;
mod search;
mod tenant_deletion;
mod tenants;
mod vector_sets;
mod vectors;
mod webhooks;

use std::sync::Arc;

use async_trait::async_trait;
use octopus_core::vectors::VectorIndex;

pub use db::PostgresOptions;
pub use error::Error;
pub use pgvector::PgvectorIndex;

/// Octopus's store on PostgreSQL. Cheap to clone; clones share the pool.
#[derive(Clone)]
pub struct PostgresStore {
    pool: sqlx_postgres::PgPool,
    /// Where knowledge and memory vectors are searched.
    vectors: Arc<dyn VectorIndex>,
    /// The sets seen with their copy behind the rows.
    lagging: Arc<octopus_core::vector_lag::LagWatch>,
    /// Where this server's next claim of memory jobs starts among the tenants.
    claim_cursor: Arc<claims::ClaimCursor>,
}

impl PostgresStore {
    /// Connects, checks for pgvector and applies pending migrations; vectors
    /// are searched in pgvector, over the same pool.
    pub async fn connect(options: PostgresOptions) -> Result<Self, Error> {
        let pool = db::connect(&options).await?;
        let vectors = Arc::new(PgvectorIndex::new(pool.clone()));
        Ok(Self::assemble(&options, pool, vectors))
    }

    /// [`Self::connect`], with vectors searched by `vectors` instead (an
    /// index in this process, or a Qdrant server).
    pub async fn connect_with_vectors(
        options: PostgresOptions,
        vectors: Arc<dyn VectorIndex>,
    ) -> Result<Self, Error> {
        let pool = db::connect(&options).await?;
        Ok(Self::assemble(&options, pool, vectors))
    }

    fn assemble(
        options: &PostgresOptions,
        pool: sqlx_postgres::PgPool,
        vectors: Arc<dyn VectorIndex>,
    ) -> Self {
        tracing::info!(
            target = %options.redacted_url(), vectors = vectors.name(), "opened PostgreSQL store"
        );
        Self {
            pool,
            vectors,
            lagging: Arc::default(),
            claim_cursor: Arc::default(),
        }
    }

    /// Closes every connection of the pool.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

#[async_trait]
impl octopus_core::store::Health for PostgresStore {
    fn backends(&self) -> octopus_core::store::Backends {
        octopus_core::store::Backends {
            database: "postgres",
            vectors: self.vectors.name(),
        }
    }

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

#[cfg(feature = "testing")]
pub mod testing;
