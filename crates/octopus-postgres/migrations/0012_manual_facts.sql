-- A person can add a fact by hand: it belongs to no episode. Its vector is
-- filed under the fact's own id in place of an episode's
-- (`Fact::vector_episode`).
ALTER TABLE facts ALTER COLUMN episode_id DROP NOT NULL;
ALTER TABLE fact_history ALTER COLUMN episode_id DROP NOT NULL;
ALTER TABLE fact_history DROP CONSTRAINT fact_history_action_check;
ALTER TABLE fact_history ADD CONSTRAINT fact_history_action_check
    CHECK (action IN ('learned', 'added', 'corrected', 'imported', 'deleted'));
