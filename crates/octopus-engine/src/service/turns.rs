//! Agent turns: the user's message is stored, the working memory assembled,
//! the agent's model called with it, and the reply stored with the usage the
//! provider reported. When the model calls tools, the turn returns the calls;
//! the caller runs them and continues the turn with their results.
//!
//! A turn is prepared, then run: everything that can be refused (bad input, a
//! missing conversation, an agent without a usable model) is refused before
//! anything is stored, and before a streamed answer starts. If the model call
//! fails, what was stored before it (the user's message, tool results) stays;
//! nothing else is written, and the next turn works as usual.

use octopus_core::DomainCode;
use octopus_core::appending::SeenTail;
use std::collections::BTreeSet;
use std::sync::Arc;

use octopus_core::agent::Agent;
use octopus_core::appending::{MessageRecord, TokenAccounting};
use octopus_core::chat::ChatPurpose;
use octopus_core::chat::{
    ChatError, ChatModel, ChatRequest, DeltaSink, Fault, ToolSpec, TurnReply, Usage,
};
use octopus_core::embedded_text::outgoing_text;
use octopus_core::message::{Message, NewMessage, Role, ToolCallRecord};
use octopus_core::working_memory::{ChatMessage, ContextTrace};
use octopus_core::{ConversationId, Error as DomainError, TenantId};
use serde_json::Value;

use crate::config::MessageOrigin;
use crate::error::Result;
use crate::octopus::Octopus;

/// Most tools one turn may offer the model.
pub const MAX_TOOLS: usize = 128;
/// Longest JSON Schema of one tool's parameters, in bytes.
pub const MAX_TOOL_SCHEMA_BYTES: usize = 64 * 1024;

/// What a caller sends to take a turn: a new message, or the results of the
/// tool calls the model made in this turn.
#[derive(Clone, Debug, Default)]
pub struct TurnInput {
    pub message: Option<String>,
    pub tool_results: Vec<ToolResult>,
    /// Tools the model may call in this turn (send them again when continuing).
    pub tools: Vec<ToolSpec>,
}

/// The result of one tool call, run by the caller.
#[derive(Clone, Debug)]
pub struct ToolResult {
    pub tool_call_id: String,
    /// The tool's output: text, or any JSON.
    pub content: Value,
    pub is_error: bool,
    pub duration_ms: Option<u64>,
}

/// A turn ready to call its model.
pub struct PreparedTurn {
    octopus: Octopus,
    tenant: TenantId,
    conversation: ConversationId,
    agent: Agent,
    model: Arc<dyn ChatModel>,
    request: ChatRequest,
    trace: ContextTrace,
    stored: Vec<Message>,
    /// How long retrieval and assembly took, within the preparation.
    context_elapsed: std::time::Duration,
}

impl Octopus {
    /// Takes a turn: [`Octopus::prepare_turn`], then [`PreparedTurn::run`].
    pub async fn turn(
        &self,
        tenant: TenantId,
        conversation: ConversationId,
        input: TurnInput,
        deltas: Option<DeltaSink<'_>>,
    ) -> Result<TurnReply> {
        self.prepare_turn(tenant, conversation, input)
            .await?
            .run(deltas)
            .await
    }

    /// Validates the input, builds the agent's model, assembles the working
    /// memory and stores the user's message (or the tool results).
    pub async fn prepare_turn(
        &self,
        tenant: TenantId,
        conversation_id: ConversationId,
        input: TurnInput,
    ) -> Result<PreparedTurn> {
        check_tools(&input.tools)?;
        let conversation = self.store.get_conversation(tenant, conversation_id).await?;
        let agent = self
            .conversation_active_agent(tenant, conversation.agent_id)
            .await?;
        let model = self.chat.for_agent(&agent, ChatPurpose::Turn)?;
        if input.message.is_some() != input.tool_results.is_empty() {
            return Err(DomainError::invalid(
                "message",
                "send either `message` (a new turn) or `tool_results` (to continue one)",
            )
            .into());
        }
        if let Some(message) = &input.message {
            octopus_core::bounds::check_chars(
                "message",
                message,
                1,
                self.limits.max_message_bytes,
            )?;
        }
        let started = std::time::Instant::now();
        // What is stored is decided from the conversation as read; when
        // another request changed it before the store wrote (answered the
        // same tool call, say), the store refuses and the turn is decided
        // again from what is there now.
        let mut attempt = 1;
        let (memory, tail, stored) = loop {
            match self
                .store_turn_input(tenant, &conversation, &agent, &input)
                .await
            {
                Err(error) if is_moved(&error) && attempt < DECIDE_ATTEMPTS => attempt += 1,
                outcome => break outcome?,
            }
        };
        let context_elapsed = started.elapsed();
        let mut messages = memory.messages;
        messages.extend(tail);
        Ok(PreparedTurn {
            octopus: self.clone(),
            tenant,
            conversation: conversation_id,
            agent,
            model,
            request: ChatRequest {
                messages,
                tools: input.tools,
            },
            trace: memory.trace,
            stored,
            context_elapsed,
        })
    }

