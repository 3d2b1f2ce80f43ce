//! The storage ports. Each trait is narrow, async, object-safe and held as
//! `Arc<dyn …>`; its doc comments are the contract, and `octopus-testkit`'s
//! conformance suite checks every backend against them.
//!
//! Contract shared by every method:
//! - a method that takes a [`TenantId`] never reads or writes another tenant's rows,
//!   and answers [`Error::NotFound`] for another tenant's object exactly as for one
//!   that does not exist;
//! - a method that fails has written nothing.

use async_trait::async_trait;

pub use crate::page::Page;

use crate::agent::Agent;
use crate::appending::{AppendMessages, MessageRecord};
use crate::conversation::{Conversation, ConversationFilter, UserSummary};
use crate::episode::{CloseEpisode, Episode, EpisodeFilter, EpisodeSummary, EpisodeWithMessages};
use crate::knowledge::{
    Chunk, ChunkHit, Collection, DocumentSummary, KeywordQuery, NewChunk, VectorQuery,
};
use crate::memory_jobs::{JobOutcome, MemoryJob, MemoryQueue};
use crate::memory_vectors::{MemoryVectorHit, MemoryVectorQuery};
use crate::message::Message;
use crate::procedure::{
    Decision, NewVersion, Procedure, ProcedureFilter, ProcedureVersion, ServingProcedure,
};
use crate::recall::{MessagePosition, MessageWindow};
use crate::search::{MessageHit, MessageSearchQuery};
use crate::tenant::{ApiKey, KeyHash, Tenant};
#[allow(unused_imports)] // linked from the docs above
use crate::webhook::AttemptOutcome;
use crate::webhook::{Attempt, Delivery, DueDelivery, Webhook};
use crate::{
    AgentId, ApiKeyId, ConversationId, EpisodeId, MessageId, ProcedureId, Result, TenantId,
    Timestamp, WebhookId,
};

#[allow(unused_imports)] // linked from the docs above
use crate::Error;

/// Tenants, their API keys, and the admin key.
#[async_trait]
pub trait TenantStore: Send + Sync {
    async fn create_tenant(&self, tenant: &Tenant) -> Result<()>;
    async fn get_tenant(&self, id: TenantId) -> Result<Tenant>;
    async fn list_tenants(&self, page: Page) -> Result<Vec<Tenant>>;

    /// Fails with `NotFound` when the key's tenant does not exist.
    async fn create_api_key(&self, key: &ApiKey) -> Result<()>;
    async fn list_api_keys(&self, tenant: TenantId) -> Result<Vec<ApiKey>>;
    /// Marks the key revoked; it authenticates nothing from then on.
    async fn revoke_api_key(&self, tenant: TenantId, id: ApiKeyId, at: Timestamp) -> Result<()>;
    /// The tenant of a live (unrevoked) key with this hash.
    async fn tenant_for_key(&self, hash: &KeyHash) -> Result<Option<TenantId>>;

    async fn admin_key_hash(&self) -> Result<Option<KeyHash>>;
    async fn set_admin_key_hash(&self, hash: &KeyHash) -> Result<()>;
}

/// Agent configurations.
#[async_trait]
pub trait AgentStore: Send + Sync {
    /// Fails with `Conflict` (`agent_name_taken`) when an active agent of the tenant
    /// already has this name.
    async fn create_agent(&self, agent: &Agent) -> Result<()>;
    /// Inactive agents are returned too (callers decide what inactive means to
    /// them); deleted ones are `NotFound`.
    async fn get_agent(&self, tenant: TenantId, id: AgentId) -> Result<Agent>;
    /// Active agents, oldest first.
    async fn list_agents(&self, tenant: TenantId, page: Page) -> Result<Vec<Agent>>;
    /// Replaces every field but the ids and `created_at`; same name rule as create.
    async fn update_agent(&self, agent: &Agent) -> Result<()>;
    /// Deletes the agent: from then on it is `NotFound` to every method here
    /// (and its name is free). Its conversations, episodes and knowledge are
    /// left for a purge. `NotFound` when there is no such agent.
    async fn delete_agent(&self, tenant: TenantId, id: AgentId, at: Timestamp) -> Result<()>;
}

