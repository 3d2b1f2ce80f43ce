//! Erasing one message on PostgreSQL: the row (and its `tsvector`), its
//! vector and queued work, the facts learned from it, and its episode's
//! summary, in one transaction that records what is left (the vector
//! index), finished as forgetting a user is (`forget.rs`).

use octopus_core::fact::{Fact, FactAction};
use octopus_core::forget::PendingErasure;
use octopus_core::memory_jobs::WorkClass;
use octopus_core::message::{MessageErasure, MessageErasureReceipt};
use octopus_core::{AgentId, EpisodeId, Error as DomainError, MessageId, TenantId};
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;
use sqlx_core::row::Row;
use uuid::Uuid;

use crate::PostgresStore;
use crate::error::Result as StoreResult;
use crate::fact_changes::{RemovedKeys, remove_derived};
use crate::fact_rows::record_history;
use crate::rows::Tx;
use crate::vector_sets::key_of;

/// Removes one version of a fact, learned from the erased message: its row
/// (and `tsvector`), vector and queued work, and its words in its episode's
/// key facts. The version it replaced takes its place in the lineage:
/// replaced when and by what it was, or current. Its history records the
/// deletion, with the key's name and no word of it. Returns the vectors
/// removed.
async fn splice_out(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    fact: &Fact,
    erasure: &MessageErasure,
    per_collection: &mut RemovedKeys,
) -> StoreResult<u64> {
    let vectors = remove_derived(tx, tenant, std::slice::from_ref(fact), per_collection).await?;
    query(
        "UPDATE facts SET valid_to = $3, superseded_by = $4 WHERE tenant_id = $1 AND superseded_by = $2",
    )
    .bind(tenant.0)
    .bind(fact.id.0)
    .bind(fact.valid_to)
    .bind(fact.superseded_by.map(|id| id.0))
    .execute(&mut **tx)
    .await?;
    let lineage: Uuid =
        query_scalar("DELETE FROM facts WHERE id = $1 AND tenant_id = $2 RETURNING lineage_id")
            .bind(fact.id.0)
            .bind(tenant.0)
            .fetch_one(&mut **tx)
            .await?;
    query("UPDATE fact_history SET reason = NULL WHERE tenant_id = $1 AND fact_id = $2")
        .bind(tenant.0)
        .bind(fact.id.0)
        .execute(&mut **tx)
        .await?;
    let reason = match &erasure.reason {
        Some(reason) => format!("the message it came from was erased: {reason}"),
        None => "the message it came from was erased".to_owned(),
    };
    let change = (
        FactAction::Deleted,
        erasure.changed_by.as_str(),
        Some(reason.as_str()),
    );
    record_history(tx, fact, lineage, change, erasure.at).await?;
    Ok(vectors)
}

impl PostgresStore {
    /// Removes the message and what was made of it in one transaction and
    /// records what is left to erase; see `EpisodeStore::erase_message`.
    pub(crate) async fn remove_message(
        &self,
        tenant: TenantId,
        erasure: &MessageErasure,
    ) -> StoreResult<(MessageErasureReceipt, PendingErasure, i64)> {
        let id = erasure.message_id;
        let mut tx = self.pool.begin().await?;
        let located = query(
            "SELECT m.episode_id, e.ended_at IS NOT NULL AS closed, e.agent_id, e.user_id
             FROM messages m JOIN episodes e ON e.id = m.episode_id AND e.tenant_id = m.tenant_id
             WHERE m.id = $1 AND m.tenant_id = $2 AND e.deleted_at IS NULL
             FOR UPDATE OF e",
        )
        .bind(id.0)
        .bind(tenant.0)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| DomainError::not_found(MessageId::KIND, id))?;
        let episode = EpisodeId(located.try_get("episode_id")?);
        let closed: bool = located.try_get("closed")?;
        let agent = AgentId(located.try_get("agent_id")?);
        let user: String = located.try_get("user_id")?;
        let mut per_collection = RemovedKeys::new();

        // The versions of facts learned from it leave; each one's
        // predecessor holds for as long as it did, as if it had never been
        // learned.
        let citing: Vec<Fact> = crate::fact_rows::episode_facts(&mut *tx, tenant, episode)
            .await?
            .into_iter()
            .filter(|fact| fact.message_ids.contains(&id))
            .collect();
        let facts_deleted = citing.len() as u64;
        let mut vectors = 0;
        for fact in &citing {
            vectors += splice_out(&mut tx, tenant, fact, erasure, &mut per_collection).await?;
        }

        // Its vector and its episode's summary vector, found through the
        // episode's index.
        let removed = query(
            "DELETE FROM memory_vectors
             WHERE episode_id = $1 AND tenant_id = $2
               AND ((kind = 'message' AND message_id = $3) OR kind = 'summary')
             RETURNING agent_id, seq",
        )
        .bind(episode.0)
        .bind(tenant.0)
        .bind(id.0)
        .fetch_all(&mut *tx)
        .await?;
        for row in &removed {
            vectors += 1;
            per_collection
                .entry(row.try_get("agent_id")?)
                .or_default()
                .push(key_of(row)?);
        }
        query("DELETE FROM memory_jobs WHERE tenant_id = $1 AND target = $2")
            .bind(tenant.0)
            .bind(id.0)
            .execute(&mut *tx)
            .await?;
        query("DELETE FROM messages WHERE id = $1 AND tenant_id = $2")
            .bind(id.0)
            .bind(tenant.0)
            .execute(&mut *tx)
            .await?;

        // The summary and key facts may hold its words: dropped, and a
        // closed episode's written again. With facts gone, they are learned
        // again from the messages left.
        let summary_dropped = query(
            "UPDATE episodes SET summary = NULL, summary_source = NULL, key_facts = '[]'::json,
                                 summary_embedding = NULL
             WHERE id = $1 AND tenant_id = $2
               AND (summary IS NOT NULL OR summary_embedding IS NOT NULL
                    OR json_array_length(key_facts) > 0)",
        )
        .bind(episode.0)
        .bind(tenant.0)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            > 0;
        // A new `updated_at` tells every server's history cache that the
        // episode's messages changed, though their count did not.
        query(
            "UPDATE episodes SET updated_at = $3,
                    facts_learned_through = CASE WHEN $4 THEN 0 ELSE facts_learned_through END
             WHERE id = $1 AND tenant_id = $2",
        )
        .bind(episode.0)
        .bind(tenant.0)
        .bind(erasure.at)
        .bind(facts_deleted > 0)
        .execute(&mut *tx)
        .await?;
        if closed {
            crate::jobs::queue_summary(&mut tx, tenant, episode, erasure.at, WorkClass::Live)
                .await?;
        }
        let erased = octopus_core::webhook::message_erased(
            tenant,
            id,
            episode,
            (agent, &user),
            &erasure.changed_by,
            erasure.at,
        );
        crate::webhooks::record(&mut tx, &erased).await?;
        let (pending, record) =
            crate::forget::record_pending_erasure(&mut tx, tenant, per_collection).await?;
        tx.commit().await?;
        let receipt = MessageErasureReceipt {
            message_id: id,
            episode_id: episode,
            facts_deleted,
            vectors,
            summary_dropped,
            compacted: false,
        };
        Ok((receipt, pending, record))
    }
}
