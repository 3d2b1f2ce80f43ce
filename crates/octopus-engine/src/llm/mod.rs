//! The agents' chat models: the `[llm]` settings, and building the model an
//! agent names (`octopus-llm`), sent where [`access`] allows with the key it
//! allows.

mod access;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use octopus_core::agent::Agent;
use octopus_core::chat::{ChatError, ChatModel, Fault};
use octopus_llm::{ClientOptions, Purpose};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub use access::OtherBaseUrls;
use access::{Destination, ModelAccess};

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
    /// The most of one reply read from a model: its text and tool calls,
    /// in bytes. Past it the turn fails as the provider's (502), having
    /// streamed no more than this. At most `[limits] max_message_bytes`: a
    /// longer reply could not be stored.
    pub max_reply_bytes: usize,
    /// Ask agents' models for episode summaries and key facts. Off, every
    /// summary is extractive (a deployment with no model to call).
    pub summarise_episodes: bool,
    /// The first wait before asking again for an episode summary no model
    /// could write (it doubles each time, up to an hour).
    pub summary_retry_secs: u64,
    /// Base URLs the operator vouches for, beside each provider's own
    /// endpoint: the server's keys are sent there, whatever address they
    /// resolve to. Compared by scheme, host and port exactly; a path given
    /// is a prefix, segment by segment.
    pub allowed_base_urls: Vec<String>,
    /// Which other base URLs an agent may name: `public` (any public
    /// address, never with the server's keys), `any` (internal addresses
    /// too), or `none`.
    pub other_base_urls: OtherBaseUrls,
    /// Keys bound to tenants: `"<tenant id>" = ["OCTOPUS_LLM_KEY_ACME"]`. A
    /// bound key is its tenants' alone, and goes wherever their agents
    /// point; an `OCTOPUS_LLM_KEY_*` bound to none is the server's.
    pub tenant_keys: BTreeMap<Uuid, Vec<String>>,
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
            max_reply_bytes: options.max_reply_bytes,
            summarise_episodes: true,
            summary_retry_secs: 30,
            allowed_base_urls: Vec::new(),
            other_base_urls: OtherBaseUrls::Public,
            tenant_keys: BTreeMap::new(),
        }
    }
}

impl LlmSettings {
    /// Refuses allow-list entries that are not URLs, and bindings of names
    /// that are not tenant key variables.
    pub fn validate(&self) -> Result<(), String> {
        access::validate(&self.allowed_base_urls, &self.tenant_keys)
    }

    fn client_options(&self) -> ClientOptions {
        ClientOptions {
            retry: octopus_provider_http::RetryPolicy {
                max_retries: self.max_retries,
                max_retry_wait: Duration::from_secs(self.max_retry_wait_secs),
                timeout: Duration::from_secs(self.timeout_secs.max(1)),
            },
            read_timeout: Duration::from_secs(self.read_timeout_secs.max(1)),
            connect_timeout: Duration::from_secs(10),
            default_max_output_tokens: self.default_max_output_tokens.max(1),
            max_reply_bytes: self.max_reply_bytes.max(1),
        }
    }
}

/// Reads an environment variable: the process's, or a test's.
pub type EnvReader = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// A digest of what decides whether an agent's model can be called: the
/// `[llm]` settings, and each key variable's value (the providers' own, and
/// every `OCTOPUS_LLM_KEY_*` of the process's environment). Keys enter it
/// hashed; the digest is all that is stored.
fn configuration_name(settings: &LlmSettings, env: &dyn Fn(&str) -> Option<String>) -> String {
    use sha2::{Digest, Sha256};
    let mut digest = Sha256::new();
    digest.update(serde_json::to_vec(settings).unwrap_or_default());
    let mut names: Vec<String> = [
        "OPENAI_API_KEY",
        "AZURE_OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
    ]
    .iter()
    .map(|name| (*name).to_owned())
    .collect();
    names.extend(
        std::env::vars_os()
            .filter_map(|(name, _)| name.into_string().ok())
            .filter(|name| name.starts_with("OCTOPUS_LLM_KEY_")),
    );
    names.sort();
    names.dedup();
    for name in names {
        digest.update(name.as_bytes());
        digest.update(Sha256::digest(env(&name).unwrap_or_default().as_bytes()));
    }
    digest
        .finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// How one of the two HTTP clients is built.
type BuildClient = fn(&ClientOptions) -> Result<reqwest::Client, String>;

/// Builds agents' chat models; each HTTP client is built once, on first use.
pub(crate) struct ChatModels {
    settings: LlmSettings,
    /// Names this configuration: the `[llm]` settings and the keys the
    /// environment holds (hashed), for jobs parked under it.
    configuration: String,
    options: ClientOptions,
    access: ModelAccess,
    /// For trusted destinations.
    client: std::sync::OnceLock<reqwest::Client>,
    /// For tenant-chosen URLs: public addresses only.
    public_only_client: std::sync::OnceLock<reqwest::Client>,
    env: EnvReader,
}

impl ChatModels {
    pub(crate) fn new(settings: LlmSettings, env: EnvReader) -> Self {
        Self {
            configuration: configuration_name(&settings, env.as_ref()),
            options: settings.client_options(),
            access: ModelAccess::new(
                &settings.allowed_base_urls,
                settings.other_base_urls,
                &settings.tenant_keys,
            ),
            settings,
            client: std::sync::OnceLock::new(),
            public_only_client: std::sync::OnceLock::new(),
            env,
        }
    }

    /// The name of this configuration (see the field).
    pub(crate) fn configuration(&self) -> &str {
        &self.configuration
    }

    /// Whether episode summaries are asked of the agents' models.
    pub(crate) fn summarise_episodes(&self) -> bool {
        self.settings.summarise_episodes
    }

    /// The first wait before asking a model again for a summary.
    pub(crate) fn summary_retry_base(&self) -> Duration {
        Duration::from_secs(self.settings.summary_retry_secs.max(1))
    }

    /// The model `agent` names for `purpose`, called where the access rules
    /// allow, with the key they allow.
    pub(crate) fn for_agent(
        &self,
        agent: &Agent,
        purpose: Purpose,
    ) -> Result<Arc<dyn ChatModel>, ChatError> {
        let provider = agent.llm.provider.as_str();
        let route = self.access.route(agent.tenant_id, &agent.llm)?;
        tracing::debug!(tenant_id = %agent.tenant_id, agent_id = %agent.id, ?route, "model call routed");
        let key = match &route.key_variable {
            Some(variable) => Some(
                (self.env)(variable)
                    .filter(|k| !k.trim().is_empty())
                    .ok_or_else(|| {
                        ChatError::new(
                            provider,
                            Fault::Configuration,
                            format!(
                                "no API key: set the environment variable {variable} where Octopus runs"
                            ),
                        )
                    })?,
            ),
            None => None,
        };
        let public_only = matches!(
            route.destination,
            Destination::TenantChosen { public_only: true }
        );
        let (cell, build): (_, BuildClient) = if public_only {
            (&self.public_only_client, |options| {
                octopus_provider_http::destinations::public_only_client(
                    options.connect_timeout,
                    options.read_timeout,
                )
            })
        } else {
            (&self.client, ClientOptions::http_client)
        };
        let client = match cell.get() {
            Some(client) => client,
            None => {
                let client = build(&self.options)
                    .map_err(|e| ChatError::new(provider, Fault::Configuration, e))?;
                cell.get_or_init(|| client)
            }
        };
        octopus_llm::for_agent(&agent.llm, purpose, &self.options, client, key)
    }
}
