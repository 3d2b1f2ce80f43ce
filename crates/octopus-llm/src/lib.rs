//! Chat models behind the [`ChatModel`] port: thin clients of the three wire
//! formats that cover the providers Octopus supports.
//!
//! - [`openai`]: OpenAI chat completions, also Azure OpenAI (deployment URL,
//!   `api-version`, `api-key` header) and any OpenAI-compatible server;
//! - [`anthropic`]: Anthropic Messages;
//! - [`ollama`]: Ollama's `/api/chat`.
//!
//! Each sends a request whole or streamed (server-sent events; Ollama's
//! newline-delimited JSON), with tools, and reads the provider's usage.
//! Requests go through [`octopus_provider_http::send`], the retries the embedders use.
//! [`for_agent`] builds the model an agent's settings name, with the API key
//! its caller chose; keys are never stored or echoed.
//! [`AgentModels`] is the engine's `ChatModels` port: it decides, under the
//! operator's `[llm]` settings ([`LlmSettings`]), where each agent's calls
//! may go and which key goes with them (`access`), and builds the model.

#![forbid(unsafe_code)]

mod access;
mod agent_models;
pub mod anthropic;
mod lines;
pub mod ollama;
pub mod openai;

use std::sync::Arc;
use std::time::Duration;

pub use agent_models::{AgentModels, EnvReader, SettingsError, check_settings};
use octopus_core::agent::{LlmConfig, LlmProvider};
use octopus_core::chat::{ChatError, ChatModel, ChatPurpose, Fault, Sampling};

/// How every chat client talks to its provider.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// Retries on 429, 5xx and timeouts, and the deadline of one attempt
    /// (until the first byte of a streamed answer; all of a whole one).
    pub retry: octopus_provider_http::RetryPolicy,
    /// A stream that sends nothing for this long has failed.
    pub read_timeout: Duration,
    pub connect_timeout: Duration,
    /// Output tokens asked for when the agent sets none; Anthropic requires a
    /// number.
    pub default_max_output_tokens: u32,
    /// The most of one reply read: its text and its tool calls' names and
    /// arguments, counted as they arrive. Past it the call fails as the
    /// provider's fault, and a stream has passed on no more than this.
    pub max_reply_bytes: usize,
}

/// The `[llm]` defaults.
impl Default for ClientOptions {
    fn default() -> Self {
        (&octopus_core::llm_settings::LlmSettings::default()).into()
    }
}

impl ClientOptions {
    /// The HTTP client these options describe; share one for all models.
    pub fn http_client(&self) -> Result<reqwest::Client, octopus_provider_http::ClientError> {
        octopus_provider_http::client(self.connect_timeout, self.read_timeout)
    }
}

/// The environment variable holding the operator's key for `provider`, read
/// when an agent names none.
pub fn default_key_variable(provider: LlmProvider) -> Option<&'static str> {
    match provider {
        LlmProvider::Openai => Some("OPENAI_API_KEY"),
        LlmProvider::AzureOpenai => Some("AZURE_OPENAI_API_KEY"),
        LlmProvider::Anthropic => Some("ANTHROPIC_API_KEY"),
        LlmProvider::Ollama => None,
    }
}

/// The provider's own endpoint, used when an agent sets no `base_url`.
/// Azure OpenAI has none: each resource has its own host.
pub fn default_base_url(provider: LlmProvider) -> Option<&'static str> {
    match provider {
        LlmProvider::Openai => Some(openai::DEFAULT_BASE_URL),
        LlmProvider::AzureOpenai => None,
        LlmProvider::Anthropic => Some(anthropic::DEFAULT_BASE_URL),
        LlmProvider::Ollama => Some(ollama::DEFAULT_BASE_URL),
    }
}

/// Output tokens a summary may take: about 200 of summary, the key facts,
/// and the JSON around them.
pub const SUMMARY_MAX_OUTPUT_TOKENS: u32 = 800;
/// Output tokens a recall's sub-questions may take: three short questions
/// and the JSON around them.
pub const SUB_QUESTIONS_MAX_OUTPUT_TOKENS: u32 = 160;

