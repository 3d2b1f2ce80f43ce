-- pgvector as an implementation of the vector port (octopus_core::vectors):
-- its own copy of each vector set, followed after every committed change to
-- the set's rows and reconciled by key when it lags (src/pgvector.rs). The
-- rows in knowledge_chunks and memory_vectors stay the truth.

-- The version of the rows each set's copy reflects. A set without a row
-- holds nothing, as a set at version 0.
CREATE TABLE vector_sets (
    tenant_id  uuid    NOT NULL,
    agent_id   uuid    NOT NULL,
    kind       text    NOT NULL,
    version    bigint  NOT NULL,
    PRIMARY KEY (tenant_id, agent_id, kind)
);

CREATE TABLE vector_points (
    tenant_id  uuid        NOT NULL,
    agent_id   uuid        NOT NULL,
    kind       text        NOT NULL,
    key        bigint      NOT NULL,
    dimension  integer     NOT NULL,
    embedding  vector      NOT NULL,
    partition  text,
    labels     jsonb       NOT NULL,
    at         timestamptz,
    PRIMARY KEY (tenant_id, agent_id, kind, key)
);

-- Searches used to scan the rows' own HNSW indexes (one per dimension, made
-- at run time); vector_points has its own now.
DO $$
DECLARE index_name text;
BEGIN
    FOR index_name IN
        SELECT indexname FROM pg_indexes
        WHERE schemaname = current_schema()
          AND tablename IN ('knowledge_chunks', 'memory_vectors')
          AND indexname LIKE 'ix\_%\_hnsw\_%'
    LOOP
        EXECUTE format('DROP INDEX %I', index_name);
    END LOOP;
END $$;
