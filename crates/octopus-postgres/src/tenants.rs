//! The tenant and API key port on PostgreSQL.

use async_trait::async_trait;
use octopus_core::store::{Page, TenantStore};
use octopus_core::tenant::{ApiKey, KeyHash, Tenant};
use octopus_core::{ApiKeyId, Error as DomainError, Result, TenantId, Timestamp};
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;
use sqlx_core::row::Row;
use sqlx_postgres::PgRow;

use crate::PostgresStore;
use crate::error::{Error, corrupt};

const ADMIN_KEY_SETTING: &str = "admin_key_sha256";

#[async_trait]
impl TenantStore for PostgresStore {
    async fn create_tenant(&self, tenant: &Tenant) -> Result<()> {
        query("INSERT INTO tenants (id, name, created_at) VALUES ($1, $2, $3)")
            .bind(tenant.id.0)
            .bind(&tenant.name)
            .bind(tenant.created_at)
            .execute(&self.pool)
            .await
            .map_err(Error::from)?;
        Ok(())
    }

    async fn get_tenant(&self, id: TenantId) -> Result<Tenant> {
        let row = query("SELECT id, name, created_at FROM tenants WHERE id = $1")
            .bind(id.0)
            .fetch_optional(&self.pool)
            .await
            .map_err(Error::from)?
            .ok_or_else(|| DomainError::not_found(TenantId::KIND, id))?;
        Ok(tenant_from_row(&row)?)
    }

    async fn list_tenants(&self, page: Page) -> Result<Vec<Tenant>> {
        let rows = query(
            "SELECT id, name, created_at FROM tenants ORDER BY created_at, id LIMIT $1 OFFSET $2",
        )
        .bind(i64::from(page.limit))
        .bind(i64::from(page.offset))
        .fetch_all(&self.pool)
        .await
        .map_err(Error::from)?;
        Ok(rows
            .iter()
            .map(tenant_from_row)
            .collect::<Result<_, Error>>()?)
    }

    async fn create_api_key(&self, key: &ApiKey) -> Result<()> {
        let inserted = query(
            "INSERT INTO api_keys (id, tenant_id, name, prefix, key_hash, created_at, revoked_at)
             SELECT $1, id, $3, $4, $5, $6, $7 FROM tenants WHERE id = $2",
        )
        .bind(key.id.0)
        .bind(key.tenant_id.0)
        .bind(&key.name)
        .bind(&key.prefix)
        .bind(&key.hash.0[..])
        .bind(key.created_at)
        .bind(key.revoked_at)
        .execute(&self.pool)
        .await
        .map_err(Error::from)?;
        if inserted.rows_affected() == 0 {
            return Err(DomainError::not_found(TenantId::KIND, key.tenant_id));
        }
        Ok(())
    }

    async fn list_api_keys(&self, tenant: TenantId) -> Result<Vec<ApiKey>> {
        let rows = query(
            "SELECT id, tenant_id, name, prefix, key_hash, created_at, revoked_at
             FROM api_keys WHERE tenant_id = $1 ORDER BY created_at, id",
        )
        .bind(tenant.0)
        .fetch_all(&self.pool)
        .await
        .map_err(Error::from)?;
        let key = |row: &PgRow| -> Result<ApiKey, Error> {
            Ok(ApiKey {
                id: ApiKeyId(row.try_get("id")?),
                tenant_id: TenantId(row.try_get("tenant_id")?),
                name: row.try_get("name")?,
                prefix: row.try_get("prefix")?,
                hash: key_hash(row.try_get("key_hash")?)?,
                created_at: row.try_get("created_at")?,
                revoked_at: row.try_get("revoked_at")?,
            })
        };
        Ok(rows.iter().map(key).collect::<Result<_, Error>>()?)
    }

    async fn revoke_api_key(&self, tenant: TenantId, id: ApiKeyId, at: Timestamp) -> Result<()> {
        let changed = query(
            "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $3) WHERE id = $1 AND tenant_id = $2",
        )
        .bind(id.0)
        .bind(tenant.0)
        .bind(at)
        .execute(&self.pool)
        .await
        .map_err(Error::from)?;
        if changed.rows_affected() == 0 {
            return Err(DomainError::not_found(ApiKeyId::KIND, id));
        }
        Ok(())
    }

    async fn tenant_for_key(&self, hash: &KeyHash) -> Result<Option<TenantId>> {
        let tenant: Option<uuid::Uuid> = query_scalar(
            "SELECT tenant_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL",
        )
        .bind(&hash.0[..])
        .fetch_optional(&self.pool)
        .await
        .map_err(Error::from)?;
        Ok(tenant.map(TenantId))
    }

    async fn admin_key_hash(&self) -> Result<Option<KeyHash>> {
        let stored: Option<Vec<u8>> = query_scalar("SELECT value FROM settings WHERE key = $1")
            .bind(ADMIN_KEY_SETTING)
            .fetch_optional(&self.pool)
            .await
            .map_err(Error::from)?;
        Ok(stored.map(key_hash).transpose()?)
    }

    async fn set_admin_key_hash(&self, hash: &KeyHash) -> Result<()> {
        query(
            "INSERT INTO settings (key, value) VALUES ($1, $2)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )
        .bind(ADMIN_KEY_SETTING)
        .bind(&hash.0[..])
        .execute(&self.pool)
        .await
        .map_err(Error::from)?;
        Ok(())
    }
}

fn key_hash(bytes: Vec<u8>) -> Result<KeyHash, Error> {
    bytes
        .try_into()
        .map(KeyHash)
        .map_err(|_| corrupt("key hash", "not 32 bytes"))
}

pub(crate) fn tenant_from_row(row: &PgRow) -> Result<Tenant, Error> {
    Ok(Tenant {
        id: TenantId(row.try_get("id")?),
        name: row.try_get("name")?,
        created_at: row.try_get("created_at")?,
    })
}
