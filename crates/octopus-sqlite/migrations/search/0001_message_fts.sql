-- The full-text index over messages. It is derived data: deleting this file makes
-- Octopus rebuild it from the messages table.
-- Contentless (the text lives compressed in the main database); rows are keyed by
-- messages.seq and may be deleted (contentless_delete).
CREATE VIRTUAL TABLE message_fts USING fts5 (
    text,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

-- How far the indexer has read the messages table.
CREATE TABLE index_state (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    last_seq  INTEGER NOT NULL
);
INSERT INTO index_state (id, last_seq) VALUES (1, 0);
