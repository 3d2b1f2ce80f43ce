//! Vector indexes derived from a store's rows, one per collection: the
//! machinery any relational store drives (the SQLite adapter today), whatever
//! its query language. The store stays the truth; this module only follows it.
//!
//! Each collection has a `version` in the store, bumped in the transaction of
//! every change. A store's own writes update the index in place, under the
//! collection's lock, in step with that transaction
//! ([`DerivedIndexes::commit_change`]). When the version differs from the one
//! the index reflects (after a restart, a crash, or a change by another
//! process), the index is *reconciled* through an [`IndexSource`]: the keys
//! are read, keys the index has but the store no longer does are removed, and
//! missing ones are added with their vectors. Keys are never reused and a
//! row's vector never changes, so equal key sets mean equal indexes.
//!
//! Collections of at least `hnsw_threshold` vectors use an HNSW graph, saved
//! under the collection's folder after it is built and after every
//! `max(1000, size / 10)` changes. A restart loads the saved graph and
//! reconciles only the difference; a graph that is missing or does not load
//! (a crash mid-save leaves none, never a torn one) is rebuilt from the rows.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::{HnswError, Neighbour, VectorIndex};

/// Counts as more changes than any save threshold: a new graph is saved at once.
const NEVER_SAVED: usize = usize::MAX;

/// What names a collection: hashable, and the name of its graph's folder.
pub trait CollectionKey: Clone + Eq + Hash + Send + Sync + 'static {
    fn folder_name(&self) -> String;
}

/// A pair of ids, such as (tenant, agent): its folder is `{first}-{second}`.
impl<A, B> CollectionKey for (A, B)
where
    A: std::fmt::Display + Clone + Eq + Hash + Send + Sync + 'static,
    B: std::fmt::Display + Clone + Eq + Hash + Send + Sync + 'static,
{
    fn folder_name(&self) -> String {
        format!("{}-{}", self.0, self.1)
    }
}

/// The part of a collection a key's fields put it in, when the kind of
/// collection has parts that searches keep to (memory vectors are searched
/// per user).
pub type Partition<F> = fn(&F) -> Option<&str>;

/// A collection as the store sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollectionState {
    pub dimension: u32,
    pub version: i64,
}

/// What the store hands a reconcile, all from one consistent read.
pub trait IndexSource<K, F> {
    type Error: From<HnswError>;
    /// The collection's dimension and version, if it exists.
    fn state(&mut self, key: &K) -> Result<Option<CollectionState>, Self::Error>;
    /// Every key of the collection, with its fields.
    fn fields(&mut self, key: &K) -> Result<HashMap<u64, F>, Self::Error>;
    /// The vectors of these keys.
    fn vectors(&mut self, keys: &[u64]) -> Result<Vec<(u64, Vec<f32>)>, Self::Error>;
}

/// What a change did to the rows, for the index to follow.
pub struct Change<F> {
    pub removed: Vec<u64>,
    pub added: Vec<(u64, Vec<f32>, F)>,
}

impl<F> Default for Change<F> {
    fn default() -> Self {
        Self {
            removed: Vec::new(),
            added: Vec::new(),
        }
    }
}

impl<F> Change<F> {
    /// How the change moves the collection's count.
    pub fn delta(&self) -> i64 {
        self.added.len() as i64 - self.removed.len() as i64
    }
}

/// What a search asks for: the `top_k` nearest neighbours of `vector`, only
/// within one partition when `within` names it.
pub struct Nearest<'a> {
    pub vector: &'a [f32],
    pub top_k: usize,
    pub within: Option<&'a str>,
}

/// The in-memory indexes of the collections searched so far. `F` is what a
/// search can filter on, kept in memory beside each key.
pub struct DerivedIndexes<K: CollectionKey, F: Send + Sync + 'static> {
    collections: Mutex<HashMap<K, SharedIndex<F>>>,
    partition: Partition<F>,
    /// Where graphs are saved, one folder per collection.
    dir: PathBuf,
    hnsw_threshold: usize,
}

type SharedIndex<F> = Arc<RwLock<LoadedIndex<F>>>;

/// One collection's index and the filterable fields of its keys.
struct LoadedIndex<F> {
    /// The collection version the index reflects; `None` until built.
    version: Option<i64>,
    index: VectorIndex,
    fields: HashMap<u64, F>,
    /// The keys of each partition (see [`Partition`]).
    partitions: HashMap<String, HashSet<u64>>,
    /// Changes since the graph was last saved; [`NEVER_SAVED`] for a new graph.
    unsaved: usize,
}

