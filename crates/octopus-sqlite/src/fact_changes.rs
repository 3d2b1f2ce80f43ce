//! A person's changes to one fact on SQLite: a correction (a new version in
//! the fact's lineage), a deletion (every version gone from the rows, the
//! full-text index, the memory vectors and the vector index, resumable as
//! forgetting a user is) and the fact's history.

use std::collections::HashMap;

use octopus_core::fact::{
    Fact, FactAction, FactCorrection, FactDeletion, FactDeletionReceipt, FactHistoryEntry,
};
use octopus_core::forget::PendingErasure;
use octopus_core::memory_jobs::WorkClass;
use octopus_core::{DomainCode, Error as DomainError, FactId, TenantId};
use rusqlite::{Connection, params};

use crate::codec::{self, micros};
use crate::error::{Result as StoreResult, corrupt};
use crate::rows;

/// A fact of an episode in use, as reads see it; `NotFound` otherwise.
fn fact_in_use(tx: &Connection, tenant: TenantId, id: FactId) -> StoreResult<Fact> {
    crate::fact_rows::in_use(tx, tenant, id)?
        .ok_or_else(|| DomainError::not_found(FactId::KIND, id).into())
}

/// Stores a correction; see `FactStore::correct_fact`.
pub(crate) fn correct(
    conn: &mut Connection,
    tenant: TenantId,
    correction: &FactCorrection,
) -> StoreResult<Fact> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let corrected = fact_in_use(&tx, tenant, correction.fact_id)?;
    if let Some(newer) = corrected.superseded_by {
        return Err(DomainError::conflict(
            DomainCode::FactReplaced,
            format!(
                "fact {} was replaced by {newer}; correct the version that holds",
                corrected.id
            ),
        )
        .into());
    }
    let version = correction.version_of(&corrected)?;
    crate::fact_rows::supersede(&tx, &version, corrected.id)?;
    crate::fact_rows::insert_fact(
        &tx,
        &version,
        FactAction::Corrected,
        correction.reason.as_deref(),
    )?;
    crate::jobs::queue_fact(&tx, &version, micros(correction.at), WorkClass::Live)?;
    tx.commit()?;
    Ok(version)
}

/// What the deletion's transaction removed, and its record of what is left.
pub(crate) struct Removed {
    pub receipt: FactDeletionReceipt,
    pub pending: PendingErasure,
    pub record: i64,
}

/// Removes every version of a fact in one transaction; see
/// `FactStore::delete_fact`.
pub(crate) fn remove(
    conn: &mut Connection,
    tenant: TenantId,
    deletion: &FactDeletion,
) -> StoreResult<Removed> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let named = fact_in_use(&tx, tenant, deletion.fact_id)?;
    let mut removed_keys = HashMap::new();
    let receipt = remove_lineage(&tx, tenant, named, deletion, &mut removed_keys)?;
    let (pending, record) =
        crate::forget::record_pending_erasure(&tx, tenant, removed_keys, Vec::new())?;
    tx.commit()?;
    Ok(Removed {
        receipt,
        pending,
        record,
    })
}

/// Vector keys removed, per agent (`memory_vectors.agent_id`).
pub(crate) type RemovedKeys = HashMap<Vec<u8>, Vec<u64>>;

/// Removes every version of `named`'s fact in `tx`, adding the vector keys
/// it removed to `removed_keys`.
pub(crate) fn remove_lineage(
    tx: &Connection,
    tenant: TenantId,
    named: Fact,
    deletion: &FactDeletion,
    removed_keys: &mut RemovedKeys,
) -> StoreResult<FactDeletionReceipt> {
    let lineage: Vec<u8> = tx.query_row(
        "SELECT lineage_id FROM facts WHERE id = ?1",
        [named.id.0.as_bytes()],
        |r| r.get(0),
    )?;
    let scope = params![tenant.0.as_bytes(), lineage];
    let versions: Vec<Fact> = rows::collect(
        &mut tx.prepare(&format!(
            "SELECT {} FROM facts f WHERE f.tenant_id = ?1 AND f.lineage_id = ?2 ORDER BY f.seq",
            octopus_sql::columns::FACTS
        ))?,
        scope,
        crate::fact_rows::fact_from_row,
    )?;
    // The history's deletion names the version that held then.
    let held = versions
        .iter()
        .find(|fact| fact.is_current())
        .cloned()
        .unwrap_or(named);

    // The episode's key facts are the model's words for what it learned:
    // a learned version's words leave them too.
    let mut vectors = 0;
    for fact in &versions {
        vectors += remove_derived(tx, tenant, fact, removed_keys)?;
    }
    // Their full-text entries go with them (a trigger, with secure-delete).
    let count = tx.execute(
        "DELETE FROM facts WHERE tenant_id = ?1 AND lineage_id = ?2",
        scope,
    )?;
    tx.execute(
        "UPDATE fact_history SET reason = NULL WHERE tenant_id = ?1 AND lineage_id = ?2",
        scope,
    )?;
    tx.prepare_cached(
        "INSERT INTO fact_history (tenant_id, agent_id, user_id, episode_id, lineage_id, fact_id,
                                   action, changed_by, reason, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'deleted', ?7, ?8, ?9)",
    )?
    .execute(params![
        tenant.0.as_bytes(),
        held.agent_id.0.as_bytes(),
        held.user_id,
        held.episode_id.map(|e| *e.0.as_bytes()),
        lineage,
        held.id.0.as_bytes(),
        deletion.changed_by,
        deletion.reason,
        micros(deletion.at),
    ])?;
    let deleted = octopus_core::webhook::fact_deleted(
        &held,
        codec::uuid_from(&lineage)?,
        &deletion.changed_by,
        deletion.at,
    );
    crate::webhooks::record(tx, &deleted)?;
    Ok(FactDeletionReceipt {
        fact_id: FactId(codec::uuid_from(&lineage)?),
        versions: count as u64,
        vectors,
        compacted: false,
    })
}

