//! Forgetting a user: what was removed, store by store, as a receipt the
//! caller can keep.

use serde::{Deserialize, Serialize};

use crate::{AgentId, ConversationId};

/// Whose data to forget: one user of a tenant, with one agent or all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForgetUser {
    pub user_id: String,
    /// Only what the user said to this agent; every agent when absent.
    pub agent_id: Option<AgentId>,
}

/// What forgetting a user removed, counted per store.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ForgetReceipt {
    pub user_id: String,
    pub agent_id: Option<AgentId>,
    /// Rows of the relational store.
    pub relational: RelationalCounts,
    /// Entries of the full-text index over messages.
    pub full_text: FullTextCounts,
    /// Memory vectors, and the vector-index graphs rebuilt without them.
    pub vectors: VectorCounts,
    /// Memory work queued for the removed messages and episodes.
    pub queue: QueueCounts,
    /// Conversation histories held in this server's memory.
    pub cache: CacheCounts,
    /// The stores rewrote their files (SQLite `VACUUM` and a WAL checkpoint),
    /// so no removed text is left in the data directory.
    pub compacted: bool,
    /// The conversations removed: the engine drops what it caches of them.
    #[serde(skip)]
    pub conversation_ids: Vec<ConversationId>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RelationalCounts {
    pub conversations: u64,
    pub episodes: u64,
    pub messages: u64,
    /// Episode summaries (each episode's at most one).
    pub summaries: u64,
    pub key_facts: u64,
    /// Procedures learned from the user's episodes, with all their versions.
    pub learned_procedures: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FullTextCounts {
    pub entries: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VectorCounts {
    pub message_vectors: u64,
    pub summary_vectors: u64,
    /// Saved vector-index graphs dropped, to be rebuilt from the remaining
    /// vectors at their next search.
    pub graphs_rebuilt: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QueueCounts {
    pub jobs: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CacheCounts {
    pub histories: u64,
}
