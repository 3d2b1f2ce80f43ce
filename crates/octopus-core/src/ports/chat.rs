//! The chat-model ports: a conversation in, the model's reply out, streamed
//! or whole ([`ChatModel`]); and the models of agents, built where the
//! operator's rules allow ([`ChatModels`]). Implementations (OpenAI, Azure
//! OpenAI, Anthropic, Ollama) live in `octopus-llm`; the engine sees only
//! these traits.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::message::{ToolCall, Usage};
use crate::working_memory::ChatMessage;

/// A tool the model may call: its name, what it does, and the JSON Schema of
/// its arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A JSON Schema object; `{"type": "object"}` when absent.
    #[serde(default = "empty_object_schema")]
    #[schema(value_type = Object)]
    pub parameters: Value,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// How the agent asks its model to answer; fixed when a model is built from
/// the agent's settings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sampling {
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub max_output_tokens: Option<u32>,
}

/// One call of a chat model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatRequest {
    /// The conversation, system messages first; each client places them where
    /// its API wants them (Anthropic: the `system` field).
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
}

/// The model's answer to one call.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatReply {
    /// The reply's text; empty when the model only called tools.
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    /// Why the model stopped, in the provider's words (`stop`, `end_turn`,
    /// `tool_calls`, `length`…).
    pub finish_reason: Option<String>,
    /// The model that answered, as the provider names it.
    pub model: String,
}

/// Receives the reply's text as it is generated.
pub type DeltaSink<'a> = &'a (dyn Fn(&str) + Send + Sync);

/// A chat model behind some provider's API.
#[async_trait]
pub trait ChatModel: Send + Sync {
    /// The provider, as errors and logs name it (`openai`, `anthropic`…).
    fn provider(&self) -> &str;

    /// The model requests go to.
    fn model(&self) -> &str;

    /// Calls the model. With `deltas`, the reply is streamed from the provider
    /// and each piece of text is handed over as it arrives; the reply returned
    /// at the end is the whole of it, with the usage the provider reported.
    async fn chat(
        &self,
        request: &ChatRequest,
        deltas: Option<DeltaSink<'_>>,
    ) -> Result<ChatReply, ChatError>;
}

/// Which of an agent's models a call wants, and how it samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChatPurpose {
    /// The agent's `model`, for turns.
    Turn,
    /// The agent's `summary_model` (its `model` when it has none), for
    /// episode summaries and key facts.
    Summary,
    /// The summary model again, asked to split a question into the
    /// questions it holds, with a short answer.
    SubQuestions,
}

/// The agents' chat models: each built from an agent's `llm` settings, sent
/// where the operator's rules allow with the key they allow.
pub trait ChatModels: Send + Sync {
    /// The model `agent` names for `purpose`; a `Configuration` fault when
    /// the rules forbid where it points or no key is there for it.
    fn for_agent(
        &self,
        agent: &crate::agent::Agent,
        purpose: ChatPurpose,
    ) -> Result<Arc<dyn ChatModel>, ChatError>;

    /// Names what decides whether a model can be called at all (the
    /// operator's settings and keys, as a digest): work parked because no
    /// model could be called is tried again when this name changes.
    fn configuration(&self) -> &str;
}

/// Whose fault a failed call is, which decides what a caller can do about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// Octopus's configuration: no API key, a wrong base URL, deployment or
    /// model, a key the provider refuses. The operator must fix it.
    Configuration,
    /// The provider refused the request as invalid (a 400): the conversation
    /// or the agent's settings are not something this model takes.
    Request,
    /// The provider is rate-limiting or overloaded: try again later.
    Busy,
    /// The provider failed, timed out or answered something unreadable.
    Provider,
}

/// Why a chat call failed: the provider, whose fault, and what it said.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{provider} ({fault:?}): {message}")]
pub struct ChatError {
    pub provider: String,
    pub fault: Fault,
    pub message: String,
    /// When the provider said to come back.
    pub retry_after: Option<Duration>,
}

impl ChatError {
    pub fn new(provider: impl Into<String>, fault: Fault, message: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
            fault,
            message: message.into(),
            retry_after: None,
        }
    }
}

/// What a turn answers: the reply as stored, the tools it asks for, the
/// usage, and what memory it used.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct TurnReply {
    pub episode_id: crate::EpisodeId,
    /// Messages this request stored before the model was called: the user's
    /// message, or the tool results.
    pub stored_message_ids: Vec<crate::MessageId>,
    /// The model's reply, as stored (with `usage`).
    pub reply: crate::message::Message,
    /// Tools the model asks the caller to run; continue the turn with their
    /// results. Empty when the reply is final.
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub finish_reason: Option<String>,
    /// The provider and the model that answered.
    pub provider: String,
    pub model: String,
    /// What memory the turn used: retrieved items with scores, what was
    /// pruned, tokens per block.
    pub trace: crate::working_memory::ContextTrace,
}
