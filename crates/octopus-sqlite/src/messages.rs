//! Appending messages, and reading them back.

use octopus_core::appending::MessageRecord;
use octopus_core::appending::{self, OpenEpisode, Placement};
use octopus_core::chat::Usage;
use octopus_core::message::{Message, MessageContent, Role, ToolCallRecord};
use octopus_core::{AgentId, ConversationId, EpisodeId, MessageId, TenantId, Timestamp};
use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};

use crate::codec::{self, micros};
use crate::conversations::get_conversation;
use crate::error::{Result, corrupt};
use crate::rows;

/// A message's columns, in the order [`columns`] selects them.
const COLUMNS: [&str; 19] = [
    "seq",
    "id",
    "episode_id",
    "conversation_id",
    "ordinal",
    "role",
    "content",
    "name",
    "tool_call_id",
    "tool_calls",
    "token_count",
    "timestamp",
    "agent_id",
    "contains_pii",
    "redacted_content",
    "embedding_ref",
    "usage_input_tokens",
    "usage_output_tokens",
    "created_at",
];

/// How many columns [`columns`] selects.
pub(crate) const COLUMN_COUNT: usize = COLUMNS.len();

/// Message columns, each qualified by `alias`: the first columns of every
/// query whose rows [`message_from_row`] reads.
pub(crate) fn columns(alias: &str) -> String {
    COLUMNS
        .map(|column| format!("{alias}.{column} AS {column}"))
        .join(", ")
}

/// Where `name` is among [`COLUMNS`]; a name not there fails the build.
const fn at(name: &str) -> usize {
    let mut i = 0;
    while i < COLUMNS.len() {
        if COLUMNS[i].len() == name.len() {
            let (a, b) = (COLUMNS[i].as_bytes(), name.as_bytes());
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("not a message column")
}

/// One message row, in the order of the append's parameters.
pub(crate) const INSERT: &str =
    "INSERT INTO messages (id, tenant_id, episode_id, conversation_id, ordinal, role, content, name, tool_call_id,
                           tool_calls, token_count, timestamp, agent_id, contains_pii, redacted_content, created_at,
                           usage_input_tokens, usage_output_tokens)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)";

/// A record with its payloads already encoded, so that compression happens before
/// the writer lock is taken.
pub(crate) struct EncodedMessage {
    record: MessageRecord,
    /// Whether to queue the message's embedding.
    embed: bool,
    content: Option<Vec<u8>>,
    tool_calls: Option<Vec<u8>>,
    redacted: Option<Vec<u8>>,
}

pub(crate) fn encode(record: MessageRecord) -> EncodedMessage {
    EncodedMessage {
        embed: octopus_core::embedded_text::worth_embedding(record.role, record.content.as_ref()),
        content: record.content.as_ref().map(codec::encode_json),
        tool_calls: (!record.tool_calls.is_empty()).then(|| codec::encode_json(&record.tool_calls)),
        redacted: record
            .redacted_content
            .as_ref()
            .map(|text| codec::encode_payload(text.as_bytes())),
        record,
    }
}

/// Appends in one transaction: all messages or none.
pub(crate) fn append(
    conn: &mut Connection,
    tenant: TenantId,
    batch: &Placement,
    encoded: Vec<EncodedMessage>,
) -> Result<Vec<Message>> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let stored = append_in(&tx, tenant, batch, encoded)?;
    tx.commit()?;
    Ok(stored)
}

