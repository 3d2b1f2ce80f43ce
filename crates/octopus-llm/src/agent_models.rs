//! The agents' chat models under the operator's `[llm]` settings: the model
//! an agent names, sent where [`crate::access`] allows with the key it
//! allows.

use std::sync::Arc;
use std::time::Duration;

use octopus_core::agent::Agent;
use octopus_core::chat::{ChatError, ChatModel, ChatModels, ChatPurpose, Fault};
use octopus_core::llm_settings::LlmSettings;

use crate::ClientOptions;
use crate::access::{Destination, ModelAccess};
use octopus_provider_http::ClientError;

/// `[llm]` settings that cannot work: an allow-list entry that is not a
/// URL, a binding of a name that is not a tenant key variable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("[llm] {0}")]
pub struct SettingsError(pub String);

/// Refuses `[llm]` settings that cannot work (see [`SettingsError`]).
pub fn check_settings(settings: &LlmSettings) -> Result<(), SettingsError> {
    crate::access::validate(&settings.allowed_base_urls, &settings.tenant_keys)
}

impl From<&LlmSettings> for ClientOptions {
    fn from(settings: &LlmSettings) -> Self {
        ClientOptions {
            retry: octopus_provider_http::RetryPolicy {
                max_retries: settings.max_retries,
                max_retry_wait: Duration::from_secs(settings.max_retry_wait_secs),
                timeout: Duration::from_secs(settings.timeout_secs.max(1)),
            },
            read_timeout: Duration::from_secs(settings.read_timeout_secs.max(1)),
            connect_timeout: Duration::from_secs(10),
            default_max_output_tokens: settings.default_max_output_tokens.max(1),
            max_reply_bytes: settings.max_reply_bytes.max(1),
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
type BuildClient = fn(&ClientOptions) -> Result<reqwest::Client, ClientError>;

/// Builds agents' chat models; each HTTP client is built once, on first use.
pub struct AgentModels {
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

impl AgentModels {
    /// Models under `settings`, reading API keys through `env`. Settings
    /// [`check_settings`] refuses are taken as far as they parse: check
    /// them first.
    pub fn new(settings: &LlmSettings, env: EnvReader) -> Self {
        Self {
            configuration: configuration_name(settings, env.as_ref()),
            options: settings.into(),
            access: ModelAccess::new(
                &settings.allowed_base_urls,
                settings.other_base_urls,
                &settings.tenant_keys,
            ),
            client: std::sync::OnceLock::new(),
            public_only_client: std::sync::OnceLock::new(),
            env,
        }
    }
}

impl ChatModels for AgentModels {
    fn configuration(&self) -> &str {
        &self.configuration
    }

    /// The model `agent` names for `purpose`, called where the access rules
    /// allow, with the key they allow.
    fn for_agent(
        &self,
        agent: &Agent,
        purpose: ChatPurpose,
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
                    .map_err(|e| ChatError::new(provider, Fault::Configuration, e.to_string()))?;
                cell.get_or_init(|| client)
            }
        };
        crate::for_agent(&agent.llm, purpose, &self.options, client, key)
    }
}
