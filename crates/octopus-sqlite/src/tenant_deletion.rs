//! Deleting a tenant: every row under it removed in one transaction, which
//! records, as forgetting a user does, what is left for the derived stores
//! (the full-text entries of its messages, every vector of its sets).

use std::collections::HashMap;

use octopus_core::forget::{ErasedSet, PendingErasure, TenantDeletionReceipt};
use octopus_core::vectors::{VectorKind, VectorSet};
use octopus_core::{AgentId, ConversationId, Error as DomainError, TenantId};
use rusqlite::{Connection, Transaction, params};

use crate::error::Result as StoreResult;
use crate::vector_sets::{KnowledgeTable, MemoryTable, VectorTable};
use crate::{codec, rows};

/// What the transaction removed, and the record of what is left.
pub(crate) struct RemovedTenant {
    pub(crate) receipt: TenantDeletionReceipt,
    pub(crate) pending: PendingErasure,
    pub(crate) record: i64,
}

/// Removes every row of `tenant` and records the erasure left to do.
pub(crate) fn remove_tenant_rows(
    conn: &mut Connection,
    tenant: TenantId,
) -> StoreResult<RemovedTenant> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let id = tenant.0.as_bytes();
    let exists: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM tenants WHERE id = ?1)",
        [id],
        |r| r.get(0),
    )?;
    if !exists {
        return Err(DomainError::not_found(TenantId::KIND, tenant).into());
    }
    let mut receipt = TenantDeletionReceipt::new(tenant);
    // Each set's state before its rows go: what the index is told it moves
    // from.
    let mut sets = Vec::new();
    let memory = removed_keys(&tx, "memory_vectors", id)?;
    receipt.vectors.memory_vectors = memory.values().map(|k| k.len() as u64).sum();
    erased_sets::<MemoryTable>(&tx, tenant, VectorKind::Memory, memory, &mut sets)?;
    let knowledge = removed_keys(&tx, "knowledge_chunks", id)?;
    receipt.vectors.knowledge_vectors = knowledge.values().map(|k| k.len() as u64).sum();
    receipt.relational.knowledge_chunks = receipt.vectors.knowledge_vectors;
    erased_sets::<KnowledgeTable>(&tx, tenant, VectorKind::Knowledge, knowledge, &mut sets)?;
    receipt.vectors.sets = sets.len() as u64;

    let delete = |table: &str| -> StoreResult<u64> {
        Ok(tx.execute(&format!("DELETE FROM {table} WHERE tenant_id = ?1"), [id])? as u64)
    };
    receipt.queue.jobs = delete("memory_jobs")?;
    receipt.relational.fact_history = delete("fact_history")?;
    // Their full-text entries go with them (triggers), compacted after.
    receipt.relational.facts = delete("facts")?;
    delete("profile_summaries")?;
    delete("memory_vectors")?;
    delete("knowledge_chunks")?;
    let message_seqs: Vec<i64> = rows::collect(
        &mut tx.prepare("DELETE FROM messages WHERE tenant_id = ?1 RETURNING seq")?,
        [id],
        |r| Ok(r.get(0)?),
    )?;
    receipt.relational.messages = message_seqs.len() as u64;
    receipt.relational.episodes = delete("episodes")?;
    let conversations: Vec<uuid::Uuid> = rows::collect(
        &mut tx.prepare("DELETE FROM conversations WHERE tenant_id = ?1 RETURNING id")?,
        [id],
        |r| rows::uuid(r, "id"),
    )?;
    receipt.relational.conversations = conversations.len() as u64;
    receipt.conversation_ids = conversations.into_iter().map(ConversationId).collect();
    delete("procedure_versions")?;
    receipt.relational.procedures = delete("procedures")?;
    delete("procedure_revisions")?;
    delete("memory_collections")?;
    delete("knowledge_collections")?;
    receipt.relational.webhook_deliveries = delete("webhook_deliveries")?;
    receipt.relational.webhooks = delete("webhooks")?;
    receipt.relational.agents = delete("agents")?;
    receipt.relational.api_keys = delete("api_keys")?;
    tx.execute("DELETE FROM tenants WHERE id = ?1", [id])?;

    let pending = PendingErasure { message_seqs, sets };
    let record = record(&tx, tenant, &pending)?;
    tx.commit()?;
    Ok(RemovedTenant {
        receipt,
        pending,
        record,
    })
}

/// The keys of the tenant's rows of a vector table, by agent.
fn removed_keys(
    tx: &Transaction<'_>,
    table: &str,
    tenant: &[u8],
) -> StoreResult<HashMap<Vec<u8>, Vec<u64>>> {
    let keys: Vec<(Vec<u8>, i64)> = rows::collect(
        &mut tx.prepare(&format!(
            "SELECT agent_id, seq FROM {table} WHERE tenant_id = ?1"
        ))?,
        [tenant],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let mut by_agent: HashMap<Vec<u8>, Vec<u64>> = HashMap::new();
    for (agent, seq) in keys {
        by_agent.entry(agent).or_default().push(seq.unsigned_abs());
    }
    Ok(by_agent)
}

/// Every set of the kind the tenant has, with all its keys removed: its
/// rows go, so its version moves one past the last the index was told of.
fn erased_sets<T: VectorTable>(
    tx: &Transaction<'_>,
    tenant: TenantId,
    kind: VectorKind,
    mut keys: HashMap<Vec<u8>, Vec<u64>>,
    sets: &mut Vec<ErasedSet>,
) -> StoreResult<()> {
    let agents: Vec<Vec<u8>> = rows::collect(
        &mut tx.prepare(&format!(
            "SELECT agent_id FROM {} WHERE tenant_id = ?1",
            T::TABLES.collections
        ))?,
        [tenant.0.as_bytes()],
        |r| Ok(r.get(0)?),
    )?;
    for agent in agents {
        let removed = keys.remove(&agent).unwrap_or_default();
        let agent = AgentId(codec::uuid_from(&agent)?);
        let Some(before) = T::state(tx, tenant, agent)? else {
            continue;
        };
        let set = VectorSet {
            kind,
            tenant,
            agent,
        };
        let after = before.version + 1;
        sets.push(ErasedSet::new(set, before, after, removed));
    }
    Ok(())
}

/// Writes down the erasure left to do; returns its record's id.
fn record(tx: &Transaction<'_>, tenant: TenantId, pending: &PendingErasure) -> StoreResult<i64> {
    tx.execute(
        "INSERT INTO pending_erasures (tenant_id, work, created_at) VALUES (?1, ?2, ?3)",
        params![
            tenant.0.as_bytes(),
            serde_json::to_string(pending)
                .map_err(|e| crate::error::corrupt("pending erasure", e))?,
            codec::micros(chrono::Utc::now())
        ],
    )?;
    Ok(tx.last_insert_rowid())
}