/// The append, within a transaction of the caller's.
pub(crate) fn append_in(
    tx: &Transaction<'_>,
    tenant: TenantId,
    batch: &Placement,
    encoded: Vec<EncodedMessage>,
) -> Result<Vec<Message>> {
    let conversation = get_conversation(tx, tenant, batch.conversation_id)?;
    appending::refuse_deleted(&conversation)?;
    let now = micros(batch.now);
    let mut open = find_open_episode(tx, tenant, batch.conversation_id)?;
    appending::SeenTail::check(batch.follows, open.as_ref())?;
    let mut stored = Vec::with_capacity(encoded.len());

    let mut insert = tx.prepare_cached(INSERT)?;
    for message in encoded {
        let episode = match open.take() {
            Some(episode) if episode.takes(message.record.timestamp, batch.idle_timeout) => episode,
            stale => {
                if let Some(stale) = stale {
                    save_counters(tx, tenant, &stale, now)?;
                    crate::closing::close(tx, tenant, stale.id, &stale.timed_out(batch))?;
                }
                start_episode(tx, tenant, &conversation, message.record.timestamp, now)?
            }
        };
        let episode = open.insert(episode);
        let m = episode.add(message.record, batch);
        insert.execute(params![
            m.id.0.as_bytes(),
            tenant.0.as_bytes(),
            m.episode_id.0.as_bytes(),
            m.conversation_id.0.as_bytes(),
            m.ordinal,
            m.role.as_str(),
            message.content,
            m.name,
            m.tool_call_id,
            message.tool_calls,
            m.token_count,
            micros(m.timestamp),
            m.agent_id.map(|a| *a.0.as_bytes()),
            m.contains_pii,
            message.redacted,
            now,
            m.usage.map(|u| appending::clamp_tokens(u.input_tokens)),
            m.usage.map(|u| appending::clamp_tokens(u.output_tokens)),
        ])?;
        if message.embed {
            crate::jobs::queue_message(
                tx,
                tenant,
                conversation.agent_id,
                m.id,
                now,
                batch.work_class,
            )?;
        }
        stored.push(m);
    }
    drop(insert);
    if let Some(episode) = &mut open {
        if episode.learning_due(batch) {
            crate::jobs::queue_learning(tx, tenant, episode.id, now, batch.work_class)?;
        }
        save_counters(tx, tenant, episode, now)?;
    }
    tx.execute(
        "UPDATE conversations SET updated_at = ?3 WHERE id = ?1 AND tenant_id = ?2",
        params![batch.conversation_id.0.as_bytes(), tenant.0.as_bytes(), now],
    )?;
    Ok(stored)
}

fn find_open_episode(
    tx: &Transaction<'_>,
    tenant: TenantId,
    conversation: ConversationId,
) -> Result<Option<OpenEpisode>> {
    let row = tx
        .prepare_cached(
            "SELECT id, message_count, last_message_at, total_input_tokens, total_output_tokens,
                    unlearned_user_messages
             FROM episodes WHERE conversation_id = ?1 AND tenant_id = ?2 AND ended_at IS NULL",
        )?
        .query_row([conversation.0.as_bytes(), tenant.0.as_bytes()], |row| {
            let counts = (row.get(1)?, row.get(3)?, row.get(4)?, row.get(5)?);
            Ok((row.get::<_, Vec<u8>>(0)?, row.get::<_, i64>(2)?, counts))
        })
        .optional()?;
    row.map(
        |(id, last_message_at, (message_count, input_tokens, output_tokens, unlearned))| {
            Ok(OpenEpisode {
                id: EpisodeId(codec::uuid_from(&id)?),
                message_count,
                last_message_at: codec::instant(last_message_at)?,
                input_tokens,
                output_tokens,
                unlearned_user_messages: unlearned,
            })
        },
    )
    .transpose()
}

fn start_episode(
    tx: &Transaction<'_>,
    tenant: TenantId,
    conversation: &octopus_core::conversation::Conversation,
    started_at: Timestamp,
    now: i64,
) -> Result<OpenEpisode> {
    let id = EpisodeId::new();
    tx.prepare_cached(
        "INSERT INTO episodes (id, tenant_id, conversation_id, agent_id, user_id, started_at, last_message_at,
                               created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7, ?7)",
    )?
    .execute(params![
        id.0.as_bytes(),
        tenant.0.as_bytes(),
        conversation.id.0.as_bytes(),
        conversation.agent_id.0.as_bytes(),
        conversation.user_id,
        micros(started_at),
        now
    ])?;
    Ok(OpenEpisode::started(id, started_at))
}

