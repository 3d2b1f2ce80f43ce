//! Erasing one message on PostgreSQL: the row (and its `tsvector`), its
//! vector and queued work, the facts learned from it, and its episode's
//! summary, in one transaction that records what is left (the vector
//! index), finished as forgetting a user is (`forget.rs`).

use octopus_core::fact::FactDeletion;
use octopus_core::forget::PendingErasure;
use octopus_core::memory_jobs::WorkClass;
use octopus_core::message::{MessageErasure, MessageErasureReceipt};
use octopus_core::{EpisodeId, Error as DomainError, MessageId, TenantId};
use sqlx_core::query::query;
use sqlx_core::query_scalar::query_scalar;
use sqlx_core::row::Row;
use uuid::Uuid;

use crate::PostgresStore;
use crate::error::Result as StoreResult;
use crate::fact_changes::{RemovedKeys, remove_lineage};
use crate::vector_sets::key_of;

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
            "SELECT m.episode_id, e.ended_at IS NOT NULL AS closed
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
        let mut per_collection = RemovedKeys::new();

        // The facts learned from it, each with every version, as a person's
        // deletion removes them.
        let reason = Some(match &erasure.reason {
            Some(reason) => format!("a message it came from was erased: {reason}"),
            None => "a message it came from was erased".to_owned(),
        });
        let citing: Vec<_> = crate::facts::episode_facts(&mut *tx, tenant, episode)
            .await?
            .into_iter()
            .filter(|fact| fact.message_ids.contains(&id))
            .collect();
        let mut facts_deleted = 0;
        let mut vectors = 0;
        for fact in citing {
            // Gone already with another version of its lineage.
            let lineage: Option<Uuid> = query_scalar(
                "SELECT lineage_id FROM facts WHERE id = $1 AND tenant_id = $2 FOR UPDATE",
            )
            .bind(fact.id.0)
            .bind(tenant.0)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(lineage) = lineage else {
                continue;
            };
            let deletion = FactDeletion {
                fact_id: fact.id,
                changed_by: erasure.changed_by.clone(),
                reason: reason.clone(),
                at: erasure.at,
            };
            let receipt = remove_lineage(
                &mut tx,
                tenant,
                (fact, lineage),
                &deletion,
                &mut per_collection,
            )
            .await?;
            facts_deleted += 1;
            vectors += receipt.vectors;
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
