//! Keeping the best `k` of a stream of scored keys.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::Neighbour;

/// Ordered worst-first, so the heap's top is the one to evict.
struct Worst(Neighbour);

impl PartialEq for Worst {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Worst {}

impl PartialOrd for Worst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Worst {
    fn cmp(&self, other: &Self) -> Ordering {
        // Lower score is "greater" (evicted first); ties broken by key for determinism.
        other
            .0
            .score
            .total_cmp(&self.0.score)
            .then(self.0.key.cmp(&other.0.key))
    }
}

pub(crate) struct TopK {
    k: usize,
    heap: BinaryHeap<Worst>,
}

impl TopK {
    pub fn new(k: usize) -> Self {
        Self {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    pub fn push(&mut self, key: u64, score: f32) {
        if self.k == 0 {
            return;
        }
        if self.heap.len() < self.k {
            self.heap.push(Worst(Neighbour { key, score }));
        } else if let Some(worst) = self.heap.peek()
            && score > worst.0.score
        {
            self.heap.pop();
            self.heap.push(Worst(Neighbour { key, score }));
        }
    }

    /// Best first.
    pub fn into_sorted(self) -> Vec<Neighbour> {
        let mut all: Vec<Neighbour> = self.heap.into_iter().map(|w| w.0).collect();
        all.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
        all
    }
}
