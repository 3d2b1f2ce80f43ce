//! How much text the embedder has turned into vectors, and how long it took,
//! by what asked for it: the figures behind `/metrics`' embedding throughput;
//! and the local model's number format, once it is loaded.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use octopus_core::embedding::PrecisionChoice;

/// What asked for an embedding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmbeddingPurpose {
    /// The memory worker: messages and episode summaries.
    Memory,
    /// Document ingestion.
    Knowledge,
    /// Queries of searches, recalls and contexts.
    Query,
}

impl EmbeddingPurpose {
    const ALL: [EmbeddingPurpose; 3] = [Self::Memory, Self::Knowledge, Self::Query];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Memory => "memory",
            Self::Knowledge => "knowledge",
            Self::Query => "query",
        }
    }
}

/// Counters since the process started.
#[derive(Debug, Default)]
pub struct EmbeddingStats {
    counters: [Counter; 3],
    precision: OnceLock<PrecisionChoice>,
}

#[derive(Debug, Default)]
struct Counter {
    texts: AtomicU64,
    micros: AtomicU64,
}

impl EmbeddingStats {
    /// Records the local model's number format, once: the embedder's
    /// builder does as it loads the model.
    pub fn set_precision(&self, choice: PrecisionChoice) {
        let _ = self.precision.set(choice);
    }

    /// The local model's number format, once it is loaded.
    pub fn precision(&self) -> Option<&PrecisionChoice> {
        self.precision.get()
    }

    pub(crate) fn record(&self, purpose: EmbeddingPurpose, texts: usize, took: Duration) {
        let counter = &self.counters[purpose as usize];
        counter.texts.fetch_add(texts as u64, Ordering::Relaxed);
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        counter.micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// `(purpose, texts, seconds)` for each purpose.
    pub fn by_purpose(&self) -> impl Iterator<Item = (&'static str, u64, f64)> + '_ {
        EmbeddingPurpose::ALL.into_iter().map(|purpose| {
            let counter = &self.counters[purpose as usize];
            (
                purpose.as_str(),
                counter.texts.load(Ordering::Relaxed),
                counter.micros.load(Ordering::Relaxed) as f64 / 1e6,
            )
        })
    }

    /// Texts per second the memory worker has managed, once it has done some.
    pub(crate) fn memory_rate(&self) -> Option<f64> {
        let counter = &self.counters[EmbeddingPurpose::Memory as usize];
        let texts = counter.texts.load(Ordering::Relaxed);
        let seconds = counter.micros.load(Ordering::Relaxed) as f64 / 1e6;
        (texts >= 64 && seconds > 0.0).then(|| texts as f64 / seconds)
    }
}
