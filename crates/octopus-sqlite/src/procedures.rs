//! Procedures and their versions. The `procedures` row shows the serving
//! version (or, before any approval, the newest); `procedure_versions` keeps
//! them all. Every write bumps the tenant's row in `procedure_revisions`.

use async_trait::async_trait;
use octopus_core::DomainCode;
use octopus_core::procedure::{
    self, Decision, NewVersion, Procedure, ProcedureContent, ProcedureFilter, ProcedureStep,
    ProcedureVersion, ServingProcedure, VersionStatus,
};
use octopus_core::{AgentId, Error as DomainError, ProcedureId, Result, TenantId, Timestamp};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::SqliteStore;
use crate::codec::{self, micros};
use crate::error::{Error, corrupt};
use crate::rows::{self, Filters, blob};

pub(crate) use octopus_sql::columns::PROCEDURES as COLUMNS;

#[async_trait]
impl octopus_core::store::ProcedureStore for SqliteStore {
    async fn create_procedure(
        &self,
        tenant: TenantId,
        id: ProcedureId,
        agent: Option<AgentId>,
        version: NewVersion,
        now: Timestamp,
    ) -> Result<Procedure> {
        self.db
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let at = micros(now);
                let content = &version.content;
                let inserted = tx.execute(
                    "INSERT INTO procedures (id, tenant_id, agent_id, name, description, trigger_pattern, steps,
                                             embedding, is_active, is_approved, version, latest_version,
                                             created_at, updated_at, created_by)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, 0, 1, 1, ?9, ?9, ?10)",
                    params![
                        id.0.as_bytes(),
                        tenant.0.as_bytes(),
                        agent.map(|a| *a.0.as_bytes()),
                        content.name,
                        content.description,
                        content.trigger_pattern,
                        steps_json(&content.steps),
                        version.embedding.as_deref().map(codec::embedding_bytes),
                        at,
                        version.created_by,
                    ],
                );
                name_conflict(inserted, &content.name)?;
                insert_version(&tx, (tenant, agent), id, 1, &version, now)?;
                bump(&tx, tenant)?;
                let procedure = get(&tx, tenant, id)?;
                tx.commit()?;
                Ok(procedure)
            })
            .await
    }

    async fn get_procedure(&self, tenant: TenantId, id: ProcedureId) -> Result<Procedure> {
        self.db.read(move |conn| get(conn, tenant, id)).await
    }

    async fn list_procedures(
        &self,
        tenant: TenantId,
        filter: &ProcedureFilter,
    ) -> Result<Vec<Procedure>> {
        let filter = filter.clone();
        self.db
            .read(move |conn| {
                let mut filters = Filters::default();
                filters.push("tenant_id = ?", blob(&tenant.0));
                if let Some((clause, agent)) = octopus_sql::procedure_scope(filter.agent_id, filter.shared) {
                    match agent {
                        Some(agent) => filters.push(clause, blob(&agent.0)),
                        None => filters.push_plain(clause),
                    };
                }
                if let Some(active) = filter.active {
                    filters.push("is_active = ?", Value::Integer(i64::from(active)));
                }
                match filter.approved {
                    Some(true) => filters.push_plain("serving_version IS NOT NULL"),
                    Some(false) => filters.push_plain("serving_version IS NULL"),
                    None => &mut filters,
                };
                if let Some(like) = filter.text_pattern() {
                    filters.push(
                        "(lower(name) LIKE ? OR lower(ifnull(description, '')) LIKE ?)",
                        Value::Text(like),
                    );
                }
                let limit = filters.bind(Value::Integer(i64::from(filter.page.limit)));
                let offset = filters.bind(Value::Integer(i64::from(filter.page.offset)));
                let sql = format!(
                    "SELECT {COLUMNS} FROM procedures {} ORDER BY created_at DESC, id DESC LIMIT {limit} OFFSET {offset}",
                    filters.where_sql()
                );
                let mut stmt = conn.prepare(&sql)?;
                rows::collect(
                    &mut stmt,
                    rusqlite::params_from_iter(filters.params.iter()),
                    procedure_from_row,
                )
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
        self.change_procedure(tenant, id, move |tx, current| {
            let at = micros(now);
            let next = current.latest_version + 1;
            tx.execute(
                "UPDATE procedure_versions SET status = 'superseded'
                 WHERE procedure_id = ?1 AND status = 'pending'",
                [id.0.as_bytes()],
            )?;
            insert_version(tx, (tenant, current.agent_id), id, next, &version, now)?;
            tx.execute(
                "UPDATE procedures SET latest_version = ?2, updated_at = ?3 WHERE id = ?1",
                params![id.0.as_bytes(), next, at],
            )?;
            if current.serving_version.is_none() {
                let (embedding, author) =
                    (version.embedding.as_deref(), version.created_by.as_deref());
                show(tx, id, next, &version.content, embedding, author)?;
            }
            Ok(())
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
        self.change_procedure(tenant, id, move |tx, current| {
            let Some(pending) = current.pending_version else {
                return Err(DomainError::conflict(
                    DomainCode::NoPendingVersion,
                    format!("procedure {id} has no version waiting for a decision"),
                )
                .into());
            };
            let at = micros(now);
            let status = match decision {
                Decision::Approve => VersionStatus::Approved,
                Decision::Reject => VersionStatus::Rejected,
            };
            tx.execute(
                "UPDATE procedure_versions SET status = ?3, decided_by = ?4, decided_at = ?5
                 WHERE procedure_id = ?1 AND version = ?2",
                params![id.0.as_bytes(), pending, status.as_str(), by, at],
            )?;
            match decision {
                Decision::Approve => serve(tx, tenant, id, pending, by.as_deref(), at),
                Decision::Reject => {
                    tx.execute(
                        "UPDATE procedures SET updated_at = ?2 WHERE id = ?1",
                        params![id.0.as_bytes(), at],
                    )?;
                    Ok(())
                }
            }
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
        self.change_procedure(tenant, id, move |tx, _| {
            let found = version_row(tx, id, version)?.map(|(found, _)| found);
            let found = procedure::rollback_target(id, version, found)?;
            serve(
                tx,
                tenant,
                id,
                version,
                found.decided_by.as_deref(),
                micros(now),
            )
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
        self.change_procedure(tenant, id, move |tx, current| {
            let updated = tx.execute(
                "UPDATE procedures SET is_active = ?2, updated_at = ?3 WHERE id = ?1",
                params![id.0.as_bytes(), active, micros(now)],
            );
            name_conflict(updated, &current.name)
        })
        .await
    }

    async fn delete_procedure(&self, tenant: TenantId, id: ProcedureId) -> Result<()> {
        self.db
            .write(move |conn| {
                let tx =
                    conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                get(&tx, tenant, id)?;
                tx.execute(
                    "DELETE FROM procedure_versions WHERE procedure_id = ?1 AND tenant_id = ?2",
                    params![id.0.as_bytes(), tenant.0.as_bytes()],
                )?;
                tx.execute(
                    "DELETE FROM procedures WHERE id = ?1 AND tenant_id = ?2",
                    params![id.0.as_bytes(), tenant.0.as_bytes()],
                )?;
                bump(&tx, tenant)?;
                tx.commit()?;
                Ok(())
            })
            .await
    }

    async fn procedure_versions(
        &self,
        tenant: TenantId,
        id: ProcedureId,
    ) -> Result<Vec<ProcedureVersion>> {
        self.db
            .read(move |conn| {
                get(conn, tenant, id)?;
                let mut stmt = conn.prepare_cached(
                    "SELECT * FROM procedure_versions WHERE procedure_id = ?1 AND tenant_id = ?2 ORDER BY version",
                )?;
                let versions = rows::collect(
                    &mut stmt,
                    params![id.0.as_bytes(), tenant.0.as_bytes()],
                    version_from_row,
                )?;
                Ok(versions.into_iter().map(|(version, _)| version).collect())
            })
            .await
    }

    async fn serving_procedures(
        &self,
        tenant: TenantId,
        agent: AgentId,
    ) -> Result<Vec<ServingProcedure>> {
        self.db
            .read(move |conn| {
                let mut stmt = conn.prepare_cached(
                    "SELECT id, agent_id, serving_version, name, description, trigger_pattern, steps, embedding
                     FROM procedures
                     WHERE tenant_id = ?1 AND (agent_id = ?2 OR agent_id IS NULL)
                       AND is_active = 1 AND serving_version IS NOT NULL",
                )?;
                rows::collect(
                    &mut stmt,
                    params![tenant.0.as_bytes(), agent.0.as_bytes()],
                    |row| {
                        let embedding: Option<Vec<u8>> = row.get("embedding")?;
                        Ok(ServingProcedure {
                            id: ProcedureId(rows::uuid(row, "id")?),
                            agent_id: rows::opt_uuid(row, "agent_id")?.map(AgentId),
                            version: row.get("serving_version")?,
                            content: content_from_row(row)?,
                            embedding: embedding.map(|b| codec::embedding_from(&b)).transpose()?,
                        })
                    },
                )
            })
            .await
    }

    async fn procedures_revision(&self, tenant: TenantId) -> Result<u64> {
        self.db
            .read(move |conn| {
                let revision: Option<i64> = conn
                    .prepare_cached(
                        "SELECT revision FROM procedure_revisions WHERE tenant_id = ?1",
                    )?
                    .query_row([tenant.0.as_bytes()], |r| r.get(0))
                    .optional()?;
                Ok(revision.unwrap_or(0).unsigned_abs())
            })
            .await
    }
}

impl SqliteStore {
    /// Changes one procedure in one transaction: `change` sees it as it is,
    /// the tenant's revision moves, and it is read back as it is after.
    async fn change_procedure(
        &self,
        tenant: TenantId,
        id: ProcedureId,
        change: impl FnOnce(&Transaction<'_>, &Procedure) -> Result<(), Error> + Send + 'static,
    ) -> Result<Procedure> {
        self.db
            .write(move |conn| {
                let tx =
                    conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let current = get(&tx, tenant, id)?;
                change(&tx, &current)?;
                bump(&tx, tenant)?;
                let procedure = get(&tx, tenant, id)?;
                tx.commit()?;
                Ok(procedure)
            })
            .await
    }
}

/// A version as stored: what the API shows, and its vector.
type StoredVersion = (ProcedureVersion, Option<Vec<f32>>);

pub(crate) fn steps_json(steps: &[ProcedureStep]) -> String {
    serde_json::to_string(steps).unwrap_or_else(|_| "[]".into())
}

/// Stores a version waiting for approval, and announces it
/// (`procedure.pending`).
fn insert_version(
    tx: &Transaction<'_>,
    (tenant, agent): (TenantId, Option<AgentId>),
    id: ProcedureId,
    number: u32,
    version: &NewVersion,
    now: Timestamp,
) -> Result<(), Error> {
    let at = micros(now);
    let content = &version.content;
    tx.execute(
        "INSERT INTO procedure_versions (procedure_id, tenant_id, version, name, description, trigger_pattern,
                                         steps, embedding, status, created_by, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'pending', ?9, ?10)",
        params![
            id.0.as_bytes(),
            tenant.0.as_bytes(),
            number,
            content.name,
            content.description,
            content.trigger_pattern,
            steps_json(&content.steps),
            version.embedding.as_deref().map(codec::embedding_bytes),
            version.created_by,
            at
        ],
    )?;
    let pending = octopus_core::webhook::procedure_pending(tenant, id, agent, number, now);
    crate::webhooks::record(tx, &pending)?;
    Ok(())
}

/// Shows `version`'s content on the procedure row.
fn show(
    tx: &Transaction<'_>,
    id: ProcedureId,
    version: u32,
    content: &ProcedureContent,
    embedding: Option<&[f32]>,
    created_by: Option<&str>,
) -> Result<(), Error> {
    let updated = tx.execute(
        "UPDATE procedures SET version = ?2, name = ?3, description = ?4, trigger_pattern = ?5, steps = ?6,
                               embedding = ?7, created_by = ?8
         WHERE id = ?1",
        params![
            id.0.as_bytes(),
            version,
            content.name,
            content.description,
            content.trigger_pattern,
            steps_json(&content.steps),
            embedding.map(codec::embedding_bytes),
            created_by
        ],
    );
    name_conflict(updated, &content.name)
}

/// Makes a stored version the one that serves.
fn serve(
    tx: &Transaction<'_>,
    tenant: TenantId,
    id: ProcedureId,
    number: u32,
    approved_by: Option<&str>,
    at: i64,
) -> Result<(), Error> {
    let (version, embedding) = version_row(tx, id, number)?.ok_or_else(|| {
        Error::from(DomainError::not_found(
            octopus_core::ObjectKind::ProcedureVersion,
            format!("{id} v{number}"),
        ))
    })?;
    let content = version.content();
    show(
        tx,
        id,
        number,
        &content,
        embedding.as_deref(),
        version.created_by.as_deref(),
    )?;
    tx.execute(
        "UPDATE procedures SET serving_version = ?3, is_approved = 1, approved_by = ?4, updated_at = ?5
         WHERE id = ?1 AND tenant_id = ?2",
        params![id.0.as_bytes(), tenant.0.as_bytes(), number, approved_by, at],
    )?;
    Ok(())
}

fn version_row(
    conn: &Connection,
    id: ProcedureId,
    number: u32,
) -> Result<Option<StoredVersion>, Error> {
    let mut stmt = conn.prepare_cached(
        "SELECT * FROM procedure_versions WHERE procedure_id = ?1 AND version = ?2",
    )?;
    Ok(rows::collect(
        &mut stmt,
        params![id.0.as_bytes(), number],
        version_from_row,
    )?
    .pop())
}

pub(crate) fn bump(tx: &Transaction<'_>, tenant: TenantId) -> Result<(), Error> {
    tx.execute(
        "INSERT INTO procedure_revisions (tenant_id, revision) VALUES (?1, 1)
         ON CONFLICT (tenant_id) DO UPDATE SET revision = revision + 1",
        [tenant.0.as_bytes()],
    )?;
    Ok(())
}

fn get(conn: &Connection, tenant: TenantId, id: ProcedureId) -> Result<Procedure, Error> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM procedures WHERE id = ?1 AND tenant_id = ?2"
    ))?;
    rows::collect(
        &mut stmt,
        [id.0.as_bytes(), tenant.0.as_bytes()],
        procedure_from_row,
    )?
    .pop()
    .ok_or_else(|| DomainError::not_found(ProcedureId::KIND, id).into())
}

pub(crate) fn name_conflict(outcome: rusqlite::Result<usize>, name: &str) -> Result<(), Error> {
    rows::unique_conflict(outcome, DomainCode::ProcedureNameTaken, || {
        format!("an active procedure named `{name}` exists for this agent")
    })
}

fn content_from_row(row: &rusqlite::Row<'_>) -> Result<ProcedureContent, Error> {
    let steps: String = row.get("steps")?;
    Ok(ProcedureContent {
        name: row.get("name")?,
        description: row.get("description")?,
        trigger_pattern: row.get("trigger_pattern")?,
        steps: serde_json::from_str(&steps).map_err(|e| corrupt("procedure steps", e))?,
    })
}

pub(crate) fn procedure_from_row(row: &rusqlite::Row<'_>) -> Result<Procedure, Error> {
    let content = content_from_row(row)?;
    let serving: Option<u32> = row.get("serving_version")?;
    let latest: u32 = row.get("latest_version")?;
    Ok(Procedure {
        id: ProcedureId(rows::uuid(row, "id")?),
        tenant_id: TenantId(rows::uuid(row, "tenant_id")?),
        agent_id: rows::opt_uuid(row, "agent_id")?.map(AgentId),
        name: content.name,
        description: content.description,
        trigger_pattern: content.trigger_pattern,
        steps: content.steps,
        is_active: row.get("is_active")?,
        is_approved: serving.is_some(),
        version: row.get("version")?,
        serving_version: serving,
        latest_version: latest,
        pending_version: row.get("pending_version")?,
        created_by: row.get("created_by")?,
        approved_by: row.get("approved_by")?,
        created_at: rows::time(row, "created_at")?,
        updated_at: rows::time(row, "updated_at")?,
    })
}

pub(crate) fn version_from_row(row: &rusqlite::Row<'_>) -> Result<StoredVersion, Error> {
    let status: String = row.get("status")?;
    let steps: String = row.get("steps")?;
    let embedding: Option<Vec<u8>> = row.get("embedding")?;
    Ok((
        ProcedureVersion {
            version: row.get("version")?,
            name: row.get("name")?,
            description: row.get("description")?,
            trigger_pattern: row.get("trigger_pattern")?,
            steps: serde_json::from_str(&steps).map_err(|e| corrupt("procedure steps", e))?,
            status: VersionStatus::parse(&status)
                .ok_or_else(|| corrupt("version status", status))?,
            created_by: row.get("created_by")?,
            created_at: rows::time(row, "created_at")?,
            decided_by: row.get("decided_by")?,
            decided_at: rows::opt_time(row, "decided_at")?,
        },
        embedding.map(|b| codec::embedding_from(&b)).transpose()?,
    ))
}
