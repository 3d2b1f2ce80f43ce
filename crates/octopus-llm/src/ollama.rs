//! Ollama's chat API (`POST /api/chat`). Reference:
//! <https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion>.
//!
//! A stream is newline-delimited JSON, each line a partial message, the last
//! with `done: true` and the counts (`prompt_eval_count`, `eval_count`).
//! Sampling settings go in `options` (`num_predict` is the output limit).
//! Tool calls carry no id: Octopus numbers them within the reply.

use async_trait::async_trait;
use octopus_core::chat::{
    ChatError, ChatModel, ChatReply, ChatRequest, DeltaSink, Sampling, ToolCall, Usage,
};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::lines::Lines;
use crate::{Endpoint, ReplyBudget};

pub const DEFAULT_BASE_URL: &str = "http://localhost:11434";

pub struct OllamaChat {
    endpoint: Endpoint,
    model: String,
    sampling: Sampling,
}

impl OllamaChat {
    pub(crate) fn new(endpoint: Endpoint, model: String, sampling: Sampling) -> Self {
        Self {
            endpoint,
            model,
            sampling,
        }
    }

    /// The request body, in the API's shape.
    pub fn body(&self, request: &ChatRequest, stream: bool) -> Value {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|message| {
                let mut wire = json!({"role": message.role.as_str(), "content": message.content});
                if !message.tool_calls.is_empty() {
                    wire["tool_calls"] = message
                        .tool_calls
                        .iter()
                        .map(|c| json!({"function": {"name": c.name, "arguments": c.arguments}}))
                        .collect();
                }
                if message.role == octopus_core::message::Role::Tool
                    && let Some(name) = &message.name
                {
                    wire["tool_name"] = json!(name);
                }
                wire
            })
            .collect();
        let mut body = json!({"model": self.model, "messages": messages, "stream": stream});
        if !request.tools.is_empty() {
            body["tools"] = crate::openai::function_tools(&request.tools);
        }
        let mut options = Map::new();
        if let Some(t) = self.sampling.temperature {
            options.insert("temperature".into(), json!(t));
        }
        if let Some(p) = self.sampling.top_p {
            options.insert("top_p".into(), json!(p));
        }
        if let Some(max) = self.sampling.max_output_tokens {
            options.insert("num_predict".into(), json!(max));
        }
        if !options.is_empty() {
            body["options"] = Value::Object(options);
        }
        body
    }

    async fn run(
        &self,
        request: &ChatRequest,
        deltas: Option<DeltaSink<'_>>,
    ) -> Result<ChatReply, ChatError> {
        let stream = deltas.is_some();
        let response = self
            .endpoint
            .post(&self.body(request, stream), crate::error_message)
            .await?;
        let mut reply = ChatReply::default();
        let mut budget = self.endpoint.budget();
        if !stream {
            let part: Part = self.endpoint.read(response).await?;
            self.take(part, &mut reply, &mut budget, None)?;
            return Ok(reply);
        }
        let mut lines = Lines::new(&self.endpoint, response);
        while let Some(line) = lines.next().await? {
            if line.trim().is_empty() {
                continue;
            }
            let part: Part = serde_json::from_str(&line).map_err(|e| self.endpoint.malformed(e))?;
            if let Some(error) = part.error {
                return Err(self
                    .endpoint
                    .error(octopus_core::chat::Fault::Provider, error));
            }
            if self.take(part, &mut reply, &mut budget, deltas)? {
                return Ok(reply);
            }
        }
        Err(self.endpoint.error(
            octopus_core::chat::Fault::Provider,
            "the stream ended before done",
        ))
    }

    /// Adds one part of the answer to `reply`, spending its text and calls
    /// from `budget`; true when it was the last.
    fn take(
        &self,
        part: Part,
        reply: &mut ChatReply,
        budget: &mut ReplyBudget,
        deltas: Option<DeltaSink<'_>>,
    ) -> Result<bool, ChatError> {
        if let Some(model) = part.model {
            reply.model = model;
        }
        if let Some(message) = part.message {
            budget.spend(&message.content)?;
            for call in &message.tool_calls {
                budget.spend(&call.function.name)?;
                budget.spend(&call.function.arguments.to_string())?;
            }
            if !message.content.is_empty() {
                if let Some(deltas) = deltas {
                    deltas(&message.content);
                }
                reply.text.push_str(&message.content);
            }
            for call in message.tool_calls {
                let number = reply.tool_calls.len();
                reply.tool_calls.push(ToolCall {
                    id: call.id.unwrap_or_else(|| format!("call_{number}")),
                    name: call.function.name,
                    arguments: call.function.arguments,
                });
            }
        }
        if part.done {
            reply.finish_reason = part.done_reason;
            reply.usage = Usage {
                input_tokens: part.prompt_eval_count.unwrap_or(0),
                output_tokens: part.eval_count.unwrap_or(0),
            };
        }
        Ok(part.done)
    }
}

#[async_trait]
impl ChatModel for OllamaChat {
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
        self.run(request, deltas).await
    }
}

#[derive(Deserialize)]
struct Part {
    model: Option<String>,
    message: Option<PartMessage>,
    #[serde(default)]
    done: bool,
    done_reason: Option<String>,
    prompt_eval_count: Option<u64>,
    eval_count: Option<u64>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct PartMessage {
    #[serde(default)]
    content: String,
    #[serde(default)]
    tool_calls: Vec<WireToolCall>,
}

#[derive(Deserialize)]
struct WireToolCall {
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Value,
}
