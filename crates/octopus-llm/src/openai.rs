//! OpenAI chat completions (`POST …/chat/completions`), as OpenAI, Azure
//! OpenAI and compatible servers speak it. Reference:
//! <https://platform.openai.com/docs/api-reference/chat/create> and its
//! streaming chunk object; Azure: <https://learn.microsoft.com/azure/ai-foundry/openai/reference>.

use std::collections::BTreeMap;

use async_trait::async_trait;
use octopus_core::agent::LlmProvider;
use octopus_core::chat::{
    ChatError, ChatModel, ChatReply, ChatRequest, DeltaSink, Fault, Sampling, ToolCall, ToolSpec,
    Usage,
};
use octopus_core::message::Role;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::Endpoint;
use crate::lines::Events;

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The Azure OpenAI data-plane API version used when the agent names none.
pub const AZURE_API_VERSION: &str = "2024-10-21";

/// OpenAI itself takes `max_completion_tokens` (and its reasoning models only
/// that); Azure OpenAI and compatible servers take `max_tokens`.
pub fn max_tokens_field(provider: LlmProvider, base_url: Option<&str>) -> &'static str {
    let official = base_url.is_none_or(|url| url.starts_with("https://api.openai.com"));
    match provider == LlmProvider::Openai && official {
        true => "max_completion_tokens",
        false => "max_tokens",
    }
}

pub struct OpenAiChat {
    endpoint: Endpoint,
    /// Sent as `model`; `None` for Azure, where the deployment names it.
    model: Option<String>,
    sampling: Sampling,
    /// The field the output limit goes in ([`max_tokens_field`]).
    max_tokens_field: &'static str,
    name: String,
}

impl OpenAiChat {
    pub(crate) fn new(
        endpoint: Endpoint,
        model: Option<String>,
        sampling: Sampling,
        max_tokens_field: &'static str,
    ) -> Self {
        Self {
            name: model.clone().unwrap_or_else(|| "deployment".into()),
            endpoint,
            model,
            sampling,
            max_tokens_field,
        }
    }

    /// The request body, in the API's shape.
    pub fn body(&self, request: &ChatRequest, stream: bool) -> Value {
        let messages: Vec<Value> = request.messages.iter().map(wire_message).collect();
        let mut body = json!({"messages": messages});
        if let Some(model) = &self.model {
            body["model"] = json!(model);
        }
        if !request.tools.is_empty() {
            body["tools"] = function_tools(&request.tools);
        }
        let sampling = &self.sampling;
        if let Some(t) = sampling.temperature {
            body["temperature"] = json!(t);
        }
        if let Some(p) = sampling.top_p {
            body["top_p"] = json!(p);
        }
        if let Some(max) = sampling.max_output_tokens {
            body[self.max_tokens_field] = json!(max);
        }
        if stream {
            body["stream"] = json!(true);
            // Without this, a stream reports no usage at all.
            body["stream_options"] = json!({"include_usage": true});
        }
        body
    }

    async fn whole(&self, request: &ChatRequest) -> Result<ChatReply, ChatError> {
        let response = self
            .endpoint
            .post(&self.body(request, false), crate::error_message)
            .await?;
        let completion: Completion = self.endpoint.read(response).await?;
        let choice = completion
            .choices
            .into_iter()
            .next()
            .ok_or_else(|| self.endpoint.malformed("no choices"))?;
        let tool_calls = choice
            .message
            .tool_calls
            .into_iter()
            .map(|call| tool_call(call.id, call.function.name, &call.function.arguments))
            .collect();
        let reply = ChatReply {
            text: choice.message.content.unwrap_or_default(),
            tool_calls,
            usage: completion.usage.map(Into::into).unwrap_or_default(),
            finish_reason: choice.finish_reason,
            model: completion.model,
        };
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
        // Tool calls arrive in pieces, keyed by their index.
        let mut calls: BTreeMap<u32, (String, String, String)> = BTreeMap::new();
        let mut finished = false;
        while let Some(event) = events.next().await? {
            if event.data == "[DONE]" {
                finished = true;
                break;
            }
            let chunk: Chunk =
                serde_json::from_str(&event.data).map_err(|e| self.endpoint.malformed(e))?;
            if let Some(error) = chunk.error {
                return Err(self.endpoint.error(Fault::Provider, error.message));
            }
            if let Some(model) = chunk.model {
                reply.model = model;
            }
            if let Some(usage) = chunk.usage {
                reply.usage = usage.into();
            }
            for choice in chunk.choices {
                if let Some(text) = choice.delta.content.filter(|t| !t.is_empty()) {
                    budget.spend(&text)?;
                    deltas(&text);
                    reply.text.push_str(&text);
                }
                for piece in choice.delta.tool_calls {
                    let call = calls.entry(piece.index).or_default();
                    if let Some(id) = piece.id {
                        call.0 = id;
                    }
                    if let Some(function) = piece.function {
                        let name = function.name.as_deref().unwrap_or("");
                        let arguments = function.arguments.as_deref().unwrap_or("");
                        budget.spend(name)?;
                        budget.spend(arguments)?;
                        call.1.push_str(name);
                        call.2.push_str(arguments);
                    }
                }
                if choice.finish_reason.is_some() {
                    reply.finish_reason = choice.finish_reason;
                }
            }
        }
        if !finished {
            return Err(self
                .endpoint
                .error(Fault::Provider, "the stream ended before [DONE]"));
        }
        reply.tool_calls = calls
            .into_values()
            .map(|(id, name, arguments)| tool_call(id, name, &Value::String(arguments)))
            .collect();
        Ok(reply)
    }
}

