-- Endpoints tenants register for events about their memory, and the outbox:
-- one delivery per event and endpoint, written in the transaction of the
-- change it reports, kept as the endpoint's delivery log once sent.
CREATE TABLE webhooks (
    id              BLOB PRIMARY KEY,
    tenant_id       BLOB NOT NULL,
    url             TEXT NOT NULL,
    events          TEXT NOT NULL,     -- ",fact.added,fact.deleted," : matched with instr()
    description     TEXT,
    secret          TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    failing_since   INTEGER,
    disabled_at     INTEGER,
    disabled_reason TEXT
);
CREATE INDEX webhooks_by_tenant ON webhooks (tenant_id, created_at);

CREATE TABLE webhook_deliveries (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id       BLOB NOT NULL,
    webhook_id      BLOB NOT NULL,
    event_id        BLOB NOT NULL,
    event_type      TEXT NOT NULL,
    agent_id        BLOB,
    user_id         TEXT,
    payload         TEXT NOT NULL,
    state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    last_status     INTEGER,
    last_error      TEXT,
    created_at      INTEGER NOT NULL,
    last_attempt_at INTEGER,
    next_attempt_at INTEGER,
    leased_until    INTEGER,
    delivered_at    INTEGER,
    UNIQUE (webhook_id, event_id)
);
-- The claim: pending deliveries by due time, and each one's predecessors
-- for the same endpoint and user.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (state, next_attempt_at);
CREATE INDEX webhook_deliveries_in_order ON webhook_deliveries (webhook_id, user_id, state, seq);
CREATE INDEX webhook_deliveries_by_user ON webhook_deliveries (tenant_id, user_id);
