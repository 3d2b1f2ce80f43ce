//! The conversation port on PostgreSQL, and the users listed per agent.

use async_trait::async_trait;
use octopus_core::appending::Closing;
use octopus_core::conversation::{Conversation, ConversationFilter, UserActivity, UserSummary};
use octopus_core::store::ConversationStore;
use octopus_core::store::Page;
use octopus_core::{
    AgentId, ConversationId, EpisodeId, Error as DomainError, Result, TenantId, Timestamp,
};
use sqlx_core::executor::Executor;
use sqlx_core::query::query;
use sqlx_core::query_builder::QueryBuilder;
use sqlx_core::query_scalar::query_scalar;
use sqlx_core::row::Row;
use sqlx_postgres::{PgRow, Postgres};

use crate::error::Error;
use crate::rows::{json_at, u32_at};
use crate::{PostgresStore, domain};

use octopus_sql::columns::CONVERSATIONS as COLUMNS;

#[async_trait]
impl ConversationStore for PostgresStore {
    async fn create_conversation(&self, conversation: &Conversation) -> Result<()> {
        domain(insert_conversation(&self.pool, conversation)).await
    }

    async fn get_conversation(&self, tenant: TenantId, id: ConversationId) -> Result<Conversation> {
        domain(get_conversation(&self.pool, tenant, id, Lock::None)).await
    }

    async fn opening_messages(
        &self,
        tenant: TenantId,
        ids: &[ConversationId],
    ) -> octopus_core::Result<Vec<octopus_core::message::Message>> {
        let ids: Vec<uuid::Uuid> = ids.iter().map(|id| id.0).collect();
        domain(async {
            // By each conversation's first episode, then that episode's
            // messages in order: both read through their indexes.
            let rows = query(&format!(
                "SELECT {} FROM unnest($2::uuid[]) AS c (id)
                 CROSS JOIN LATERAL (SELECT e.id FROM episodes e
                                     WHERE e.conversation_id = c.id AND e.tenant_id = $1
                                     ORDER BY e.started_at, e.id LIMIT 1) AS first
                 CROSS JOIN LATERAL (SELECT * FROM messages m
                                     WHERE m.episode_id = first.id AND m.role = 'user'
                                     ORDER BY m.ordinal LIMIT 1) AS m",
                crate::messages::COLUMNS
            ))
            .bind(tenant.0)
            .bind(&ids)
            .fetch_all(&self.pool)
            .await?;
            rows.iter()
                .map(crate::messages::message_from_row)
                .collect::<Result<Vec<_>, Error>>()
        })
        .await
    }

    async fn list_conversations(
        &self,
        tenant: TenantId,
        filter: &ConversationFilter,
    ) -> Result<Vec<Conversation>> {
        domain(async {
            let mut sql = QueryBuilder::<Postgres>::new(format!(
                "SELECT {COLUMNS} FROM conversations WHERE tenant_id = "
            ));
            sql.push_bind(tenant.0);
            if let Some(agent) = filter.agent_id {
                sql.push(" AND agent_id = ").push_bind(agent.0);
            }
            if let Some(user) = &filter.user_id {
                sql.push(" AND user_id = ").push_bind(user.clone());
            }
            if !filter.include_deleted {
                sql.push(" AND deleted_at IS NULL");
            }
            sql.push(" ORDER BY created_at DESC, id DESC LIMIT ")
                .push_bind(i64::from(filter.page.limit))
                .push(" OFFSET ")
                .push_bind(i64::from(filter.page.offset));
            let rows = sql.build().fetch_all(&self.pool).await?;
            rows.iter().map(conversation_from_row).collect()
        })
        .await
    }

    async fn list_users(
        &self,
        tenant: TenantId,
        agent: AgentId,
        page: Page,
    ) -> Result<Vec<UserSummary>> {
        domain(async {
            let rows = query(
                "SELECT user_id, COUNT(*)::int AS conversations, MAX(updated_at) AS last_active_at
                 FROM conversations
                 WHERE tenant_id = $1 AND agent_id = $2 AND deleted_at IS NULL
                 GROUP BY user_id ORDER BY user_id COLLATE \"C\" LIMIT $3 OFFSET $4",
            )
            .bind(tenant.0)
            .bind(agent.0)
            .bind(i64::from(page.limit))
            .bind(i64::from(page.offset))
            .fetch_all(&self.pool)
            .await?;
            rows.iter()
                .map(|row| {
                    Ok(UserSummary {
                        user_id: row.try_get("user_id")?,
                        conversation_count: u32_at(row, "conversations")?,
                        last_active_at: row.try_get("last_active_at")?,
                    })
                })
                .collect()
        })
        .await
    }