fn save_counters(
    tx: &Transaction<'_>,
    tenant: TenantId,
    episode: &OpenEpisode,
    now: i64,
) -> Result<()> {
    tx.prepare_cached(
        "UPDATE episodes SET message_count = ?3, last_message_at = ?4, total_input_tokens = ?5,
                             total_output_tokens = ?6, updated_at = ?7, unlearned_user_messages = ?8
         WHERE id = ?1 AND tenant_id = ?2",
    )?
    .execute(params![
        episode.id.0.as_bytes(),
        tenant.0.as_bytes(),
        episode.message_count,
        micros(episode.last_message_at),
        episode.input_tokens,
        episode.output_tokens,
        now,
        episode.unlearned_user_messages
    ])?;
    Ok(())
}

/// The messages of an episode in order.
pub(crate) fn episode_messages(
    conn: &Connection,
    tenant: TenantId,
    episode: EpisodeId,
) -> Result<Vec<Message>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {} FROM messages m WHERE m.episode_id = ?1 AND m.tenant_id = ?2 ORDER BY m.ordinal",
        columns("m")
    ))?;
    rows::collect(
        &mut stmt,
        [episode.0.as_bytes(), tenant.0.as_bytes()],
        message_from_row,
    )
}

/// Up to `limit` of the episode's newest messages below ordinal `before`,
/// oldest first.
pub(crate) fn episode_messages_before(
    conn: &Connection,
    tenant: TenantId,
    episode: EpisodeId,
    before: Option<u32>,
    limit: u32,
) -> Result<Vec<Message>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {} FROM messages m WHERE m.episode_id = ?1 AND m.tenant_id = ?2 AND m.ordinal < ?3
         ORDER BY m.ordinal DESC LIMIT ?4",
        columns("m")
    ))?;
    let before = before.map_or(i64::MAX, i64::from);
    let mut newest_first = rows::collect(
        &mut stmt,
        rusqlite::params![episode.0.as_bytes(), tenant.0.as_bytes(), before, limit],
        message_from_row,
    )?;
    newest_first.reverse();
    Ok(newest_first)
}

pub(crate) fn message_from_row(row: &Row<'_>) -> Result<Message> {
    debug_assert_eq!(row.as_ref().column_name(at("id")).ok(), Some("id"));
    let role = row
        .get_ref(at("role"))?
        .as_str()
        .map_err(|e| corrupt("message role", e))?;
    let content = rows::bytes(row, at("content"))?;
    let tool_calls = rows::bytes(row, at("tool_calls"))?;
    let redacted = rows::bytes(row, at("redacted_content"))?;
    Ok(Message {
        id: MessageId(rows::uuid(row, at("id"))?),
        episode_id: EpisodeId(rows::uuid(row, at("episode_id"))?),
        conversation_id: ConversationId(rows::uuid(row, at("conversation_id"))?),
        ordinal: row.get(at("ordinal"))?,
        role: role
            .parse::<Role>()
            .map_err(|e| corrupt("message role", e))?,
        content: content
            .map(|c| codec::decode_json::<MessageContent>(c, "message content"))
            .transpose()?,
        name: row.get(at("name"))?,
        tool_call_id: row.get(at("tool_call_id"))?,
        tool_calls: tool_calls
            .map(|t| codec::decode_json::<Vec<ToolCallRecord>>(t, "tool calls"))
            .transpose()?
            .unwrap_or_default(),
        token_count: row.get(at("token_count"))?,
        timestamp: rows::time(row, at("timestamp"))?,
        agent_id: rows::opt_uuid(row, at("agent_id"))?.map(AgentId),
        contains_pii: row.get(at("contains_pii"))?,
        redacted_content: redacted
            .map(|r| {
                String::from_utf8(codec::decode_payload(r)?.into_owned())
                    .map_err(|e| corrupt("redacted content", e))
            })
            .transpose()?,
        embedding_ref: row.get(at("embedding_ref"))?,
        usage: match (
            row.get::<_, Option<i64>>(at("usage_input_tokens"))?,
            row.get::<_, Option<i64>>(at("usage_output_tokens"))?,
        ) {
            (Some(input), Some(output)) => Some(Usage {
                input_tokens: input.max(0) as u64,
                output_tokens: output.max(0) as u64,
            }),
            _ => None,
        },
        created_at: rows::time(row, at("created_at"))?,
    })
}
