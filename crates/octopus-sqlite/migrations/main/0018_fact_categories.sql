-- The category an agent's model files a fact under, one of the agent's
-- `memory.fact_categories`; NULL when the agent names none.
ALTER TABLE facts ADD COLUMN category TEXT;
