//! Episodes: one session of a conversation, from its first message to its close,
//! with its summary and usage totals.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::message::Message;
use crate::{AgentId, ConversationId, EpisodeId, Error, Result, TenantId, Timestamp};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Episode {
    pub id: EpisodeId,
    #[serde(skip)]
    pub tenant_id: TenantId,
    pub conversation_id: ConversationId,
    pub agent_id: AgentId,
    pub user_id: String,
    /// The timestamp of its first message.
    pub started_at: DateTime<Utc>,
    /// Set when the episode closes.
    pub ended_at: Option<DateTime<Utc>>,
    pub end_reason: Option<EndReason>,
    /// A short summary written at close.
    pub summary: Option<String>,
    /// Who wrote the summary: the caller, the agent's model, or the
    /// extractive summariser (which a model's summary replaces when it comes).
    pub summary_source: Option<SummarySource>,
    /// Facts worth remembering, named by the summary written at close.
    pub key_facts: Vec<String>,
    /// The embedding of the summary, for recall by meaning. Not sent over HTTP.
    #[serde(skip)]
    pub summary_embedding: Option<Vec<f32>>,
    pub message_count: u32,
    /// How many of its messages (the first ones, by ordinal) facts have
    /// been learned from: during the session every
    /// `memory.learn_every_messages` user messages, and at close.
    #[serde(default)]
    pub facts_learned_through: u32,
    /// Tokens of the messages the model read (user, system, tool).
    pub total_input_tokens: u64,
    /// Tokens of the messages the model wrote (assistant).
    pub total_output_tokens: u64,
    /// The timestamp of its latest message.
    pub last_message_at: DateTime<Utc>,
    /// Soft-deleted episodes are hidden from every read until restored or purged.
    pub deleted_at: Option<DateTime<Utc>>,
    /// Set when the retention job archived the episode (its agent's
    /// `retention_days` after it closed): it leaves recall, search and context,
    /// and can still be read, restored or purged.
    pub archived_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Episode {
    /// Refuses to purge an episode still in use: purging is for what was
    /// deleted or archived, so a live episode is never erased by mistake.
    pub fn check_purgeable(&self) -> Result<()> {
        if self.deleted_at.is_none() && self.archived_at.is_none() {
            return Err(Error::conflict(
                crate::DomainCode::EpisodeNotDeleted,
                format!(
                    "episode {} is in use; delete it (or let retention archive it) before purging it",
                    self.id
                ),
            ));
        }
        Ok(())
    }

    /// What restoring this episode undoes: its deletion, else its archival;
    /// a live episode has nothing to restore.
    pub fn restoring(&self) -> Result<Restore> {
        if self.deleted_at.is_some() {
            Ok(Restore::Undelete)
        } else if self.archived_at.is_some() {
            Ok(Restore::Unarchive)
        } else {
            Err(Error::conflict(
                crate::DomainCode::EpisodeLive,
                format!(
                    "episode {} is neither deleted nor archived; there is nothing to restore",
                    self.id
                ),
            ))
        }
    }

    pub fn is_open(&self) -> bool {
        self.ended_at.is_none()
    }
}

/// What [`Episode::restoring`] undoes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restore {
    /// Clears `deleted_at`.
    Undelete,
    /// Clears `archived_at`, and keeps the episode for another retention
    /// period from now, or the next sweep would archive it again at once.
    Unarchive,
}

/// Who wrote an episode's summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SummarySource {
    /// Sent by the caller (at close, or later); never replaced by Octopus.
    Caller,
    /// The agent's summary model, with key facts.
    Llm,
    /// Sentences picked from the episode, while no model could write one.
    Extractive,
}

impl SummarySource {
    pub fn as_str(self) -> &'static str {
        match self {
            SummarySource::Caller => "caller",
            SummarySource::Llm => "llm",
            SummarySource::Extractive => "extractive",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Caller, Self::Llm, Self::Extractive]
            .into_iter()
            .find(|source| source.as_str() == text)
    }
}

/// Why an episode ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    UserClosed,
    AgentClosed,
    /// No message arrived within the agent's idle timeout.
    Timeout,
    /// A past session brought in by an import, closed at its last message.
    Imported,
}

impl EndReason {
    pub const ALL: [EndReason; 4] = [
        EndReason::UserClosed,
        EndReason::AgentClosed,
        EndReason::Timeout,
        EndReason::Imported,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::UserClosed => "user_closed",
            EndReason::AgentClosed => "agent_closed",
            EndReason::Timeout => "timeout",
            EndReason::Imported => "imported",
        }
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EndReason {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        EndReason::ALL
            .into_iter()
            .find(|reason| reason.as_str() == s)
            .ok_or_else(|| {
                Error::invalid(
                    "end_reason",
                    format!(
                        "unknown end reason `{s}`; expected user_closed, agent_closed, timeout or imported"
                    ),
                )
            })
    }
}

/// An episode and its messages in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct EpisodeWithMessages {
    #[serde(flatten)]
    pub episode: Episode,
    pub messages: Vec<Message>,
}

/// Which episodes to list. Time bounds apply to `started_at`: `from` inclusive,
/// `to` exclusive.
#[derive(Clone, Debug, Default)]
pub struct EpisodeFilter {
    pub agent_id: Option<AgentId>,
    pub user_id: Option<String>,
    pub conversation_id: Option<ConversationId>,
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    /// List soft-deleted episodes instead of live ones.
    pub deleted: bool,
    /// List archived episodes instead of those in use.
    pub archived: bool,
    pub page: crate::page::Page,
}

/// How to close an episode.
#[derive(Clone, Debug)]
pub struct CloseEpisode {
    pub reason: EndReason,
    /// When it ended; the close time when absent.
    pub ended_at: Option<Timestamp>,
    /// A summary the caller wrote itself; Octopus writes one otherwise.
    pub summary: Option<EpisodeSummary>,
}

/// What is remembered of a closed episode.
#[derive(Clone, Debug, PartialEq)]
pub struct EpisodeSummary {
    pub summary: String,
    pub key_facts: Vec<String>,
    pub embedding: Option<Vec<f32>>,
}

/// Longest summary accepted, in characters: ten times a generated summary's
/// budget, so a caller's own summary has room.
pub const MAX_SUMMARY_CHARS: usize = 2000;
/// Most key facts of one episode.
pub const MAX_KEY_FACTS: usize = 100;
/// Longest key fact, in characters.
pub const MAX_KEY_FACT_CHARS: usize = 1000;

impl EpisodeSummary {
    pub fn validate(&self) -> Result<()> {
        crate::bounds::check_chars("summary", &self.summary, 1, MAX_SUMMARY_CHARS)?;
        if self.key_facts.len() > MAX_KEY_FACTS
            || self
                .key_facts
                .iter()
                .any(|fact| fact.chars().count() > MAX_KEY_FACT_CHARS)
        {
            return Err(Error::invalid(
                "key_facts",
                "at most 100 facts of at most 1000 characters each",
            ));
        }
        Ok(())
    }
}
