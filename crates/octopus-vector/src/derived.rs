//! Vector indexes derived from a store's rows, one per collection, held in
//! this process: the machinery behind [`crate::EmbeddedVectors`], the embedded
//! implementation of the vector port (`octopus_core::vectors`, whose module
//! comment gives the version-and-reconcile rule this follows).
//!
//! A committed change is applied in place when the index reflects the
//! version the change started from ([`DerivedIndexes::follow`]). Otherwise
//! the index is reconciled in two steps, so that the rows can be read in
//! between by async code without holding a lock: [`DerivedIndexes::begin_reconcile`]
//! takes every key of the collection, removes the ones the rows no longer
//! have and names the missing ones; [`DerivedIndexes::finish_reconcile`] adds
//! their vectors.
//!
//! A collection's points (`points.rs`) use an HNSW graph once there are at
//! least `hnsw_threshold` of them, saved
//! under the collection's folder after it is built and after every
//! `max(1000, size / 10)` changes. A restart loads the saved graph and
//! reconciles only the difference; a graph that is missing or does not load
//! (a crash mid-save leaves none, never a torn one) is rebuilt from the rows.

use std::collections::HashMap;
use std::hash::Hash;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use octopus_core::vectors::{PointFields, PointFilter};

use crate::points::Points;
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

/// A collection as the store sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollectionState {
    pub dimension: u32,
    pub version: i64,
}

/// What a change did to the rows, for the index to follow.
pub struct Change {
    pub removed: Vec<u64>,
    pub added: Vec<(u64, Vec<f32>, PointFields)>,
}

/// What a search asks for: the `top_k` nearest neighbours of `vector` that
/// `filter` admits.
pub struct Nearest<'a> {
    pub vector: &'a [f32],
    pub top_k: usize,
    pub filter: &'a PointFilter,
}

/// The in-memory indexes of the collections searched so far, with the
/// fields a search can filter on kept beside each key.
pub struct DerivedIndexes<K: CollectionKey> {
    collections: Mutex<HashMap<K, SharedIndex>>,
    /// Where graphs are saved, one folder per collection.
    dir: PathBuf,
    hnsw_threshold: usize,
}

type SharedIndex = Arc<RwLock<LoadedIndex>>;

/// One collection's vectors and the filterable fields of its keys.
struct LoadedIndex {
    /// The collection version the index reflects; `None` until built.
    version: Option<i64>,
    points: Points,
    /// Changes since the graph was last saved; [`NEVER_SAVED`] for a new graph.
    unsaved: usize,
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

impl<K: CollectionKey> DerivedIndexes<K> {
    pub fn new(dir: PathBuf, hnsw_threshold: usize) -> Self {
        Self {
            collections: Mutex::default(),
            dir,
            hnsw_threshold,
        }
    }

    fn get(&self, key: &K, dimension: usize) -> SharedIndex {
        let mut collections = lock(&self.collections);
        Arc::clone(collections.entry(key.clone()).or_insert_with(|| {
            Arc::new(RwLock::new(LoadedIndex {
                version: None,
                points: Points::new(dimension),
                unsaved: 0,
            }))
        }))
    }

    fn graph_dir(&self, key: &K) -> PathBuf {
        self.dir.join(key.folder_name())
    }

    /// Applies a committed change to an index that was at the version before
    /// it.
    fn apply(
        &self,
        key: &K,
        loaded: &mut LoadedIndex,
        version: i64,
        applied: Change,
    ) -> Result<(), HnswError> {
        // Committed: from here a failure leaves the index behind the store,
        // and the next search reconciles it.
        loaded.version = None;
        loaded.unsaved = loaded
            .unsaved
            .saturating_add(applied.removed.len() + applied.added.len());
        for key in applied.removed {
            loaded.points.remove(key)?;
        }
        let items: Vec<(u64, &[f32], &PointFields)> = applied
            .added
            .iter()
            .map(|(key, vector, fields)| (*key, vector.as_slice(), fields))
            .collect();
        loaded.points.insert(&items)?;
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
        change: Change,
    ) -> Result<(), HnswError> {
        let loaded = self.get(key, before.dimension as usize);
        let mut loaded = write(&loaded);
        // A collection at version 0 has no rows: an empty index not yet
        // built reflects it.
        if before.version == 0 && loaded.version.is_none() && loaded.points.is_empty() {
            loaded.version = Some(0);
        }
        if loaded.version != Some(before.version) {
            return Ok(());
        }
        self.apply(key, &mut loaded, after, change)
    }

