//! The episode port on PostgreSQL: appends, closes, imports, sweeps and
//! reads of episodes and their messages.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use octopus_core::appending::{AppendMessages, MessageRecord};
use octopus_core::appending::{Closing, Placement};
use octopus_core::episode::{
    CloseEpisode, Episode, EpisodeFilter, EpisodeSummary, EpisodeWithMessages, Restore,
    SummarySource,
};
use octopus_core::memory_jobs::WorkClass;
use octopus_core::message::Message;
use octopus_core::recall::{Adjacent, MessagePosition, MessageWindow};
use octopus_core::store::{EpisodeStore, Erasure};
use octopus_core::{
    AgentId, ConversationId, EpisodeId, Error as DomainError, MessageId, Result, TenantId,
    Timestamp,
};
use sqlx_core::executor::Executor;
use sqlx_core::query::query;
use sqlx_core::query_builder::QueryBuilder;
use sqlx_core::row::Row;
use sqlx_postgres::{PgRow, Postgres};

use crate::error::{Error, corrupt};
use crate::messages::{self, COLUMNS as MESSAGE_COLUMNS, message_from_row};
use crate::rows::{Tx, json_at, u32_at, u64_at};
use crate::vectors::{embedding_bytes, embedding_from};
use crate::{PostgresStore, domain};

pub(crate) use octopus_sql::columns::EPISODES as COLUMNS;

use octopus_sql::Visibility;

#[async_trait]
impl EpisodeStore for PostgresStore {
    async fn append_messages(
        &self,
        tenant: TenantId,
        batch: AppendMessages,
    ) -> Result<Vec<Message>> {
        domain(async {
            let placement = Placement::of(&batch);
            let mut tx = self.pool.begin().await?;
            let stored = messages::append_in(&mut tx, tenant, &placement, batch.messages).await?;
            tx.commit().await?;
            Ok(stored)
        })
        .await
    }

    async fn erase_message(
        &self,
        tenant: TenantId,
        erasure: &octopus_core::message::MessageErasure,
    ) -> Result<octopus_core::message::MessageErasureReceipt> {
        erasure.validate()?;
        self.finish_erasures().await?;
        domain(async {
            let (mut receipt, pending, record) =
                crate::error::retrying(|| self.remove_message(tenant, erasure)).await?;
            self.finish_erasure(tenant, &pending, record).await?;
            receipt.compacted = true;
            Ok(receipt)
        })
        .await
    }

    async fn get_episode(&self, tenant: TenantId, id: EpisodeId) -> Result<Episode> {
        domain(get_episode(&self.pool, tenant, id, Visibility::Live)).await
    }

    async fn get_episodes(&self, tenant: TenantId, ids: &[EpisodeId]) -> Result<Vec<Episode>> {
        domain(async {
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let deleted = Visibility::Live.clause();
            let wanted: Vec<uuid::Uuid> = ids.iter().map(|id| id.0).collect();
            let rows = query(&format!(
                "SELECT {COLUMNS} FROM episodes WHERE tenant_id = $1 AND id = ANY($2) AND {deleted}"
            ))
            .bind(tenant.0)
            .bind(wanted)
            .fetch_all(&self.pool)
            .await?;
            let mut by_id: std::collections::HashMap<EpisodeId, Episode> = rows
                .iter()
                .map(|row| episode_from_row(row).map(|e| (e.id, e)))
                .collect::<Result<_, Error>>()?;
            Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
        })
        .await
    }

    async fn get_episode_with_messages(
        &self,
        tenant: TenantId,
        id: EpisodeId,
    ) -> Result<EpisodeWithMessages> {
        domain(async {
            // One snapshot for both reads.
            let mut tx = self.pool.begin().await?;
            tx.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .await?;
            let episode = get_episode(&mut *tx, tenant, id, Visibility::Live).await?;
            let messages = messages::episode_messages(&mut *tx, tenant, id).await?;
            tx.commit().await?;
            Ok(EpisodeWithMessages { episode, messages })
        })
        .await
    }

