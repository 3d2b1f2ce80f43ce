-- The relational schema of seed 002 in PostgreSQL: the same tables as the
-- SQLite store, with PostgreSQL's own types. Every table carries tenant_id,
-- and every query filters on it.
--
-- - ids are `uuid`, instants `timestamptz` (microseconds, as in SQLite);
-- - message content and tool calls are `json` (kept as written; large values
--   are compressed by TOAST);
-- - full-text search is a `tsvector` per message and per chunk, with GIN
--   indexes;
-- - vectors are pgvector's `vector`, without a fixed dimension, kept here as
--   the truth a vector index follows: each vector row has a `seq` that is
--   never reused, and each collection a `version` bumped by every change (see
--   vector_sets.rs; pgvector's own copy and its HNSW indexes are in 0002).

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE tenants (
    id          uuid PRIMARY KEY,
    name        text NOT NULL,
    created_at  timestamptz NOT NULL
);

CREATE TABLE api_keys (
    id          uuid PRIMARY KEY,
    tenant_id   uuid NOT NULL REFERENCES tenants (id),
    name        text NOT NULL,
    prefix      text NOT NULL,
    key_hash    bytea NOT NULL UNIQUE,  -- SHA-256 of the secret
    created_at  timestamptz NOT NULL,
    revoked_at  timestamptz
);
CREATE INDEX ix_api_keys_tenant ON api_keys (tenant_id);

-- Server-wide settings, such as the admin key's hash.
CREATE TABLE settings (
    key    text PRIMARY KEY,
    value  bytea NOT NULL
);

CREATE TABLE agents (
    id             uuid PRIMARY KEY,
    tenant_id      uuid NOT NULL REFERENCES tenants (id),
    name           text NOT NULL,
    system_prompt  text NOT NULL,
    llm_provider   text NOT NULL,
    model          text NOT NULL,
    llm_config     jsonb NOT NULL,
    memory_config  jsonb NOT NULL,
    is_active      boolean NOT NULL DEFAULT true,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    deleted_at     timestamptz
);
CREATE UNIQUE INDEX ux_agents_tenant_name ON agents (tenant_id, name) WHERE is_active;
CREATE INDEX ix_agents_tenant ON agents (tenant_id, created_at) WHERE is_active;

CREATE TABLE conversations (
    id          uuid PRIMARY KEY,
    tenant_id   uuid NOT NULL REFERENCES tenants (id),
    agent_id    uuid NOT NULL REFERENCES agents (id),
    user_id     text NOT NULL,
    title       text,
    metadata    json NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    deleted_at  timestamptz
);
CREATE INDEX ix_conversations_agent_user ON conversations (tenant_id, agent_id, user_id, created_at);

CREATE TABLE episodes (
    id                   uuid PRIMARY KEY,
    tenant_id            uuid NOT NULL REFERENCES tenants (id),
    conversation_id      uuid NOT NULL REFERENCES conversations (id),
    agent_id             uuid NOT NULL,
    user_id              text NOT NULL,
    started_at           timestamptz NOT NULL,
    ended_at             timestamptz,
    end_reason           text,
    summary              text,
    summary_source       text CHECK (summary_source IN ('caller', 'llm', 'extractive')),
    key_facts            json NOT NULL DEFAULT '[]',
    summary_embedding    bytea,                     -- little-endian f32s
    message_count        integer NOT NULL DEFAULT 0,
    total_input_tokens   bigint NOT NULL DEFAULT 0,
    total_output_tokens  bigint NOT NULL DEFAULT 0,
    last_message_at      timestamptz NOT NULL,
    deleted_at           timestamptz,
    archived_at          timestamptz,
    retained_since       timestamptz,
    created_at           timestamptz NOT NULL,
    updated_at           timestamptz NOT NULL
);
CREATE INDEX ix_episodes_agent_user ON episodes (agent_id, user_id, tenant_id) WHERE deleted_at IS NULL;
CREATE INDEX ix_episodes_tenant_started ON episodes (tenant_id, started_at DESC);
CREATE INDEX ix_episodes_conversation ON episodes (conversation_id, started_at);
CREATE INDEX ix_episodes_idle ON episodes (last_message_at) WHERE ended_at IS NULL;
CREATE INDEX ix_episodes_retention ON episodes (agent_id, (COALESCE(retained_since, ended_at)))
    WHERE ended_at IS NOT NULL AND archived_at IS NULL AND deleted_at IS NULL;
CREATE INDEX ix_episodes_hidden ON episodes (tenant_id, agent_id, user_id)
    WHERE deleted_at IS NOT NULL OR archived_at IS NOT NULL;
-- At most one open episode per conversation.
CREATE UNIQUE INDEX ux_episodes_open ON episodes (conversation_id) WHERE ended_at IS NULL;

CREATE TABLE messages (
    id                   uuid PRIMARY KEY,
    tenant_id            uuid NOT NULL,
    episode_id           uuid NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
    conversation_id      uuid NOT NULL,
    ordinal              integer NOT NULL,
    role                 text NOT NULL,
    content              json,
    name                 text,
    tool_call_id         text,
    tool_calls           json,
    token_count          bigint NOT NULL,
    timestamp            timestamptz NOT NULL,
    agent_id             uuid,
    contains_pii         boolean NOT NULL DEFAULT false,
    redacted_content     text,
    embedding_ref        text,
    usage_input_tokens   bigint,
    usage_output_tokens  bigint,
    created_at           timestamptz NOT NULL,
    -- The words of the content and tool calls, stemmed (English): written
    -- with the row, so a search sees every acknowledged message.
    search               tsvector NOT NULL
);
CREATE UNIQUE INDEX ux_messages_episode_ordinal ON messages (episode_id, ordinal);
CREATE INDEX ix_messages_search ON messages USING gin (search);

CREATE TABLE procedures (
    id               uuid PRIMARY KEY,
    tenant_id        uuid NOT NULL REFERENCES tenants (id),
    agent_id         uuid,            -- NULL: shared by every agent of the tenant
    name             text NOT NULL,
    description      text,
    trigger_pattern  text,
    steps            json NOT NULL,
    embedding        bytea,
    is_active        boolean NOT NULL DEFAULT true,
    is_approved      boolean NOT NULL DEFAULT false,
    version          integer NOT NULL DEFAULT 1,
    serving_version  integer,
    latest_version   integer NOT NULL DEFAULT 1,
    approved_by      text,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    created_by       text
);
CREATE UNIQUE INDEX ux_procedures_name ON procedures
    (tenant_id, COALESCE(agent_id, '00000000-0000-0000-0000-000000000000'), name) WHERE is_active;
CREATE INDEX ix_procedures_tenant ON procedures (tenant_id, created_at);

CREATE TABLE procedure_versions (
    procedure_id     uuid NOT NULL REFERENCES procedures (id) ON DELETE CASCADE,
    tenant_id        uuid NOT NULL,
    version          integer NOT NULL,
    name             text NOT NULL,
    description      text,
    trigger_pattern  text,
    steps            json NOT NULL,
    embedding        bytea,
    status           text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'superseded')),
    created_by       text,
    created_at       timestamptz NOT NULL,
    decided_by       text,
    decided_at       timestamptz,
    PRIMARY KEY (procedure_id, version)
);

