//! The SQL text both SQL stores share. The two schemas (SQLite's and
//! PostgreSQL's migrations) name the same tables and columns; what a query
//! reads and which rows a clause keeps is written here once, so that the two
//! stores cannot drift apart. Placeholders and dialect differences (`?` and
//! `$1`, `ifnull` and `COALESCE`) stay in each store.
//!
//! A clause with one bound value marks its place with a single `?`: SQLite
//! binds it as it stands; PostgreSQL's query builder splits the clause there.

#![forbid(unsafe_code)]

use octopus_core::AgentId;

/// The columns a query reads to build each stored type, in the order the
/// stores' row readers expect.
pub mod columns {
    pub const AGENTS: &str = "id, tenant_id, name, system_prompt, llm_config, memory_config, is_active, created_at, updated_at";

    pub const CONVERSATIONS: &str =
        "id, tenant_id, agent_id, user_id, title, metadata, created_at, updated_at, deleted_at";

    pub const EPISODES: &str = "id, tenant_id, conversation_id, agent_id, user_id, started_at, ended_at, end_reason, summary,
    summary_source, key_facts, summary_embedding, message_count, facts_learned_through, total_input_tokens, total_output_tokens, last_message_at,
    deleted_at, archived_at, created_at, updated_at";

    /// Read from `facts f`.
    pub const FACTS: &str = "f.id, f.tenant_id, f.agent_id, f.user_id, f.episode_id, f.message_ids, \
                             f.text, f.valid_from, f.valid_to, f.superseded_by, f.created_at, f.source, \
                             f.changed_by, f.category, f.key";

    /// With the newest version awaiting a decision, if any.
    pub const PROCEDURES: &str =
        "id, tenant_id, agent_id, name, description, trigger_pattern, steps, is_active,
    version, serving_version, latest_version, created_by, approved_by, created_at, updated_at,
    (SELECT max(v.version) FROM procedure_versions v
     WHERE v.procedure_id = procedures.id AND v.status = 'pending') AS pending_version";
}

/// Which episodes (or conversations) a lookup may see: soft-deleted rows are
/// reached only by the operations that restore or purge them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visibility {
    Live,
    Deleted,
}

impl Visibility {
    /// The condition on `deleted_at` that keeps the rows this visibility sees.
    pub fn clause(self) -> &'static str {
        match self {
            Visibility::Live => "deleted_at IS NULL",
            Visibility::Deleted => "deleted_at IS NOT NULL",
        }
    }

    /// Whether a row deleted (or not) is seen.
    pub fn sees(self, deleted: bool) -> bool {
        deleted == (self == Visibility::Deleted)
    }
}

/// Where a kind of vector set lives: a table of sets (`tenant_id`,
/// `agent_id`, `dimension`, `version` and a count) and a table of rows
/// (`seq`, `tenant_id`, `agent_id`, `embedding` and the fields searches
/// filter on).
#[derive(Clone, Copy, Debug)]
pub struct VectorTables {
    pub collections: &'static str,
    /// The sets' column counting their rows.
    pub count_column: &'static str,
    pub rows: &'static str,
    /// The rows' columns a search filters on.
    pub field_columns: &'static str,
}

impl VectorTables {
    pub const KNOWLEDGE: VectorTables = VectorTables {
        collections: "knowledge_collections",
        count_column: "chunk_count",
        rows: "knowledge_chunks",
        field_columns: "source, chunk_index, category, heading, indexed_at",
    };

    pub const MEMORY: VectorTables = VectorTables {
        collections: "memory_collections",
        count_column: "vector_count",
        rows: "memory_vectors",
        field_columns: "user_id, kind, episode_id, at",
    };
}

/// The condition that keeps the procedures a listing's agent and `shared`
/// flags ask for, and the agent it binds to its `?`; `None` keeps them all.
///
/// With an agent, `shared: true` adds the tenant's shared procedures (those
/// of no agent); without one, `shared` picks the shared or the agents' own.
pub fn procedure_scope(
    agent: Option<AgentId>,
    shared: Option<bool>,
) -> Option<(&'static str, Option<AgentId>)> {
    match (agent, shared) {
        (Some(agent), Some(true)) => Some(("(agent_id = ? OR agent_id IS NULL)", Some(agent))),
        (Some(agent), _) => Some(("agent_id = ?", Some(agent))),
        (None, Some(true)) => Some(("agent_id IS NULL", None)),
        (None, Some(false)) => Some(("agent_id IS NOT NULL", None)),
        (None, None) => None,
    }
}

/// A database whose schema is newer than this build's migrations: it was
/// written by a newer Octopus, and an older one must not touch it.
#[derive(Debug, thiserror::Error)]
#[error(
    "the database was written by a newer Octopus (schema version {found}, this build knows {known})"
)]
pub struct SchemaTooNew {
    pub found: i64,
    pub known: i64,
}

/// Bringing a database's schema up to this build's failed: one migration
/// (`Failed`, with the driver's error), or the database is newer.
#[derive(Debug, thiserror::Error)]
pub enum MigrationError<E: std::error::Error + 'static> {
    #[error("apply migration {name}: {source}")]
    Failed { name: &'static str, source: E },
    #[error(transparent)]
    SchemaTooNew(#[from] SchemaTooNew),
}

/// The migrations still to apply to a database at schema version `found`,
/// of the `known` this build has (in order, from index `found`).
pub fn pending_migrations(
    found: i64,
    known: usize,
) -> Result<std::ops::Range<usize>, SchemaTooNew> {
    let known_version = i64::try_from(known).unwrap_or(i64::MAX);
    match usize::try_from(found) {
        Ok(applied) if found <= known_version => Ok(applied..known),
        _ => Err(SchemaTooNew {
            found,
            known: known_version,
        }),
    }
}

/// A stored value this build cannot read back: the database was altered,
/// or written wrongly.
#[derive(Debug, thiserror::Error)]
#[error("corrupt {what} in the database: {detail}")]
pub struct Corrupt {
    pub what: &'static str,
    pub detail: String,
}

pub fn corrupt(what: &'static str, detail: impl std::fmt::Display) -> Corrupt {
    Corrupt {
        what,
        detail: detail.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clause_binds_a_value_exactly_when_it_has_a_placeholder() {
        let agent = AgentId::new();
        for (a, shared) in [
            (Some(agent), Some(true)),
            (Some(agent), Some(false)),
            (Some(agent), None),
            (None, Some(true)),
            (None, Some(false)),
        ] {
            let (clause, bound) = procedure_scope(a, shared).expect("a condition");
            assert_eq!(
                clause.matches('?').count(),
                usize::from(bound.is_some()),
                "{clause}"
            );
        }
        assert_eq!(procedure_scope(None, None), None);
    }

    #[test]
    fn a_newer_schema_is_refused_and_an_older_one_gets_the_rest() {
        assert_eq!(pending_migrations(0, 3).unwrap(), 0..3);
        assert_eq!(pending_migrations(3, 3).unwrap(), 3..3);
        let refused = pending_migrations(4, 3).unwrap_err();
        assert_eq!((refused.found, refused.known), (4, 3));
        assert!(pending_migrations(-1, 3).is_err());
    }

    #[test]
    fn each_visibility_sees_only_its_own_rows() {
        assert!(Visibility::Live.sees(false) && !Visibility::Live.sees(true));
        assert!(Visibility::Deleted.sees(true) && !Visibility::Deleted.sees(false));
    }
}
