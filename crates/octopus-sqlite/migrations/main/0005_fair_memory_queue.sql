-- Memory work is claimed fairly: live work (0) before bulk work such as
-- imports (1), and within a class tenant by tenant in turn. Work queued before
-- this migration counts as live. The claim's index replaces the one by due
-- time alone: every queued job pays for each index it is in.
ALTER TABLE memory_jobs ADD COLUMN class INTEGER NOT NULL DEFAULT 0 CHECK (class IN (0, 1));
DROP INDEX ix_memory_jobs_due;
CREATE INDEX ix_memory_jobs_claim ON memory_jobs (class, due_at, tenant_id, seq);
CREATE INDEX ix_memory_jobs_tenant ON memory_jobs (tenant_id);
