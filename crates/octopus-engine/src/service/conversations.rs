use octopus_core::conversation::{Conversation, ConversationFilter, ConversationSpec};
use octopus_core::{AgentId, ConversationId, Error as DomainError, TenantId, now};

use super::Octopus;
use crate::Result;

impl Octopus {
    /// Starts a conversation between a user and an active agent of the tenant.
    pub async fn create_conversation(
        &self,
        tenant: TenantId,
        spec: ConversationSpec,
    ) -> Result<Conversation> {
        spec.validate()?;
        let agent = self.store.get_agent(tenant, spec.agent_id).await?;
        if !agent.is_active {
            return Err(DomainError::conflict(
                "agent_inactive",
                format!("agent {} is inactive", agent.id),
            )
            .into());
        }
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
        };
        self.store.create_conversation(&conversation).await?;
        Ok(conversation)
    }

    pub async fn get_conversation(
        &self,
        tenant: TenantId,
        id: ConversationId,
    ) -> Result<Conversation> {
        Ok(self.store.get_conversation(tenant, id).await?)
    }

    /// Lists conversations; an agent named in the filter must be the tenant's.
    pub async fn list_conversations(
        &self,
        tenant: TenantId,
        filter: &ConversationFilter,
    ) -> Result<Vec<Conversation>> {
        self.check_agent(tenant, filter.agent_id).await?;
        Ok(self.store.list_conversations(tenant, filter).await?)
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
