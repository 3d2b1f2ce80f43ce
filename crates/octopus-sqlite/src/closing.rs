//! Ending an episode in the caller's transaction: the decision is core's
//! ([`Closing`]); here the row is closed and its summary queued.

use octopus_core::EpisodeId;
use octopus_core::TenantId;
use octopus_core::appending::Closing;
use rusqlite::{Connection, params};

use crate::codec::micros;
use crate::error::Result;

/// Closes an open episode and queues its summary; false when it was closed
/// already.
pub(crate) fn close(
    tx: &Connection,
    tenant: TenantId,
    episode: EpisodeId,
    closing: &Closing,
) -> Result<bool> {
    let now = micros(closing.now);
    let closed = tx
        .prepare_cached(
            "UPDATE episodes SET ended_at = ?3, end_reason = ?4, updated_at = ?5
             WHERE id = ?1 AND tenant_id = ?2 AND ended_at IS NULL",
        )?
        .execute(params![
            episode.0.as_bytes(),
            tenant.0.as_bytes(),
            micros(closing.ended_at),
            closing.reason.as_str(),
            now
        ])?;
    if closed > 0 {
        crate::jobs::queue_summary(tx, tenant, episode, now, closing.class)?;
    }
    Ok(closed > 0)
}
