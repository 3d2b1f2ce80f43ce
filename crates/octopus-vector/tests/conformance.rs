//! The embedded index against the vector port's contract: exact while sets
//! are small, and from a threshold of 4 vectors on, as graphs saved to disk
//! and loaded by the next instance.

#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

use std::sync::Arc;

use async_trait::async_trait;
use octopus_core::vectors::VectorIndex;
use octopus_testkit::vectors::VectorBackend;
use octopus_vector::EmbeddedVectors;

/// A folder of saved graphs; each `open` is a process started over it.
struct Embedded {
    dir: tempfile::TempDir,
    hnsw_threshold: usize,
}

impl Embedded {
    fn new(hnsw_threshold: usize) -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            hnsw_threshold,
        }
    }
}

#[async_trait]
impl VectorBackend for Embedded {
    async fn open(&self) -> Arc<dyn VectorIndex> {
        Arc::new(EmbeddedVectors::new(
            self.dir.path().to_owned(),
            self.hnsw_threshold,
        ))
    }
}

mod exact {
    use super::*;
    octopus_testkit::vector_conformance_tests!(Embedded::new(1_000));
}

mod graph {
    use super::*;
    octopus_testkit::vector_conformance_tests!(Embedded::new(4));
}
