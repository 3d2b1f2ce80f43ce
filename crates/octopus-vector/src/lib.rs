//! Embedded vector indexes, keyed by `u64`.
//!
//! [`ExactIndex`] compares the query with every vector: exact, and the right
//! choice while a collection is small. [`HnswIndex`] walks a graph: approximate,
//! and far faster on large collections. Vectors are expected L2-normalised, so the
//! dot product is the cosine similarity.

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

/// One search result: the key, and its similarity to the query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Neighbour {
    pub key: u64,
    pub score: f32,
}

/// The dot product of two equally long vectors.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight independent sums let the compiler keep eight SIMD lanes busy.
    let mut sums = [0.0f32; 8];
    let chunks = a.len() / 8 * 8;
    for (x, y) in a[..chunks].chunks_exact(8).zip(b[..chunks].chunks_exact(8)) {
        for lane in 0..8 {
            sums[lane] += x[lane] * y[lane];
        }
    }
    let tail: f32 = a[chunks..]
        .iter()
        .zip(&b[chunks..])
        .map(|(x, y)| x * y)
        .sum();
    sums.iter().sum::<f32>() + tail
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
