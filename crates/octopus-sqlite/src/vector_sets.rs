//! Where each kind of vector set lives in SQLite, the truth the vector index
//! (`octopus_core::vectors::VectorIndex`, the embedded one by default)
//! follows: the knowledge chunks and the memory vectors of messages and
//! episode summaries. A change to a set's rows bumps its version in the same
//! transaction ([`record_change`]); once committed, the index is told
//! ([`SqliteStore::follow`]); searches hand the index this store as its
//! [`VectorRows`].

use std::collections::HashMap;

use async_trait::async_trait;
use octopus_core::knowledge::{ChunkMetadata, point_fields};
use octopus_core::memory_rows::MemoryRowFilter;
use octopus_core::memory_vectors::memory_point_fields;
use octopus_core::recall::MemoryKind;
pub(crate) use octopus_core::vectors::CommittedChange as Committed;
use octopus_core::vectors::best;
use octopus_core::vectors::{
    Nearest, PointFields, ScoredKey, SetState, VectorChange, VectorKind, VectorRows, VectorSet,
};
use octopus_core::{AgentId, EpisodeId, Result, TenantId};
use octopus_sql::VectorTables;
use rusqlite::{Connection, OptionalExtension, Transaction};

use crate::SqliteStore;
use crate::error::{Result as StoreResult, corrupt};
use crate::{codec, rows};

/// A kind of vector set: the tables it lives in, and how a row's fields
/// are read from them.
pub(crate) trait VectorTable {
    const TABLES: VectorTables;

