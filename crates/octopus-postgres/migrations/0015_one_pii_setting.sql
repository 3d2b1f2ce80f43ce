-- An agent's three PII settings become one, `pii`: the storage setting
-- first (redacted_only stores redacted text), then egress (redact_pii sends
-- only redacted text out), then detection (off, flag, redact).
UPDATE agents SET memory_config = (memory_config - 'redact_pii' - 'pii_detection' - 'pii_storage')
    || jsonb_build_object('pii', CASE
        WHEN memory_config ->> 'pii_storage' = 'redacted_only' THEN 'redact_stored'
        WHEN memory_config ->> 'redact_pii' = 'true' THEN 'redact_outgoing'
        WHEN memory_config ->> 'pii_detection' IN ('off', 'flag') THEN memory_config ->> 'pii_detection'
        ELSE 'redact'
    END)
WHERE NOT memory_config ? 'pii';
