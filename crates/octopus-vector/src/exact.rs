//! Brute-force search over vectors held in one flat array.

use std::collections::HashMap;

use crate::top_k::TopK;
use crate::{Neighbour, bf16};

/// Every vector in one contiguous array, compared with every query.
///
/// Vectors are held in bfloat16, half the memory of f32: a cosine between
/// unit vectors moves by about 0.001 at most, far below the gaps between
/// relevant and irrelevant texts (`octopus-bench locomo` recall is unchanged).
#[derive(Clone, Debug)]
pub struct ExactIndex {
    dimension: usize,
    keys: Vec<u64>,
    vectors: Vec<u16>,
    positions: HashMap<u64, usize>,
}

impl ExactIndex {
    pub fn new(dimension: usize) -> Self {
        Self {
            dimension,
            keys: Vec::new(),
            vectors: Vec::new(),
            positions: HashMap::new(),
        }
    }

    pub fn dimension(&self) -> usize {
        self.dimension
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Adds or replaces the vector of `key`. Panics on a wrong dimension: callers
    /// check dimensions where the input arrives.
    pub fn insert(&mut self, key: u64, vector: &[f32]) {
        assert_eq!(vector.len(), self.dimension, "vector dimension");
        match self.positions.get(&key) {
            Some(&at) => bf16::round_into(
                vector,
                &mut self.vectors[at * self.dimension..(at + 1) * self.dimension],
            ),
            None => {
                self.positions.insert(key, self.keys.len());
                self.keys.push(key);
                self.vectors.extend(vector.iter().map(|&x| bf16::round(x)));
            }
        }
    }

    /// Lets go of capacity grown for inserts that are over.
    pub fn shrink_to_fit(&mut self) {
        self.keys.shrink_to_fit();
        self.vectors.shrink_to_fit();
        self.positions.shrink_to_fit();
    }

    pub fn contains(&self, key: u64) -> bool {
        self.positions.contains_key(&key)
    }

    /// The stored vector of `key`, as held (rounded to bfloat16).
    pub fn vector(&self, key: u64) -> Option<Vec<f32>> {
        let at = *self.positions.get(&key)?;
        Some(bf16::widen(
            &self.vectors[at * self.dimension..(at + 1) * self.dimension],
        ))
    }

    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.keys.iter().copied()
    }

    /// Every key with its vector, as held (rounded to bfloat16).
    pub fn entries(&self) -> impl Iterator<Item = (u64, Vec<f32>)> + '_ {
        self.keys
            .iter()
            .copied()
            .zip(self.vectors.chunks_exact(self.dimension).map(bf16::widen))
    }

    /// Removes `key`; false when it was not there.
    pub fn remove(&mut self, key: u64) -> bool {
        let Some(at) = self.positions.remove(&key) else {
            return false;
        };
        let last = self.keys.len() - 1;
        if at != last {
            let moved = self.keys[last];
            self.keys.swap(at, last);
            let (head, tail) = self.vectors.split_at_mut(last * self.dimension);
            head[at * self.dimension..(at + 1) * self.dimension]
                .copy_from_slice(&tail[..self.dimension]);
            self.positions.insert(moved, at);
        }
        self.keys.pop();
        self.vectors.truncate(last * self.dimension);
        true
    }

    /// The `k` most similar vectors whose key `accept`s, best first.
    pub fn search(&self, query: &[f32], k: usize, accept: impl Fn(u64) -> bool) -> Vec<Neighbour> {
        assert_eq!(query.len(), self.dimension, "query dimension");
        let mut best = TopK::new(k);
        for (key, vector) in self
            .keys
            .iter()
            .zip(self.vectors.chunks_exact(self.dimension))
        {
            if accept(*key) {
                best.push(*key, bf16::dot(query, vector));
            }
        }
        best.into_sorted()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn unit(v: Vec<f32>) -> Vec<f32> {
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
        v.into_iter().map(|x| x / norm).collect()
    }

    #[test]
    fn finds_the_nearest_and_respects_the_filter() {
        let mut index = ExactIndex::new(2);
        index.insert(1, &[1.0, 0.0]);
        index.insert(2, &[0.0, 1.0]);
        index.insert(3, &unit(vec![1.0, 1.0]));
        let hits = index.search(&[1.0, 0.0], 2, |_| true);
        assert_eq!(hits.iter().map(|h| h.key).collect::<Vec<_>>(), vec![1, 3]);
        let hits = index.search(&[1.0, 0.0], 2, |key| key != 1);
        assert_eq!(hits.iter().map(|h| h.key).collect::<Vec<_>>(), vec![3, 2]);
    }

    #[test]
    fn remove_keeps_the_rest_searchable() {
        let mut index = ExactIndex::new(2);
        for key in 0..5 {
            index.insert(key, &unit(vec![key as f32, 1.0]));
        }
        assert!(index.remove(0));
        assert!(!index.remove(0));
        assert_eq!(index.len(), 4);
        let hits = index.search(&unit(vec![4.0, 1.0]), 10, |_| true);
        assert_eq!(hits.len(), 4);
        assert_eq!(hits[0].key, 4);
        index.insert(4, &unit(vec![-1.0, 0.0]));
        assert_eq!(index.len(), 4, "insert of a present key replaces it");
        assert_eq!(index.search(&[-1.0, 0.0], 1, |_| true)[0].key, 4);
    }

    proptest! {
        #[test]
        fn search_agrees_with_sorting_every_score(
            vectors in proptest::collection::vec(proptest::collection::vec(-1.0f32..1.0, 8), 1..60),
            k in 1usize..20,
        ) {
            let mut index = ExactIndex::new(8);
            for (key, v) in vectors.iter().enumerate() {
                index.insert(key as u64, v);
            }
            let query = &vectors[0];
            // As held: rounded to bfloat16.
            let held = |v: &[f32]| {
                let mut rounded = vec![0; v.len()];
                bf16::round_into(v, &mut rounded);
                bf16::widen(&rounded)
            };
            let mut expected: Vec<(u64, f32)> = vectors.iter().enumerate().map(|(key, v)| (key as u64, crate::dot(query, &held(v)))).collect();
            expected.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            expected.truncate(k);
            let got: Vec<(u64, f32)> = index.search(query, k, |_| true).into_iter().map(|n| (n.key, n.score)).collect();
            prop_assert_eq!(got, expected);
        }
    }
}
