//! Forgetting a user: every row of theirs removed in one transaction, which
//! also records what is left to do (`pending_erasures`); then their vectors
//! erased from the vector index and the tables vacuumed so that the dead
//! rows' space is reclaimed, and their index entries (GIN, HNSW) with them;
//! then the record is deleted. A crash in between leaves the record, which
//! any server finishes at start or before its next forget.

use std::collections::HashMap;

use async_trait::async_trait;
use octopus_core::forget::{
    ErasedSet, ForgetReceipt, ForgetUser, PendingErasure, TenantDeletionReceipt,
};
use octopus_core::store::Erasure;
use octopus_core::{AgentId, ConversationId, Result, TenantId};
use sqlx_core::executor::Executor;
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;
use sqlx_core::row::Row;
use uuid::Uuid;

use octopus_core::vectors::{VectorChange, VectorSet};

use crate::error::Result as StoreResult;
use crate::vector_sets::{MemoryTable, key_of, record_change};
use crate::{PostgresStore, domain};

/// Every table an erasure removes rows from (a tenant's deletion, from all
/// of them).
const TABLES: &str = "messages, facts, fact_history, episodes, conversations, memory_vectors, memory_jobs, procedures, procedure_versions, procedure_revisions, vector_points, vector_sets, pending_erasures, webhook_deliveries, webhooks, knowledge_chunks, knowledge_collections, memory_collections, agents, api_keys, tenants";

#[async_trait]
impl Erasure for PostgresStore {
    async fn forget_user(&self, tenant: TenantId, who: &ForgetUser) -> Result<ForgetReceipt> {
        self.finish_erasures().await?;
        domain(async {
            let (mut receipt, pending, record) =
                crate::error::retrying(|| self.remove_rows(tenant, who)).await?;
            receipt.vectors.graphs_rebuilt = self.erase_vectors(tenant, &pending).await?;
            self.vacuum().await?;
            receipt.compacted = true;
            query("DELETE FROM pending_erasures WHERE id = $1")
                .bind(record)
                .execute(&self.pool)
                .await?;
            tracing::info!(
                tenant_id = %tenant, messages = receipt.relational.messages,
                episodes = receipt.relational.episodes, "forgot a user"
            );
            Ok(receipt)
        })
        .await
    }

    async fn finish_erasures(&self) -> Result<usize> {
        domain(async {
            let pending = query("SELECT id, tenant_id, work FROM pending_erasures ORDER BY id")
                .fetch_all(&self.pool)
                .await?;
            if pending.is_empty() {
                return Ok(0);
            }
            let mut finished = Vec::with_capacity(pending.len());
            for row in &pending {
                let tenant = TenantId(row.try_get("tenant_id")?);
                let work: sqlx_core::types::Json<PendingErasure> = row.try_get("work")?;
                self.erase_vectors(tenant, &work.0).await?;
                finished.push(row.try_get::<i64, _>("id")?);
            }
            self.vacuum().await?;
            query("DELETE FROM pending_erasures WHERE id = ANY($1)")
                .bind(&finished)
                .execute(&self.pool)
                .await?;
            tracing::info!(erasures = finished.len(), "finished interrupted erasures");
            Ok(finished.len())
        })
        .await
    }

    async fn delete_tenant(&self, tenant: TenantId) -> Result<TenantDeletionReceipt> {
        self.finish_erasures().await?;
        domain(async {
            let (mut receipt, pending, record) =
                crate::error::retrying(|| self.remove_tenant_rows(tenant)).await?;
            self.finish_erasure(tenant, &pending, record).await?;
            receipt.compacted = true;
            tracing::info!(
                tenant_id = %tenant, messages = receipt.relational.messages,
                agents = receipt.relational.agents, "deleted a tenant"
            );
            Ok(receipt)
        })
        .await
    }
}