    async fn episode_messages_before(
        &self,
        tenant: TenantId,
        id: EpisodeId,
        before: Option<u32>,
        limit: u32,
    ) -> Result<EpisodeWithMessages> {
        domain(async {
            let mut tx = self.pool.begin().await?;
            tx.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .await?;
            let episode = get_episode(&mut *tx, tenant, id, Visibility::Live).await?;
            let messages =
                messages::episode_messages_before(&mut *tx, tenant, id, before, limit).await?;
            tx.commit().await?;
            Ok(EpisodeWithMessages { episode, messages })
        })
        .await
    }

    async fn list_episodes(
        &self,
        tenant: TenantId,
        filter: &EpisodeFilter,
    ) -> Result<Vec<Episode>> {
        domain(async {
            let mut sql = QueryBuilder::<Postgres>::new(format!(
                "SELECT {COLUMNS} FROM episodes WHERE tenant_id = "
            ));
            sql.push_bind(tenant.0);
            sql.push(if filter.deleted {
                " AND deleted_at IS NOT NULL"
            } else {
                " AND deleted_at IS NULL"
            });
            sql.push(if filter.archived {
                " AND archived_at IS NOT NULL"
            } else {
                " AND archived_at IS NULL"
            });
            if let Some(agent) = filter.agent_id {
                sql.push(" AND agent_id = ").push_bind(agent.0);
            }
            if let Some(user) = &filter.user_id {
                sql.push(" AND user_id = ").push_bind(user.clone());
            }
            if let Some(conversation) = filter.conversation_id {
                sql.push(" AND conversation_id = ")
                    .push_bind(conversation.0);
            }
            if let Some(from) = filter.from {
                sql.push(" AND started_at >= ").push_bind(from);
            }
            if let Some(to) = filter.to {
                sql.push(" AND started_at < ").push_bind(to);
            }
            sql.push(" ORDER BY started_at DESC, id DESC LIMIT ")
                .push_bind(i64::from(filter.page.limit))
                .push(" OFFSET ")
                .push_bind(i64::from(filter.page.offset));
            let rows = sql.build().fetch_all(&self.pool).await?;
            rows.iter().map(episode_from_row).collect()
        })
        .await
    }

    async fn close_episode(
        &self,
        tenant: TenantId,
        id: EpisodeId,
        close: CloseEpisode,
        now: Timestamp,
    ) -> Result<Episode> {
        domain(async {
            let mut tx = self.pool.begin().await?;
            let episode = lock_episode(&mut tx, tenant, id, Visibility::Live).await?;
            let closing = Closing::requested(&episode, &close, now)?;
            crate::closing::close(&mut tx, tenant, id, &closing).await?;
            if let Some(summary) = &close.summary {
                save_summary(&mut tx, tenant, id, summary, now).await?;
            }
            let closed = get_episode(&mut *tx, tenant, id, Visibility::Live).await?;
            tx.commit().await?;
            Ok(closed)
        })
        .await
    }

    async fn import_conversation(
        &self,
        tenant: TenantId,
        conversation: &octopus_core::conversation::Conversation,
        sessions: Vec<Vec<MessageRecord>>,
        now: Timestamp,
    ) -> Result<(Vec<EpisodeId>, usize)> {
        domain(async {
            let mut tx = self.pool.begin().await?;
            crate::conversations::insert_conversation(&mut *tx, conversation).await?;
            let imported = import_sessions(&mut tx, tenant, conversation.id, sessions, now).await?;
            // Appending marked it active now; a past conversation was last
            // active when its messages say.
            query("UPDATE conversations SET updated_at = $3 WHERE id = $1 AND tenant_id = $2")
                .bind(conversation.id.0)
                .bind(tenant.0)
                .bind(conversation.updated_at)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(imported)
        })
        .await
    }