    /// Stores the user's message (with the calls it leaves unanswered
    /// recorded as abandoned) or the tool results, and assembles the working
    /// memory for the model call.
    async fn store_turn_input(
        &self,
        tenant: TenantId,
        conversation: &octopus_core::conversation::Conversation,
        agent: &Agent,
        input: &TurnInput,
    ) -> Result<(
        super::context::WorkingMemory,
        Vec<ChatMessage>,
        Vec<Message>,
    )> {
        let Some(message) = &input.message else {
            return self
                .tool_round(tenant, conversation, agent, &input.tool_results)
                .await;
        };
        let (seen, history) = self.history(tenant, conversation.id, agent).await?;
        let memory = self
            .assemble_context(
                tenant,
                conversation,
                agent,
                message,
                (seen.map(|tail| tail.episode_id), history.messages.clone()),
                false,
            )
            .await?;
        // Calls the caller never answered are recorded as abandoned before
        // the new message, so that the episode pairs every call with a result
        // and the model later sees what happened. Only while no one else
        // answers them meanwhile: the batch must follow what was read.
        let mut new_messages: Vec<NewMessage> = history.pending.iter().map(abandoned).collect();
        let follows = seen.filter(|_| !new_messages.is_empty());
        new_messages.push(NewMessage::text(Role::User, message.clone()));
        let stored = self
            .append_turn_messages(tenant, conversation.id, agent, new_messages, None, follows)
            .await?;
        Ok((memory, Vec::new(), stored))
    }

