//! Agents: a system prompt, an LLM, and the settings of its memory, each a
//! typed structure rather than free-form JSON.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::tenant::validate_name;
use crate::{AgentId, Error, Result, TenantId};

/// Longest system prompt accepted, in bytes.
pub const MAX_SYSTEM_PROMPT_CHARS: usize = 256 * 1024;
/// Longest idle timeout of an episode: ten years.
pub const MAX_IDLE_TIMEOUT_SECS: u64 = 10 * 365 * 86_400;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Agent {
    pub id: AgentId,
    #[serde(skip)]
    pub tenant_id: TenantId,
    pub name: String,
    pub system_prompt: String,
    pub llm: LlmConfig,
    pub memory: MemoryConfig,
    /// Inactive agents are hidden from lists and take no new conversations.
    pub is_active: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// The fields a caller gives to create an agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    pub name: String,
    #[serde(default)]
    pub system_prompt: String,
    pub llm: LlmConfig,
    #[serde(default, deserialize_with = "crate::bounds::from_object_only")]
    pub memory: MemoryConfig,
}

impl AgentSpec {
    pub fn validate(&self) -> Result<()> {
        validate_name("name", &self.name)?;
        crate::bounds::check_chars(
            "system_prompt",
            &self.system_prompt,
            0,
            MAX_SYSTEM_PROMPT_CHARS,
        )?;
        self.llm.validate().map_err(|e| e.within("llm"))?;
        self.llm
            .validate_provider_needs()
            .map_err(|e| e.within("llm"))?;
        self.memory.validate().map_err(|e| e.within("memory"))
    }
}

/// Which family of chat API serves the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum LlmProvider {
    #[serde(alias = "OpenAI")]
    Openai,
    #[serde(alias = "AzureOpenAI")]
    AzureOpenai,
    #[serde(alias = "Anthropic")]
    Anthropic,
    #[serde(alias = "Ollama")]
    Ollama,
}

impl LlmProvider {
    pub fn as_str(self) -> &'static str {
        match self {
            LlmProvider::Openai => "openai",
            LlmProvider::AzureOpenai => "azure_openai",
            LlmProvider::Anthropic => "anthropic",
            LlmProvider::Ollama => "ollama",
        }
    }
}

/// The agent's model and how to call it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmConfig {
    pub provider: LlmProvider,
    /// The model name (for Azure OpenAI: the model behind the deployment).
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Overrides the provider's default endpoint (required for Azure OpenAI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Azure OpenAI deployment name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<String>,
    /// Azure OpenAI API version, e.g. `2024-10-21`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// A cheaper model for episode summaries; the main model when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_model: Option<String>,
    /// The environment variable of the server that holds the API key, when
    /// not the provider's conventional one (`OPENAI_API_KEY`,
    /// `AZURE_OPENAI_API_KEY`, `ANTHROPIC_API_KEY`). Only those names and
    /// names starting `OCTOPUS_LLM_KEY_` are accepted, so an agent cannot make
    /// the server send any other secret of its environment. The key itself is
    /// never stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
}

/// The environment variables an agent's `api_key_env` may name.
pub const API_KEY_ENV_PATTERN: &str =
    "^(OPENAI_API_KEY|AZURE_OPENAI_API_KEY|ANTHROPIC_API_KEY|OCTOPUS_LLM_KEY_[A-Z0-9_]{1,64})$";

fn is_key_variable(name: &str) -> bool {
    matches!(
        name,
        "OPENAI_API_KEY" | "AZURE_OPENAI_API_KEY" | "ANTHROPIC_API_KEY"
    ) || is_tenant_key_variable(name)
}

/// Whether `name` may be bound to tenants as their key (`OCTOPUS_LLM_KEY_`
/// and 1 to 64 capitals, digits or underscores).
pub fn is_tenant_key_variable(name: &str) -> bool {
    name.strip_prefix("OCTOPUS_LLM_KEY_").is_some_and(|rest| {
        (1..=64).contains(&rest.len())
            && rest
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    })
}

/// The shape of an agent's `base_url`: http or https, a host name or IPv4
/// address, an optional port and path; no user, query or fragment.
pub const BASE_URL_PATTERN: &str =
    r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?$";

/// Whether `url` has the shape [`BASE_URL_PATTERN`] states: the same
/// pattern the OpenAPI document declares, so the two cannot disagree.
fn is_base_url(url: &str) -> bool {
    static PATTERN: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(BASE_URL_PATTERN).expect("BASE_URL_PATTERN is a valid pattern")
    });
    PATTERN.is_match(url)
}

