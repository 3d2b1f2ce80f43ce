//! A store that counts the calls made to each of its methods and passes
//! every call on: for tests that bound how often a path goes to the store
//! (a recall reads the episodes of its hits in one call, not one per hit).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use octopus_core::Result;
use octopus_core::agent::Agent;
use octopus_core::appending::{AppendMessages, MessageRecord};
use octopus_core::conversation::{Conversation, ConversationFilter, UserSummary};
use octopus_core::episode::{
    CloseEpisode, Episode, EpisodeFilter, EpisodeSummary, EpisodeWithMessages,
};
use octopus_core::knowledge::{
    Chunk, ChunkHit, Collection, DocumentSummary, KeywordQuery, NewChunk, VectorQuery,
};
use octopus_core::memory_jobs::{JobOutcome, MemoryJob, MemoryQueue};
use octopus_core::memory_vectors::{MemoryVectorHit, MemoryVectorQuery};
use octopus_core::message::Message;
use octopus_core::procedure::{
    Decision, NewVersion, Procedure, ProcedureFilter, ProcedureVersion, ServingProcedure,
};
use octopus_core::recall::{MessagePosition, MessageWindow};
use octopus_core::search::{MessageHit, MessageSearchQuery};
use octopus_core::store::*;
use octopus_core::tenant::{ApiKey, KeyHash, Tenant};
use octopus_core::webhook::{Attempt, Delivery, DueDelivery, Webhook};
use octopus_core::{
    AgentId, ApiKeyId, ConversationId, EpisodeId, MessageId, ProcedureId, TenantId, Timestamp,
    WebhookId,
};

/// Wraps a store; [`CountingStore::calls`] tells how many times each method
/// was called since the last [`CountingStore::reset`].
pub struct CountingStore {
    inner: Arc<dyn Store>,
    calls: Mutex<BTreeMap<&'static str, usize>>,
}

impl CountingStore {
    pub fn new(inner: Arc<dyn Store>) -> Self {
        Self {
            inner,
            calls: Mutex::default(),
        }
    }

    /// Calls by method name; a method never called is absent.
    pub fn calls(&self) -> BTreeMap<&'static str, usize> {
        self.calls.lock().unwrap().clone()
    }

    /// How many times `method` was called.
    pub fn count(&self, method: &str) -> usize {
        self.calls.lock().unwrap().get(method).copied().unwrap_or(0)
    }

    pub fn reset(&self) {
        self.calls.lock().unwrap().clear();
    }

    fn called(&self, method: &'static str) {
        *self.calls.lock().unwrap().entry(method).or_default() += 1;
    }
}

/// Each trait's methods, counted and passed on to the inner store. The
/// signatures are the port's: a method added there and not here fails to
/// compile.
macro_rules! counted {
    ($($port:ident { $(fn $method:ident(&self $(, $arg:ident: $ty:ty)*) -> $out:ty;)* })*) => {
        $(
            #[async_trait]
            impl $port for CountingStore {
                $(
                    async fn $method(&self $(, $arg: $ty)*) -> $out {
                        self.called(stringify!($method));
                        self.inner.$method($($arg),*).await
                    }
                )*
            }
        )*
    };
}

