//! In-memory vector indexes derived from SQLite rows, one per (tenant, agent)
//! collection: the machinery shared by knowledge chunks and by the memory
//! vectors of messages and episode summaries.
//!
//! SQLite is the truth. Each collection has a `version`, bumped in the
//! transaction of every change. This process's own writes update the index in
//! place, under the collection's lock, in step with that transaction. When the
//! version differs from the one the index reflects (after a restart, a crash,
//! or a change by another process), the index is *reconciled*: the keys are
//! read from SQLite, keys the index has but SQLite no longer does are removed,
//! and missing ones are added with their vectors. Keys (`seq`, AUTOINCREMENT)
//! are never reused and a row's vector never changes, so equal key sets mean
//! equal indexes.
//!
//! Collections of at least `hnsw_threshold` vectors use an HNSW graph, saved
//! under the collection's folder after it is built and after every
//! `max(1000, size / 10)` changes. A restart loads the saved graph and
//! reconciles only the difference; a graph that is missing or does not load
//! (a crash mid-save leaves none, never a torn one) is rebuilt from SQLite.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use octopus_core::{AgentId, TenantId};
use octopus_vector::{Neighbour, VectorIndex};
use rusqlite::{Connection, OptionalExtension, Transaction};

use crate::db::lock;
use crate::error::Result;

pub(crate) type CollectionKey = (TenantId, AgentId);

/// Counts as more changes than any save threshold: a new graph is saved at once.
const NEVER_SAVED: usize = usize::MAX;

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
    fn vectors(conn: &Connection, keys: &[i64]) -> Result<Vec<(u64, Vec<f32>)>> {
        let placeholders = vec!["?"; keys.len()].join(", ");
        let mut stmt = conn.prepare(&format!(
            "SELECT seq, embedding FROM {} WHERE seq IN ({placeholders})",
            Self::ROWS
        ))?;
        let mut rows = stmt.query(rusqlite::params_from_iter(keys))?;
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

#[derive(Clone, Copy, Debug)]
pub(crate) struct CollectionState {
    pub dimension: u32,
    pub version: i64,
}

/// What a change did to the rows, for the index to follow.
pub(crate) struct Change<F> {
    pub removed: Vec<i64>,
    pub added: Vec<(i64, Vec<f32>, F)>,
}

impl<F> Default for Change<F> {
    fn default() -> Self {
        Self {
            removed: Vec::new(),
            added: Vec::new(),
        }
    }
}

/// The in-memory indexes of the collections of one table searched so far.
pub(crate) struct VectorCollections<T: VectorTable> {
    collections: Mutex<HashMap<CollectionKey, SharedIndex<T::Fields>>>,
    /// Where graphs are saved, one folder per collection.
    dir: PathBuf,
    hnsw_threshold: usize,
}

type SharedIndex<F> = Arc<RwLock<LoadedIndex<F>>>;

/// What a search asks for: the `top_k` nearest neighbours of `vector`, only
/// within one partition when `within` names it.
pub(crate) struct Nearest<'a> {
    pub vector: &'a [f32],
    pub top_k: usize,
    pub within: Option<&'a str>,
}

/// One collection's index and the filterable fields of its keys.
pub(crate) struct LoadedIndex<F> {
    /// The collection version the index reflects; `None` until built.
    version: Option<i64>,
    index: VectorIndex,
    fields: HashMap<u64, F>,
    /// The keys of each partition (see [`VectorTable::partition`]).
    partitions: HashMap<String, HashSet<u64>>,
    /// Changes since the graph was last saved; [`NEVER_SAVED`] for a new graph.
    unsaved: usize,
}

impl<F> LoadedIndex<F> {
    fn add_fields<T: VectorTable<Fields = F>>(&mut self, key: u64, fields: F) {
        if let Some(partition) = T::partition(&fields) {
            self.partitions
                .entry(partition.to_owned())
                .or_default()
                .insert(key);
        }
        self.fields.insert(key, fields);
    }

    fn remove_fields<T: VectorTable<Fields = F>>(&mut self, key: u64) {
        let Some(fields) = self.fields.remove(&key) else {
            return;
        };
        if let Some(partition) = T::partition(&fields)
            && let Some(keys) = self.partitions.get_mut(partition)
        {
            keys.remove(&key);
            if keys.is_empty() {
                self.partitions.remove(partition);
            }
        }
    }

