//! Procedural memory: procedures and every version of them.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use octopus_core::DomainCode;
use octopus_core::procedure::{
    self, Decision, NewVersion, Procedure, ProcedureContent, ProcedureFilter, ProcedureStep,
    ProcedureVersion, ServingProcedure, VersionStatus,
};
use octopus_core::{AgentId, Error as DomainError, ProcedureId, Result, TenantId, Timestamp};
use sqlx_core::executor::Executor;
use sqlx_core::query::query;
use sqlx_core::query_builder::QueryBuilder;
use sqlx_core::query_scalar::query_scalar;
use sqlx_core::row::Row;
use sqlx_postgres::{PgRow, Postgres};

use crate::error::{Error, corrupt, unique_conflict};
use crate::rows::{Tx, int, json_at, opt_u32_at, push_clause, u32_at};
use crate::vectors::{embedding_bytes, embedding_from};
use crate::{PostgresStore, domain};

pub(crate) use octopus_sql::columns::PROCEDURES as COLUMNS;

pub(crate) const VERSION_COLUMNS: &str =
    "version, name, description, trigger_pattern, steps, embedding, status, created_by,
    created_at, decided_by, decided_at";

#[async_trait]
impl octopus_core::store::ProcedureStore for PostgresStore {
    async fn create_procedure(
        &self,
        tenant: TenantId,
        id: ProcedureId,
        agent: Option<AgentId>,
        version: NewVersion,
        now: Timestamp,
    ) -> Result<Procedure> {
        domain(async {
            let mut tx = self.pool.begin().await?;
            let content = &version.content;
            let inserted = query(
                "INSERT INTO procedures (id, tenant_id, agent_id, name, description, trigger_pattern, steps,
                                         embedding, is_active, is_approved, version, latest_version,
                                         created_at, updated_at, created_by)
                 VALUES ($1, $2, $3, $4, $5, $6, $7::text::json, $8, true, false, 1, 1, $9, $9, $10)",
            )
            .bind(id.0)
            .bind(tenant.0)
            .bind(agent.map(|a| a.0))
            .bind(&content.name)
            .bind(&content.description)
            .bind(&content.trigger_pattern)
            .bind(steps_json(&content.steps))
            .bind(version.embedding.as_deref().map(embedding_bytes))
            .bind(now)
            .bind(&version.created_by)
            .execute(&mut *tx)
            .await;
            name_conflict(inserted, &content.name)?;
            insert_version(&mut tx, (tenant, agent), id, 1, &version, now).await?;
            bump(&mut tx, tenant).await?;
            let procedure = get(&mut *tx, tenant, id).await?;
            tx.commit().await?;
            Ok(procedure)
        })
        .await
    }

    async fn get_procedure(&self, tenant: TenantId, id: ProcedureId) -> Result<Procedure> {
        domain(get(&self.pool, tenant, id)).await
    }

    async fn list_procedures(
        &self,
        tenant: TenantId,
        filter: &ProcedureFilter,
    ) -> Result<Vec<Procedure>> {
        domain(async {
            let mut sql = QueryBuilder::<Postgres>::new(format!(
                "SELECT {COLUMNS} FROM procedures WHERE tenant_id = "
            ));
            sql.push_bind(tenant.0);
            if let Some((clause, agent)) =
                octopus_sql::procedure_scope(filter.agent_id, filter.shared)
            {
                push_clause(&mut sql, clause, agent.map(|a| a.0));
            }
            if let Some(active) = filter.active {
                sql.push(" AND is_active = ").push_bind(active);
            }
            match filter.approved {
                Some(true) => sql.push(" AND serving_version IS NOT NULL"),
                Some(false) => sql.push(" AND serving_version IS NULL"),
                None => &mut sql,
            };
            if let Some(like) = filter.text_pattern() {
                sql.push(" AND (lower(name) LIKE ")
                    .push_bind(like.clone())
                    .push(" OR lower(COALESCE(description, '')) LIKE ")
                    .push_bind(like)
                    .push(")");
            }
            sql.push(" ORDER BY created_at DESC, id DESC LIMIT ")
                .push_bind(i64::from(filter.page.limit))
                .push(" OFFSET ")
                .push_bind(i64::from(filter.page.offset));
            let rows = sql.build().fetch_all(&self.pool).await?;
            rows.iter().map(procedure_from_row).collect()
        })
        .await
    }

    async fn add_procedure_version(
        &self,
        tenant: TenantId,
        id: ProcedureId,
        version: NewVersion,
        now: Timestamp,
    ) -> Result<Procedure> {
        domain(async {
            let (mut tx, current) = self.lock(tenant, id).await?;
            let next = current.latest_version + 1;
            query("UPDATE procedure_versions SET status = 'superseded' WHERE procedure_id = $1 AND status = 'pending'")
                .bind(id.0)
                .execute(&mut *tx)
                .await?;
            insert_version(&mut tx, (tenant, current.agent_id), id, next, &version, now).await?;
            query("UPDATE procedures SET latest_version = $2, updated_at = $3 WHERE id = $1")
                .bind(id.0)
                .bind(int(next))
                .bind(now)
                .execute(&mut *tx)
                .await?;
            if current.serving_version.is_none() {
                let shown = Shown {
                    version: next,
                    content: &version.content,
                    embedding: version.embedding.as_deref(),
                    created_by: version.created_by.as_deref(),
                };
                show(&mut tx, id, &shown).await?;
            }
            self.finish(tx, tenant, id).await
        })
        .await
    }

    async fn decide_procedure(
        &self,
        tenant: TenantId,
        id: ProcedureId,
        decision: Decision,
        by: Option<String>,
        now: Timestamp,
    ) -> Result<Procedure> {
        domain(async {
            let (mut tx, current) = self.lock(tenant, id).await?;
            let Some(pending) = current.pending_version else {
                return Err(DomainError::conflict(
                    DomainCode::NoPendingVersion,
                    format!("procedure {id} has no version waiting for a decision"),
                )
                .into());
            };
            let status = match decision {
                Decision::Approve => VersionStatus::Approved,
                Decision::Reject => VersionStatus::Rejected,
            };
            query(
                "UPDATE procedure_versions SET status = $3, decided_by = $4, decided_at = $5
                 WHERE procedure_id = $1 AND version = $2",
            )
            .bind(id.0)
            .bind(int(pending))
            .bind(status.as_str())
            .bind(&by)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            match decision {
                Decision::Approve => {
                    serve(&mut tx, tenant, id, pending, by.as_deref(), now).await?
                }
                Decision::Reject => {
                    query("UPDATE procedures SET updated_at = $2 WHERE id = $1")
                        .bind(id.0)
                        .bind(now)
                        .execute(&mut *tx)
                        .await?;
                }
            }
            self.finish(tx, tenant, id).await
        })
        .await
    }

    async fn rollback_procedure(
        &self,
        tenant: TenantId,
        id: ProcedureId,
        version: u32,
        now: Timestamp,
    ) -> Result<Procedure> {
        domain(async {
            let (mut tx, _) = self.lock(tenant, id).await?;
            let found = version_row(&mut *tx, id, version)
                .await?
                .map(|(found, _)| found);
            let found = procedure::rollback_target(id, version, found)?;
            serve(
                &mut tx,
                tenant,
                id,
                version,
                found.decided_by.as_deref(),
                now,
            )
            .await?;
            self.finish(tx, tenant, id).await
        })
        .await
    }

    async fn set_procedure_active(
        &self,
        tenant: TenantId,
        id: ProcedureId,
        active: bool,
        now: Timestamp,
    ) -> Result<Procedure> {
        domain(async {
            let (mut tx, current) = self.lock(tenant, id).await?;
            let updated =
                query("UPDATE procedures SET is_active = $2, updated_at = $3 WHERE id = $1")
                    .bind(id.0)
                    .bind(active)
                    .bind(now)
                    .execute(&mut *tx)
                    .await;
            name_conflict(updated, &current.name)?;
            self.finish(tx, tenant, id).await
        })
        .await
    }

    async fn delete_procedure(&self, tenant: TenantId, id: ProcedureId) -> Result<()> {
        domain(async {
            let (mut tx, _) = self.lock(tenant, id).await?;
            query("DELETE FROM procedure_versions WHERE procedure_id = $1 AND tenant_id = $2")
                .bind(id.0)
                .bind(tenant.0)
                .execute(&mut *tx)
                .await?;
            query("DELETE FROM procedures WHERE id = $1 AND tenant_id = $2")
                .bind(id.0)
                .bind(tenant.0)
                .execute(&mut *tx)
                .await?;
            bump(&mut tx, tenant).await?;
            Ok(tx.commit().await?)
        })
        .await
    }

    async fn procedure_versions(
        &self,
        tenant: TenantId,
        id: ProcedureId,
    ) -> Result<Vec<ProcedureVersion>> {
        domain(async {
            get(&self.pool, tenant, id).await?;
            let rows = query(&format!(
                "SELECT {VERSION_COLUMNS} FROM procedure_versions WHERE procedure_id = $1 AND tenant_id = $2 ORDER BY version"
            ))
            .bind(id.0)
            .bind(tenant.0)
            .fetch_all(&self.pool)
            .await?;
            rows.iter().map(|row| Ok(version_from_row(row)?.0)).collect()
        })
        .await
    }

    async fn serving_procedures(
        &self,
        tenant: TenantId,
        agent: AgentId,
    ) -> Result<Vec<ServingProcedure>> {
        domain(async {
            let rows = query(
                "SELECT id, agent_id, serving_version, name, description, trigger_pattern, steps, embedding
                 FROM procedures
                 WHERE tenant_id = $1 AND (agent_id = $2 OR agent_id IS NULL)
                   AND is_active AND serving_version IS NOT NULL",
            )
            .bind(tenant.0)
            .bind(agent.0)
            .fetch_all(&self.pool)
            .await?;
            rows.iter()
                .map(|row| {
                    let embedding: Option<Vec<u8>> = row.try_get("embedding")?;
                    Ok(ServingProcedure {
                        id: ProcedureId(row.try_get("id")?),
                        agent_id: row.try_get::<Option<uuid::Uuid>, _>("agent_id")?.map(AgentId),
                        version: u32_at(row, "serving_version")?,
                        content: content_from_row(row)?,
                        embedding: embedding.map(|b| embedding_from(&b)).transpose()?,
                    })
                })
                .collect()
        })
        .await
    }

    async fn procedures_revision(&self, tenant: TenantId) -> Result<u64> {
        domain(async {
            let revision: Option<i64> =
                query_scalar("SELECT revision FROM procedure_revisions WHERE tenant_id = $1")
                    .bind(tenant.0)
                    .fetch_optional(&self.pool)
                    .await?;
            Ok(revision.unwrap_or(0).unsigned_abs())
        })
        .await
    }
}

