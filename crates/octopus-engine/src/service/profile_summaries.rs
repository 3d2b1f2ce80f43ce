//! The paragraph about each user an agent's summary model writes when the
//! agent asks for one (`memory.profile_summary`; see
//! [`octopus_core::profile_summary`]): written again by the memory worker
//! each time one of the user's conversations is summarised or facts are
//! learned from it, in a task of its own so that no other work waits on
//! the model; one at a time per user, the requests that come meanwhile
//! folded into one more.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use octopus_core::agent::Agent;
use octopus_core::chat::{ChatPurpose, ChatRequest};
use octopus_core::message::Role;
use octopus_core::profile_summary::{
    PROFILE_SUMMARY_FACTS, PROFILE_SUMMARY_INSTRUCTIONS, ProfileSummary, profile_summary_prompt,
    read_profile_summary,
};
use octopus_core::working_memory::ChatMessage;
use octopus_core::{AgentId, TenantId};

use crate::error::Result;
use crate::octopus::Octopus;

type Key = (TenantId, AgentId, String);

/// Most paragraphs of one tenant's users written at once.
const WRITES_PER_TENANT: usize = 4;

/// The users whose paragraph is being written, each with whether it was
/// asked for again meanwhile.
#[derive(Default)]
pub(crate) struct ProfileWrites(Mutex<HashMap<Key, bool>>);

impl ProfileWrites {
    /// Whether the caller is to write `key`'s paragraph: false when one is
    /// being written, which is then written once more when it ends, and
    /// false when its tenant has [`WRITES_PER_TENANT`] being written (that
    /// request is dropped: the paragraph stays hidden until the user's next
    /// change or profile read asks again), so that a tenant whose model
    /// stalls, or who touches many users at once, holds a bounded share of
    /// the server's tasks and connections.
    fn begin(&self, key: &Key) -> bool {
        let mut writing = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(again) = writing.get_mut(key) {
            *again = true;
            return false;
        }
        if writing
            .keys()
            .filter(|(tenant, ..)| *tenant == key.0)
            .count()
            >= WRITES_PER_TENANT
        {
            return false;
        }
        writing.insert(key.clone(), false);
        true
    }

    /// Whether `key`'s paragraph is to be written once more: it was asked
    /// for while it was being written.
    fn again(&self, key: &Key) -> bool {
        let mut writing = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match writing.get_mut(key) {
            Some(again) if *again => {
                *again = false;
                true
            }
            _ => {
                writing.remove(key);
                false
            }
        }
    }
}

impl Octopus {
    /// Writes the paragraph about `user_id` again in a task of its own,
    /// when their agent asks for one.
    pub(crate) fn write_profile_summary_in_background(
        &self,
        tenant: TenantId,
        agent: AgentId,
        user_id: &str,
    ) {
        let key = (tenant, agent, user_id.to_owned());
        if !self.profile_writes.begin(&key) {
            return;
        }
        let octopus = self.clone();
        tokio::spawn(async move {
            loop {
                if let Err(error) = octopus.write_profile_summary(tenant, agent, &key.2).await {
                    tracing::warn!(%error, agent_id = %agent, "no profile summary written");
                }
                if !octopus.profile_writes.again(&key) {
                    break;
                }
            }
        });
    }