impl LlmConfig {
    pub fn validate(&self) -> Result<()> {
        use crate::bounds::{
            MAX_MODEL_NAME_CHARS, MAX_URL_CHARS, check_chars, check_optional_chars,
        };
        check_chars("model", &self.model, 1, MAX_MODEL_NAME_CHARS)?;
        check_optional_chars(
            "summary_model",
            self.summary_model.as_deref(),
            MAX_MODEL_NAME_CHARS,
        )?;
        check_optional_chars(
            "deployment",
            self.deployment.as_deref(),
            MAX_MODEL_NAME_CHARS,
        )?;
        check_optional_chars(
            "api_version",
            self.api_version.as_deref(),
            MAX_MODEL_NAME_CHARS,
        )?;
        check_optional_chars("base_url", self.base_url.as_deref(), MAX_URL_CHARS)?;
        if let Some(name) = &self.api_key_env
            && !is_key_variable(name)
        {
            return Err(Error::invalid(
                "api_key_env",
                "must be OPENAI_API_KEY, AZURE_OPENAI_API_KEY, ANTHROPIC_API_KEY, or a name starting OCTOPUS_LLM_KEY_ (capitals, digits, underscores)",
            ));
        }
        if let Some(t) = self.temperature
            && !(0.0..=2.0).contains(&t)
        {
            return Err(Error::invalid("temperature", "must be between 0 and 2"));
        }
        if let Some(p) = self.top_p
            && !(p > 0.0 && p <= 1.0)
        {
            return Err(Error::invalid("top_p", "must be in (0, 1]"));
        }
        if self.max_output_tokens == Some(0) {
            return Err(Error::invalid("max_output_tokens", "must be positive"));
        }
        if let Some(url) = &self.base_url
            && !is_base_url(url)
        {
            return Err(Error::invalid(
                "base_url",
                "must be an http:// or https:// URL: a host name or IPv4 address, an optional port and path; no user, query or fragment",
            ));
        }
        // What one field needs of another (Azure's endpoint and deployment)
        // is checked on the whole agent, after a patch is merged:
        // `validate_provider_needs`. Each field here is validated alone, so
        // that the OpenAPI document can state every rule exactly.
        Ok(())
    }

    /// What the provider needs beyond each field's own rules: Azure OpenAI
    /// serves a deployment of a resource, so it needs both named. Checked
    /// on the whole agent at create and after a patch is merged, so that an
    /// agent that cannot take a turn is refused then, not at its first turn.
    pub fn validate_provider_needs(&self) -> Result<()> {
        if self.provider == LlmProvider::AzureOpenai {
            if self.base_url.is_none() {
                return Err(Error::invalid(
                    "base_url",
                    "an azure_openai agent needs its resource's endpoint, e.g. https://<resource>.openai.azure.com",
                ));
            }
            if self.deployment.is_none() {
                return Err(Error::invalid(
                    "deployment",
                    "an azure_openai agent needs the name of its model deployment",
                ));
            }
        }
        Ok(())
    }
}

/// Most tokens a context's profile block may be given; the budget keeps
/// it smaller still when the context is full.
pub const MAX_PROFILE_TOKENS: u32 = 4000;

