//! Where each kind of vector set lives in PostgreSQL, the truth the vector
//! index (`octopus_core::vectors::VectorIndex`: pgvector or the embedded one)
//! follows: the knowledge chunks and the memory vectors. A change to a set's
//! rows bumps its version in the same transaction ([`record_change`]); once
//! committed, the index is told ([`PostgresStore::follow`]); searches hand the
//! index this store as its [`VectorRows`].

use std::collections::HashMap;

use async_trait::async_trait;
use octopus_core::knowledge::ChunkMetadata;
use octopus_core::knowledge::point_fields;
use octopus_core::memory_rows::MemoryRowFilter;
use octopus_core::memory_vectors::memory_point_fields;
use octopus_core::recall::MemoryKind;
pub(crate) use octopus_core::vectors::CommittedChange as Committed;
use octopus_core::vectors::best;
use octopus_core::vectors::{
    Nearest, PointFields, ScoredKey, SetState, VectorChange, VectorKind, VectorRows, VectorSet,
};
use octopus_core::{AgentId, EpisodeId, TenantId};
use octopus_sql::VectorTables;
use sqlx_core::executor::Executor;
use sqlx_core::query::query;
use sqlx_core::row::Row;
use sqlx_postgres::{PgRow, Postgres};

use crate::error::{Result, corrupt};
use crate::rows::{Tx, u32_at};
use crate::vectors::PgVector;
use crate::{PostgresStore, domain};

/// A kind of vector set: the tables it lives in, and how a row's fields
/// are read from them.
pub(crate) trait VectorTable {
    const TABLES: VectorTables;

    fn fields_from_row(row: &PgRow) -> Result<PointFields>;
}

pub(crate) struct KnowledgeTable;

impl VectorTable for KnowledgeTable {
    const TABLES: VectorTables = VectorTables::KNOWLEDGE;

    fn fields_from_row(row: &PgRow) -> Result<PointFields> {
        Ok(point_fields(&metadata_from_row(row)?))
    }
}

pub(crate) struct MemoryTable;

impl VectorTable for MemoryTable {
    const TABLES: VectorTables = VectorTables::MEMORY;

    fn fields_from_row(row: &PgRow) -> Result<PointFields> {
        let user: String = row.try_get("user_id")?;
        Ok(memory_point_fields(
            &user,
            kind_at(row)?,
            EpisodeId(row.try_get("episode_id")?),
            row.try_get("at")?,
        ))
    }
}

pub(crate) fn kind_at(row: &PgRow) -> Result<MemoryKind> {
    let kind: String = row.try_get("kind")?;
    MemoryKind::parse(&kind).ok_or_else(|| corrupt("memory kind", kind))
}

/// A row's `seq` (a bigserial, so positive): its vector's key.
pub(crate) fn key_of(row: &PgRow) -> Result<u64> {
    Ok(row.try_get::<i64, _>("seq")?.unsigned_abs())
}

/// Whether a row read by key belongs to this tenant's agent. Rows are read
/// by `seq = ANY(keys)` alone, which only the unique index on `seq` serves:
/// with the tenant and agent in the condition too, the planner may pick their
/// index instead and read every row of the set (it did, at 30k chunks, while
/// the statistics lagged a bulk insert); they are checked here instead.
pub(crate) fn owned_by(row: &PgRow, tenant: TenantId, agent: AgentId) -> Result<bool> {
    Ok(row.try_get::<uuid::Uuid, _>("tenant_id")? == tenant.0
        && row.try_get::<uuid::Uuid, _>("agent_id")? == agent.0)
}

/// A set's dimension and version, read now.
pub(crate) async fn state<T: VectorTable>(
    conn: impl Executor<'_, Database = Postgres>,
    tenant: TenantId,
    agent: AgentId,
) -> Result<Option<SetState>> {
    let row = query(&format!(
        "SELECT dimension, version FROM {} WHERE tenant_id = $1 AND agent_id = $2",
        T::TABLES.collections
    ))
    .bind(tenant.0)
    .bind(agent.0)
    .fetch_optional(conn)
    .await?;
    row.map(|row| {
        Ok(SetState {
            dimension: u32_at(&row, "dimension")?,
            version: row.try_get("version")?,
        })
    })
    .transpose()
}