/// Conversations.
#[async_trait]
pub trait ConversationStore: Send + Sync {
    async fn create_conversation(&self, conversation: &Conversation) -> Result<()>;
    /// Deleted conversations are returned too, with `deleted_at` set.
    async fn get_conversation(&self, tenant: TenantId, id: ConversationId) -> Result<Conversation>;
    /// Newest first.
    async fn list_conversations(
        &self,
        tenant: TenantId,
        filter: &ConversationFilter,
    ) -> Result<Vec<Conversation>>;
    /// The first user message of each of these conversations' first
    /// episode, in no particular order: what names a conversation in a
    /// list. Conversations of another tenant, or without such a message,
    /// have none.
    async fn opening_messages(
        &self,
        tenant: TenantId,
        ids: &[ConversationId],
    ) -> Result<Vec<Message>>;
    /// Marks the conversation deleted, closes its open episode (`user_closed`)
    /// and soft-deletes its live episodes, which then leave search and recall
    /// and can be restored or purged one by one.
    async fn delete_conversation(
        &self,
        tenant: TenantId,
        id: ConversationId,
        at: Timestamp,
    ) -> Result<()>;
    /// The users with a live conversation with `agent`, by user id.
    async fn list_users(
        &self,
        tenant: TenantId,
        agent: AgentId,
        page: Page,
    ) -> Result<Vec<UserSummary>>;
    /// What one user has said to `agent`, in numbers: their live
    /// conversations with it, the live episodes and messages of those, and
    /// when the first began and the last changed. `None` when they have no
    /// live conversation with it (a user of another tenant or agent alike).
    async fn user_activity(
        &self,
        tenant: TenantId,
        agent: AgentId,
        user_id: &str,
    ) -> Result<Option<crate::conversation::UserActivity>>;
}

/// Messages and episodes.
#[async_trait]
pub trait EpisodeStore: Send + Sync {
    /// Appends the batch to the conversation's open episode, opening one when none
    /// is open, in order; all of it or none of it is stored. Ordinals continue the
    /// episode's. Fails with `NotFound` for an unknown conversation, `Gone`
    /// (`conversation_deleted`) for a deleted one, and `Conflict`
    /// (`conversation_moved`) when `follows` is set and the open episode is no
    /// longer the one it names with that many messages, decided in the
    /// append's own transaction. Returns the stored messages.
    async fn append_messages(
        &self,
        tenant: TenantId,
        batch: AppendMessages,
    ) -> Result<Vec<Message>>;

    /// Erases one message of a live episode: its row and full-text entry,
    /// its vector, queued work on it, the facts citing it (every version,
    /// as `FactStore::delete_fact` deletes one, with `changed_by` in their
    /// histories), and its episode's summary, key facts and summary vector.
    /// A closed episode's summary is queued again, and facts are learned
    /// again from the messages left when any were deleted. Resumable as
    /// forgetting a user is. `NotFound` for a message of no live episode of
    /// the tenant.
    async fn erase_message(
        &self,
        tenant: TenantId,
        erasure: &crate::message::MessageErasure,
    ) -> Result<crate::message::MessageErasureReceipt>;

    /// A live (not soft-deleted) episode.
    async fn get_episode(&self, tenant: TenantId, id: EpisodeId) -> Result<Episode>;
    /// The live episodes among `ids`, in one read: in the order of `ids`,
    /// each once; unknown, foreign and soft-deleted ones left out.
    async fn get_episodes(&self, tenant: TenantId, ids: &[EpisodeId]) -> Result<Vec<Episode>>;
    /// A live episode with its messages in order.
    async fn get_episode_with_messages(
        &self,
        tenant: TenantId,
        id: EpisodeId,
    ) -> Result<EpisodeWithMessages>;
    /// A live episode with up to `limit` of its messages, the newest of
    /// those with an ordinal below `before` (of all, when absent), oldest
    /// first, read together: its history read backwards a page at a time,
    /// so that a context reads only as much as its budget holds. `NotFound`
    /// for an episode not in use.
    async fn episode_messages_before(
        &self,
        tenant: TenantId,
        id: EpisodeId,
        before: Option<u32>,
        limit: u32,
    ) -> Result<EpisodeWithMessages>;
    /// Newest `started_at` first.
    async fn list_episodes(&self, tenant: TenantId, filter: &EpisodeFilter)
    -> Result<Vec<Episode>>;