/// What was made of one version of a fact, besides its row: its words in
/// its episode's key facts, its queued work, and its vector (found through
/// its episode's index, as a purge finds it), whose key joins
/// `removed_keys`. Returns the vectors removed.
pub(crate) fn remove_derived(
    tx: &Connection,
    tenant: TenantId,
    fact: &Fact,
    removed_keys: &mut RemovedKeys,
) -> StoreResult<u64> {
    drop_key_fact(tx, tenant, fact)?;
    tx.execute(
        "DELETE FROM memory_jobs WHERE tenant_id = ?1 AND target = ?2",
        params![tenant.0.as_bytes(), fact.id.0.as_bytes()],
    )?;
    let keys: Vec<(Vec<u8>, u64)> = rows::collect(
        &mut *tx.prepare_cached(
            "DELETE FROM memory_vectors
             WHERE episode_id = ?1 AND kind = 'fact' AND fact_id = ?2 AND tenant_id = ?3
             RETURNING agent_id, seq",
        )?,
        params![
            fact.vector_episode().0.as_bytes(),
            fact.id.0.as_bytes(),
            tenant.0.as_bytes()
        ],
        |r| Ok((r.get(0)?, r.get::<_, i64>(1)?.unsigned_abs())),
    )?;
    let vectors = keys.len() as u64;
    for (agent, key) in keys {
        removed_keys.entry(agent).or_default().push(key);
    }
    Ok(vectors)
}

/// Takes a learned fact's words out of its episode's key facts.
fn drop_key_fact(tx: &Connection, tenant: TenantId, fact: &Fact) -> StoreResult<()> {
    let Some(episode) = fact.episode_id else {
        return Ok(());
    };
    let key_facts: Option<String> = tx
        .query_row(
            "SELECT key_facts FROM episodes WHERE id = ?1 AND tenant_id = ?2",
            [episode.0.as_bytes(), tenant.0.as_bytes()],
            |r| r.get(0),
        )
        .map_err(crate::error::Error::from)?;
    let Some(key_facts) = key_facts else {
        return Ok(());
    };
    let listed: Vec<String> =
        serde_json::from_str(&key_facts).map_err(|e| corrupt("episode key facts", e))?;
    let kept: Vec<&String> = listed.iter().filter(|said| **said != fact.text).collect();
    if kept.len() < listed.len() {
        tx.execute(
            "UPDATE episodes SET key_facts = ?3 WHERE id = ?1 AND tenant_id = ?2",
            params![
                episode.0.as_bytes(),
                tenant.0.as_bytes(),
                serde_json::to_string(&kept).map_err(|e| corrupt("episode key facts", e))?
            ],
        )?;
    }
    Ok(())
}

/// A fact's history by any version's id; see `FactStore::fact_history`.
pub(crate) fn history(
    conn: &Connection,
    tenant: TenantId,
    id: FactId,
) -> StoreResult<Vec<FactHistoryEntry>> {
    let entries = rows::collect(
        &mut *conn.prepare_cached(
            "SELECT h.fact_id, h.action, f.text, h.changed_by, h.reason, h.at
             FROM fact_history h LEFT JOIN facts f ON f.id = h.fact_id AND f.tenant_id = h.tenant_id
             WHERE h.tenant_id = ?1 AND h.lineage_id =
                 (SELECT lineage_id FROM fact_history WHERE tenant_id = ?1 AND fact_id = ?2 LIMIT 1)
             ORDER BY h.seq",
        )?,
        [tenant.0.as_bytes(), id.0.as_bytes()],
        |row| {
            let action: String = row.get("action")?;
            let deleted = action == FactAction::Deleted.as_str();
            Ok(FactHistoryEntry {
                fact_id: FactId(rows::uuid(row, "fact_id")?),
                action: FactAction::parse(&action)
                    .ok_or_else(|| corrupt("fact history action", action))?,
                // A deletion's entry names the version that held, whose
                // words are gone.
                text: if deleted { None } else { row.get("text")? },
                changed_by: row.get("changed_by")?,
                reason: row.get("reason")?,
                at: rows::time(row, "at")?,
            })
        },
    )?;
    if entries.is_empty() {
        return Err(DomainError::not_found(FactId::KIND, id).into());
    }
    Ok(entries)
}
