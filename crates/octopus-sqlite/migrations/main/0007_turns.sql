-- Turns and model summaries. A reply generated in a turn keeps the usage its provider reported, which is
-- what its episode's token totals add up.
ALTER TABLE messages ADD COLUMN usage_input_tokens INTEGER;
ALTER TABLE messages ADD COLUMN usage_output_tokens INTEGER;

-- Who wrote an episode's summary: the caller, the agent's model, or the
-- extractive stand-in that a model's summary later replaces. Summaries stored
-- before this migration are kept as they are.
ALTER TABLE episodes ADD COLUMN summary_source TEXT CHECK (summary_source IN ('caller', 'llm', 'extractive'));
UPDATE episodes SET summary_source = 'caller' WHERE summary IS NOT NULL;