    /// Closes an open episode, storing the summary when one is given. Fails with
    /// `Conflict` (`episode_closed`) when it is closed already, and `Invalid`
    /// (`ended_at`) for an end before its last message: an episode's times
    /// never go backwards.
    async fn close_episode(
        &self,
        tenant: TenantId,
        id: EpisodeId,
        close: CloseEpisode,
        now: Timestamp,
    ) -> Result<Episode>;
    /// Stores an imported conversation in one transaction: the conversation,
    /// then each session as one episode, closed as `imported` at its last
    /// message, its messages' embeddings and its summary queued as bulk work.
    /// All or nothing: any failure leaves no row of it. Returns the episodes,
    /// one per session, and how many messages were stored.
    async fn import_conversation(
        &self,
        tenant: TenantId,
        conversation: &crate::conversation::Conversation,
        sessions: Vec<Vec<MessageRecord>>,
        now: Timestamp,
    ) -> Result<(Vec<EpisodeId>, usize)>;
    /// Closes up to `limit` open episodes, of any tenant, whose last message is
    /// older than their agent's idle timeout at `now`: end reason `timeout`,
    /// ended at their last message, summary queued. Safe with several
    /// processes sweeping at once: an episode is closed once, by one of them.
    /// Returns the episodes this call closed.
    async fn close_idle_episodes(
        &self,
        now: Timestamp,
        limit: u32,
    ) -> Result<Vec<(TenantId, EpisodeId)>>;
    /// Archives up to `limit` episodes, of any tenant, closed (or restored)
    /// longer ago than their agent's `retention_days` at `now`: they leave
    /// recall, search and context, and stay readable, restorable and
    /// purgeable. Episodes of agents without a retention period, and deleted
    /// episodes, are left alone. Safe with several processes sweeping at once:
    /// an episode is archived once. Returns the episodes this call archived.
    async fn archive_expired_episodes(
        &self,
        now: Timestamp,
        limit: u32,
    ) -> Result<Vec<(TenantId, EpisodeId)>>;
    /// Sets the summary, key facts and summary embedding of a live episode,
    /// replacing any it had.
    async fn set_episode_summary(
        &self,
        tenant: TenantId,
        id: EpisodeId,
        summary: EpisodeSummary,
        now: Timestamp,
    ) -> Result<Episode>;
    /// Hides a live episode and its messages from every read and search; an open
    /// episode is closed first (`user_closed`), so the conversation's next message
    /// opens a new one.
    async fn soft_delete_episode(
        &self,
        tenant: TenantId,
        id: EpisodeId,
        at: Timestamp,
    ) -> Result<Episode>;
    /// Brings a soft-deleted episode back; an archived (not deleted) one comes
    /// back into use, kept for another retention period from `now`.
    /// `Conflict` (`episode_live`) for an episode neither deleted nor
    /// archived, `NotFound` for one that does not exist.
    async fn restore_episode(
        &self,
        tenant: TenantId,
        id: EpisodeId,
        now: Timestamp,
    ) -> Result<Episode>;
    /// Each message of an episode in use among `ids`, with up to `neighbours`
    /// turns either side, in the order of `ids`; unknown ids are left out.
    async fn message_windows(
        &self,
        tenant: TenantId,
        ids: &[MessageId],
        neighbours: u32,
    ) -> Result<Vec<MessageWindow>>;
    /// Where each message of an episode in use among `ids` sits, with the
    /// messages next to it; unknown ids are left out. Cheaper than
    /// [`Self::message_windows`]: no message is read whole.
    async fn message_positions(
        &self,
        tenant: TenantId,
        ids: &[MessageId],
    ) -> Result<Vec<MessagePosition>>;
    /// Removes a soft-deleted or archived episode for good: its row, its
    /// messages, their full-text entries, the facts learned in it and its
    /// memory vectors (messages, summary, facts). A fact it replaced holds
    /// again. Fails with `Conflict` (`episode_not_deleted`) for an episode
    /// in use: purging is the second step of deleting or archiving.
    async fn purge_episode(&self, tenant: TenantId, id: EpisodeId) -> Result<()>;
}

/// Full-text search over messages.
#[async_trait]
pub trait MessageSearch: Send + Sync {
    /// Messages of episodes in use matching any word of the query, best BM25 first.
    /// Sees every message whose append returned before the search began.
    async fn search_messages(
        &self,
        tenant: TenantId,
        query: &MessageSearchQuery,
    ) -> Result<Vec<MessageHit>>;
}

