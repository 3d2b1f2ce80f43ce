-- Facts learned about a user when an episode closes (octopus_core::fact):
-- each with the episode and messages it came from, the time it became true
-- and, once a newer fact replaced it, when it stopped and by which fact.
-- A replaced fact is kept.
CREATE TABLE facts (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,  -- its full-text entry's rowid
    id             BLOB NOT NULL UNIQUE,
    tenant_id      BLOB NOT NULL,
    agent_id       BLOB NOT NULL,
    user_id        TEXT NOT NULL,
    episode_id     BLOB NOT NULL REFERENCES episodes (id),
    message_ids    TEXT NOT NULL,     -- JSON array of message ids
    text           TEXT NOT NULL,
    valid_from     INTEGER NOT NULL,
    valid_to       INTEGER,
    superseded_by  BLOB,
    created_at     INTEGER NOT NULL,
    scope          TEXT NOT NULL      -- the full-text scope token (facts.rs)
);
CREATE INDEX ix_facts_user ON facts (tenant_id, agent_id, user_id, valid_from);
CREATE INDEX ix_facts_episode ON facts (episode_id);

-- Keyword search over facts, kept in the facts' own transaction (facts are
-- written at closes, rarely), each under its user's scope token so that a
-- search counts its BM25 statistics over that user's facts alone
-- (`fts_rank.rs`). Contentless: the words are in `facts`.
CREATE VIRTUAL TABLE fact_fts USING fts5 (
    text,
    scope,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN
    INSERT INTO fact_fts (rowid, text, scope) VALUES (new.seq, new.text, new.scope);
END;

CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN
    DELETE FROM fact_fts WHERE rowid = old.seq;
END;

-- Memory vectors of facts beside those of messages and summaries; the
-- queue embeds facts that come without a vector (from a dump). SQLite
-- changes a CHECK only by rebuilding its table: the rows keep their `seq`,
-- the keys the vector index knows them by.
CREATE TABLE memory_vectors_new (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          BLOB NOT NULL UNIQUE,  -- the embedding reference messages carry
    tenant_id   BLOB NOT NULL,
    agent_id    BLOB NOT NULL,
    user_id     TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('message', 'summary', 'fact')),
    episode_id  BLOB NOT NULL,
    message_id  BLOB,                  -- for a message
    fact_id     BLOB,                  -- for a fact
    at          INTEGER NOT NULL,      -- the message's timestamp; a summary's episode's last message; a fact's valid_from
    embedding   BLOB NOT NULL,         -- little-endian f32s
    created_at  INTEGER NOT NULL,
    FOREIGN KEY (tenant_id, agent_id) REFERENCES memory_collections (tenant_id, agent_id)
);
INSERT INTO memory_vectors_new (seq, id, tenant_id, agent_id, user_id, kind, episode_id, message_id, at, embedding, created_at)
SELECT seq, id, tenant_id, agent_id, user_id, kind, episode_id, message_id, at, embedding, created_at FROM memory_vectors;
DROP TABLE memory_vectors;
ALTER TABLE memory_vectors_new RENAME TO memory_vectors;
CREATE INDEX ix_memory_vectors_collection ON memory_vectors (tenant_id, agent_id);
CREATE INDEX ix_memory_vectors_episode ON memory_vectors (episode_id, kind);

CREATE TABLE memory_jobs_new (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id     BLOB NOT NULL,
    agent_id      BLOB NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('embed_message', 'summarise_episode', 'embed_fact')),
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
CREATE INDEX ix_memory_jobs_claim ON memory_jobs (class, due_at, tenant_id, seq);
CREATE INDEX ix_memory_jobs_tenant ON memory_jobs (tenant_id);
