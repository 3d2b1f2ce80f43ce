-- A claim seeks from tenant to tenant among a class's due jobs and takes
-- each one's oldest (`claims.rs`): by (class, tenant, job), with the due
-- time beside each entry. The index it replaces put the due time before the
-- job, so each tenant's oldest were sorted from all its due ones.
CREATE INDEX ix_memory_jobs_turns ON memory_jobs (class, tenant_id, seq) INCLUDE (due_at);
DROP INDEX ix_memory_jobs_claim;
