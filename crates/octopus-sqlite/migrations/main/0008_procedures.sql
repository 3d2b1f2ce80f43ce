-- Procedural memory. Every version of a procedure is kept in
-- procedure_versions; the procedures row shows the version that serves (or,
-- before any approval, the newest) so that matching reads one row per
-- procedure. procedure_revisions counts each tenant's writes, so a matcher
-- built in memory knows when it is stale.
CREATE TABLE procedure_versions (
    procedure_id     BLOB NOT NULL REFERENCES procedures (id) ON DELETE CASCADE,
    tenant_id        BLOB NOT NULL,
    version          INTEGER NOT NULL,
    name             TEXT NOT NULL,
    description      TEXT,
    trigger_pattern  TEXT,
    steps            TEXT NOT NULL,   -- JSON array of ProcedureStep
    embedding        BLOB,            -- little-endian f32s
    status           TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'superseded')),
    created_by       TEXT,
    created_at       INTEGER NOT NULL,
    decided_by       TEXT,
    decided_at       INTEGER,
    PRIMARY KEY (procedure_id, version)
) WITHOUT ROWID;

ALTER TABLE procedures ADD COLUMN serving_version INTEGER;  -- NULL: none approved yet
ALTER TABLE procedures ADD COLUMN latest_version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE procedures ADD COLUMN approved_by TEXT;

-- Names are unique per tenant and agent (shared ones: agent_id NULL) among
-- active procedures.
CREATE UNIQUE INDEX ux_procedures_name ON procedures (tenant_id, ifnull(agent_id, x''), name) WHERE is_active = 1;
CREATE INDEX ix_procedures_tenant ON procedures (tenant_id, created_at);

CREATE TABLE procedure_revisions (
    tenant_id  BLOB PRIMARY KEY,
    revision   INTEGER NOT NULL
) WITHOUT ROWID;
