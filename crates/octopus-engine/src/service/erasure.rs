//! Forgetting a user, and erasing one message, across every store and this
//! server's caches.

use octopus_core::conversation::validate_user_id;
use octopus_core::forget::{ForgetReceipt, ForgetUser};
use octopus_core::message::{MessageErasure, MessageErasureReceipt};
use octopus_core::{MessageId, TenantId, now};

use crate::error::Result;
use crate::octopus::Octopus;

impl Octopus {
    /// Removes everything stored about one user of the tenant (with one
    /// agent, when `who` names it), compacts the stores, and drops what this
    /// server caches of the user's conversations. Another server process on
    /// the same data holds no history it would serve: its cache is checked
    /// against the store on every turn.
    pub async fn forget_user(&self, tenant: TenantId, who: ForgetUser) -> Result<ForgetReceipt> {
        validate_user_id(&who.user_id)?;
        self.check_agent(tenant, who.agent_id).await?;
        let mut receipt = self.store.forget_user(tenant, &who).await?;
        for &conversation in &receipt.conversation_ids {
            if self.history.remove((tenant, conversation)) {
                receipt.cache.histories += 1;
            }
            self.caches
                .conversation_agents
                .remove(&(tenant, conversation));
        }
        Ok(receipt)
    }

    /// Erases one message from every store, with the facts learned from it
    /// (recorded as deleted by `changed_by`); its episode's summary is
    /// written again. Every server's history cache sees the episode changed
    /// (`updated_at`) on its next turn.
    pub async fn erase_message(
        &self,
        tenant: TenantId,
        id: MessageId,
        reason: Option<String>,
        changed_by: &str,
    ) -> Result<MessageErasureReceipt> {
        let erasure = MessageErasure {
            message_id: id,
            changed_by: changed_by.to_owned(),
            reason,
            at: now(),
        };
        erasure.validate()?;
        let receipt = self.store.erase_message(tenant, &erasure).await?;
        // Its episode's summary may be queued again.
        self.work_signal.poke();
        tracing::info!(tenant_id = %tenant, message_id = %id, episode_id = %receipt.episode_id,
            facts = receipt.facts_deleted, "erased a message");
        Ok(receipt)
    }
}