/// Counts `change` in its set and bumps the set's version, in `tx`; `None`
/// when the set does not exist. The bump locks the set's row until `tx`
/// ends and moves the version by one, so the version before it is the one
/// it returns less one, whatever committed meanwhile.
pub(crate) async fn record_change<T: VectorTable>(
    tx: &mut Tx<'_>,
    set: VectorSet,
    change: VectorChange,
) -> Result<Option<Committed>> {
    let Some(after) = bump::<T>(tx, set, change.delta()).await? else {
        return Ok(None);
    };
    Ok(Some(Committed {
        set,
        before: SetState {
            dimension: after.dimension,
            version: after.version - 1,
        },
        after: after.version,
        change,
    }))
}

/// Moves the set's count by `delta` and its version by one, in `tx`, with no
/// index to follow (it reconciles at its next search); the state after.
pub(crate) async fn bump<T: VectorTable>(
    tx: &mut Tx<'_>,
    set: VectorSet,
    delta: i64,
) -> Result<Option<SetState>> {
    let row = query(&format!(
        "UPDATE {table} SET {count} = {count} + $3, version = version + 1
         WHERE tenant_id = $1 AND agent_id = $2 RETURNING version, dimension",
        table = T::TABLES.collections,
        count = T::TABLES.count_column
    ))
    .bind(set.tenant.0)
    .bind(set.agent.0)
    .bind(delta)
    .fetch_optional(&mut **tx)
    .await?;
    row.map(|row| {
        Ok(SetState {
            dimension: u32_at(&row, "dimension")?,
            version: row.try_get("version")?,
        })
    })
    .transpose()
}

/// A chunk's metadata, from its `source`, `chunk_index`, `category`,
/// `heading` and `indexed_at` columns.
pub(crate) fn metadata_from_row(row: &PgRow) -> Result<ChunkMetadata> {
    Ok(ChunkMetadata {
        source: row.try_get("source")?,
        chunk_index: u32_at(row, "chunk_index")?,
        category: row.try_get("category")?,
        heading: row.try_get("heading")?,
        indexed_at: row.try_get("indexed_at")?,
    })
}

/// Removes every memory vector of an episode, in `tx`, with the version
/// bump; the caller commits, then has the index follow.
pub(crate) async fn purge_vectors(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    agent: AgentId,
    episode: EpisodeId,
) -> Result<Option<Committed>> {
    let removed =
        query("DELETE FROM memory_vectors WHERE episode_id = $1 AND tenant_id = $2 RETURNING seq")
            .bind(episode.0)
            .bind(tenant.0)
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(key_of)
            .collect::<Result<Vec<u64>>>()?;
    if removed.is_empty() {
        return Ok(None);
    }
    let change = VectorChange {
        removed,
        added: Vec::new(),
    };
    record_change::<MemoryTable>(tx, VectorSet::memory(tenant, agent), change).await
}

impl PostgresStore {
    /// Tells the vector index of a committed change.
    pub(crate) async fn follow(&self, committed: Option<Committed>) -> octopus_core::Result<()> {
        Committed::tell(committed, &*self.vectors).await
    }
}

/// A kind's table of rows, and the columns of its fields.
fn tables(kind: VectorKind) -> (&'static str, &'static str) {
    match kind {
        VectorKind::Knowledge => (
            KnowledgeTable::TABLES.rows,
            KnowledgeTable::TABLES.field_columns,
        ),
        VectorKind::Memory => (MemoryTable::TABLES.rows, MemoryTable::TABLES.field_columns),
    }
}

#[async_trait]
impl VectorRows for PostgresStore {
    async fn vector_state(&self, set: VectorSet) -> octopus_core::Result<Option<SetState>> {
        domain(async {
            match set.kind {
                VectorKind::Knowledge => {
                    state::<KnowledgeTable>(&self.pool, set.tenant, set.agent).await
                }
                VectorKind::Memory => state::<MemoryTable>(&self.pool, set.tenant, set.agent).await,
            }
        })
        .await
    }

