-- A claim seeks from tenant to tenant among a class's due jobs and reads
-- each one's oldest (`claims.rs`): this index holds all it reads. The one it
-- replaces served a claim that ranked every queued job.
CREATE INDEX ix_memory_jobs_turns ON memory_jobs (class, tenant_id, seq, due_at);
DROP INDEX ix_memory_jobs_claim;