/// An agent's knowledge: one collection per agent and tenant, chunks with
/// vectors. A collection is created with a fixed dimension and model; vectors of
/// any other dimension are refused with `Invalid`, before anything is written.
#[async_trait]
pub trait KnowledgeStore: Send + Sync {
    /// Creates the agent's collection; creating it again with the same dimension
    /// and model is a no-op, with another a `Conflict` (`collection_mismatch`).
    async fn create_collection(
        &self,
        tenant: TenantId,
        agent: AgentId,
        dimension: u32,
        model: &str,
    ) -> Result<Collection>;
    /// The agent's collection, if it exists.
    async fn collection(&self, tenant: TenantId, agent: AgentId) -> Result<Option<Collection>>;
    /// Stores chunks, all or none. `NotFound` without a collection.
    async fn store_chunks(
        &self,
        tenant: TenantId,
        agent: AgentId,
        chunks: Vec<NewChunk>,
    ) -> Result<()>;
    /// Replaces every chunk of `source` with `chunks`, in one transaction, so a
    /// search sees the old version or the new one, never a mix.
    async fn replace_source(
        &self,
        tenant: TenantId,
        agent: AgentId,
        source: &str,
        chunks: Vec<NewChunk>,
    ) -> Result<()>;
    /// The closest chunks by cosine similarity, best first.
    async fn search_chunks(
        &self,
        tenant: TenantId,
        agent: AgentId,
        query: &VectorQuery,
    ) -> Result<Vec<ChunkHit>>;
    /// Chunks matching any word of the query, best BM25 first (`score` is BM25,
    /// higher is better).
    async fn keyword_search_chunks(
        &self,
        tenant: TenantId,
        agent: AgentId,
        query: &KeywordQuery,
    ) -> Result<Vec<ChunkHit>>;
    /// Deletes one chunk; `NotFound` when the collection has no such chunk.
    async fn delete_chunk(&self, tenant: TenantId, agent: AgentId, id: uuid::Uuid) -> Result<()>;
    /// The collection's documents by source name, a page of them; none
    /// without a collection.
    async fn list_documents(
        &self,
        tenant: TenantId,
        agent: AgentId,
        page: Page,
    ) -> Result<Vec<DocumentSummary>>;
    /// The chunks of one document, in order; none when there is no such
    /// source.
    async fn document_chunks(
        &self,
        tenant: TenantId,
        agent: AgentId,
        source: &str,
    ) -> Result<Vec<Chunk>>;
}

