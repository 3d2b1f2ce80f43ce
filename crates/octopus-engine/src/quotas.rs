//! What one tenant may have in flight at once, so that one tenant's bulk work
//! cannot starve the others: memory work waiting in the queue, and document
//! ingestions running. Past a quota a request is refused (`Error::Quota`, HTTP
//! 429 with `retry-after`) before anything of it is written. And what one
//! tenant may hold that every turn pays for: procedures, and the compiled
//! size of their trigger patterns (a conflict, `tenant_limit_reached`: no
//! wait makes room).
//!
//! The queue quota is checked before the write, not inside its transaction:
//! concurrent requests of one tenant can overshoot it by what they carry
//! (a batch each), which is bounded by the request limits.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use octopus_core::TenantId;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::{Error, Result};

/// Quotas for every tenant, with overrides for some.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Quotas {
    /// Memory jobs (message embeddings, episode summaries) a tenant may have
    /// waiting. An append or import that would pass it is refused.
    pub max_queued_memory_jobs: u64,
    /// Document ingestions a tenant may run at once.
    pub max_concurrent_ingests: u32,
    /// Procedures a tenant may hold.
    pub max_procedures: u64,
    /// Bytes the trigger patterns of a tenant's serving procedures may take
    /// compiled (what the matcher of each turn holds).
    pub max_trigger_pattern_bytes: u64,
    /// Overrides by tenant id: `[quotas.tenants.<uuid>]`.
    pub tenants: BTreeMap<Uuid, TenantQuotas>,
}

/// One tenant's overrides; an absent value keeps the default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TenantQuotas {
    pub max_queued_memory_jobs: Option<u64>,
    pub max_concurrent_ingests: Option<u32>,
    pub max_procedures: Option<u64>,
    pub max_trigger_pattern_bytes: Option<u64>,
}

impl Default for Quotas {
    fn default() -> Self {
        Self {
            // About an hour of the local model's work on two cores.
            max_queued_memory_jobs: 200_000,
            max_concurrent_ingests: 2,
            max_procedures: 1_000,
            // About 2,000 patterns like `(?i)\brefund\b`, or 300 of 150
            // case-insensitive letters.
            max_trigger_pattern_bytes: 16 << 20,
            tenants: BTreeMap::new(),
        }
    }
}

impl Quotas {
    fn queued_memory_jobs(&self, tenant: TenantId) -> u64 {
        self.tenants
            .get(&tenant.0)
            .and_then(|t| t.max_queued_memory_jobs)
            .unwrap_or(self.max_queued_memory_jobs)
    }

    fn concurrent_ingests(&self, tenant: TenantId) -> u32 {
        self.tenants
            .get(&tenant.0)
            .and_then(|t| t.max_concurrent_ingests)
            .unwrap_or(self.max_concurrent_ingests)
    }

    pub(crate) fn procedures(&self, tenant: TenantId) -> u64 {
        self.tenants
            .get(&tenant.0)
            .and_then(|t| t.max_procedures)
            .unwrap_or(self.max_procedures)
    }

    pub(crate) fn trigger_pattern_bytes(&self, tenant: TenantId) -> u64 {
        self.tenants
            .get(&tenant.0)
            .and_then(|t| t.max_trigger_pattern_bytes)
            .unwrap_or(self.max_trigger_pattern_bytes)
    }
}

/// The quotas, the ingestions running now, and each tenant's queue as last
/// counted.
#[derive(Debug, Default)]
pub(crate) struct QuotaState {
    quotas: Quotas,
    ingests: Arc<Mutex<HashMap<TenantId, u32>>>,
    queued: Mutex<HashMap<TenantId, QueueCount>>,
}

/// A tenant's queue length as counted at `at`, plus what this process queued
/// since. Counting is a scan of the tenant's jobs, so an append does it at
/// most once per [`RECOUNT_AFTER`]; in between, the worker's progress is not
/// seen and the count errs high, on the safe side.
#[derive(Debug, Clone, Copy)]
struct QueueCount {
    jobs: u64,
    at: std::time::Instant,
}

const RECOUNT_AFTER: Duration = Duration::from_secs(1);

/// A running ingestion's place under its tenant's quota; freed when dropped.
pub(crate) struct IngestSlot {
    tenant: TenantId,
    ingests: Arc<Mutex<HashMap<TenantId, u32>>>,
}

/// The memory worker's pace assumed before it has measured its own.
const ASSUMED_JOBS_PER_SECOND: f64 = 50.0;
const LONGEST_RETRY_AFTER: Duration = Duration::from_secs(3600);

impl QuotaState {
    pub(crate) fn quotas(&self) -> &Quotas {
        &self.quotas
    }

    pub(crate) fn new(quotas: Quotas) -> Self {
        Self {
            quotas,
            ingests: Arc::default(),
            queued: Mutex::default(),
        }
    }

