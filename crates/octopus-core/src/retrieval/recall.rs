//! Recall: what a recall of a user's past conversations asks (the query) and
//! answers (each hit, with the turns around a message).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::message::Message;
use crate::{ConversationId, EpisodeId, Error, MessageId, Result};

/// What a memory vector stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    Message,
    Summary,
    Fact,
}

impl MemoryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryKind::Message => "message",
            MemoryKind::Summary => "summary",
            MemoryKind::Fact => "fact",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "message" => Some(MemoryKind::Message),
            "summary" => Some(MemoryKind::Summary),
            "fact" => Some(MemoryKind::Fact),
            _ => None,
        }
    }
}

/// Where a message sits in its live episode, and which messages are next to it:
/// what ranking a recalled turn in its context needs (see `recall_ranking`).
#[derive(Clone, Debug, PartialEq)]
pub struct MessagePosition {
    pub id: MessageId,
    pub episode_id: EpisodeId,
    /// The message just before it in the episode, if any.
    pub before: Option<Adjacent>,
    /// The message just after it in the episode, if any.
    pub after: Option<Adjacent>,
}

/// A message next to another, by ordinal, in the same episode.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Adjacent {
    pub id: MessageId,
    pub at: DateTime<Utc>,
}

/// A message with the turns around it in its episode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MessageWindow {
    pub message: Message,
    /// Up to the requested number of earlier turns, oldest first.
    pub before: Vec<Message>,
    /// Up to the requested number of later turns, oldest first.
    pub after: Vec<Message>,
}

impl MessageWindow {
    /// A message without the turns around it.
    pub fn alone(message: Message) -> Self {
        Self {
            message,
            before: Vec::new(),
            after: Vec::new(),
        }
    }
}

/// Most hits one recall returns.
pub const MAX_RECALL_TOP_K: u32 = 100;

/// Most neighbouring turns a recall hit carries on each side.
pub const MAX_NEIGHBOURS: u32 = 10;

/// How to retrieve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecallMode {
    /// Vector and full-text results fused.
    #[default]
    Hybrid,
    Vector,
    Keyword,
}

/// A recall query: what an agent remembers of one user.
#[derive(Clone, Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallQuery {
    pub user_id: String,
    pub query: String,
    #[serde(default = "default_top_k")]
    pub top_k: u32,
    /// Drops vector hits of lower cosine similarity. Keyword hits are kept:
    /// they matched the query's words, and BM25 is on another scale.
    #[serde(default)]
    pub min_score: f64,
    /// Bounds on when the remembered message was said: `from` inclusive, `to`
    /// exclusive.
    #[serde(default)]
    pub from: Option<DateTime<Utc>>,
    #[serde(default)]
    pub to: Option<DateTime<Utc>>,
    /// Turns before and after each message hit to return with it.
    #[serde(default)]
    pub neighbours: u32,
    /// When set, a memory's score is multiplied by `0.5^(age / half-life)`,
    /// age counted from the newest memory among the candidates.
    #[serde(default)]
    pub recency_half_life_days: Option<f64>,
    #[serde(default)]
    pub mode: RecallMode,
    /// Whether past messages are recalled; without them, only summaries
    /// and facts (a framework's store searches its facts so).
    #[serde(default = "yes")]
    pub include_messages: bool,
    /// Whether episode summaries are recalled beside messages.
    #[serde(default = "yes")]
    pub include_summaries: bool,
    /// Whether facts learned about the user are recalled beside messages,
    /// those replaced since too (each says when it held).
    #[serde(default = "yes")]
    pub include_facts: bool,
    /// Only facts filed under this category (one of the agent's
    /// `memory.fact_categories`); messages and summaries as ever.
    #[serde(default)]
    pub fact_category: Option<String>,
    /// Each hit says why it was returned where it was (`explanation`): the
    /// searches that found it, the fusion, each reordering that moved it.
    /// Off, recall does none of that work.
    #[serde(default)]
    pub explain: bool,
}

fn default_top_k() -> u32 {
    10
}

fn yes() -> bool {
    true
}

