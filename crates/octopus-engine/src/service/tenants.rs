//! Tenants and their API keys, and the admin key: what a bearer key opens.

use octopus_core::forget::TenantDeletionReceipt;
use octopus_core::store::Page;
use octopus_core::tenant::{ApiKey, Tenant, validate_name};
use octopus_core::{ApiKeyId, TenantId, now};

use crate::error::Result;
use crate::keys;
use crate::octopus::Octopus;

impl Octopus {
    pub async fn create_tenant(&self, name: &str) -> Result<Tenant> {
        validate_name("name", name)?;
        let tenant = Tenant {
            id: TenantId::new(),
            name: name.trim().to_owned(),
            created_at: now(),
        };
        self.store.create_tenant(&tenant).await?;
        tracing::info!(tenant_id = %tenant.id, "created tenant");
        Ok(tenant)
    }

    pub async fn get_tenant(&self, id: TenantId) -> Result<Tenant> {
        Ok(self.store.get_tenant(id).await?)
    }

    pub async fn list_tenants(&self, page: Page) -> Result<Vec<Tenant>> {
        Ok(self.store.list_tenants(page).await?)
    }

    /// Deletes the tenant and everything under it from every store (see
    /// `Erasure::delete_tenant`), and drops what this server caches of it.
    /// Another server process on the same data stops taking its keys within
    /// the key cache's few seconds.
    pub async fn delete_tenant(&self, id: TenantId) -> Result<TenantDeletionReceipt> {
        let mut receipt = self.store.delete_tenant(id).await?;
        for &conversation in &receipt.conversation_ids {
            if self.history.remove((id, conversation)) {
                receipt.cache.histories += 1;
            }
            self.caches.conversation_agents.remove(&(id, conversation));
        }
        // Cached by key hash and agent id, which the receipt does not list.
        self.caches.key_tenants.clear();
        self.caches.key_names.clear();
        self.caches.agents.clear();
        tracing::info!(tenant_id = %id, "deleted tenant");
        Ok(receipt)
    }

    /// Mints a key for the tenant; returns it with its secret, shown only now.
    pub async fn create_api_key(&self, tenant: TenantId, name: &str) -> Result<(ApiKey, String)> {
        validate_name("name", name)?;
        let minted = keys::mint();
        let key = ApiKey {
            id: ApiKeyId::new(),
            tenant_id: tenant,
            name: name.trim().to_owned(),
            prefix: minted.prefix,
            hash: minted.hash,
            created_at: now(),
            revoked_at: None,
        };
        self.store.create_api_key(&key).await?;
        tracing::info!(tenant_id = %tenant, key_id = %key.id, "created API key");
        Ok((key, minted.secret))
    }

    pub async fn list_api_keys(&self, tenant: TenantId) -> Result<Vec<ApiKey>> {
        self.store.get_tenant(tenant).await?;
        Ok(self.store.list_api_keys(tenant).await?)
    }

    pub async fn revoke_api_key(&self, tenant: TenantId, key: ApiKeyId) -> Result<()> {
        self.store.revoke_api_key(tenant, key, now()).await?;
        // The cache is keyed by hash, which the key id does not give: drop it all.
        self.caches.key_tenants.clear();
        self.caches.key_names.clear();
        tracing::info!(tenant_id = %tenant, key_id = %key, "revoked API key");
        Ok(())
    }
}
