//! One collection's index: exact while small, HNSW once large, switching by
//! itself at a size measured by `octopus-bench vectors`.

use std::path::Path;

use crate::top_k::TopK;
use crate::{ExactIndex, HnswError, HnswIndex, HnswParams, Neighbour};

/// Below this many vectors a scan is exact and cheap next to embedding the
/// query (~5 ms). `octopus-bench vectors` on real MiniLM vectors: exact p50
/// 0.25 ms at 5k, 1.03 ms at 20k, 6.8 ms at 50k (out of cache); HNSW 0.09,
/// 0.19 and 0.30 ms at recall@10 0.98 to 0.97.
pub const DEFAULT_HNSW_THRESHOLD: usize = 20_000;

pub enum VectorIndex {
    Exact(ExactIndex),
    Hnsw(HnswIndex),
}

impl VectorIndex {
    pub fn exact(dimension: usize) -> Self {
        Self::Exact(ExactIndex::new(dimension))
    }

    /// An empty graph, for a collection known to be large: filling it directly
    /// skips building an exact index first and copying it over.
    pub fn graph(dimension: usize) -> Result<Self, HnswError> {
        HnswIndex::new(dimension, HnswParams::default()).map(Self::Hnsw)
    }

    /// A saved graph, when there is one that loads.
    pub fn load(dir: &Path, dimension: usize) -> Result<Self, HnswError> {
        HnswIndex::load(dir, dimension, HnswParams::default()).map(Self::Hnsw)
    }

    pub fn is_hnsw(&self) -> bool {
        matches!(self, Self::Hnsw(_))
    }

    pub fn len(&self) -> usize {
        match self {
            Self::Exact(index) => index.len(),
            Self::Hnsw(index) => index.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lets go of spare capacity; a graph keeps what it has (usearch grows
    /// it in steps and saves or maps it whole).
    pub fn shrink_to_fit(&mut self) {
        if let Self::Exact(index) = self {
            index.shrink_to_fit();
        }
    }

    pub fn contains(&self, key: u64) -> bool {
        match self {
            Self::Exact(index) => index.contains(key),
            Self::Hnsw(index) => index.contains(key),
        }
    }

    pub fn keys(&self) -> Vec<u64> {
        match self {
            Self::Exact(index) => index.keys().collect(),
            Self::Hnsw(index) => index.keys().collect(),
        }
    }

    pub fn insert_many(&mut self, items: &[(u64, &[f32])]) -> Result<(), HnswError> {
        match self {
            Self::Exact(index) => {
                items.iter().for_each(|(key, v)| index.insert(*key, v));
                Ok(())
            }
            // Single inserts run on the caller's thread; a bulk load uses both cores.
            Self::Hnsw(index) if items.len() < 256 => items
                .iter()
                .try_for_each(|(key, vector)| index.insert(*key, vector)),
            Self::Hnsw(index) => index.insert_many(items, 2),
        }
    }

    pub fn remove(&mut self, key: u64) -> Result<bool, HnswError> {
        match self {
            Self::Exact(index) => Ok(index.remove(key)),
            Self::Hnsw(index) => index.remove(key),
        }
    }

    /// Turns an exact index of at least `threshold` vectors into a graph.
    /// Returns whether it did.
    pub fn switch_if_large(&mut self, threshold: usize) -> Result<bool, HnswError> {
        let Self::Exact(exact) = self else {
            return Ok(false);
        };
        if exact.len() < threshold {
            return Ok(false);
        }
        let mut graph = HnswIndex::new(exact.dimension(), HnswParams::default())?;
        let entries: Vec<(u64, Vec<f32>)> = exact.entries().collect();
        let items: Vec<(u64, &[f32])> = entries.iter().map(|(k, v)| (*k, v.as_slice())).collect();
        graph.insert_many(&items, 2)?;
        *self = Self::Hnsw(graph);
        Ok(true)
    }

    /// The `k` most similar vectors whose key `accept`s, best first. A graph
    /// filtered down to a few keys can miss some of them; then the accepted
    /// keys are scored one by one, so a narrow filter never loses a match.
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        accept: impl Fn(u64) -> bool,
    ) -> Result<Vec<Neighbour>, HnswError> {
        match self {
            Self::Exact(index) => Ok(index.search(query, k, accept)),
            Self::Hnsw(index) => {
                let hits = index.search(query, k, &accept)?;
                if hits.len() >= k.min(index.len()) {
                    return Ok(hits);
                }
                Ok(score_one_by_one(index, query, k, accept))
            }
        }
    }

    pub fn save(&self, dir: &Path) -> Result<(), HnswError> {
        match self {
            Self::Exact(_) => Ok(()),
            Self::Hnsw(index) => index.save(dir),
        }
    }
}

/// The `k` most similar vectors of `graph` whose key `accept`s, scored one
/// by one: for a filter so narrow that a filtered walk of the graph missed
/// some of them.
fn score_one_by_one(
    graph: &HnswIndex,
    query: &[f32],
    k: usize,
    accept: impl Fn(u64) -> bool,
) -> Vec<Neighbour> {
    let mut best = TopK::new(k);
    for key in graph.keys().filter(|key| accept(*key)) {
        if let Some(vector) = graph.vector(key) {
            best.push(key, crate::dot(query, &vector));
        }
    }
    best.into_sorted()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(key: u64) -> Vec<f32> {
        let angle = key as f32 * 0.7;
        vec![angle.cos(), angle.sin()]
    }

    #[test]
    fn switches_at_the_threshold_and_keeps_answering_the_same() {
        let mut index = VectorIndex::exact(2);
        let items: Vec<(u64, Vec<f32>)> = (0..300).map(|k| (k, vector(k))).collect();
        let refs: Vec<(u64, &[f32])> = items.iter().map(|(k, v)| (*k, v.as_slice())).collect();
        index.insert_many(&refs).unwrap();
        let before = index.search(&vector(42), 1, |_| true).unwrap();
        assert!(!index.switch_if_large(301).unwrap() && !index.is_hnsw());
        assert!(index.switch_if_large(300).unwrap() && index.is_hnsw());
        assert_eq!(index.len(), 300);
        assert_eq!(
            index.search(&vector(42), 1, |_| true).unwrap()[0].key,
            before[0].key
        );
    }

    #[test]
    fn a_narrow_filter_on_the_graph_still_finds_every_match() {
        let mut index = VectorIndex::exact(2);
        let items: Vec<(u64, Vec<f32>)> = (0..2000).map(|k| (k, vector(k))).collect();
        let refs: Vec<(u64, &[f32])> = items.iter().map(|(k, v)| (*k, v.as_slice())).collect();
        index.insert_many(&refs).unwrap();
        index.switch_if_large(1).unwrap();
        let wanted = [3u64, 1500, 1999];
        let hits = index
            .search(&vector(0), 10, |key| wanted.contains(&key))
            .unwrap();
        let mut keys: Vec<u64> = hits.iter().map(|h| h.key).collect();
        keys.sort();
        assert_eq!(keys, wanted);
    }
}
