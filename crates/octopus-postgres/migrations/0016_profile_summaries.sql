-- The paragraph written about each user of each agent, and the facts it was
-- written from: the profile shows it while each of them holds.
CREATE TABLE profile_summaries (
    tenant_id  uuid NOT NULL,
    agent_id   uuid NOT NULL,
    user_id    text NOT NULL,
    text       text NOT NULL,
    fact_ids   uuid[] NOT NULL,
    written_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, agent_id, user_id)
);
