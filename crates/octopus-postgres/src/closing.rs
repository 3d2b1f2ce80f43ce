//! Ending an episode in the caller's transaction: the decision is core's
//! ([`Closing`]); here the row is closed and its summary queued.

use octopus_core::appending::Closing;
use octopus_core::{EpisodeId, TenantId};
use sqlx_core::query::query;

use crate::error::Result;
use crate::rows::Tx;

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
         WHERE id = $1 AND tenant_id = $2 AND ended_at IS NULL",
    )
    .bind(episode.0)
    .bind(tenant.0)
    .bind(closing.ended_at)
    .bind(closing.reason.as_str())
    .bind(closing.now)
    .execute(&mut **tx)
    .await?
    .rows_affected();
    if closed > 0 {
        crate::jobs::queue_summary(tx, tenant, episode, closing.now, closing.class).await?;
    }
    Ok(closed > 0)
}