impl PostgresStore {
    /// After a deletion's rows are gone: erases what `pending` names from
    /// the vector index, vacuums the tables, and drops the record of what
    /// was left.
    pub(crate) async fn finish_erasure(
        &self,
        tenant: TenantId,
        pending: &PendingErasure,
        record: i64,
    ) -> StoreResult<()> {
        self.erase_vectors(tenant, pending).await?;
        self.vacuum().await?;
        query("DELETE FROM pending_erasures WHERE id = $1")
            .bind(record)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Erases the vectors `pending` names from the vector index (before the
    /// VACUUM, so that the index's copies go with the rows: see
    /// `VectorIndex::erase`); returns the saved graphs dropped. Repeating it
    /// is harmless.
    pub(crate) async fn erase_vectors(
        &self,
        tenant: TenantId,
        pending: &PendingErasure,
    ) -> StoreResult<u64> {
        let mut graphs = 0;
        for set in &pending.sets {
            let (set, before, after, change) = set.erase_arguments(tenant);
            if self
                .vectors
                .erase(set, before, after, change)
                .await
                .map_err(crate::error::Error::Domain)?
            {
                graphs += 1;
            }
        }
        Ok(graphs)
    }

    /// Reclaims the space of removed rows. Outside any transaction, as
    /// VACUUM must be; plain VACUUM, not FULL: it takes no lock that would
    /// stop other tenants' work.
    pub(crate) async fn vacuum(&self) -> StoreResult<()> {
        self.pool
            .execute(format!("VACUUM {TABLES}").as_str())
            .await?;
        Ok(())
    }
}

impl PostgresStore {
    /// Removes the rows and records what is left; the receipt, the record's
    /// work and its id.
    async fn remove_rows(
        &self,
        tenant: TenantId,
        who: &ForgetUser,
    ) -> StoreResult<(ForgetReceipt, PendingErasure, i64)> {
        let mut tx = self.pool.begin().await?;
        let agent = who.agent_id.map(|a| a.0);
        let mut receipt = ForgetReceipt {
            user_id: who.user_id.clone(),
            agent_id: who.agent_id,
            ..ForgetReceipt::default()
        };
        let episodes: Vec<Uuid> = query_scalar(
            "SELECT id FROM episodes WHERE tenant_id = $1 AND user_id = $2 AND ($3::uuid IS NULL OR agent_id = $3)
             FOR UPDATE",
        )
        .bind(tenant.0)
        .bind(&who.user_id)
        .bind(agent)
        .fetch_all(&mut *tx)
        .await?;

        let counts = query(
            "SELECT count(summary) AS summaries, COALESCE(sum(json_array_length(key_facts)), 0)::bigint AS key_facts
             FROM episodes WHERE id = ANY($1)",
        )
        .bind(&episodes)
        .fetch_one(&mut *tx)
        .await?;
        receipt.relational.summaries = counts.try_get::<i64, _>("summaries")?.unsigned_abs();
        receipt.relational.key_facts = counts.try_get::<i64, _>("key_facts")?.unsigned_abs();

        let learned: Vec<String> = episodes.iter().map(|e| format!("learned:{e}")).collect();
        let removed = query("DELETE FROM procedures WHERE tenant_id = $1 AND created_by = ANY($2)")
            .bind(tenant.0)
            .bind(&learned)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if removed > 0 {
            crate::procedures::bump(&mut tx, tenant).await?;
        }
        receipt.relational.learned_procedures = removed;

        // Facts a person added have no episode; each files its vector under
        // its own id.
        let added: Vec<Uuid> = query_scalar(
            "SELECT id FROM facts WHERE tenant_id = $1 AND user_id = $2
                                    AND ($3::uuid IS NULL OR agent_id = $3) AND episode_id IS NULL",
        )
        .bind(tenant.0)
        .bind(&who.user_id)
        .bind(agent)
        .fetch_all(&mut *tx)
        .await?;
        let vector_groups: Vec<Uuid> = episodes.iter().chain(&added).copied().collect();
        receipt.queue.jobs = query(
            "DELETE FROM memory_jobs WHERE tenant_id = $1 AND (
                 target = ANY($2)
                 OR target IN (SELECT id FROM messages WHERE tenant_id = $1 AND episode_id = ANY($2))
                 OR target IN (SELECT id FROM facts WHERE tenant_id = $1 AND episode_id = ANY($2)))",
        )
        .bind(tenant.0)
        .bind(&vector_groups)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        receipt.relational.fact_history = query(
            "DELETE FROM fact_history WHERE tenant_id = $1 AND user_id = $2 AND ($3::uuid IS NULL OR agent_id = $3)",
        )
        .bind(tenant.0)
        .bind(&who.user_id)
        .bind(agent)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        receipt.relational.facts = query(
            "DELETE FROM facts WHERE tenant_id = $1 AND (episode_id = ANY($2) OR id = ANY($3))",
        )
        .bind(tenant.0)
        .bind(&episodes)
        .bind(&added)
        .execute(&mut *tx)
        .await?
        .rows_affected();

        let vectors = query(
            "DELETE FROM memory_vectors WHERE tenant_id = $1 AND episode_id = ANY($2)
             RETURNING agent_id, kind, seq",
        )
        .bind(tenant.0)
        .bind(&vector_groups)
        .fetch_all(&mut *tx)
        .await?;
        let mut per_collection: HashMap<Uuid, Vec<u64>> = HashMap::new();
        for row in &vectors {
            let kind: String = row.try_get("kind")?;
            match kind.as_str() {
                "summary" => receipt.vectors.summary_vectors += 1,
                "fact" => receipt.vectors.fact_vectors += 1,
                _ => receipt.vectors.message_vectors += 1,
            }
            per_collection
                .entry(row.try_get("agent_id")?)
                .or_default()
                .push(key_of(row)?);
        }

        let messages = query(
            "DELETE FROM messages WHERE tenant_id = $1 AND episode_id = ANY($2) RETURNING length(search) > 0 AS indexed",
        )
        .bind(tenant.0)
        .bind(&episodes)
        .fetch_all(&mut *tx)
        .await?;
        receipt.relational.messages = messages.len() as u64;
        for row in &messages {
            if row.try_get::<bool, _>("indexed")? {
                receipt.full_text.entries += 1;
            }
        }
        receipt.relational.episodes =
            query("DELETE FROM episodes WHERE tenant_id = $1 AND id = ANY($2)")
                .bind(tenant.0)
                .bind(&episodes)
                .execute(&mut *tx)
                .await?
                .rows_affected();
        let conversations: Vec<Uuid> = query_scalar(
            "DELETE FROM conversations
             WHERE tenant_id = $1 AND user_id = $2 AND ($3::uuid IS NULL OR agent_id = $3) RETURNING id",
        )
        .bind(tenant.0)
        .bind(&who.user_id)
        .bind(agent)
        .fetch_all(&mut *tx)
        .await?;
        receipt.relational.conversations = conversations.len() as u64;
        receipt.conversation_ids = conversations.into_iter().map(ConversationId).collect();
        // What their events said goes with the user, and the paragraphs
        // written about them; that they were forgotten is announced.
        for table in ["webhook_deliveries", "profile_summaries"] {
            query(&format!(
                "DELETE FROM {table}
                 WHERE tenant_id = $1 AND user_id = $2 AND ($3::uuid IS NULL OR agent_id = $3)"
            ))
            .bind(tenant.0)
            .bind(&who.user_id)
            .bind(who.agent_id.map(|a| a.0))
            .execute(&mut *tx)
            .await?;
        }
        let forgotten = octopus_core::webhook::user_forgotten(
            tenant,
            &who.user_id,
            who.agent_id,
            octopus_core::now(),
        );
        crate::webhooks::record(&mut tx, &forgotten).await?;
        let (pending, record) = record_pending_erasure(&mut tx, tenant, per_collection).await?;
        tx.commit().await?;
        Ok((receipt, pending, record))
    }
}

/// Records, in `tx`, the removal of memory vectors from their collections
/// (by agent: the keys removed): each collection's version moves on, and
/// the erasure left to do, for the index, is written down. Returns it and
/// its record's id.
pub(crate) async fn record_pending_erasure(
    tx: &mut crate::rows::Tx<'_>,
    tenant: TenantId,
    per_collection: HashMap<Uuid, Vec<u64>>,
) -> StoreResult<(PendingErasure, i64)> {
    let mut sets = Vec::with_capacity(per_collection.len());
    for (agent, removed) in per_collection {
        let set = VectorSet::memory(tenant, AgentId(agent));
        let change = VectorChange {
            removed,
            added: Vec::new(),
        };
        if let Some(c) = record_change::<MemoryTable>(tx, set, change).await? {
            sets.push(ErasedSet::new(c.set, c.before, c.after, c.change.removed));
        }
    }
    let pending = PendingErasure {
        message_seqs: Vec::new(),
        sets,
    };
    let record: i64 =
        query_scalar("INSERT INTO pending_erasures (tenant_id, work) VALUES ($1, $2) RETURNING id")
            .bind(tenant.0)
            .bind(sqlx_core::types::Json(&pending))
            .fetch_one(&mut **tx)
            .await?;
    Ok((pending, record))
}