    async fn user_activity(
        &self,
        tenant: TenantId,
        agent: AgentId,
        user_id: &str,
    ) -> Result<Option<UserActivity>> {
        domain(async {
            let row = query(
                "WITH live AS (
                     SELECT id, created_at, updated_at FROM conversations
                     WHERE tenant_id = $1 AND agent_id = $2 AND user_id = $3 AND deleted_at IS NULL)
                 SELECT (SELECT COUNT(*) FROM live)::int AS conversations,
                        (SELECT MIN(created_at) FROM live) AS first_seen_at,
                        (SELECT MAX(updated_at) FROM live) AS last_active_at,
                        COUNT(e.id)::int AS episodes,
                        COALESCE(SUM(e.message_count), 0)::bigint AS messages
                 FROM episodes e
                 WHERE e.tenant_id = $1 AND e.agent_id = $2 AND e.user_id = $3
                   AND e.deleted_at IS NULL AND e.conversation_id IN (SELECT id FROM live)",
            )
            .bind(tenant.0)
            .bind(agent.0)
            .bind(user_id)
            .fetch_one(&self.pool)
            .await?;
            let conversations = u32_at(&row, "conversations")?;
            if conversations == 0 {
                return Ok(None);
            }
            let messages: i64 = row.try_get("messages")?;
            Ok(Some(UserActivity {
                conversations,
                episodes: u32_at(&row, "episodes")?,
                messages: messages.unsigned_abs(),
                first_seen_at: row.try_get("first_seen_at")?,
                last_active_at: row.try_get("last_active_at")?,
            }))
        })
        .await
    }

    async fn delete_conversation(
        &self,
        tenant: TenantId,
        id: ConversationId,
        at: Timestamp,
    ) -> Result<()> {
        domain(async {
            let mut tx = self.pool.begin().await?;
            let conversation = get_conversation(&mut *tx, tenant, id, Lock::ForUpdate).await?;
            if conversation.deleted_at.is_none() {
                query(
                    "UPDATE conversations SET deleted_at = $3, updated_at = $3 WHERE id = $1 AND tenant_id = $2",
                )
                .bind(id.0)
                .bind(tenant.0)
                .bind(at)
                .execute(&mut *tx)
                .await?;
                let open: Option<uuid::Uuid> = query_scalar(
                    "SELECT id FROM episodes WHERE conversation_id = $1 AND tenant_id = $2 AND ended_at IS NULL",
                )
                .bind(id.0)
                .bind(tenant.0)
                .fetch_optional(&mut *tx)
                .await?;
                if let Some(open) = open {
                    crate::closing::close(&mut tx, tenant, EpisodeId(open), &Closing::deleted(at))
                        .await?;
                }
                query(
                    "UPDATE episodes SET deleted_at = $3, updated_at = $3
                     WHERE conversation_id = $1 AND tenant_id = $2 AND deleted_at IS NULL",
                )
                .bind(id.0)
                .bind(tenant.0)
                .bind(at)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
            Ok(())
        })
        .await
    }
}

/// Whether a read locks the conversation's row until the transaction ends:
/// appends do, so that two appends to one conversation take turns.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lock {
    None,
    ForUpdate,
}

pub(crate) async fn get_conversation<'c>(
    conn: impl Executor<'c, Database = Postgres>,
    tenant: TenantId,
    id: ConversationId,
    lock: Lock,
) -> Result<Conversation, Error> {
    let lock = match lock {
        Lock::None => "",
        Lock::ForUpdate => " FOR UPDATE",
    };
    let row = query(&format!(
        "SELECT {COLUMNS} FROM conversations WHERE id = $1 AND tenant_id = $2{lock}"
    ))
    .bind(id.0)
    .bind(tenant.0)
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| DomainError::not_found(ConversationId::KIND, id))?;
    conversation_from_row(&row)
}

pub(crate) fn conversation_from_row(row: &PgRow) -> Result<Conversation, Error> {
    Ok(Conversation {
        id: ConversationId(row.try_get("id")?),
        tenant_id: TenantId(row.try_get("tenant_id")?),
        agent_id: AgentId(row.try_get("agent_id")?),
        user_id: row.try_get("user_id")?,
        title: row.try_get("title")?,
        metadata: json_at(row, "metadata", "conversation metadata")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        deleted_at: row.try_get("deleted_at")?,
        opening: None,
    })
}

pub(crate) async fn insert_conversation<'c>(
    conn: impl Executor<'c, Database = Postgres>,
    c: &Conversation,
) -> Result<(), Error> {
    query(
        "INSERT INTO conversations (id, tenant_id, agent_id, user_id, title, metadata, created_at, updated_at, deleted_at)
         VALUES ($1, $2, $3, $4, $5, $6::text::json, $7, $8, $9)",
    )
    .bind(c.id.0)
    .bind(c.tenant_id.0)
    .bind(c.agent_id.0)
    .bind(&c.user_id)
    .bind(&c.title)
    .bind(serde_json::Value::Object(c.metadata.clone()).to_string())
    .bind(c.created_at)
    .bind(c.updated_at)
    .bind(c.deleted_at)
    .execute(conn)
    .await?;
    Ok(())
}