counted! {
    TenantStore {
        fn create_tenant(&self, tenant: &Tenant) -> Result<()>;
        fn get_tenant(&self, id: TenantId) -> Result<Tenant>;
        fn list_tenants(&self, page: Page) -> Result<Vec<Tenant>>;
        fn create_api_key(&self, key: &ApiKey) -> Result<()>;
        fn list_api_keys(&self, tenant: TenantId) -> Result<Vec<ApiKey>>;
        fn revoke_api_key(&self, tenant: TenantId, id: ApiKeyId, at: Timestamp) -> Result<()>;
        fn tenant_for_key(&self, hash: &KeyHash) -> Result<Option<TenantId>>;
        fn admin_key_hash(&self) -> Result<Option<KeyHash>>;
        fn set_admin_key_hash(&self, hash: &KeyHash) -> Result<()>;
    }
    AgentStore {
        fn create_agent(&self, agent: &Agent) -> Result<()>;
        fn get_agent(&self, tenant: TenantId, id: AgentId) -> Result<Agent>;
        fn list_agents(&self, tenant: TenantId, page: Page) -> Result<Vec<Agent>>;
        fn update_agent(&self, agent: &Agent) -> Result<()>;
        fn delete_agent(&self, tenant: TenantId, id: AgentId, at: Timestamp) -> Result<()>;
    }
    ConversationStore {
        fn create_conversation(&self, conversation: &Conversation) -> Result<()>;
        fn get_conversation(&self, tenant: TenantId, id: ConversationId) -> Result<Conversation>;
        fn opening_messages(&self, tenant: TenantId, ids: &[ConversationId]) -> Result<Vec<octopus_core::message::Message>>;
        fn list_conversations(&self, tenant: TenantId, filter: &ConversationFilter) -> Result<Vec<Conversation>>;
        fn delete_conversation(&self, tenant: TenantId, id: ConversationId, at: Timestamp) -> Result<()>;
        fn list_users(&self, tenant: TenantId, agent: AgentId, page: Page) -> Result<Vec<UserSummary>>;
        fn user_activity(&self, tenant: TenantId, agent: AgentId, user_id: &str) -> Result<Option<octopus_core::conversation::UserActivity>>;
    }
    EpisodeStore {
        fn append_messages(&self, tenant: TenantId, batch: AppendMessages) -> Result<Vec<Message>>;
        fn erase_message(&self, tenant: TenantId, erasure: &octopus_core::message::MessageErasure) -> Result<octopus_core::message::MessageErasureReceipt>;
        fn get_episode(&self, tenant: TenantId, id: EpisodeId) -> Result<Episode>;
        fn get_episodes(&self, tenant: TenantId, ids: &[EpisodeId]) -> Result<Vec<Episode>>;
        fn get_episode_with_messages(&self, tenant: TenantId, id: EpisodeId) -> Result<EpisodeWithMessages>;
        fn episode_messages_before(&self, tenant: TenantId, id: EpisodeId, before: Option<u32>, limit: u32) -> Result<EpisodeWithMessages>;
        fn list_episodes(&self, tenant: TenantId, filter: &EpisodeFilter) -> Result<Vec<Episode>>;
        fn close_episode(&self, tenant: TenantId, id: EpisodeId, close: CloseEpisode, now: Timestamp) -> Result<Episode>;
        fn import_conversation(&self, tenant: TenantId, conversation: &octopus_core::conversation::Conversation, sessions: Vec<Vec<MessageRecord>>, now: Timestamp) -> Result<(Vec<EpisodeId>, usize)>;
        fn close_idle_episodes(&self, now: Timestamp, limit: u32) -> Result<Vec<(TenantId, EpisodeId)>>;
        fn archive_expired_episodes(&self, now: Timestamp, limit: u32) -> Result<Vec<(TenantId, EpisodeId)>>;
        fn set_episode_summary(&self, tenant: TenantId, id: EpisodeId, summary: EpisodeSummary, now: Timestamp) -> Result<Episode>;
        fn soft_delete_episode(&self, tenant: TenantId, id: EpisodeId, at: Timestamp) -> Result<Episode>;
        fn restore_episode(&self, tenant: TenantId, id: EpisodeId, now: Timestamp) -> Result<Episode>;
        fn message_windows(&self, tenant: TenantId, ids: &[MessageId], neighbours: u32) -> Result<Vec<MessageWindow>>;
        fn message_positions(&self, tenant: TenantId, ids: &[MessageId]) -> Result<Vec<MessagePosition>>;
        fn purge_episode(&self, tenant: TenantId, id: EpisodeId) -> Result<()>;
    }
    MessageSearch {
        fn search_messages(&self, tenant: TenantId, query: &MessageSearchQuery) -> Result<Vec<MessageHit>>;
    }
    KnowledgeStore {
        fn create_collection(&self, tenant: TenantId, agent: AgentId, dimension: u32, model: &str) -> Result<Collection>;
        fn collection(&self, tenant: TenantId, agent: AgentId) -> Result<Option<Collection>>;
        fn store_chunks(&self, tenant: TenantId, agent: AgentId, chunks: Vec<NewChunk>) -> Result<()>;
        fn replace_source(&self, tenant: TenantId, agent: AgentId, source: &str, chunks: Vec<NewChunk>) -> Result<()>;
        fn search_chunks(&self, tenant: TenantId, agent: AgentId, query: &VectorQuery) -> Result<Vec<ChunkHit>>;
        fn keyword_search_chunks(&self, tenant: TenantId, agent: AgentId, query: &KeywordQuery) -> Result<Vec<ChunkHit>>;
        fn delete_chunk(&self, tenant: TenantId, agent: AgentId, id: uuid::Uuid) -> Result<()>;
        fn list_documents(&self, tenant: TenantId, agent: AgentId, page: Page) -> Result<Vec<DocumentSummary>>;
        fn document_chunks(&self, tenant: TenantId, agent: AgentId, source: &str) -> Result<Vec<Chunk>>;
    }
    MemoryStore {
        fn claim_memory_jobs(&self, limit: u32, now: Timestamp, lease: std::time::Duration) -> Result<Vec<MemoryJob>>;
        fn complete_memory_job(&self, job: &MemoryJob, outcome: JobOutcome, model: &str, now: Timestamp) -> Result<bool>;
        fn retry_memory_job(&self, job: &MemoryJob, error: &str, not_before: Timestamp) -> Result<()>;
        fn release_spare_memory(&self) -> Result<()> ;
        fn catch_up_vectors(&self, now: Timestamp) -> Result<usize>;
        fn watch_new_memory_jobs(&self, wake: std::sync::Arc<dyn Fn() + Send + Sync>) -> Result<()> ;
        fn unpark_memory_jobs(&self, which: &octopus_core::memory_jobs::Unpark, now: Timestamp) -> Result<u64>;
        fn pending_memory_jobs(&self) -> Result<u64>;
        fn tenant_memory_jobs(&self, tenant: TenantId) -> Result<u64>;
        fn memory_queues(&self) -> Result<Vec<MemoryQueue>>;
        fn search_memory(&self, tenant: TenantId, query: &MemoryVectorQuery) -> Result<Vec<MemoryVectorHit>>;
        fn message_vectors(&self, tenant: TenantId, messages: &[(octopus_core::EpisodeId, octopus_core::MessageId)]) -> Result<Vec<(octopus_core::MessageId, Vec<f32>)>>;
    }
    FactStore {
        fn list_facts(&self, tenant: TenantId, filter: &octopus_core::fact::FactFilter) -> Result<Vec<octopus_core::fact::Fact>>;
        fn get_facts(&self, tenant: TenantId, ids: &[octopus_core::FactId]) -> Result<Vec<octopus_core::fact::Fact>>;
        fn search_facts(&self, tenant: TenantId, query: &octopus_core::fact::FactSearchQuery) -> Result<Vec<octopus_core::fact::FactHit>>;
        fn correct_fact(&self, tenant: TenantId, correction: &octopus_core::fact::FactCorrection) -> Result<octopus_core::fact::Fact>;
        fn add_fact(&self, tenant: TenantId, addition: &octopus_core::fact::FactAddition) -> Result<octopus_core::fact::Fact>;
        fn delete_fact(&self, tenant: TenantId, deletion: &octopus_core::fact::FactDeletion) -> Result<octopus_core::fact::FactDeletionReceipt>;
        fn fact_history(&self, tenant: TenantId, id: octopus_core::FactId) -> Result<Vec<octopus_core::fact::FactHistoryEntry>>;
    }
    ProfileSummaryStore {
        fn save_profile_summary(&self, tenant: TenantId, summary: &octopus_core::profile_summary::ProfileSummary) -> Result<()>;
        fn profile_summary(&self, tenant: TenantId, agent: octopus_core::AgentId, user_id: &str) -> Result<Option<octopus_core::profile_summary::ProfileSummary>>;
    }
    Erasure {
        fn forget_user(&self, tenant: TenantId, who: &octopus_core::forget::ForgetUser) -> Result<octopus_core::forget::ForgetReceipt>;
        fn finish_erasures(&self) -> Result<usize>;
        fn delete_tenant(&self, tenant: TenantId) -> Result<octopus_core::forget::TenantDeletionReceipt>;
    }
    DumpStore {
        fn export_records(&self, tenant: TenantId, user: Option<String>, sink: Box<dyn FnMut(octopus_core::dump::DumpRecord) -> bool + Send>) -> Result<u64>;
        fn import_records(&self, tenant: TenantId, records: Box<dyn Iterator<Item = Result<octopus_core::dump::DumpRecord>> + Send>, now: Timestamp) -> Result<octopus_core::dump::ImportCounts>;
    }
    ProcedureStore {
        fn create_procedure(&self, tenant: TenantId, id: ProcedureId, agent: Option<AgentId>, version: NewVersion, now: Timestamp) -> Result<Procedure>;
        fn get_procedure(&self, tenant: TenantId, id: ProcedureId) -> Result<Procedure>;
        fn list_procedures(&self, tenant: TenantId, filter: &ProcedureFilter) -> Result<Vec<Procedure>>;
        fn add_procedure_version(&self, tenant: TenantId, id: ProcedureId, version: NewVersion, now: Timestamp) -> Result<Procedure>;
        fn decide_procedure(&self, tenant: TenantId, id: ProcedureId, decision: Decision, by: Option<String>, now: Timestamp) -> Result<Procedure>;
        fn rollback_procedure(&self, tenant: TenantId, id: ProcedureId, version: u32, now: Timestamp) -> Result<Procedure>;
        fn set_procedure_active(&self, tenant: TenantId, id: ProcedureId, active: bool, now: Timestamp) -> Result<Procedure>;
        fn delete_procedure(&self, tenant: TenantId, id: ProcedureId) -> Result<()>;
        fn procedure_versions(&self, tenant: TenantId, id: ProcedureId) -> Result<Vec<ProcedureVersion>>;
        fn serving_procedures(&self, tenant: TenantId, agent: AgentId) -> Result<Vec<ServingProcedure>>;
        fn procedures_revision(&self, tenant: TenantId) -> Result<u64>;
    }
    WebhookStore {
        fn create_webhook(&self, webhook: &Webhook) -> Result<()>;
        fn list_webhooks(&self, tenant: TenantId) -> Result<Vec<Webhook>>;
        fn get_webhook(&self, tenant: TenantId, id: WebhookId) -> Result<Webhook>;
        fn delete_webhook(&self, tenant: TenantId, id: WebhookId) -> Result<()>;
        fn enable_webhook(&self, tenant: TenantId, id: WebhookId) -> Result<Webhook>;
        fn list_deliveries(&self, tenant: TenantId, webhook: WebhookId, page: Page) -> Result<Vec<Delivery>>;
        fn claim_deliveries(&self, claim: &octopus_core::webhook::DeliveryClaim) -> Result<Vec<DueDelivery>>;
        fn record_attempt(&self, attempt: &Attempt) -> Result<()>;
        fn prune_deliveries(&self, before: Timestamp) -> Result<u64>;
    }
}

#[async_trait]
impl Health for CountingStore {
    fn backends(&self) -> octopus_core::store::Backends {
        self.inner.backends()
    }

    async fn ready(&self) -> Result<()> {
        self.called("ready");
        self.inner.ready().await
    }

    fn erased_words_waiting(&self) -> Option<std::time::Duration> {
        self.inner.erased_words_waiting()
    }
}
