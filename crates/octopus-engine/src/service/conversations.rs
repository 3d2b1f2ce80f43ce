//! Conversations: started, listed, read and deleted; and imports of past
//! conversations, one closed episode per session.

use octopus_core::conversation::{
    Conversation, ConversationFilter, ConversationImport, ConversationSpec, UserSummary,
};
use octopus_core::store::Page;
use octopus_core::{AgentId, ConversationId, TenantId, now};

use crate::config::MessageOrigin;
use crate::error::Result;
use crate::octopus::Octopus;

impl Octopus {
    /// Starts a conversation between a user and an active agent of the tenant.
    pub async fn create_conversation(
        &self,
        tenant: TenantId,
        spec: ConversationSpec,
    ) -> Result<Conversation> {
        let conversation = self.new_conversation(tenant, spec).await?;
        self.store.create_conversation(&conversation).await?;
        Ok(conversation)
    }

    /// A conversation of an active agent, validated, not yet stored.
    pub(crate) async fn new_conversation(
        &self,
        tenant: TenantId,
        spec: ConversationSpec,
    ) -> Result<Conversation> {
        spec.validate()?;
        self.active_agent(tenant, spec.agent_id).await?;
        let at = now();
        let conversation = Conversation {
            id: ConversationId::new(),
            tenant_id: tenant,
            agent_id: spec.agent_id,
            user_id: spec.user_id,
            title: spec.title,
            metadata: spec.metadata,
            created_at: at,
            updated_at: at,
            deleted_at: None,
            opening: None,
        };
        Ok(conversation)
    }

    pub async fn get_conversation(
        &self,
        tenant: TenantId,
        id: ConversationId,
    ) -> Result<Conversation> {
        let conversation = self.store.get_conversation(tenant, id).await?;
        Ok(self
            .with_openings(tenant, vec![conversation])
            .await?
            .remove(0))
    }

    /// Lists conversations; an agent named in the filter must be the tenant's.
    pub async fn list_conversations(
        &self,
        tenant: TenantId,
        filter: &ConversationFilter,
    ) -> Result<Vec<Conversation>> {
        self.check_agent(tenant, filter.agent_id).await?;
        let conversations = self.store.list_conversations(tenant, filter).await?;
        self.with_openings(tenant, conversations).await
    }

    /// The conversations, each with its opening (the user's first words).
    async fn with_openings(
        &self,
        tenant: TenantId,
        mut conversations: Vec<Conversation>,
    ) -> Result<Vec<Conversation>> {
        let ids: Vec<ConversationId> = conversations.iter().map(|c| c.id).collect();
        let openings: std::collections::HashMap<ConversationId, String> = self
            .store
            .opening_messages(tenant, &ids)
            .await?
            .iter()
            .filter_map(|m| {
                Some((
                    m.conversation_id,
                    octopus_core::conversation::opening_of(m)?,
                ))
            })
            .collect();
        for conversation in &mut conversations {
            conversation.opening = openings.get(&conversation.id).cloned();
        }
        Ok(conversations)
    }

    /// The users who have a live conversation with the agent, by user id.
    pub async fn list_users(
        &self,
        tenant: TenantId,
        agent: AgentId,
        page: Page,
    ) -> Result<Vec<UserSummary>> {
        self.check_agent(tenant, Some(agent)).await?;
        Ok(self.store.list_users(tenant, agent, page).await?)
    }

    pub async fn delete_conversation(&self, tenant: TenantId, id: ConversationId) -> Result<()> {
        Ok(self.store.delete_conversation(tenant, id, now()).await?)
    }

    /// A filter naming another tenant's agent answers 404, exactly as for an
    /// agent that does not exist, rather than an empty list.
    pub(crate) async fn check_agent(&self, tenant: TenantId, agent: Option<AgentId>) -> Result<()> {
        if let Some(agent) = agent {
            self.store.get_agent(tenant, agent).await?;
        }
        Ok(())
    }
}

/// What an import stored.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ImportReport {
    pub conversation: Conversation,
    /// One per session, in order.
    pub episodes: Vec<octopus_core::EpisodeId>,
    pub messages: usize,
}

impl Octopus {
    /// Imports past conversations: a new conversation, and one closed episode
    /// per session (`imported`, ended at its last message), every message at its
    /// original time. Everything is validated before anything is written; the
    /// memory worker then embeds and summarises it like live conversations.
    pub async fn import_conversation(
        &self,
        tenant: TenantId,
        import: ConversationImport,
    ) -> Result<ImportReport> {
        import.validate()?;
        // An unknown or inactive agent is answered before thousands of
        // messages are validated.
        let agent = self.active_agent(tenant, import.agent_id).await?;
        let mut sessions = Vec::with_capacity(import.sessions.len());
        for (i, session) in import.sessions.iter().enumerate() {
            let records = self
                .message_records(
                    tenant,
                    session.messages.clone(),
                    "messages",
                    MessageOrigin::Import,
                    &agent.memory,
                )
                .await
                .map_err(|e| match e {
                    crate::error::Error::Domain(d) => d.within(&format!("sessions[{i}]")).into(),
                    other => other,
                })?;
            sessions.push(records);
        }
        // A job per message, and a summary per session.
        let incoming: usize = sessions.iter().map(|records| records.len() + 1).sum();
        self.check_memory_quota(tenant, incoming as u64).await?;
        // One transaction: a failure anywhere leaves nothing of the import.
        let mut conversation = self.new_conversation(tenant, import.spec()).await?;
        // A past conversation began and was last active when its messages
        // say, not when it was imported.
        let times = sessions.iter().flatten().map(|record| record.timestamp);
        if let (Some(first), Some(last)) = (times.clone().min(), times.max()) {
            conversation.created_at = first;
            conversation.updated_at = last;
        }
        let (episodes, messages) = self
            .store
            .import_conversation(tenant, &conversation, sessions, now())
            .await?;
        self.quotas.queued_more(tenant, incoming as u64);
        self.work_signal.poke();
        tracing::info!(tenant_id = %tenant, conversation_id = %conversation.id, episodes = episodes.len(), messages, "imported conversation");
        Ok(ImportReport {
            conversation,
            episodes,
            messages,
        })
    }
}
