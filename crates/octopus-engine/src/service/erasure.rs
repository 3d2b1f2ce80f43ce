//! Forgetting a user, across every store and this server's caches.

use octopus_core::TenantId;
use octopus_core::conversation::validate_user_id;
use octopus_core::forget::{ForgetReceipt, ForgetUser};

use super::Octopus;
use crate::Result;

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
}
