//! The conversation port on SQLite, and the users listed per agent.

use async_trait::async_trait;
use octopus_core::appending::Closing;
use octopus_core::conversation::{Conversation, ConversationFilter, UserActivity, UserSummary};
use octopus_core::store::ConversationStore;
use octopus_core::store::Page;
use octopus_core::{
    AgentId, ConversationId, EpisodeId, Error as DomainError, Result, TenantId, Timestamp,
};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params};

use crate::SqliteStore;
use crate::codec::micros;
use crate::error::{Error, corrupt};
use crate::rows::{self, Filters, blob};

use octopus_sql::columns::CONVERSATIONS as COLUMNS;

#[async_trait]
impl ConversationStore for SqliteStore {
    async fn create_conversation(&self, conversation: &Conversation) -> Result<()> {
        let c = conversation.clone();
        self.db
            .write(move |conn| insert_conversation(conn, &c))
            .await
    }

    async fn get_conversation(&self, tenant: TenantId, id: ConversationId) -> Result<Conversation> {
        self.db
            .read(move |conn| get_conversation(conn, tenant, id))
            .await
    }

    async fn opening_messages(
        &self,
        tenant: TenantId,
        ids: &[ConversationId],
    ) -> Result<Vec<octopus_core::message::Message>> {
        let ids = ids.to_vec();
        self.db
            .read(move |conn| {
                // By the conversation's first episode, then that episode's
                // messages in order: both read through their indexes.
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT {} FROM messages m
                     WHERE m.episode_id = (SELECT e.id FROM episodes e
                                           WHERE e.conversation_id = ?1 AND e.tenant_id = ?2
                                           ORDER BY e.started_at, e.id LIMIT 1)
                       AND m.role = 'user'
                     ORDER BY m.ordinal LIMIT 1",
                    crate::messages::columns("m")
                ))?;
                let mut found = Vec::with_capacity(ids.len());
                for id in ids {
                    found.extend(rows::collect(
                        &mut stmt,
                        params![id.0.as_bytes(), tenant.0.as_bytes()],
                        crate::messages::message_from_row,
                    )?);
                }
                Ok(found)
            })
            .await
    }

    async fn list_conversations(
        &self,
        tenant: TenantId,
        filter: &ConversationFilter,
    ) -> Result<Vec<Conversation>> {
        let filter = filter.clone();
        self.db
            .read(move |conn| {
                let mut filters = Filters::default();
                filters.push("tenant_id = ?", blob(&tenant.0));
                if let Some(agent) = filter.agent_id {
                    filters.push("agent_id = ?", blob(&agent.0));
                }
                if let Some(user) = filter.user_id {
                    filters.push("user_id = ?", Value::Text(user));
                }
                if !filter.include_deleted {
                    filters.push_plain("deleted_at IS NULL");
                }
                let limit = filters.bind(Value::Integer(filter.page.limit.into()));
                let offset = filters.bind(Value::Integer(filter.page.offset.into()));
                let sql = format!(
                    "SELECT {COLUMNS} FROM conversations {} ORDER BY created_at DESC, id DESC LIMIT {limit} OFFSET {offset}",
                    filters.where_sql()
                );
                let mut stmt = conn.prepare_cached(&sql)?;
                rows::collect(&mut stmt, rusqlite::params_from_iter(filters.params), conversation_from_row)
            })
            .await
    }

    async fn list_users(
        &self,
        tenant: TenantId,
        agent: AgentId,
        page: Page,
    ) -> Result<Vec<UserSummary>> {
        self.db
            .read(move |conn| {
                let mut stmt = conn.prepare_cached(
                    "SELECT user_id, COUNT(*) AS conversations, MAX(updated_at) AS last_active_at
                     FROM conversations
                     WHERE tenant_id = ?1 AND agent_id = ?2 AND deleted_at IS NULL
                     GROUP BY user_id ORDER BY user_id LIMIT ?3 OFFSET ?4",
                )?;
                let params = params![
                    tenant.0.as_bytes(),
                    agent.0.as_bytes(),
                    page.limit,
                    page.offset
                ];
                rows::collect(&mut stmt, params, |row| {
                    Ok(UserSummary {
                        user_id: row.get("user_id")?,
                        conversation_count: row.get("conversations")?,
                        last_active_at: rows::time(row, "last_active_at")?,
                    })
                })
            })
            .await
    }

    async fn user_activity(
        &self,
        tenant: TenantId,
        agent: AgentId,
        user_id: &str,
    ) -> Result<Option<UserActivity>> {
        let user_id = user_id.to_owned();
        self.db
            .read(move |conn| {
                // Both through the (tenant, agent, user) indexes of the two
                // tables; an episode counts when its conversation is live.
                let mut stmt = conn.prepare_cached(
                    "SELECT COUNT(*) AS conversations, MIN(c.created_at) AS first_seen_at,
                            MAX(c.updated_at) AS last_active_at,
                            (SELECT COUNT(*) FROM episodes e
                              WHERE e.agent_id = ?2 AND e.user_id = ?3 AND e.tenant_id = ?1
                                AND e.deleted_at IS NULL
                                AND e.conversation_id IN (SELECT id FROM conversations
                                    WHERE tenant_id = ?1 AND agent_id = ?2 AND user_id = ?3
                                      AND deleted_at IS NULL)) AS episodes,
                            (SELECT COALESCE(SUM(e.message_count), 0) FROM episodes e
                              WHERE e.agent_id = ?2 AND e.user_id = ?3 AND e.tenant_id = ?1
                                AND e.deleted_at IS NULL
                                AND e.conversation_id IN (SELECT id FROM conversations
                                    WHERE tenant_id = ?1 AND agent_id = ?2 AND user_id = ?3
                                      AND deleted_at IS NULL)) AS messages
                     FROM conversations c
                     WHERE c.tenant_id = ?1 AND c.agent_id = ?2 AND c.user_id = ?3 AND c.deleted_at IS NULL",
                )?;
                let params = params![tenant.0.as_bytes(), agent.0.as_bytes(), user_id];
                let activity = stmt.query_row(params, |row| {
                    let conversations: u32 = row.get("conversations")?;
                    if conversations == 0 {
                        return Ok(None);
                    }
                    let messages: i64 = row.get("messages")?;
                    Ok(Some((
                        conversations,
                        row.get::<_, u32>("episodes")?,
                        messages.unsigned_abs(),
                        row.get::<_, i64>("first_seen_at")?,
                        row.get::<_, i64>("last_active_at")?,
                    )))
                })?;
                activity
                    .map(|(conversations, episodes, messages, first, last)| {
                        Ok(UserActivity {
                            conversations,
                            episodes,
                            messages,
                            first_seen_at: crate::codec::instant(first)?,
                            last_active_at: crate::codec::instant(last)?,
                        })
                    })
                    .transpose()
            })
            .await
    }

    async fn delete_conversation(
        &self,
        tenant: TenantId,
        id: ConversationId,
        at: Timestamp,
    ) -> Result<()> {
        self.db
            .write(move |conn| {
                let tx = conn.transaction()?;
                let conversation = get_conversation(&tx, tenant, id)?;
                if conversation.deleted_at.is_none() {
                    tx.execute(
                        "UPDATE conversations SET deleted_at = ?3, updated_at = ?3 WHERE id = ?1 AND tenant_id = ?2",
                        params![id.0.as_bytes(), tenant.0.as_bytes(), micros(at)],
                    )?;
                    let open: Option<Vec<u8>> = tx
                        .query_row(
                            "SELECT id FROM episodes WHERE conversation_id = ?1 AND tenant_id = ?2 AND ended_at IS NULL",
                            [id.0.as_bytes(), tenant.0.as_bytes()],
                            |r| r.get(0),
                        )
                        .optional()?;
                    if let Some(open) = open {
                        let episode = EpisodeId(crate::codec::uuid_from(&open)?);
                        crate::closing::close(&tx, tenant, episode, &Closing::deleted(at))?;
                    }
                    let at = micros(at);
                    // Its episodes go with it, soft-deleted like one by one:
                    // out of search and recall, restorable, then purgeable.
                    tx.execute(
                        "UPDATE episodes SET deleted_at = ?3, updated_at = ?3
                         WHERE conversation_id = ?1 AND tenant_id = ?2 AND deleted_at IS NULL",
                        params![id.0.as_bytes(), tenant.0.as_bytes(), at],
                    )?;
                }
                tx.commit()?;
                Ok(())
            })
            .await
    }
}