/// How an agent's memory behaves. Every field has a default, so `{}` is valid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Budget of the context assembled for one turn, in tokens. Default 8000.
    pub max_working_memory_tokens: u32,
    /// Knowledge chunks retrieved per turn. Default 5; 0 puts
    /// no knowledge in a context (a knowledge search that names no
    /// `top_k` then takes 5).
    pub knowledge_top_k: u32,
    /// Knowledge chunks scoring below this (cosine) are dropped. Default 0.3.
    /// 0.7 would suit models whose scores run high; with all-MiniLM-L6-v2 a
    /// correct paraphrase scores around 0.4.
    pub knowledge_min_score: f64,
    /// Most memories of past conversations recalled per turn, best first.
    /// How many reach the context is decided by `episodic_max_tokens`.
    /// Default 45; 0 recalls none.
    pub episodic_top_k: u32,
    /// Most tokens the snippets of past conversations may take in a turn's
    /// context. Default 2000 (about 8 KB of text).
    pub episodic_max_tokens: u32,
    /// Turns either side of each recalled turn of a few words shown with it,
    /// so that "Wow, where was that?" comes with what it answers (a longer
    /// turn is shown alone). Default 1.
    pub episodic_neighbours: u32,
    /// Most tokens of a profile block in a turn's context: how long and how
    /// often the user has talked with the agent, and their newest past
    /// conversations a line each (the lines go first when it is over, the
    /// oldest first). Default 0: no profile block; at most 4000.
    pub profile_max_tokens: u32,
    /// Have the agent's summary model write a paragraph about each user
    /// from their current facts and newest conversations, written again by
    /// the memory worker as they talk (a model call each time one of their
    /// conversations is summarised or facts are learned from it). The
    /// profile shows it, and the profile block leads with it, while every
    /// fact it was written from holds. Default false.
    pub profile_summary: bool,
    /// Most recent messages of the current episode kept as history. Default 20.
    pub history_max_messages: u32,
    /// Most of the user's current facts put in a turn's context, in their
    /// own block: the user's standing instructions and preferences first
    /// (up to 20, whatever `context_fact_categories` says), then the other
    /// facts, each kind the newest first. Default 20; 0 puts none.
    pub max_context_facts: u32,
    /// An open episode with no message for this long is closed with reason
    /// `timeout`; the next message opens a new one. Default 1800 (30 minutes).
    pub episode_idle_timeout_secs: u64,
    /// Episodes older than this are archived by the retention job; none when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retention_days: Option<u32>,
    /// Summarise an episode (more than 2 messages) when it closes. Default true.
    pub summarize_on_close: bool,
    /// Embed messages for recall by meaning. Default true.
    pub embed_messages: bool,
    /// Messages shorter than this many tokens are not embedded. Default 4.
    pub min_embedding_tokens: u32,
    /// Procedures put in one turn's context, best matches first. Default 3.
    pub procedures_top_k: u32,
    /// A procedure without a trigger-pattern match joins the context when
    /// the message's meaning is at least this close to its own (cosine).
    /// Default 0.45: chosen by 5-fold cross-validation on the labelled set of
    /// `octopus-bench procedures` (every fold chose it; held-out F1 of
    /// pattern and meaning together 0.67 ± 0.06), for all-MiniLM-L6-v2.
    pub procedure_min_score: f64,
    /// What is done about PII in messages the caller did not mark, each
    /// level adding to the one before: `off`; `flag` (`contains_pii`);
    /// `redact` (also a redacted copy, `redacted_content`, with typed
    /// placeholders such as `[EMAIL]`); `redact_outgoing` (only redacted
    /// text goes to the model and the embedder); `redact_stored` (the
    /// redacted text is stored in place of the original). Default `redact`.
    pub pii: crate::pii::PiiPolicy,
    /// The region (ISO 3166 code in capitals: `US`, `GB`, `DE`, ...) whose numbering
    /// plan reads phone numbers written without a country code, in messages
    /// as they are stored and as they leave for the model. National numbers
    /// with a trunk `0` are also read in 28 other regions. Default `US`.
    pub pii_region: String,
    /// When an episode that called tools closes, ask the agent's model to
    /// propose a procedure from it (stored pending approval). Default false.
    pub learn_procedures: bool,
    /// Facts are learned from an open episode every this many user
    /// messages (from those since the last learning), besides at its close,
    /// so that what a user says is known for the rest of the session.
    /// Default 10; 0 learns at close only. Asks the agent's summary model,
    /// so it needs the server's `[llm] summarise_episodes`.
    pub learn_every_messages: u32,
    /// What this agent's model should remember about users, and never
    /// remember, in the owner's words (up to 2,000 characters): added to
    /// the instructions with which the model writes an episode's key facts,
    /// which become the user's facts. None by default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fact_instructions: Option<String>,
    /// The categories the model files each learned fact under, one per
    /// fact (say `preference`, `profile`, `plan`): up to 20 names of
    /// lower-case letters, digits, `_` and `-`, each up to 40 characters.
    /// Facts are listed and recalled by category. None by default: facts
    /// carry no category.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fact_categories: Vec<String>,
    /// The categories whose facts a turn's context shows in its facts block
    /// (names of `fact_categories`; another matches no fact); every fact
    /// when empty (the default).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context_fact_categories: Vec<String>,
}

/// Most categories an agent files facts under.
pub const MAX_FACT_CATEGORIES: usize = 20;
/// Most characters of a fact category's name.
pub const MAX_FACT_CATEGORY_CHARS: usize = 40;

