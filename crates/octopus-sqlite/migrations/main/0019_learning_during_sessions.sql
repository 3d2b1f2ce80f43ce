-- Facts are learned from an open episode every so many user messages, as
-- well as at its close. An episode remembers how many of its messages were
-- learned from, and how many user messages came since a learning was last
-- queued.
ALTER TABLE episodes ADD COLUMN facts_learned_through INTEGER NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN unlearned_user_messages INTEGER NOT NULL DEFAULT 0;
-- Until now an episode's facts were learned once, whole, at close.
UPDATE episodes SET facts_learned_through = message_count
WHERE EXISTS (SELECT 1 FROM facts WHERE facts.tenant_id = episodes.tenant_id AND facts.episode_id = episodes.id);

CREATE TABLE memory_jobs_new (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id     BLOB NOT NULL,
    agent_id      BLOB NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('embed_message', 'summarise_episode', 'embed_fact', 'learn_facts')),
    target        BLOB NOT NULL,       -- the message, episode or fact id
    attempts      INTEGER NOT NULL DEFAULT 0,
    due_at        INTEGER NOT NULL DEFAULT 0,
    last_error    TEXT,
    created_at    INTEGER NOT NULL,
    class         INTEGER NOT NULL DEFAULT 0 CHECK (class IN (0, 1)),
    parked_under  TEXT
);
INSERT INTO memory_jobs_new (seq, tenant_id, agent_id, kind, target, attempts, due_at, last_error, created_at, class, parked_under)
SELECT seq, tenant_id, agent_id, kind, target, attempts, due_at, last_error, created_at, class, parked_under FROM memory_jobs;
DROP TABLE memory_jobs;
ALTER TABLE memory_jobs_new RENAME TO memory_jobs;
CREATE INDEX ix_memory_jobs_turns ON memory_jobs (class, tenant_id, seq, due_at);
CREATE INDEX ix_memory_jobs_tenant ON memory_jobs (tenant_id);
