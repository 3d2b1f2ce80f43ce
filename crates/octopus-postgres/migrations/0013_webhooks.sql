-- Endpoints tenants register for events about their memory, and the outbox:
-- one delivery per event and endpoint, written in the transaction of the
-- change it reports, kept as the endpoint's delivery log once sent.
CREATE TABLE webhooks (
    id              uuid PRIMARY KEY,
    tenant_id       uuid NOT NULL,
    url             text NOT NULL,
    events          text[] NOT NULL,
    description     text,
    secret          text NOT NULL,
    created_at      timestamptz NOT NULL,
    failing_since   timestamptz,
    disabled_at     timestamptz,
    disabled_reason text
);
CREATE INDEX ix_webhooks_tenant ON webhooks (tenant_id, created_at);

CREATE TABLE webhook_deliveries (
    seq             bigserial PRIMARY KEY,
    tenant_id       uuid NOT NULL,
    webhook_id      uuid NOT NULL,
    event_id        uuid NOT NULL,
    event_type      text NOT NULL,
    agent_id        uuid,
    user_id         text,
    payload         text NOT NULL,
    state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    last_status     integer,
    last_error      text,
    created_at      timestamptz NOT NULL,
    last_attempt_at timestamptz,
    next_attempt_at timestamptz,
    leased_until    timestamptz,
    delivered_at    timestamptz,
    UNIQUE (webhook_id, event_id)
);
-- The claim: pending deliveries by due time, and each one's predecessors
-- for the same endpoint and user.
CREATE INDEX ix_webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX ix_webhook_deliveries_in_order ON webhook_deliveries (webhook_id, user_id, seq) WHERE state = 'pending';
CREATE INDEX ix_webhook_deliveries_log ON webhook_deliveries (webhook_id, seq);
CREATE INDEX ix_webhook_deliveries_user ON webhook_deliveries (tenant_id, user_id);
