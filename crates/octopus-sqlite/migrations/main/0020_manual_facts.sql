-- A person can add a fact by hand: it belongs to no episode. SQLite drops
-- a NOT NULL only by rebuilding the table; the rows keep their `seq`, the
-- rowids of their full-text entries. A manual fact's vector is filed under
-- the fact's own id in place of an episode's (`Fact::vector_episode`).
CREATE TABLE facts_new (
    seq            INTEGER PRIMARY KEY AUTOINCREMENT,
    id             BLOB NOT NULL UNIQUE,
    tenant_id      BLOB NOT NULL,
    agent_id       BLOB NOT NULL,
    user_id        TEXT NOT NULL,
    episode_id     BLOB REFERENCES episodes (id),  -- none for a fact a person added
    message_ids    TEXT NOT NULL,
    text           TEXT NOT NULL,
    valid_from     INTEGER NOT NULL,
    valid_to       INTEGER,
    superseded_by  BLOB,
    created_at     INTEGER NOT NULL,
    scope          TEXT NOT NULL,
    source         TEXT NOT NULL DEFAULT 'learned' CHECK (source IN ('learned', 'manual')),
    changed_by     TEXT NOT NULL DEFAULT 'model',
    lineage_id     BLOB,
    category       TEXT
);
INSERT INTO facts_new (seq, id, tenant_id, agent_id, user_id, episode_id, message_ids, text, valid_from,
                       valid_to, superseded_by, created_at, scope, source, changed_by, lineage_id, category)
SELECT seq, id, tenant_id, agent_id, user_id, episode_id, message_ids, text, valid_from,
       valid_to, superseded_by, created_at, scope, source, changed_by, lineage_id, category FROM facts;
DROP TABLE facts;
ALTER TABLE facts_new RENAME TO facts;
CREATE INDEX ix_facts_user ON facts (tenant_id, agent_id, user_id, valid_from);
CREATE INDEX ix_facts_episode ON facts (episode_id);
CREATE INDEX ix_facts_lineage ON facts (tenant_id, lineage_id);
CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN
    INSERT INTO fact_fts (rowid, text, scope) VALUES (new.seq, new.text, new.scope);
END;
CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN
    INSERT INTO fact_fts (fact_fts, rowid, text, scope) VALUES ('delete', old.seq, old.text, old.scope);
END;

CREATE TABLE fact_history_new (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id   BLOB NOT NULL,
    agent_id    BLOB NOT NULL,
    user_id     TEXT NOT NULL,
    episode_id  BLOB,            -- none for a fact a person added
    lineage_id  BLOB NOT NULL,
    fact_id     BLOB NOT NULL,
    action      TEXT NOT NULL CHECK (action IN ('learned', 'added', 'corrected', 'imported', 'deleted')),
    changed_by  TEXT NOT NULL,
    reason      TEXT,
    at          INTEGER NOT NULL
);
INSERT INTO fact_history_new (seq, tenant_id, agent_id, user_id, episode_id, lineage_id, fact_id, action,
                              changed_by, reason, at)
SELECT seq, tenant_id, agent_id, user_id, episode_id, lineage_id, fact_id, action, changed_by, reason, at
FROM fact_history;
DROP TABLE fact_history;
ALTER TABLE fact_history_new RENAME TO fact_history;
CREATE INDEX ix_fact_history_lineage ON fact_history (tenant_id, lineage_id, seq);
CREATE INDEX ix_fact_history_fact ON fact_history (tenant_id, fact_id);
CREATE INDEX ix_fact_history_episode ON fact_history (tenant_id, episode_id);
CREATE INDEX ix_fact_history_user ON fact_history (tenant_id, user_id);
