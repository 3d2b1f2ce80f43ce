//! A person's changes to one fact on PostgreSQL: a correction (a new
//! version in the fact's lineage), a deletion (every version gone from the
//! rows, their `tsvector`s, the memory vectors and the vector index,
//! resumable as forgetting a user is) and the fact's history.

use std::collections::HashMap;

use octopus_core::fact::{
    Fact, FactAction, FactCorrection, FactDeletion, FactDeletionReceipt, FactHistoryEntry,
};
use octopus_core::forget::PendingErasure;
use octopus_core::memory_jobs::WorkClass;
use octopus_core::{DomainCode, Error as DomainError, FactId, TenantId};
use sqlx_core::query::query;
use sqlx_core::row::Row;
use uuid::Uuid;

use crate::PostgresStore;

use crate::error::{Error, Result as StoreResult, corrupt};
use crate::fact_rows::record_history;
use crate::rows::Tx;
use crate::vector_sets::key_of;

/// A fact of an episode in use, as reads see it, locked for the change;
/// `NotFound` otherwise.
async fn fact_in_use(tx: &mut Tx<'_>, tenant: TenantId, id: FactId) -> StoreResult<(Fact, Uuid)> {
    let row = query(&format!(
        "SELECT {}, f.lineage_id FROM facts f {}
         WHERE f.tenant_id = $1 AND f.id = $2 AND {} FOR UPDATE OF f",
        octopus_sql::columns::FACTS,
        crate::fact_rows::IN_USE,
        crate::fact_rows::IN_USE_WHERE,
    ))
    .bind(tenant.0)
    .bind(id.0)
    .fetch_optional(&mut **tx)
    .await?
    .ok_or_else(|| Error::Domain(DomainError::not_found(FactId::KIND, id)))?;
    Ok((
        crate::fact_rows::fact_from_row(&row)?,
        row.try_get("lineage_id")?,
    ))
}

impl PostgresStore {
    /// Stores a correction; see `FactStore::correct_fact`.
    pub(crate) async fn store_correction(
        &self,
        tenant: TenantId,
        correction: &FactCorrection,
    ) -> StoreResult<Fact> {
        let mut tx = self.pool.begin().await?;
        let (corrected, _) = fact_in_use(&mut tx, tenant, correction.fact_id).await?;
        if let Some(newer) = corrected.superseded_by {
            return Err(Error::Domain(DomainError::conflict(
                DomainCode::FactReplaced,
                format!(
                    "fact {} was replaced by {newer}; correct the version that holds",
                    corrected.id
                ),
            )));
        }
        let version = correction.version_of(&corrected)?;
        crate::fact_rows::supersede(&mut tx, &version, corrected.id).await?;
        crate::fact_rows::insert_fact(
            &mut tx,
            &version,
            FactAction::Corrected,
            correction.reason.as_deref(),
        )
        .await?;
        crate::jobs::queue_fact(&mut tx, &version, correction.at, WorkClass::Live).await?;
        tx.commit().await?;
        Ok(version)
    }

    /// Removes every version of a fact in one transaction and records what
    /// is left to erase; the receipt, the record's work and its id.
    pub(crate) async fn remove_fact(
        &self,
        tenant: TenantId,
        deletion: &FactDeletion,
    ) -> StoreResult<(FactDeletionReceipt, PendingErasure, i64)> {
        let mut tx = self.pool.begin().await?;
        let (named, lineage) = fact_in_use(&mut tx, tenant, deletion.fact_id).await?;
        let mut per_collection = RemovedKeys::new();
        let receipt = remove_lineage(
            &mut tx,
            tenant,
            (named, lineage),
            deletion,
            &mut per_collection,
        )
        .await?;
        let (pending, record) =
            crate::forget::record_pending_erasure(&mut tx, tenant, per_collection).await?;
        tx.commit().await?;
        Ok((receipt, pending, record))
    }
    /// A fact's history by any version's id; see `FactStore::fact_history`.
    pub(crate) async fn read_history(
        &self,
        tenant: TenantId,
        id: FactId,
    ) -> StoreResult<Vec<FactHistoryEntry>> {
        let rows = query(
            "SELECT h.fact_id, h.action, f.text, h.changed_by, h.reason, h.at
             FROM fact_history h LEFT JOIN facts f ON f.id = h.fact_id AND f.tenant_id = h.tenant_id
             WHERE h.tenant_id = $1 AND h.lineage_id =
                 (SELECT lineage_id FROM fact_history WHERE tenant_id = $1 AND fact_id = $2 LIMIT 1)
             ORDER BY h.seq",
        )
        .bind(tenant.0)
        .bind(id.0)
        .fetch_all(&self.pool)
        .await?;
        if rows.is_empty() {
            return Err(Error::Domain(DomainError::not_found(FactId::KIND, id)));
        }
        rows.iter()
            .map(|row| {
                let action: String = row.try_get("action")?;
                let parsed = FactAction::parse(&action)
                    .ok_or_else(|| corrupt("fact history action", &action))?;
                Ok(FactHistoryEntry {
                    fact_id: FactId(row.try_get("fact_id")?),
                    action: parsed,
                    // A deletion's entry names the version that held, whose
                    // words are gone.
                    text: if parsed == FactAction::Deleted {
                        None
                    } else {
                        row.try_get("text")?
                    },
                    changed_by: row.try_get("changed_by")?,
                    reason: row.try_get("reason")?,
                    at: row.try_get("at")?,
                })
            })
            .collect()
    }
}

