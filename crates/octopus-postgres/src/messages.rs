//! The append path: placing messages in episodes, and reading them back.
//!
//! A batch's rows are written with one statement per table (`UNNEST` over
//! arrays of columns), not one per message: a round trip to the server costs
//! more than writing a row.

use chrono::{DateTime, Utc};
use octopus_core::appending::MessageRecord;
use octopus_core::appending::{self, OpenEpisode, Placement};
use octopus_core::chat::Usage;
use octopus_core::conversation::Conversation;
use octopus_core::message::{Message, MessageContent, Role, ToolCallRecord};
use octopus_core::{AgentId, ConversationId, EpisodeId, MessageId, TenantId};
use sqlx_core::executor::Executor;
use sqlx_core::query::query;
use sqlx_core::row::Row;
use sqlx_postgres::{PgRow, Postgres};

use crate::conversations::{Lock, get_conversation};
use crate::error::{Result, corrupt};
use crate::rows::{Tx, int, u32_at};
use octopus_core::appending::clamp_tokens;

pub(crate) const COLUMNS: &str = "m.id, m.episode_id, m.conversation_id, m.ordinal, m.role, m.content::text AS content,
    m.name, m.tool_call_id, m.tool_calls::text AS tool_calls, m.token_count, m.timestamp, m.agent_id, m.contains_pii,
    m.redacted_content, m.embedding_ref, m.usage_input_tokens, m.usage_output_tokens, m.created_at";

/// The columns of the messages a batch inserts, one array per column.
#[derive(Default)]
pub(crate) struct MessageRows {
    id: Vec<uuid::Uuid>,
    episode_id: Vec<uuid::Uuid>,
    conversation_id: Vec<uuid::Uuid>,
    ordinal: Vec<i32>,
    role: Vec<&'static str>,
    content: Vec<Option<String>>,
    name: Vec<Option<String>>,
    tool_call_id: Vec<Option<String>>,
    tool_calls: Vec<Option<String>>,
    token_count: Vec<i64>,
    timestamp: Vec<DateTime<Utc>>,
    agent_id: Vec<Option<uuid::Uuid>>,
    contains_pii: Vec<bool>,
    redacted_content: Vec<Option<String>>,
    usage_input: Vec<Option<i64>>,
    usage_output: Vec<Option<i64>>,
    created_at: Vec<DateTime<Utc>>,
    search_text: Vec<String>,
}

impl MessageRows {
    pub fn push(&mut self, m: &Message) {
        self.id.push(m.id.0);
        self.episode_id.push(m.episode_id.0);
        self.conversation_id.push(m.conversation_id.0);
        self.ordinal.push(int(m.ordinal));
        self.role.push(m.role.as_str());
        self.content.push(m.content.as_ref().map(json_text));
        self.name.push(m.name.clone());
        self.tool_call_id.push(m.tool_call_id.clone());
        self.tool_calls
            .push((!m.tool_calls.is_empty()).then(|| json_text(&m.tool_calls)));
        self.token_count.push(i64::from(m.token_count));
        self.timestamp.push(m.timestamp);
        self.agent_id.push(m.agent_id.map(|a| a.0));
        self.contains_pii.push(m.contains_pii);
        self.redacted_content.push(m.redacted_content.clone());
        self.usage_input
            .push(m.usage.map(|u| clamp_tokens(u.input_tokens)));
        self.usage_output
            .push(m.usage.map(|u| clamp_tokens(u.output_tokens)));
        self.created_at.push(m.created_at);
        self.search_text.push(m.search_text());
    }

    /// Inserts the rows, with one statement.
    pub async fn insert(self, tx: &mut Tx<'_>, tenant: TenantId) -> Result<()> {
        if self.id.is_empty() {
            return Ok(());
        }
        query(
            "INSERT INTO messages (id, tenant_id, episode_id, conversation_id, ordinal, role, content, name,
                                   tool_call_id, tool_calls, token_count, timestamp, agent_id, contains_pii,
                                   redacted_content, usage_input_tokens, usage_output_tokens, created_at, search)
             SELECT id, $1, episode_id, conversation_id, ordinal, role, content::json, name, tool_call_id,
                    tool_calls::json, token_count, timestamp, agent_id, contains_pii, redacted_content, usage_input,
                    usage_output, created_at, to_tsvector('english', search_text)
             FROM UNNEST($2::uuid[], $3::uuid[], $4::uuid[], $5::int4[], $6::text[], $7::text[], $8::text[],
                         $9::text[], $10::text[], $11::int8[], $12::timestamptz[], $13::uuid[], $14::bool[],
                         $15::text[], $16::int8[], $17::int8[], $18::timestamptz[], $19::text[])
                  AS t (id, episode_id, conversation_id, ordinal, role, content, name, tool_call_id, tool_calls,
                        token_count, timestamp, agent_id, contains_pii, redacted_content, usage_input, usage_output,
                        created_at, search_text)",
        )
        .bind(tenant.0)
        .bind(self.id)
        .bind(self.episode_id)
        .bind(self.conversation_id)
        .bind(self.ordinal)
        .bind(self.role)
        .bind(self.content)
        .bind(self.name)
        .bind(self.tool_call_id)
        .bind(self.tool_calls)
        .bind(self.token_count)
        .bind(self.timestamp)
        .bind(self.agent_id)
        .bind(self.contains_pii)
        .bind(self.redacted_content)
        .bind(self.usage_input)
        .bind(self.usage_output)
        .bind(self.created_at)
        .bind(self.search_text)
        .execute(&mut **tx)
        .await?;
        Ok(())
    }
}

