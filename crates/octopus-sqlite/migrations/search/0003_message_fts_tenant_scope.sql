-- Each message's `scope` column now names its tenant and its agent too, not
-- only its owner (tenant, agent, user): a search counts its BM25 statistics
-- over the documents of its own scope (`fts_rank.rs`), never over other
-- tenants'. The index is derived data: rebuilt from the messages table.
DROP TABLE message_fts;
CREATE VIRTUAL TABLE message_fts USING fts5 (
    text,
    scope,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
UPDATE index_state SET last_seq = 0;
