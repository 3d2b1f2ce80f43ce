-- Facts learned about a user when an episode closes (octopus_core::fact):
-- each with the episode and messages it came from, the time it became true
-- and, once a newer fact replaced it, when it stopped and by which fact.
-- A replaced fact is kept.
CREATE TABLE facts (
    id             uuid PRIMARY KEY,
    seq            bigserial NOT NULL UNIQUE,
    tenant_id      uuid NOT NULL,
    agent_id       uuid NOT NULL,
    user_id        text NOT NULL,
    episode_id     uuid NOT NULL REFERENCES episodes (id),
    message_ids    uuid[] NOT NULL,
    text           text NOT NULL,
    valid_from     timestamptz NOT NULL,
    valid_to       timestamptz,
    superseded_by  uuid,
    created_at     timestamptz NOT NULL,
    search         tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED
);
CREATE INDEX ix_facts_user ON facts (tenant_id, agent_id, user_id, valid_from);
CREATE INDEX ix_facts_episode ON facts (episode_id);
CREATE INDEX ix_facts_search ON facts USING gin (search);

-- Memory vectors of facts beside those of messages and summaries; the
-- queue embeds facts that come without a vector (from a dump).
ALTER TABLE memory_vectors ADD COLUMN fact_id uuid;
ALTER TABLE memory_vectors DROP CONSTRAINT memory_vectors_kind_check;
ALTER TABLE memory_vectors ADD CONSTRAINT memory_vectors_kind_check
    CHECK (kind IN ('message', 'summary', 'fact'));
ALTER TABLE memory_jobs DROP CONSTRAINT memory_jobs_kind_check;
ALTER TABLE memory_jobs ADD CONSTRAINT memory_jobs_kind_check
    CHECK (kind IN ('embed_message', 'summarise_episode', 'embed_fact'));