    /// Stores the results of the model's pending tool calls and rebuilds the
    /// turn: the working memory for the turn's user message, then the calls
    /// and results since it.
    async fn tool_round(
        &self,
        tenant: TenantId,
        conversation: &octopus_core::conversation::Conversation,
        agent: &Agent,
        results: &[ToolResult],
    ) -> Result<(
        super::context::WorkingMemory,
        Vec<ChatMessage>,
        Vec<Message>,
    )> {
        let no_pending = || {
            DomainError::conflict(
                DomainCode::NoPendingToolCalls,
                "the conversation has no tool calls waiting for results",
            )
        };
        // The turn is rebuilt from the stored episode, read once here.
        let open = self
            .open_episode(tenant, conversation.id)
            .await?
            .ok_or_else(no_pending)?;
        let episode_id = open.id;
        // Read as a history is, back to the newest user message.
        let (budget, limit) = self.limits.bounded_memory(&agent.memory);
        let counter = super::context::counter_for(agent);
        let (read, messages) = self
            .episode_tail(tenant, episode_id, limit, budget, &counter, true)
            .await?;
        let read_at = SeenTail {
            episode_id,
            message_count: read.message_count,
        };
        let user_at = messages
            .iter()
            .rposition(|m| m.role == Role::User)
            .ok_or_else(no_pending)?;
        let since = &messages[user_at + 1..];
        let pending = octopus_core::chat_history::pending_calls(&messages);
        if pending.is_empty() {
            return Err(no_pending().into());
        }
        // The results must answer the pending calls exactly: a conflict with
        // the stored turn when they do not (the request itself is well formed).
        let mismatch =
            |message: String| DomainError::conflict(DomainCode::ToolResultsMismatch, message);
        let mut seen = BTreeSet::new();
        let mut new_messages = Vec::with_capacity(results.len());
        for (index, result) in results.iter().enumerate() {
            let Some(call) = pending
                .iter()
                .find(|call| call.tool_call_id == result.tool_call_id)
            else {
                return Err(mismatch(format!(
                    "tool_results[{index}]: no pending tool call `{}`",
                    result.tool_call_id
                ))
                .into());
            };
            if !seen.insert(result.tool_call_id.as_str()) {
                return Err(mismatch(format!(
                    "tool_results[{index}]: call `{}` is answered twice",
                    result.tool_call_id
                ))
                .into());
            }
            new_messages.push(NewMessage {
                tool_call_id: Some(call.tool_call_id.clone()),
                name: Some(call.function_name.clone()),
                tool_calls: vec![ToolCallRecord {
                    result: Some(result.content.clone()),
                    is_error: result.is_error,
                    duration_ms: result.duration_ms,
                    ..(*call).clone()
                }],
                ..NewMessage::text(Role::Tool, tool_text(&result.content))
            });
        }
        if let Some(missing) = pending
            .iter()
            .find(|call| !seen.contains(call.tool_call_id.as_str()))
        {
            return Err(mismatch(format!(
                "no result for tool call `{}`; answer every pending call at once",
                missing.tool_call_id
            ))
            .into());
        }
        // Results must follow their calls directly: stored only while nothing
        // else was appended since the read, so one request answers a call.
        let stored = self
            .append_turn_messages(
                tenant,
                conversation.id,
                agent,
                new_messages,
                None,
                Some(read_at),
            )
            .await?;
        let history = octopus_core::chat_history::history(
            &messages[..user_at],
            agent.memory.pii.redacts_outgoing(),
            limit as usize,
        );
        let user_text = outgoing_text(&messages[user_at], agent.memory.pii.redacts_outgoing())
            .unwrap_or_default();
        let memory = self
            .assemble_context(
                tenant,
                conversation,
                agent,
                &user_text,
                (Some(episode_id), history.messages),
                false,
            )
            .await?;
        let redact = agent.memory.pii.redacts_outgoing();
        let tail = since
            .iter()
            .chain(&stored)
            .map(|m| octopus_core::chat_history::chat_message(m, redact))
            .collect();
        Ok((memory, tail, stored))
    }

    /// Appends messages a turn makes, counted by `usage` (a reply) or as part
    /// of the next model call (the user's message, tool results).
    async fn append_turn_messages(
        &self,
        tenant: TenantId,
        conversation: ConversationId,
        agent: &Agent,
        messages: Vec<NewMessage>,
        usage: Option<Usage>,
        follows: Option<SeenTail>,
    ) -> Result<Vec<Message>> {
        let accounting = match usage {
            Some(usage) => TokenAccounting::Reported(usage),
            None => TokenAccounting::InModelCall,
        };
        let records: Vec<MessageRecord> = self
            .message_records(
                tenant,
                messages,
                "message",
                MessageOrigin::Live,
                &agent.memory,
            )
            .await?
            .into_iter()
            .map(|record| MessageRecord {
                accounting,
                ..record
            })
            .collect();
        self.append_records(tenant, conversation, agent, records, follows)
            .await
    }
}