/// Episodic memory for recall: the durable queue of embedding and summarising
/// work, and the memory vectors it produces, one collection per agent and
/// tenant.
///
/// Work is queued in the same transaction as its cause: appending a message
/// worth embedding ([`crate::embedded_text::worth_embedding`]), closing an episode, or
/// setting its summary. So a crash or restart loses none of it.
#[async_trait]
pub trait MemoryStore: Send + Sync {
    /// Up to `limit` due jobs, each leased to the caller until `now + lease`:
    /// no other claim returns it before then. Fair: when any live job is due,
    /// only live jobs are claimed ([`WorkClass`](crate::memory_jobs::WorkClass)); within the class, tenants
    /// take turns (each tenant's oldest job, then each one's second oldest, …),
    /// so one tenant's backlog never delays another's first job by more than
    /// one claim. Jobs whose message or episode is gone are dropped, not
    /// returned.
    async fn claim_memory_jobs(
        &self,
        limit: u32,
        now: Timestamp,
        lease: std::time::Duration,
    ) -> Result<Vec<MemoryJob>>;
    /// Stores what a job made and removes the job, in one transaction. The
    /// vector goes into the agent's memory collection, created at first use
    /// with this `model` and the vector's dimension; a message gets its
    /// embedding reference, an episode its summary vector (replacing any).
    /// Returns false, having written nothing, when the job is no longer
    /// queued: another worker completed it after this one's lease ran out.
    /// So a job's outcome is stored once, whoever else worked on it.
    async fn complete_memory_job(
        &self,
        job: &MemoryJob,
        outcome: JobOutcome,
        model: &str,
        now: Timestamp,
    ) -> Result<bool>;
    /// Releases a failed job, to be claimed again from `not_before`.
    async fn retry_memory_job(
        &self,
        job: &MemoryJob,
        error: &str,
        not_before: Timestamp,
    ) -> Result<()>;
    /// Hands back memory kept for speed during a burst of work (page caches,
    /// spare capacity of in-process indexes), once the burst is over; the
    /// next requests fill the caches again. Nothing by default.
    async fn release_spare_memory(&self) -> Result<()> {
        Ok(())
    }
    /// Brings up to date the vector sets the vector index knows it left
    /// behind ([`crate::vectors::VectorIndex::catch_up`]) and those whose
    /// copy has stayed behind the rows since an earlier call at least
    /// [`crate::vector_lag::SETTLE`] before `now` ([`crate::vector_lag`]);
    /// returns how many. Called every few seconds by the memory worker.
    async fn catch_up_vectors(&self, now: Timestamp) -> Result<usize>;
    /// Calls `wake` whenever another process queues memory work in this
    /// store, so that an idle worker starts at once rather than at its
    /// next poll; returns once it is listening. Nothing by default: a store
    /// no other process writes to has nothing to tell.
    async fn watch_new_memory_jobs(
        &self,
        wake: std::sync::Arc<dyn Fn() + Send + Sync>,
    ) -> Result<()> {
        let _ = wake;
        Ok(())
    }
    /// Releases parked jobs ([`crate::memory_jobs::Followup::Park`]) to be claimed
    /// from `now`, their attempts counted afresh. Returns how many.
    async fn unpark_memory_jobs(
        &self,
        which: &crate::memory_jobs::Unpark,
        now: Timestamp,
    ) -> Result<u64>;
    /// Jobs not yet done, leased or not; parked ones not counted.
    async fn pending_memory_jobs(&self) -> Result<u64>;
    /// One tenant's jobs not yet done, leased or not; parked ones not counted.
    async fn tenant_memory_jobs(&self, tenant: TenantId) -> Result<u64>;
    /// The waiting and parked work of every tenant that has some.
    async fn memory_queues(&self) -> Result<Vec<MemoryQueue>>;
    /// The closest memory vectors of one user of one agent, best first, from
    /// episodes in use only.
    async fn search_memory(
        &self,
        tenant: TenantId,
        query: &MemoryVectorQuery,
    ) -> Result<Vec<MemoryVectorHit>>;
    /// The stored vectors of these messages of the tenant, each named with
    /// its episode (the vectors are filed by episode), so that recalled
    /// turns can be compared with each other; a message not embedded, or
    /// not the tenant's, is left out. The order is not the request's.
    async fn message_vectors(
        &self,
        tenant: TenantId,
        messages: &[(EpisodeId, MessageId)],
    ) -> Result<Vec<(MessageId, Vec<f32>)>>;
}

/// Facts learned about users ([`crate::fact`]). They are written by
/// [`MemoryStore::complete_memory_job`] (a summary job's facts, with their
/// vectors, in its transaction), imported with dumps, and removed with
/// their episode (purge) or their user (forget). Only facts of episodes in
/// use are read: a deleted or archived episode's facts leave every read as
/// its messages do.
#[async_trait]
pub trait FactStore: Send + Sync {
    /// One user's facts of one agent, the newest `valid_from` first; those
    /// that hold only, unless the filter asks for replaced ones too.
    async fn list_facts(
        &self,
        tenant: TenantId,
        filter: &crate::fact::FactFilter,
    ) -> Result<Vec<crate::fact::Fact>>;
    /// The facts among `ids`, in the order of `ids`; unknown ids left out.
    async fn get_facts(
        &self,
        tenant: TenantId,
        ids: &[crate::FactId],
    ) -> Result<Vec<crate::fact::Fact>>;
    /// One user's facts (current and replaced) matching any word of the
    /// query, best BM25 first, its statistics counted over that user's
    /// facts alone.
    async fn search_facts(
        &self,
        tenant: TenantId,
        query: &crate::fact::FactSearchQuery,
    ) -> Result<Vec<crate::fact::FactHit>>;

    /// Stores a person's correction of a fact that holds, in one
    /// transaction: the new version (its vector queued for the memory
    /// worker; until then keywords find it), the corrected one closed at the
    /// new one's `valid_from` and pointed at it, and the change in the
    /// fact's history. Returns the new version. A fact not found (another
    /// tenant's, or of a deleted or archived episode) is `NotFound`; one
    /// replaced already is a `FactReplaced` conflict, and nothing changes.
    async fn correct_fact(
        &self,
        tenant: TenantId,
        correction: &crate::fact::FactCorrection,
    ) -> Result<crate::fact::Fact>;