    /// The tenant's queue length if it was counted recently.
    pub(crate) fn recent_queue(&self, tenant: TenantId) -> Option<u64> {
        let queued = self
            .queued
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        queued
            .get(&tenant)
            .filter(|count| count.at.elapsed() < RECOUNT_AFTER)
            .map(|count| count.jobs)
    }

    /// Records a fresh count of the tenant's queue.
    pub(crate) fn counted_queue(&self, tenant: TenantId, jobs: u64) {
        let mut queued = self
            .queued
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        queued.insert(
            tenant,
            QueueCount {
                jobs,
                at: std::time::Instant::now(),
            },
        );
    }

    /// Adds jobs this process just queued to the tenant's last count.
    pub(crate) fn queued_more(&self, tenant: TenantId, jobs: u64) {
        let mut queued = self
            .queued
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(count) = queued.get_mut(&tenant) {
            count.jobs = count.jobs.saturating_add(jobs);
        }
    }

    /// Refuses `incoming` new jobs when they would take `tenant` past its
    /// queue quota; `rate` is the worker's measured jobs per second.
    pub(crate) fn check_memory_jobs(
        &self,
        tenant: TenantId,
        queued: u64,
        incoming: u64,
        rate: Option<f64>,
    ) -> Result<()> {
        let quota = self.quotas.queued_memory_jobs(tenant);
        if queued.saturating_add(incoming) <= quota {
            return Ok(());
        }
        let excess = queued.saturating_add(incoming) - quota;
        let rate = rate.unwrap_or(ASSUMED_JOBS_PER_SECOND).max(1.0);
        let wait = Duration::from_secs_f64(excess as f64 / rate)
            .clamp(Duration::from_secs(1), LONGEST_RETRY_AFTER);
        Err(Error::Quota {
            message: format!(
                "the tenant has {queued} memory jobs waiting and this request adds {incoming}; \
                 the quota is {quota}. Retry when the queue has drained (retry-after)"
            ),
            retry_after: wait,
        })
    }

    /// A place for one more ingestion of `tenant`, or `Error::Quota`.
    pub(crate) fn start_ingest(&self, tenant: TenantId) -> Result<IngestSlot> {
        let quota = self.quotas.concurrent_ingests(tenant);
        let mut ingests = self
            .ingests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let running = ingests.entry(tenant).or_insert(0);
        if *running >= quota {
            return Err(Error::Quota {
                message: format!(
                    "the tenant is running {running} document ingestions, its quota; retry when one has finished"
                ),
                retry_after: Duration::from_secs(5),
            });
        }
        *running += 1;
        Ok(IngestSlot {
            tenant,
            ingests: Arc::clone(&self.ingests),
        })
    }
}

impl Drop for IngestSlot {
    fn drop(&mut self) {
        let mut ingests = self
            .ingests
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(running) = ingests.get_mut(&self.tenant) {
            *running -= 1;
            if *running == 0 {
                ingests.remove(&self.tenant);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(overridden: TenantId) -> QuotaState {
        let mut quotas = Quotas {
            max_queued_memory_jobs: 100,
            max_concurrent_ingests: 1,
            ..Quotas::default()
        };
        quotas.tenants.insert(
            overridden.0,
            TenantQuotas {
                max_queued_memory_jobs: Some(1000),
                ..TenantQuotas::default()
            },
        );
        QuotaState::new(quotas)
    }

    #[test]
    fn the_queue_quota_counts_what_is_queued_and_what_comes() {
        let (plain, big) = (TenantId(Uuid::now_v7()), TenantId(Uuid::now_v7()));
        let quotas = state(big);
        assert!(quotas.check_memory_jobs(plain, 60, 40, None).is_ok());
        let Err(Error::Quota { retry_after, .. }) =
            quotas.check_memory_jobs(plain, 60, 41, Some(0.5))
        else {
            panic!("one over the quota is refused");
        };
        assert_eq!(retry_after, Duration::from_secs(1), "rate floored at 1/s");
        let Err(Error::Quota { retry_after, .. }) =
            quotas.check_memory_jobs(plain, 100, 500, Some(10.0))
        else {
            panic!("refused");
        };
        assert_eq!(retry_after, Duration::from_secs(50), "500 over at 10/s");
        assert!(
            quotas.check_memory_jobs(big, 600, 400, None).is_ok(),
            "an override raises one tenant's quota"
        );
    }

    #[test]
    fn ingest_slots_are_counted_per_tenant_and_given_back() {
        let (a, b) = (TenantId(Uuid::now_v7()), TenantId(Uuid::now_v7()));
        let quotas = state(b);
        let slot = quotas.start_ingest(a).expect("first");
        assert!(matches!(quotas.start_ingest(a), Err(Error::Quota { .. })));
        let _other = quotas.start_ingest(b).expect("another tenant has its own");
        drop(slot);
        assert!(quotas.start_ingest(a).is_ok());
    }
}
