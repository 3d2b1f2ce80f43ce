//! Erasing one message on SQLite: the row, its vector and queued work, the
//! facts learned from it, and its episode's summary, in one transaction that
//! records what is left (its full-text entry, the vector index), finished as
//! forgetting a user is (`forget.rs`).

use octopus_core::fact::FactDeletion;
use octopus_core::forget::PendingErasure;
use octopus_core::memory_jobs::WorkClass;
use octopus_core::message::{MessageErasure, MessageErasureReceipt};
use octopus_core::{EpisodeId, Error as DomainError, MessageId, TenantId};
use rusqlite::{Connection, OptionalExtension, params};

use crate::codec::{self, micros};
use crate::error::Result as StoreResult;
use crate::fact_changes::RemovedKeys;
use crate::rows;

/// What the erasure's transaction removed, and its record of what is left.
pub(crate) struct Removed {
    pub receipt: MessageErasureReceipt,
    pub pending: PendingErasure,
    pub record: i64,
}

/// The erased message's row number, episode, and whether that is closed.
struct Located {
    seq: i64,
    episode: EpisodeId,
    closed: bool,
}

/// A message of a live episode of the tenant; `NotFound` otherwise.
fn locate(tx: &Connection, tenant: TenantId, id: MessageId) -> StoreResult<Located> {
    tx.prepare_cached(
        "SELECT m.seq, m.episode_id, e.ended_at IS NOT NULL
         FROM messages m JOIN episodes e ON e.id = m.episode_id AND e.tenant_id = m.tenant_id
         WHERE m.id = ?1 AND m.tenant_id = ?2 AND e.deleted_at IS NULL",
    )?
    .query_row([id.0.as_bytes(), tenant.0.as_bytes()], |r| {
        Ok((r.get(0)?, r.get::<_, Vec<u8>>(1)?, r.get(2)?))
    })
    .optional()?
    .map(|(seq, episode, closed)| -> StoreResult<Located> {
        Ok(Located {
            seq,
            episode: EpisodeId(codec::uuid_from(&episode)?),
            closed,
        })
    })
    .transpose()?
    .ok_or_else(|| DomainError::not_found(MessageId::KIND, id).into())
}

/// Removes the message and what was made of it; see
/// `EpisodeStore::erase_message`.
pub(crate) fn remove(
    conn: &mut Connection,
    tenant: TenantId,
    erasure: &MessageErasure,
) -> StoreResult<Removed> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let id = erasure.message_id;
    let Located {
        seq,
        episode,
        closed,
    } = locate(&tx, tenant, id)?;
    let mut removed_keys = RemovedKeys::new();

    // The facts learned from it, each with every version, as a person's
    // deletion removes them.
    let deletion = |fact_id| FactDeletion {
        fact_id,
        changed_by: erasure.changed_by.clone(),
        reason: Some(match &erasure.reason {
            Some(reason) => format!("a message it came from was erased: {reason}"),
            None => "a message it came from was erased".to_owned(),
        }),
        at: erasure.at,
    };
    let citing: Vec<_> = crate::facts::episode_facts(&tx, tenant, episode)?
        .into_iter()
        .filter(|fact| fact.message_ids.contains(&id))
        .collect();
    let mut facts_deleted = 0;
    let mut vectors = 0;
    for fact in citing {
        // Gone already with another version of its lineage.
        let Some(fact) = crate::facts::any_fact(&tx, tenant, fact.id)? else {
            continue;
        };
        let receipt = crate::fact_changes::remove_lineage(
            &tx,
            tenant,
            fact.clone(),
            &deletion(fact.id),
            &mut removed_keys,
        )?;
        facts_deleted += 1;
        vectors += receipt.vectors;
    }

    // Its vector and its episode's summary vector, found through the
    // episode's index.
    let keys: Vec<(Vec<u8>, u64)> = rows::collect(
        &mut *tx.prepare_cached(
            "DELETE FROM memory_vectors
             WHERE episode_id = ?1 AND tenant_id = ?2
               AND ((kind = 'message' AND message_id = ?3) OR kind = 'summary')
             RETURNING agent_id, seq",
        )?,
        params![episode.0.as_bytes(), tenant.0.as_bytes(), id.0.as_bytes()],
        |r| Ok((r.get(0)?, r.get::<_, i64>(1)?.unsigned_abs())),
    )?;
    for (agent, key) in keys {
        vectors += 1;
        removed_keys.entry(agent).or_default().push(key);
    }
    tx.execute(
        "DELETE FROM memory_jobs WHERE tenant_id = ?1 AND target = ?2",
        params![tenant.0.as_bytes(), id.0.as_bytes()],
    )?;
    tx.execute(
        "DELETE FROM messages WHERE id = ?1 AND tenant_id = ?2",
        params![id.0.as_bytes(), tenant.0.as_bytes()],
    )?;

    // The summary and key facts may hold its words: dropped, and a closed
    // episode's written again. With facts gone, they are learned again
    // from the messages left.
    let summary_dropped = tx.execute(
        "UPDATE episodes SET summary = NULL, summary_source = NULL, key_facts = '[]',
                             summary_embedding = NULL
         WHERE id = ?1 AND tenant_id = ?2
           AND (summary IS NOT NULL OR summary_embedding IS NOT NULL OR key_facts <> '[]')",
        params![episode.0.as_bytes(), tenant.0.as_bytes()],
    )? > 0;
    // A new `updated_at` tells every server's history cache that the
    // episode's messages changed, though their count did not.
    tx.execute(
        "UPDATE episodes SET updated_at = ?3,
                facts_learned_through = CASE WHEN ?4 THEN 0 ELSE facts_learned_through END
         WHERE id = ?1 AND tenant_id = ?2",
        params![
            episode.0.as_bytes(),
            tenant.0.as_bytes(),
            micros(erasure.at),
            facts_deleted > 0
        ],
    )?;
    if closed {
        crate::jobs::queue_summary(&tx, tenant, episode, micros(erasure.at), WorkClass::Live)?;
    }
    let (pending, record) =
        crate::forget::record_pending_erasure(&tx, tenant, removed_keys, vec![seq])?;
    tx.commit()?;
    Ok(Removed {
        receipt: MessageErasureReceipt {
            message_id: id,
            episode_id: episode,
            facts_deleted,
            vectors,
            summary_dropped,
            compacted: false,
        },
        pending,
        record,
    })
}