#[async_trait]
impl ChatModel for OpenAiChat {
    fn provider(&self) -> &str {
        self.endpoint.provider
    }

    fn model(&self) -> &str {
        &self.name
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

/// Tools as chat completions take them (Ollama takes the same):
/// `{"type": "function", "function": {"name", "description", "parameters"}}`.
pub(crate) fn function_tools(tools: &[ToolSpec]) -> Value {
    tools
        .iter()
        .map(|tool| {
            let mut function = json!({"name": tool.name, "parameters": tool.parameters});
            if let Some(description) = &tool.description {
                function["description"] = json!(description);
            }
            json!({"type": "function", "function": function})
        })
        .collect()
}

fn wire_message(message: &octopus_core::working_memory::ChatMessage) -> Value {
    let mut wire = json!({"role": message.role.as_str(), "content": message.content});
    if let Some(name) = &message.name
        && message.role != Role::Tool
    {
        wire["name"] = json!(name);
    }
    if !message.tool_calls.is_empty() {
        if message.content.is_empty() {
            wire["content"] = Value::Null;
        }
        wire["tool_calls"] = message
            .tool_calls
            .iter()
            .map(|call| {
                json!({"id": call.id, "type": "function",
                       "function": {"name": call.name, "arguments": call.arguments.to_string()}})
            })
            .collect();
    }
    if let Some(id) = &message.tool_call_id {
        wire["tool_call_id"] = json!(id);
    }
    wire
}

/// OpenAI sends arguments as a JSON-encoded string; keep the JSON itself, or
/// the string when the model wrote something that is not JSON.
fn tool_call(id: String, name: String, arguments: &Value) -> ToolCall {
    let arguments = match arguments {
        Value::String(text) if text.trim().is_empty() => json!({}),
        Value::String(text) => serde_json::from_str(text).unwrap_or_else(|_| arguments.clone()),
        other => other.clone(),
    };
    ToolCall {
        id,
        name,
        arguments,
    }
}

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    model: String,
    choices: Vec<Choice>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct Choice {
    message: WireReply,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireReply {
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<WireToolCall>,
}

#[derive(Deserialize)]
struct WireToolCall {
    id: String,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Deserialize)]
struct WireUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
}

impl From<WireUsage> for Usage {
    fn from(usage: WireUsage) -> Self {
        Usage {
            input_tokens: usage.prompt_tokens,
            output_tokens: usage.completion_tokens,
        }
    }
}

#[derive(Deserialize)]
struct Chunk {
    model: Option<String>,
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    usage: Option<WireUsage>,
    error: Option<StreamError>,
}

#[derive(Deserialize)]
struct StreamError {
    message: String,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    delta: Delta,
    finish_reason: Option<String>,
}

#[derive(Default, Deserialize)]
struct Delta {
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCallPiece>,
}

#[derive(Deserialize)]
struct ToolCallPiece {
    index: u32,
    id: Option<String>,
    function: Option<FunctionPiece>,
}

#[derive(Deserialize)]
struct FunctionPiece {
    name: Option<String>,
    arguments: Option<String>,
}
