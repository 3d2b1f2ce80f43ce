//! Episodic recall: the memory vectors of past messages, episode summaries
//! and facts, the durable queue of work that makes them, and what a recall
//! query returns.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::episode::{EpisodeSummary, EpisodeWithMessages, SummarySource};
use crate::message::{ContentPart, Message, MessageContent, Role};
use crate::vectors::{Nearest, PointFields, PointFilter};
use crate::{AgentId, ConversationId, EpisodeId, Error, MessageId, Result, TenantId};

/// Episodes with at most this many messages get no generated summary: a
/// question and its answer say no more summarised than as they are.
pub const MIN_SUMMARISED_MESSAGES: u32 = 2;

/// Token budget of a generated summary: short enough that several fit in a
/// turn's context beside the turns they summarise.
pub const SUMMARY_TOKENS: u32 = 200;

/// Whether a message is queued for embedding: user and assistant turns with
/// text. System injections and tool results are skipped (they are the
/// system's and the tools' words, not the conversation's); the
/// agent's `min_embedding_tokens` then skips very short turns when the job runs.
pub fn worth_embedding(role: Role, content: Option<&MessageContent>) -> bool {
    // On the append path: decided without building the text.
    let said = |text: &str| !text.trim().is_empty();
    matches!(role, Role::User | Role::Assistant)
        && match content {
            Some(MessageContent::Text(text)) => said(text),
            Some(MessageContent::Parts(parts)) => parts
                .iter()
                .any(|part| matches!(part, ContentPart::Text { text } if said(text))),
            None => false,
        }
}

/// The text a message's vector is made from: its speaker's name, when it has
/// one, before its text, so that "what did Caroline say about…" finds her turns.
/// With `redact` (the agent's `redact_pii`), the redacted content when there is one.
pub fn embedded_text(message: &Message, redact: bool) -> String {
    let text = outgoing_text(message, redact).unwrap_or_default();
    match &message.name {
        Some(name) => format!("{name}: {text}"),
        None => text,
    }
}

/// A message's text as it may leave for a model or an embedder: with
/// `redact` (the agent's `redact_pii`), the redacted content, or the content
/// redacted now when none was stored; the content's text otherwise.
pub fn outgoing_text(message: &Message, redact: bool) -> Option<String> {
    let original = message.content.as_ref().map(|c| c.text());
    match (redact, &message.redacted_content) {
        (true, Some(redacted)) => Some(redacted.clone()),
        // Stored before detection, or with detection off: redacted on the
        // way out, so nothing detected ever leaves.
        (true, None) => original.map(|text| crate::pii::egress(&text).into_owned()),
        (false, _) => original,
    }
}

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

/// How soon queued memory work should be done. A live conversation's message
/// must become recallable within seconds, while an import of thousands can
/// wait: live work is claimed before any bulk work, whoever queued it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WorkClass {
    /// Messages appended to, and episodes closed in, live conversations.
    #[default]
    Live,
    /// Imports, and anything else done in bulk.
    Bulk,
}

/// One tenant's waiting memory work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryQueue {
    pub tenant_id: TenantId,
    /// Jobs waiting, of each class (parked ones not counted).
    pub live: u64,
    pub bulk: u64,
    /// Jobs parked: they cannot succeed as the server is configured.
    pub parked: u64,
    /// When the oldest waiting job was queued; none when all are parked.
    pub oldest_queued_at: Option<crate::Timestamp>,
}

/// What becomes of a summary job whose model did not write the summary
/// (an extractive one stands in meanwhile).
#[derive(Clone, Debug, PartialEq)]
pub enum Followup {
    /// Ask again from this time (a provider down or busy), the error kept.
    RetryAt(crate::Timestamp, String),
    /// The server's configuration is at fault (no API key, a model the
    /// provider does not have): kept aside, neither claimed nor counted as
    /// waiting, until the agent's settings or the server's configuration
    /// change. `configuration` names the configuration it failed under.
    Park {
        reason: String,
        configuration: String,
    },
}

/// Which parked jobs to release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unpark {
    /// An agent's, whose settings changed.
    Agent(TenantId, AgentId),
    /// Every one parked under another configuration than this one.
    NotUnder(String),
}

/// A unit of queued work, claimed by one worker at a time for a lease.
#[derive(Clone, Debug)]
pub struct MemoryJob {
    pub id: i64,
    pub tenant_id: TenantId,
    pub agent_id: AgentId,
    /// Failed attempts so far.
    pub attempts: u32,
    pub work: MemoryWork,
}