    async fn close_idle_episodes(
        &self,
        now: Timestamp,
        limit: u32,
    ) -> Result<Vec<(TenantId, EpisodeId)>> {
        domain(async {
            let mut tx = self.pool.begin().await?;
            // SKIP LOCKED: an episode another server is closing (or appending
            // to) is left to it.
            let idle = query(
                "SELECT e.id, e.tenant_id, e.last_message_at FROM episodes e
                 JOIN agents a ON a.id = e.agent_id AND a.tenant_id = e.tenant_id
                 WHERE e.ended_at IS NULL AND e.deleted_at IS NULL AND a.deleted_at IS NULL
                   AND e.last_message_at
                       + make_interval(secs => (a.memory_config->>'episode_idle_timeout_secs')::float8) < $1
                 LIMIT $2
                 FOR UPDATE OF e SKIP LOCKED",
            )
            .bind(now)
            .bind(i64::from(limit))
            .fetch_all(&mut *tx)
            .await?;
            let mut closed = Vec::with_capacity(idle.len());
            for row in idle {
                let (episode, tenant) = (EpisodeId(row.try_get("id")?), TenantId(row.try_get("tenant_id")?));
                let closing = Closing::idle(row.try_get("last_message_at")?, now);
                if crate::closing::close(&mut tx, tenant, episode, &closing).await? {
                    closed.push((tenant, episode));
                }
            }
            tx.commit().await?;
            Ok(closed)
        })
        .await
    }