/// Refuses a list of category names longer than the most an agent may
/// have, holding a name that cannot be one, or naming one twice.
fn check_category_names(field: &str, names: &[String]) -> Result<()> {
    if names.len() > MAX_FACT_CATEGORIES {
        return Err(Error::invalid(
            field,
            format!("must be at most {MAX_FACT_CATEGORIES} names"),
        ));
    }
    for (i, name) in names.iter().enumerate() {
        if !is_fact_category(name) {
            return Err(Error::invalid(
                format!("{field}[{i}]"),
                format!(
                    "must be 1 to {MAX_FACT_CATEGORY_CHARS} lower-case letters, digits, _ or -"
                ),
            ));
        }
        if names[..i].contains(name) {
            return Err(Error::invalid(
                format!("{field}[{i}]"),
                format!("names {name} twice"),
            ));
        }
    }
    Ok(())
}

/// Whether `name` may name a fact category: 1 to 40 lower-case letters,
/// digits, `_` and `-`.
pub fn is_fact_category(name: &str) -> bool {
    (1..=MAX_FACT_CATEGORY_CHARS).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// The longest wait, in user messages, between two learnings of an open
/// episode's facts.
pub const MAX_LEARN_EVERY_MESSAGES: u32 = 1_000;

/// Most characters of an agent's `fact_instructions`.
pub const MAX_FACT_INSTRUCTIONS_CHARS: usize = 2_000;

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            max_working_memory_tokens: 8000,
            knowledge_top_k: 5,
            knowledge_min_score: 0.3,
            episodic_top_k: 45,
            episodic_max_tokens: 2000,
            episodic_neighbours: 1,
            profile_max_tokens: 0,
            profile_summary: false,
            history_max_messages: 20,
            max_context_facts: 20,
            episode_idle_timeout_secs: 1800,
            retention_days: None,
            summarize_on_close: true,
            embed_messages: true,
            min_embedding_tokens: 4,
            procedures_top_k: 3,
            procedure_min_score: 0.45,
            learn_procedures: false,
            learn_every_messages: 10,
            pii: crate::pii::PiiPolicy::Redact,
            pii_region: "US".to_owned(),
            fact_instructions: None,
            fact_categories: Vec::new(),
            context_fact_categories: Vec::new(),
        }
    }
}

impl MemoryConfig {
    /// The region `pii_region` names; US for a code that names none (which
    /// [`MemoryConfig::validate`] refuses).
    pub fn phone_region(&self) -> crate::pii::PhoneRegion {
        crate::pii::PhoneRegion::parse(&self.pii_region).unwrap_or_default()
    }

