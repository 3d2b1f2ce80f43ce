//! Agents: created, listed, read, changed by merge patch, paused and deleted,
//! each change checked against what its provider needs.

use octopus_core::agent::{Agent, AgentSpec};
use octopus_core::store::Page;
use octopus_core::{AgentId, ConversationId, DomainCode, Error as DomainError, TenantId, now};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::merge_patch;
use crate::octopus::Octopus;

/// The agent fields a patch may change.
const PATCHABLE: [&str; 5] = ["name", "system_prompt", "llm", "memory", "is_active"];

impl Octopus {
    pub async fn create_agent(&self, tenant: TenantId, spec: AgentSpec) -> Result<Agent> {
        spec.validate()?;
        self.limits.check_memory(&spec.memory)?;
        let at = now();
        let agent = Agent {
            id: AgentId::new(),
            tenant_id: tenant,
            name: spec.name.trim().to_owned(),
            system_prompt: spec.system_prompt,
            llm: spec.llm,
            memory: spec.memory,
            is_active: true,
            created_at: at,
            updated_at: at,
        };
        self.store.create_agent(&agent).await?;
        tracing::info!(tenant_id = %tenant, agent_id = %agent.id, "created agent");
        Ok(agent)
    }

    pub async fn get_agent(&self, tenant: TenantId, id: AgentId) -> Result<Agent> {
        Ok(self.store.get_agent(tenant, id).await?)
    }

    pub async fn list_agents(&self, tenant: TenantId, page: Page) -> Result<Vec<Agent>> {
        Ok(self.store.list_agents(tenant, page).await?)
    }

    /// Applies a JSON merge patch to the agent's `name`, `system_prompt`, `llm`,
    /// `memory` and `is_active`, then validates the whole result.
    pub async fn update_agent(
        &self,
        tenant: TenantId,
        id: AgentId,
        patch: &Value,
    ) -> Result<Agent> {
        let Value::Object(fields) = patch else {
            return Err(DomainError::invalid("", "the patch must be a JSON object").into());
        };
        if let Some(field) = fields.keys().find(|key| !PATCHABLE.contains(&key.as_str())) {
            return Err(DomainError::invalid(
                field.as_str(),
                format!(
                    "cannot be changed; patchable fields are {}",
                    PATCHABLE.join(", ")
                ),
            )
            .into());
        }
        let current = self.store.get_agent(tenant, id).await?;
        let mut document = serde_json::json!({
            "spec": AgentSpec {
                name: current.name.clone(),
                system_prompt: current.system_prompt.clone(),
                llm: current.llm.clone(),
                memory: current.memory.clone(),
            },
            "is_active": current.is_active,
        });
        let mut spec_patch = patch.clone();
        let is_active = spec_patch
            .as_object_mut()
            .and_then(|f| f.remove("is_active"));
        merge_patch::apply(&mut document["spec"], &spec_patch);
        // A field the spec requires cannot be removed, and a value of the
        // wrong shape is named by its path (`llm.provider`).
        if let Some(required) = ["name", "llm"]
            .iter()
            .find(|f| fields.get(**f) == Some(&Value::Null))
        {
            return Err(
                DomainError::invalid(*required, "is required and cannot be removed").into(),
            );
        }
        let spec: AgentSpec =
            serde_path_to_error::deserialize(document["spec"].take()).map_err(|error| {
                let path = error.path().to_string();
                let field = if path == "." { String::new() } else { path };
                DomainError::invalid(field, error.into_inner())
            })?;
        spec.validate()?;
        self.limits.check_memory(&spec.memory)?;
        let is_active = match is_active {
            None => current.is_active,
            Some(Value::Bool(active)) => active,
            Some(_) => {
                return Err(DomainError::invalid("is_active", "must be true or false").into());
            }
        };
        let updated = Agent {
            name: spec.name.trim().to_owned(),
            system_prompt: spec.system_prompt,
            llm: spec.llm,
            memory: spec.memory,
            is_active,
            updated_at: now(),
            ..current
        };
        let llm_changed = updated.llm != current.llm || updated.memory != current.memory;
        self.store.update_agent(&updated).await?;
        self.caches.agents.remove(&(tenant, id));
        if llm_changed {
            // Summaries parked for want of a usable model may work now.
            let which = octopus_core::memory_jobs::Unpark::Agent(tenant, id);
            if self.store.unpark_memory_jobs(&which, now()).await? > 0 {
                self.work_signal.poke();
            }
        }
        Ok(updated)
    }

    /// Deletes the agent: it, its knowledge and its recall answer 404 from
    /// now on, and its name is free. Its conversations and episodes stay
    /// readable until deleted themselves. (Pausing an agent, read-only, is
    /// `is_active: false`.)
    pub async fn delete_agent(&self, tenant: TenantId, id: AgentId) -> Result<()> {
        self.store.delete_agent(tenant, id, now()).await?;
        self.caches.agents.remove(&(tenant, id));
        tracing::info!(tenant_id = %tenant, agent_id = %id, "deleted agent");
        Ok(())
    }
}

impl Octopus {
    /// An agent, from the cache when it was read in the last few seconds.
    pub(crate) async fn cached_agent(&self, tenant: TenantId, id: AgentId) -> Result<Agent> {
        if let Some(agent) = self.caches.agents.get(&(tenant, id)) {
            return Ok(agent);
        }
        let agent = self.store.get_agent(tenant, id).await?;
        self.caches.agents.insert((tenant, id), agent.clone());
        Ok(agent)
    }

    /// An agent that may take new memory or run a turn. A deactivated agent
    /// is read-only: its memory stays readable and searchable (for audits and
    /// exports), but it takes no new conversations, messages, imports or
    /// documents, and assembles no context (`Conflict`, `agent_inactive`),
    /// until a `PATCH` sets `is_active` again.
    pub(crate) async fn active_agent(&self, tenant: TenantId, id: AgentId) -> Result<Agent> {
        let agent = self.cached_agent(tenant, id).await?;
        if !agent.is_active {
            return Err(octopus_core::Error::conflict(
                DomainCode::AgentInactive,
                format!(
                    "agent {id} is deactivated; reactivate it with PATCH {{\"is_active\": true}}"
                ),
            )
            .into());
        }
        Ok(agent)
    }

    /// The active agent of a conversation that exists. The conversation is
    /// not "not found" when its agent was deleted: that is a conflict
    /// (`agent_deleted`), not a 404 of the route.
    pub(crate) async fn conversation_active_agent(
        &self,
        tenant: TenantId,
        agent: AgentId,
    ) -> Result<Agent> {
        match self.active_agent(tenant, agent).await {
            Err(Error::Domain(octopus_core::Error::NotFound { .. })) => {
                Err(octopus_core::Error::conflict(
                    DomainCode::AgentDeleted,
                    format!("the conversation's agent {agent} was deleted"),
                )
                .into())
            }
            other => other,
        }
    }

    /// The agent of a conversation.
    pub(crate) async fn conversation_agent(
        &self,
        tenant: TenantId,
        id: ConversationId,
    ) -> Result<AgentId> {
        if let Some(agent) = self.caches.conversation_agents.get(&(tenant, id)) {
            return Ok(agent);
        }
        let conversation = self.store.get_conversation(tenant, id).await?;
        self.caches
            .conversation_agents
            .insert((tenant, id), conversation.agent_id);
        Ok(conversation.agent_id)
    }
}