CREATE TABLE procedure_revisions (
    tenant_id  uuid PRIMARY KEY,
    revision   bigint NOT NULL
);

-- Semantic memory: one collection per agent and tenant, and its chunks.
CREATE TABLE knowledge_collections (
    tenant_id    uuid NOT NULL,
    agent_id     uuid NOT NULL REFERENCES agents (id),
    dimension    integer NOT NULL,
    model        text NOT NULL,
    chunk_count  bigint NOT NULL DEFAULT 0,
    version      bigint NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, agent_id)
);

CREATE TABLE knowledge_chunks (
    id           uuid PRIMARY KEY,
    seq          bigserial NOT NULL UNIQUE,
    tenant_id    uuid NOT NULL,
    agent_id     uuid NOT NULL,
    source       text NOT NULL,
    chunk_index  integer NOT NULL,
    category     text,
    heading      text,
    content      text NOT NULL,
    dimension    integer NOT NULL,
    embedding    vector NOT NULL,
    indexed_at   timestamptz NOT NULL,
    search       tsvector GENERATED ALWAYS AS
                 (to_tsvector('english', COALESCE(heading, '') || ' ' || content)) STORED,
    FOREIGN KEY (tenant_id, agent_id) REFERENCES knowledge_collections (tenant_id, agent_id)
);
CREATE INDEX ix_knowledge_chunks_source ON knowledge_chunks (tenant_id, agent_id, source, chunk_index);
CREATE INDEX ix_knowledge_chunks_search ON knowledge_chunks USING gin (search);

-- Episodic memory for recall: vectors of messages and episode summaries.
CREATE TABLE memory_collections (
    tenant_id     uuid NOT NULL,
    agent_id      uuid NOT NULL REFERENCES agents (id),
    dimension     integer NOT NULL,
    model         text NOT NULL,
    vector_count  bigint NOT NULL DEFAULT 0,
    version       bigint NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, agent_id)
);

CREATE TABLE memory_vectors (
    id          uuid PRIMARY KEY,       -- the embedding reference messages carry
    seq         bigserial NOT NULL UNIQUE,
    tenant_id   uuid NOT NULL,
    agent_id    uuid NOT NULL,
    user_id     text NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('message', 'summary')),
    episode_id  uuid NOT NULL,
    message_id  uuid,                   -- NULL for a summary
    at          timestamptz NOT NULL,
    dimension   integer NOT NULL,
    embedding   vector NOT NULL,
    created_at  timestamptz NOT NULL,
    FOREIGN KEY (tenant_id, agent_id) REFERENCES memory_collections (tenant_id, agent_id)
);
CREATE INDEX ix_memory_vectors_user ON memory_vectors (tenant_id, agent_id, user_id);
CREATE INDEX ix_memory_vectors_episode ON memory_vectors (episode_id, kind);

-- Work queued in the transaction of its cause, claimed by any server with
-- FOR UPDATE SKIP LOCKED. `due_at` is when a worker may take it: the epoch
-- when new, a retry time after a failure, the end of the lease while a worker
-- holds it. Class 0 is live work, 1 bulk work such as imports.
CREATE TABLE memory_jobs (
    seq         bigserial PRIMARY KEY,
    tenant_id   uuid NOT NULL,
    agent_id    uuid NOT NULL,
    kind        text NOT NULL CHECK (kind IN ('embed_message', 'summarise_episode')),
    target      uuid NOT NULL,
    class       smallint NOT NULL DEFAULT 0 CHECK (class IN (0, 1)),
    attempts    integer NOT NULL DEFAULT 0,
    due_at      timestamptz NOT NULL DEFAULT 'epoch',
    last_error  text,
    created_at  timestamptz NOT NULL
);
CREATE INDEX ix_memory_jobs_claim ON memory_jobs (class, tenant_id, due_at, seq);
CREATE INDEX ix_memory_jobs_target ON memory_jobs (target);
