//! Ending an episode in the caller's transaction: the decision is core's
//! ([`Closing`]); here the row is closed, its summary queued and its
//! `episode.closed` event written.

use octopus_core::appending::Closing;
use octopus_core::webhook::ClosedEpisode;
use octopus_core::{AgentId, ConversationId, EpisodeId, TenantId};
use rusqlite::{Connection, OptionalExtension, params};

use crate::codec::{self, micros};
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
             WHERE id = ?1 AND tenant_id = ?2 AND ended_at IS NULL
             RETURNING conversation_id, agent_id, user_id, message_count",
        )?
        .query_row(
            params![
                episode.0.as_bytes(),
                tenant.0.as_bytes(),
                micros(closing.ended_at),
                closing.reason.as_str(),
                now
            ],
            |row| {
                Ok((
                    row.get::<_, Vec<u8>>(0)?,
                    row.get::<_, Vec<u8>>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, i64>(3)?,
                ))
            },
        )
        .optional()?;
    let Some((conversation, agent, user, message_count)) = closed else {
        return Ok(false);
    };
    crate::jobs::queue_summary(tx, tenant, episode, now, closing.class)?;
    let closed = ClosedEpisode {
        tenant,
        episode,
        conversation: ConversationId(codec::uuid_from(&conversation)?),
        agent: AgentId(codec::uuid_from(&agent)?),
        user: &user,
        reason: closing.reason.as_str(),
        message_count: message_count.unsigned_abs(),
    };
    crate::webhooks::record(tx, &closed.event(closing.now))?;
    Ok(true)
}