pub(crate) fn get_conversation(
    conn: &Connection,
    tenant: TenantId,
    id: ConversationId,
) -> Result<Conversation, Error> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM conversations WHERE id = ?1 AND tenant_id = ?2"
    ))?;
    rows::collect(
        &mut stmt,
        [id.0.as_bytes(), tenant.0.as_bytes()],
        conversation_from_row,
    )?
    .pop()
    .ok_or_else(|| DomainError::not_found(ConversationId::KIND, id).into())
}

pub(crate) fn conversation_from_row(row: &rusqlite::Row<'_>) -> Result<Conversation, Error> {
    let metadata: String = row.get("metadata")?;
    Ok(Conversation {
        id: ConversationId(rows::uuid(row, "id")?),
        tenant_id: TenantId(rows::uuid(row, "tenant_id")?),
        agent_id: AgentId(rows::uuid(row, "agent_id")?),
        user_id: row.get("user_id")?,
        title: row.get("title")?,
        metadata: serde_json::from_str(&metadata)
            .map_err(|e| corrupt("conversation metadata", e))?,
        created_at: rows::time(row, "created_at")?,
        updated_at: rows::time(row, "updated_at")?,
        deleted_at: rows::opt_time(row, "deleted_at")?,
        opening: None,
    })
}

pub(crate) fn insert_conversation(conn: &Connection, c: &Conversation) -> Result<(), Error> {
    conn.execute(
        "INSERT INTO conversations (id, tenant_id, agent_id, user_id, title, metadata, created_at, updated_at, deleted_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            c.id.0.as_bytes(),
            c.tenant_id.0.as_bytes(),
            c.agent_id.0.as_bytes(),
            c.user_id,
            c.title,
            serde_json::Value::Object(c.metadata.clone()).to_string(),
            micros(c.created_at),
            micros(c.updated_at),
            c.deleted_at.map(micros)
        ],
    )?;
    Ok(())
}
