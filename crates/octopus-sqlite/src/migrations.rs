//! Schema migrations, embedded in the binary and applied on open.
//!
//! Each database file has its own ordered list. A migration runs in the same
//! transaction as the bump of `PRAGMA user_version`, so a crash leaves either the
//! old schema or the new one, never half of it.

use rusqlite::Connection;

use crate::error::Error;
use octopus_sql::MigrationError;

pub(crate) struct Migration {
    pub name: &'static str,
    pub sql: &'static str,
}

pub(crate) const MAIN: &[Migration] = &[
    Migration {
        name: "main/0001_initial",
        sql: include_str!("../migrations/main/0001_initial.sql"),
    },
    Migration {
        name: "main/0002_knowledge",
        sql: include_str!("../migrations/main/0002_knowledge.sql"),
    },
    Migration {
        name: "main/0003_knowledge_fts",
        sql: include_str!("../migrations/main/0003_knowledge_fts.sql"),
    },
    Migration {
        name: "main/0004_memory",
        sql: include_str!("../migrations/main/0004_memory.sql"),
    },
    Migration {
        name: "main/0005_fair_memory_queue",
        sql: include_str!("../migrations/main/0005_fair_memory_queue.sql"),
    },
    Migration {
        name: "main/0006_deleted_agents",
        sql: include_str!("../migrations/main/0006_deleted_agents.sql"),
    },
    Migration {
        name: "main/0007_turns",
        sql: include_str!("../migrations/main/0007_turns.sql"),
    },
    Migration {
        name: "main/0008_procedures",
        sql: include_str!("../migrations/main/0008_procedures.sql"),
    },
    Migration {
        name: "main/0009_retention",
        sql: include_str!("../migrations/main/0009_retention.sql"),
    },
    Migration {
        name: "main/0010_knowledge_fts_scope",
        sql: include_str!("../migrations/main/0010_knowledge_fts_scope.sql"),
    },
    Migration {
        name: "main/0011_pending_erasures",
        sql: include_str!("../migrations/main/0011_pending_erasures.sql"),
    },
    Migration {
        name: "main/0012_parked_jobs",
        sql: include_str!("../migrations/main/0012_parked_jobs.sql"),
    },
    Migration {
        name: "main/0013_facts",
        sql: include_str!("../migrations/main/0013_facts.sql"),
    },
    Migration {
        name: "main/0014_memory_by_user",
        sql: include_str!("../migrations/main/0014_memory_by_user.sql"),
    },
    Migration {
        name: "main/0015_memory_job_turns",
        sql: include_str!("../migrations/main/0015_memory_job_turns.sql"),
    },
    Migration {
        name: "main/0016_fact_fts_secure_delete",
        sql: include_str!("../migrations/main/0016_fact_fts_secure_delete.sql"),
    },
    Migration {
        name: "main/0017_fact_history",
        sql: include_str!("../migrations/main/0017_fact_history.sql"),
    },
    Migration {
        name: "main/0018_fact_categories",
        sql: include_str!("../migrations/main/0018_fact_categories.sql"),
    },
    Migration {
        name: "main/0019_learning_during_sessions",
        sql: include_str!("../migrations/main/0019_learning_during_sessions.sql"),
    },
    Migration {
        name: "main/0020_manual_facts",
        sql: include_str!("../migrations/main/0020_manual_facts.sql"),
    },
    Migration {
        name: "main/0021_webhooks",
        sql: include_str!("../migrations/main/0021_webhooks.sql"),
    },
    Migration {
        name: "main/0022_fact_keys",
        sql: include_str!("../migrations/main/0022_fact_keys.sql"),
    },
    Migration {
        name: "main/0023_one_pii_setting",
        sql: include_str!("../migrations/main/0023_one_pii_setting.sql"),
    },
    Migration {
        name: "main/0024_profile_summaries",
        sql: include_str!("../migrations/main/0024_profile_summaries.sql"),
    },
];

pub(crate) const SEARCH: &[Migration] = &[
    Migration {
        name: "search/0001_message_fts",
        sql: include_str!("../migrations/search/0001_message_fts.sql"),
    },
    Migration {
        name: "search/0002_message_fts_scope",
        sql: include_str!("../migrations/search/0002_message_fts_scope.sql"),
    },
    Migration {
        name: "search/0003_message_fts_tenant_scope",
        sql: include_str!("../migrations/search/0003_message_fts_tenant_scope.sql"),
    },
    Migration {
        name: "search/0004_scope_counts",
        sql: include_str!("../migrations/search/0004_scope_counts.sql"),
    },
];

/// Applies the migrations `conn` has not seen yet; returns how many ran.
pub(crate) fn apply(conn: &mut Connection, migrations: &[Migration]) -> Result<usize, Error> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let current: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    let pending =
        octopus_sql::pending_migrations(current, migrations.len()).map_err(MigrationError::from)?;
    let pending = &migrations[pending];
    for migration in pending {
        tx.execute_batch(migration.sql)
            .map_err(|source| MigrationError::Failed {
                name: migration.name,
                source,
            })?;
        tracing::info!(migration = migration.name, "applied migration");
    }
    tx.pragma_update(None, "user_version", migrations.len() as i64)?;
    tx.commit()?;
    Ok(pending.len())
}
