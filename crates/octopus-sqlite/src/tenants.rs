//! The tenant and API key port on SQLite.

use async_trait::async_trait;
use octopus_core::store::{Page, TenantStore};
use octopus_core::tenant::{ApiKey, KeyHash, Tenant};
use octopus_core::{ApiKeyId, Error as DomainError, Result, TenantId, Timestamp};
use rusqlite::{OptionalExtension, params};

use crate::SqliteStore;
use crate::codec::micros;
use crate::error::Error;
use crate::rows;

const ADMIN_KEY_SETTING: &str = "admin_key_sha256";

#[async_trait]
impl TenantStore for SqliteStore {
    async fn create_tenant(&self, tenant: &Tenant) -> Result<()> {
        let tenant = tenant.clone();
        self.db
            .write(move |conn| {
                conn.execute(
                    "INSERT INTO tenants (id, name, created_at) VALUES (?1, ?2, ?3)",
                    params![
                        tenant.id.0.as_bytes(),
                        tenant.name,
                        micros(tenant.created_at)
                    ],
                )?;
                Ok(())
            })
            .await
    }

    async fn get_tenant(&self, id: TenantId) -> Result<Tenant> {
        self.db
            .read(move |conn| {
                let mut stmt =
                    conn.prepare_cached("SELECT id, name, created_at FROM tenants WHERE id = ?1")?;
                rows::collect(&mut stmt, [id.0.as_bytes()], tenant_from_row)?
                    .pop()
                    .ok_or_else(|| DomainError::not_found(TenantId::KIND, id).into())
            })
            .await
    }

    async fn list_tenants(&self, page: Page) -> Result<Vec<Tenant>> {
        self.db
            .read(move |conn| {
                let mut stmt = conn.prepare_cached(
                    "SELECT id, name, created_at FROM tenants ORDER BY created_at, id LIMIT ?1 OFFSET ?2",
                )?;
                rows::collect(&mut stmt, [page.limit, page.offset], tenant_from_row)
            })
            .await
    }

    async fn create_api_key(&self, key: &ApiKey) -> Result<()> {
        let key = key.clone();
        self.db
            .write(move |conn| {
                let exists: bool = conn.query_row(
                    "SELECT EXISTS (SELECT 1 FROM tenants WHERE id = ?1)",
                    [key.tenant_id.0.as_bytes()],
                    |row| row.get(0),
                )?;
                if !exists {
                    return Err(DomainError::not_found(TenantId::KIND, key.tenant_id).into());
                }
                conn.execute(
                    "INSERT INTO api_keys (id, tenant_id, name, prefix, key_hash, created_at, revoked_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![
                        key.id.0.as_bytes(),
                        key.tenant_id.0.as_bytes(),
                        key.name,
                        key.prefix,
                        key.hash.0,
                        micros(key.created_at),
                        key.revoked_at.map(micros)
                    ],
                )?;
                Ok(())
            })
            .await
    }

    async fn list_api_keys(&self, tenant: TenantId) -> Result<Vec<ApiKey>> {
        self.db
            .read(move |conn| {
                let mut stmt = conn.prepare_cached(
                    "SELECT id, tenant_id, name, prefix, key_hash, created_at, revoked_at
                     FROM api_keys WHERE tenant_id = ?1 ORDER BY created_at, id",
                )?;
                rows::collect(&mut stmt, [tenant.0.as_bytes()], |row| {
                    let hash: Vec<u8> = row.get("key_hash")?;
                    Ok(ApiKey {
                        id: ApiKeyId(rows::uuid(row, "id")?),
                        tenant_id: TenantId(rows::uuid(row, "tenant_id")?),
                        name: row.get("name")?,
                        prefix: row.get("prefix")?,
                        hash: KeyHash(
                            hash.try_into()
                                .map_err(|_| crate::error::corrupt("key hash", "not 32 bytes"))?,
                        ),
                        created_at: rows::time(row, "created_at")?,
                        revoked_at: rows::opt_time(row, "revoked_at")?,
                    })
                })
            })
            .await
    }

    async fn revoke_api_key(&self, tenant: TenantId, id: ApiKeyId, at: Timestamp) -> Result<()> {
        self.db
            .write(move |conn| {
                let changed = conn.execute(
                    "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?3) WHERE id = ?1 AND tenant_id = ?2",
                    params![id.0.as_bytes(), tenant.0.as_bytes(), micros(at)],
                )?;
                if changed == 0 {
                    return Err(DomainError::not_found(ApiKeyId::KIND, id).into());
                }
                Ok(())
            })
            .await
    }

    async fn tenant_for_key(&self, hash: &KeyHash) -> Result<Option<TenantId>> {
        let hash = *hash;
        self.db
            .read(move |conn| {
                let tenant: Option<Vec<u8>> = conn
                    .prepare_cached(
                        "SELECT tenant_id FROM api_keys WHERE key_hash = ?1 AND revoked_at IS NULL",
                    )?
                    .query_row([hash.0], |row| row.get(0))
                    .optional()?;
                tenant
                    .map(|bytes| Ok(TenantId(crate::codec::uuid_from(&bytes)?)))
                    .transpose()
            })
            .await
    }

    async fn admin_key_hash(&self) -> Result<Option<KeyHash>> {
        self.db
            .read(|conn| {
                let stored: Option<Vec<u8>> = conn
                    .query_row(
                        "SELECT value FROM settings WHERE key = ?1",
                        [ADMIN_KEY_SETTING],
                        |row| row.get(0),
                    )
                    .optional()?;
                stored
                    .map(|bytes| {
                        bytes
                            .try_into()
                            .map(KeyHash)
                            .map_err(|_| crate::error::corrupt("admin key hash", "not 32 bytes"))
                    })
                    .transpose()
            })
            .await
    }

    async fn set_admin_key_hash(&self, hash: &KeyHash) -> Result<()> {
        let hash = *hash;
        self.db
            .write(move |conn| {
                conn.execute(
                    "INSERT INTO settings (key, value) VALUES (?1, ?2)
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    params![ADMIN_KEY_SETTING, hash.0],
                )?;
                Ok(())
            })
            .await
    }
}

pub(crate) fn tenant_from_row(row: &rusqlite::Row<'_>) -> Result<Tenant, Error> {
    Ok(Tenant {
        id: TenantId(rows::uuid(row, "id")?),
        name: row.get("name")?,
        created_at: rows::time(row, "created_at")?,
    })
}
