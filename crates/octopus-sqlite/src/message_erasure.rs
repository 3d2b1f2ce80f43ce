//! Erasing one message on SQLite: the row, its vector and queued work, the
//! facts learned from it, and its episode's summary, in one transaction that
//! records what is left (its full-text entry, the vector index), finished as
//! forgetting a user is (`forget.rs`).

use octopus_core::fact::Fact;
use octopus_core::forget::PendingErasure;
use octopus_core::memory_jobs::WorkClass;
use octopus_core::message::{MessageErasure, MessageErasureReceipt};
use octopus_core::webhook;
use octopus_core::{AgentId, EpisodeId, Error as DomainError, MessageId, TenantId};
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

/// The erased message's row number, episode, whether that is closed, and
/// whose it is.
struct Located {
    seq: i64,
    episode: EpisodeId,
    closed: bool,
    agent: AgentId,
    user: String,
}

/// A message of a live episode of the tenant; `NotFound` otherwise.
fn locate(tx: &Connection, tenant: TenantId, id: MessageId) -> StoreResult<Located> {
    tx.prepare_cached(
        "SELECT m.seq, m.episode_id, e.ended_at IS NOT NULL, e.agent_id, e.user_id
         FROM messages m JOIN episodes e ON e.id = m.episode_id AND e.tenant_id = m.tenant_id
         WHERE m.id = ?1 AND m.tenant_id = ?2 AND e.deleted_at IS NULL",
    )?
    .query_row([id.0.as_bytes(), tenant.0.as_bytes()], |r| {
        Ok((
            r.get(0)?,
            r.get::<_, Vec<u8>>(1)?,
            r.get(2)?,
            r.get::<_, Vec<u8>>(3)?,
            r.get(4)?,
        ))
    })
    .optional()?
    .map(
        |(seq, episode, closed, agent, user)| -> StoreResult<Located> {
            Ok(Located {
                seq,
                episode: EpisodeId(codec::uuid_from(&episode)?),
                closed,
                agent: AgentId(codec::uuid_from(&agent)?),
                user,
            })
        },
    )
    .transpose()?
    .ok_or_else(|| DomainError::not_found(MessageId::KIND, id).into())
}

/// Removes one version of a fact, learned from the erased message: its row
/// (and full-text entry), vector and queued work, and its words in its
/// episode's key facts. The version it replaced takes its place in the
/// lineage: replaced when and by what it was, or current. Its history
/// records the deletion, with the key's name and no word of it. Returns the
/// vectors removed.
fn splice_out(
    tx: &Connection,
    tenant: TenantId,
    fact: &Fact,
    erasure: &MessageErasure,
    removed_keys: &mut RemovedKeys,
) -> StoreResult<u64> {
    let vectors = crate::fact_changes::remove_derived(tx, tenant, fact, removed_keys)?;
    tx.execute(
        "UPDATE facts SET valid_to = ?3, superseded_by = ?4 WHERE tenant_id = ?1 AND superseded_by = ?2",
        params![
            tenant.0.as_bytes(),
            fact.id.0.as_bytes(),
            fact.valid_to.map(micros),
            fact.superseded_by.map(|id| *id.0.as_bytes())
        ],
    )?;
    let lineage: Vec<u8> = tx.query_row(
        "SELECT lineage_id FROM facts WHERE id = ?1 AND tenant_id = ?2",
        params![fact.id.0.as_bytes(), tenant.0.as_bytes()],
        |r| r.get(0),
    )?;
    tx.execute(
        "DELETE FROM facts WHERE id = ?1 AND tenant_id = ?2",
        params![fact.id.0.as_bytes(), tenant.0.as_bytes()],
    )?;
    tx.execute(
        "UPDATE fact_history SET reason = NULL WHERE tenant_id = ?1 AND fact_id = ?2",
        params![tenant.0.as_bytes(), fact.id.0.as_bytes()],
    )?;
    let reason = match &erasure.reason {
        Some(reason) => format!("the message it came from was erased: {reason}"),
        None => "the message it came from was erased".to_owned(),
    };
    tx.prepare_cached(
        "INSERT INTO fact_history (tenant_id, agent_id, user_id, episode_id, lineage_id, fact_id,
                                   action, changed_by, reason, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'deleted', ?7, ?8, ?9)",
    )?
    .execute(params![
        tenant.0.as_bytes(),
        fact.agent_id.0.as_bytes(),
        fact.user_id,
        fact.episode_id.map(|e| *e.0.as_bytes()),
        lineage,
        fact.id.0.as_bytes(),
        erasure.changed_by,
        reason,
        micros(erasure.at),
    ])?;
    let deleted = webhook::fact_deleted(
        fact,
        codec::uuid_from(&lineage)?,
        &erasure.changed_by,
        erasure.at,
    );
    crate::webhooks::record(tx, &deleted)?;
    Ok(vectors)
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
        agent,
        user,
    } = locate(&tx, tenant, id)?;
    let mut removed_keys = RemovedKeys::new();

    // The versions of facts learned from it leave; each one's predecessor
    // holds for as long as it did, as if it had never been learned.
    let citing: Vec<Fact> = crate::fact_rows::episode_facts(&tx, tenant, episode)?
        .into_iter()
        .filter(|fact| fact.message_ids.contains(&id))
        .collect();
    let facts_deleted = citing.len() as u64;
    let mut vectors = 0;
    for fact in &citing {
        vectors += splice_out(&tx, tenant, fact, erasure, &mut removed_keys)?;
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
    let erased = webhook::message_erased(
        tenant,
        id,
        episode,
        (agent, &user),
        &erasure.changed_by,
        erasure.at,
    );
    crate::webhooks::record(&tx, &erased)?;
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