    async fn vector_fields(
        &self,
        set: VectorSet,
    ) -> octopus_core::Result<HashMap<u64, PointFields>> {
        domain(async {
            let (rows, columns) = tables(set.kind);
            let found = query(&format!(
                "SELECT seq, {columns} FROM {rows} WHERE tenant_id = $1 AND agent_id = $2"
            ))
            .bind(set.tenant.0)
            .bind(set.agent.0)
            .fetch_all(&self.pool)
            .await?;
            found
                .iter()
                .map(|row| {
                    let fields = match set.kind {
                        VectorKind::Knowledge => KnowledgeTable::fields_from_row(row)?,
                        VectorKind::Memory => MemoryTable::fields_from_row(row)?,
                    };
                    Ok((key_of(row)?, fields))
                })
                .collect()
        })
        .await
    }

    async fn vector_states(&self) -> octopus_core::Result<Vec<(VectorSet, SetState)>> {
        domain(async {
            let found = query(&format!(
                "SELECT 'knowledge' AS kind, tenant_id, agent_id, dimension, version FROM {}
                 UNION ALL
                 SELECT 'memory', tenant_id, agent_id, dimension, version FROM {}",
                KnowledgeTable::TABLES.collections,
                MemoryTable::TABLES.collections
            ))
            .fetch_all(&self.pool)
            .await?;
            found
                .iter()
                .map(|row| {
                    let kind = match row.try_get::<&str, _>("kind")? {
                        "knowledge" => VectorKind::Knowledge,
                        _ => VectorKind::Memory,
                    };
                    let set = VectorSet {
                        kind,
                        tenant: TenantId(row.try_get("tenant_id")?),
                        agent: AgentId(row.try_get("agent_id")?),
                    };
                    let state = SetState {
                        dimension: u32_at(row, "dimension")?,
                        version: row.try_get("version")?,
                    };
                    Ok((set, state))
                })
                .collect()
        })
        .await
    }

    async fn nearest_in_partition(
        &self,
        set: VectorSet,
        nearest: &Nearest,
    ) -> octopus_core::Result<Vec<ScoredKey>> {
        let Some(user) = &nearest.filter.partition else {
            return Ok(Vec::new());
        };
        if set.kind == VectorKind::Knowledge {
            return Ok(Vec::new()); // chunks have no partition
        }
        domain(async {
            // PostgreSQL scores each row (pgvector's negative inner
            // product); only keys, fields and scores cross the wire.
            let found = query(
                "SELECT seq, kind, episode_id, at, (embedding <#> $4) AS negative_score
                 FROM memory_vectors WHERE tenant_id = $1 AND agent_id = $2 AND user_id = $3",
            )
            .bind(set.tenant.0)
            .bind(set.agent.0)
            .bind(user)
            .bind(PgVector(nearest.vector.clone()))
            .fetch_all(&self.pool)
            .await?;
            let filter = MemoryRowFilter::new(&nearest.filter);
            let mut scored = Vec::new();
            for row in &found {
                let episode = EpisodeId(row.try_get("episode_id")?);
                if filter.admits(kind_at(row)?, episode, row.try_get("at")?) {
                    let negative: f64 = row.try_get("negative_score")?;
                    scored.push(ScoredKey {
                        key: key_of(row)?,
                        score: -negative as f32,
                    });
                }
            }
            Ok(best(scored, nearest.top_k))
        })
        .await
    }

    async fn vectors(
        &self,
        set: VectorSet,
        keys: &[u64],
    ) -> octopus_core::Result<Vec<(u64, Vec<f32>)>> {
        domain(async {
            let (rows, _) = tables(set.kind);
            let keys: Vec<i64> = keys.iter().map(|k| *k as i64).collect();
            let found = query(&format!(
                "SELECT seq, tenant_id, agent_id, embedding FROM {rows} WHERE seq = ANY($1)"
            ))
            .bind(keys)
            .fetch_all(&self.pool)
            .await?;
            let mut vectors = Vec::with_capacity(found.len());
            for row in &found {
                if owned_by(row, set.tenant, set.agent)? {
                    vectors.push((key_of(row)?, row.try_get::<PgVector, _>("embedding")?.0));
                }
            }
            Ok(vectors)
        })
        .await
    }
}
