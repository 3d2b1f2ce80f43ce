-- Each chunk is also indexed under its collection: one token in the `scope`
-- column naming its (tenant, agent). A keyword search first ranks the whole
-- index and reads only the best rows; when those belong mostly to other
-- collections it matches this token AND its words, so FTS5 ranks only the
-- collection's chunks (`knowledge.rs::keyword_hits`).
-- Contentless: the words are in `knowledge_chunks`; the index keeps only what
-- it needs to match and rank. The triggers keep it in the chunks' own
-- transaction, as before.
DROP TRIGGER knowledge_chunks_fts_insert;
DROP TRIGGER knowledge_chunks_fts_delete;
DROP TRIGGER knowledge_chunks_fts_update;
DROP TABLE knowledge_fts;

CREATE VIRTUAL TABLE knowledge_fts USING fts5 (
    heading,
    content,
    scope,
    content = '',
    contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);

-- `knowledge_scope` in knowledge.rs builds the same token for a query.
CREATE TRIGGER knowledge_chunks_fts_insert AFTER INSERT ON knowledge_chunks BEGIN
    INSERT INTO knowledge_fts (rowid, heading, content, scope)
    VALUES (new.seq, new.heading, new.content, 'k' || hex(new.tenant_id) || hex(new.agent_id));
END;

CREATE TRIGGER knowledge_chunks_fts_delete AFTER DELETE ON knowledge_chunks BEGIN
    DELETE FROM knowledge_fts WHERE rowid = old.seq;
END;

CREATE TRIGGER knowledge_chunks_fts_update AFTER UPDATE ON knowledge_chunks BEGIN
    DELETE FROM knowledge_fts WHERE rowid = old.seq;
    INSERT INTO knowledge_fts (rowid, heading, content, scope)
    VALUES (new.seq, new.heading, new.content, 'k' || hex(new.tenant_id) || hex(new.agent_id));
END;

INSERT INTO knowledge_fts (rowid, heading, content, scope)
SELECT seq, heading, content, 'k' || hex(tenant_id) || hex(agent_id) FROM knowledge_chunks;
