//! The `facts` rows on SQLite, as both the reads of facts (`facts.rs`) and
//! a person's changes to them (`fact_changes.rs`) use them: reading a row,
//! inserting a version with its history entry and event, superseding, the
//! queries behind lists and searches. Their keyword index `fact_fts` is kept
//! by triggers in the facts' own transaction.

use std::collections::HashMap;

use octopus_core::fact::{Fact, FactAction, FactFilter, FactHit, FactSearchQuery, FactSource};
use octopus_core::{AgentId, EpisodeId, FactId, MessageId, TenantId};
use rusqlite::types::Value;
use rusqlite::{Connection, params};

use crate::codec::{self, micros};
use crate::error::{Result as StoreResult, corrupt};
use crate::rows::{self, Filters};

/// The columns a [`Fact`] is read from, of `facts` aliased `f`.
use octopus_sql::columns::FACTS as COLUMNS;

/// Facts in use only: a deleted or archived episode's facts leave every
/// read, as its messages do; a fact a person added has no episode. The
/// join, then the condition for the query's `WHERE`.
const IN_USE: &str = "LEFT JOIN episodes e ON e.id = f.episode_id";
const IN_USE_WHERE: &str =
    "(f.episode_id IS NULL OR (e.deleted_at IS NULL AND e.archived_at IS NULL))";

/// Where each field is among [`COLUMNS`], which every query reading facts
/// selects first: a profile reads a thousand facts, and a lookup by name
/// compares the name with every column's, for every field of every row.
mod at {
    pub const ID: usize = 0;
    pub const TENANT_ID: usize = 1;
    pub const AGENT_ID: usize = 2;
    pub const USER_ID: usize = 3;
    pub const EPISODE_ID: usize = 4;
    pub const MESSAGE_IDS: usize = 5;
    pub const TEXT: usize = 6;
    pub const VALID_FROM: usize = 7;
    pub const VALID_TO: usize = 8;
    pub const SUPERSEDED_BY: usize = 9;
    pub const CREATED_AT: usize = 10;
    pub const SOURCE: usize = 11;
    pub const CHANGED_BY: usize = 12;
    pub const CATEGORY: usize = 13;
    pub const KEY: usize = 14;
}

pub(crate) fn fact_from_row(row: &rusqlite::Row<'_>) -> StoreResult<Fact> {
    let message_ids: String = row.get(at::MESSAGE_IDS)?;
    let message_ids: Vec<MessageId> =
        serde_json::from_str(&message_ids).map_err(|e| corrupt("fact message ids", e))?;
    Ok(Fact {
        id: FactId(rows::uuid(row, at::ID)?),
        tenant_id: TenantId(rows::uuid(row, at::TENANT_ID)?),
        agent_id: AgentId(rows::uuid(row, at::AGENT_ID)?),
        user_id: row.get(at::USER_ID)?,
        episode_id: rows::opt_uuid(row, at::EPISODE_ID)?.map(EpisodeId),
        message_ids,
        text: row.get(at::TEXT)?,
        valid_from: rows::time(row, at::VALID_FROM)?,
        valid_to: rows::opt_time(row, at::VALID_TO)?,
        superseded_by: rows::opt_uuid(row, at::SUPERSEDED_BY)?.map(FactId),
        created_at: rows::time(row, at::CREATED_AT)?,
        source: {
            let source: String = row.get(at::SOURCE)?;
            FactSource::parse(&source).ok_or_else(|| corrupt("fact source", source))?
        },
        changed_by: row.get(at::CHANGED_BY)?,
        category: row.get(at::CATEGORY)?,
        key: row.get(at::KEY)?,
    })
}

/// The token naming one user's facts with one agent in `fact_fts`'s
/// `scope` column.
fn fact_scope(tenant: TenantId, agent: AgentId, user: &str) -> String {
    format!(
        "f{}",
        crate::search::fnv(&[tenant.0.as_bytes(), agent.0.as_bytes(), user.as_bytes()])
    )
}

