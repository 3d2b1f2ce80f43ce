//! Anthropic Messages (`POST /v1/messages`). Reference:
//! <https://docs.anthropic.com/en/api/messages> and, for streams,
//! <https://docs.anthropic.com/en/docs/build-with-claude/streaming>.
//!
//! Unlike chat completions: the system prompt is a field of its own, not a
//! message; tool calls and results are content blocks (`tool_use` in the
//! assistant's message, `tool_result` in the next user message); `max_tokens`
//! is required.

use std::collections::BTreeMap;

use async_trait::async_trait;
use octopus_core::chat::{
    ChatError, ChatModel, ChatReply, ChatRequest, DeltaSink, Fault, Sampling, ToolCall, Usage,
};
use octopus_core::message::Role;
use octopus_core::working_memory::ChatMessage;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::Endpoint;
use crate::lines::Events;

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The `anthropic-version` header every request carries.
pub const API_VERSION: &str = "2023-06-01";

pub struct AnthropicChat {
    endpoint: Endpoint,
    model: String,
    sampling: Sampling,
}

impl AnthropicChat {
    pub(crate) fn new(endpoint: Endpoint, model: String, sampling: Sampling) -> Self {
        Self {
            endpoint,
            model,
            sampling,
        }
    }

    /// The request body, in the API's shape.
    pub fn body(&self, request: &ChatRequest, stream: bool) -> Value {
        let system: Vec<&str> = request
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(|m| m.content.as_str())
            .collect();
        let max_tokens = self
            .sampling
            .max_output_tokens
            .unwrap_or(self.endpoint.options.default_max_output_tokens);
        let mut body = json!({
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": wire_messages(&request.messages),
        });
        if !system.is_empty() {
            body["system"] = json!(system.join("\n\n"));
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|tool| {
                    let mut wire = json!({"name": tool.name, "input_schema": tool.parameters});
                    if let Some(description) = &tool.description {
                        wire["description"] = json!(description);
                    }
                    wire
                })
                .collect();
        }
        if let Some(t) = self.sampling.temperature {
            // Anthropic's range is 0 to 1; agents may say up to 2 (OpenAI's).
            body["temperature"] = json!(t.min(1.0));
        }
        if let Some(p) = self.sampling.top_p {
            body["top_p"] = json!(p);
        }
        if stream {
            body["stream"] = json!(true);
        }
        body
    }

    async fn whole(&self, request: &ChatRequest) -> Result<ChatReply, ChatError> {
        let response = self
            .endpoint
            .post(&self.body(request, false), crate::error_message)
            .await?;
        let message: WireMessage = self.endpoint.read(response).await?;
        let mut reply = ChatReply {
            model: message.model,
            finish_reason: message.stop_reason,
            usage: Usage {
                input_tokens: message.usage.input_tokens.unwrap_or(0),
                output_tokens: message.usage.output_tokens.unwrap_or(0),
            },
            ..ChatReply::default()
        };
        for block in message.content {
            match block {
                Block::Text { text } => reply.text.push_str(&text),
                Block::ToolUse { id, name, input } => reply.tool_calls.push(ToolCall {
                    id,
                    name,
                    arguments: input,
                }),
                Block::Other => {}
            }
        }
        self.endpoint.budget().spend_reply(&reply)?;
        Ok(reply)
    }

    async fn streamed(
        &self,
        request: &ChatRequest,
        deltas: DeltaSink<'_>,
    ) -> Result<ChatReply, ChatError> {
        let response = self
            .endpoint
            .post(&self.body(request, true), crate::error_message)
            .await?;
        let mut events = Events::new(&self.endpoint, response);
        let mut budget = self.endpoint.budget();
        let mut reply = ChatReply::default();
        // Tool calls by content-block index: id, name, and input JSON in pieces.
        let mut calls: BTreeMap<u32, (String, String, String)> = BTreeMap::new();
        let mut stopped = false;
        while let Some(event) = events.next().await? {
            let data: StreamEvent =
                serde_json::from_str(&event.data).map_err(|e| self.endpoint.malformed(e))?;
            match data {
                StreamEvent::MessageStart { message } => {
                    reply.model = message.model;
                    reply.usage.input_tokens = message.usage.input_tokens.unwrap_or(0);
                    reply.usage.output_tokens = message.usage.output_tokens.unwrap_or(0);
                }
                StreamEvent::ContentBlockStart {
                    index,
                    content_block,
                } => {
                    if let Block::ToolUse { id, name, .. } = content_block {
                        budget.spend(&name)?;
                        calls.insert(index, (id, name, String::new()));
                    }
                }
                StreamEvent::ContentBlockDelta { index, delta } => match delta {
                    BlockDelta::TextDelta { text } => {
                        budget.spend(&text)?;
                        deltas(&text);
                        reply.text.push_str(&text);
                    }
                    BlockDelta::InputJsonDelta { partial_json } => {
                        budget.spend(&partial_json)?;
                        if let Some(call) = calls.get_mut(&index) {
                            call.2.push_str(&partial_json);
                        }
                    }
                    BlockDelta::Other => {}
                },
                StreamEvent::MessageDelta { delta, usage } => {
                    if delta.stop_reason.is_some() {
                        reply.finish_reason = delta.stop_reason;
                    }
                    // Cumulative counts: the last one is the whole call's.
                    if let Some(output) = usage.output_tokens {
                        reply.usage.output_tokens = output;
                    }
                    if let Some(input) = usage.input_tokens {
                        reply.usage.input_tokens = input;
                    }
                }
                StreamEvent::MessageStop => {
                    stopped = true;
                    break;
                }
                StreamEvent::Error { error } => {
                    let fault = match error.kind.as_str() {
                        "overloaded_error" | "rate_limit_error" => Fault::Busy,
                        _ => Fault::Provider,
                    };
                    return Err(self
                        .endpoint
                        .error(fault, format!("{}: {}", error.kind, error.message)));
                }
                StreamEvent::Other => {}
            }
        }
        if !stopped {
            return Err(self
                .endpoint
                .error(Fault::Provider, "the stream ended before message_stop"));
        }
        for (_, (id, name, input)) in calls {
            let arguments = match input.trim().is_empty() {
                true => json!({}),
                false => serde_json::from_str(&input).map_err(|e| self.endpoint.malformed(e))?,
            };
            reply.tool_calls.push(ToolCall {
                id,
                name,
                arguments,
            });
        }
        Ok(reply)
    }
}

