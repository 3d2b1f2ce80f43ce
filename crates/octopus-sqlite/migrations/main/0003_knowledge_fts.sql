-- Keyword search over knowledge chunks. Chunks are written rarely (ingestion is
-- bound by embedding), so this index is kept in the chunks' own transaction by
-- triggers, unlike the message index, which follows the table in batches.
CREATE VIRTUAL TABLE knowledge_fts USING fts5 (
    heading,
    content,
    content = 'knowledge_chunks',
    content_rowid = 'seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER knowledge_chunks_fts_insert AFTER INSERT ON knowledge_chunks BEGIN
    INSERT INTO knowledge_fts (rowid, heading, content) VALUES (new.seq, new.heading, new.content);
END;

CREATE TRIGGER knowledge_chunks_fts_delete AFTER DELETE ON knowledge_chunks BEGIN
    INSERT INTO knowledge_fts (knowledge_fts, rowid, heading, content) VALUES ('delete', old.seq, old.heading, old.content);
END;

-- Chunks are never updated in place (re-ingestion deletes and inserts), but keep
-- the index right if one ever is.
CREATE TRIGGER knowledge_chunks_fts_update AFTER UPDATE ON knowledge_chunks BEGIN
    INSERT INTO knowledge_fts (knowledge_fts, rowid, heading, content) VALUES ('delete', old.seq, old.heading, old.content);
    INSERT INTO knowledge_fts (rowid, heading, content) VALUES (new.seq, new.heading, new.content);
END;
