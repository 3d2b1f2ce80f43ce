-- A search's BM25 needs how many documents its scope holds and their total
-- length. Counting them at each search read every document of the scope;
-- the indexer now keeps them as it indexes and forgets: each indexed
-- message's scope tokens and length (the index holds no text to read them
-- back from), and each scope token's totals. The index is derived data:
-- rebuilt from the messages table, which fills both.
DROP TABLE message_fts;
CREATE VIRTUAL TABLE message_fts USING fts5 (
    text,
    scope,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE message_lengths (
    seq     INTEGER PRIMARY KEY,
    scope   TEXT NOT NULL,
    length  INTEGER NOT NULL
);
CREATE TABLE scope_counts (
    scope         TEXT PRIMARY KEY,
    documents     INTEGER NOT NULL,
    total_length  INTEGER NOT NULL
) WITHOUT ROWID;
UPDATE index_state SET last_seq = 0;