/// The chat model an agent's settings name, sending `key` (chosen by the
/// caller, who decides which key may go where) in the provider's header.
/// An Azure agent without `base_url` or `deployment` is a
/// [`Fault::Configuration`] error naming what to set.
pub fn for_agent(
    llm: &LlmConfig,
    purpose: ChatPurpose,
    options: &ClientOptions,
    client: &reqwest::Client,
    key: Option<String>,
) -> Result<Arc<dyn ChatModel>, ChatError> {
    let model = match purpose {
        ChatPurpose::Summary | ChatPurpose::SubQuestions => {
            llm.summary_model.as_deref().unwrap_or(&llm.model)
        }
        ChatPurpose::Turn => &llm.model,
    }
    .to_owned();
    let provider = llm.provider.as_str();
    let sampling = match purpose {
        ChatPurpose::Turn => Sampling {
            temperature: llm.temperature,
            top_p: llm.top_p,
            max_output_tokens: llm.max_output_tokens,
        },
        // A summary is short and factual, whatever the agent's style.
        ChatPurpose::Summary => Sampling {
            temperature: None,
            top_p: None,
            max_output_tokens: Some(SUMMARY_MAX_OUTPUT_TOKENS),
        },
        ChatPurpose::SubQuestions => Sampling {
            temperature: None,
            top_p: None,
            max_output_tokens: Some(SUB_QUESTIONS_MAX_OUTPUT_TOKENS),
        },
    };
    let endpoint = |url: String, headers: Vec<(&'static str, String)>| Endpoint {
        provider: llm.provider.as_str(),
        url,
        headers,
        client: client.clone(),
        options: options.clone(),
    };
    let base = |default: &str| {
        llm.base_url
            .as_deref()
            .unwrap_or(default)
            .trim_end_matches('/')
            .to_owned()
    };
    Ok(match llm.provider {
        LlmProvider::Openai => {
            let url = format!("{}/chat/completions", base(openai::DEFAULT_BASE_URL));
            let headers = key
                .map(|k| ("authorization", format!("Bearer {k}")))
                .into_iter()
                .collect();
            Arc::new(openai::OpenAiChat::new(
                endpoint(url, headers),
                Some(model),
                sampling,
                openai::max_tokens_field(llm.provider, llm.base_url.as_deref()),
            ))
        }
        LlmProvider::AzureOpenai => {
            let missing = |field: &str| {
                ChatError::new(
                    provider,
                    Fault::Configuration,
                    format!("an Azure OpenAI agent needs llm.{field}"),
                )
            };
            let base_url = llm.base_url.as_deref().ok_or_else(|| missing("base_url"))?;
            let deployment = llm
                .deployment
                .as_deref()
                .ok_or_else(|| missing("deployment"))?;
            let version = llm
                .api_version
                .as_deref()
                .unwrap_or(openai::AZURE_API_VERSION);
            let url = format!(
                "{}/openai/deployments/{deployment}/chat/completions?api-version={version}",
                base_url.trim_end_matches('/')
            );
            let headers = key.map(|k| ("api-key", k)).into_iter().collect();
            Arc::new(openai::OpenAiChat::new(
                endpoint(url, headers),
                None,
                sampling,
                openai::max_tokens_field(llm.provider, Some(base_url)),
            ))
        }
        LlmProvider::Anthropic => {
            let url = format!("{}/v1/messages", base(anthropic::DEFAULT_BASE_URL));
            let mut headers = vec![("anthropic-version", anthropic::API_VERSION.to_owned())];
            headers.extend(key.map(|k| ("x-api-key", k)));
            Arc::new(anthropic::AnthropicChat::new(
                endpoint(url, headers),
                model,
                sampling,
            ))
        }
        LlmProvider::Ollama => {
            let url = format!("{}/api/chat", base(ollama::DEFAULT_BASE_URL));
            Arc::new(ollama::OllamaChat::new(
                endpoint(url, Vec::new()),
                model,
                sampling,
            ))
        }
    })
}

/// Where one provider's requests go, and how.
#[derive(Clone)]
pub(crate) struct Endpoint {
    pub provider: &'static str,
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub client: reqwest::Client,
    pub options: ClientOptions,
}

impl Endpoint {
    /// POSTs `body` with retries; the successful response, body unread.
    pub(crate) async fn post(
        &self,
        body: &serde_json::Value,
        error_message: fn(&str) -> Option<String>,
    ) -> Result<reqwest::Response, ChatError> {
        let build = || {
            let mut request = self.client.post(&self.url).json(body);
            for (name, value) in &self.headers {
                request = request.header(*name, value);
            }
            request
        };
        octopus_provider_http::send(self.provider, &self.options.retry, build, error_message)
            .await
            .map_err(|failure| self.failed(failure))
    }

