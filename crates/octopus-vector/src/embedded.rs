//! The embedded implementation of the vector port. Knowledge sets are
//! indexed in this process, derived from the relational rows
//! ([`crate::derived`]): exact while small and an HNSW graph from
//! `hnsw_threshold` vectors on, the graphs saved in a folder so that a
//! restart does not rebuild them. Memory sets are not held at all: their
//! searches keep to one user and scan that user's rows
//! ([`octopus_core::memory_rows::search_rows`]),
//! so the process's memory does not grow with the messages stored.
//!
//! Changing an index (inserting into a graph, reconciling) is CPU-bound and
//! can take long, so it runs on tokio's blocking threads; a search, short,
//! runs where it is awaited.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use octopus_core::vectors::{
    Nearest, ScoredKey, SetState, VectorChange, VectorIndex, VectorKind, VectorRows, VectorSet,
};
use octopus_core::{Error, Result};

use crate::HnswError;
use crate::derived::{Change, CollectionKey, CollectionState, DerivedIndexes};

/// Knowledge graphs are saved under `{dir}/{tenant}-{agent}`.
impl CollectionKey for VectorSet {
    fn folder_name(&self) -> String {
        format!("{}-{}", self.tenant, self.agent)
    }
}

/// Whether this index holds a copy of the set; otherwise its searches read
/// the rows.
fn holds(set: &VectorSet) -> bool {
    set.kind == VectorKind::Knowledge
}

/// The vector port in this process.
pub struct EmbeddedVectors {
    indexes: Arc<DerivedIndexes<VectorSet>>,
    /// One reconcile of a set at a time: two would read the same rows twice.
    reconciling: tokio::sync::Mutex<HashMap<VectorSet, Arc<tokio::sync::Mutex<()>>>>,
}

impl EmbeddedVectors {
    pub fn new(dir: PathBuf, hnsw_threshold: usize) -> Self {
        Self {
            indexes: Arc::new(DerivedIndexes::new(dir, hnsw_threshold)),
            reconciling: tokio::sync::Mutex::default(),
        }
    }

    async fn reconcile_lock(&self, set: VectorSet) -> Arc<tokio::sync::Mutex<()>> {
        Arc::clone(self.reconciling.lock().await.entry(set).or_default())
    }

    /// Reconciles the set's index unless it is at `state`, one reconcile of
    /// a set at a time.
    async fn reconcile_if_behind(
        &self,
        set: VectorSet,
        state: SetState,
        rows: &dyn VectorRows,
    ) -> Result<()> {
        if !self.indexes.is_at(&set, state.version) {
            let lock = self.reconcile_lock(set).await;
            let _one_at_a_time = lock.lock().await;
            if !self.indexes.is_at(&set, state.version) {
                self.reconcile_from(set, collection_state(state), rows)
                    .await?;
            }
        }
        Ok(())
    }

    /// Brings the set's index to the rows, reading them after `state`.
    async fn reconcile_from(
        &self,
        set: VectorSet,
        state: CollectionState,
        rows: &dyn VectorRows,
    ) -> Result<()> {
        let fields = Arc::new(rows.vector_fields(set).await?);
        let indexes = Arc::clone(&self.indexes);
        let read = Arc::clone(&fields);
        let missing = blocking(move || indexes.begin_reconcile(&set, state, &read)).await?;
        let mut vectors = Vec::with_capacity(missing.len());
        for batch in missing.chunks(500) {
            vectors.extend(rows.vectors(set, batch).await?);
        }
        let indexes = Arc::clone(&self.indexes);
        blocking(move || indexes.finish_reconcile(&set, state, &fields, vectors)).await
    }
}

fn collection_state(state: SetState) -> CollectionState {
    CollectionState {
        dimension: state.dimension,
        version: state.version,
    }
}

/// Runs index work on a blocking thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, HnswError> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(Error::backend)?
        .map_err(Error::backend)
}

#[async_trait]
impl VectorIndex for EmbeddedVectors {
    fn name(&self) -> &'static str {
        "embedded"
    }

    async fn release_spare_memory(&self) {
        let indexes = Arc::clone(&self.indexes);
        let shrunk = tokio::task::spawn_blocking(move || indexes.shrink_to_fit()).await;
        if let Err(error) = shrunk {
            tracing::warn!(%error, "shrinking the vector indexes failed");
        }
    }

    async fn copy_versions(&self, sets: &[VectorSet]) -> Result<Vec<Option<i64>>> {
        // Only the sets built in this process: one not searched yet is built
        // from the rows by its first search, and building every set here
        // would hold them all in memory.
        Ok(sets.iter().map(|set| self.indexes.version(set)).collect())
    }

    async fn reconcile(
        &self,
        set: VectorSet,
        state: SetState,
        rows: &dyn VectorRows,
    ) -> Result<bool> {
        if holds(&set) {
            self.reconcile_if_behind(set, state, rows).await?;
        }
        Ok(true)
    }

    async fn follow(
        &self,
        set: VectorSet,
        before: SetState,
        after: i64,
        change: VectorChange,
    ) -> Result<()> {
        if !holds(&set) {
            return Ok(());
        }
        let change = Change {
            removed: change.removed,
            added: change
                .added
                .into_iter()
                .map(|p| (p.key, p.vector, p.fields))
                .collect(),
        };
        let indexes = Arc::clone(&self.indexes);
        blocking(move || indexes.follow(&set, collection_state(before), after, change)).await
    }

    async fn search(
        &self,
        set: VectorSet,
        state: SetState,
        query: &Nearest,
        rows: &dyn VectorRows,
    ) -> Result<Vec<ScoredKey>> {
        if !holds(&set) {
            return octopus_core::memory_rows::search_rows(set, query, rows).await;
        }
        self.reconcile_if_behind(set, state, rows).await?;
        // On this thread: a search takes about a millisecond at most (a graph
        // walk, or an exact scan of fewer than `hnsw_threshold` vectors),
        // less than a hop to a blocking thread costs when the cores are busy.
        let nearest = crate::derived::Nearest {
            vector: &query.vector,
            top_k: query.top_k,
            filter: &query.filter,
        };
        let found = self
            .indexes
            .nearest(&set, nearest)
            .map_err(Error::backend)?;
        Ok(found
            .into_iter()
            .map(|n| ScoredKey {
                key: n.key,
                score: n.score,
            })
            .collect())
    }

    async fn erase(
        &self,
        set: VectorSet,
        _before: SetState,
        _after: i64,
        _change: VectorChange,
    ) -> Result<bool> {
        if !holds(&set) {
            return Ok(false);
        }
        // A graph only marks removed vectors: drop the set's index and saved
        // graph, rebuilt from the remaining rows at its next search.
        let indexes = Arc::clone(&self.indexes);
        tokio::task::spawn_blocking(move || indexes.drop_collection(&set))
            .await
            .map_err(Error::backend)?
            .map_err(Error::backend)
    }
}
