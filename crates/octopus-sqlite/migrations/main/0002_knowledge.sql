-- Semantic memory (seed 003): one collection per agent and tenant, and its chunks.
-- SQLite is the source of truth; vector indexes are derived from these rows.

CREATE TABLE knowledge_collections (
    tenant_id   BLOB NOT NULL,
    agent_id    BLOB NOT NULL REFERENCES agents (id),
    dimension   INTEGER NOT NULL,
    model       TEXT NOT NULL,
    -- Bumped by every change to the collection's chunks, in the same transaction,
    -- so an index built at another version is known to be stale.
    version     INTEGER NOT NULL DEFAULT 0,
    -- Kept by the same statement that bumps the version, so that reading a
    -- collection never scans its chunks.
    chunk_count INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, agent_id)
) WITHOUT ROWID;

CREATE TABLE knowledge_chunks (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           BLOB NOT NULL UNIQUE,
    tenant_id    BLOB NOT NULL,
    agent_id     BLOB NOT NULL,
    source       TEXT NOT NULL,
    chunk_index  INTEGER NOT NULL,
    category     TEXT,
    heading      TEXT,
    content      TEXT NOT NULL,     -- plain, so a full-text index can read it
    embedding    BLOB NOT NULL,     -- little-endian f32s
    indexed_at   INTEGER NOT NULL,
    FOREIGN KEY (tenant_id, agent_id) REFERENCES knowledge_collections (tenant_id, agent_id)
);
CREATE INDEX ix_knowledge_chunks_source ON knowledge_chunks (tenant_id, agent_id, source, chunk_index);
