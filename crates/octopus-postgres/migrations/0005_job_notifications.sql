-- Every statement that queues memory work tells the servers listening on
-- `octopus_memory_jobs` (at commit, once per transaction and payload), so an
-- idle worker of another server wakes at once instead of at its next poll.
CREATE FUNCTION octopus_memory_jobs_queued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('octopus_memory_jobs', '');
    RETURN NULL;
END;
$$;
CREATE TRIGGER memory_jobs_queued AFTER INSERT ON memory_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION octopus_memory_jobs_queued();
