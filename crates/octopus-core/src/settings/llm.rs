//! `[llm]`: how Octopus calls the agents' models. The engine reads whether
//! and how often to ask for summaries; `octopus-llm` reads the rest, where
//! calls may go and with which key, when it builds an agent's model.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

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
        Self {
            timeout_secs: 120,
            read_timeout_secs: 60,
            max_retries: 2,
            max_retry_wait_secs: 20,
            default_max_output_tokens: 4096,
            max_reply_bytes: 1 << 20,
            summarise_episodes: true,
            summary_retry_secs: 30,
            allowed_base_urls: Vec::new(),
            other_base_urls: OtherBaseUrls::Public,
            tenant_keys: BTreeMap::new(),
        }
    }
}

/// Which base URLs beyond the trusted ones an agent may name (`[llm]
/// other_base_urls`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OtherBaseUrls {
    /// Any URL whose host is a public address (the default).
    #[default]
    Public,
    /// Any URL at all, internal addresses included: for a deployment whose
    /// tenants are trusted with the server's network.
    Any,
    /// None: agents use their provider's endpoint or an allowed URL.
    None,
}