    fn set_fields<T: VectorTable<Fields = F>>(&mut self, fields: HashMap<u64, F>) {
        self.fields = HashMap::with_capacity(fields.len());
        self.partitions.clear();
        for (key, fields) in fields {
            self.add_fields::<T>(key, fields);
        }
    }
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|p| p.into_inner())
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|p| p.into_inner())
}

impl<T: VectorTable> VectorCollections<T> {
    pub(crate) fn new(dir: PathBuf, hnsw_threshold: usize) -> Self {
        Self {
            collections: Mutex::default(),
            dir,
            hnsw_threshold,
        }
    }

    fn get(&self, key: CollectionKey, dimension: usize) -> SharedIndex<T::Fields> {
        let mut collections = lock(&self.collections);
        Arc::clone(collections.entry(key).or_insert_with(|| {
            Arc::new(RwLock::new(LoadedIndex {
                version: None,
                index: VectorIndex::exact(dimension),
                fields: HashMap::new(),
                partitions: HashMap::new(),
                unsaved: 0,
            }))
        }))
    }

    fn graph_dir(&self, (tenant, agent): CollectionKey) -> PathBuf {
        self.dir.join(format!("{}-{}", tenant.0, agent.0))
    }

    /// Forgets a collection's index and its saved graph, both rebuilt from
    /// SQLite at the next search: a graph only marks removed vectors, so
    /// after an erasure it must not be kept. Returns whether a saved graph
    /// was deleted.
    pub(crate) fn drop_collection(&self, key: CollectionKey) -> Result<bool> {
        let mut collections = lock(&self.collections);
        collections.remove(&key);
        let dir = self.graph_dir(key);
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(crate::Error::DataDir {
                path: dir,
                source: e,
            }),
        }
    }

    /// Commits `tx` after `change` has written its rows and the version is
    /// bumped, holding the collection's index lock throughout; then applies the
    /// change to the index when it was current, or leaves it to be reconciled.
    pub(crate) fn commit_change(
        &self,
        tx: Transaction<'_>,
        key: CollectionKey,
        before: CollectionState,
        change: impl FnOnce(&Transaction<'_>) -> Result<Change<T::Fields>>,
    ) -> Result<()> {
        let loaded = self.get(key, before.dimension as usize);
        let mut loaded = write(&loaded);
        let applied = change(&tx)?;
        let delta = applied.added.len() as i64 - applied.removed.len() as i64;
        let version = T::bump_version(&tx, key, delta)?;
        tx.commit()?;
        if loaded.version != Some(before.version) {
            return Ok(());
        }
        // Committed: from here a failure leaves the index behind SQLite, and the
        // next search reconciles it.
        loaded.version = None;
        loaded.unsaved = loaded
            .unsaved
            .saturating_add(applied.removed.len() + applied.added.len());
        for seq in applied.removed {
            loaded.index.remove(seq as u64).map_err(index_error)?;
            loaded.remove_fields::<T>(seq as u64);
        }
        let items: Vec<(u64, &[f32])> = applied
            .added
            .iter()
            .map(|(seq, vector, _)| (*seq as u64, vector.as_slice()))
            .collect();
        loaded.index.insert_many(&items).map_err(index_error)?;
        for (seq, _, fields) in applied.added {
            loaded.add_fields::<T>(seq as u64, fields);
        }
        loaded.version = Some(version);
        self.after_change(key, &mut loaded)
    }

    /// The nearest keys whose fields `accept` admits, best first, each
    /// turned into a result by `map`; the index is reconciled with SQLite first
    /// when it is behind.
    pub(crate) fn search<R>(
        &self,
        conn: &mut Connection,
        key: CollectionKey,
        state: CollectionState,
        nearest: Nearest<'_>,
        accept: impl Fn(&T::Fields) -> bool,
        map: impl Fn(Neighbour, &T::Fields) -> R,
    ) -> Result<Vec<R>> {
        let loaded = self.get(key, state.dimension as usize);
        if read(&loaded).version != Some(state.version) {
            let mut writable = write(&loaded);
            if writable.version != Some(state.version) {
                self.reconcile(conn, key, &mut writable)?;
            }
        }
        let loaded = read(&loaded);
        let accepted = |k: u64| loaded.fields.get(&k).is_some_and(&accept);
        // A partition smaller than the size at which a graph pays is scored
        // key by key: a graph walk filtered to a small part of the graph would
        // visit most of it (a user's memories among all users' of an agent).
        let partition = nearest.within.map(|name| loaded.partitions.get(name));
        let neighbours = match partition {
            Some(None) => Vec::new(),
            Some(Some(keys)) if loaded.index.is_hnsw() && keys.len() < self.hnsw_threshold => {
                loaded.index.search_among(
                    nearest.vector,
                    nearest.top_k,
                    keys.iter().copied(),
                    accepted,
                )
            }
            _ => loaded
                .index
                .search(nearest.vector, nearest.top_k, accepted)
                .map_err(index_error)?,
        };
        Ok(neighbours
            .into_iter()
            .filter_map(|n| loaded.fields.get(&n.key).map(|fields| map(n, fields)))
            .collect())
    }

    /// Brings `loaded` to the collection's current rows: see the module comment.
    fn reconcile(
        &self,
        conn: &mut Connection,
        key: CollectionKey,
        loaded: &mut LoadedIndex<T::Fields>,
    ) -> Result<()> {
        // One read transaction, so the keys, the vectors and the version agree.
        let tx = conn.transaction()?;
        let Some(state) = T::state(&tx, key)? else {
            return Ok(());
        };
        let dimension = state.dimension as usize;
        let fields = T::fields(&tx, key)?;
        if loaded.version.is_none() && fields.len() >= self.hnsw_threshold {
            let dir = self.graph_dir(key);
            loaded.index = match VectorIndex::load(&dir, dimension) {
                Ok(index) => index,
                Err(error) => {
                    if dir.exists() {
                        tracing::warn!(%error, path = %dir.display(), "saved vector index unusable; rebuilding it");
                    }
                    // Large already: build the graph directly from the rows.
                    loaded.unsaved = NEVER_SAVED;
                    VectorIndex::graph(dimension).map_err(index_error)?
                }
            };
        }
        let stale: Vec<u64> = loaded
            .index
            .keys()
            .into_iter()
            .filter(|k| !fields.contains_key(k))
            .collect();
        for k in &stale {
            loaded.index.remove(*k).map_err(index_error)?;
        }
        let missing: Vec<i64> = fields
            .keys()
            .filter(|k| !loaded.index.contains(**k))
            .map(|k| *k as i64)
            .collect();
        let mut vectors = Vec::with_capacity(missing.len());
        for batch in missing.chunks(500) {
            vectors.extend(T::vectors(&tx, batch)?);
        }
        tx.commit()?;
        let items: Vec<(u64, &[f32])> = vectors.iter().map(|(k, v)| (*k, v.as_slice())).collect();
        loaded.index.insert_many(&items).map_err(index_error)?;
        loaded.set_fields::<T>(fields);
        loaded.version = Some(state.version);
        loaded.unsaved = loaded.unsaved.saturating_add(stale.len() + missing.len());
        self.after_change(key, loaded)?;
        tracing::debug!(
            collection = T::ROWS, tenant_id = %key.0, agent_id = %key.1,
            vectors = loaded.index.len(), removed = stale.len(), added = missing.len(),
            graph = loaded.index.is_hnsw(), "reconciled vector index"
        );
        Ok(())
    }

    /// Switches a grown collection to a graph, and saves the graph when enough
    /// has changed since it was last saved. A failed save costs only a longer
    /// rebuild after the next restart, so it is logged, not returned.
    fn after_change(&self, key: CollectionKey, loaded: &mut LoadedIndex<T::Fields>) -> Result<()> {
        if loaded
            .index
            .switch_if_large(self.hnsw_threshold)
            .map_err(index_error)?
        {
            loaded.unsaved = NEVER_SAVED;
        }
        if loaded.index.is_hnsw() && loaded.unsaved >= (loaded.index.len() / 10).max(1000) {
            let dir = self.graph_dir(key);
            let saved = std::fs::create_dir_all(&self.dir)
                .map_err(|e| e.to_string())
                .and_then(|()| loaded.index.save(&dir).map_err(|e| e.to_string()));
            match saved {
                Ok(()) => loaded.unsaved = 0,
                Err(error) => {
                    tracing::warn!(%error, path = %dir.display(), "vector index not saved")
                }
            }
        }
        Ok(())
    }
}

pub(crate) fn index_error(error: octopus_vector::HnswError) -> crate::Error {
    crate::Error::VectorIndex(error.to_string())
}
