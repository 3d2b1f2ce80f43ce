-- A memory search keeps to one user, and the embedded vector index reads
-- that user's vectors from this table at each search (it keeps no copy of
-- them): the index finds one user's rows without walking the agent's. Its
-- first two columns serve what the (tenant, agent) index served.
CREATE INDEX ix_memory_vectors_user ON memory_vectors (tenant_id, agent_id, user_id);
DROP INDEX ix_memory_vectors_collection;
