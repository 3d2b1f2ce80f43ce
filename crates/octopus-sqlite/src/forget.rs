//! Forgetting a user: the rows in one transaction, which also records what
//! is left to do (`pending_erasures`); then the derived stores (full-text
//! entries, the vector index) and compaction of both files; then the record
//! is deleted. A crash in between leaves the record, finished at start and
//! before the next forget, so nothing of the user stays on disk.

use std::collections::HashMap;

use async_trait::async_trait;
use octopus_core::forget::{
    ErasedSet, ForgetReceipt, ForgetUser, PendingErasure, TenantDeletionReceipt,
};
use octopus_core::store::Erasure;
use octopus_core::{AgentId, ConversationId, Result, TenantId};
use rusqlite::{Connection, params};

use crate::SqliteStore;
use crate::codec;
use crate::error::Result as StoreResult;
use crate::rows;
use crate::tenant_deletion::{RemovedTenant, remove_tenant_rows};
use crate::vector_sets::MemoryTable;
use crate::vector_sets::{Committed, VectorTable, record_change};
use octopus_core::vectors::{VectorChange, VectorSet};

/// The user's episodes; `?1` tenant, `?2` user, `?3` agent or NULL.
const EPISODES: &str = "SELECT id FROM episodes WHERE tenant_id = ?1 AND user_id = ?2 AND (?3 IS NULL OR agent_id = ?3)";
/// The user's facts, learned or added by hand.
const FACTS: &str =
    "SELECT id FROM facts WHERE tenant_id = ?1 AND user_id = ?2 AND (?3 IS NULL OR agent_id = ?3)";

/// What finishing an erasure did: full-text entries removed, saved graphs
/// dropped, and whether the files were compacted.
struct Finished {
    entries: u64,
    graphs: u64,
    compacted: bool,
}

/// What the relational transaction removed, and the record of what is left.
struct Removed {
    receipt: ForgetReceipt,
    pending: PendingErasure,
    record: i64,
}

#[async_trait]
impl Erasure for SqliteStore {
    async fn forget_user(&self, tenant: TenantId, who: &ForgetUser) -> Result<ForgetReceipt> {
        self.finish_erasures().await?;
        let who = who.clone();
        let Removed {
            mut receipt,
            pending,
            record,
        } = self
            .db
            .write(move |conn| remove_rows(conn, tenant, &who))
            .await?;
        let finished = self.finish_counted(tenant, &pending, record).await?;
        receipt.full_text.entries = finished.entries;
        receipt.vectors.graphs_rebuilt = finished.graphs;
        receipt.compacted = finished.compacted;
        tracing::info!(
            tenant_id = %tenant, messages = receipt.relational.messages,
            episodes = receipt.relational.episodes, compacted = receipt.compacted,
            "forgot a user"
        );
        Ok(receipt)
    }

    async fn finish_erasures(&self) -> Result<usize> {
        let pending: Vec<(i64, Vec<u8>, String)> = self
            .db
            .read(|conn| {
                rows::collect(
                    &mut conn
                        .prepare("SELECT id, tenant_id, work FROM pending_erasures ORDER BY id")?,
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
            })
            .await?;
        if pending.is_empty() {
            // A crash while a checkpoint was owed leaves erased words in the
            // logs with no erasure left to finish: try one anyway.
            self.checkpoint_logs().await?;
            return Ok(0);
        }
        let mut finished = Vec::with_capacity(pending.len());
        for (id, tenant, work) in pending {
            let tenant = TenantId(codec::uuid_from(&tenant)?);
            let work: PendingErasure = serde_json::from_str(&work)
                .map_err(|e| crate::error::corrupt("pending erasure", e))?;
            self.erase_derived(tenant, &work).await?;
            finished.push(id);
        }
        // A tenant's deletion leaves its knowledge's terms to a merge.
        self.merge_main_indexes().await?;
        self.compact().await?;
        let count = finished.len();
        self.db
            .write(move |conn| {
                let tx = conn.transaction()?;
                for id in finished {
                    tx.execute("DELETE FROM pending_erasures WHERE id = ?1", [id])?;
                }
                tx.commit()?;
                Ok(())
            })
            .await?;
        tracing::info!(erasures = count, "finished interrupted erasures");
        Ok(count)
    }

    async fn delete_tenant(&self, tenant: TenantId) -> Result<TenantDeletionReceipt> {
        self.finish_erasures().await?;
        let RemovedTenant {
            mut receipt,
            pending,
            record,
        } = self
            .db
            .write(move |conn| remove_tenant_rows(conn, tenant))
            .await?;
        // Its knowledge's terms leave the index only with a merge.
        self.merge_main_indexes().await?;
        let finished = self.finish_counted(tenant, &pending, record).await?;
        receipt.full_text.entries = finished.entries;
        receipt.compacted = finished.compacted;
        tracing::info!(
            tenant_id = %tenant, messages = receipt.relational.messages,
            agents = receipt.relational.agents, compacted = receipt.compacted,
            "deleted a tenant"
        );
        Ok(receipt)
    }
}

impl SqliteStore {
    /// After a deletion's rows are gone: erases what `pending` names from
    /// the derived stores, compacts the files, and drops the record of what
    /// was left. Returns whether the files were compacted.
    pub(crate) async fn finish_erasure(
        &self,
        tenant: TenantId,
        pending: &PendingErasure,
        record: i64,
    ) -> Result<bool> {
        Ok(self
            .finish_counted(tenant, pending, record)
            .await?
            .compacted)
    }

