-- Memory work is claimed fairly: live work (0) before bulk work such as
-- imports (1), and within a class tenant by tenant in turn. Work queued before
-- this migration counts as live.
ALTER TABLE memory_jobs ADD COLUMN class INTEGER NOT NULL DEFAULT 0 CHECK (class IN (0, 1));
CREATE INDEX ix_memory_jobs_class ON memory_jobs (class, due_at, tenant_id, seq);
CREATE INDEX ix_memory_jobs_tenant ON memory_jobs (tenant_id, class);
