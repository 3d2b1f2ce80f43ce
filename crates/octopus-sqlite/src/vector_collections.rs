//! Where each kind of vector collection lives in SQLite, for the derived
//! in-memory indexes of `octopus_vector::derived` (see there for how they
//! follow the rows): the knowledge chunks and the memory vectors of messages
//! and episode summaries. SQLite is the truth.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::path::PathBuf;

use octopus_core::{AgentId, TenantId};
pub(crate) use octopus_vector::derived::{Change, CollectionState, Nearest};
use octopus_vector::derived::{DerivedIndexes, IndexSource, Partition};
use octopus_vector::{HnswError, Neighbour};
use rusqlite::{Connection, OptionalExtension, Transaction};

use crate::error::Result;

pub(crate) type CollectionKey = (TenantId, AgentId);

/// Where a kind of collection lives: a table of collections (`tenant_id`,
/// `agent_id`, `dimension`, `version` and a count) and a table of rows (`seq`,
/// `tenant_id`, `agent_id`, `embedding` and the fields searches filter on).
pub(crate) trait VectorTable: Send + Sync + 'static {
    /// What a search can filter on, kept in memory beside each key.
    type Fields: Send + Sync + 'static;
    const COLLECTIONS: &'static str;
    /// The collections' column counting their rows.
    const COUNT_COLUMN: &'static str;
    const ROWS: &'static str;
    /// The rows' columns [`Self::fields_from_row`] reads.
    const FIELD_COLUMNS: &'static str;

    fn fields_from_row(row: &rusqlite::Row<'_>) -> Result<Self::Fields>;

    /// The part of a collection that searches keep to, when the kind has
    /// one: memory vectors are searched per user.
    fn partition(_fields: &Self::Fields) -> Option<&str> {
        None
    }

    /// The collection's dimension and version, if it exists.
    fn state(conn: &Connection, (tenant, agent): CollectionKey) -> Result<Option<CollectionState>> {
        let sql = format!(
            "SELECT dimension, version FROM {} WHERE tenant_id = ?1 AND agent_id = ?2",
            Self::COLLECTIONS
        );
        Ok(conn
            .prepare_cached(&sql)?
            .query_row([tenant.0.as_bytes(), agent.0.as_bytes()], |row| {
                Ok(CollectionState {
                    dimension: row.get(0)?,
                    version: row.get(1)?,
                })
            })
            .optional()?)
    }

    /// Every key of the collection, with its fields.
    fn fields(
        conn: &Connection,
        (tenant, agent): CollectionKey,
    ) -> Result<HashMap<u64, Self::Fields>> {
        let sql = format!(
            "SELECT seq, {} FROM {} WHERE tenant_id = ?1 AND agent_id = ?2",
            Self::FIELD_COLUMNS,
            Self::ROWS
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

    /// The vectors of these keys.
    fn vectors(conn: &Connection, keys: &[u64]) -> Result<Vec<(u64, Vec<f32>)>> {
        let placeholders = vec!["?"; keys.len()].join(", ");
        let mut stmt = conn.prepare(&format!(
            "SELECT seq, embedding FROM {} WHERE seq IN ({placeholders})",
            Self::ROWS
        ))?;
        let mut rows = stmt.query(rusqlite::params_from_iter(keys.iter().map(|k| *k as i64)))?;
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
        (tenant, agent): CollectionKey,
        delta: i64,
    ) -> Result<i64> {
        let sql = format!(
            "UPDATE {table} SET version = version + 1, {count} = {count} + ?3
             WHERE tenant_id = ?1 AND agent_id = ?2 RETURNING version",
            table = Self::COLLECTIONS,
            count = Self::COUNT_COLUMN
        );
        Ok(tx.query_row(
            &sql,
            rusqlite::params![tenant.0.as_bytes(), agent.0.as_bytes(), delta],
            |r| r.get(0),
        )?)
    }
}

/// A reconcile's reads, all in one read transaction (begun at the first
/// read, so a search whose index is current begins none).
struct Rows<'c, T> {
    conn: &'c Connection,
    begun: bool,
    table: PhantomData<T>,
}

impl<T> Rows<'_, T> {
    fn begin(&mut self) -> Result<()> {
        if !self.begun {
            self.conn.execute_batch("BEGIN")?;
            self.begun = true;
        }
        Ok(())
    }
}

impl<T> Drop for Rows<'_, T> {
    fn drop(&mut self) {
        if self.begun {
            // Only read: ending it either way is the same.
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

impl<T: VectorTable> IndexSource<CollectionKey, T::Fields> for Rows<'_, T> {
    type Error = crate::Error;

    fn state(&mut self, key: &CollectionKey) -> Result<Option<CollectionState>> {
        self.begin()?;
        T::state(self.conn, *key)
    }

    fn fields(&mut self, key: &CollectionKey) -> Result<HashMap<u64, T::Fields>> {
        self.begin()?;
        T::fields(self.conn, *key)
    }

    fn vectors(&mut self, keys: &[u64]) -> Result<Vec<(u64, Vec<f32>)>> {
        self.begin()?;
        T::vectors(self.conn, keys)
    }
}

/// The in-memory indexes of one kind of collection, driven from SQLite.
pub(crate) struct VectorCollections<T: VectorTable> {
    indexes: DerivedIndexes<CollectionKey, T::Fields>,
    table: PhantomData<T>,
}

impl<T: VectorTable> VectorCollections<T> {
    pub(crate) fn new(dir: PathBuf, hnsw_threshold: usize) -> Self {
        let partition: Partition<T::Fields> = T::partition;
        Self {
            indexes: DerivedIndexes::new(dir, hnsw_threshold, partition),
            table: PhantomData,
        }
    }

    /// Commits `tx` after `change` has written its rows and the version is
    /// bumped, with the index following in step (see
    /// [`DerivedIndexes::commit_change`]).
    pub(crate) fn commit_change(
        &self,
        tx: Transaction<'_>,
        key: CollectionKey,
        before: CollectionState,
        change: impl FnOnce(&Transaction<'_>) -> Result<Change<T::Fields>>,
    ) -> Result<()> {
        self.indexes.commit_change(&key, before, || {
            let applied = change(&tx)?;
            let version = T::bump_version(&tx, key, applied.delta())?;
            tx.commit()?;
            Ok((version, applied))
        })
    }

    /// The nearest keys whose fields `accept` admits, best first, each turned
    /// into a result by `map`; the index is reconciled with SQLite first when
    /// it is behind `state`.
    pub(crate) fn search<R>(
        &self,
        conn: &Connection,
        key: CollectionKey,
        state: CollectionState,
        nearest: Nearest<'_>,
        accept: impl Fn(&T::Fields) -> bool,
        map: impl Fn(Neighbour, &T::Fields) -> R,
    ) -> Result<Vec<R>> {
        let mut rows = Rows::<T> {
            conn,
            begun: false,
            table: PhantomData,
        };
        self.indexes
            .search(&mut rows, &key, state, nearest, accept, map)
    }

    /// Forgets a collection's index and its saved graph (rebuilt at the next
    /// search). Returns whether a saved graph was deleted.
    pub(crate) fn drop_collection(&self, key: CollectionKey) -> Result<bool> {
        self.indexes
            .drop_collection(&key)
            .map_err(|source| crate::Error::DataDir {
                path: PathBuf::from("vectors"),
                source,
            })
    }
}

impl From<HnswError> for crate::Error {
    fn from(error: HnswError) -> Self {
        crate::Error::VectorIndex(error.to_string())
    }
}