/// Stores `fact` (its full-text entry written by the trigger) and the
/// change in its history; returns its row's `seq`. A version that a stored
/// one points to as its replacement (`supersede` runs first) joins that
/// one's lineage; any other starts its own.
pub(crate) fn insert_fact(
    tx: &Connection,
    fact: &Fact,
    action: FactAction,
    reason: Option<&str>,
) -> StoreResult<i64> {
    let message_ids =
        serde_json::to_string(&fact.message_ids).map_err(|e| corrupt("fact message ids", e))?;
    let lineage: Vec<u8> = tx
        .prepare_cached(
            "SELECT coalesce((SELECT lineage_id FROM facts WHERE tenant_id = ?1 AND superseded_by = ?2), ?2)",
        )?
        .query_row(
            [fact.tenant_id.0.as_bytes(), fact.id.0.as_bytes()],
            |r| r.get(0),
        )?;
    let seq = tx
        .prepare_cached(
            "INSERT INTO facts (id, tenant_id, agent_id, user_id, episode_id, message_ids, text,
                                valid_from, valid_to, superseded_by, created_at, scope,
                                source, changed_by, lineage_id, category, key)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
             RETURNING seq",
        )?
        .query_row(
            params![
                fact.id.0.as_bytes(),
                fact.tenant_id.0.as_bytes(),
                fact.agent_id.0.as_bytes(),
                fact.user_id,
                fact.episode_id.map(|e| *e.0.as_bytes()),
                message_ids,
                fact.text,
                micros(fact.valid_from),
                fact.valid_to.map(micros),
                fact.superseded_by.map(|f| *f.0.as_bytes()),
                micros(fact.created_at),
                fact_scope(fact.tenant_id, fact.agent_id, &fact.user_id),
                fact.source.as_str(),
                fact.changed_by,
                lineage,
                fact.category,
                fact.key,
            ],
            |r| r.get(0),
        )?;
    record_history(
        tx,
        fact,
        &lineage,
        action,
        &fact.changed_by,
        reason,
        fact.created_at,
    )?;
    let event =
        octopus_core::webhook::fact_changed(fact, codec::uuid_from(&lineage)?, fact.created_at);
    crate::webhooks::record(tx, &event)?;
    Ok(seq)
}

/// Appends a change to the history of the fact `version` belongs to.
fn record_history(
    tx: &Connection,
    version: &Fact,
    lineage: &[u8],
    action: FactAction,
    changed_by: &str,
    reason: Option<&str>,
    at: chrono::DateTime<chrono::Utc>,
) -> StoreResult<()> {
    tx.prepare_cached(
        "INSERT INTO fact_history (tenant_id, agent_id, user_id, episode_id, lineage_id, fact_id,
                                   action, changed_by, reason, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        version.tenant_id.0.as_bytes(),
        version.agent_id.0.as_bytes(),
        version.user_id,
        version.episode_id.map(|e| *e.0.as_bytes()),
        lineage,
        version.id.0.as_bytes(),
        action.as_str(),
        changed_by,
        reason,
        micros(at),
    ])?;
    Ok(())
}

/// Marks `old` replaced by `new` from `at`, if it still holds and is the
/// same user's; returns whether it did.
pub(crate) fn supersede(tx: &Connection, fact: &Fact, old: FactId) -> StoreResult<bool> {
    Ok(tx
        .prepare_cached(
            "UPDATE facts SET valid_to = max(?1, valid_from), superseded_by = ?2
             WHERE id = ?3 AND tenant_id = ?4 AND agent_id = ?5 AND user_id = ?6 AND superseded_by IS NULL",
        )?
        .execute(params![
            micros(fact.valid_from),
            fact.id.0.as_bytes(),
            old.0.as_bytes(),
            fact.tenant_id.0.as_bytes(),
            fact.agent_id.0.as_bytes(),
            fact.user_id,
        ])?
        > 0)
}

/// Removes the facts learned in `episode`, in `tx`; the facts they replaced
/// hold again. Returns how many it removed.
pub(crate) fn delete_episode_facts(
    tx: &Connection,
    tenant: TenantId,
    episode: EpisodeId,
) -> StoreResult<usize> {
    tx.execute(
        "UPDATE facts SET valid_to = NULL, superseded_by = NULL
         WHERE tenant_id = ?1 AND superseded_by IN (SELECT id FROM facts WHERE tenant_id = ?1 AND episode_id = ?2)",
        [tenant.0.as_bytes(), episode.0.as_bytes()],
    )?;
    tx.execute(
        "DELETE FROM fact_history WHERE tenant_id = ?1 AND episode_id = ?2",
        [tenant.0.as_bytes(), episode.0.as_bytes()],
    )?;
    Ok(tx.execute(
        "DELETE FROM facts WHERE tenant_id = ?1 AND episode_id = ?2",
        [tenant.0.as_bytes(), episode.0.as_bytes()],
    )?)
}

/// One fact by id, of an episode in use (as reads see it).
pub(crate) fn in_use(conn: &Connection, tenant: TenantId, id: FactId) -> StoreResult<Option<Fact>> {
    Ok(by_ids(conn, tenant, &[id])?.pop())
}

/// One stored fact by id, whatever its episode's state; `None` once gone.
pub(crate) fn any_fact(
    conn: &Connection,
    tenant: TenantId,
    id: FactId,
) -> StoreResult<Option<Fact>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM facts f WHERE f.id = ?1 AND f.tenant_id = ?2"
    ))?;
    Ok(rows::collect(
        &mut stmt,
        [id.0.as_bytes(), tenant.0.as_bytes()],
        fact_from_row,
    )?
    .pop())
}

/// The facts of `episode`, oldest first, for a dump.
pub(crate) fn episode_facts(
    conn: &Connection,
    tenant: TenantId,
    episode: EpisodeId,
) -> StoreResult<Vec<Fact>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM facts f WHERE f.tenant_id = ?1 AND f.episode_id = ?2 ORDER BY f.seq"
    ))?;
    rows::collect(
        &mut stmt,
        [tenant.0.as_bytes(), episode.0.as_bytes()],
        fact_from_row,
    )
}

