-- Facts a person can correct and delete: who wrote each version, the
-- versions of one fact tied together (`lineage_id`, the first version's
-- id), and the history of every change. A history entry names its version
-- and, while the fact exists, reads its words from `facts`; a deleted
-- fact's entries keep who did what and when, and no word of it.
ALTER TABLE facts ADD COLUMN source text NOT NULL DEFAULT 'learned'
    CHECK (source IN ('learned', 'manual'));
ALTER TABLE facts ADD COLUMN changed_by text NOT NULL DEFAULT 'model';
ALTER TABLE facts ADD COLUMN lineage_id uuid;

-- A version replaced by a newer one shares its lineage.
WITH RECURSIVE chain (id, root) AS (
    SELECT id, id FROM facts
    WHERE id NOT IN (SELECT superseded_by FROM facts WHERE superseded_by IS NOT NULL)
    UNION ALL
    SELECT f.superseded_by, chain.root FROM facts f JOIN chain ON f.id = chain.id
    WHERE f.superseded_by IS NOT NULL
)
UPDATE facts SET lineage_id = chain.root FROM chain WHERE chain.id = facts.id;
UPDATE facts SET lineage_id = id WHERE lineage_id IS NULL;
ALTER TABLE facts ALTER COLUMN lineage_id SET NOT NULL;
CREATE INDEX ix_facts_lineage ON facts (tenant_id, lineage_id);

CREATE TABLE fact_history (
    seq         bigserial PRIMARY KEY,
    tenant_id   uuid NOT NULL,
    agent_id    uuid NOT NULL,
    user_id     text NOT NULL,
    episode_id  uuid NOT NULL,
    lineage_id  uuid NOT NULL,
    fact_id     uuid NOT NULL,   -- the version the change wrote, or that held when deleted
    action      text NOT NULL CHECK (action IN ('learned', 'corrected', 'imported', 'deleted')),
    changed_by  text NOT NULL,
    reason      text,
    at          timestamptz NOT NULL
);
CREATE INDEX ix_fact_history_lineage ON fact_history (tenant_id, lineage_id, seq);
CREATE INDEX ix_fact_history_fact ON fact_history (tenant_id, fact_id);
CREATE INDEX ix_fact_history_episode ON fact_history (tenant_id, episode_id);
CREATE INDEX ix_fact_history_user ON fact_history (tenant_id, user_id);

INSERT INTO fact_history (tenant_id, agent_id, user_id, episode_id, lineage_id, fact_id, action, changed_by, at)
SELECT tenant_id, agent_id, user_id, episode_id, lineage_id, id, 'learned', 'model', created_at
FROM facts ORDER BY seq;
