-- A client's name for a fact it added, by which a framework's store reads
-- and writes it again. The index is the arbiter of a key being taken: one
-- fact that holds per user, agent, category and key; the versions a
-- correction replaced keep theirs.
ALTER TABLE facts ADD COLUMN key text;
CREATE UNIQUE INDEX ux_facts_key ON facts (tenant_id, agent_id, user_id, coalesce(category, ''), key)
    WHERE key IS NOT NULL AND superseded_by IS NULL;
