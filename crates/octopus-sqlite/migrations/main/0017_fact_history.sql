-- Facts a person can correct and delete: who wrote each version, the
-- versions of one fact tied together (`lineage_id`, the first version's
-- id), and the history of every change. A history entry names its version
-- and, while the fact exists, reads its words from `facts`; a deleted
-- fact's entries keep who did what and when, and no word of it.
ALTER TABLE facts ADD COLUMN source TEXT NOT NULL DEFAULT 'learned'
    CHECK (source IN ('learned', 'manual'));
ALTER TABLE facts ADD COLUMN changed_by TEXT NOT NULL DEFAULT 'model';
ALTER TABLE facts ADD COLUMN lineage_id BLOB;

-- A version replaced by a newer one shares its lineage.
WITH RECURSIVE chain (id, root) AS (
    SELECT id, id FROM facts
    WHERE id NOT IN (SELECT superseded_by FROM facts WHERE superseded_by IS NOT NULL)
    UNION ALL
    SELECT f.superseded_by, chain.root FROM facts f JOIN chain ON f.id = chain.id
    WHERE f.superseded_by IS NOT NULL
)
UPDATE facts SET lineage_id = (SELECT root FROM chain WHERE chain.id = facts.id);
UPDATE facts SET lineage_id = id WHERE lineage_id IS NULL;
CREATE INDEX ix_facts_lineage ON facts (tenant_id, lineage_id);

CREATE TABLE fact_history (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id   BLOB NOT NULL,
    agent_id    BLOB NOT NULL,
    user_id     TEXT NOT NULL,
    episode_id  BLOB NOT NULL,
    lineage_id  BLOB NOT NULL,
    fact_id     BLOB NOT NULL,   -- the version the change wrote, or that held when deleted
    action      TEXT NOT NULL CHECK (action IN ('learned', 'corrected', 'imported', 'deleted')),
    changed_by  TEXT NOT NULL,
    reason      TEXT,
    at          INTEGER NOT NULL
);
CREATE INDEX ix_fact_history_lineage ON fact_history (tenant_id, lineage_id, seq);
CREATE INDEX ix_fact_history_fact ON fact_history (tenant_id, fact_id);
CREATE INDEX ix_fact_history_episode ON fact_history (tenant_id, episode_id);
CREATE INDEX ix_fact_history_user ON fact_history (tenant_id, user_id);

INSERT INTO fact_history (tenant_id, agent_id, user_id, episode_id, lineage_id, fact_id, action, changed_by, at)
SELECT tenant_id, agent_id, user_id, episode_id, lineage_id, id, 'learned', 'model', created_at
FROM facts ORDER BY seq;

-- A fact's terms leave the index when its row is deleted. The index was
-- contentless with `contentless_delete`, where a delete only marks the row
-- gone (a tombstone) and leaves its terms in the index's pages until a
-- merge. Plainly contentless, a delete is the 'delete' command given the
-- row's words, which with secure-delete removes them there and then.
DROP TRIGGER facts_fts_insert;
DROP TRIGGER facts_fts_delete;
DROP TABLE fact_fts;
CREATE VIRTUAL TABLE fact_fts USING fts5 (
    text,
    scope,
    content = '',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
INSERT INTO fact_fts (fact_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO fact_fts (rowid, text, scope) SELECT seq, text, scope FROM facts;
CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN
    INSERT INTO fact_fts (rowid, text, scope) VALUES (new.seq, new.text, new.scope);
END;
CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN
    INSERT INTO fact_fts (fact_fts, rowid, text, scope) VALUES ('delete', old.seq, old.text, old.scope);
END;
