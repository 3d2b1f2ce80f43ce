//! Tenants and the API keys bound to them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::{ApiKeyId, Result, TenantId};

/// Longest tenant or key name accepted.
pub const MAX_NAME_CHARS: usize = 200;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Tenant {
    pub id: TenantId,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

/// An API key as stored: its hash, never its secret.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ApiKey {
    pub id: ApiKeyId,
    pub tenant_id: TenantId,
    pub name: String,
    /// The first characters of the secret, so that a person can tell keys apart.
    pub prefix: String,
    #[serde(skip)]
    pub hash: KeyHash,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// SHA-256 of an API key's secret. Keys are 256 random bits, so a fast hash is
/// enough: there is nothing to brute-force that a slow hash would protect.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct KeyHash(pub [u8; 32]);

/// Checks a human-readable name (of a tenant, key or agent).
pub fn validate_name(field: &str, name: &str) -> Result<()> {
    crate::bounds::check_chars(field, name, 1, MAX_NAME_CHARS)
}