impl PostgresStore {
    /// Begins a change to a procedure: its row stays locked until the
    /// transaction ends.
    async fn lock(
        &self,
        tenant: TenantId,
        id: ProcedureId,
    ) -> Result<(Tx<'static>, Procedure), Error> {
        let mut tx = self.pool.begin().await?;
        let row = query(&format!(
            "SELECT {COLUMNS} FROM procedures WHERE id = $1 AND tenant_id = $2 FOR UPDATE"
        ))
        .bind(id.0)
        .bind(tenant.0)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| DomainError::not_found(ProcedureId::KIND, id))?;
        Ok((tx, procedure_from_row(&row)?))
    }

    /// Counts the change in the tenant's revision and commits it.
    async fn finish(
        &self,
        mut tx: Tx<'static>,
        tenant: TenantId,
        id: ProcedureId,
    ) -> Result<Procedure, Error> {
        bump(&mut tx, tenant).await?;
        let procedure = get(&mut *tx, tenant, id).await?;
        tx.commit().await?;
        Ok(procedure)
    }
}

type StoredVersion = (ProcedureVersion, Option<Vec<f32>>);

pub(crate) fn steps_json(steps: &[ProcedureStep]) -> String {
    serde_json::to_string(steps).unwrap_or_else(|_| "[]".into())
}

