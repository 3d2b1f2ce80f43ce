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
//! Requests go through [`octopus_http::send`], the retries the embedders use.
//! [`for_agent`] builds the model an agent's settings name, with its API key
//! read from the environment: keys are never stored or echoed.

pub mod anthropic;
mod lines;
pub mod ollama;
pub mod openai;

use std::sync::Arc;
use std::time::Duration;

use octopus_core::agent::{LlmConfig, LlmProvider};
use octopus_core::chat::{ChatError, ChatModel, Fault, Sampling};

/// How every chat client talks to its provider.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// Retries on 429, 5xx and timeouts, and the deadline of one attempt
    /// (until the first byte of a streamed answer; all of a whole one).
    pub retry: octopus_http::RetryPolicy,
    /// A stream that sends nothing for this long has failed.
    pub read_timeout: Duration,
    pub connect_timeout: Duration,
    /// Output tokens asked for when the agent sets none; Anthropic requires a
    /// number.
    pub default_max_output_tokens: u32,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            retry: octopus_http::RetryPolicy {
                max_retries: 2,
                max_retry_wait: Duration::from_secs(20),
                timeout: Duration::from_secs(120),
            },
            read_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            default_max_output_tokens: 4096,
        }
    }
}

impl ClientOptions {
    /// The HTTP client these options describe; share one for all models.
    pub fn http_client(&self) -> Result<reqwest::Client, String> {
        octopus_http::client(self.connect_timeout, self.read_timeout)
    }
}

/// The environment variable an agent's key is read from when it names none.
pub fn default_key_variable(provider: LlmProvider) -> Option<&'static str> {
    match provider {
        LlmProvider::Openai => Some("OPENAI_API_KEY"),
        LlmProvider::AzureOpenai => Some("AZURE_OPENAI_API_KEY"),
        LlmProvider::Anthropic => Some("ANTHROPIC_API_KEY"),
        LlmProvider::Ollama => None,
    }
}

/// Output tokens a summary may take: about 200 of summary, the key facts,
/// and the JSON around them.
pub const SUMMARY_MAX_OUTPUT_TOKENS: u32 = 800;

/// Which of the agent's models to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// The agent's `model`, for turns.
    Turn,
    /// The agent's `summary_model` (its `model` when it has none).
    Summary,
}

/// The chat model an agent's settings name. `env` reads an environment
/// variable (the process's, or a test's). An Azure agent without `base_url`
/// or `deployment`, or a provider whose key variable is unset, is a
/// [`Fault::Configuration`] error naming what to set.
pub fn for_agent(
    llm: &LlmConfig,
    purpose: Purpose,
    options: &ClientOptions,
    client: &reqwest::Client,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn ChatModel>, ChatError> {
    let model = match purpose {
        Purpose::Summary => llm.summary_model.as_deref().unwrap_or(&llm.model),
        Purpose::Turn => &llm.model,
    }
    .to_owned();
    let provider = llm.provider.as_str();
    let key = match llm
        .api_key_env
        .as_deref()
        .or(default_key_variable(llm.provider))
    {
        Some(variable) => Some(env(variable).filter(|k| !k.trim().is_empty()).ok_or_else(
            || {
                ChatError::new(
                    provider,
                    Fault::Configuration,
                    format!(
                        "no API key: set the environment variable {variable} where Octopus runs"
                    ),
                )
            },
        )?),
        None => None,
    };
    let sampling = match purpose {
        Purpose::Turn => Sampling {
            temperature: llm.temperature,
            top_p: llm.top_p,
            max_output_tokens: llm.max_output_tokens,
        },
        // A summary is short and factual, whatever the agent's style.
        Purpose::Summary => Sampling {
            temperature: None,
            top_p: None,
            max_output_tokens: Some(SUMMARY_MAX_OUTPUT_TOKENS),
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
        octopus_http::send(self.provider, &self.options.retry, build, error_message)
            .await
            .map_err(|failure| self.failed(failure))
    }

    /// Reads a whole response and parses it.
    pub(crate) async fn read<T: serde::de::DeserializeOwned>(
        &self,
        response: reqwest::Response,
    ) -> Result<T, ChatError> {
        let bytes = response.bytes().await.map_err(|e| {
            self.error(Fault::Provider, format!("reading the response failed: {e}"))
        })?;
        serde_json::from_slice(&bytes).map_err(|e| self.malformed(e))
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

    fn failed(&self, failure: octopus_http::Failure) -> ChatError {
        let fault = match failure.status {
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
