-- A deleted fact's terms leave the index as it is deleted, rather than
-- waiting, marked deleted, for a merge: a forgotten user's facts are then
-- gone from the file without rewriting it. The merge once more here drops
-- what earlier deletions left.
INSERT INTO fact_fts (fact_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO fact_fts (fact_fts) VALUES ('optimize');
