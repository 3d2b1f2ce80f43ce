-- Each message is also indexed under its owner: one token in the `scope` column
-- naming its (tenant, agent, user). A recall matches that token AND its words,
-- so FTS5 scores only that user's messages, instead of every matching message
-- of every tenant, each joined and then filtered out (`octopus-bench context`:
-- most of a recall's time with 100 users of one agent).
-- The index is derived data: it is rebuilt from the messages table.
DROP TABLE message_fts;
CREATE VIRTUAL TABLE message_fts USING fts5 (
    text,
    scope,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
UPDATE index_state SET last_seq = 0;