pub(crate) fn list(
    conn: &Connection,
    tenant: TenantId,
    filter: &FactFilter,
) -> StoreResult<Vec<Fact>> {
    let current = if filter.include_replaced {
        ""
    } else {
        "AND f.superseded_by IS NULL"
    };
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM facts f {IN_USE}
         WHERE f.tenant_id = ?1 AND f.agent_id = ?2 AND f.user_id = ?3 {current}
           AND {IN_USE_WHERE}
           AND (?6 IS NULL OR f.category IN (SELECT value FROM json_each(?6)))
           AND (?7 IS NULL OR f.key = ?7)
         ORDER BY f.valid_from DESC, f.seq DESC LIMIT ?4 OFFSET ?5"
    ))?;
    rows::collect(
        &mut stmt,
        params![
            tenant.0.as_bytes(),
            filter.agent_id.0.as_bytes(),
            filter.user_id,
            filter.page.limit,
            filter.page.offset,
            (!filter.categories.is_empty())
                .then(|| serde_json::to_string(&filter.categories).unwrap_or_default()),
            filter.key,
        ],
        fact_from_row,
    )
}

pub(crate) fn by_ids(
    conn: &Connection,
    tenant: TenantId,
    ids: &[FactId],
) -> StoreResult<Vec<Fact>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut filters = Filters::default();
    filters.push("f.tenant_id = ?", rows::blob(&tenant.0));
    let placeholders: Vec<String> = ids
        .iter()
        .map(|id| filters.bind(rows::blob(&id.0)))
        .collect();
    let sql = format!(
        "SELECT {COLUMNS} FROM facts f {IN_USE} {} AND {IN_USE_WHERE} AND f.id IN ({})",
        filters.where_sql(),
        placeholders.join(", ")
    );
    let found = rows::collect(
        &mut conn.prepare(&sql)?,
        rusqlite::params_from_iter(filters.params),
        fact_from_row,
    )?;
    let mut by_id: HashMap<FactId, Fact> = found.into_iter().map(|f| (f.id, f)).collect();
    Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
}

/// A keyword search of one user's facts: matches found through the user's
/// scope token, ranked by BM25 with statistics counted over that user's
/// facts alone (`fts_rank.rs`).
pub(crate) fn search(
    conn: &Connection,
    tenant: TenantId,
    query: &FactSearchQuery,
) -> StoreResult<Vec<FactHit>> {
    let terms = octopus_core::search::search_terms(&query.text);
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let scope = fact_scope(tenant, query.agent_id, &query.user_id);
    let statistics = crate::search::ScopedStatistics::count(
        conn, "fact_fts", "fact_fts", &scope, "text", &terms, None,
    )?;
    let mut filters = Filters::default();
    let rank = statistics.rank_sql("fact_fts", &mut filters);
    let quoted: Vec<String> = terms.iter().map(|w| format!("\"{w}\"")).collect();
    let matching = filters.bind(Value::Text(format!(
        "scope : \"{scope}\" AND text : ({})",
        quoted.join(" OR ")
    )));
    filters.push("f.tenant_id = ?", rows::blob(&tenant.0));
    filters.push("f.agent_id = ?", rows::blob(&query.agent_id.0));
    filters.push("f.user_id = ?", Value::Text(query.user_id.clone()));
    let limit = filters.bind(Value::Integer(query.limit.into()));
    let sql = format!(
        "WITH ranked AS (
             SELECT rowid AS seq, {rank} AS rank FROM fact_fts WHERE fact_fts MATCH {matching}
         )
         SELECT {COLUMNS}, ranked.rank AS rank FROM ranked JOIN facts f ON f.seq = ranked.seq {IN_USE}
         {} AND {IN_USE_WHERE} ORDER BY ranked.rank DESC, f.seq LIMIT {limit}",
        filters.where_sql()
    );
    rows::collect(
        &mut *conn.prepare_cached(&sql)?,
        rusqlite::params_from_iter(filters.params),
        |row| {
            Ok(FactHit {
                score: row.get("rank")?,
                fact: fact_from_row(row)?,
            })
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_positions_are_those_of_the_columns() {
        let names: Vec<&str> = COLUMNS
            .split(',')
            .map(|c| c.trim().trim_start_matches("f."))
            .collect();
        let positions = [
            ("id", at::ID),
            ("tenant_id", at::TENANT_ID),
            ("agent_id", at::AGENT_ID),
            ("user_id", at::USER_ID),
            ("episode_id", at::EPISODE_ID),
            ("message_ids", at::MESSAGE_IDS),
            ("text", at::TEXT),
            ("valid_from", at::VALID_FROM),
            ("valid_to", at::VALID_TO),
            ("superseded_by", at::SUPERSEDED_BY),
            ("created_at", at::CREATED_AT),
            ("source", at::SOURCE),
            ("changed_by", at::CHANGED_BY),
            ("category", at::CATEGORY),
            ("key", at::KEY),
        ];
        assert_eq!(names.len(), positions.len());
        for (name, position) in positions {
            assert_eq!(names[position], name);
        }
    }
}
