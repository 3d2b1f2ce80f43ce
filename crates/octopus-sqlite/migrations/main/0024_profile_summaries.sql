-- The paragraph written about each user of each agent, and the facts it was
-- written from (a JSON array of their ids): the profile shows it while
-- each of them holds.
CREATE TABLE profile_summaries (
    tenant_id BLOB NOT NULL,
    agent_id BLOB NOT NULL,
    user_id TEXT NOT NULL,
    text TEXT NOT NULL,
    fact_ids TEXT NOT NULL,
    written_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, agent_id, user_id)
) WITHOUT ROWID;