    async fn archive_expired_episodes(
        &self,
        now: Timestamp,
        limit: u32,
    ) -> Result<Vec<(TenantId, EpisodeId)>> {
        domain(async {
            let rows = query(
                "WITH expired AS (
                     SELECT e.id FROM agents a
                     JOIN episodes e ON e.agent_id = a.id AND e.tenant_id = a.tenant_id
                     WHERE a.deleted_at IS NULL AND (a.memory_config->>'retention_days')::float8 > 0
                       AND e.ended_at IS NOT NULL AND e.archived_at IS NULL AND e.deleted_at IS NULL
                       AND COALESCE(e.retained_since, e.ended_at)
                           < $1 - make_interval(days => (a.memory_config->>'retention_days')::int)
                     LIMIT $2
                     FOR UPDATE OF e SKIP LOCKED)
                 UPDATE episodes SET archived_at = $1, updated_at = $1
                 FROM expired WHERE episodes.id = expired.id
                 RETURNING episodes.tenant_id, episodes.id",
            )
            .bind(now)
            .bind(i64::from(limit))
            .fetch_all(&self.pool)
            .await?;
            rows.iter()
                .map(|row| {
                    Ok((
                        TenantId(row.try_get("tenant_id")?),
                        EpisodeId(row.try_get("id")?),
                    ))
                })
                .collect()
        })
        .await
    }

    async fn set_episode_summary(
        &self,
        tenant: TenantId,
        id: EpisodeId,
        summary: EpisodeSummary,
        now: Timestamp,
    ) -> Result<Episode> {
        domain(async {
            let mut tx = self.pool.begin().await?;
            lock_episode(&mut tx, tenant, id, Visibility::Live).await?;
            save_summary(&mut tx, tenant, id, &summary, now).await?;
            crate::jobs::queue_summary(&mut tx, tenant, id, now, WorkClass::Live).await?;
            let changed = get_episode(&mut *tx, tenant, id, Visibility::Live).await?;
            tx.commit().await?;
            Ok(changed)
        })
        .await
    }

    async fn soft_delete_episode(
        &self,
        tenant: TenantId,
        id: EpisodeId,
        at: Timestamp,
    ) -> Result<Episode> {
        domain(async {
            let mut tx = self.pool.begin().await?;
            lock_episode(&mut tx, tenant, id, Visibility::Live).await?;
            crate::closing::close(&mut tx, tenant, id, &Closing::deleted(at)).await?;
            set_deleted_at(&mut tx, tenant, id, Some(at), at).await?;
            let deleted = get_episode(&mut *tx, tenant, id, Visibility::Deleted).await?;
            tx.commit().await?;
            Ok(deleted)
        })
        .await
    }

    async fn restore_episode(
        &self,
        tenant: TenantId,
        id: EpisodeId,
        now: Timestamp,
    ) -> Result<Episode> {
        domain(async {
            let mut tx = self.pool.begin().await?;
            let episode = get_any_episode(&mut *tx, tenant, id, true)
                .await?
                .ok_or_else(|| DomainError::not_found(EpisodeId::KIND, id))?;
            match episode.restoring()? {
                Restore::Undelete => set_deleted_at(&mut tx, tenant, id, None, now).await?,
                Restore::Unarchive => {
                    query(
                        "UPDATE episodes SET archived_at = NULL, retained_since = $3, updated_at = $3
                         WHERE id = $1 AND tenant_id = $2",
                    )
                    .bind(id.0)
                    .bind(tenant.0)
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
                }
            }
            let restored = get_any_episode(&mut *tx, tenant, id, false)
                .await?
                .ok_or_else(|| DomainError::not_found(EpisodeId::KIND, id))?;
            tx.commit().await?;
            Ok(restored)
        })
        .await
    }

    async fn message_windows(
        &self,
        tenant: TenantId,
        ids: &[MessageId],
        neighbours: u32,
    ) -> Result<Vec<MessageWindow>> {
        domain(async {
            let ids: Vec<uuid::Uuid> = ids.iter().map(|id| id.0).collect();
            // Each found message and its neighbours, in one query: `n` is the
            // position of the message in `ids`.
            let rows = query(&format!(
                "WITH wanted AS (
                     SELECT m.id, m.episode_id, m.ordinal, w.n
                     FROM UNNEST($1::uuid[]) WITH ORDINALITY AS w (id, n)
                     JOIN messages m ON m.id = w.id AND m.tenant_id = $2
                     JOIN episodes e ON e.id = m.episode_id AND e.tenant_id = $2
                     WHERE e.deleted_at IS NULL AND e.archived_at IS NULL)
                 SELECT {MESSAGE_COLUMNS}, wanted.n AS n, wanted.ordinal AS centre
                 FROM wanted JOIN messages m ON m.episode_id = wanted.episode_id
                  AND m.ordinal BETWEEN wanted.ordinal - $3 AND wanted.ordinal + $3
                 ORDER BY wanted.n, m.ordinal"
            ))
            .bind(ids)
            .bind(tenant.0)
            .bind(i64::from(neighbours))
            .fetch_all(&self.pool)
            .await?;
            let mut windows: Vec<(i64, MessageWindow)> = Vec::new();
            let mut pending: Vec<(i64, i32, Message)> = Vec::with_capacity(rows.len());
            for row in &rows {
                pending.push((
                    row.try_get("n")?,
                    row.try_get("centre")?,
                    message_from_row(row)?,
                ));
            }
            // Rows come grouped by `n`: split each group around its centre.
            let mut group: Vec<Message> = Vec::new();
            let mut current: Option<(i64, i32)> = None;
            let flush = |group: &mut Vec<Message>,
                         key: Option<(i64, i32)>,
                         windows: &mut Vec<(i64, MessageWindow)>| {
                let Some((n, centre)) = key else { return };
                let centre = u32::try_from(centre).unwrap_or_default();
                let mut window = MessageWindow {
                    message: group[0].clone(),
                    before: Vec::new(),
                    after: Vec::new(),
                };
                for turn in group.drain(..) {
                    match turn.ordinal.cmp(&centre) {
                        std::cmp::Ordering::Less => window.before.push(turn),
                        std::cmp::Ordering::Greater => window.after.push(turn),
                        std::cmp::Ordering::Equal => window.message = turn,
                    }
                }
                windows.push((n, window));
            };
            for (n, centre, message) in pending {
                if current.is_some_and(|(seen, _)| seen != n) {
                    flush(&mut group, current, &mut windows);
                }
                current = Some((n, centre));
                group.push(message);
            }
            flush(&mut group, current, &mut windows);
            Ok(windows.into_iter().map(|(_, window)| window).collect())
        })
        .await
    }

    async fn message_positions(
        &self,
        tenant: TenantId,
        ids: &[MessageId],
    ) -> Result<Vec<MessagePosition>> {
        domain(async {
            let wanted: Vec<uuid::Uuid> = ids.iter().map(|id| id.0).collect();
            let rows = query(
                "SELECT m.id, m.episode_id,
                        b.id AS before_id, b.timestamp AS before_at,
                        a.id AS after_id, a.timestamp AS after_at
                 FROM UNNEST($1::uuid[]) WITH ORDINALITY AS w (id, n)
                 JOIN messages m ON m.id = w.id AND m.tenant_id = $2
                 JOIN episodes e ON e.id = m.episode_id AND e.tenant_id = $2
                 LEFT JOIN messages b ON b.episode_id = m.episode_id AND b.ordinal = m.ordinal - 1
                 LEFT JOIN messages a ON a.episode_id = m.episode_id AND a.ordinal = m.ordinal + 1
                 WHERE e.deleted_at IS NULL AND e.archived_at IS NULL
                 ORDER BY w.n",
            )
            .bind(wanted)
            .bind(tenant.0)
            .fetch_all(&self.pool)
            .await?;
            let adjacent = |row: &PgRow, id: &str, at: &str| -> Result<Option<Adjacent>, Error> {
                let Some(id) = row.try_get::<Option<uuid::Uuid>, _>(id)? else {
                    return Ok(None);
                };
                Ok(Some(Adjacent {
                    id: MessageId(id),
                    at: row.try_get(at)?,
                }))
            };
            rows.iter()
                .map(|row| {
                    Ok(MessagePosition {
                        id: MessageId(row.try_get("id")?),
                        episode_id: EpisodeId(row.try_get("episode_id")?),
                        before: adjacent(row, "before_id", "before_at")?,
                        after: adjacent(row, "after_id", "after_at")?,
                    })
                })
                .collect()
        })
        .await
    }

    async fn purge_episode(&self, tenant: TenantId, id: EpisodeId) -> Result<()> {
        domain(async {
            let mut tx = self.pool.begin().await?;
            let episode = get_any_episode(&mut *tx, tenant, id, true)
                .await?
                .ok_or_else(|| DomainError::not_found(EpisodeId::KIND, id))?;
            episode.check_purgeable()?;
            crate::fact_rows::delete_episode_facts(&mut tx, tenant, id).await?;
            query("DELETE FROM messages WHERE episode_id = $1 AND tenant_id = $2")
                .bind(id.0)
                .bind(tenant.0)
                .execute(&mut *tx)
                .await?;
            query("DELETE FROM episodes WHERE id = $1 AND tenant_id = $2")
                .bind(id.0)
                .bind(tenant.0)
                .execute(&mut *tx)
                .await?;
            let committed =
                crate::vector_sets::purge_vectors(&mut tx, tenant, episode.agent_id, id).await?;
            tx.commit().await?;
            self.follow(committed).await?;
            // The dead rows' space reclaimed, as forgetting a user does.
            self.vacuum().await
        })
        .await
    }
}