fn json_text<T: serde::Serialize + ?Sized>(value: &T) -> String {
    // Serialising our own types cannot fail.
    serde_json::to_string(value).unwrap_or_default()
}

/// Appends `records` in order inside `tx`, opening and closing episodes as
/// their timestamps require. The conversation's row stays locked until `tx`
/// ends, so concurrent appends to one conversation take turns.
pub(crate) async fn append_in(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    batch: &Placement,
    records: Vec<MessageRecord>,
) -> Result<Vec<Message>> {
    let conversation =
        get_conversation(&mut **tx, tenant, batch.conversation_id, Lock::ForUpdate).await?;
    appending::refuse_deleted(&conversation)?;
    let mut open = find_open_episode(tx, tenant, batch.conversation_id).await?;
    appending::SeenTail::check(batch.follows, open.as_ref())?;
    let mut rows = MessageRows::default();
    let mut embed = Vec::new();
    let mut stored = Vec::with_capacity(records.len());
    for r in records {
        let episode = match open.take() {
            Some(episode) if episode.takes(r.timestamp, batch.idle_timeout) => episode,
            stale => {
                if let Some(stale) = stale {
                    save_counters(tx, tenant, &stale, batch.now).await?;
                    crate::closing::close(tx, tenant, stale.id, &stale.timed_out(batch)).await?;
                }
                start_episode(tx, tenant, &conversation, r.timestamp, batch.now).await?
            }
        };
        let episode = open.insert(episode);
        if octopus_core::embedded_text::worth_embedding(r.role, r.content.as_ref()) {
            embed.push(r.id.0);
        }
        let message = episode.add(r, batch);
        rows.push(&message);
        stored.push(message);
    }
    rows.insert(tx, tenant).await?;
    crate::jobs::queue_messages(
        tx,
        tenant,
        conversation.agent_id,
        &embed,
        batch.now,
        batch.work_class,
    )
    .await?;
    if let Some(episode) = &mut open {
        if episode.learning_due(batch) {
            crate::jobs::queue_learning(tx, tenant, episode.id, batch.now, batch.work_class)
                .await?;
        }
        save_counters(tx, tenant, episode, batch.now).await?;
    }
    query("UPDATE conversations SET updated_at = $3 WHERE id = $1 AND tenant_id = $2")
        .bind(batch.conversation_id.0)
        .bind(tenant.0)
        .bind(batch.now)
        .execute(&mut **tx)
        .await?;
    Ok(stored)
}

async fn find_open_episode(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    conversation: ConversationId,
) -> Result<Option<OpenEpisode>> {
    let row = query(
        "SELECT id, message_count, last_message_at, total_input_tokens, total_output_tokens,
                unlearned_user_messages
         FROM episodes WHERE conversation_id = $1 AND tenant_id = $2 AND ended_at IS NULL
         FOR UPDATE",
    )
    .bind(conversation.0)
    .bind(tenant.0)
    .fetch_optional(&mut **tx)
    .await?;
    row.map(|row| {
        Ok(OpenEpisode {
            id: EpisodeId(row.try_get("id")?),
            message_count: u32_at(&row, "message_count")?,
            last_message_at: row.try_get("last_message_at")?,
            input_tokens: row.try_get("total_input_tokens")?,
            output_tokens: row.try_get("total_output_tokens")?,
            unlearned_user_messages: u32_at(&row, "unlearned_user_messages")?,
        })
    })
    .transpose()
}