    /// Has the agent's summary model write the paragraph about `user_id`
    /// from their current facts and newest conversations, and keeps it.
    /// Nothing when the agent does not ask for one, or there is nothing
    /// known of the user.
    pub async fn write_profile_summary(
        &self,
        tenant: TenantId,
        agent: AgentId,
        user_id: &str,
    ) -> Result<()> {
        let agent = self.cached_agent(tenant, agent).await?;
        if !agent.memory.profile_summary {
            return Ok(());
        }
        let filter =
            super::profiles::current_facts(agent.id, user_id, PROFILE_SUMMARY_FACTS as u32);
        let recent = super::profiles::recent_filter(agent.id, user_id);
        let (facts, episodes) = tokio::try_join!(
            self.store.list_facts(tenant, &filter),
            self.store.list_episodes(tenant, &recent)
        )?;
        let lines = super::profiles::recent_lines(&episodes);
        if facts.is_empty() && lines.is_empty() {
            return Ok(());
        }
        let outgoing = |text: &str| match agent.memory.pii.redacts_outgoing() {
            true => octopus_core::pii::egress_for(text, agent.memory.phone_region()).into_owned(),
            false => text.to_owned(),
        };
        let prompt = profile_summary_prompt(
            user_id,
            &facts
                .iter()
                .map(|fact| (outgoing(&fact.text), fact.valid_from))
                .collect::<Vec<_>>(),
            &lines
                .iter()
                .map(|line| (outgoing(&line.summary), line.started_at))
                .collect::<Vec<_>>(),
        );
        let reply = self.ask_for_profile(&agent, prompt).await?;
        let Some(text) = read_profile_summary(&reply) else {
            return Ok(());
        };
        let summary = ProfileSummary {
            agent_id: agent.id,
            user_id: user_id.to_owned(),
            text,
            fact_ids: facts.iter().map(|fact| fact.id).collect(),
            written_at: octopus_core::now(),
        };
        self.store.save_profile_summary(tenant, &summary).await?;
        Ok(())
    }

    async fn ask_for_profile(&self, agent: &Agent, prompt: String) -> Result<String> {
        let request = ChatRequest {
            messages: vec![
                ChatMessage::new(Role::System, PROFILE_SUMMARY_INSTRUCTIONS),
                ChatMessage::new(Role::User, prompt),
            ],
            tools: Vec::new(),
        };
        let model = self.chat.for_agent(agent, ChatPurpose::Summary)?;
        Ok(model.chat(&request, None).await?.text)
    }

    /// The paragraph about `user_id`, when one was written and every fact
    /// it was written from still holds.
    pub(crate) async fn standing_profile_summary(
        &self,
        tenant: TenantId,
        agent: AgentId,
        user_id: &str,
    ) -> octopus_core::Result<Option<ProfileSummary>> {
        let Some(summary) = self.store.profile_summary(tenant, agent, user_id).await? else {
            return Ok(None);
        };
        let holding: HashSet<_> = self
            .store
            .get_facts(tenant, &summary.fact_ids)
            .await?
            .into_iter()
            .filter(|fact| fact.superseded_by.is_none() && fact.valid_to.is_none())
            .map(|fact| fact.id)
            .collect();
        Ok(summary.stands(&holding).then_some(summary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_asked_for_meanwhile_is_folded_into_one_more() {
        let writes = ProfileWrites::default();
        let key = (TenantId::new(), AgentId::new(), "ann".to_owned());
        assert!(writes.begin(&key), "nothing is being written: write it");
        assert!(!writes.begin(&key), "one is being written");
        assert!(!writes.begin(&key), "and it is asked for once more only");
        assert!(writes.again(&key), "written once more");
        assert!(!writes.again(&key), "then done");
        assert!(writes.begin(&key), "a later request writes it again");
        let other = (key.0, key.1, "bob".to_owned());
        assert!(writes.begin(&other), "another user's is written beside it");
    }

    #[test]
    fn a_tenant_writes_a_bounded_number_at_once_and_never_holds_back_another() {
        let writes = ProfileWrites::default();
        let (busy, agent) = (TenantId::new(), AgentId::new());
        let user = |tenant, n: usize| (tenant, agent, format!("user-{n}"));
        for n in 0..WRITES_PER_TENANT {
            assert!(writes.begin(&user(busy, n)));
        }
        assert!(!writes.begin(&user(busy, 99)), "over its share: dropped");
        let other = TenantId::new();
        for n in 0..WRITES_PER_TENANT {
            assert!(writes.begin(&user(other, n)), "another tenant's own share");
        }
        assert!(!writes.again(&user(busy, 0)));
        assert!(writes.begin(&user(busy, 99)), "a place freed is taken");
    }
}
