//! Which queued memory jobs a claim takes, as `octopus_core::job_turns`
//! rules: the most urgent class with due jobs, its tenants in turn from
//! after the last claim's, each one's oldest first. The tenants are found by
//! seeking from one to the next along `ix_memory_jobs_turns`; the jobs are
//! taken `FOR UPDATE SKIP LOCKED`, so servers claiming at once take
//! different jobs and never wait for each other.

use std::sync::Mutex;

use octopus_core::Timestamp;
use octopus_core::job_turns::{TenantWalk, share};
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;
use sqlx_core::row::Row;
use sqlx_postgres::PgConnection;
use uuid::Uuid;

use crate::error::Result;

/// The tenant this server's last claim ended with: its next starts after it.
#[derive(Default)]
pub(crate) struct ClaimCursor(Mutex<Option<Uuid>>);

impl ClaimCursor {
    pub fn get(&self) -> Option<Uuid> {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set(&self, tenant: Option<Uuid>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = tenant;
    }
}

/// Leases (until `lease_end`) the jobs a claim of `limit` takes at `now`;
/// the rows of the jobs, in turn order, and the tenant it ended with.
pub(crate) async fn take(
    conn: &mut PgConnection,
    now: Timestamp,
    lease_end: Timestamp,
    limit: usize,
    cursor: Option<Uuid>,
) -> Result<(Vec<sqlx_postgres::PgRow>, Option<Uuid>)> {
    for class in [0_i16, 1] {
        let mut walk = TenantWalk::new(cursor, limit);
        while let Some(after) = walk.next_seek() {
            let next: Option<Uuid> = match after {
                Some(after) => {
                    query_scalar(
                        "SELECT tenant_id FROM memory_jobs
                         WHERE class = $1 AND tenant_id > $2 AND due_at <= $3
                         ORDER BY tenant_id LIMIT 1",
                    )
                    .bind(class)
                    .bind(*after)
                    .bind(now)
                    .fetch_optional(&mut *conn)
                    .await?
                }
                None => {
                    query_scalar(
                        "SELECT tenant_id FROM memory_jobs
                         WHERE class = $1 AND due_at <= $2
                         ORDER BY tenant_id LIMIT 1",
                    )
                    .bind(class)
                    .bind(now)
                    .fetch_optional(&mut *conn)
                    .await?
                }
            };
            walk.seen(next);
        }
        let tenants = walk.into_tenants();
        let Some(&last) = tenants.last() else {
            continue;
        };
        let each = share(limit, tenants.len());
        let rows = query(
            "WITH candidates AS (
                 SELECT j.seq, t.position,
                        row_number() OVER (PARTITION BY t.tenant_id ORDER BY j.seq) AS turn
                 FROM unnest($1::uuid[]) WITH ORDINALITY AS t(tenant_id, position),
                 LATERAL (
                     SELECT seq FROM memory_jobs m
                     WHERE m.class = $2 AND m.tenant_id = t.tenant_id AND m.due_at <= $3
                     ORDER BY seq LIMIT $4
                     FOR UPDATE SKIP LOCKED) j),
             picked AS (SELECT seq, turn, position FROM candidates ORDER BY turn, position LIMIT $5)
             UPDATE memory_jobs m SET due_at = $6 FROM picked WHERE m.seq = picked.seq
             RETURNING m.seq, m.tenant_id, m.agent_id, m.kind, m.target, m.attempts,
                       picked.turn, picked.position",
        )
        .bind(&tenants)
        .bind(class)
        .bind(now)
        .bind(each as i64)
        .bind(limit as i64)
        .bind(lease_end)
        .fetch_all(&mut *conn)
        .await?;
        let mut rows = rows;
        rows.sort_by_key(|row| {
            (
                row.try_get::<i64, _>("turn").unwrap_or(i64::MAX),
                row.try_get::<i64, _>("position").unwrap_or(i64::MAX),
            )
        });
        return Ok((rows, Some(last)));
    }
    Ok((Vec::new(), cursor))
}