#[async_trait]
impl ChatModel for AnthropicChat {
    fn provider(&self) -> &str {
        self.endpoint.provider
    }

    fn model(&self) -> &str {
        &self.model
    }

    async fn chat(
        &self,
        request: &ChatRequest,
        deltas: Option<DeltaSink<'_>>,
    ) -> Result<ChatReply, ChatError> {
        match deltas {
            Some(deltas) => self.streamed(request, deltas).await,
            None => self.whole(request).await,
        }
    }
}

/// User and assistant messages as content blocks. Tool results become
/// `tool_result` blocks of a user message; consecutive messages of one role
/// share one message, as the API wants roles to alternate.
fn wire_messages(messages: &[ChatMessage]) -> Vec<Value> {
    let mut wire: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message.role {
            Role::System => continue,
            Role::User => (
                "user",
                vec![json!({"type": "text", "text": message.content})],
            ),
            Role::Tool => (
                "user",
                vec![json!({
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id.clone().unwrap_or_default(),
                    "content": message.content,
                })],
            ),
            Role::Assistant => {
                let mut blocks = Vec::new();
                if !message.content.is_empty() {
                    blocks.push(json!({"type": "text", "text": message.content}));
                }
                for call in &message.tool_calls {
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name,
                                       "input": call.arguments}));
                }
                ("assistant", blocks)
            }
        };
        match wire.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => wire.push((role, blocks)),
        }
    }
    wire.into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    model: String,
    content: Vec<Block>,
    stop_reason: Option<String>,
    #[serde(default)]
    usage: WireUsage,
}

#[derive(Default, Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent {
    MessageStart {
        message: StartedMessage,
    },
    ContentBlockStart {
        index: u32,
        content_block: Block,
    },
    ContentBlockDelta {
        index: u32,
        delta: BlockDelta,
    },
    MessageDelta {
        delta: MessageDelta,
        #[serde(default)]
        usage: WireUsage,
    },
    MessageStop,
    Error {
        error: WireError,
    },
    /// `ping`, `content_block_stop`, and event types added later.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct StartedMessage {
    #[serde(default)]
    model: String,
    #[serde(default)]
    usage: WireUsage,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDelta {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(rename = "type")]
    kind: String,
    message: String,
}
