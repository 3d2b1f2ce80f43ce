//! Forgetting a user: the rows in one transaction, then the derived stores
//! (full-text entries, saved vector graphs), then compaction of both files.

use std::collections::HashMap;

use async_trait::async_trait;
use octopus_core::forget::{ForgetReceipt, ForgetUser};
use octopus_core::store::UserErasure;
use octopus_core::{AgentId, ConversationId, Result, TenantId};
use rusqlite::{Connection, params};

use crate::SqliteStore;
use crate::codec;
use crate::error::Result as StoreResult;
use crate::memory::MemoryTable;
use crate::rows;
use crate::vector_collections::{Committed, VectorTable, record_change};
use octopus_core::vectors::{VectorChange, VectorSet};

/// The user's episodes; `?1` tenant, `?2` user, `?3` agent or NULL.
const EPISODES: &str = "SELECT id FROM episodes WHERE tenant_id = ?1 AND user_id = ?2 AND (?3 IS NULL OR agent_id = ?3)";

/// What the relational transaction removed, for the derived stores to follow.
struct Removed {
    receipt: ForgetReceipt,
    message_seqs: Vec<i64>,
    collections: Vec<Committed>,
}

#[async_trait]
impl UserErasure for SqliteStore {
    async fn forget_user(&self, tenant: TenantId, who: &ForgetUser) -> Result<ForgetReceipt> {
        let who = who.clone();
        let removed = self
            .db
            .write(move |conn| remove_rows(conn, tenant, &who))
            .await?;
        let Removed {
            mut receipt,
            message_seqs,
            collections,
        } = removed;
        for c in collections {
            if self
                .vectors
                .erase(c.set, c.before, c.after, c.change)
                .await?
            {
                receipt.vectors.graphs_rebuilt += 1;
            }
        }
        receipt.full_text.entries = self.indexer.forget(message_seqs).await?;
        receipt.compacted = self.compact().await?;
        tracing::info!(
            tenant_id = %tenant, messages = receipt.relational.messages,
            episodes = receipt.relational.episodes, compacted = receipt.compacted,
            "forgot a user"
        );
        Ok(receipt)
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
                 OR target IN (SELECT id FROM messages WHERE tenant_id = ?1 AND episode_id IN ({EPISODES})))"
        ),
        scope,
    )? as u64;

    let vectors: Vec<(Vec<u8>, String, u64)> = rows::collect(
        &mut tx.prepare(&format!(
            "DELETE FROM memory_vectors WHERE tenant_id = ?1 AND episode_id IN ({EPISODES})
             RETURNING agent_id, kind, seq"
        ))?,
        scope,
        |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)?.unsigned_abs())),
    )?;
    let mut per_collection: HashMap<Vec<u8>, Vec<u64>> = HashMap::new();
    for (agent, kind, key) in vectors {
        match kind.as_str() {
            "summary" => receipt.vectors.summary_vectors += 1,
            _ => receipt.vectors.message_vectors += 1,
        }
        per_collection.entry(agent).or_default().push(key);
    }
    let mut collections = Vec::with_capacity(per_collection.len());
    for (agent, removed) in per_collection {
        let agent = AgentId(codec::uuid_from(&agent)?);
        let before = MemoryTable::state(&tx, tenant, agent)?
            .ok_or_else(|| crate::error::corrupt("memory collection", "vectors without one"))?;
        let change = VectorChange {
            removed,
            added: Vec::new(),
        };
        let set = VectorSet::memory(tenant, agent);
        collections.push(record_change::<MemoryTable>(&tx, set, before, change)?);
    }

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
    tx.commit()?;
    Ok(Removed {
        receipt,
        message_seqs,
        collections,
    })
}

impl SqliteStore {
    /// Rewrites both database files without the space of deleted rows and
    /// empties their write-ahead logs, so that deleted text is gone from the
    /// disk and not only unreachable. Returns whether both checkpoints
    /// completed; a reader in the middle of a long read can hold one back.
    pub(crate) async fn compact(&self) -> Result<bool> {
        let main = self
            .db
            .write(|conn| {
                conn.execute_batch("VACUUM")?;
                checkpoint(conn, "main")
            })
            .await?;
        let search = self.indexer.compact().await?;
        Ok(main && search)
    }
}

/// Checkpoints `schema`'s write-ahead log and truncates it, retrying while
/// readers hold it back. Returns whether it completed.
pub(crate) fn checkpoint(conn: &Connection, schema: &str) -> StoreResult<bool> {
    for attempt in 0..50 {
        let busy: i64 = conn.query_row(
            &format!("PRAGMA {schema}.wal_checkpoint(TRUNCATE)"),
            [],
            |r| r.get(0),
        )?;
        if busy == 0 {
            return Ok(true);
        }
        std::thread::sleep(std::time::Duration::from_millis(10 * (attempt + 1)));
    }
    Ok(false)
}