    /// Stores a fact a person added (of no episode), records it in its
    /// history (`added`) and queues its vector, in one transaction; its
    /// words are searchable at once. The caller has checked its agent.
    async fn add_fact(
        &self,
        tenant: TenantId,
        addition: &crate::fact::FactAddition,
    ) -> Result<crate::fact::Fact>;

    /// Deletes a fact, given any of its versions: every version's row,
    /// full-text entry and memory vector, with its queued work, in one
    /// transaction that records the deletion in the history (by whom and
    /// when, none of its words, which leave the history's older entries
    /// too); then the vector index and the files, as forgetting a user does
    /// and resumable the same way (see [`Erasure`]). `NotFound` as for
    /// a correction.
    async fn delete_fact(
        &self,
        tenant: TenantId,
        deletion: &crate::fact::FactDeletion,
    ) -> Result<crate::fact::FactDeletionReceipt>;

    /// A fact's history, given any of its versions' ids, oldest change
    /// first: each version learned, corrected or imported, and a deletion.
    /// Kept after the fact is deleted (without its words); gone when its
    /// episode is purged or its user forgotten. `NotFound` when the id was
    /// never a fact of this tenant.
    async fn fact_history(
        &self,
        tenant: TenantId,
        id: crate::FactId,
    ) -> Result<Vec<crate::fact::FactHistoryEntry>>;
}

/// Erasure: removing everything about one user, or a whole tenant.
#[async_trait]
pub trait Erasure: Send + Sync {
    /// Removes, in one transaction, every conversation of the user (with
    /// `agent_id`, of that agent only), their episodes with summaries, key
    /// facts and facts learned, their messages, the memory vectors and queued work of those,
    /// procedures learned from those episodes, and the paragraphs written
    /// about them ([`ProfileSummaryStore`]); then their full-text
    /// entries, and the saved vector graphs that held their vectors. Then
    /// compacts the store's files, so that nothing removed is left on disk.
    /// Other users' data is untouched. A user with nothing stored gets a
    /// receipt of zeros.
    ///
    /// Forgetting is resumable: the transaction that removes the rows also
    /// records a [`crate::forget::PendingErasure`], deleted once the derived
    /// copies are erased and the files compacted. An interrupted forget
    /// (a crash, an index that failed) is finished by
    /// [`Self::finish_erasures`], which this calls first.
    async fn forget_user(
        &self,
        tenant: TenantId,
        who: &crate::forget::ForgetUser,
    ) -> Result<crate::forget::ForgetReceipt>;

    /// Finishes every erasure an interrupted `forget_user` or
    /// `delete_tenant` left recorded: their full-text entries and vectors
    /// erased, the files compacted, the records deleted. Returns how many it
    /// finished; called at start.
    async fn finish_erasures(&self) -> Result<usize>;

    /// Removes the tenant and everything under it, in one transaction: its
    /// API keys, agents (deleted ones too), conversations, episodes,
    /// messages, facts with their histories, the paragraphs written about
    /// its users, procedures with every version,
    /// knowledge chunks, memory vectors, queued memory work, webhooks with
    /// their deliveries, and the vector sets' rows; then, as `forget_user`
    /// does and resumable the same way, their full-text entries, every
    /// vector of its sets in the vector index, and the files compacted.
    /// Other tenants' data is untouched. `NotFound` for a tenant that does
    /// not exist (or whose deletion has committed already).
    async fn delete_tenant(&self, tenant: TenantId)
    -> Result<crate::forget::TenantDeletionReceipt>;
}

/// The paragraph written about each user (see [`crate::profile_summary`]).
/// Forgetting the user removes theirs, and deleting the tenant every one.
#[async_trait]
pub trait ProfileSummaryStore: Send + Sync {
    /// Keeps `summary` as its user's with its agent, in place of any
    /// earlier one.
    async fn save_profile_summary(
        &self,
        tenant: TenantId,
        summary: &crate::profile_summary::ProfileSummary,
    ) -> Result<()>;

    /// The user's with `agent`, when one was written.
    async fn profile_summary(
        &self,
        tenant: TenantId,
        agent: AgentId,
        user_id: &str,
    ) -> Result<Option<crate::profile_summary::ProfileSummary>>;
}

