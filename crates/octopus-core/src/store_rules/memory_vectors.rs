//! Memory vectors: the fields and labels a memory's vector carries in an
//! index (its user, episode, kind and time), and a search of them.

use chrono::{DateTime, Utc};

use crate::message::Message;
use crate::recall::{MAX_RECALL_TOP_K, MemoryKind};
use crate::vectors::{Nearest, PointFields, PointFilter};
use crate::{AgentId, EpisodeId, Error, MessageId, Result};

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

    /// A fact's vector: at the time it became true, filed under
    /// [`Fact::vector_episode`](crate::fact::Fact::vector_episode).
    pub fn fact(fact: &crate::fact::Fact) -> Self {
        MemoryVectorFields {
            user_id: fact.user_id.clone(),
            kind: MemoryKind::Fact,
            episode_id: fact.vector_episode(),
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
