-- A memory job that cannot succeed as the server is configured (an agent's
-- model with no API key) is parked: due never, and `parked_under` names the
-- configuration it failed under. Parked jobs are neither claimed nor counted
-- as waiting; they are released when the agent's settings change, or at the
-- start of a server configured otherwise.
ALTER TABLE memory_jobs ADD COLUMN parked_under TEXT;