#[derive(Clone, Debug)]
pub enum MemoryWork {
    /// Embed a stored message.
    EmbedMessage(Message),
    /// Summarise a closed episode when it has no summary, and embed the
    /// summary; with a model's summary, learn its key facts as facts.
    SummariseEpisode(EpisodeWithMessages),
    /// Embed a stored fact (one imported from a dump).
    EmbedFact(crate::fact::Fact),
}

/// What a summary job made of its episode.
#[derive(Clone, Debug)]
pub struct SummarisedEpisode {
    pub episode: EpisodeId,
    /// A summary generated because the episode had none (or only an
    /// extractive one); it is stored only if the episode still has none,
    /// or an extractive one that a model's summary replaces.
    pub generated: Option<EpisodeSummary>,
    /// Who wrote `generated`.
    pub source: SummarySource,
    /// The vector of the episode's summary.
    pub vector: Vec<f32>,
    /// Keep the job for another attempt (or parked): the summary stored
    /// is a stand-in until the model can write one.
    pub retry: Option<Followup>,
    /// Facts learned from the episode, stored with their vectors (and
    /// the known facts they replace updated) in the job's transaction.
    pub facts: Vec<crate::fact::NewFact>,
}

/// What a worker made of a job.
#[derive(Clone, Debug)]
pub enum JobOutcome {
    MessageEmbedded {
        message: MessageId,
        vector: Vec<f32>,
    },
    EpisodeSummarised(SummarisedEpisode),
    FactEmbedded {
        fact: crate::FactId,
        vector: Vec<f32>,
    },
    /// Nothing to embed (too short, or no summary to make).
    Skipped,
}

impl JobOutcome {
    /// What becomes of the job in the queue besides being done: asked
    /// again later, or parked until the configuration changes. `None`: the
    /// job leaves the queue.
    pub fn followup(&self) -> Option<&Followup> {
        match self {
            Self::EpisodeSummarised(summarised) => summarised.retry.as_ref(),
            _ => None,
        }
    }
}

/// A vector search over one agent's memory of one user.
#[derive(Clone, Debug)]
pub struct MemoryVectorQuery {
    pub agent_id: AgentId,
    pub user_id: String,
    pub vector: Vec<f32>,
    pub top_k: u32,
    pub kinds: Vec<MemoryKind>,
    /// Bounds on the message timestamp (for summaries, the episode's last
    /// message): `from` inclusive, `to` exclusive.
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
}

impl MemoryVectorQuery {
    /// Most vectors one search returns: recall asks each retriever for a few
    /// candidates per hit it returns.
    pub const MAX_TOP_K: u32 = MAX_RECALL_TOP_K * 4;

    /// A `top_k` in range.
    pub fn validate(&self) -> Result<()> {
        if self.top_k == 0 || self.top_k > Self::MAX_TOP_K {
            return Err(Error::invalid(
                "top_k",
                format!("must be between 1 and {}", Self::MAX_TOP_K),
            ));
        }
        Ok(())
    }

    /// The search a vector index runs for this query: its conditions on the
    /// index's fields (see [`memory_point_fields`]), leaving out the vectors
    /// of `hidden` episodes (deleted or archived).
    pub fn to_nearest(&self, hidden: &[EpisodeId]) -> Nearest {
        let filter = PointFilter {
            partition: Some(self.user_id.clone()),
            from: self.from,
            to: self.to,
            ..PointFilter::default()
        }
        .require(
            KIND_LABEL,
            self.kinds.iter().map(|k| k.as_str().to_owned()).collect(),
        )
        .exclude(
            EPISODE_LABEL,
            hidden.iter().map(|e| e.to_string()).collect(),
        );
        Nearest {
            vector: self.vector.clone(),
            top_k: self.top_k as usize,
            filter,
        }
    }
}

/// The label of a memory vector's kind, in its [`PointFields`].
pub const KIND_LABEL: &str = "kind";
/// The label of a memory vector's episode, in its [`PointFields`].
pub const EPISODE_LABEL: &str = "episode";

/// What a vector index keeps of a memory vector to filter on: its user as
/// the partition (recall searches one user's memories), its kind and
/// episode, and when it happened (a fact: when it became true).
pub fn memory_point_fields(
    user_id: &str,
    kind: MemoryKind,
    episode: EpisodeId,
    at: DateTime<Utc>,
) -> PointFields {
    PointFields {
        partition: Some(user_id.to_owned()),
        at: Some(at),
        ..PointFields::default()
    }
    .label(KIND_LABEL, kind.as_str())
    .label(EPISODE_LABEL, episode.to_string())
}

