//! Which queued memory jobs a claim takes, as `octopus_core::job_turns`
//! rules: the most urgent class with due jobs, its tenants in turn from
//! after the last claim's, each one's oldest first. Each step is a seek
//! along `ix_memory_jobs_turns` (class, tenant, job, due time), which holds
//! everything a claim reads before it leases the jobs it took.

use std::sync::Mutex;

use octopus_core::job_turns::{TenantWalk, in_turns, share};
use rusqlite::{Connection, OptionalExtension, params};

use crate::error::Result;

/// The tenant the last claim ended with: the next one starts after it.
#[derive(Default)]
pub(crate) struct ClaimCursor(Mutex<Option<Vec<u8>>>);

impl ClaimCursor {
    pub fn get(&self) -> Option<Vec<u8>> {
        crate::db::lock(&self.0).clone()
    }

    pub fn set(&self, tenant: Option<Vec<u8>>) {
        *crate::db::lock(&self.0) = tenant;
    }
}

/// The jobs (by `seq`) a claim of `limit` takes at `now`, in turn order,
/// and the tenant it ended with.
pub(crate) fn choose(
    conn: &Connection,
    now: i64,
    limit: usize,
    cursor: Option<Vec<u8>>,
) -> Result<(Vec<i64>, Option<Vec<u8>>)> {
    for class in [0_i64, 1] {
        let mut walk = TenantWalk::new(cursor.clone(), limit);
        let mut next_tenant = conn.prepare_cached(
            "SELECT tenant_id FROM memory_jobs
             WHERE class = ?1 AND tenant_id > ?2 AND due_at <= ?3
             ORDER BY tenant_id LIMIT 1",
        )?;
        while let Some(after) = walk.next_seek() {
            // The empty blob sorts before every tenant id.
            let after = after.cloned().unwrap_or_default();
            let next = next_tenant
                .query_row(params![class, after, now], |row| row.get::<_, Vec<u8>>(0))
                .optional()?;
            walk.seen(next);
        }
        let tenants = walk.into_tenants();
        if tenants.is_empty() {
            continue;
        }
        let each = share(limit, tenants.len());
        let mut oldest = conn.prepare_cached(
            "SELECT seq FROM memory_jobs
             WHERE class = ?1 AND tenant_id = ?2 AND due_at <= ?3
             ORDER BY seq LIMIT ?4",
        )?;
        let mut queues = Vec::with_capacity(tenants.len());
        for tenant in &tenants {
            let jobs =
                oldest.query_map(params![class, tenant, now, each as i64], |row| row.get(0))?;
            queues.push(jobs.collect::<rusqlite::Result<Vec<i64>>>()?);
        }
        return Ok((in_turns(queues, limit), tenants.last().cloned()));
    }
    Ok((Vec::new(), cursor))
}