    /// The version the collection's index reflects; `None` when it is not
    /// built (never searched here, or left mid-change).
    pub fn version(&self, key: &K) -> Option<i64> {
        let collections = lock(&self.collections);
        collections.get(key).and_then(|loaded| read(loaded).version)
    }

    /// Whether the collection's index reflects `version`.
    pub fn is_at(&self, key: &K, version: i64) -> bool {
        let collections = lock(&self.collections);
        collections
            .get(key)
            .is_some_and(|loaded| read(loaded).version == Some(version))
    }

    /// The nearest keys that the search's filter admits, best first; nothing
    /// for a collection not loaded.
    pub fn nearest(&self, key: &K, nearest: Nearest<'_>) -> Result<Vec<Neighbour>, HnswError> {
        let Some(loaded) = lock(&self.collections).get(key).map(Arc::clone) else {
            return Ok(Vec::new());
        };
        let loaded = read(&loaded);
        loaded
            .points
            .search(nearest.vector, nearest.top_k, nearest.filter)
    }

    /// Lets every loaded collection go of capacity grown for inserts, one
    /// collection locked at a time.
    pub fn shrink_to_fit(&self) {
        let loaded: Vec<SharedIndex> = lock(&self.collections).values().cloned().collect();
        for index in loaded {
            write(&index).points.shrink_to_fit();
        }
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

    /// The first half of a reconcile (see the module comment): given every
    /// key of the collection with its fields, read at `state` or later,
    /// removes the keys the rows no longer have and returns those the index
    /// lacks, whose vectors [`Self::finish_reconcile`] then takes. Until then
    /// the index reflects no version, so follows leave it alone. Callers run
    /// one reconcile of a collection at a time.
    pub fn begin_reconcile(
        &self,
        key: &K,
        state: CollectionState,
        fields: &HashMap<u64, PointFields>,
    ) -> Result<Vec<u64>, HnswError> {
        let dimension = state.dimension as usize;
        let loaded = self.get(key, dimension);
        let mut loaded = write(&loaded);
        if loaded.version.is_none()
            && loaded.points.is_empty()
            && fields.len() >= self.hnsw_threshold
        {
            let dir = self.graph_dir(key);
            match VectorIndex::load(&dir, dimension) {
                Ok(graph) => loaded.points.adopt(graph, fields)?,
                Err(error) => {
                    if dir.exists() {
                        tracing::warn!(%error, path = %dir.display(), "saved vector index unusable; rebuilding it");
                    }
                    // Large already: build the graph directly from the rows.
                    loaded.unsaved = NEVER_SAVED;
                    *loaded.points.index_mut() = VectorIndex::graph(dimension)?;
                }
            }
        }
        loaded.version = None;
        let stale: Vec<u64> = loaded
            .points
            .keys()
            .filter(|k| !fields.contains_key(k))
            .collect();
        for k in &stale {
            loaded.points.remove(*k)?;
        }
        loaded.unsaved = loaded.unsaved.saturating_add(stale.len());
        Ok(fields
            .keys()
            .filter(|k| !loaded.points.holds(**k))
            .copied()
            .collect())
    }

    /// The second half of a reconcile: adds the missing vectors, keeps the
    /// fields of the keys the index now holds, and marks the index as
    /// reflecting `version`.
    pub fn finish_reconcile(
        &self,
        key: &K,
        state: CollectionState,
        fields: &HashMap<u64, PointFields>,
        vectors: Vec<(u64, Vec<f32>)>,
    ) -> Result<(), HnswError> {
        let loaded = self.get(key, state.dimension as usize);
        let mut loaded = write(&loaded);
        let added = vectors.len();
        // A key whose row went between the two reads has no vector: it is
        // left out, and the version the next search reads will differ.
        let items: Vec<(u64, &[f32], &PointFields)> = vectors
            .iter()
            .filter_map(|(k, v)| Some((*k, v.as_slice(), fields.get(k)?)))
            .collect();
        loaded.points.insert(&items)?;
        loaded.version = Some(state.version);
        loaded.unsaved = loaded.unsaved.saturating_add(added);
        self.after_change(key, &mut loaded)?;
        tracing::debug!(
            collection = %key.folder_name(), vectors = loaded.points.len(), added,
            graph = loaded.points.index().is_hnsw(), "reconciled vector index"
        );
        Ok(())
    }

    /// Switches a grown collection to a graph, and saves the graph when enough
    /// has changed since it was last saved. A failed save costs only a longer
    /// rebuild after the next restart, so it is logged, not returned.
    fn after_change(&self, key: &K, loaded: &mut LoadedIndex) -> Result<(), HnswError> {
        if loaded
            .points
            .index_mut()
            .switch_if_large(self.hnsw_threshold)?
        {
            loaded.unsaved = NEVER_SAVED;
        }
        let index = loaded.points.index();
        if index.is_hnsw() && loaded.unsaved >= (index.len() / 10).max(1000) {
            let dir = self.graph_dir(key);
            let saved = std::fs::create_dir_all(&self.dir)
                .map_err(|e| e.to_string())
                .and_then(|()| index.save(&dir).map_err(|e| e.to_string()));
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
        rows: HashMap<u64, (Vec<f32>, PointFields)>,
        version: i64,
        reconciles: usize,
    }

    impl Rows {
        fn current(&self) -> CollectionState {
            CollectionState {
                dimension: 2,
                version: self.version,
            }
        }

        /// What a caller of the index does before a search: reconcile it
        /// when it does not reflect the rows' version.
        fn bring_up_to_date(&mut self, indexes: &DerivedIndexes<(u32, u32)>) {
            let state = self.current();
            if indexes.is_at(&(1, 1), state.version) {
                return;
            }
            self.reconciles += 1;
            let fields: HashMap<u64, PointFields> = self
                .rows
                .iter()
                .map(|(k, (_, fields))| (*k, fields.clone()))
                .collect();
            let missing = indexes.begin_reconcile(&(1, 1), state, &fields).unwrap();
            let vectors = missing
                .iter()
                .map(|k| (*k, self.rows[k].0.clone()))
                .collect();
            indexes
                .finish_reconcile(&(1, 1), state, &fields, vectors)
                .unwrap();
        }
    }

    fn axis(i: usize) -> Vec<f32> {
        let mut v = vec![0.0; 2];
        v[i] = 1.0;
        v
    }

    fn user(name: &str) -> PointFields {
        PointFields {
            partition: Some(name.to_owned()),
            ..PointFields::default()
        }
    }

    fn nearest_keys(
        indexes: &DerivedIndexes<(u32, u32)>,
        rows: &mut Rows,
        within: Option<&str>,
    ) -> Vec<u64> {
        rows.bring_up_to_date(indexes);
        let query = axis(0);
        let filter = PointFilter {
            partition: within.map(str::to_owned),
            ..PointFilter::default()
        };
        let nearest = Nearest {
            vector: &query,
            top_k: 10,
            filter: &filter,
        };
        indexes
            .nearest(&(1, 1), nearest)
            .unwrap()
            .into_iter()
            .map(|n| n.key)
            .collect()
    }

    #[test]
    fn changes_followed_after_commit_apply_in_order_and_are_reconciled_out_of_order() {
        let dir = tempfile::tempdir().unwrap();
        let indexes = DerivedIndexes::new(dir.path().to_owned(), 1000);
        let mut rows = Rows::default();
        rows.rows.insert(1, (axis(0), user("ann")));
        rows.version = 1;
        assert_eq!(nearest_keys(&indexes, &mut rows, None), vec![1]);
        assert_eq!(
            nearest_keys(&indexes, &mut rows, Some("cyd")),
            Vec::<u64>::new()
        );

        // Committed 1 → 2, then followed: in step, nothing read.
        let at_one = rows.current();
        rows.rows.insert(2, (axis(1), user("bob")));
        rows.version = 2;
        let added = vec![(2, axis(1), user("bob"))];
        let change = Change {
            removed: vec![],
            added,
        };
        indexes.follow(&(1, 1), at_one, 2, change).unwrap();
        let reconciles = rows.reconciles;
        assert_eq!(nearest_keys(&indexes, &mut rows, None), vec![1, 2]);
        assert_eq!(nearest_keys(&indexes, &mut rows, Some("bob")), vec![2]);
        assert_eq!(rows.reconciles, reconciles, "followed in place");

        // Two commits, 2 → 3 and 3 → 4, whose follows arrive in the other
        // order: the later one finds the index behind and leaves it; the
        // earlier one applies; the next search reconciles the rest.
        let at_two = rows.current();
        rows.rows.insert(3, (axis(0), user("cyd")));
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
            added: vec![(3, axis(0), user("cyd"))],
        };
        indexes.follow(&(1, 1), at_two, 3, addition).unwrap();
        assert_eq!(nearest_keys(&indexes, &mut rows, None), vec![3, 2]);
        assert_eq!(
            rows.reconciles,
            reconciles + 1,
            "behind by one change: reconciled once"
        );
    }

    #[test]
    fn a_reconcile_that_read_newer_rows_than_its_version_converges() {
        let dir = tempfile::tempdir().unwrap();
        let indexes = DerivedIndexes::new(dir.path().to_owned(), 1000);
        let mut rows = Rows::default();
        rows.rows.insert(1, (axis(0), user("ann")));
        rows.version = 1;
        // The rows read hold change 1 → 2 (key 2), but the index records 1.
        let state = rows.current();
        rows.rows.insert(2, (axis(1), user("bob")));
        rows.version = 2;
        let fields = HashMap::from([(1, user("ann")), (2, user("bob"))]);
        let missing = indexes.begin_reconcile(&(1, 1), state, &fields).unwrap();
        let vectors = missing
            .iter()
            .map(|k| (*k, rows.rows[k].0.clone()))
            .collect();
        indexes
            .finish_reconcile(&(1, 1), state, &fields, vectors)
            .unwrap();
        // The change's own follow arrives: applying key 2 again is harmless.
        let change = Change {
            removed: vec![],
            added: vec![(2, axis(1), user("bob"))],
        };
        indexes.follow(&(1, 1), state, 2, change).unwrap();
        assert!(indexes.is_at(&(1, 1), 2));
        assert_eq!(nearest_keys(&indexes, &mut rows, None), vec![1, 2]);
    }

    #[test]
    fn a_large_collection_becomes_a_graph_saved_and_loaded_after_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let mut rows = Rows::default();
        for k in 0..40u64 {
            // Far enough apart for bfloat16 (a tenth of a radian), under a turn.
            let angle = k as f32 / 10.0;
            // Without a partition, as knowledge chunks.
            rows.rows
                .insert(k, (vec![angle.cos(), angle.sin()], PointFields::default()));
        }
        rows.version = 1;
        let indexes = DerivedIndexes::new(dir.path().to_owned(), 10);
        assert_eq!(nearest_keys(&indexes, &mut rows, None)[0], 0);
        assert!(
            dir.path().join("1-1").exists(),
            "a new graph is saved at once"
        );
        let restarted = DerivedIndexes::new(dir.path().to_owned(), 10);
        assert_eq!(nearest_keys(&restarted, &mut rows, None).len(), 10);
        assert!(nearest_keys(&restarted, &mut rows, Some("ann")).is_empty());
    }
}