/// Dumps: a tenant's data read out in dump order, and written back.
#[async_trait]
pub trait DumpStore: Send + Sync {
    /// Hands `sink` the tenant's records in dump order (see
    /// [`crate::dump`]), header and end excluded, all from one consistent
    /// snapshot: the tenant, its agents (deleted ones and all under them
    /// left out), their procedures and knowledge chunks, and their
    /// conversations with episodes (deleted and archived ones too) and
    /// messages. With `user`, only that user's conversations, and the agents
    /// they talk to. Stops early when `sink` returns false. Returns how many
    /// records it handed over.
    async fn export_records(
        &self,
        tenant: TenantId,
        user: Option<String>,
        sink: Box<dyn FnMut(crate::dump::DumpRecord) -> bool + Send>,
    ) -> Result<u64>;
    /// Stores the records `records` yields into `tenant`, in one
    /// transaction, keeping their ids; the tenant is created from a `tenant`
    /// record when it does not exist. Commits only at an `end` record whose
    /// count matches; an error item, a failed record, or the records running
    /// out before `end` leaves nothing stored. Messages' embeddings and
    /// closed episodes' summaries are queued as bulk work.
    async fn import_records(
        &self,
        tenant: TenantId,
        records: Box<dyn Iterator<Item = Result<crate::dump::DumpRecord>> + Send>,
        now: Timestamp,
    ) -> Result<crate::dump::ImportCounts>;
}

/// Health of a backend.
#[async_trait]
pub trait Health: Send + Sync {
    /// Fails when the backend cannot serve requests.
    async fn ready(&self) -> Result<()>;

    /// What keeps the data, for people reading a server's status: the
    /// database's name (`sqlite`, `postgres`) and the vector index's
    /// (`embedded`, `pgvector`, `qdrant`).
    fn backends(&self) -> Backends;

    /// How long words an erasure removed have waited to leave the backend's
    /// files, when a reader holds back what takes them off (retried off the
    /// write path); `None` when none wait. Backends that remove them within
    /// the erasure's own transaction never wait.
    fn erased_words_waiting(&self) -> Option<std::time::Duration> {
        None
    }
}

/// The backends a store is made of ([`Health::backends`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backends {
    pub database: &'static str,
    pub vectors: &'static str,
}

/// Procedures and their versions (procedural memory). Every version is kept.
/// Names are unique per tenant and agent (shared procedures apart) among
/// active procedures: `Conflict` (`procedure_name_taken`) otherwise.
#[async_trait]
pub trait ProcedureStore: Send + Sync {
    /// Stores a procedure with its first version, pending approval.
    async fn create_procedure(
        &self,
        tenant: TenantId,
        id: ProcedureId,
        agent: Option<AgentId>,
        version: NewVersion,
        now: Timestamp,
    ) -> Result<Procedure>;
    async fn get_procedure(&self, tenant: TenantId, id: ProcedureId) -> Result<Procedure>;
    /// Newest first.
    async fn list_procedures(
        &self,
        tenant: TenantId,
        filter: &ProcedureFilter,
    ) -> Result<Vec<Procedure>>;
    /// Adds the next version, pending; an older pending version is
    /// superseded. A serving version keeps serving; before any approval the
    /// new version is the one shown.
    async fn add_procedure_version(
        &self,
        tenant: TenantId,
        id: ProcedureId,
        version: NewVersion,
        now: Timestamp,
    ) -> Result<Procedure>;
    /// Approves (it serves from now on) or rejects the pending version.
    /// `Conflict` (`no_pending_version`) when none waits.
    async fn decide_procedure(
        &self,
        tenant: TenantId,
        id: ProcedureId,
        decision: Decision,
        by: Option<String>,
        now: Timestamp,
    ) -> Result<Procedure>;
    /// Makes an approved version serve again. `Conflict`
    /// (`version_not_approved`) for one never approved; `NotFound` for none.
    async fn rollback_procedure(
        &self,
        tenant: TenantId,
        id: ProcedureId,
        version: u32,
        now: Timestamp,
    ) -> Result<Procedure>;
    /// Activates or deactivates; an inactive procedure never matches.
    async fn set_procedure_active(
        &self,
        tenant: TenantId,
        id: ProcedureId,
        active: bool,
        now: Timestamp,
    ) -> Result<Procedure>;
    /// Removes a procedure and all its versions.
    async fn delete_procedure(&self, tenant: TenantId, id: ProcedureId) -> Result<()>;
    /// Every version, oldest first.
    async fn procedure_versions(
        &self,
        tenant: TenantId,
        id: ProcedureId,
    ) -> Result<Vec<ProcedureVersion>>;
    /// The active procedures with a serving version that `agent` may use: its
    /// own and the tenant's shared ones.
    async fn serving_procedures(
        &self,
        tenant: TenantId,
        agent: AgentId,
    ) -> Result<Vec<ServingProcedure>>;
    /// A number that changes with every write to the tenant's procedures, so
    /// that a matcher built from them knows when it is stale.
    async fn procedures_revision(&self, tenant: TenantId) -> Result<u64>;
}

