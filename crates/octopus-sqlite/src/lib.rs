//! The embedded relational store of Octopus: SQLite in WAL mode, in the data
//! directory, with no server to run.
//!
//! Layout:
//! - [`db`](SqliteOptions): the two database files, connection handling and the
//!   async-to-blocking bridge;
//! - `migrations`: the schema, applied automatically on open;
//! - `codec` and `rows`: how values sit in columns;
//! - one module per storage port: `tenants`, `agents`, `conversations`,
//!   `episodes` (with `messages` for the append path), `search`.
//!
//! Why rusqlite rather than sqlx: SQLite is a blocking library, and calling it
//! directly from a blocking thread avoids sqlx's per-statement hop to a worker
//! thread; it also gives direct control over pragmas, transaction modes and FTS5.

mod agents;
mod claims;
mod closing;
mod codec;
mod compaction;
mod conversations;
mod db;
mod dump;
mod episodes;
mod error;
mod fact_changes;
mod fact_rows;
mod facts;
mod forget;
mod fts_rank;
mod jobs;
mod knowledge;
mod memory;
mod message_erasure;
mod messages;
mod migrations;
mod procedures;
mod profile_summaries;
mod rows;
mod search;
mod tenant_deletion;
mod tenants;
mod vector_sets;
mod webhooks;

use std::sync::Arc;

use async_trait::async_trait;
use octopus_core::vectors::VectorIndex;

pub use db::{Durability, SqliteOptions};
pub use error::Error;

/// Octopus's store on SQLite. Cheap to clone; clones share connections.
#[derive(Clone)]
pub struct SqliteStore {
    db: Arc<db::Db>,
    indexer: Arc<search::Indexer>,
    /// Where knowledge and memory vectors are searched.
    vectors: Arc<dyn VectorIndex>,
    /// The sets seen with their copy behind the rows.
    lagging: Arc<octopus_core::vector_lag::LagWatch>,
    /// Knowledge collections' keyword statistics, kept per version.
    knowledge_statistics: Arc<search::StatisticsCache>,
    /// Where the next claim of memory jobs starts among the tenants.
    claim_cursor: Arc<claims::ClaimCursor>,
    /// A checkpoint owed after an erasure, retried off the write path.
    compaction: Arc<compaction::Compaction>,
}

impl SqliteStore {
    /// Opens the store in `options.data_dir`, creating it and applying
    /// migrations as needed, with vectors searched by `vectors`. Blocks:
    /// call it before serving, or from a blocking thread.
    pub fn open(options: SqliteOptions, vectors: Arc<dyn VectorIndex>) -> Result<Self, Error> {
        let db = Arc::new(db::Db::open(options)?);
        let indexer = search::Indexer::start(&db)?;
        tracing::info!(
            path = %db.main_path.display(), search = %db.search_path.display(),
            vectors = vectors.name(), "opened SQLite store"
        );
        Ok(Self {
            db,
            indexer,
            vectors,
            lagging: Arc::default(),
            knowledge_statistics: Arc::default(),
            claim_cursor: Arc::default(),
            compaction: Arc::default(),
        })
    }

    /// Indexes every message not yet in the full-text index. Searches do this
    /// themselves; this is for benchmarks and tools that want to measure it.
    pub fn catch_up_search_index(&self) -> Result<usize, Error> {
        self.indexer.catch_up()
    }
}

#[async_trait]
impl octopus_core::store::Health for SqliteStore {
    fn backends(&self) -> octopus_core::store::Backends {
        octopus_core::store::Backends {
            database: "sqlite",
            vectors: self.vectors.name(),
        }
    }

    fn erased_words_waiting(&self) -> Option<std::time::Duration> {
        self.compaction.waiting()
    }

    async fn ready(&self) -> octopus_core::Result<()> {
        self.db
            .read(|conn| {
                conn.query_row("SELECT 1 FROM search.index_state", [], |_| Ok(()))?;
                Ok(())
            })
            .await
    }
}