impl RecallQuery {
    pub fn new(user_id: impl Into<String>, query: impl Into<String>) -> Self {
        Self {
            user_id: user_id.into(),
            query: query.into(),
            top_k: default_top_k(),
            min_score: 0.0,
            from: None,
            to: None,
            neighbours: 0,
            recency_half_life_days: None,
            mode: RecallMode::Hybrid,
            include_messages: true,
            include_summaries: true,
            include_facts: true,
            fact_category: None,
            explain: false,
        }
    }

    pub fn validate(&self) -> Result<()> {
        crate::conversation::validate_user_id(&self.user_id)?;
        crate::bounds::check_chars("query", &self.query, 1, crate::bounds::MAX_QUERY_CHARS)?;
        crate::bounds::check_window(self.from, self.to)?;
        crate::bounds::check_optional_chars(
            "fact_category",
            self.fact_category.as_deref(),
            crate::agent::MAX_FACT_CATEGORY_CHARS,
        )?;
        if !(self.include_messages || self.include_summaries || self.include_facts) {
            return Err(Error::invalid(
                "include_messages",
                "messages, summaries and facts are all left out: nothing to recall",
            ));
        }
        if self.top_k == 0 || self.top_k > MAX_RECALL_TOP_K {
            return Err(Error::invalid(
                "top_k",
                format!("must be between 1 and {MAX_RECALL_TOP_K}"),
            ));
        }
        if !(-1.0..=1.0).contains(&self.min_score) {
            return Err(Error::invalid("min_score", "must be between -1 and 1"));
        }
        if self.neighbours > MAX_NEIGHBOURS {
            return Err(Error::invalid(
                "neighbours",
                format!("must be at most {MAX_NEIGHBOURS}"),
            ));
        }
        if let Some(days) = self.recency_half_life_days
            && !(days.is_finite() && days > 0.0)
        {
            return Err(Error::invalid(
                "recency_half_life_days",
                "must be a positive number of days",
            ));
        }
        Ok(())
    }
}

/// One recalled memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RecallHit {
    pub kind: MemoryKind,
    /// What the memory says, whatever its kind: the message's words, the
    /// summary, or the fact (`jq '.items[].text'`).
    #[serde(default)]
    pub text: String,
    /// How many of the speaker's messages said these words (the same words
    /// whatever their case, spacing and final `.`, `!` or `?`): a message
    /// said more than once is one hit, the newest time it was said.
    #[serde(default = "once")]
    pub times_said: u32,
    /// The final score, higher is better: the retrievers' scores fused, then
    /// raised by the neighbouring turns and the episode (see
    /// `recall_ranking`), then weighted by recency when asked.
    pub score: f64,
    /// Cosine similarity, when the vector search found it.
    pub vector_score: Option<f32>,
    /// BM25, when the full-text search found it.
    pub keyword_score: Option<f64>,
    /// The episode and conversation it comes from; absent for a fact a
    /// person added, which has neither.
    pub episode_id: Option<EpisodeId>,
    pub conversation_id: Option<ConversationId>,
    pub at: DateTime<Utc>,
    /// For a message hit: the message and its neighbouring turns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<MessageWindow>,
    /// For a summary hit: the episode's summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// For a fact hit: the fact, with the messages it came from (`at` is
    /// when it became true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fact: Option<crate::fact::Fact>,
    /// Why it was returned where it was, when the query asked (`explain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<crate::recall_explanation::RecallExplanation>,
}

fn once() -> u32 {
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_names_its_bad_field() {
        let mut query = RecallQuery::new("u1", "dogs");
        assert!(query.validate().is_ok());
        query.top_k = 0;
        assert!(query.validate().unwrap_err().to_string().contains("top_k"));
        let mut query = RecallQuery::new("u1", "dogs");
        query.recency_half_life_days = Some(-1.0);
        assert!(
            query
                .validate()
                .unwrap_err()
                .to_string()
                .contains("recency_half_life_days")
        );
        let query = RecallQuery::new("", "dogs");
        assert!(
            query
                .validate()
                .unwrap_err()
                .to_string()
                .contains("user_id")
        );
    }
}
