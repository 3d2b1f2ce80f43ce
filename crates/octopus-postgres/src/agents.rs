//! The agent port on PostgreSQL.

use async_trait::async_trait;
use octopus_core::DomainCode;
use octopus_core::agent::Agent;
use octopus_core::store::{AgentStore, Page};
use octopus_core::{AgentId, Error as DomainError, Result, TenantId, Timestamp};
use sqlx_core::executor::Executor;
use sqlx_core::query::query;
use sqlx_core::row::Row;
use sqlx_postgres::{PgRow, Postgres};

use crate::error::{Error, unique_conflict};
use crate::rows::{json, json_at};
use crate::{PostgresStore, domain};

pub(crate) use octopus_sql::columns::AGENTS as COLUMNS;

#[async_trait]
impl AgentStore for PostgresStore {
    async fn create_agent(&self, agent: &Agent) -> Result<()> {
        domain(async {
            name_conflict(insert_agent(&self.pool, agent).await, &agent.name).map(drop)
        })
        .await
    }

    async fn get_agent(&self, tenant: TenantId, id: AgentId) -> Result<Agent> {
        domain(get_agent(&self.pool, tenant, id)).await
    }

    async fn list_agents(&self, tenant: TenantId, page: Page) -> Result<Vec<Agent>> {
        domain(async {
            let rows = query(&format!(
                "SELECT {COLUMNS} FROM agents WHERE tenant_id = $1 AND is_active
                 ORDER BY created_at, id LIMIT $2 OFFSET $3"
            ))
            .bind(tenant.0)
            .bind(i64::from(page.limit))
            .bind(i64::from(page.offset))
            .fetch_all(&self.pool)
            .await?;
            rows.iter().map(agent_from_row).collect()
        })
        .await
    }

    async fn update_agent(&self, agent: &Agent) -> Result<()> {
        domain(async {
            let updated = query(
                "UPDATE agents SET name = $3, system_prompt = $4, llm_provider = $5, model = $6, llm_config = $7,
                                   memory_config = $8, is_active = $9, updated_at = $10
                 WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL",
            )
            .bind(agent.id.0)
            .bind(agent.tenant_id.0)
            .bind(&agent.name)
            .bind(&agent.system_prompt)
            .bind(agent.llm.provider.as_str())
            .bind(&agent.llm.model)
            .bind(json(&agent.llm))
            .bind(json(&agent.memory))
            .bind(agent.is_active)
            .bind(agent.updated_at)
            .execute(&self.pool)
            .await;
            match name_conflict(updated, &agent.name)?.rows_affected() {
                0 => Err(DomainError::not_found(AgentId::KIND, agent.id).into()),
                _ => Ok(()),
            }
        })
        .await
    }

    async fn delete_agent(&self, tenant: TenantId, id: AgentId, at: Timestamp) -> Result<()> {
        domain(async {
            let deleted = query(
                "UPDATE agents SET deleted_at = $3, is_active = false, updated_at = $3
                 WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL",
            )
            .bind(id.0)
            .bind(tenant.0)
            .bind(at)
            .execute(&self.pool)
            .await?;
            match deleted.rows_affected() {
                0 => Err(DomainError::not_found(AgentId::KIND, id).into()),
                _ => Ok(()),
            }
        })
        .await
    }
}

pub(crate) async fn insert_agent<'c>(
    conn: impl Executor<'c, Database = Postgres>,
    agent: &Agent,
) -> Result<u64, sqlx_core::Error> {
    let inserted = query(
        "INSERT INTO agents (id, tenant_id, name, system_prompt, llm_provider, model, llm_config,
                             memory_config, is_active, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(agent.id.0)
    .bind(agent.tenant_id.0)
    .bind(&agent.name)
    .bind(&agent.system_prompt)
    .bind(agent.llm.provider.as_str())
    .bind(&agent.llm.model)
    .bind(json(&agent.llm))
    .bind(json(&agent.memory))
    .bind(agent.is_active)
    .bind(agent.created_at)
    .bind(agent.updated_at)
    .execute(conn)
    .await?;
    Ok(inserted.rows_affected())
}

pub(crate) async fn get_agent<'c>(
    conn: impl Executor<'c, Database = Postgres>,
    tenant: TenantId,
    id: AgentId,
) -> Result<Agent, Error> {
    let row = query(&format!(
        "SELECT {COLUMNS} FROM agents WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL"
    ))
    .bind(id.0)
    .bind(tenant.0)
    .fetch_optional(conn)
    .await?
    .ok_or_else(|| DomainError::not_found(AgentId::KIND, id))?;
    agent_from_row(&row)
}

pub(crate) fn name_conflict<T>(
    outcome: std::result::Result<T, sqlx_core::Error>,
    name: &str,
) -> Result<T, Error> {
    unique_conflict(outcome, DomainCode::AgentNameTaken, || {
        format!("an active agent named `{name}` exists")
    })
}

pub(crate) fn agent_from_row(row: &PgRow) -> Result<Agent, Error> {
    Ok(Agent {
        id: AgentId(row.try_get("id")?),
        tenant_id: TenantId(row.try_get("tenant_id")?),
        name: row.try_get("name")?,
        system_prompt: row.try_get("system_prompt")?,
        llm: json_at(row, "llm_config", "agent llm_config")?,
        memory: json_at(row, "memory_config", "agent memory_config")?,
        is_active: row.try_get("is_active")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}
