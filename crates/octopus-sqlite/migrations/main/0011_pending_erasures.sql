-- Forgetting a user, interrupted: written in the transaction that removes the
-- user's rows, deleted once their full-text entries and vectors are erased
-- and the files compacted. What is left here at start (a crash in between) is
-- finished then, and before the next forget. `work` is a PendingErasure in
-- JSON: row numbers and vector keys, no word of the user's.
CREATE TABLE pending_erasures (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id  BLOB NOT NULL,
    work       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
