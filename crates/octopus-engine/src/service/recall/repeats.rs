//! Hits that say the same words again, collapsed before the ranking is cut
//! to the hits asked for ([`octopus_core::repeats`]).

use std::collections::HashMap;

use octopus_core::message::Message;
use octopus_core::recall::RecallQuery;
use octopus_core::recall_ranking::Memory;
use octopus_core::repeats::{collapse_repeats, said_as};
use octopus_core::{MessageId, TenantId};

use crate::error::Result;
use crate::octopus::Octopus;

/// Ranked memories read for their words, per hit asked for: a repeat ranks
/// next to what it repeats (the same words score the same), so the head
/// holds the repeats that would take a hit's place.
const REPEATS_HEAD_PER_HIT: u32 = 2;

impl Octopus {
    /// Collapses the messages among the head of `ranked` that one speaker
    /// said in the same words into the newest of them; how many times each
    /// kept message's words were said, for those said more than once. The
    /// messages read are kept in `read`, and not read again.
    pub(super) async fn collapse_repeats(
        &self,
        tenant: TenantId,
        ranked: &mut Vec<(Memory, f64)>,
        query: &RecallQuery,
        read: &mut HashMap<MessageId, Message>,
    ) -> Result<HashMap<MessageId, u32>> {
        let head = ranked
            .len()
            .min((query.top_k * REPEATS_HEAD_PER_HIT) as usize);
        self.read_messages_among(tenant, &ranked[..head], read)
            .await?;
        let mut top: Vec<(Memory, f64)> = ranked.drain(..head).collect();
        let times = collapse_repeats(&mut top, |memory| {
            let Memory::Message(id) = memory else {
                return None;
            };
            let message = read.get(id)?;
            let words = said_as(&message.content.as_ref()?.text());
            // An empty message (a tool call, a pause) repeats nothing.
            (!words.is_empty()).then(|| (format!("{:?} {words}", message.role), message.timestamp))
        });
        ranked.splice(..0, top);
        Ok(times
            .into_iter()
            .filter_map(|(memory, count)| match memory {
                Memory::Message(id) => Some((id, count)),
                Memory::Summary(_) | Memory::Fact(..) => None,
            })
            .collect())
    }
}
