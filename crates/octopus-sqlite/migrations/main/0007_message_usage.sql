-- A reply generated in a turn keeps the usage its provider reported, which is
-- what its episode's token totals add up.
ALTER TABLE messages ADD COLUMN usage_input_tokens INTEGER;
ALTER TABLE messages ADD COLUMN usage_output_tokens INTEGER;
