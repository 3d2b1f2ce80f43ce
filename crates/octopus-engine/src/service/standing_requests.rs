//! Standing requests (see [`octopus_core::standing_requests`]): when the
//! memory worker has a user's message, the instructions and preferences in
//! it become the user's facts under their own categories, once each; every
//! turn's context then shows them first among the facts.

use octopus_core::fact::{Fact, FactAddition, FactFilter, FactSource};
use octopus_core::message::{Message, Role};
use octopus_core::page::Page;
use octopus_core::repeats::said_as;
use octopus_core::standing_requests::{self, CATEGORIES};
use octopus_core::{AgentId, FactId, TenantId, now};

use crate::error::Result;
use crate::octopus::Octopus;

/// Who the facts made from standing requests are written by, in their
/// history, where a model's are by `model` and a person's by their key's name.
pub const RECOGNISED_BY: &str = "patterns";

/// Most standing requests of a user a turn's context shows (the newest).
pub(crate) const MAX_STANDING_IN_CONTEXT: u32 = 20;

impl Octopus {
    /// Files the standing requests in `message` (a user's) as facts of its
    /// conversation's user, with the message as their source and its time
    /// as when they began to hold; a request the user's current ones hold
    /// in the same words ([`said_as`]) already is not filed again.
    pub(crate) async fn note_standing_requests(
        &self,
        tenant: TenantId,
        agent: AgentId,
        message: &Message,
    ) -> Result<usize> {
        if message.role != Role::User {
            return Ok(0);
        }
        let Some(text) = message.content.as_ref().map(|content| content.text()) else {
            return Ok(0);
        };
        let requests = standing_requests::recognise(&text);
        if requests.is_empty() {
            return Ok(0);
        }
        let conversation = self
            .store
            .get_conversation(tenant, message.conversation_id)
            .await?;
        let held = self
            .store
            .list_facts(
                tenant,
                &standing_filter(agent, &conversation.user_id, Page::MAX_LIMIT),
            )
            .await?;
        let mut known: Vec<String> = held.iter().map(|fact| said_as(&fact.text)).collect();
        let mut filed = 0;
        for request in requests {
            let words = said_as(&request.text);
            if known.contains(&words) {
                continue;
            }
            let at = now();
            let addition = FactAddition {
                fact: Fact {
                    id: FactId::new(),
                    tenant_id: tenant,
                    agent_id: agent,
                    user_id: conversation.user_id.clone(),
                    episode_id: Some(message.episode_id),
                    message_ids: vec![message.id],
                    text: request.text,
                    valid_from: message.timestamp.min(at),
                    valid_to: None,
                    superseded_by: None,
                    created_at: at,
                    source: FactSource::Learned,
                    changed_by: RECOGNISED_BY.to_owned(),
                    category: Some(request.category.to_owned()),
                    key: None,
                },
                reason: None,
            };
            self.store.add_fact(tenant, &addition).await?;
            known.push(words);
            filed += 1;
        }
        if filed > 0 {
            tracing::debug!(tenant_id = %tenant, message_id = %message.id, filed, "standing requests filed as facts");
        }
        Ok(filed)
    }
}

/// The user's current standing requests, the newest first, `limit` of them.
pub(crate) fn standing_filter(agent: AgentId, user: &str, limit: u32) -> FactFilter {
    FactFilter {
        agent_id: agent,
        user_id: user.to_owned(),
        include_replaced: false,
        categories: CATEGORIES.iter().map(|c| (*c).to_owned()).collect(),
        key: None,
        page: Page { limit, offset: 0 },
    }
}
