//! Vector indexes in this process, derived from PostgreSQL's rows
//! (`[vectors] backend = "embedded"` on PostgreSQL storage): the same
//! `octopus_vector::derived` machinery the SQLite store drives, each server
//! keeping its own copy.
//!
//! A server follows its own writes in place ([`DerivedIndexes::follow`]);
//! another server's writes move a collection's `version` past what its index
//! reflects, and the next search reconciles the index with the rows by key.
//! Reconciling reads rows while holding the index's lock, so this module
//! calls the async driver from synchronous code with
//! `tokio::task::block_in_place`: it needs a multi-threaded tokio runtime
//! (what `octopus serve` runs).

use std::collections::HashMap;
use std::path::PathBuf;

use octopus_core::knowledge::ChunkMetadata;
use octopus_core::recall::MemoryKind;
use octopus_core::{AgentId, EpisodeId, MessageId, TenantId};
use octopus_vector::HnswError;
use octopus_vector::derived::{CollectionState, DerivedIndexes, IndexSource};
use sqlx_core::executor::Executor;
use sqlx_core::query::query;
use sqlx_core::row::Row;
use sqlx_postgres::{PgPool, PgRow};

use crate::error::{Error, Result, corrupt};
use crate::rows::{Tx, u32_at};
use crate::vectors::PgVector;

pub(crate) type CollectionKey = (TenantId, AgentId);

/// What a memory search filters on, kept beside each key.
pub(crate) struct MemoryFields {
    pub user_id: String,
    pub kind: MemoryKind,
    pub episode_id: EpisodeId,
    pub message_id: Option<MessageId>,
    pub at: chrono::DateTime<chrono::Utc>,
}

/// The two kinds of derived indexes, and where their graphs are saved.
pub(crate) struct EmbeddedIndexes {
    pub knowledge: DerivedIndexes<CollectionKey, ChunkMetadata>,
    pub memory: DerivedIndexes<CollectionKey, MemoryFields>,
}

impl EmbeddedIndexes {
    pub fn new(dir: PathBuf, hnsw_threshold: usize) -> Self {
        Self {
            knowledge: DerivedIndexes::new(dir.join("knowledge"), hnsw_threshold, |_| None),
            memory: DerivedIndexes::new(dir.join("memory"), hnsw_threshold, |fields| {
                Some(fields.user_id.as_str())
            }),
        }
    }
}

/// Where one kind of vector collection lives in SQL.
pub(crate) trait VectorRows {
    type Fields;
    const COLLECTIONS: &'static str;
    const ROWS: &'static str;
    const FIELD_COLUMNS: &'static str;
    fn fields_from_row(row: &PgRow) -> Result<Self::Fields>;
}

pub(crate) struct KnowledgeRows;

impl VectorRows for KnowledgeRows {
    type Fields = ChunkMetadata;
    const COLLECTIONS: &'static str = "knowledge_collections";
    const ROWS: &'static str = "knowledge_chunks";
    const FIELD_COLUMNS: &'static str = "source, chunk_index, category, heading, indexed_at";

    fn fields_from_row(row: &PgRow) -> Result<ChunkMetadata> {
        Ok(ChunkMetadata {
            source: row.try_get("source")?,
            chunk_index: u32_at(row, "chunk_index")?,
            category: row.try_get("category")?,
            heading: row.try_get("heading")?,
            indexed_at: row.try_get("indexed_at")?,
        })
    }
}

pub(crate) struct MemoryRows;

impl VectorRows for MemoryRows {
    type Fields = MemoryFields;
    const COLLECTIONS: &'static str = "memory_collections";
    const ROWS: &'static str = "memory_vectors";
    const FIELD_COLUMNS: &'static str = "user_id, kind, episode_id, message_id, at";

    fn fields_from_row(row: &PgRow) -> Result<MemoryFields> {
        let kind: String = row.try_get("kind")?;
        Ok(MemoryFields {
            user_id: row.try_get("user_id")?,
            kind: MemoryKind::parse(&kind).ok_or_else(|| corrupt("memory kind", kind))?,
            episode_id: EpisodeId(row.try_get("episode_id")?),
            message_id: row
                .try_get::<Option<uuid::Uuid>, _>("message_id")?
                .map(MessageId),
            at: row.try_get("at")?,
        })
    }
}

