-- Episodic memory for recall: memory vectors of messages and episode summaries,
-- one collection per agent and tenant, and the durable queue of work that
-- makes them. Like knowledge, the vector index is derived from these rows.

CREATE TABLE memory_collections (
    tenant_id     BLOB NOT NULL,
    agent_id      BLOB NOT NULL REFERENCES agents (id),
    dimension     INTEGER NOT NULL,
    model         TEXT NOT NULL,
    -- Bumped by every change to the collection's vectors, in the same
    -- transaction, so an index built at another version is known to be stale.
    version       INTEGER NOT NULL DEFAULT 0,
    vector_count  INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, agent_id)
) WITHOUT ROWID;

CREATE TABLE memory_vectors (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          BLOB NOT NULL UNIQUE,  -- the embedding reference messages carry
    tenant_id   BLOB NOT NULL,
    agent_id    BLOB NOT NULL,
    user_id     TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('message', 'summary')),
    episode_id  BLOB NOT NULL,
    message_id  BLOB,                  -- NULL for a summary
    at          INTEGER NOT NULL,      -- the message's timestamp; a summary's episode's last message
    embedding   BLOB NOT NULL,         -- little-endian f32s
    created_at  INTEGER NOT NULL,
    FOREIGN KEY (tenant_id, agent_id) REFERENCES memory_collections (tenant_id, agent_id)
);
CREATE INDEX ix_memory_vectors_collection ON memory_vectors (tenant_id, agent_id);
CREATE INDEX ix_memory_vectors_episode ON memory_vectors (episode_id, kind);

-- Work queued in the transaction of its cause. `due_at` is when a worker may
-- take it: 0 when new, a retry time after a failure, the end of the lease while
-- a worker holds it.
CREATE TABLE memory_jobs (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id   BLOB NOT NULL,
    agent_id    BLOB NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('embed_message', 'summarise_episode')),
    target      BLOB NOT NULL,         -- the message or episode id
    attempts    INTEGER NOT NULL DEFAULT 0,
    due_at      INTEGER NOT NULL DEFAULT 0,
    last_error  TEXT,
    created_at  INTEGER NOT NULL
);
CREATE INDEX ix_memory_jobs_due ON memory_jobs (due_at, seq);

-- Messages and closed episodes stored before this migration are queued too.
-- Which messages are too short to embed is decided when the job runs.
INSERT INTO memory_jobs (tenant_id, agent_id, kind, target, created_at)
SELECT m.tenant_id, e.agent_id, 'embed_message', m.id, m.created_at
FROM messages m JOIN episodes e ON e.id = m.episode_id
WHERE m.role IN ('user', 'assistant') AND m.embedding_ref IS NULL
ORDER BY m.seq;

INSERT INTO memory_jobs (tenant_id, agent_id, kind, target, created_at)
SELECT tenant_id, agent_id, 'summarise_episode', id, updated_at
FROM episodes WHERE ended_at IS NOT NULL;
