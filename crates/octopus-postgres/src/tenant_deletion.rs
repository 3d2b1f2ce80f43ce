//! Deleting a tenant: every row under it removed in one transaction, which
//! records, as forgetting a user does, what is left for the vector index
//! (every vector of the tenant's sets); the VACUUM after reclaims the rows'
//! space and their index entries.

use std::collections::HashMap;

use octopus_core::forget::{ErasedSet, PendingErasure, TenantDeletionReceipt};
use octopus_core::vectors::{SetState, VectorKind, VectorSet};
use octopus_core::{AgentId, ConversationId, Error as DomainError, TenantId};
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;
use sqlx_core::row::Row;
use uuid::Uuid;

use crate::PostgresStore;
use crate::error::Result as StoreResult;
use crate::rows::Tx;
use crate::vector_sets::key_of;

impl PostgresStore {
    /// Removes every row of `tenant` and records the erasure left to do:
    /// the receipt, the record's work and its id.
    pub(crate) async fn remove_tenant_rows(
        &self,
        tenant: TenantId,
    ) -> StoreResult<(TenantDeletionReceipt, PendingErasure, i64)> {
        let mut tx = self.pool.begin().await?;
        // Writers that reference the tenant (a new key, a new agent) wait
        // on this lock, then find it gone.
        let found: Option<Uuid> = query_scalar("SELECT id FROM tenants WHERE id = $1 FOR UPDATE")
            .bind(tenant.0)
            .fetch_optional(&mut *tx)
            .await?;
        if found.is_none() {
            return Err(DomainError::not_found(TenantId::KIND, tenant).into());
        }
        let mut receipt = TenantDeletionReceipt::new(tenant);
        let mut sets = Vec::new();
        let memory = removed_keys(&mut tx, "memory_vectors", tenant).await?;
        receipt.vectors.memory_vectors = memory.values().map(|k| k.len() as u64).sum();
        erased_sets(&mut tx, tenant, VectorKind::Memory, memory, &mut sets).await?;
        let knowledge = removed_keys(&mut tx, "knowledge_chunks", tenant).await?;
        receipt.vectors.knowledge_vectors = knowledge.values().map(|k| k.len() as u64).sum();
        receipt.relational.knowledge_chunks = receipt.vectors.knowledge_vectors;
        erased_sets(&mut tx, tenant, VectorKind::Knowledge, knowledge, &mut sets).await?;
        receipt.vectors.sets = sets.len() as u64;

        receipt.queue.jobs = delete(&mut tx, "memory_jobs", tenant).await?;
        receipt.relational.fact_history = delete(&mut tx, "fact_history", tenant).await?;
        receipt.relational.facts = delete(&mut tx, "facts", tenant).await?;
        delete(&mut tx, "profile_summaries", tenant).await?;
        delete(&mut tx, "memory_vectors", tenant).await?;
        delete(&mut tx, "knowledge_chunks", tenant).await?;
        let messages = query(
            "DELETE FROM messages WHERE tenant_id = $1 RETURNING length(search) > 0 AS indexed",
        )
        .bind(tenant.0)
        .fetch_all(&mut *tx)
        .await?;
        receipt.relational.messages = messages.len() as u64;
        for row in &messages {
            if row.try_get::<bool, _>("indexed")? {
                receipt.full_text.entries += 1;
            }
        }
        receipt.relational.episodes = delete(&mut tx, "episodes", tenant).await?;
        let conversations: Vec<Uuid> =
            query_scalar("DELETE FROM conversations WHERE tenant_id = $1 RETURNING id")
                .bind(tenant.0)
                .fetch_all(&mut *tx)
                .await?;
        receipt.relational.conversations = conversations.len() as u64;
        receipt.conversation_ids = conversations.into_iter().map(ConversationId).collect();
        delete(&mut tx, "procedure_versions", tenant).await?;
        receipt.relational.procedures = delete(&mut tx, "procedures", tenant).await?;
        delete(&mut tx, "procedure_revisions", tenant).await?;
        delete(&mut tx, "memory_collections", tenant).await?;
        delete(&mut tx, "knowledge_collections", tenant).await?;
        receipt.relational.webhook_deliveries =
            delete(&mut tx, "webhook_deliveries", tenant).await?;
        receipt.relational.webhooks = delete(&mut tx, "webhooks", tenant).await?;
        receipt.relational.agents = delete(&mut tx, "agents", tenant).await?;
        receipt.relational.api_keys = delete(&mut tx, "api_keys", tenant).await?;
        query("DELETE FROM tenants WHERE id = $1")
            .bind(tenant.0)
            .execute(&mut *tx)
            .await?;

        let pending = PendingErasure {
            message_seqs: Vec::new(),
            sets,
        };
        let record: i64 = query_scalar(
            "INSERT INTO pending_erasures (tenant_id, work) VALUES ($1, $2) RETURNING id",
        )
        .bind(tenant.0)
        .bind(sqlx_core::types::Json(&pending))
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok((receipt, pending, record))
    }
}

async fn delete(tx: &mut Tx<'_>, table: &str, tenant: TenantId) -> StoreResult<u64> {
    Ok(query(&format!("DELETE FROM {table} WHERE tenant_id = $1"))
        .bind(tenant.0)
        .execute(&mut **tx)
        .await?
        .rows_affected())
}

/// The keys of the tenant's rows of a vector table, by agent.
async fn removed_keys(
    tx: &mut Tx<'_>,
    table: &str,
    tenant: TenantId,
) -> StoreResult<HashMap<Uuid, Vec<u64>>> {
    let rows = query(&format!(
        "SELECT agent_id, seq FROM {table} WHERE tenant_id = $1"
    ))
    .bind(tenant.0)
    .fetch_all(&mut **tx)
    .await?;
    let mut by_agent: HashMap<Uuid, Vec<u64>> = HashMap::new();
    for row in &rows {
        by_agent
            .entry(row.try_get("agent_id")?)
            .or_default()
            .push(key_of(row)?);
    }
    Ok(by_agent)
}

/// Every set of the kind the tenant has, with all its keys removed: its
/// rows go, so its version moves one past the last the index was told of.
/// The sets' rows are locked until the deletion commits, as a change's
/// are.
async fn erased_sets(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    kind: VectorKind,
    mut keys: HashMap<Uuid, Vec<u64>>,
    sets: &mut Vec<ErasedSet>,
) -> StoreResult<()> {
    let collections = match kind {
        VectorKind::Memory => "memory_collections",
        VectorKind::Knowledge => "knowledge_collections",
    };
    let rows = query(&format!(
        "SELECT agent_id, dimension, version FROM {collections} WHERE tenant_id = $1 FOR UPDATE"
    ))
    .bind(tenant.0)
    .fetch_all(&mut **tx)
    .await?;
    for row in &rows {
        let agent: Uuid = row.try_get("agent_id")?;
        let before = SetState {
            dimension: crate::rows::u32_at(row, "dimension")?,
            version: row.try_get("version")?,
        };
        let set = VectorSet {
            kind,
            tenant,
            agent: AgentId(agent),
        };
        let removed = keys.remove(&agent).unwrap_or_default();
        let after = before.version + 1;
        sets.push(ErasedSet::new(set, before, after, removed));
    }
    Ok(())
}