    /// [`Self::finish_erasure`], saying what it erased.
    async fn finish_counted(
        &self,
        tenant: TenantId,
        pending: &PendingErasure,
        record: i64,
    ) -> Result<Finished> {
        let (entries, graphs) = self.erase_derived(tenant, pending).await?;
        let compacted = self.compact().await?;
        self.db
            .write(move |conn| {
                conn.execute("DELETE FROM pending_erasures WHERE id = ?1", [record])?;
                Ok(())
            })
            .await?;
        Ok(Finished {
            entries,
            graphs,
            compacted,
        })
    }

    /// Erases what `pending` names from the derived stores: full-text
    /// entries, then vectors. Returns the entries removed and the saved
    /// graphs dropped. Repeating it is harmless.
    pub(crate) async fn erase_derived(
        &self,
        tenant: TenantId,
        pending: &PendingErasure,
    ) -> Result<(u64, u64)> {
        let entries = self.indexer.forget(pending.message_seqs.clone()).await?;
        let mut graphs = 0;
        for set in &pending.sets {
            let (set, before, after, change) = set.erase_arguments(tenant);
            if self.vectors.erase(set, before, after, change).await? {
                graphs += 1;
            }
        }
        Ok((entries, graphs))
    }
}

fn remove_rows(conn: &mut Connection, tenant: TenantId, who: &ForgetUser) -> StoreResult<Removed> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let agent = who.agent_id.map(|a| a.0.as_bytes().to_vec());
    let scope = params![tenant.0.as_bytes(), who.user_id, agent];
    let mut receipt = ForgetReceipt {
        user_id: who.user_id.clone(),
        agent_id: who.agent_id,
        ..ForgetReceipt::default()
    };

