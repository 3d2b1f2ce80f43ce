//! Finding the vector sets whose copy in the index stayed behind the rows,
//! and reconciling them without waiting for a search.
//!
//! A copy falls behind for good when a follow is lost: the process that
//! committed the change died before telling the index, two servers' follows
//! arrived out of order, or the index was unreachable. Every later follow
//! then finds the copy at the wrong version and is skipped, so a set nobody
//! searches would stay stale (a search reconciles first). [`LagWatch`]
//! compares every set's version in the rows with its copy's, a cheap read of
//! the version columns on both sides, and reconciles a set seen behind at the
//! same copy version for [`SETTLE`]: a follow still in flight moves the copy
//! within that time and is left to land.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::Result;
use crate::Timestamp;
use crate::vectors::{VectorIndex, VectorRows, VectorSet};

/// How long a copy must stay at one version behind its rows before it is
/// reconciled, and how often the versions are compared.
pub const SETTLE: chrono::TimeDelta = chrono::TimeDelta::seconds(5);

/// A copy marked as being reconciled (a negative version) is left to the
/// process doing it this long before another starts over: that process may
/// have died mid-way, or may be copying a large set.
pub const SETTLE_MID_RECONCILE: chrono::TimeDelta = chrono::TimeDelta::seconds(60);

/// What a store keeps between sweeps: the sets seen behind, each with the
/// copy version it was seen at and since when.
#[derive(Debug)]
pub struct LagWatch {
    settle: chrono::TimeDelta,
    state: Mutex<Sightings>,
}

#[derive(Debug, Default)]
struct Sightings {
    last_sweep: Option<Timestamp>,
    behind: HashMap<VectorSet, Sighting>,
}

#[derive(Clone, Copy, Debug)]
struct Sighting {
    copy_version: i64,
    since: Timestamp,
}

impl Default for LagWatch {
    fn default() -> Self {
        Self::new(SETTLE)
    }
}

impl LagWatch {
    /// A watch that reconciles a set seen behind at one copy version for
    /// `settle`, comparing versions at most once per `settle`.
    pub fn new(settle: chrono::TimeDelta) -> Self {
        Self {
            settle,
            state: Mutex::default(),
        }
    }

    fn sightings(&self) -> std::sync::MutexGuard<'_, Sightings> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Brings `index` up to `rows`: first the sets it knows
    /// to be behind ([`VectorIndex::catch_up`]), then, by [`Self::sweep`],
    /// any copy that stayed behind; returns how many sets it brought up to date.
    pub async fn catch_up(
        &self,
        index: &dyn VectorIndex,
        rows: &dyn VectorRows,
        now: Timestamp,
    ) -> Result<usize> {
        let known = index.catch_up(rows).await?;
        Ok(known + self.sweep(index, rows, now).await?)
    }

    /// Compares every set's rows with its copy in `index` (unless it did so
    /// less than the settle time before `now`) and reconciles the sets that
    /// stayed behind; returns how many it brought up to date. A set the index
    /// keeps no copy of (an embedded index holds only sets searched so far)
    /// is left alone: its first search builds it from the rows.
    pub async fn sweep(
        &self,
        index: &dyn VectorIndex,
        rows: &dyn VectorRows,
        now: Timestamp,
    ) -> Result<usize> {
        {
            let mut sightings = self.sightings();
            if let Some(last) = sightings.last_sweep
                && now - last < self.settle
            {
                return Ok(0);
            }
            sightings.last_sweep = Some(now);
        }
        let states = rows.vector_states().await?;
        let sets: Vec<VectorSet> = states.iter().map(|(set, _)| *set).collect();
        let copies = index.copy_versions(&sets).await?;
        let mut due = Vec::new();
        {
            let mut sightings = self.sightings();
            let mut behind = HashMap::new();
            for ((set, state), copy_version) in states.into_iter().zip(copies) {
                let Some(copy_version) = copy_version else {
                    continue;
                };
                if copy_version == state.version {
                    continue;
                }
                let since = match sightings.behind.get(&set) {
                    Some(seen) if seen.copy_version == copy_version => seen.since,
                    _ => now,
                };
                behind.insert(
                    set,
                    Sighting {
                        copy_version,
                        since,
                    },
                );
                let settle = if copy_version < 0 {
                    SETTLE_MID_RECONCILE.max(self.settle)
                } else {
                    self.settle
                };
                if now - since >= settle {
                    due.push((set, state));
                }
            }
            sightings.behind = behind;
        }
        let mut caught_up = 0;
        for (set, state) in due {
            if index.reconcile(set, state, rows).await? {
                self.sightings().behind.remove(&set);
                caught_up += 1;
            }
        }
        Ok(caught_up)
    }
}
