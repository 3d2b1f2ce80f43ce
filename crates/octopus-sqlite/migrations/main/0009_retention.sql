-- Retention: an episode closed longer ago than its agent's retention period is
-- archived. Archived episodes leave recall, search and context, and can still
-- be read, listed, restored or purged. A restore restarts the retention clock
-- (`retained_since`), so the next sweep does not archive it again at once.
ALTER TABLE episodes ADD COLUMN archived_at INTEGER;
ALTER TABLE episodes ADD COLUMN retained_since INTEGER;
-- The sweep's index: per agent, the episodes it may archive, oldest first.
CREATE INDEX ix_episodes_retention ON episodes (agent_id, COALESCE(retained_since, ended_at))
    WHERE ended_at IS NOT NULL AND archived_at IS NULL AND deleted_at IS NULL;
-- What a recall leaves out, per user: their deleted and archived episodes.
CREATE INDEX ix_episodes_hidden ON episodes (tenant_id, agent_id, user_id)
    WHERE deleted_at IS NOT NULL OR archived_at IS NOT NULL;