async fn start_episode(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    conversation: &Conversation,
    started_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<OpenEpisode> {
    let id = EpisodeId::new();
    query(
        "INSERT INTO episodes (id, tenant_id, conversation_id, agent_id, user_id, started_at, last_message_at,
                               created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $7)",
    )
    .bind(id.0)
    .bind(tenant.0)
    .bind(conversation.id.0)
    .bind(conversation.agent_id.0)
    .bind(&conversation.user_id)
    .bind(started_at)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(OpenEpisode::started(id, started_at))
}

async fn save_counters(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    episode: &OpenEpisode,
    now: DateTime<Utc>,
) -> Result<()> {
    query(
        "UPDATE episodes SET message_count = $3, last_message_at = $4, total_input_tokens = $5,
                             total_output_tokens = $6, updated_at = $7, unlearned_user_messages = $8
         WHERE id = $1 AND tenant_id = $2",
    )
    .bind(episode.id.0)
    .bind(tenant.0)
    .bind(int(episode.message_count))
    .bind(episode.last_message_at)
    .bind(episode.input_tokens)
    .bind(episode.output_tokens)
    .bind(now)
    .bind(int(episode.unlearned_user_messages))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

pub(crate) async fn episode_messages<'c>(
    conn: impl Executor<'c, Database = Postgres>,
    tenant: TenantId,
    episode: EpisodeId,
) -> Result<Vec<Message>> {
    let rows = query(&format!(
        "SELECT {COLUMNS} FROM messages m WHERE m.episode_id = $1 AND m.tenant_id = $2 ORDER BY m.ordinal"
    ))
    .bind(episode.0)
    .bind(tenant.0)
    .fetch_all(conn)
    .await?;
    rows.iter().map(message_from_row).collect()
}

/// Up to `limit` of the episode's newest messages below ordinal `before`,
/// oldest first.
pub(crate) async fn episode_messages_before<'c>(
    conn: impl Executor<'c, Database = Postgres>,
    tenant: TenantId,
    episode: EpisodeId,
    before: Option<u32>,
    limit: u32,
) -> Result<Vec<Message>> {
    let rows = query(&format!(
        "SELECT {COLUMNS} FROM messages m WHERE m.episode_id = $1 AND m.tenant_id = $2 AND m.ordinal < $3
         ORDER BY m.ordinal DESC LIMIT $4"
    ))
    .bind(episode.0)
    .bind(tenant.0)
    .bind(before.map_or(i64::MAX, i64::from))
    .bind(i64::from(limit))
    .fetch_all(conn)
    .await?;
    let mut messages = rows
        .iter()
        .map(message_from_row)
        .collect::<Result<Vec<_>>>()?;
    messages.reverse();
    Ok(messages)
}

pub(crate) fn message_from_row(row: &PgRow) -> Result<Message> {
    let role: String = row.try_get("role")?;
    let content: Option<String> = row.try_get("content")?;
    let tool_calls: Option<String> = row.try_get("tool_calls")?;
    let usage_input: Option<i64> = row.try_get("usage_input_tokens")?;
    let usage_output: Option<i64> = row.try_get("usage_output_tokens")?;
    let token_count: i64 = row.try_get("token_count")?;
    Ok(Message {
        id: MessageId(row.try_get("id")?),
        episode_id: EpisodeId(row.try_get("episode_id")?),
        conversation_id: ConversationId(row.try_get("conversation_id")?),
        ordinal: u32_at(row, "ordinal")?,
        role: role
            .parse::<Role>()
            .map_err(|e| corrupt("message role", e))?,
        content: content
            .map(|c| {
                serde_json::from_str::<MessageContent>(&c)
                    .map_err(|e| corrupt("message content", e))
            })
            .transpose()?,
        name: row.try_get("name")?,
        tool_call_id: row.try_get("tool_call_id")?,
        tool_calls: tool_calls
            .map(|t| {
                serde_json::from_str::<Vec<ToolCallRecord>>(&t)
                    .map_err(|e| corrupt("tool calls", e))
            })
            .transpose()?
            .unwrap_or_default(),
        token_count: u32::try_from(token_count).map_err(|e| corrupt("token count", e))?,
        timestamp: row.try_get("timestamp")?,
        agent_id: row
            .try_get::<Option<uuid::Uuid>, _>("agent_id")?
            .map(AgentId),
        contains_pii: row.try_get("contains_pii")?,
        redacted_content: row.try_get("redacted_content")?,
        embedding_ref: row.try_get("embedding_ref")?,
        usage: match (usage_input, usage_output) {
            (Some(input), Some(output)) => Some(Usage {
                input_tokens: input.unsigned_abs(),
                output_tokens: output.unsigned_abs(),
            }),
            _ => None,
        },
        created_at: row.try_get("created_at")?,
    })
}