    let episodes: Vec<uuid::Uuid> =
        rows::collect(&mut tx.prepare(EPISODES)?, scope, |r| rows::uuid(r, "id"))?;
    let (summaries, key_facts): (i64, i64) = tx.query_row(
        &format!(
            "SELECT count(summary), COALESCE(sum(json_array_length(key_facts)), 0)
             FROM episodes WHERE id IN ({EPISODES})"
        ),
        scope,
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    receipt.relational.summaries = summaries.unsigned_abs();
    receipt.relational.key_facts = key_facts.unsigned_abs();

    // Procedures learned from these episodes carry their tool calls.
    let mut learned = 0;
    for episode in &episodes {
        learned += tx.execute(
            "DELETE FROM procedures WHERE tenant_id = ?1 AND created_by = ?2",
            params![tenant.0.as_bytes(), format!("learned:{episode}")],
        )?;
    }
    if learned > 0 {
        tx.execute(
            "INSERT INTO procedure_revisions (tenant_id, revision) VALUES (?1, 1)
             ON CONFLICT (tenant_id) DO UPDATE SET revision = revision + 1",
            [tenant.0.as_bytes()],
        )?;
    }
    receipt.relational.learned_procedures = learned as u64;

    receipt.queue.jobs = tx.execute(
        &format!(
            "DELETE FROM memory_jobs WHERE tenant_id = ?1 AND (
                 target IN ({EPISODES})
                 OR target IN (SELECT id FROM messages WHERE tenant_id = ?1 AND episode_id IN ({EPISODES}))
                 OR target IN ({FACTS}))"
        ),
        scope,
    )? as u64;
    receipt.relational.fact_history = tx.execute(
        "DELETE FROM fact_history WHERE tenant_id = ?1 AND user_id = ?2 AND (?3 IS NULL OR agent_id = ?3)",
        scope,
    )? as u64;
    let vectors: Vec<(Vec<u8>, String, u64)> = rows::collect(
        &mut tx.prepare(&format!(
            // A fact added by hand files its vector under its own id.
            "DELETE FROM memory_vectors
             WHERE tenant_id = ?1 AND (episode_id IN ({EPISODES}) OR episode_id IN ({FACTS}))
             RETURNING agent_id, kind, seq"
        ))?,
        scope,
        |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)?.unsigned_abs())),
    )?;
    let mut per_collection: HashMap<Vec<u8>, Vec<u64>> = HashMap::new();
    for (agent, kind, key) in vectors {
        match kind.as_str() {
            "summary" => receipt.vectors.summary_vectors += 1,
            "fact" => receipt.vectors.fact_vectors += 1,
            _ => receipt.vectors.message_vectors += 1,
        }
        per_collection.entry(agent).or_default().push(key);
    }
    // Their full-text entries go with them (a trigger), compacted below.
    receipt.relational.facts =
        tx.execute(&format!("DELETE FROM facts WHERE id IN ({FACTS})"), scope)? as u64;

    let message_seqs: Vec<i64> = rows::collect(
        &mut tx.prepare(&format!(
            "DELETE FROM messages WHERE tenant_id = ?1 AND episode_id IN ({EPISODES}) RETURNING seq"
        ))?,
        scope,
        |r| Ok(r.get(0)?),
    )?;
    receipt.relational.messages = message_seqs.len() as u64;
    receipt.relational.episodes = tx.execute(
        "DELETE FROM episodes WHERE tenant_id = ?1 AND user_id = ?2 AND (?3 IS NULL OR agent_id = ?3)",
        scope,
    )? as u64;
    let conversations: Vec<uuid::Uuid> = rows::collect(
        &mut tx.prepare(
            "DELETE FROM conversations
             WHERE tenant_id = ?1 AND user_id = ?2 AND (?3 IS NULL OR agent_id = ?3) RETURNING id",
        )?,
        scope,
        |r| rows::uuid(r, "id"),
    )?;
    receipt.relational.conversations = conversations.len() as u64;
    receipt.conversation_ids = conversations.into_iter().map(ConversationId).collect();
    // What their events said goes with the user, and the paragraphs
    // written about them; that they were forgotten is announced.
    for table in ["webhook_deliveries", "profile_summaries"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE tenant_id = ?1 AND user_id = ?2 AND (?3 IS NULL OR agent_id = ?3)"),
            scope,
        )?;
    }
    let forgotten = octopus_core::webhook::user_forgotten(
        tenant,
        &who.user_id,
        who.agent_id,
        octopus_core::now(),
    );
    crate::webhooks::record(&tx, &forgotten)?;
    let (pending, record) = record_pending_erasure(&tx, tenant, per_collection, message_seqs)?;
    tx.commit()?;
    Ok(Removed {
        receipt,
        pending,
        record,
    })
}

/// Records, in `tx`, the removal of memory vectors from their collections
/// (by agent id bytes: the keys removed) and of full-text entries (by
/// message `seq`): each collection's version moves on, and the erasure left
/// to do, for the derived stores, is written down. Returns it and its
/// record's id.
pub(crate) fn record_pending_erasure(
    tx: &rusqlite::Transaction<'_>,
    tenant: TenantId,
    per_collection: HashMap<Vec<u8>, Vec<u64>>,
    message_seqs: Vec<i64>,
) -> StoreResult<(PendingErasure, i64)> {
    let mut sets = Vec::with_capacity(per_collection.len());
    for (agent, removed) in per_collection {
        let agent = AgentId(codec::uuid_from(&agent)?);
        let before = MemoryTable::state(tx, tenant, agent)?
            .ok_or_else(|| crate::error::corrupt("memory collection", "vectors without one"))?;
        let change = VectorChange {
            removed,
            added: Vec::new(),
        };
        let set = VectorSet::memory(tenant, agent);
        let Committed {
            set,
            before,
            after,
            change,
        } = record_change::<MemoryTable>(tx, set, before, change)?;
        sets.push(ErasedSet::new(set, before, after, change.removed));
    }
    let pending = PendingErasure { message_seqs, sets };
    tx.execute(
        "INSERT INTO pending_erasures (tenant_id, work, created_at) VALUES (?1, ?2, ?3)",
        params![
            tenant.0.as_bytes(),
            serde_json::to_string(&pending)
                .map_err(|e| crate::error::corrupt("pending erasure", e))?,
            codec::micros(chrono::Utc::now())
        ],
    )?;
    Ok((pending, tx.last_insert_rowid()))
}