    /// Reads a whole response and parses it. The body may be larger than
    /// the reply it carries (JSON's quoting, the fields around the text), but
    /// not without bound.
    pub(crate) async fn read<T: serde::de::DeserializeOwned>(
        &self,
        response: reqwest::Response,
    ) -> Result<T, ChatError> {
        let limit = self.limits().whole_body;
        let bytes = octopus_provider_http::read_at_most(response, limit)
            .await
            .map_err(|e| self.error(Fault::Provider, format!("reading the response failed: {e}")))?
            .ok_or_else(|| self.too_long())?;
        serde_json::from_slice(&bytes).map_err(|e| self.malformed(e))
    }

    /// What one reply from this endpoint may take.
    pub(crate) fn limits(&self) -> ReplyLimits {
        ReplyLimits::new(self.options.max_reply_bytes)
    }

    /// A budget for the reply about to be read.
    pub(crate) fn budget(&self) -> ReplyBudget {
        ReplyBudget {
            left: self.options.max_reply_bytes,
            error: self.too_long(),
        }
    }

    fn too_long(&self) -> ChatError {
        self.error(
            Fault::Provider,
            format!(
                "the reply is longer than the {} bytes Octopus reads of one ([llm] max_reply_bytes)",
                self.options.max_reply_bytes
            ),
        )
    }

    pub(crate) fn error(&self, fault: Fault, message: impl Into<String>) -> ChatError {
        ChatError::new(self.provider, fault, message)
    }

    pub(crate) fn malformed(&self, error: impl std::fmt::Display) -> ChatError {
        self.error(
            Fault::Provider,
            format!("answered with a body Octopus cannot read: {error}"),
        )
    }

    fn failed(&self, failure: octopus_provider_http::Failure) -> ChatError {
        let fault = match failure.status {
            _ if failure.destination_refused => Fault::Configuration,
            Some(401 | 403 | 404) => Fault::Configuration,
            Some(429 | 503 | 529) => Fault::Busy,
            Some(status) if (400..500).contains(&status) => Fault::Request,
            _ => Fault::Provider,
        };
        ChatError {
            retry_after: failure.retry_after,
            ..ChatError::new(self.provider, fault, failure.message)
        }
    }
}

/// How much of a provider's answer is read, derived from the most reply
/// text one may carry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReplyLimits {
    /// A whole (not streamed) response body: twice the reply, for JSON's
    /// escapes, and room for the fields around it.
    pub whole_body: usize,
    /// One line of a stream: an event carries a piece of the reply.
    pub stream_line: usize,
    /// All of a stream: its framing repeats for every piece (about fifty
    /// times the text in OpenAI's chunks), so a stream may be much larger
    /// than its reply, but it still ends.
    pub stream_total: usize,
}

impl ReplyLimits {
    const ROOM: usize = 64 * 1024;

    fn new(max_reply_bytes: usize) -> Self {
        Self {
            whole_body: max_reply_bytes.saturating_mul(2).saturating_add(Self::ROOM),
            stream_line: max_reply_bytes.saturating_mul(2).saturating_add(Self::ROOM),
            stream_total: max_reply_bytes
                .saturating_mul(64)
                .saturating_add(Self::ROOM),
        }
    }
}

/// What is left of one reply's bytes ([`ClientOptions::max_reply_bytes`]).
/// Each piece of text or tool call is spent before it is kept or streamed
/// on, so a reply past the bound is never passed on whole.
pub(crate) struct ReplyBudget {
    left: usize,
    error: ChatError,
}

impl ReplyBudget {
    /// Takes `piece` out of the budget; the provider's fault when it does
    /// not fit.
    pub(crate) fn spend(&mut self, piece: &str) -> Result<(), ChatError> {
        match self.left.checked_sub(piece.len()) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(self.error.clone()),
        }
    }

    /// Spends a whole reply read at once: its text, and each tool call's
    /// name and arguments.
    pub(crate) fn spend_reply(
        &mut self,
        reply: &octopus_core::chat::ChatReply,
    ) -> Result<(), ChatError> {
        self.spend(&reply.text)?;
        for call in &reply.tool_calls {
            self.spend(&call.name)?;
            match &call.arguments {
                serde_json::Value::String(text) => self.spend(text)?,
                other => self.spend(&other.to_string())?,
            }
        }
        Ok(())
    }
}

/// `{"error": {"message": …}}` (OpenAI, Azure OpenAI, Anthropic) or
/// `{"error": "…"}` (Ollama).
pub(crate) fn error_message(body: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    let error = value.get("error")?;
    error
        .get("message")
        .and_then(|m| m.as_str())
        .or_else(|| error.as_str())
        .map(str::to_owned)
}
