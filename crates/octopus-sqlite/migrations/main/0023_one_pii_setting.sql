-- An agent's three PII settings become one, `pii`: the storage setting
-- first (redacted_only stores redacted text), then egress (redact_pii sends
-- only redacted text out), then detection (off, flag, redact).
UPDATE agents SET memory_config = json_remove(
    json_set(memory_config, '$.pii', CASE
        WHEN json_extract(memory_config, '$.pii_storage') = 'redacted_only' THEN 'redact_stored'
        WHEN json_extract(memory_config, '$.redact_pii') = 1 THEN 'redact_outgoing'
        WHEN json_extract(memory_config, '$.pii_detection') IN ('off', 'flag')
            THEN json_extract(memory_config, '$.pii_detection')
        ELSE 'redact'
    END),
    '$.redact_pii', '$.pii_detection', '$.pii_storage')
WHERE json_type(memory_config, '$.pii') IS NULL;