/// Stores a version waiting for approval, and announces it
/// (`procedure.pending`).
pub(crate) async fn insert_version(
    tx: &mut Tx<'_>,
    (tenant, agent): (TenantId, Option<AgentId>),
    id: ProcedureId,
    number: u32,
    version: &NewVersion,
    at: DateTime<Utc>,
) -> Result<(), Error> {
    let content = &version.content;
    query(
        "INSERT INTO procedure_versions (procedure_id, tenant_id, version, name, description, trigger_pattern,
                                         steps, embedding, status, created_by, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7::text::json, $8, 'pending', $9, $10)",
    )
    .bind(id.0)
    .bind(tenant.0)
    .bind(int(number))
    .bind(&content.name)
    .bind(&content.description)
    .bind(&content.trigger_pattern)
    .bind(steps_json(&content.steps))
    .bind(version.embedding.as_deref().map(embedding_bytes))
    .bind(&version.created_by)
    .bind(at)
    .execute(&mut **tx)
    .await?;
    let pending = octopus_core::webhook::procedure_pending(tenant, id, agent, number, at);
    crate::webhooks::record(tx, &pending).await?;
    Ok(())
}

/// What a procedure's row shows: the serving version, or before any
/// approval the newest.
struct Shown<'a> {
    version: u32,
    content: &'a ProcedureContent,
    embedding: Option<&'a [f32]>,
    created_by: Option<&'a str>,
}

async fn show(tx: &mut Tx<'_>, id: ProcedureId, shown: &Shown<'_>) -> Result<(), Error> {
    let content = shown.content;
    let updated = query(
        "UPDATE procedures SET version = $2, name = $3, description = $4, trigger_pattern = $5,
                               steps = $6::text::json, embedding = $7, created_by = $8
         WHERE id = $1",
    )
    .bind(id.0)
    .bind(int(shown.version))
    .bind(&content.name)
    .bind(&content.description)
    .bind(&content.trigger_pattern)
    .bind(steps_json(&content.steps))
    .bind(shown.embedding.map(embedding_bytes))
    .bind(shown.created_by)
    .execute(&mut **tx)
    .await;
    name_conflict(updated, &content.name).map(drop)
}

