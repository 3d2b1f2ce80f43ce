//! How many memory jobs this process's worker completed: the figures behind
//! `/metrics`' job counters. With several servers on one database, their
//! `stored` counts add up to the jobs done, each once.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters since the process started.
#[derive(Debug, Default)]
pub struct MemoryJobStats {
    claimed: AtomicU64,
    stored: AtomicU64,
    superseded: AtomicU64,
}

impl MemoryJobStats {
    /// Counts a completion: `stored` when this worker's outcome was written,
    /// or else superseded (another worker completed the job after this one's
    /// lease ran out).
    pub(crate) fn record(&self, stored: bool) {
        let counter = if stored {
            &self.stored
        } else {
            &self.superseded
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn record_claimed(&self, jobs: usize) {
        self.claimed.fetch_add(jobs as u64, Ordering::Relaxed);
    }

    /// Jobs this process's worker claimed.
    pub fn claimed(&self) -> u64 {
        self.claimed.load(Ordering::Relaxed)
    }

    /// Jobs whose outcome this process stored.
    pub fn stored(&self) -> u64 {
        self.stored.load(Ordering::Relaxed)
    }

    /// Jobs this process worked on that another completed first.
    pub fn superseded(&self) -> u64 {
        self.superseded.load(Ordering::Relaxed)
    }
}