/// A collection's dimension and version, read now.
pub(crate) async fn state<T: VectorRows>(
    conn: impl Executor<'_, Database = sqlx_postgres::Postgres>,
    (tenant, agent): CollectionKey,
) -> Result<Option<CollectionState>> {
    let row = query(&format!(
        "SELECT dimension, version FROM {} WHERE tenant_id = $1 AND agent_id = $2",
        T::COLLECTIONS
    ))
    .bind(tenant.0)
    .bind(agent.0)
    .fetch_optional(conn)
    .await?;
    row.map(|row| {
        Ok(CollectionState {
            dimension: u32_at(&row, "dimension")?,
            version: row.try_get("version")?,
        })
    })
    .transpose()
}

/// The rows a reconcile reads, all from one snapshot: a repeatable-read
/// transaction begun at the first read.
pub(crate) struct Snapshot<'p, T> {
    pool: &'p PgPool,
    tx: Option<Tx<'static>>,
    table: std::marker::PhantomData<T>,
}

impl<'p, T> Snapshot<'p, T> {
    pub fn new(pool: &'p PgPool) -> Self {
        Self {
            pool,
            tx: None,
            table: std::marker::PhantomData,
        }
    }

    /// The snapshot's transaction, begun at the first read.
    fn tx(&mut self) -> Result<&mut Tx<'static>> {
        if self.tx.is_none() {
            let pool = self.pool;
            let tx = block(async {
                let mut tx = pool.begin().await?;
                tx.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                    .await?;
                Ok::<_, Error>(tx)
            })?;
            self.tx = Some(tx);
        }
        self.tx
            .as_mut()
            .ok_or_else(|| corrupt("snapshot", "no transaction"))
    }
}

/// Runs `work` to completion from synchronous code on a runtime's thread.
fn block<F: std::future::Future>(work: F) -> F::Output {
    let handle = tokio::runtime::Handle::current();
    tokio::task::block_in_place(|| handle.block_on(work))
}

impl<T: VectorRows> IndexSource<CollectionKey, T::Fields> for Snapshot<'_, T>
where
    T::Fields: Send,
{
    type Error = Error;

    fn state(&mut self, key: &CollectionKey) -> Result<Option<CollectionState>> {
        let tx = self.tx()?;
        block(state::<T>(&mut **tx, *key))
    }

    fn fields(&mut self, &(tenant, agent): &CollectionKey) -> Result<HashMap<u64, T::Fields>> {
        let tx = self.tx()?;
        let sql = format!(
            "SELECT seq, {} FROM {} WHERE tenant_id = $1 AND agent_id = $2",
            T::FIELD_COLUMNS,
            T::ROWS
        );
        let rows = block(
            query(&sql)
                .bind(tenant.0)
                .bind(agent.0)
                .fetch_all(&mut **tx),
        )?;
        rows.iter()
            .map(|row| Ok((key_of(row)?, T::fields_from_row(row)?)))
            .collect()
    }

    fn vectors(&mut self, keys: &[u64]) -> Result<Vec<(u64, Vec<f32>)>> {
        let keys: Vec<i64> = keys.iter().map(|k| *k as i64).collect();
        let tx = self.tx()?;
        let sql = format!("SELECT seq, embedding FROM {} WHERE seq = ANY($1)", T::ROWS);
        let rows = block(query(&sql).bind(keys).fetch_all(&mut **tx))?;
        rows.iter()
            .map(|row| Ok((key_of(row)?, row.try_get::<PgVector, _>("embedding")?.0)))
            .collect()
    }
}

/// A row's `seq` (a bigserial, so positive): its key in a derived index.
pub(crate) fn key_of(row: &PgRow) -> Result<u64> {
    Ok(row.try_get::<i64, _>("seq")?.unsigned_abs())
}

impl From<HnswError> for Error {
    fn from(error: HnswError) -> Self {
        Error::VectorIndex(error.to_string())
    }
}