    pub fn validate(&self) -> Result<()> {
        if crate::pii::PhoneRegion::parse(&self.pii_region).is_none() {
            return Err(Error::invalid(
                "pii_region",
                "must be a region's two-letter code in capitals with a numbering plan, such as US, GB or DE",
            ));
        }
        if self.max_working_memory_tokens < 256 {
            return Err(Error::invalid(
                "max_working_memory_tokens",
                "must be at least 256",
            ));
        }
        if self.knowledge_top_k > 100 {
            return Err(Error::invalid("knowledge_top_k", "must be at most 100"));
        }
        if !(-1.0..=1.0).contains(&self.knowledge_min_score) {
            return Err(Error::invalid(
                "knowledge_min_score",
                "must be between -1 and 1",
            ));
        }
        if self.episodic_top_k > 100 {
            return Err(Error::invalid("episodic_top_k", "must be at most 100"));
        }
        if self.episodic_neighbours > crate::recall::MAX_NEIGHBOURS {
            return Err(Error::invalid(
                "episodic_neighbours",
                format!("must be at most {}", crate::recall::MAX_NEIGHBOURS),
            ));
        }
        if self.profile_max_tokens > MAX_PROFILE_TOKENS {
            return Err(Error::invalid(
                "profile_max_tokens",
                format!("must be at most {MAX_PROFILE_TOKENS}"),
            ));
        }
        if self.max_context_facts > 100 {
            return Err(Error::invalid("max_context_facts", "must be at most 100"));
        }
        if self.learn_every_messages > MAX_LEARN_EVERY_MESSAGES {
            return Err(Error::invalid(
                "learn_every_messages",
                format!("must be at most {MAX_LEARN_EVERY_MESSAGES}"),
            ));
        }
        if self.procedures_top_k > 20 {
            return Err(Error::invalid("procedures_top_k", "must be at most 20"));
        }
        if !(-1.0..=1.0).contains(&self.procedure_min_score) {
            return Err(Error::invalid(
                "procedure_min_score",
                "must be between -1 and 1",
            ));
        }
        if self.history_max_messages > 10_000 {
            return Err(Error::invalid(
                "history_max_messages",
                "must be at most 10000",
            ));
        }
        if !(1..=MAX_IDLE_TIMEOUT_SECS).contains(&self.episode_idle_timeout_secs) {
            return Err(Error::invalid(
                "episode_idle_timeout_secs",
                format!("must be 1 to {MAX_IDLE_TIMEOUT_SECS} seconds"),
            ));
        }
        crate::bounds::check_optional_chars(
            "fact_instructions",
            self.fact_instructions.as_deref(),
            MAX_FACT_INSTRUCTIONS_CHARS,
        )?;
        check_category_names("fact_categories", &self.fact_categories)?;
        check_category_names("context_fact_categories", &self.context_fact_categories)?;
        if self.retention_days == Some(0) {
            return Err(Error::invalid(
                "retention_days",
                "must be positive (omit it to keep forever)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn memory_config_defaults_fill_missing_fields() {
        let config: MemoryConfig = serde_json::from_value(json!({"knowledge_top_k": 9})).unwrap();
        assert_eq!(config.knowledge_top_k, 9);
        assert_eq!(
            config.max_working_memory_tokens,
            MemoryConfig::default().max_working_memory_tokens
        );
    }

    #[test]
    fn provider_accepts_seed_spelling() {
        let provider: LlmProvider = serde_json::from_value(json!("AzureOpenAI")).unwrap();
        assert_eq!(provider, LlmProvider::AzureOpenai);
    }

    #[test]
    fn nested_errors_name_their_path() {
        let spec: AgentSpec = serde_json::from_value(json!({
            "name": "support", "llm": {"provider": "openai", "model": "gpt-4o", "temperature": 7.0}
        }))
        .unwrap();
        let error = spec.validate().unwrap_err();
        assert!(
            matches!(error, Error::Invalid { ref field, .. } if field == "llm.temperature"),
            "{error}"
        );
    }

    #[test]
    fn each_llm_field_is_checked_on_its_own() {
        let llm = LlmConfig {
            provider: LlmProvider::AzureOpenai,
            model: "gpt-4o".into(),
            temperature: None,
            top_p: None,
            max_output_tokens: None,
            base_url: None,
            deployment: None,
            api_version: None,
            summary_model: None,
            api_key_env: None,
        };
        // Azure's endpoint and deployment may come in a later patch.
        assert!(llm.validate().is_ok());
        for good in [
            "http://localhost:11434",
            "https://api.openai.com/v1/",
            "https://acme.openai.azure.com",
            "http://10.0.0.5:8000/v1",
        ] {
            let with = LlmConfig {
                base_url: Some(good.into()),
                ..llm.clone()
            };
            assert!(with.validate().is_ok(), "{good}");
        }
        for bad in [
            "http://",
            "https://",
            "http:///v1",
            "http://user:pw@host/",
            "http://host/v1?key=1",
            "http://host/#x",
            "http://host:/",
            "http://host:123456/",
            "http://ho st/",
        ] {
            let with = LlmConfig {
                base_url: Some(bad.into()),
                ..llm.clone()
            };
            assert!(
                matches!(with.validate(), Err(Error::Invalid { ref field, .. }) if field == "base_url"),
                "{bad}"
            );
        }
        for (bad, field) in [
            (
                LlmConfig {
                    base_url: Some("ftp://x".into()),
                    ..llm.clone()
                },
                "base_url",
            ),
            (
                LlmConfig {
                    top_p: Some(0.0),
                    ..llm.clone()
                },
                "top_p",
            ),
            (
                LlmConfig {
                    temperature: Some(2.5),
                    ..llm.clone()
                },
                "temperature",
            ),
            (
                LlmConfig {
                    deployment: Some(" ".into()),
                    ..llm.clone()
                },
                "deployment",
            ),
            (
                LlmConfig {
                    model: "m".repeat(201),
                    ..llm.clone()
                },
                "model",
            ),
        ] {
            match bad.validate() {
                Err(Error::Invalid { field: named, .. }) => assert_eq!(named, field),
                other => panic!("{field}: expected invalid, got {other:?}"),
            }
        }
    }
}