/// Webhook endpoints and their outbox. The events themselves are written by
/// the other ports' methods, in the transaction of the change they report
/// (see [`crate::webhook`]): one pending delivery per enabled endpoint of the
/// tenant subscribed to the event's type, none when there is no such
/// endpoint. Forgetting a user removes that user's deliveries (and writes
/// `user.forgotten`).
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Registers an endpoint, unless its tenant has
    /// [`crate::webhook::MAX_WEBHOOKS_PER_TENANT`] already: then
    /// [`crate::webhook::too_many_webhooks`]. The count is taken in the
    /// insert's own transaction, so registrations sent at once never pass it.
    async fn create_webhook(&self, webhook: &Webhook) -> Result<()>;
    /// Oldest first.
    async fn list_webhooks(&self, tenant: TenantId) -> Result<Vec<Webhook>>;
    async fn get_webhook(&self, tenant: TenantId, id: WebhookId) -> Result<Webhook>;
    /// Deletes the endpoint with every delivery for it.
    async fn delete_webhook(&self, tenant: TenantId, id: WebhookId) -> Result<()>;
    /// Lets a disabled endpoint receive again: what is written from then on
    /// is delivered (what was given up stays given up).
    async fn enable_webhook(&self, tenant: TenantId, id: WebhookId) -> Result<Webhook>;
    /// The endpoint's deliveries, newest first; `NotFound` for an unknown
    /// endpoint.
    async fn list_deliveries(
        &self,
        tenant: TenantId,
        webhook: WebhookId,
        page: Page,
    ) -> Result<Vec<Delivery>>;
    /// Up to `claim.limit` pending deliveries due at `claim.now` to enabled
    /// endpoints, each the oldest pending delivery of its endpoint and user
    /// (so one user's events arrive in the order they were written, a
    /// failing one holding back those after it), oldest first, across
    /// tenants, none to an endpoint in `claim.skip_webhooks` or of a tenant
    /// in `claim.skip_tenants`. Each is leased for `claim.lease`: no claim
    /// returns it again before then.
    async fn claim_deliveries(
        &self,
        claim: &crate::webhook::DeliveryClaim,
    ) -> Result<Vec<DueDelivery>>;
    /// Records one attempt at a claimed delivery (see [`AttemptOutcome`]):
    /// a success also clears the endpoint's `failing_since`, a failure sets
    /// it if unset, a disabling one gives up every pending delivery of the
    /// endpoint. Does nothing when the delivery is gone (its endpoint was
    /// deleted meanwhile).
    async fn record_attempt(&self, attempt: &Attempt) -> Result<()>;
    /// Deletes delivered and given-up deliveries created before `before`;
    /// returns how many.
    async fn prune_deliveries(&self, before: Timestamp) -> Result<u64>;
}

/// Everything the relational side of Octopus needs from one backend.
pub trait Store:
    TenantStore
    + AgentStore
    + ConversationStore
    + EpisodeStore
    + MessageSearch
    + KnowledgeStore
    + MemoryStore
    + FactStore
    + ProfileSummaryStore
    + ProcedureStore
    + Erasure
    + DumpStore
    + WebhookStore
    + Health
{
}

impl<T> Store for T where
    T: TenantStore
        + AgentStore
        + ConversationStore
        + EpisodeStore
        + MessageSearch
        + KnowledgeStore
        + MemoryStore
        + FactStore
        + ProfileSummaryStore
        + ProcedureStore
        + Erasure
        + DumpStore
        + WebhookStore
        + Health
{
}