/// A memory vector's own fields, as a store keeps them beside it: whose it
/// is, what it stands for (a message, an episode's summary, a fact) and when.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryVectorFields {
    pub user_id: String,
    pub kind: MemoryKind,
    pub episode_id: EpisodeId,
    pub message_id: Option<MessageId>,
    pub fact_id: Option<crate::FactId>,
    pub at: DateTime<Utc>,
}

impl MemoryVectorFields {
    /// A message's vector: at the time it was said.
    pub fn message(message: &Message, user_id: String) -> Self {
        MemoryVectorFields {
            user_id,
            kind: MemoryKind::Message,
            episode_id: message.episode_id,
            message_id: Some(message.id),
            fact_id: None,
            at: message.timestamp,
        }
    }

    /// An episode's summary's vector: at the episode's last message.
    pub fn summary(episode: EpisodeId, user_id: String, last_message_at: DateTime<Utc>) -> Self {
        MemoryVectorFields {
            user_id,
            kind: MemoryKind::Summary,
            episode_id: episode,
            message_id: None,
            fact_id: None,
            at: last_message_at,
        }
    }

    /// A fact's vector: at the time it became true.
    pub fn fact(fact: &crate::fact::Fact) -> Self {
        MemoryVectorFields {
            user_id: fact.user_id.clone(),
            kind: MemoryKind::Fact,
            episode_id: fact.episode_id,
            message_id: None,
            fact_id: Some(fact.id),
            at: fact.valid_from,
        }
    }

    /// What the vector index keeps of them.
    pub fn point_fields(&self) -> PointFields {
        memory_point_fields(&self.user_id, self.kind, self.episode_id, self.at)
    }
}

/// One memory vector found by a search. Only live episodes' vectors are found.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryVectorHit {
    pub kind: MemoryKind,
    /// Cosine similarity.
    pub score: f32,
    pub episode_id: EpisodeId,
    /// For a message vector.
    pub message_id: Option<MessageId>,
    /// For a fact vector.
    pub fact_id: Option<crate::FactId>,
    pub at: DateTime<Utc>,
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
    /// Whether episode summaries are recalled beside messages.
    #[serde(default = "yes")]
    pub include_summaries: bool,
    /// Whether facts learned about the user are recalled beside messages,
    /// those replaced since too (each says when it held).
    #[serde(default = "yes")]
    pub include_facts: bool,
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
            include_summaries: true,
            include_facts: true,
        }
    }

    pub fn validate(&self) -> Result<()> {
        crate::conversation::validate_user_id(&self.user_id)?;
        crate::bounds::check_chars("query", &self.query, 1, crate::bounds::MAX_QUERY_CHARS)?;
        crate::bounds::check_window(self.from, self.to)?;
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
    /// The final score, higher is better: the retrievers' scores fused, then
    /// raised by the neighbouring turns and the episode (see
    /// `recall_ranking`), then weighted by recency when asked.
    pub score: f64,
    /// Cosine similarity, when the vector search found it.
    pub vector_score: Option<f32>,
    /// BM25, when the full-text search found it.
    pub keyword_score: Option<f64>,
    pub episode_id: EpisodeId,
    pub conversation_id: ConversationId,
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_tool_and_empty_messages_are_not_embedded() {
        let text = |t: &str| Some(MessageContent::Text(t.into()));
        assert!(worth_embedding(
            Role::User,
            text("I adopted a dog last week").as_ref()
        ));
        assert!(worth_embedding(Role::Assistant, text("ok").as_ref()));
        assert!(!worth_embedding(Role::User, text("   ").as_ref()));
        assert!(!worth_embedding(Role::User, None));
        let image_only = MessageContent::Parts(vec![ContentPart::ImageUrl {
            image_url: crate::message::ImageUrl {
                url: "https://x/y.png".into(),
                detail: None,
            },
        }]);
        assert!(!worth_embedding(Role::User, Some(&image_only)));
        assert!(!worth_embedding(
            Role::System,
            text("Remember the user's name is Ana").as_ref()
        ));
        assert!(!worth_embedding(
            Role::Tool,
            text("{\"status\": \"shipped\"}").as_ref()
        ));
    }

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
