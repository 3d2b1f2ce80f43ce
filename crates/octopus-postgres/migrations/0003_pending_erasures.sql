-- Forgetting a user, interrupted: written in the transaction that removes the
-- user's rows, deleted once their vectors are erased from the vector index and
-- the tables vacuumed. What is left here is finished at start (by any server)
-- and before the next forget. `work` is a PendingErasure in JSON: vector keys,
-- no word of the user's.
CREATE TABLE pending_erasures (
    id         bigserial PRIMARY KEY,
    tenant_id  uuid NOT NULL,
    work       jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
