-- Facts are learned from an open episode every so many user messages, as
-- well as at its close. An episode remembers how many of its messages were
-- learned from, and how many user messages came since a learning was last
-- queued.
ALTER TABLE episodes ADD COLUMN facts_learned_through integer NOT NULL DEFAULT 0;
ALTER TABLE episodes ADD COLUMN unlearned_user_messages integer NOT NULL DEFAULT 0;
-- Until now an episode's facts were learned once, whole, at close.
UPDATE episodes e SET facts_learned_through = message_count
WHERE EXISTS (SELECT 1 FROM facts f WHERE f.tenant_id = e.tenant_id AND f.episode_id = e.id);

ALTER TABLE memory_jobs DROP CONSTRAINT memory_jobs_kind_check;
ALTER TABLE memory_jobs ADD CONSTRAINT memory_jobs_kind_check
    CHECK (kind IN ('embed_message', 'summarise_episode', 'embed_fact', 'learn_facts'));
