//! The episode port on SQLite: appends, closes, imports, sweeps and reads of
//! episodes and their messages.

use async_trait::async_trait;
use octopus_core::appending::{AppendMessages, MessageRecord};
use octopus_core::appending::{Closing, Placement};
use octopus_core::episode::{
    CloseEpisode, Episode, EpisodeFilter, EpisodeSummary, EpisodeWithMessages, Restore,
};
use octopus_core::memory_jobs::WorkClass;
use octopus_core::message::Message;
use octopus_core::recall::{Adjacent, MessagePosition, MessageWindow};
use octopus_core::store::{EpisodeStore, Erasure};
use octopus_core::{
    AgentId, ConversationId, EpisodeId, Error as DomainError, MessageId, Result, TenantId,
    Timestamp,
};
use rusqlite::types::Value;
use rusqlite::{Connection, params};

use crate::SqliteStore;
use crate::codec::{self, micros};
use crate::error::Result as StoreResult;
use crate::error::{Error, corrupt};
use crate::messages::{self, columns, message_from_row};
use crate::rows::{self, Filters, blob};

pub(crate) use octopus_sql::columns::EPISODES as COLUMNS;

use octopus_sql::Visibility;

#[async_trait]
impl EpisodeStore for SqliteStore {
    async fn append_messages(
        &self,
        tenant: TenantId,
        batch: AppendMessages,
    ) -> Result<Vec<Message>> {
        let placement = Placement::of(&batch);
        let stored = self
            .db
            .write_prepared(
                move || batch.messages.into_iter().map(messages::encode).collect(),
                move |conn, encoded| messages::append(conn, tenant, &placement, encoded),
            )
            .await?;
        self.indexer.wake();
        Ok(stored)
    }

    async fn erase_message(
        &self,
        tenant: TenantId,
        erasure: &octopus_core::message::MessageErasure,
    ) -> Result<octopus_core::message::MessageErasureReceipt> {
        erasure.validate()?;
        self.finish_erasures().await?;
        let erasure = erasure.clone();
        let crate::message_erasure::Removed {
            mut receipt,
            pending,
            record,
        } = self
            .db
            .write(move |conn| crate::message_erasure::remove(conn, tenant, &erasure))
            .await?;
        receipt.compacted = self.finish_erasure(tenant, &pending, record).await?;
        Ok(receipt)
    }

    async fn get_episode(&self, tenant: TenantId, id: EpisodeId) -> Result<Episode> {
        self.db
            .read(move |conn| get_episode(conn, tenant, id, Visibility::Live))
            .await
    }

    async fn get_episodes(&self, tenant: TenantId, ids: &[EpisodeId]) -> Result<Vec<Episode>> {
        let ids = ids.to_vec();
        self.db
            .read(move |conn| live_episodes(conn, tenant, &ids))
            .await
    }

