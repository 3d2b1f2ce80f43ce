//! The engine's settings.

use octopus_core::message::MessageLimits;
use serde::{Deserialize, Serialize};

/// How the engine guards its inputs, which models it calls, and how it
/// weighs what it recalls. Which backends hold the data is not its concern:
/// it is handed a store.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineConfig {
    pub limits: Limits,
    pub quotas: crate::quotas::Quotas,
    /// The engine reads how many query vectors to keep; `octopus-app`
    /// builds the embedder from the rest.
    pub embedding: octopus_core::embedding_settings::EmbeddingSettings,
    /// The engine reads whether and how often to ask for summaries;
    /// `octopus-app` builds the agents' models from the rest.
    pub llm: octopus_core::llm_settings::LlmSettings,
    pub worker: WorkerSettings,
    /// How recall weighs its evidence (`[recall]`).
    pub recall: octopus_core::recall_ranking::RankingWeights,
    /// How webhook events are delivered (`[webhooks]`).
    pub webhooks: crate::webhooks::WebhookSettings,
}

/// The background work of a server process (`[worker]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkerSettings {
    /// How often open episodes are checked against their agent's idle timeout.
    pub idle_sweep_secs: u64,
    /// How often closed episodes are checked against their agent's
    /// `retention_days` and archived.
    pub retention_sweep_secs: u64,
    /// How long a worker holds the memory jobs it claimed (a summary by a
    /// slow model must finish within it); a worker that died holding jobs
    /// delays them by at most this.
    pub job_lease_secs: u64,
    /// Whether this process runs a memory worker (embeddings and summaries
    /// of the queue). Off, the queue is left to the other servers sharing
    /// the database: an API-only server.
    pub memory_worker: bool,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        Self {
            idle_sweep_secs: 15,
            retention_sweep_secs: 60,
            job_lease_secs: 300,
            memory_worker: true,
        }
    }
}

/// Bounds on what one request may ask for.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Bytes of one message's content, tool calls and redacted content together.
    pub max_message_bytes: usize,
    /// Messages in one append.
    pub max_batch_messages: usize,
    /// Tool calls on one message.
    pub max_tool_calls: usize,
    /// Bytes of one document to ingest. Embedding is the cost: 1 MiB of text is
    /// about three minutes of the local model's work on two cores.
    pub max_document_bytes: usize,
    /// Seconds a message's timestamp (or an episode's end) may lie ahead of the
    /// server's clock: clients' clocks drift, but a date in the future would
    /// keep its episode from ever timing out.
    pub max_future_skew_secs: u64,
    /// Seconds a live message's timestamp may lie in the past (a client that
    /// was offline sends late; 30 days). Imports may be older, back to 1970.
    pub max_live_message_age_secs: u64,
    /// The most an agent's `memory.max_working_memory_tokens` may be: what
    /// one context may hold, and so what one request may read of history.
    pub max_working_memory_tokens: u32,
    /// The most an agent's `memory.history_max_messages` may be.
    pub max_history_messages: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_message_bytes: 1 << 20,
            max_batch_messages: 1000,
            max_tool_calls: 128,
            max_document_bytes: 2 << 20,
            max_future_skew_secs: 300,
            max_live_message_age_secs: 30 * 86_400,
            max_working_memory_tokens: 200_000,
            max_history_messages: 1000,
        }
    }
}

/// Where messages come from, which decides how old their timestamps may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MessageOrigin {
    Live,
    Import,
}

impl Limits {
    /// Refuses agent memory settings past the operator's ceilings.
    pub(crate) fn check_memory(
        &self,
        memory: &octopus_core::agent::MemoryConfig,
    ) -> octopus_core::Result<()> {
        if memory.max_working_memory_tokens > self.max_working_memory_tokens {
            return Err(octopus_core::Error::invalid(
                "max_working_memory_tokens",
                format!(
                    "must be at most {} on this server ([limits] max_working_memory_tokens)",
                    self.max_working_memory_tokens
                ),
            ));
        }
        if memory.history_max_messages > self.max_history_messages {
            return Err(octopus_core::Error::invalid(
                "history_max_messages",
                format!(
                    "must be at most {} on this server ([limits] max_history_messages)",
                    self.max_history_messages
                ),
            ));
        }
        Ok(())
    }

    /// An agent's memory settings within the ceilings: one made before a
    /// ceiling was lowered is served as if it asked for the ceiling.
    pub(crate) fn bounded_memory(&self, memory: &octopus_core::agent::MemoryConfig) -> (u32, u32) {
        (
            memory
                .max_working_memory_tokens
                .min(self.max_working_memory_tokens),
            memory.history_max_messages.min(self.max_history_messages),
        )
    }

    /// Refuses a timestamp outside the window `origin` allows, as the input
    /// `field`'s.
    pub(crate) fn check_timestamp(
        &self,
        field: &str,
        at: octopus_core::Timestamp,
        origin: MessageOrigin,
        now: octopus_core::Timestamp,
    ) -> octopus_core::Result<()> {
        let refuse = |why: String| octopus_core::Error::invalid(field, why);
        let seconds =
            |secs: u64| chrono::Duration::try_seconds(i64::try_from(secs).unwrap_or(i64::MAX));
        let latest = seconds(self.max_future_skew_secs)
            .and_then(|skew| now.checked_add_signed(skew))
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MAX_UTC);
        if at > latest {
            return Err(refuse(format!(
                "{at} is in the future (the server's clock says {now}; {} s of skew are allowed)",
                self.max_future_skew_secs
            )));
        }
        let earliest = match origin {
            MessageOrigin::Live => seconds(self.max_live_message_age_secs)
                .and_then(|age| now.checked_sub_signed(age))
                .unwrap_or(chrono::DateTime::UNIX_EPOCH)
                .max(chrono::DateTime::UNIX_EPOCH),
            MessageOrigin::Import => chrono::DateTime::UNIX_EPOCH,
        };
        if at < earliest {
            return Err(refuse(match origin {
                MessageOrigin::Live => format!(
                    "{at} is more than {} s ago; import older conversations with POST /v1/conversations/import",
                    self.max_live_message_age_secs
                ),
                MessageOrigin::Import => format!("{at} is before 1970"),
            }));
        }
        Ok(())
    }

    pub fn message_limits(&self) -> MessageLimits {
        MessageLimits {
            max_message_bytes: self.max_message_bytes,
            max_tool_calls: self.max_tool_calls,
        }
    }
}
