//! The `facts` rows on PostgreSQL, as both the reads of facts (`facts.rs`)
//! and a person's changes to them (`fact_changes.rs`) use them: reading a
//! row, inserting a version with its history entry and event, superseding,
//! the episode's facts. Each row carries its `tsvector` (English stemming,
//! generated with the row).

use chrono::{DateTime, Utc};
use octopus_core::fact::{Fact, FactAction, FactSource};
use octopus_core::webhook;
use octopus_core::{AgentId, EpisodeId, FactId, MessageId, TenantId};
use sqlx_core::executor::Executor;
use sqlx_core::query::query;
use sqlx_core::row::Row;
use sqlx_postgres::{PgRow, Postgres};
use uuid::Uuid;

use crate::error::Result as StoreResult;
use crate::rows::Tx;

/// The columns a [`Fact`] is read from, of `facts` aliased `f`.
pub(crate) use octopus_sql::columns::FACTS as COLUMNS;

/// Facts in use only: a deleted or archived episode's facts leave every
/// read, as its messages do; a fact a person added has no episode. The
/// join, then the condition for the query's `WHERE`.
pub(crate) const IN_USE: &str = "LEFT JOIN episodes e ON e.id = f.episode_id";
pub(crate) const IN_USE_WHERE: &str =
    "(f.episode_id IS NULL OR (e.deleted_at IS NULL AND e.archived_at IS NULL))";

pub(crate) fn fact_from_row(row: &PgRow) -> StoreResult<Fact> {
    let message_ids: Vec<Uuid> = row.try_get("message_ids")?;
    Ok(Fact {
        id: FactId(row.try_get("id")?),
        tenant_id: TenantId(row.try_get("tenant_id")?),
        agent_id: AgentId(row.try_get("agent_id")?),
        user_id: row.try_get("user_id")?,
        episode_id: row.try_get::<Option<Uuid>, _>("episode_id")?.map(EpisodeId),
        message_ids: message_ids.into_iter().map(MessageId).collect(),
        text: row.try_get("text")?,
        valid_from: row.try_get("valid_from")?,
        valid_to: row.try_get("valid_to")?,
        superseded_by: row.try_get::<Option<Uuid>, _>("superseded_by")?.map(FactId),
        created_at: row.try_get("created_at")?,
        source: {
            let source: String = row.try_get("source")?;
            FactSource::parse(&source)
                .ok_or_else(|| crate::error::corrupt("fact source", source))?
        },
        changed_by: row.try_get("changed_by")?,
        category: row.try_get("category")?,
        key: row.try_get("key")?,
    })
}

/// Stores `fact` and the change in its history. A version that a stored
/// one points to as its replacement (`supersede` runs first) joins that
/// one's lineage; any other starts its own.
pub(crate) async fn insert_fact(
    tx: &mut Tx<'_>,
    fact: &Fact,
    action: FactAction,
    reason: Option<&str>,
) -> StoreResult<()> {
    let message_ids: Vec<Uuid> = fact.message_ids.iter().map(|m| m.0).collect();
    let lineage: Uuid = sqlx_core::query_scalar::query_scalar(
        "SELECT coalesce((SELECT lineage_id FROM facts WHERE tenant_id = $1 AND superseded_by = $2), $2)",
    )
    .bind(fact.tenant_id.0)
    .bind(fact.id.0)
    .fetch_one(&mut **tx)
    .await?;
    query(
        "INSERT INTO facts (id, tenant_id, agent_id, user_id, episode_id, message_ids, text,
                            valid_from, valid_to, superseded_by, created_at, source, changed_by,
                            lineage_id, category, key)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
    )
    .bind(fact.id.0)
    .bind(fact.tenant_id.0)
    .bind(fact.agent_id.0)
    .bind(&fact.user_id)
    .bind(fact.episode_id.map(|e| e.0))
    .bind(message_ids)
    .bind(&fact.text)
    .bind(fact.valid_from)
    .bind(fact.valid_to)
    .bind(fact.superseded_by.map(|f| f.0))
    .bind(fact.created_at)
    .bind(fact.source.as_str())
    .bind(&fact.changed_by)
    .bind(lineage)
    .bind(&fact.category)
    .bind(&fact.key)
    .execute(&mut **tx)
    .await?;
    record_history(
        tx,
        fact,
        lineage,
        (action, &fact.changed_by, reason),
        fact.created_at,
    )
    .await
}