    async fn get_episode_with_messages(
        &self,
        tenant: TenantId,
        id: EpisodeId,
    ) -> Result<EpisodeWithMessages> {
        self.db
            .read(move |conn| {
                // One read transaction, so the episode and its messages agree.
                let tx = conn.transaction()?;
                let episode = get_episode(&tx, tenant, id, Visibility::Live)?;
                let messages = messages::episode_messages(&tx, tenant, id)?;
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
        self.db
            .read(move |conn| {
                let tx = conn.transaction()?;
                let episode = get_episode(&tx, tenant, id, Visibility::Live)?;
                let messages = messages::episode_messages_before(&tx, tenant, id, before, limit)?;
                Ok(EpisodeWithMessages { episode, messages })
            })
            .await
    }

    async fn list_episodes(
        &self,
        tenant: TenantId,
        filter: &EpisodeFilter,
    ) -> Result<Vec<Episode>> {
        let filter = filter.clone();
        self.db
            .read(move |conn| {
                let mut filters = Filters::default();
                filters.push("tenant_id = ?", blob(&tenant.0));
                filters.push_plain(if filter.deleted { "deleted_at IS NOT NULL" } else { "deleted_at IS NULL" });
                filters.push_plain(if filter.archived { "archived_at IS NOT NULL" } else { "archived_at IS NULL" });
                if let Some(agent) = filter.agent_id {
                    filters.push("agent_id = ?", blob(&agent.0));
                }
                if let Some(user) = filter.user_id {
                    filters.push("user_id = ?", Value::Text(user));
                }
                if let Some(conversation) = filter.conversation_id {
                    filters.push("conversation_id = ?", blob(&conversation.0));
                }
                if let Some(from) = filter.from {
                    filters.push("started_at >= ?", Value::Integer(micros(from)));
                }
                if let Some(to) = filter.to {
                    filters.push("started_at < ?", Value::Integer(micros(to)));
                }
                let limit = filters.bind(Value::Integer(filter.page.limit.into()));
                let offset = filters.bind(Value::Integer(filter.page.offset.into()));
                let sql = format!(
                    "SELECT {COLUMNS} FROM episodes {} ORDER BY started_at DESC, id DESC LIMIT {limit} OFFSET {offset}",
                    filters.where_sql()
                );
                let mut stmt = conn.prepare_cached(&sql)?;
                rows::collect(&mut stmt, rusqlite::params_from_iter(filters.params), episode_from_row)
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
        self.change_episode(
            tenant,
            id,
            Visibility::Live,
            Visibility::Live,
            move |tx, episode| {
                let closing = Closing::requested(episode, &close, now)?;
                crate::closing::close(tx, tenant, id, &closing)?;
                match &close.summary {
                    Some(summary) => save_summary(tx, tenant, id, summary, now),
                    None => Ok(()),
                }
            },
        )
        .await
    }

    async fn import_conversation(
        &self,
        tenant: TenantId,
        conversation: &octopus_core::conversation::Conversation,
        sessions: Vec<Vec<MessageRecord>>,
        now: Timestamp,
    ) -> Result<(Vec<EpisodeId>, usize)> {
        let conversation = conversation.clone();
        let result = self
            .db
            .write_prepared(
                move || {
                    sessions
                        .into_iter()
                        .map(|records| {
                            records
                                .into_iter()
                                .map(messages::encode)
                                .collect::<Vec<_>>()
                        })
                        .collect::<Vec<_>>()
                },
                move |conn, sessions| {
                    let tx =
                        conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                    crate::conversations::insert_conversation(&tx, &conversation)?;
                    let placement = Placement::import(conversation.id, now);
                    let (mut episodes, mut count) = (Vec::new(), 0);
                    for encoded in sessions {
                        let stored = messages::append_in(&tx, tenant, &placement, encoded)?;
                        let Some(last) = stored.iter().map(|m| m.timestamp).max() else {
                            continue;
                        };
                        let episode = stored[0].episode_id;
                        count += stored.len();
                        crate::closing::close(&tx, tenant, episode, &Closing::imported(last, now))?;
                        episodes.push(episode);
                    }
                    // Appending marked it active now; a past conversation was
                    // last active when its messages say.
                    tx.execute(
                        "UPDATE conversations SET updated_at = ?3 WHERE id = ?1 AND tenant_id = ?2",
                        params![
                            conversation.id.0.as_bytes(),
                            tenant.0.as_bytes(),
                            micros(conversation.updated_at)
                        ],
                    )?;
                    tx.commit()?;
                    Ok((episodes, count))
                },
            )
            .await?;
        self.indexer.wake();
        Ok(result)
    }

    async fn close_idle_episodes(
        &self,
        now: Timestamp,
        limit: u32,
    ) -> Result<Vec<(TenantId, EpisodeId)>> {
        self.db
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                // Episodes of deleted agents are left alone: nothing of theirs is summarised.
                let idle = rows::collect(
                    &mut *tx.prepare_cached(
                        "SELECT e.id, e.tenant_id, e.last_message_at FROM episodes e
                         JOIN agents a ON a.id = e.agent_id AND a.tenant_id = e.tenant_id
                         WHERE e.ended_at IS NULL AND e.deleted_at IS NULL AND a.deleted_at IS NULL
                           AND e.last_message_at
                               + json_extract(a.memory_config, '$.episode_idle_timeout_secs') * 1000000 < ?1
                         LIMIT ?2",
                    )?,
                    params![micros(now), limit],
                    |row| {
                        Ok((
                            EpisodeId(codec::uuid_from(&row.get::<_, Vec<u8>>(0)?)?),
                            TenantId(codec::uuid_from(&row.get::<_, Vec<u8>>(1)?)?),
                            codec::instant(row.get::<_, i64>(2)?)?,
                        ))
                    },
                )?;
                let mut closed = Vec::with_capacity(idle.len());
                for (episode, tenant, last_message_at) in idle {
                    if crate::closing::close(&tx, tenant, episode, &Closing::idle(last_message_at, now))? {
                        closed.push((tenant, episode));
                    }
                }
                tx.commit()?;
                Ok(closed)
            })
            .await
    }

    async fn archive_expired_episodes(
        &self,
        now: Timestamp,
        limit: u32,
    ) -> Result<Vec<(TenantId, EpisodeId)>> {
        let now = micros(now);
        self.db
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                // Few agents set a retention period; each one's expired episodes
                // come from the retention index, oldest first.
                let agents = rows::collect(
                    &mut *tx.prepare_cached(
                        "SELECT tenant_id, id, CAST(json_extract(memory_config, '$.retention_days') AS INTEGER)
                         FROM agents
                         WHERE deleted_at IS NULL AND json_extract(memory_config, '$.retention_days') > 0",
                    )?,
                    [],
                    |row| Ok((row.get::<_, Vec<u8>>(0)?, row.get::<_, Vec<u8>>(1)?, row.get::<_, i64>(2)?)),
                )?;
                let mut archived = Vec::new();
                for (tenant, agent, days) in agents {
                    let room = i64::from(limit) - archived.len() as i64;
                    if room <= 0 {
                        break;
                    }
                    let cutoff = now.saturating_sub(days.saturating_mul(86_400_000_000));
                    let ids = rows::collect(
                        &mut *tx.prepare_cached(
                            "UPDATE episodes SET archived_at = ?3, updated_at = ?3
                             WHERE id IN (
                                 SELECT id FROM episodes
                                 WHERE agent_id = ?2 AND tenant_id = ?1 AND ended_at IS NOT NULL
                                   AND archived_at IS NULL AND deleted_at IS NULL
                                   AND COALESCE(retained_since, ended_at) < ?4
                                 LIMIT ?5)
                             RETURNING id",
                        )?,
                        params![tenant, agent, now, cutoff, room],
                        |row| Ok(EpisodeId(codec::uuid_from(&row.get::<_, Vec<u8>>(0)?)?)),
                    )?;
                    let tenant = TenantId(codec::uuid_from(&tenant)?);
                    archived.extend(ids.into_iter().map(|id| (tenant, id)));
                }
                tx.commit()?;
                Ok(archived)
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
        self.change_episode(
            tenant,
            id,
            Visibility::Live,
            Visibility::Live,
            move |tx, _| {
                save_summary(tx, tenant, id, &summary, now)?;
                crate::jobs::queue_summary(tx, tenant, id, micros(now), WorkClass::Live)
            },
        )
        .await
    }

    async fn soft_delete_episode(
        &self,
        tenant: TenantId,
        id: EpisodeId,
        at: Timestamp,
    ) -> Result<Episode> {
        self.change_episode(
            tenant,
            id,
            Visibility::Live,
            Visibility::Deleted,
            move |tx, _| {
                // A deleted episode must not stay the conversation's open one.
                crate::closing::close(tx, tenant, id, &Closing::deleted(at))?;
                set_deleted_at(tx, tenant, id, Some(at), at)
            },
        )
        .await
    }

    async fn restore_episode(
        &self,
        tenant: TenantId,
        id: EpisodeId,
        now: Timestamp,
    ) -> Result<Episode> {
        self.db
            .write(move |conn| {
                let tx =
                    conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let episode = get_any_episode(&tx, tenant, id)?
                    .ok_or_else(|| DomainError::not_found(EpisodeId::KIND, id))?;
                match episode.restoring()? {
                    Restore::Undelete => set_deleted_at(&tx, tenant, id, None, now)?,
                    Restore::Unarchive => {
                        tx.execute(
                            "UPDATE episodes SET archived_at = NULL, retained_since = ?3, updated_at = ?3
                             WHERE id = ?1 AND tenant_id = ?2",
                            params![id.0.as_bytes(), tenant.0.as_bytes(), micros(now)],
                        )?;
                    }
                }
                let restored = get_any_episode(&tx, tenant, id)?
                    .ok_or_else(|| DomainError::not_found(EpisodeId::KIND, id))?;
                tx.commit()?;
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
        let wanted = id_list(ids);
        self.db
            .read(move |conn| {
                // Each wanted message (`h`) with the turns around it (`m`,
                // itself among them), in the order asked.
                let mut read = conn.prepare_cached(&format!(
                    "SELECT {}, j.key AS wanted, h.ordinal AS wanted_ordinal
                     FROM json_each(?1) j
                     CROSS JOIN messages h ON h.id = unhex(j.value) AND h.tenant_id = ?2
                     CROSS JOIN episodes e ON e.id = h.episode_id AND e.tenant_id = ?2
                          AND e.deleted_at IS NULL AND e.archived_at IS NULL
                     CROSS JOIN messages m ON m.episode_id = h.episode_id
                          AND m.ordinal BETWEEN h.ordinal - ?3 AND h.ordinal + ?3
                     ORDER BY j.key, m.ordinal",
                    columns("m")
                ))?;
                let turns = rows::collect(
                    &mut read,
                    params![wanted, tenant.0.as_bytes(), neighbours],
                    |row| {
                        let wanted: i64 = row.get("wanted")?;
                        let ordinal: u32 = row.get("wanted_ordinal")?;
                        Ok((wanted, ordinal, message_from_row(row)?))
                    },
                )?;
                let mut windows: Vec<MessageWindow> = Vec::new();
                let mut current: Option<(i64, MessageWindow)> = None;
                let mut before = Vec::new();
                for (wanted, ordinal, turn) in turns {
                    if current.as_ref().is_some_and(|(at, _)| *at != wanted) {
                        windows.extend(current.take().map(|(_, window)| window));
                    }
                    match turn.ordinal.cmp(&ordinal) {
                        std::cmp::Ordering::Less => before.push(turn),
                        std::cmp::Ordering::Equal => {
                            current = Some((
                                wanted,
                                MessageWindow {
                                    message: turn,
                                    before: std::mem::take(&mut before),
                                    after: Vec::new(),
                                },
                            ));
                        }
                        std::cmp::Ordering::Greater => {
                            if let Some((_, window)) = current.as_mut() {
                                window.after.push(turn);
                            }
                        }
                    }
                }
                windows.extend(current.map(|(_, window)| window));
                Ok(windows)
            })
            .await
    }

    async fn message_positions(
        &self,
        tenant: TenantId,
        ids: &[MessageId],
    ) -> Result<Vec<MessagePosition>> {
        let wanted = id_list(ids);
        self.db
            .read(move |conn| {
                let mut find = conn.prepare_cached(
                    "SELECT m.id, m.episode_id, b.id, b.timestamp, a.id, a.timestamp
                     FROM json_each(?1) j
                     CROSS JOIN messages m ON m.id = unhex(j.value) AND m.tenant_id = ?2
                     CROSS JOIN episodes e ON e.id = m.episode_id AND e.tenant_id = ?2
                          AND e.deleted_at IS NULL AND e.archived_at IS NULL
                     LEFT JOIN messages b ON b.episode_id = m.episode_id AND b.ordinal = m.ordinal - 1
                     LEFT JOIN messages a ON a.episode_id = m.episode_id AND a.ordinal = m.ordinal + 1
                     ORDER BY j.key",
                )?;
                let adjacent = |row: &rusqlite::Row, id: usize| -> StoreResult<Option<Adjacent>> {
                    let Some(found) = rows::opt_uuid(row, id)? else {
                        return Ok(None);
                    };
                    Ok(Some(Adjacent { id: MessageId(found), at: rows::time(row, id + 1)? }))
                };
                rows::collect(&mut find, params![wanted, tenant.0.as_bytes()], |row| {
                    Ok(MessagePosition {
                        id: MessageId(rows::uuid(row, 0)?),
                        episode_id: EpisodeId(rows::uuid(row, 1)?),
                        before: adjacent(row, 2)?,
                        after: adjacent(row, 4)?,
                    })
                })
            })
            .await
    }

    async fn purge_episode(&self, tenant: TenantId, id: EpisodeId) -> Result<()> {
        let (purged_seqs, committed) = self
            .db
            .write(move |conn| {
                let tx =
                    conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let episode = get_any_episode(&tx, tenant, id)?
                    .ok_or_else(|| DomainError::not_found(EpisodeId::KIND, id))?;
                episode.check_purgeable()?;
                let seqs: Vec<i64> = rows::collect(
                    &mut tx.prepare(
                        "SELECT seq FROM messages WHERE episode_id = ?1 AND tenant_id = ?2",
                    )?,
                    [id.0.as_bytes(), tenant.0.as_bytes()],
                    |row| Ok(row.get(0)?),
                )?;
                crate::fact_rows::delete_episode_facts(&tx, tenant, id)?;
                tx.execute(
                    "DELETE FROM messages WHERE episode_id = ?1 AND tenant_id = ?2",
                    [id.0.as_bytes(), tenant.0.as_bytes()],
                )?;
                let agent: Vec<u8> = tx.query_row(
                    "DELETE FROM episodes WHERE id = ?1 AND tenant_id = ?2 RETURNING agent_id",
                    [id.0.as_bytes(), tenant.0.as_bytes()],
                    |r| r.get(0),
                )?;
                let agent = AgentId(codec::uuid_from(&agent)?);
                let committed = crate::vector_sets::purge_vectors(&tx, (tenant, agent), id)?;
                tx.commit()?;
                Ok((seqs, committed))
            })
            .await?;
        self.follow(committed).await?;
        // Search joins its hits to live messages, so rows left behind by a crash
        // here are invisible; forgetting them reclaims their space, and the
        // compaction (as forgetting a user does) takes their words off the
        // disk: the files' free pages and write-ahead logs held them.
        self.indexer.forget(purged_seqs).await?;
        self.compact().await.map(drop)
    }
}

impl SqliteStore {
    /// Runs `change` on an episode in one write transaction. The episode must be
    /// visible as `before` (else `NotFound`); it is returned as `after` sees it.
    async fn change_episode<F>(
        &self,
        tenant: TenantId,
        id: EpisodeId,
        before: Visibility,
        after: Visibility,
        change: F,
    ) -> Result<Episode>
    where
        F: FnOnce(&Connection, &Episode) -> Result<(), Error> + Send + 'static,
    {
        self.db
            .write(move |conn| {
                let tx =
                    conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let episode = get_episode(&tx, tenant, id, before)?;
                change(&tx, &episode)?;
                let changed = get_episode(&tx, tenant, id, after)?;
                tx.commit()?;
                Ok(changed)
            })
            .await
    }
}

fn set_deleted_at(
    conn: &Connection,
    tenant: TenantId,
    id: EpisodeId,
    deleted_at: Option<Timestamp>,
    now: Timestamp,
) -> Result<(), Error> {
    conn.execute(
        "UPDATE episodes SET deleted_at = ?3, updated_at = ?4 WHERE id = ?1 AND tenant_id = ?2",
        params![
            id.0.as_bytes(),
            tenant.0.as_bytes(),
            deleted_at.map(micros),
            micros(now)
        ],
    )?;
    Ok(())
}

fn save_summary(
    conn: &Connection,
    tenant: TenantId,
    id: EpisodeId,
    summary: &EpisodeSummary,
    now: Timestamp,
) -> Result<(), Error> {
    conn.execute(
        "UPDATE episodes SET summary = ?3, key_facts = ?4, summary_embedding = ?5, updated_at = ?6,
                             summary_source = 'caller'
         WHERE id = ?1 AND tenant_id = ?2",
        params![
            id.0.as_bytes(),
            tenant.0.as_bytes(),
            summary.summary,
            serde_json::to_string(&summary.key_facts).unwrap_or_else(|_| "[]".into()),
            summary.embedding.as_deref().map(codec::embedding_bytes),
            micros(now)
        ],
    )?;
    Ok(())
}

/// An episode, live or soft-deleted.
pub(crate) fn get_any_episode(
    conn: &Connection,
    tenant: TenantId,
    id: EpisodeId,
) -> Result<Option<Episode>, Error> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM episodes WHERE id = ?1 AND tenant_id = ?2"
    ))?;
    Ok(rows::collect(
        &mut stmt,
        [id.0.as_bytes(), tenant.0.as_bytes()],
        episode_from_row,
    )?
    .pop())
}

fn get_episode(
    conn: &Connection,
    tenant: TenantId,
    id: EpisodeId,
    visibility: Visibility,
) -> Result<Episode, Error> {
    let deleted = visibility.clause();
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM episodes WHERE id = ?1 AND tenant_id = ?2 AND {deleted}"
    ))?;
    rows::collect(
        &mut stmt,
        [id.0.as_bytes(), tenant.0.as_bytes()],
        episode_from_row,
    )?
    .pop()
    .ok_or_else(|| DomainError::not_found(EpisodeId::KIND, id).into())
}

