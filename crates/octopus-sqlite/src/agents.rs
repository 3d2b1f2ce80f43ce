//! The agent port on SQLite.

use async_trait::async_trait;
use octopus_core::DomainCode;
use octopus_core::agent::Agent;
use octopus_core::store::{AgentStore, Page};
use octopus_core::{AgentId, Error as DomainError, Result, TenantId, Timestamp};
use rusqlite::{Connection, params};

use crate::SqliteStore;
use crate::codec::micros;
use crate::error::{Error, corrupt};
use crate::rows;

pub(crate) use octopus_sql::columns::AGENTS as COLUMNS;

#[async_trait]
impl AgentStore for SqliteStore {
    async fn create_agent(&self, agent: &Agent) -> Result<()> {
        let agent = agent.clone();
        self.db
            .write(move |conn| name_conflict(insert_agent(conn, &agent), &agent.name))
            .await
    }

    async fn get_agent(&self, tenant: TenantId, id: AgentId) -> Result<Agent> {
        self.db.read(move |conn| get_agent(conn, tenant, id)).await
    }

    async fn list_agents(&self, tenant: TenantId, page: Page) -> Result<Vec<Agent>> {
        self.db
            .read(move |conn| {
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM agents WHERE tenant_id = ?1 AND is_active = 1
                     ORDER BY created_at, id LIMIT ?2 OFFSET ?3"
                ))?;
                rows::collect(
                    &mut stmt,
                    params![tenant.0.as_bytes(), page.limit, page.offset],
                    agent_from_row,
                )
            })
            .await
    }

    async fn delete_agent(&self, tenant: TenantId, id: AgentId, at: Timestamp) -> Result<()> {
        self.db
            .write(move |conn| {
                let deleted = conn.execute(
                    "UPDATE agents SET deleted_at = ?3, is_active = 0, updated_at = ?3
                     WHERE id = ?1 AND tenant_id = ?2 AND deleted_at IS NULL",
                    params![id.0.as_bytes(), tenant.0.as_bytes(), micros(at)],
                )?;
                match deleted {
                    0 => Err(DomainError::not_found(AgentId::KIND, id).into()),
                    _ => Ok(()),
                }
            })
            .await
    }

    async fn update_agent(&self, agent: &Agent) -> Result<()> {
        let agent = agent.clone();
        self.db
            .write(move |conn| {
                let updated = conn.execute(
                    "UPDATE agents SET name = ?3, system_prompt = ?4, llm_provider = ?5, model = ?6, llm_config = ?7,
                                       memory_config = ?8, is_active = ?9, updated_at = ?10
                     WHERE id = ?1 AND tenant_id = ?2 AND deleted_at IS NULL",
                    params![
                        agent.id.0.as_bytes(),
                        agent.tenant_id.0.as_bytes(),
                        agent.name,
                        agent.system_prompt,
                        agent.llm.provider.as_str(),
                        agent.llm.model,
                        json(&agent.llm),
                        json(&agent.memory),
                        agent.is_active,
                        micros(agent.updated_at)
                    ],
                );
                match updated {
                    Ok(0) => Err(DomainError::not_found(AgentId::KIND, agent.id).into()),
                    other => name_conflict(other, &agent.name),
                }
            })
            .await
    }
}

/// Inserts an agent's row. A taken id or name is the constraint's error, for
/// the caller to name.
pub(crate) fn insert_agent(conn: &Connection, agent: &Agent) -> rusqlite::Result<usize> {
    conn.execute(
        "INSERT INTO agents (id, tenant_id, name, system_prompt, llm_provider, model, llm_config,
                             memory_config, is_active, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            agent.id.0.as_bytes(),
            agent.tenant_id.0.as_bytes(),
            agent.name,
            agent.system_prompt,
            agent.llm.provider.as_str(),
            agent.llm.model,
            json(&agent.llm),
            json(&agent.memory),
            agent.is_active,
            micros(agent.created_at),
            micros(agent.updated_at)
        ],
    )
}

pub(crate) fn get_agent(conn: &Connection, tenant: TenantId, id: AgentId) -> Result<Agent, Error> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM agents WHERE id = ?1 AND tenant_id = ?2 AND deleted_at IS NULL"
    ))?;
    rows::collect(
        &mut stmt,
        [id.0.as_bytes(), tenant.0.as_bytes()],
        agent_from_row,
    )?
    .pop()
    .ok_or_else(|| DomainError::not_found(AgentId::KIND, id).into())
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn name_conflict(outcome: rusqlite::Result<usize>, name: &str) -> Result<(), Error> {
    rows::unique_conflict(outcome, DomainCode::AgentNameTaken, || {
        format!("an active agent named `{name}` exists")
    })
}

pub(crate) fn agent_from_row(row: &rusqlite::Row<'_>) -> Result<Agent, Error> {
    let llm: String = row.get("llm_config")?;
    let memory: String = row.get("memory_config")?;
    Ok(Agent {
        id: AgentId(rows::uuid(row, "id")?),
        tenant_id: TenantId(rows::uuid(row, "tenant_id")?),
        name: row.get("name")?,
        system_prompt: row.get("system_prompt")?,
        llm: serde_json::from_str(&llm).map_err(|e| corrupt("agent llm_config", e))?,
        memory: serde_json::from_str(&memory).map_err(|e| corrupt("agent memory_config", e))?,
        is_active: row.get("is_active")?,
        created_at: rows::time(row, "created_at")?,
        updated_at: rows::time(row, "updated_at")?,
    })
}
