//! Qdrant against the vector port's contract, on a real server
//! (`octopus_qdrant::testing`), in both layouts. Each `open` is another
//! Octopus server on the same Qdrant.

#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

use std::sync::Arc;

use async_trait::async_trait;
use octopus_core::vectors::VectorIndex;
use octopus_qdrant::{QdrantLayout, QdrantOptions, QdrantVectors, testing};
use octopus_testkit::vectors::VectorBackend;

struct OnQdrant {
    options: QdrantOptions,
}

impl OnQdrant {
    fn new(layout: QdrantLayout) -> Self {
        Self {
            options: testing::fresh_options(layout),
        }
    }
}

#[async_trait]
impl VectorBackend for OnQdrant {
    async fn open(&self) -> Arc<dyn VectorIndex> {
        Arc::new(QdrantVectors::connect(&self.options).await.unwrap())
    }
}

mod shared {
    use super::*;
    octopus_testkit::vector_conformance_tests!(OnQdrant::new(QdrantLayout::Shared));
}

mod per_set {
    use super::*;
    octopus_testkit::vector_conformance_tests!(OnQdrant::new(QdrantLayout::PerSet));
}
