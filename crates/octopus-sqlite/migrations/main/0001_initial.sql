-- The relational schema of seed 002, in SQLite.
-- Ids are 16-byte UUID blobs; instants are INTEGER microseconds since the Unix
-- epoch, UTC. Every table carries tenant_id, and every query filters on it.

CREATE TABLE tenants (
    id          BLOB PRIMARY KEY,
    name        TEXT NOT NULL,
    created_at  INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE api_keys (
    id          BLOB PRIMARY KEY,
    tenant_id   BLOB NOT NULL REFERENCES tenants (id),
    name        TEXT NOT NULL,
    prefix      TEXT NOT NULL,
    key_hash    BLOB NOT NULL UNIQUE,  -- SHA-256 of the secret
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER
) WITHOUT ROWID;
CREATE INDEX ix_api_keys_tenant ON api_keys (tenant_id);

-- Server-wide settings, such as the admin key's hash.
CREATE TABLE settings (
    key    TEXT PRIMARY KEY,
    value  BLOB NOT NULL
) WITHOUT ROWID;

CREATE TABLE agents (
    id             BLOB PRIMARY KEY,
    tenant_id      BLOB NOT NULL REFERENCES tenants (id),
    name           TEXT NOT NULL,
    system_prompt  TEXT NOT NULL,
    llm_provider   TEXT NOT NULL,
    model          TEXT NOT NULL,
    llm_config     TEXT NOT NULL,  -- JSON: LlmConfig
    memory_config  TEXT NOT NULL,  -- JSON: MemoryConfig
    is_active      INTEGER NOT NULL DEFAULT 1,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
) WITHOUT ROWID;
CREATE UNIQUE INDEX ux_agents_tenant_name ON agents (tenant_id, name) WHERE is_active = 1;
CREATE INDEX ix_agents_tenant ON agents (tenant_id, created_at) WHERE is_active = 1;

CREATE TABLE conversations (
    id          BLOB PRIMARY KEY,
    tenant_id   BLOB NOT NULL REFERENCES tenants (id),
    agent_id    BLOB NOT NULL REFERENCES agents (id),
    user_id     TEXT NOT NULL,
    title       TEXT,
    metadata    TEXT NOT NULL,  -- JSON object
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    deleted_at  INTEGER
) WITHOUT ROWID;
CREATE INDEX ix_conversations_agent_user ON conversations (tenant_id, agent_id, user_id, created_at);

CREATE TABLE episodes (
    id                   BLOB PRIMARY KEY,
    tenant_id            BLOB NOT NULL REFERENCES tenants (id),
    conversation_id      BLOB NOT NULL REFERENCES conversations (id),
    agent_id             BLOB NOT NULL,
    user_id              TEXT NOT NULL,
    started_at           INTEGER NOT NULL,
    ended_at             INTEGER,
    end_reason           TEXT,
    summary              TEXT,
    key_facts            TEXT NOT NULL DEFAULT '[]',  -- JSON array of strings
    summary_embedding    BLOB,                        -- little-endian f32s
    message_count        INTEGER NOT NULL DEFAULT 0,
    total_input_tokens   INTEGER NOT NULL DEFAULT 0,
    total_output_tokens  INTEGER NOT NULL DEFAULT 0,
    last_message_at      INTEGER NOT NULL,
    deleted_at           INTEGER,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL
) WITHOUT ROWID;
-- The seed's indexes (IX_Episodes_AgentUser, IX_Episodes_EndedAt, IX_Episodes_TenantDelete).
CREATE INDEX ix_episodes_agent_user ON episodes (agent_id, user_id, tenant_id) WHERE deleted_at IS NULL;
CREATE INDEX ix_episodes_ended_at ON episodes (ended_at DESC) WHERE deleted_at IS NULL;
CREATE INDEX ix_episodes_tenant_deleted ON episodes (tenant_id, deleted_at);
CREATE INDEX ix_episodes_conversation ON episodes (conversation_id, started_at);
-- At most one open episode per conversation.
CREATE UNIQUE INDEX ux_episodes_open ON episodes (conversation_id) WHERE ended_at IS NULL;

-- One row per message. `seq` only increases (AUTOINCREMENT never reuses a value),
-- so the full-text indexer can follow the table by it.
CREATE TABLE messages (
    seq               INTEGER PRIMARY KEY AUTOINCREMENT,
    id                BLOB NOT NULL UNIQUE,
    tenant_id         BLOB NOT NULL,
    episode_id        BLOB NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
    conversation_id   BLOB NOT NULL,
    ordinal           INTEGER NOT NULL,
    role              TEXT NOT NULL,
    content           BLOB,            -- codec byte + JSON, gzip when it pays
    name              TEXT,
    tool_call_id      TEXT,
    tool_calls        BLOB,            -- codec byte + JSON array of ToolCallRecord
    token_count       INTEGER NOT NULL,
    timestamp         INTEGER NOT NULL,
    agent_id          BLOB,
    contains_pii      INTEGER NOT NULL DEFAULT 0,
    redacted_content  BLOB,            -- codec byte + UTF-8 text
    embedding_ref     TEXT,
    created_at        INTEGER NOT NULL
);
CREATE UNIQUE INDEX ux_messages_episode_ordinal ON messages (episode_id, ordinal);
CREATE INDEX ix_messages_embedding_ref ON messages (tenant_id, embedding_ref) WHERE embedding_ref IS NOT NULL;

CREATE TABLE procedures (
    id               BLOB PRIMARY KEY,
    tenant_id        BLOB NOT NULL REFERENCES tenants (id),
    agent_id         BLOB,            -- NULL: shared by every agent of the tenant
    name             TEXT NOT NULL,
    description      TEXT,
    trigger_pattern  TEXT,
    steps            TEXT NOT NULL,   -- JSON array of ProcedureStep
    embedding        BLOB,
    is_active        INTEGER NOT NULL DEFAULT 1,
    is_approved      INTEGER NOT NULL DEFAULT 0,
    version          INTEGER NOT NULL DEFAULT 1,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    created_by       TEXT
) WITHOUT ROWID;
CREATE INDEX ix_procedures_agent ON procedures (agent_id, tenant_id) WHERE is_active = 1 AND is_approved = 1;
CREATE INDEX ix_procedures_shared ON procedures (tenant_id) WHERE agent_id IS NULL AND is_active = 1;
