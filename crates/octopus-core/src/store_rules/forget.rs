//! Forgetting a user, or deleting a tenant: what was removed, store by
//! store, as a receipt the caller can keep.

use serde::{Deserialize, Serialize};

use crate::vectors::{SetState, VectorChange, VectorKind, VectorSet};
use crate::{AgentId, ConversationId, TenantId};

/// Whose data to forget: one user of a tenant, with one agent or all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForgetUser {
    pub user_id: String,
    /// Only what the user said to this agent; every agent when absent.
    pub agent_id: Option<AgentId>,
}

/// What forgetting a user removed, counted per store.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
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
    /// No removed text is left in the data directory now. When false, a
    /// reader (an export, a backup) holds back the last step, and the words
    /// leave the files' logs as soon as it ends, without delaying writes.
    pub compacted: bool,
    /// The conversations removed: the engine drops what it caches of them.
    #[serde(skip)]
    pub conversation_ids: Vec<ConversationId>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RelationalCounts {
    pub conversations: u64,
    pub episodes: u64,
    pub messages: u64,
    /// Episode summaries (each episode's at most one).
    pub summaries: u64,
    pub key_facts: u64,
    /// Facts learned about the user, current and replaced.
    #[serde(default)]
    pub facts: u64,
    /// Entries of those facts' histories, deleted facts' included.
    #[serde(default)]
    pub fact_history: u64,
    /// Procedures learned from the user's episodes, with all their versions.
    pub learned_procedures: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FullTextCounts {
    pub entries: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct VectorCounts {
    pub message_vectors: u64,
    pub summary_vectors: u64,
    #[serde(default)]
    pub fact_vectors: u64,
    /// Saved vector-index graphs dropped, to be rebuilt from the remaining
    /// vectors at their next search.
    pub graphs_rebuilt: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct QueueCounts {
    pub jobs: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CacheCounts {
    pub histories: u64,
}

/// What deleting a tenant removed, counted per store.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TenantDeletionReceipt {
    pub tenant_id: TenantId,
    /// Rows of the relational store.
    pub relational: TenantRowCounts,
    /// Entries of the full-text index over messages (those over knowledge
    /// and facts go with their rows).
    pub full_text: FullTextCounts,
    /// Vectors removed, and the vector sets erased from the vector index.
    pub vectors: TenantVectorCounts,
    /// Memory work that was queued for the tenant.
    pub queue: QueueCounts,
    /// Conversation histories held in this server's memory.
    pub cache: CacheCounts,
    /// No removed text is left in the data directory now (see
    /// [`ForgetReceipt::compacted`]).
    pub compacted: bool,
    /// The conversations removed: the engine drops what it caches of them.
    #[serde(skip)]
    pub conversation_ids: Vec<ConversationId>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TenantRowCounts {
    pub api_keys: u64,
    /// Agents, deleted ones included.
    pub agents: u64,
    pub conversations: u64,
    pub episodes: u64,
    pub messages: u64,
    /// Facts, current and replaced.
    pub facts: u64,
    pub fact_history: u64,
    /// Procedures, each with all its versions.
    pub procedures: u64,
    pub knowledge_chunks: u64,
    pub webhooks: u64,
    /// Webhook deliveries, sent or waiting.
    pub webhook_deliveries: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TenantVectorCounts {
    /// Vectors of messages, summaries and facts.
    pub memory_vectors: u64,
    pub knowledge_vectors: u64,
    /// Vector sets (an agent's memories, an agent's knowledge) erased from
    /// the vector index.
    pub sets: u64,
}

impl TenantDeletionReceipt {
    /// A receipt of zeros for `tenant`, to be counted up.
    pub fn new(tenant_id: TenantId) -> Self {
        Self {
            tenant_id,
            relational: TenantRowCounts::default(),
            full_text: FullTextCounts::default(),
            vectors: TenantVectorCounts::default(),
            queue: QueueCounts::default(),
            cache: CacheCounts::default(),
            compacted: false,
            conversation_ids: Vec::new(),
        }
    }
}

/// What forgetting a user still has to do once its rows are gone: their
/// copies in derived stores (full-text entries kept apart from the rows,
/// vectors in the vector index) and the free space of the store's files.
/// A store writes it in the transaction that removes the rows and deletes
/// it once all of that is done, so a crash in between leaves it for
/// `Erasure::finish_erasures` (at start, and before the next forget).
/// It names rows by number only: no word of the user's is in it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingErasure {
    /// Full-text entries to remove, by message sequence number (a store
    /// whose full text lives in the rows leaves this empty).
    #[serde(default)]
    pub message_seqs: Vec<i64>,
    /// Vector sets the removal changed, and how.
    #[serde(default)]
    pub sets: Vec<ErasedSet>,
}

/// One vector set's part of a [`PendingErasure`]: what `VectorIndex::erase`
/// is told.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErasedSet {
    pub kind: VectorKind,
    pub agent: AgentId,
    pub dimension: u32,
    /// The set's version before the removal, and after it.
    pub before: i64,
    pub after: i64,
    /// The keys removed.
    pub removed: Vec<u64>,
}

impl ErasedSet {
    pub fn new(set: VectorSet, before: SetState, after: i64, removed: Vec<u64>) -> Self {
        Self {
            kind: set.kind,
            agent: set.agent,
            dimension: before.dimension,
            before: before.version,
            after,
            removed,
        }
    }

    /// The arguments of `VectorIndex::erase` for `tenant`.
    pub fn erase_arguments(&self, tenant: TenantId) -> (VectorSet, SetState, i64, VectorChange) {
        (
            VectorSet {
                kind: self.kind,
                tenant,
                agent: self.agent,
            },
            SetState {
                dimension: self.dimension,
                version: self.before,
            },
            self.after,
            VectorChange {
                removed: self.removed.clone(),
                added: Vec::new(),
            },
        )
    }
}