/// The live episodes among `ids`, in their order, each once.
fn live_episodes(
    conn: &Connection,
    tenant: TenantId,
    ids: &[EpisodeId],
) -> Result<Vec<Episode>, Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let deleted = Visibility::Live.clause();
    let placeholders = vec!["?"; ids.len()].join(", ");
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM episodes WHERE tenant_id = ? AND {deleted} AND id IN ({placeholders})"
    ))?;
    let params = std::iter::once(tenant.0.as_bytes().to_vec())
        .chain(ids.iter().map(|id| id.0.as_bytes().to_vec()));
    let found = rows::collect(
        &mut stmt,
        rusqlite::params_from_iter(params),
        episode_from_row,
    )?;
    let mut by_id: std::collections::HashMap<EpisodeId, Episode> =
        found.into_iter().map(|e| (e.id, e)).collect();
    Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
}

pub(crate) fn episode_from_row(row: &rusqlite::Row<'_>) -> Result<Episode, Error> {
    let end_reason: Option<String> = row.get("end_reason")?;
    let key_facts: String = row.get("key_facts")?;
    let embedding: Option<Vec<u8>> = row.get("summary_embedding")?;
    Ok(Episode {
        id: EpisodeId(rows::uuid(row, "id")?),
        tenant_id: TenantId(rows::uuid(row, "tenant_id")?),
        conversation_id: ConversationId(rows::uuid(row, "conversation_id")?),
        agent_id: AgentId(rows::uuid(row, "agent_id")?),
        user_id: row.get("user_id")?,
        started_at: rows::time(row, "started_at")?,
        ended_at: rows::opt_time(row, "ended_at")?,
        end_reason: end_reason
            .map(|r| r.parse().map_err(|e| corrupt("end reason", e)))
            .transpose()?,
        summary: row.get("summary")?,
        summary_source: row
            .get::<_, Option<String>>("summary_source")?
            .map(|s| {
                octopus_core::episode::SummarySource::parse(&s)
                    .ok_or_else(|| corrupt("summary source", s))
            })
            .transpose()?,
        key_facts: serde_json::from_str(&key_facts).map_err(|e| corrupt("key facts", e))?,
        summary_embedding: embedding
            .map(|bytes| codec::embedding_from(&bytes))
            .transpose()?,
        message_count: row.get("message_count")?,
        facts_learned_through: row.get("facts_learned_through")?,
        total_input_tokens: rows::count(row, "total_input_tokens")?,
        total_output_tokens: rows::count(row, "total_output_tokens")?,
        last_message_at: rows::time(row, "last_message_at")?,
        deleted_at: rows::opt_time(row, "deleted_at")?,
        archived_at: rows::opt_time(row, "archived_at")?,
        created_at: rows::time(row, "created_at")?,
        updated_at: rows::time(row, "updated_at")?,
    })
}

/// Message ids as the JSON array of hex strings that `json_each` reads
/// (one query for any number of ids).
fn id_list(ids: &[MessageId]) -> String {
    let hex: Vec<String> = ids
        .iter()
        .map(|id| format!("\"{}\"", id.0.simple()))
        .collect();
    format!("[{}]", hex.join(","))
}