/// Marks `old` replaced by `fact` from its `valid_from`, if it still holds
/// and is the same user's; returns whether it did.
pub(crate) async fn supersede(tx: &mut Tx<'_>, fact: &Fact, old: FactId) -> StoreResult<bool> {
    let updated = query(
        "UPDATE facts SET valid_to = greatest($1, valid_from), superseded_by = $2
         WHERE id = $3 AND tenant_id = $4 AND agent_id = $5 AND user_id = $6 AND superseded_by IS NULL",
    )
    .bind(fact.valid_from)
    .bind(fact.id.0)
    .bind(old.0)
    .bind(fact.tenant_id.0)
    .bind(fact.agent_id.0)
    .bind(&fact.user_id)
    .execute(&mut **tx)
    .await?;
    Ok(updated.rows_affected() > 0)
}

/// Removes the facts learned in `episode`, in `tx`; the facts they replaced
/// hold again. Returns how many it removed.
pub(crate) async fn delete_episode_facts(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    episode: EpisodeId,
) -> StoreResult<u64> {
    query(
        "UPDATE facts SET valid_to = NULL, superseded_by = NULL
         WHERE tenant_id = $1 AND superseded_by IN (SELECT id FROM facts WHERE tenant_id = $1 AND episode_id = $2)",
    )
    .bind(tenant.0)
    .bind(episode.0)
    .execute(&mut **tx)
    .await?;
    query("DELETE FROM fact_history WHERE tenant_id = $1 AND episode_id = $2")
        .bind(tenant.0)
        .bind(episode.0)
        .execute(&mut **tx)
        .await?;
    Ok(
        query("DELETE FROM facts WHERE tenant_id = $1 AND episode_id = $2")
            .bind(tenant.0)
            .bind(episode.0)
            .execute(&mut **tx)
            .await?
            .rows_affected(),
    )
}

/// One stored fact by id, whatever its episode's state; `None` once gone.
pub(crate) async fn any_fact<'c>(
    conn: impl Executor<'c, Database = Postgres>,
    tenant: TenantId,
    id: FactId,
) -> StoreResult<Option<Fact>> {
    query(&format!(
        "SELECT {COLUMNS} FROM facts f WHERE f.id = $1 AND f.tenant_id = $2"
    ))
    .bind(id.0)
    .bind(tenant.0)
    .fetch_optional(conn)
    .await?
    .as_ref()
    .map(fact_from_row)
    .transpose()
}

/// The facts of `episode`, oldest first, for a dump.
pub(crate) async fn episode_facts<'c>(
    conn: impl Executor<'c, Database = Postgres>,
    tenant: TenantId,
    episode: EpisodeId,
) -> StoreResult<Vec<Fact>> {
    query(&format!(
        "SELECT {COLUMNS} FROM facts f WHERE f.tenant_id = $1 AND f.episode_id = $2 ORDER BY f.seq"
    ))
    .bind(tenant.0)
    .bind(episode.0)
    .fetch_all(conn)
    .await?
    .iter()
    .map(fact_from_row)
    .collect()
}

/// What a history entry says: the action, who did it, and why.
pub(crate) type Change<'a> = (FactAction, &'a str, Option<&'a str>);

/// Appends a change to the history of the fact `version` belongs to, and
/// announces it (`fact.added`, `fact.updated` or `fact.deleted`).
pub(crate) async fn record_history(
    tx: &mut Tx<'_>,
    version: &Fact,
    lineage: Uuid,
    (action, changed_by, reason): Change<'_>,
    at: DateTime<Utc>,
) -> StoreResult<()> {
    query(
        "INSERT INTO fact_history (tenant_id, agent_id, user_id, episode_id, lineage_id, fact_id,
                                   action, changed_by, reason, at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(version.tenant_id.0)
    .bind(version.agent_id.0)
    .bind(&version.user_id)
    .bind(version.episode_id.map(|e| e.0))
    .bind(lineage)
    .bind(version.id.0)
    .bind(action.as_str())
    .bind(changed_by)
    .bind(reason)
    .bind(at)
    .execute(&mut **tx)
    .await?;
    let event = match action {
        FactAction::Deleted => webhook::fact_deleted(version, lineage, changed_by, at),
        _ => webhook::fact_changed(version, lineage, at),
    };
    crate::webhooks::record(tx, &event).await
}
