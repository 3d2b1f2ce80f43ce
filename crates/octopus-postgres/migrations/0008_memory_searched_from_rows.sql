-- The pgvector index keeps no copy of memory sets any more: a recall scores
-- one user's rows in memory_vectors, by its index on the user
-- (src/pgvector.rs). The copies made before are dropped.
DELETE FROM vector_points WHERE kind = 'memory';
DELETE FROM vector_sets WHERE kind = 'memory';