/// Vector keys removed, per agent (`memory_vectors.agent_id`).
pub(crate) type RemovedKeys = HashMap<Uuid, Vec<u64>>;

/// Removes every version of the fact `named` (of `lineage`) in `tx`,
/// adding the vector keys it removed to `per_collection`.
pub(crate) async fn remove_lineage(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    (named, lineage): (Fact, Uuid),
    deletion: &FactDeletion,
    per_collection: &mut RemovedKeys,
) -> StoreResult<FactDeletionReceipt> {
    let versions: Vec<Fact> = query(&format!(
        "SELECT {} FROM facts f WHERE f.tenant_id = $1 AND f.lineage_id = $2
             ORDER BY f.seq FOR UPDATE",
        octopus_sql::columns::FACTS
    ))
    .bind(tenant.0)
    .bind(lineage)
    .fetch_all(&mut **tx)
    .await?
    .iter()
    .map(crate::fact_rows::fact_from_row)
    .collect::<StoreResult<_>>()?;
    // The history's deletion names the version that held then.
    let held = versions
        .iter()
        .find(|fact| fact.is_current())
        .cloned()
        .unwrap_or(named);
    let vectors = remove_derived(tx, tenant, &versions, per_collection).await?;
    let count = query("DELETE FROM facts WHERE tenant_id = $1 AND lineage_id = $2")
        .bind(tenant.0)
        .bind(lineage)
        .execute(&mut **tx)
        .await?
        .rows_affected();
    query("UPDATE fact_history SET reason = NULL WHERE tenant_id = $1 AND lineage_id = $2")
        .bind(tenant.0)
        .bind(lineage)
        .execute(&mut **tx)
        .await?;
    let change = (
        FactAction::Deleted,
        deletion.changed_by.as_str(),
        deletion.reason.as_deref(),
    );
    record_history(tx, &held, lineage, change, deletion.at).await?;
    Ok(FactDeletionReceipt {
        fact_id: FactId(lineage),
        versions: count,
        vectors,
        compacted: false,
    })
}

/// What was made of these versions of facts, besides their rows: their words
/// in their episodes' key facts, their queued work, and their vectors (found
/// through their episodes' index, as a purge finds them), whose keys join
/// `per_collection`. Returns the vectors removed.
pub(crate) async fn remove_derived(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    versions: &[Fact],
    per_collection: &mut RemovedKeys,
) -> StoreResult<u64> {
    // The episode's key facts are the model's words for what it learned: a
    // learned version's words leave them too.
    for fact in versions {
        query(
            "UPDATE episodes SET key_facts = (
                     SELECT coalesce(json_agg(said), '[]'::json)
                     FROM json_array_elements_text(key_facts) AS said WHERE said <> $3)
                 WHERE id = $1 AND tenant_id = $2 AND key_facts IS NOT NULL",
        )
        .bind(fact.episode_id.map(|e| e.0))
        .bind(tenant.0)
        .bind(&fact.text)
        .execute(&mut **tx)
        .await?;
    }
    let ids: Vec<Uuid> = versions.iter().map(|f| f.id.0).collect();
    query("DELETE FROM memory_jobs WHERE tenant_id = $1 AND target = ANY($2)")
        .bind(tenant.0)
        .bind(&ids)
        .execute(&mut **tx)
        .await?;
    let episodes: Vec<Uuid> = versions.iter().map(|f| f.vector_episode().0).collect();
    let vectors = query(
        "DELETE FROM memory_vectors
             WHERE episode_id = ANY($3) AND kind = 'fact' AND tenant_id = $1 AND fact_id = ANY($2)
             RETURNING agent_id, seq",
    )
    .bind(tenant.0)
    .bind(&ids)
    .bind(&episodes)
    .fetch_all(&mut **tx)
    .await?;
    for row in &vectors {
        per_collection
            .entry(row.try_get("agent_id")?)
            .or_default()
            .push(key_of(row)?);
    }
    Ok(vectors.len() as u64)
}