/// Stores each session as one episode of `conversation`, closed as imported
/// at its last message.
pub(crate) async fn import_sessions(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    conversation: ConversationId,
    sessions: Vec<Vec<MessageRecord>>,
    now: Timestamp,
) -> Result<(Vec<EpisodeId>, usize), Error> {
    let placement = Placement::import(conversation, now);
    let (mut episodes, mut count) = (Vec::new(), 0);
    for records in sessions {
        let stored = messages::append_in(tx, tenant, &placement, records).await?;
        let Some(last) = stored.iter().map(|m| m.timestamp).max() else {
            continue;
        };
        let episode = stored[0].episode_id;
        count += stored.len();
        crate::closing::close(tx, tenant, episode, &Closing::imported(last, now)).await?;
        episodes.push(episode);
    }
    Ok((episodes, count))
}

async fn set_deleted_at(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    id: EpisodeId,
    deleted_at: Option<Timestamp>,
    now: Timestamp,
) -> Result<(), Error> {
    query("UPDATE episodes SET deleted_at = $3, updated_at = $4 WHERE id = $1 AND tenant_id = $2")
        .bind(id.0)
        .bind(tenant.0)
        .bind(deleted_at)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

async fn save_summary(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    id: EpisodeId,
    summary: &EpisodeSummary,
    now: Timestamp,
) -> Result<(), Error> {
    query(
        "UPDATE episodes SET summary = $3, key_facts = $4::text::json, summary_embedding = $5, updated_at = $6,
                             summary_source = 'caller'
         WHERE id = $1 AND tenant_id = $2",
    )
    .bind(id.0)
    .bind(tenant.0)
    .bind(&summary.summary)
    .bind(serde_json::to_string(&summary.key_facts).unwrap_or_else(|_| "[]".into()))
    .bind(summary.embedding.as_deref().map(embedding_bytes))
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Any episode, deleted or archived too; with `lock`, its row stays locked
/// until the transaction ends.
pub(crate) async fn get_any_episode<'c>(
    conn: impl Executor<'c, Database = Postgres>,
    tenant: TenantId,
    id: EpisodeId,
    lock: bool,
) -> Result<Option<Episode>, Error> {
    let lock = if lock { " FOR UPDATE" } else { "" };
    query(&format!(
        "SELECT {COLUMNS} FROM episodes WHERE id = $1 AND tenant_id = $2{lock}"
    ))
    .bind(id.0)
    .bind(tenant.0)
    .fetch_optional(conn)
    .await?
    .as_ref()
    .map(episode_from_row)
    .transpose()
}

/// Reads an episode of the given visibility and locks its row until the
/// transaction ends, so that concurrent changes to it take turns.
async fn lock_episode(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    id: EpisodeId,
    visibility: Visibility,
) -> Result<Episode, Error> {
    let episode = get_any_episode(&mut **tx, tenant, id, true).await?;
    episode
        .filter(|e| visibility.sees(e.deleted_at.is_some()))
        .ok_or_else(|| DomainError::not_found(EpisodeId::KIND, id).into())
}

async fn get_episode<'c>(
    conn: impl Executor<'c, Database = Postgres>,
    tenant: TenantId,
    id: EpisodeId,
    visibility: Visibility,
) -> Result<Episode, Error> {
    let deleted = visibility.clause();
    let row = query(&format!(
        "SELECT {COLUMNS} FROM episodes WHERE id = $1 AND tenant_id = $2 AND {deleted}"
    ))
    .bind(id.0)
    .bind(tenant.0)
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| DomainError::not_found(EpisodeId::KIND, id))?;
    episode_from_row(&row)
}