    fn fields_from_row(row: &rusqlite::Row<'_>) -> StoreResult<PointFields>;

    /// The set's dimension and version, if it exists.
    fn state(conn: &Connection, tenant: TenantId, agent: AgentId) -> StoreResult<Option<SetState>> {
        let sql = format!(
            "SELECT dimension, version FROM {} WHERE tenant_id = ?1 AND agent_id = ?2",
            Self::TABLES.collections
        );
        Ok(conn
            .prepare_cached(&sql)?
            .query_row([tenant.0.as_bytes(), agent.0.as_bytes()], |row| {
                Ok(SetState {
                    dimension: row.get(0)?,
                    version: row.get(1)?,
                })
            })
            .optional()?)
    }

    /// Every set of this kind, with its state.
    fn states(conn: &Connection, kind: VectorKind) -> StoreResult<Vec<(VectorSet, SetState)>> {
        let sql = format!(
            "SELECT tenant_id, agent_id, dimension, version FROM {}",
            Self::TABLES.collections
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let mut rows = stmt.query([])?;
        let mut states = Vec::new();
        while let Some(row) = rows.next()? {
            let set = VectorSet {
                kind,
                tenant: TenantId(crate::rows::uuid(row, "tenant_id")?),
                agent: AgentId(crate::rows::uuid(row, "agent_id")?),
            };
            let state = SetState {
                dimension: row.get(2)?,
                version: row.get(3)?,
            };
            states.push((set, state));
        }
        Ok(states)
    }

    /// Every key of the set, with its fields.
    fn fields(
        conn: &Connection,
        tenant: TenantId,
        agent: AgentId,
    ) -> StoreResult<HashMap<u64, PointFields>> {
        let sql = format!(
            "SELECT seq, {} FROM {} WHERE tenant_id = ?1 AND agent_id = ?2",
            Self::TABLES.field_columns,
            Self::TABLES.rows
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let mut rows = stmt.query([tenant.0.as_bytes(), agent.0.as_bytes()])?;
        let mut fields = HashMap::new();
        while let Some(row) = rows.next()? {
            let seq: i64 = row.get("seq")?;
            fields.insert(seq as u64, Self::fields_from_row(row)?);
        }
        Ok(fields)
    }

    /// The vectors of these keys of the set.
    fn vectors(
        conn: &Connection,
        tenant: TenantId,
        agent: AgentId,
        keys: &[u64],
    ) -> StoreResult<Vec<(u64, Vec<f32>)>> {
        let placeholders = vec!["?"; keys.len()].join(", ");
        let mut stmt = conn.prepare(&format!(
            // By key, then checked (`+`: not by a range of the set's index).
            "SELECT seq, embedding FROM {} WHERE +tenant_id = ? AND +agent_id = ? AND seq IN ({placeholders})",
            Self::TABLES.rows
        ))?;
        let mut values = vec![crate::rows::blob(&tenant.0), crate::rows::blob(&agent.0)];
        values.extend(
            keys.iter()
                .map(|k| rusqlite::types::Value::Integer(*k as i64)),
        );
        let mut rows = stmt.query(rusqlite::params_from_iter(values))?;
        let mut vectors = Vec::with_capacity(keys.len());
        while let Some(row) = rows.next()? {
            let seq: i64 = row.get(0)?;
            let bytes: Vec<u8> = row.get(1)?;
            vectors.push((seq as u64, crate::codec::embedding_from(&bytes)?));
        }
        Ok(vectors)
    }

    /// Marks a change: a new version, and the count moved by `delta`. Returns
    /// the new version.
    fn bump_version(
        tx: &Transaction<'_>,
        tenant: TenantId,
        agent: AgentId,
        delta: i64,
    ) -> StoreResult<i64> {
        let sql = format!(
            "UPDATE {table} SET version = version + 1, {count} = {count} + ?3
             WHERE tenant_id = ?1 AND agent_id = ?2 RETURNING version",
            table = Self::TABLES.collections,
            count = Self::TABLES.count_column
        );
        Ok(tx.query_row(
            &sql,
            rusqlite::params![tenant.0.as_bytes(), agent.0.as_bytes(), delta],
            |r| r.get(0),
        )?)
    }
}

/// Bumps the set's version in `tx` for `change`, made from `before`; the
/// caller commits `tx`, then has the index follow.
pub(crate) fn record_change<T: VectorTable>(
    tx: &Transaction<'_>,
    set: VectorSet,
    before: SetState,
    change: VectorChange,
) -> StoreResult<Committed> {
    let after = T::bump_version(tx, set.tenant, set.agent, change.delta())?;
    Ok(Committed {
        set,
        before,
        after,
        change,
    })
}

/// The knowledge chunks' table, as a vector set's rows.
pub(crate) struct KnowledgeTable;

impl VectorTable for KnowledgeTable {
    const TABLES: VectorTables = VectorTables::KNOWLEDGE;

    fn fields_from_row(row: &rusqlite::Row<'_>) -> StoreResult<PointFields> {
        Ok(point_fields(&metadata_from_row(row)?))
    }
}

/// A chunk's metadata, from a row of `knowledge_chunks`.
pub(crate) fn metadata_from_row(row: &rusqlite::Row<'_>) -> StoreResult<ChunkMetadata> {
    Ok(ChunkMetadata {
        source: row.get("source")?,
        chunk_index: row.get("chunk_index")?,
        category: row.get("category")?,
        heading: row.get("heading")?,
        indexed_at: rows::time(row, "indexed_at")?,
    })
}

/// The memory vectors' table, as a vector set's rows.
pub(crate) struct MemoryTable;

impl VectorTable for MemoryTable {
    const TABLES: VectorTables = VectorTables::MEMORY;

    fn fields_from_row(row: &rusqlite::Row<'_>) -> StoreResult<PointFields> {
        let user: String = row.get("user_id")?;
        Ok(memory_point_fields(
            &user,
            kind_from_row(row)?,
            EpisodeId(rows::uuid(row, "episode_id")?),
            codec::instant(row.get("at")?)?,
        ))
    }
}

impl MemoryTable {
    /// The nearest of one user's memory vectors in the set that the query's
    /// filter admits, read by the (tenant, agent, user) index and each
    /// judged and scored as it is read.
    fn nearest_of_user(
        conn: &Connection,
        set: VectorSet,
        user: &str,
        query: &Nearest,
    ) -> StoreResult<Vec<ScoredKey>> {
        let filter = MemoryRowFilter::new(&query.filter);
        let mut stmt = conn.prepare_cached(
            "SELECT seq, kind, episode_id, at, embedding FROM memory_vectors
             WHERE tenant_id = ?1 AND agent_id = ?2 AND user_id = ?3",
        )?;
        let mut rows = stmt.query(rusqlite::params![
            set.tenant.0.as_bytes(),
            set.agent.0.as_bytes(),
            user
        ])?;
        let mut scored = Vec::new();
        // By position, as selected: a user's every vector is read here.
        while let Some(row) = rows.next()? {
            let episode = EpisodeId(rows::uuid(row, 2)?);
            let at = codec::instant(row.get(3)?)?;
            let kind = row.get_ref(1)?.as_str().ok().and_then(MemoryKind::parse);
            let kind = kind.ok_or_else(|| corrupt("memory kind", "not one"))?;
            if !filter.admits(kind, episode, at) {
                continue;
            }
            let rusqlite::types::ValueRef::Blob(bytes) = row.get_ref(4)? else {
                return Err(corrupt("embedding", "not a blob"));
            };
            let score = octopus_core::vectors::dot_with_bytes(bytes, &query.vector)
                .ok_or_else(|| corrupt("embedding", "of another dimension than the query"))?;
            let seq: i64 = row.get(0)?;
            scored.push(ScoredKey {
                key: seq as u64,
                score,
            });
        }
        Ok(best(scored, query.top_k))
    }
}

pub(crate) fn kind_from_row(row: &rusqlite::Row<'_>) -> StoreResult<MemoryKind> {
    let kind: String = row.get("kind")?;
    MemoryKind::parse(&kind).ok_or_else(|| corrupt("memory kind", kind))
}

/// Removes an episode's memory vectors in `tx`, with the version bump; the
/// caller commits, then has the index follow.
pub(crate) fn purge_vectors(
    tx: &Transaction<'_>,
    (tenant, agent): (TenantId, AgentId),
    episode: EpisodeId,
) -> StoreResult<Option<Committed>> {
    let Some(state) = MemoryTable::state(tx, tenant, agent)? else {
        return Ok(None);
    };
    let removed = rows::collect(
        &mut *tx.prepare_cached(
            "DELETE FROM memory_vectors WHERE episode_id = ?1 AND tenant_id = ?2 RETURNING seq",
        )?,
        [episode.0.as_bytes(), tenant.0.as_bytes()],
        rows::key,
    )?;
    let change = VectorChange {
        removed,
        added: Vec::new(),
    };
    let set = VectorSet::memory(tenant, agent);
    Ok(Some(record_change::<MemoryTable>(tx, set, state, change)?))
}

impl SqliteStore {
    /// Tells the vector index of a committed change.
    pub(crate) async fn follow(&self, committed: Option<Committed>) -> octopus_core::Result<()> {
        Committed::tell(committed, &*self.vectors).await
    }
}

#[async_trait]
impl VectorRows for SqliteStore {
    async fn vector_state(&self, set: VectorSet) -> Result<Option<SetState>> {
        self.db
            .read(move |conn| match set.kind {
                VectorKind::Knowledge => KnowledgeTable::state(conn, set.tenant, set.agent),
                VectorKind::Memory => MemoryTable::state(conn, set.tenant, set.agent),
            })
            .await
    }

    async fn vector_fields(&self, set: VectorSet) -> Result<HashMap<u64, PointFields>> {
        self.db
            .read(move |conn| match set.kind {
                VectorKind::Knowledge => KnowledgeTable::fields(conn, set.tenant, set.agent),
                VectorKind::Memory => MemoryTable::fields(conn, set.tenant, set.agent),
            })
            .await
    }

    async fn vector_states(&self) -> Result<Vec<(VectorSet, SetState)>> {
        self.db
            .read(|conn| {
                let mut states = KnowledgeTable::states(conn, VectorKind::Knowledge)?;
                states.extend(MemoryTable::states(conn, VectorKind::Memory)?);
                Ok(states)
            })
            .await
    }

    async fn nearest_in_partition(
        &self,
        set: VectorSet,
        query: &Nearest,
    ) -> Result<Vec<ScoredKey>> {
        let Some(user) = query.filter.partition.clone() else {
            return Ok(Vec::new());
        };
        if set.kind == VectorKind::Knowledge {
            return Ok(Vec::new()); // chunks have no partition
        }
        let query = query.clone();
        self.db
            .read(move |conn| MemoryTable::nearest_of_user(conn, set, &user, &query))
            .await
    }

    async fn vectors(&self, set: VectorSet, keys: &[u64]) -> Result<Vec<(u64, Vec<f32>)>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let keys = keys.to_vec();
        self.db
            .read(move |conn| match set.kind {
                VectorKind::Knowledge => {
                    KnowledgeTable::vectors(conn, set.tenant, set.agent, &keys)
                }
                VectorKind::Memory => MemoryTable::vectors(conn, set.tenant, set.agent, &keys),
            })
            .await
    }
}
