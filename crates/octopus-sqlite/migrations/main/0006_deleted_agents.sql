-- An agent can be deleted: from then on it is not found, by any route, and its
-- name is free. Its rows stay until a purge removes them.
ALTER TABLE agents ADD COLUMN deleted_at INTEGER;