pub(crate) fn episode_from_row(row: &PgRow) -> Result<Episode, Error> {
    let end_reason: Option<String> = row.try_get("end_reason")?;
    let embedding: Option<Vec<u8>> = row.try_get("summary_embedding")?;
    let source: Option<String> = row.try_get("summary_source")?;
    Ok(Episode {
        id: EpisodeId(row.try_get("id")?),
        tenant_id: TenantId(row.try_get("tenant_id")?),
        conversation_id: ConversationId(row.try_get("conversation_id")?),
        agent_id: AgentId(row.try_get("agent_id")?),
        user_id: row.try_get("user_id")?,
        started_at: row.try_get("started_at")?,
        ended_at: row.try_get::<Option<DateTime<Utc>>, _>("ended_at")?,
        end_reason: end_reason
            .map(|r| r.parse().map_err(|e| corrupt("end reason", e)))
            .transpose()?,
        summary: row.try_get("summary")?,
        summary_source: source
            .map(|s| SummarySource::parse(&s).ok_or_else(|| corrupt("summary source", s)))
            .transpose()?,
        key_facts: json_at(row, "key_facts", "key facts")?,
        summary_embedding: embedding.map(|bytes| embedding_from(&bytes)).transpose()?,
        message_count: u32_at(row, "message_count")?,
        facts_learned_through: u32_at(row, "facts_learned_through")?,
        total_input_tokens: u64_at(row, "total_input_tokens")?,
        total_output_tokens: u64_at(row, "total_output_tokens")?,
        last_message_at: row.try_get("last_message_at")?,
        deleted_at: row.try_get("deleted_at")?,
        archived_at: row.try_get("archived_at")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}
