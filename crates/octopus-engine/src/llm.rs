//! The agents' chat models: the `[llm]` settings, and building the model an
//! agent names (`octopus-llm`) with one shared HTTP client.

use std::sync::Arc;
use std::time::Duration;

use octopus_core::agent::Agent;
use octopus_core::chat::{ChatError, ChatModel, Fault};
use octopus_llm::{ClientOptions, Purpose};
use serde::{Deserialize, Serialize};

/// How Octopus calls the agents' models (`[llm]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmSettings {
    /// Deadline of one attempt: until the first byte of a streamed reply, or
    /// all of a whole one.
    pub timeout_secs: u64,
    /// A stream that sends nothing for this long has failed.
    pub read_timeout_secs: u64,
    /// Retries after a 429, a 5xx, a timeout or a refused connection.
    pub max_retries: u32,
    /// A provider's `retry-after` longer than this fails the call at once.
    pub max_retry_wait_secs: u64,
    /// Output tokens asked for when an agent sets no `max_output_tokens`
    /// (Anthropic requires a number).
    pub default_max_output_tokens: u32,
    /// Ask agents' models for episode summaries and key facts. Off, every
    /// summary is extractive (a deployment with no model to call).
    pub summarise_episodes: bool,
    /// The first wait before asking again for an episode summary no model
    /// could write (it doubles each time, up to an hour).
    pub summary_retry_secs: u64,
    /// URL prefixes an agent's `llm.base_url` must start with; empty allows
    /// any. With untrusted tenants, list your endpoints: a key from the
    /// server's environment goes wherever an agent's `base_url` points.
    pub allowed_base_urls: Vec<String>,
}

impl Default for LlmSettings {
    fn default() -> Self {
        let options = ClientOptions::default();
        Self {
            timeout_secs: options.retry.timeout.as_secs(),
            read_timeout_secs: options.read_timeout.as_secs(),
            max_retries: options.retry.max_retries,
            max_retry_wait_secs: options.retry.max_retry_wait.as_secs(),
            default_max_output_tokens: options.default_max_output_tokens,
            summarise_episodes: true,
            summary_retry_secs: 30,
            allowed_base_urls: Vec::new(),
        }
    }
}

impl LlmSettings {
    fn client_options(&self) -> ClientOptions {
        ClientOptions {
            retry: octopus_http::RetryPolicy {
                max_retries: self.max_retries,
                max_retry_wait: Duration::from_secs(self.max_retry_wait_secs),
                timeout: Duration::from_secs(self.timeout_secs.max(1)),
            },
            read_timeout: Duration::from_secs(self.read_timeout_secs.max(1)),
            connect_timeout: Duration::from_secs(10),
            default_max_output_tokens: self.default_max_output_tokens.max(1),
        }
    }
}

/// Reads an environment variable: the process's, or a test's.
pub type EnvReader = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Builds agents' chat models; the HTTP client is built once, on first use.
pub(crate) struct ChatModels {
    settings: LlmSettings,
    options: ClientOptions,
    client: std::sync::OnceLock<reqwest::Client>,
    env: EnvReader,
}

impl ChatModels {
    pub(crate) fn new(settings: LlmSettings, env: EnvReader) -> Self {
        Self {
            options: settings.client_options(),
            settings,
            client: std::sync::OnceLock::new(),
            env,
        }
    }

    /// Whether episode summaries are asked of the agents' models.
    pub(crate) fn summarise_episodes(&self) -> bool {
        self.settings.summarise_episodes
    }

    /// The first wait before asking a model again for a summary.
    pub(crate) fn summary_retry_base(&self) -> Duration {
        Duration::from_secs(self.settings.summary_retry_secs.max(1))
    }

    /// The model `agent` names for `purpose`.
    pub(crate) fn for_agent(
        &self,
        agent: &Agent,
        purpose: Purpose,
    ) -> Result<Arc<dyn ChatModel>, ChatError> {
        let provider = agent.llm.provider.as_str();
        if let Some(url) = &agent.llm.base_url
            && !self.settings.allowed_base_urls.is_empty()
            && !self
                .settings
                .allowed_base_urls
                .iter()
                .any(|p| url.starts_with(p))
        {
            return Err(ChatError::new(
                provider,
                Fault::Configuration,
                format!("llm.base_url {url} is not among the server's [llm] allowed_base_urls"),
            ));
        }
        let client = match self.client.get() {
            Some(client) => client,
            None => {
                let client = self
                    .options
                    .http_client()
                    .map_err(|e| ChatError::new(provider, Fault::Configuration, e))?;
                self.client.get_or_init(|| client)
            }
        };
        octopus_llm::for_agent(
            &agent.llm,
            purpose,
            &self.options,
            client,
            self.env.as_ref(),
        )
    }
}