impl<F> LoadedIndex<F> {
    fn add_fields(&mut self, partition: Partition<F>, key: u64, fields: F) {
        if let Some(partition) = partition(&fields) {
            self.partitions
                .entry(partition.to_owned())
                .or_default()
                .insert(key);
        }
        self.fields.insert(key, fields);
    }

    fn remove_fields(&mut self, partition: Partition<F>, key: u64) {
        let Some(fields) = self.fields.remove(&key) else {
            return;
        };
        if let Some(partition) = partition(&fields)
            && let Some(keys) = self.partitions.get_mut(partition)
        {
            keys.remove(&key);
            if keys.is_empty() {
                self.partitions.remove(partition);
            }
        }
    }

    fn set_fields(&mut self, partition: Partition<F>, fields: HashMap<u64, F>) {
        self.fields = HashMap::with_capacity(fields.len());
        self.partitions.clear();
        for (key, fields) in fields {
            self.add_fields(partition, key, fields);
        }
    }
}

/// A poisoned lock only means another thread panicked mid-call; the index is
/// then behind the store at worst, and the next search reconciles it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|p| p.into_inner())
}

fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|p| p.into_inner())
}

impl<K: CollectionKey, F: Send + Sync + 'static> DerivedIndexes<K, F> {
    pub fn new(dir: PathBuf, hnsw_threshold: usize, partition: Partition<F>) -> Self {
        Self {
            collections: Mutex::default(),
            partition,
            dir,
            hnsw_threshold,
        }
    }

    fn get(&self, key: &K, dimension: usize) -> SharedIndex<F> {
        let mut collections = lock(&self.collections);
        Arc::clone(collections.entry(key.clone()).or_insert_with(|| {
            Arc::new(RwLock::new(LoadedIndex {
                version: None,
                index: VectorIndex::exact(dimension),
                fields: HashMap::new(),
                partitions: HashMap::new(),
                unsaved: 0,
            }))
        }))
    }

    fn graph_dir(&self, key: &K) -> PathBuf {
        self.dir.join(key.folder_name())
    }

    /// Runs `write`, which changes the collection's rows, bumps its version
    /// and commits, returning the new version and what it changed; all the
    /// while holding the collection's index lock. Then applies the change to
    /// the index when the index was at `before`, or leaves it to be
    /// reconciled.
    pub fn commit_change<E: From<HnswError>>(
        &self,
        key: &K,
        before: CollectionState,
        write_rows: impl FnOnce() -> Result<(i64, Change<F>), E>,
    ) -> Result<(), E> {
        let loaded = self.get(key, before.dimension as usize);
        let mut loaded = write(&loaded);
        let (version, applied) = write_rows()?;
        if loaded.version != Some(before.version) {
            return Ok(());
        }
        Ok(self.apply(key, &mut loaded, version, applied)?)
    }

    /// Applies a committed change to an index that was at the version before
    /// it.
    fn apply(
        &self,
        key: &K,
        loaded: &mut LoadedIndex<F>,
        version: i64,
        applied: Change<F>,
    ) -> Result<(), HnswError> {
        // Committed: from here a failure leaves the index behind the store,
        // and the next search reconciles it.
        loaded.version = None;
        loaded.unsaved = loaded
            .unsaved
            .saturating_add(applied.removed.len() + applied.added.len());
        for key in applied.removed {
            loaded.index.remove(key)?;
            loaded.remove_fields(self.partition, key);
        }
        let items: Vec<(u64, &[f32])> = applied
            .added
            .iter()
            .map(|(key, vector, _)| (*key, vector.as_slice()))
            .collect();
        loaded.index.insert_many(&items)?;
        for (key, _, fields) in applied.added {
            loaded.add_fields(self.partition, key, fields);
        }
        loaded.version = Some(version);
        self.after_change(key, loaded)
    }

    /// Applies a change its store has already committed, which moved the
    /// collection from `before` to version `after`: when the index is at
    /// `before`, it follows in place; otherwise it is left to be reconciled
    /// at the next search. For stores whose writes cannot run under the
    /// index's lock (an async driver): two changes that commit in one order
    /// and arrive in the other leave the index behind, never wrong.
    pub fn follow(
        &self,
        key: &K,
        before: CollectionState,
        after: i64,
        change: Change<F>,
    ) -> Result<(), HnswError> {
        let loaded = self.get(key, before.dimension as usize);
        let mut loaded = write(&loaded);
        if loaded.version != Some(before.version) {
            return Ok(());
        }
        self.apply(key, &mut loaded, after, change)
    }

    /// The nearest keys whose fields `accept` admits, best first, each turned
    /// into a result by `map`; the index is reconciled through `source` first
    /// when it is behind `state`.
    pub fn search<R, S: IndexSource<K, F>>(
        &self,
        source: &mut S,
        key: &K,
        state: CollectionState,
        nearest: Nearest<'_>,
        accept: impl Fn(&F) -> bool,
        map: impl Fn(Neighbour, &F) -> R,
    ) -> Result<Vec<R>, S::Error> {
        let loaded = self.get(key, state.dimension as usize);
        if read(&loaded).version != Some(state.version) {
            let mut writable = write(&loaded);
            if writable.version != Some(state.version) {
                self.reconcile(source, key, &mut writable)?;
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
            Some(Some(keys)) => loaded.index.search(nearest.vector, nearest.top_k, |k| {
                keys.contains(&k) && accepted(k)
            })?,
            None => loaded
                .index
                .search(nearest.vector, nearest.top_k, accepted)?,
        };
        Ok(neighbours
            .into_iter()
            .filter_map(|n| loaded.fields.get(&n.key).map(|fields| map(n, fields)))
            .collect())
    }

    /// Forgets a collection's index and its saved graph, both rebuilt from
    /// the store at the next search: a graph only marks removed vectors, so
    /// after an erasure it must not be kept. Returns whether a saved graph
    /// was deleted.
    pub fn drop_collection(&self, key: &K) -> std::io::Result<bool> {
        let mut collections = lock(&self.collections);
        collections.remove(key);
        match std::fs::remove_dir_all(self.graph_dir(key)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Brings `loaded` to the collection's current rows: see the module comment.
    fn reconcile<S: IndexSource<K, F>>(
        &self,
        source: &mut S,
        key: &K,
        loaded: &mut LoadedIndex<F>,
    ) -> Result<(), S::Error> {
        let Some(state) = source.state(key)? else {
            return Ok(());
        };
        let dimension = state.dimension as usize;
        let fields = source.fields(key)?;
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
                    VectorIndex::graph(dimension)?
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
            loaded.index.remove(*k)?;
        }
        let missing: Vec<u64> = fields
            .keys()
            .filter(|k| !loaded.index.contains(**k))
            .copied()
            .collect();
        let mut vectors = Vec::with_capacity(missing.len());
        for batch in missing.chunks(500) {
            vectors.extend(source.vectors(batch)?);
        }
        let items: Vec<(u64, &[f32])> = vectors.iter().map(|(k, v)| (*k, v.as_slice())).collect();
        loaded.index.insert_many(&items)?;
        loaded.set_fields(self.partition, fields);
        loaded.version = Some(state.version);
        loaded.unsaved = loaded.unsaved.saturating_add(stale.len() + missing.len());
        self.after_change(key, loaded)?;
        tracing::debug!(
            collection = %key.folder_name(), vectors = loaded.index.len(),
            removed = stale.len(), added = missing.len(), graph = loaded.index.is_hnsw(),
            "reconciled vector index"
        );
        Ok(())
    }

    /// Switches a grown collection to a graph, and saves the graph when enough
    /// has changed since it was last saved. A failed save costs only a longer
    /// rebuild after the next restart, so it is logged, not returned.
    fn after_change(&self, key: &K, loaded: &mut LoadedIndex<F>) -> Result<(), HnswError> {
        if loaded.index.switch_if_large(self.hnsw_threshold)? {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A store held in memory: rows of (key → vector, user), and a version.
    #[derive(Default)]
    struct Rows {
        rows: HashMap<u64, (Vec<f32>, String)>,
        version: i64,
        reads: usize,
    }

    impl IndexSource<(u32, u32), String> for Rows {
        type Error = HnswError;

        fn state(&mut self, _: &(u32, u32)) -> Result<Option<CollectionState>, HnswError> {
            self.reads += 1;
            Ok(Some(self.current()))
        }

        fn fields(&mut self, _: &(u32, u32)) -> Result<HashMap<u64, String>, HnswError> {
            Ok(self
                .rows
                .iter()
                .map(|(k, (_, user))| (*k, user.clone()))
                .collect())
        }

        fn vectors(&mut self, keys: &[u64]) -> Result<Vec<(u64, Vec<f32>)>, HnswError> {
            Ok(keys.iter().map(|k| (*k, self.rows[k].0.clone())).collect())
        }
    }

    impl Rows {
        fn current(&self) -> CollectionState {
            CollectionState {
                dimension: 2,
                version: self.version,
            }
        }
    }

    fn axis(i: usize) -> Vec<f32> {
        let mut v = vec![0.0; 2];
        v[i] = 1.0;
        v
    }

    #[allow(clippy::ptr_arg)] // it must be a `Partition<String>`
    fn user(fields: &String) -> Option<&str> {
        Some(fields)
    }

    fn nearest_keys(
        indexes: &DerivedIndexes<(u32, u32), String>,
        rows: &mut Rows,
        within: Option<&str>,
    ) -> Vec<u64> {
        let state = rows.current();
        let query = axis(0);
        let nearest = Nearest {
            vector: &query,
            top_k: 10,
            within,
        };
        indexes
            .search(rows, &(1, 1), state, nearest, |_| true, |n, _| n.key)
            .unwrap()
    }

    #[test]
    fn an_index_behind_the_rows_is_reconciled_and_one_in_step_is_not_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let indexes = DerivedIndexes::new(dir.path().to_owned(), 1000, user);
        let mut rows = Rows::default();
        rows.rows.insert(1, (axis(0), "ann".into()));
        rows.rows.insert(2, (axis(1), "bob".into()));
        rows.version = 1;
        assert_eq!(nearest_keys(&indexes, &mut rows, None), vec![1, 2]);
        assert_eq!(nearest_keys(&indexes, &mut rows, Some("bob")), vec![2]);
        assert_eq!(
            nearest_keys(&indexes, &mut rows, Some("cyd")),
            Vec::<u64>::new()
        );
        let reads = rows.reads;

        // Another process removed 1 and added 3: the version says so.
        rows.rows.remove(&1);
        rows.rows.insert(3, (axis(0), "ann".into()));
        rows.version = 2;
        assert_eq!(nearest_keys(&indexes, &mut rows, None), vec![3, 2]);
        assert_eq!(rows.reads, reads + 1, "reconciled once");

        // This process's own change follows in step, with no read.
        let before = rows.current();
        indexes
            .commit_change(&(1, 1), before, || {
                rows.rows.remove(&3);
                rows.version = 3;
                Ok::<_, HnswError>((
                    3,
                    Change {
                        removed: vec![3],
                        added: vec![],
                    },
                ))
            })
            .unwrap();
        let reads = rows.reads;
        assert_eq!(nearest_keys(&indexes, &mut rows, None), vec![2]);
        assert_eq!(rows.reads, reads, "the index was in step: nothing read");
    }

    #[test]
    fn changes_followed_after_commit_apply_in_order_and_are_reconciled_out_of_order() {
        let dir = tempfile::tempdir().unwrap();
        let indexes = DerivedIndexes::new(dir.path().to_owned(), 1000, user);
        let mut rows = Rows::default();
        rows.rows.insert(1, (axis(0), "ann".into()));
        rows.version = 1;
        assert_eq!(nearest_keys(&indexes, &mut rows, None), vec![1]);

        // Committed 1 → 2, then followed: in step, nothing read.
        let at_one = rows.current();
        rows.rows.insert(2, (axis(1), "bob".into()));
        rows.version = 2;
        let added = vec![(2, axis(1), "bob".to_owned())];
        let change = Change {
            removed: vec![],
            added,
        };
        indexes.follow(&(1, 1), at_one, 2, change).unwrap();
        let reads = rows.reads;
        assert_eq!(nearest_keys(&indexes, &mut rows, None), vec![1, 2]);
        assert_eq!(rows.reads, reads, "followed in place");

        // Two commits, 2 → 3 and 3 → 4, whose follows arrive in the other
        // order: the later one finds the index behind and leaves it; the
        // earlier one applies; the next search reconciles the rest.
        let at_two = rows.current();
        rows.rows.insert(3, (axis(0), "cyd".into()));
        rows.version = 3;
        let at_three = rows.current();
        rows.rows.remove(&1);
        rows.version = 4;
        let removal = Change {
            removed: vec![1],
            added: vec![],
        };
        indexes.follow(&(1, 1), at_three, 4, removal).unwrap();
        let addition = Change {
            removed: vec![],
            added: vec![(3, axis(0), "cyd".to_owned())],
        };
        indexes.follow(&(1, 1), at_two, 3, addition).unwrap();
        let reads = rows.reads;
        assert_eq!(nearest_keys(&indexes, &mut rows, None), vec![3, 2]);
        assert_eq!(
            rows.reads,
            reads + 1,
            "behind by one change: reconciled once"
        );
    }

    #[test]
    fn a_failed_write_leaves_the_index_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let indexes = DerivedIndexes::new(dir.path().to_owned(), 1000, user);
        let mut rows = Rows::default();
        rows.rows.insert(1, (axis(0), "ann".into()));
        rows.version = 1;
        assert_eq!(nearest_keys(&indexes, &mut rows, None), vec![1]);
        let failed = indexes.commit_change(&(1, 1), rows.current(), || {
            Err::<(i64, Change<String>), _>(HnswError::Index("disk full".into()))
        });
        assert!(failed.is_err());
        let reads = rows.reads;
        assert_eq!(nearest_keys(&indexes, &mut rows, None), vec![1]);
        assert_eq!(rows.reads, reads);
    }
}
