//! Who a request comes from: the admin key, and tenants' keys.

use octopus_core::TenantId;

use crate::error::{Error, Result};
use crate::keys::{self, Caller};
use crate::octopus::Octopus;

impl Octopus {
    /// Makes sure an admin key exists. A configured key replaces whatever was
    /// stored. With none configured and none stored, mints one and returns its
    /// secret, which the caller shows once: it is not recoverable afterwards.
    pub async fn ensure_admin_key(&self, configured: Option<&str>) -> Result<Option<String>> {
        let (hash, minted) = match (configured, self.store.admin_key_hash().await?) {
            (Some(secret), _) => {
                let hash = keys::hash(secret);
                self.store.set_admin_key_hash(&hash).await?;
                (hash, None)
            }
            (None, Some(stored)) => (stored, None),
            (None, None) => {
                let key = keys::mint();
                self.store.set_admin_key_hash(&key.hash).await?;
                (key.hash, Some(key.secret))
            }
        };
        *self.admin_key.write().unwrap_or_else(|p| p.into_inner()) = Some(hash);
        Ok(minted)
    }

    /// Who a presented key belongs to.
    pub async fn authenticate(&self, secret: &str) -> Result<Caller> {
        let hash = keys::hash(secret);
        let admin = *self.admin_key.read().unwrap_or_else(|p| p.into_inner());
        if admin.is_some_and(|admin| keys::same_hash(&admin, &hash)) {
            return Ok(Caller::Admin);
        }
        if let Some(tenant) = self.caches.key_tenants.get(&hash) {
            return Ok(Caller::Tenant(tenant));
        }
        match self.store.tenant_for_key(&hash).await? {
            Some(tenant) => {
                self.caches.key_tenants.insert(hash, tenant);
                Ok(Caller::Tenant(tenant))
            }
            None => Err(Error::Unauthenticated),
        }
    }

    /// The name of the tenant's live key whose secret this is, for the
    /// record of who wrote or approved a procedure version or changed a
    /// fact; from the cache when it was read in the last few seconds.
    pub async fn key_name(&self, tenant: TenantId, secret: &str) -> Result<Option<String>> {
        let hash = keys::hash(secret);
        if let Some(name) = self.caches.key_names.get(&hash) {
            return Ok(Some(name));
        }
        let name = self
            .store
            .list_api_keys(tenant)
            .await?
            .into_iter()
            .find(|key| keys::same_hash(&key.hash, &hash) && key.revoked_at.is_none())
            .map(|key| key.name);
        if let Some(name) = &name {
            self.caches.key_names.insert(hash, name.clone());
        }
        Ok(name)
    }
}
