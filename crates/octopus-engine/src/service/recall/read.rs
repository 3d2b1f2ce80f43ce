//! The third stage: the ranked memories' text, read in one call each for
//! their messages' windows, their facts and their episodes. A memory
//! deleted meanwhile is left out.

use std::collections::HashMap;

use octopus_core::episode::Episode;
use octopus_core::fact::Fact;
use octopus_core::recall::{MemoryKind, MessageWindow, RecallHit, RecallQuery};
use octopus_core::recall_ranking::Memory;
use octopus_core::{EpisodeId, FactId, MessageId, TenantId};

use super::rank::{Ranked, facts_among, messages_among};
use crate::error::Result;
use crate::octopus::Octopus;

impl Octopus {
    pub(super) async fn read(
        &self,
        tenant: TenantId,
        query: &RecallQuery,
        ranked: Ranked,
    ) -> Result<Vec<RecallHit>> {
        let Ranked {
            memories,
            mut evidence,
            messages,
            facts,
            times_said,
            mut explainer,
        } = ranked;
        let mut windows = self
            .windows(tenant, &memories, query.neighbours, messages)
            .await?;
        let mut facts = self.facts(tenant, &memories, facts).await?;
        let episodes = self.episodes(tenant, &memories, &facts).await?;
        let mut hits = Vec::with_capacity(memories.len());
        for (memory, score) in memories {
            let found = evidence.remove(&memory).unwrap_or_default();
            let explanation = explainer.explain(&memory);
            let hit = match memory {
                Memory::Message(id) => windows.remove(&id).map(|window| RecallHit {
                    kind: MemoryKind::Message,
                    text: window
                        .message
                        .content
                        .as_ref()
                        .map(|content| content.text())
                        .unwrap_or_default(),
                    times_said: times_said.get(&id).copied().unwrap_or(1),
                    score,
                    vector_score: found.vector_score,
                    keyword_score: found.keyword_score,
                    episode_id: Some(window.message.episode_id),
                    conversation_id: Some(window.message.conversation_id),
                    at: window.message.timestamp,
                    window: Some(window),
                    summary: None,
                    fact: None,
                    explanation,
                }),
                Memory::Fact(id, _) => facts.remove(&id).and_then(|fact| {
                    // A fact a person added has no episode to hold it back.
                    let from = match fact.episode_id {
                        Some(episode) => {
                            let episode = episodes.get(&episode)?;
                            Some((episode.id, episode.conversation_id))
                        }
                        None => None,
                    };
                    Some(RecallHit {
                        kind: MemoryKind::Fact,
                        text: fact.text.clone(),
                        times_said: 1,
                        score,
                        vector_score: found.vector_score,
                        keyword_score: found.keyword_score,
                        episode_id: from.map(|(episode, _)| episode),
                        conversation_id: from.map(|(_, conversation)| conversation),
                        at: fact.valid_from,
                        window: None,
                        summary: None,
                        fact: Some(fact),
                        explanation,
                    })
                }),
                Memory::Summary(id) => episodes.get(&id).and_then(|episode| {
                    let summary = episode.summary.clone()?;
                    Some(RecallHit {
                        kind: MemoryKind::Summary,
                        text: summary.clone(),
                        times_said: 1,
                        score,
                        vector_score: found.vector_score,
                        keyword_score: None,
                        episode_id: Some(episode.id),
                        conversation_id: Some(episode.conversation_id),
                        at: episode.last_message_at,
                        window: None,
                        summary: Some(summary),
                        fact: None,
                        explanation,
                    })
                }),
            };
            hits.extend(hit);
        }
        Ok(hits)
    }

    /// The ranked messages with their neighbours; without neighbours, those
    /// read already are not read again.
    async fn windows(
        &self,
        tenant: TenantId,
        memories: &[(Memory, f64)],
        neighbours: u32,
        mut read: HashMap<MessageId, octopus_core::message::Message>,
    ) -> Result<HashMap<MessageId, MessageWindow>> {
        let mut windows = HashMap::new();
        let mut unread = Vec::new();
        for id in messages_among(memories) {
            match read.remove(&id) {
                Some(message) if neighbours == 0 => {
                    windows.insert(id, MessageWindow::alone(message));
                }
                _ => unread.push(id),
            }
        }
        if !unread.is_empty() {
            let found = self
                .store
                .message_windows(tenant, &unread, neighbours)
                .await?;
            windows.extend(found.into_iter().map(|w| (w.message.id, w)));
        }
        Ok(windows)
    }

    /// The ranked facts: those the ranking read, and the rest in one call.
    async fn facts(
        &self,
        tenant: TenantId,
        memories: &[(Memory, f64)],
        mut read: HashMap<FactId, Fact>,
    ) -> Result<HashMap<FactId, Fact>> {
        let unread: Vec<FactId> = facts_among(memories)
            .into_iter()
            .filter(|id| !read.contains_key(id))
            .collect();
        if !unread.is_empty() {
            let found = self.store.get_facts(tenant, &unread).await?;
            read.extend(found.into_iter().map(|fact| (fact.id, fact)));
        }
        Ok(read)
    }

    /// The live episodes of the ranked summaries and facts, in one call.
    async fn episodes(
        &self,
        tenant: TenantId,
        memories: &[(Memory, f64)],
        facts: &HashMap<FactId, Fact>,
    ) -> Result<HashMap<EpisodeId, Episode>> {
        let mut wanted: Vec<EpisodeId> = Vec::new();
        for (memory, _) in memories {
            let episode = match memory {
                Memory::Summary(id) => Some(*id),
                Memory::Fact(id, _) => facts.get(id).and_then(|fact| fact.episode_id),
                Memory::Message(_) => None,
            };
            if let Some(episode) = episode.filter(|e| !wanted.contains(e)) {
                wanted.push(episode);
            }
        }
        if wanted.is_empty() {
            return Ok(HashMap::new());
        }
        Ok(self
            .store
            .get_episodes(tenant, &wanted)
            .await?
            .into_iter()
            .map(|episode| (episode.id, episode))
            .collect())
    }
}
