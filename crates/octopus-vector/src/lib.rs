//! Embedded vector indexes, keyed by `u64`.
//!
//! [`ExactIndex`] compares the query with every vector: exact, and the right
//! choice while a collection is small. [`HnswIndex`] walks a graph: approximate,
//! and far faster on large collections. Vectors are expected L2-normalised, so the
//! dot product is the cosine similarity.

#![forbid(unsafe_code)]

mod bf16;
mod collection;
pub mod derived;
mod embedded;
mod exact;
mod fields;
mod hnsw;
mod points;
mod top_k;

pub use collection::{DEFAULT_HNSW_THRESHOLD, VectorIndex};
pub use embedded::EmbeddedVectors;
pub use exact::ExactIndex;
pub use hnsw::{HnswError, HnswIndex, HnswParams};
/// Vectors are unit length, so this is their cosine similarity.
pub use octopus_core::vectors::dot;

/// One search result: the key, and its similarity to the query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Neighbour {
    pub key: u64,
    pub score: f32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_handles_tails() {
        let a: Vec<f32> = (0..13).map(|i| i as f32).collect();
        let expected: f32 = a.iter().map(|x| x * x).sum();
        assert_eq!(dot(&a, &a), expected);
    }
}