impl PreparedTurn {
    /// Calls the model (streaming its text into `deltas`, when given) and
    /// stores its reply.
    pub async fn run(self, deltas: Option<DeltaSink<'_>>) -> Result<TurnReply> {
        let started = std::time::Instant::now();
        let reply = match self.model.chat(&self.request, deltas).await {
            Ok(reply) => reply,
            Err(error) => {
                tracing::warn!(provider = %error.provider, fault = ?error.fault, %error, "turn's model call failed");
                return Err(error.into());
            }
        };
        tracing::debug!(
            provider = self.model.provider(),
            elapsed_ms = started.elapsed().as_millis() as u64,
            input_tokens = reply.usage.input_tokens,
            output_tokens = reply.usage.output_tokens,
            "model answered"
        );
        let octopus = &self.octopus;
        // No stored text holds NUL (PostgreSQL cannot); a model that writes
        // one gets the replacement character in its place.
        let mut message = NewMessage::text(Role::Assistant, reply.text.replace('\0', "\u{fffd}"));
        if reply.text.is_empty() && !reply.tool_calls.is_empty() {
            message.content = None;
        }
        message.agent_id = Some(self.agent.id);
        message.tool_calls = reply
            .tool_calls
            .iter()
            .map(ToolCallRecord::called)
            .collect();
        if reply.usage.output_tokens > 0 {
            message.token_count =
                Some(u32::try_from(reply.usage.output_tokens).unwrap_or(u32::MAX));
        }
        let stored = octopus
            .append_turn_messages(
                self.tenant,
                self.conversation,
                &self.agent,
                vec![message],
                Some(reply.usage),
                None,
            )
            .await
            .map_err(|error| self.unstorable_reply(error))?;
        let reply_message = stored.into_iter().next().ok_or_else(|| {
            DomainError::backend(std::io::Error::other("the reply was not stored"))
        })?;
        Ok(TurnReply {
            episode_id: reply_message.episode_id,
            stored_message_ids: self.stored.iter().map(|m| m.id).collect(),
            reply: reply_message,
            tool_calls: reply.tool_calls,
            usage: reply.usage,
            finish_reason: reply.finish_reason,
            provider: self.model.provider().to_owned(),
            model: match reply.model.is_empty() {
                true => self.model.model().to_owned(),
                false => reply.model,
            },
            trace: self.trace,
        })
    }

    /// A reply the store refuses as invalid (too long once its redacted
    /// copy is counted, say) is the provider's fault, not the caller's: the
    /// caller sent nothing wrong.
    fn unstorable_reply(&self, error: crate::error::Error) -> crate::error::Error {
        match error {
            crate::error::Error::Domain(DomainError::Invalid { field, message }) => {
                tracing::warn!(provider = self.model.provider(), %field, %message, "turn's reply cannot be stored");
                ChatError::new(
                    self.model.provider(),
                    Fault::Provider,
                    format!("the reply cannot be stored: {field}: {message}"),
                )
                .into()
            }
            other => other,
        }
    }

    /// How long the turn took to store its input and assemble the working
    /// memory: the part of a turn before its model call.
    pub fn context_elapsed(&self) -> std::time::Duration {
        self.context_elapsed
    }
}

/// How many times a turn is decided before `conversation_moved` reaches its
/// caller: each further try follows another request's change.
const DECIDE_ATTEMPTS: usize = 4;

fn is_moved(error: &crate::error::Error) -> bool {
    matches!(
        error,
        crate::error::Error::Domain(DomainError::Conflict {
            code: DomainCode::ConversationMoved,
            ..
        })
    )
}

/// The result recorded for a call that a new message left unanswered.
fn abandoned(call: &ToolCallRecord) -> NewMessage {
    let result = serde_json::json!({"abandoned": true});
    NewMessage {
        tool_call_id: Some(call.tool_call_id.clone()),
        name: Some(call.function_name.clone()),
        tool_calls: vec![ToolCallRecord {
            result: Some(result),
            is_error: true,
            duration_ms: None,
            ..call.clone()
        }],
        ..NewMessage::text(
            Role::Tool,
            "abandoned: the conversation moved on before this call was answered",
        )
    }
}

/// A tool's output as the text a model reads.
fn tool_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn check_tools(tools: &[ToolSpec]) -> Result<()> {
    if tools.len() > MAX_TOOLS {
        return Err(DomainError::invalid(
            "tools",
            format!("{} tools; the limit is {MAX_TOOLS}", tools.len()),
        )
        .into());
    }
    // Two tools of one name are left for the provider to refuse: its 400
    // names the problem in its own words.
    for (index, tool) in tools.iter().enumerate() {
        let field = |name: &str| format!("tools[{index}].{name}");
        let name_ok = (1..=64).contains(&tool.name.len())
            && tool
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !name_ok {
            return Err(DomainError::invalid(
                field("name"),
                "must be 1 to 64 letters, digits, `_` or `-`",
            )
            .into());
        }
        if !tool.parameters.is_object() {
            return Err(
                DomainError::invalid(field("parameters"), "must be a JSON Schema object").into(),
            );
        }
        if tool.parameters.to_string().len() > MAX_TOOL_SCHEMA_BYTES {
            return Err(DomainError::invalid(
                field("parameters"),
                format!("longer than {MAX_TOOL_SCHEMA_BYTES} bytes"),
            )
            .into());
        }
    }
    Ok(())
}
