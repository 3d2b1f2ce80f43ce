//! Ending an episode in the caller's transaction: the decision is core's
//! ([`Closing`]); here the row is closed, its summary queued and its
//! `episode.closed` event written.

use octopus_core::appending::Closing;
use octopus_core::webhook::ClosedEpisode;
use octopus_core::{AgentId, ConversationId, EpisodeId, TenantId};
use sqlx_core::query::query;
use sqlx_core::row::Row;

use crate::error::Result;
use crate::rows::{Tx, u32_at};

/// Closes an open episode and queues its summary. False when it was closed
/// already.
pub(crate) async fn close(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    episode: EpisodeId,
    closing: &Closing,
) -> Result<bool> {
    let closed = query(
        "UPDATE episodes SET ended_at = $3, end_reason = $4, updated_at = $5
         WHERE id = $1 AND tenant_id = $2 AND ended_at IS NULL
         RETURNING conversation_id, agent_id, user_id, message_count",
    )
    .bind(episode.0)
    .bind(tenant.0)
    .bind(closing.ended_at)
    .bind(closing.reason.as_str())
    .bind(closing.now)
    .fetch_optional(&mut **tx)
    .await?;
    let Some(closed) = closed else {
        return Ok(false);
    };
    crate::jobs::queue_summary(tx, tenant, episode, closing.now, closing.class).await?;
    let user: String = closed.try_get("user_id")?;
    let closed = ClosedEpisode {
        tenant,
        episode,
        conversation: ConversationId(closed.try_get("conversation_id")?),
        agent: AgentId(closed.try_get("agent_id")?),
        user: &user,
        reason: closing.reason.as_str(),
        message_count: u64::from(u32_at(&closed, "message_count")?),
    };
    crate::webhooks::record(tx, &closed.event(closing.now)).await?;
    Ok(true)
}
