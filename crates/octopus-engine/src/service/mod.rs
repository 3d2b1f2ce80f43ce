//! The [`Octopus`] service, one file per area of operations.

mod agents;
mod conversations;
mod episodes;
mod tenants;

use std::sync::{Arc, RwLock};

use octopus_core::store::Store;
use octopus_core::tenant::KeyHash;
use octopus_core::tokens::{ApproximateTokenCounter, TokenCounter};
use octopus_sqlite::{Durability, SqliteOptions, SqliteStore};

use crate::config::{DurabilityLevel, EngineConfig, Limits};
use crate::keys::{self, Caller};
use crate::{Error, Result};

/// The Octopus service. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Octopus {
    store: Arc<dyn Store>,
    tokens: Arc<dyn TokenCounter>,
    limits: Limits,
    /// The admin key's hash, read once: every request compares against it.
    admin_key: Arc<RwLock<Option<KeyHash>>>,
}

impl Octopus {
    /// Opens the backends `config` names. Blocks while migrations run.
    pub fn open(config: &EngineConfig) -> Result<Self> {
        let mut options = SqliteOptions::new(&config.data_dir);
        options.durability = match config.durability {
            DurabilityLevel::Process => Durability::Process,
            DurabilityLevel::PowerLoss => Durability::PowerLoss,
        };
        let store = SqliteStore::open(options)?;
        Ok(Self::with_store(Arc::new(store), config.limits))
    }

    pub fn with_store(store: Arc<dyn Store>, limits: Limits) -> Self {
        Self { store, tokens: Arc::new(ApproximateTokenCounter), limits, admin_key: Arc::new(RwLock::new(None)) }
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

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
        match self.store.tenant_for_key(&hash).await? {
            Some(tenant) => Ok(Caller::Tenant(tenant)),
            None => Err(Error::Unauthenticated),
        }
    }

    /// Is the store able to serve?
    pub async fn ready(&self) -> Result<()> {
        Ok(self.store.ready().await?)
    }
}