async fn serve(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    id: ProcedureId,
    number: u32,
    approved_by: Option<&str>,
    at: DateTime<Utc>,
) -> Result<(), Error> {
    let (version, embedding) = version_row(&mut **tx, id, number).await?.ok_or_else(|| {
        Error::from(DomainError::not_found(
            octopus_core::ObjectKind::ProcedureVersion,
            format!("{id} v{number}"),
        ))
    })?;
    let content = version.content();
    let shown = Shown {
        version: number,
        content: &content,
        embedding: embedding.as_deref(),
        created_by: version.created_by.as_deref(),
    };
    show(tx, id, &shown).await?;
    query(
        "UPDATE procedures SET serving_version = $3, is_approved = true, approved_by = $4, updated_at = $5
         WHERE id = $1 AND tenant_id = $2",
    )
    .bind(id.0)
    .bind(tenant.0)
    .bind(int(number))
    .bind(approved_by)
    .bind(at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn version_row<'c>(
    conn: impl Executor<'c, Database = Postgres>,
    id: ProcedureId,
    number: u32,
) -> Result<Option<StoredVersion>, Error> {
    query(&format!(
        "SELECT {VERSION_COLUMNS} FROM procedure_versions WHERE procedure_id = $1 AND version = $2"
    ))
    .bind(id.0)
    .bind(int(number))
    .fetch_optional(conn)
    .await?
    .as_ref()
    .map(version_from_row)
    .transpose()
}

pub(crate) async fn bump(tx: &mut Tx<'_>, tenant: TenantId) -> Result<(), Error> {
    query(
        "INSERT INTO procedure_revisions (tenant_id, revision) VALUES ($1, 1)
         ON CONFLICT (tenant_id) DO UPDATE SET revision = procedure_revisions.revision + 1",
    )
    .bind(tenant.0)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn get<'c>(
    conn: impl Executor<'c, Database = Postgres>,
    tenant: TenantId,
    id: ProcedureId,
) -> Result<Procedure, Error> {
    let row = query(&format!(
        "SELECT {COLUMNS} FROM procedures WHERE id = $1 AND tenant_id = $2"
    ))
    .bind(id.0)
    .bind(tenant.0)
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| DomainError::not_found(ProcedureId::KIND, id))?;
    procedure_from_row(&row)
}

pub(crate) fn name_conflict<T>(
    outcome: std::result::Result<T, sqlx_core::Error>,
    name: &str,
) -> Result<T, Error> {
    unique_conflict(outcome, DomainCode::ProcedureNameTaken, || {
        format!("an active procedure named `{name}` exists for this agent")
    })
}

fn content_from_row(row: &PgRow) -> Result<ProcedureContent, Error> {
    Ok(ProcedureContent {
        name: row.try_get("name")?,
        description: row.try_get("description")?,
        trigger_pattern: row.try_get("trigger_pattern")?,
        steps: json_at(row, "steps", "procedure steps")?,
    })
}

pub(crate) fn procedure_from_row(row: &PgRow) -> Result<Procedure, Error> {
    let content = content_from_row(row)?;
    let serving = opt_u32_at(row, "serving_version")?;
    Ok(Procedure {
        id: ProcedureId(row.try_get("id")?),
        tenant_id: TenantId(row.try_get("tenant_id")?),
        agent_id: row
            .try_get::<Option<uuid::Uuid>, _>("agent_id")?
            .map(AgentId),
        name: content.name,
        description: content.description,
        trigger_pattern: content.trigger_pattern,
        steps: content.steps,
        is_active: row.try_get("is_active")?,
        is_approved: serving.is_some(),
        version: u32_at(row, "version")?,
        serving_version: serving,
        latest_version: u32_at(row, "latest_version")?,
        pending_version: opt_u32_at(row, "pending_version")?,
        created_by: row.try_get("created_by")?,
        approved_by: row.try_get("approved_by")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub(crate) fn version_from_row(row: &PgRow) -> Result<StoredVersion, Error> {
    let status: String = row.try_get("status")?;
    let embedding: Option<Vec<u8>> = row.try_get("embedding")?;
    Ok((
        ProcedureVersion {
            version: u32_at(row, "version")?,
            name: row.try_get("name")?,
            description: row.try_get("description")?,
            trigger_pattern: row.try_get("trigger_pattern")?,
            steps: json_at(row, "steps", "procedure steps")?,
            status: VersionStatus::parse(&status)
                .ok_or_else(|| corrupt("version status", status))?,
            created_by: row.try_get("created_by")?,
            created_at: row.try_get("created_at")?,
            decided_by: row.try_get("decided_by")?,
            decided_at: row.try_get("decided_at")?,
        },
        embedding.map(|b| embedding_from(&b)).transpose()?,
    ))
}
