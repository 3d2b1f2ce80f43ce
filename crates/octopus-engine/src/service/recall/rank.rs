//! The second stage: the retrievers' lists fused, each candidate ranked in
//! its context, reordered by what the query names and the time it asks
//! about, its repeats collapsed, and cut to the hits asked for.

use std::collections::{BTreeSet, HashMap, HashSet};

use octopus_core::dates_named::dates_named;
use octopus_core::fact::Fact;
use octopus_core::message::{Message, Role};
use octopus_core::recall::{MessagePosition, RecallQuery};
use octopus_core::recall_explanation::RecallReordering;
use octopus_core::recall_ranking::{Memory, rank_in_context};
use octopus_core::restated;
use octopus_core::search::topic_terms;
use octopus_core::speakers::{speaker_of, the_one_named};
use octopus_core::time_asked::{TimeAsked, put_what_held_first};
use octopus_core::{EpisodeId, FactId, MessageId, TenantId, Timestamp};

use super::explain::Explainer;
use super::retrieve::{Evidence, Retrieved};
use crate::error::Result;
use crate::octopus::Octopus;

/// Ranked memories read to learn who said them and when, per hit asked for:
/// in a dialogue about half are the named speaker's, enough to fill the hits.
/// Each is a read of the message; the rest keep their places.
const SPEAKER_HEAD_PER_HIT: u32 = 2;

/// What the second stage hands the third: the memories to answer with,
/// best first, with their scores; what the retrievers said of them; and
/// the messages and facts already read whole, which are not read again;
/// and how many times a kept message's words were said, when more than once;
/// and, when the query asked, the notes that explain each.
pub(super) struct Ranked {
    pub memories: Vec<(Memory, f64)>,
    pub evidence: HashMap<Memory, Evidence>,
    pub messages: HashMap<MessageId, Message>,
    pub facts: HashMap<FactId, Fact>,
    pub times_said: HashMap<MessageId, u32>,
    pub explainer: Explainer,
}

impl Octopus {
    pub(super) async fn rank(
        &self,
        tenant: TenantId,
        query: &RecallQuery,
        retrieved: Retrieved,
    ) -> Result<Ranked> {
        let weights = &self.recall_weights;
        let Retrieved {
            lists,
            searches,
            mut evidence,
            mut messages,
        } = retrieved;
        let fused = weights.fusion.fuse(&lists);
        let mut explainer =
            Explainer::new(query.explain, weights.fusion, &lists, &searches, &fused);
        let positions = self
            .store
            .message_positions(tenant, &messages_among(&fused))
            .await?;
        let positions = within_range(positions, query, &mut evidence);
        let episodes: HashMap<MessageId, EpisodeId> =
            positions.iter().map(|p| (p.id, p.episode_id)).collect();
        let mut ranked = rank_in_context(&fused, &positions, weights);
        explainer.ranked_in_context(&ranked);
        self.summaries_as_keys(query, &mut ranked);
        if let Some(half_life) = query.recency_half_life_days {
            let before = explainer.before(&ranked);
            weigh_recency(&mut ranked, &evidence, half_life);
            explainer.reordered(RecallReordering::Recency, before, &ranked);
        }
        self.put_the_named_first(tenant, &mut ranked, query, &mut messages, &mut explainer)
            .await?;
        // The candidates' facts, read once: for the time asked about, the
        // category asked for, and the hits.
        let facts: HashMap<FactId, Fact> = self
            .store
            .get_facts(tenant, &facts_among(&ranked))
            .await?
            .into_iter()
            .map(|fact| (fact.id, fact))
            .collect();
        let before = explainer.before(&ranked);
        put_held_first(&mut ranked, query, &facts);
        explainer.reordered(RecallReordering::HeldAtTimeAsked, before, &ranked);
        let before = explainer.before(&ranked);
        self.put_restatements_in_order(
            tenant,
            &mut ranked,
            query,
            &evidence,
            (&episodes, &mut messages),
        )
        .await?;
        explainer.reordered(RecallReordering::Restated, before, &ranked);
        if let Some(category) = &query.fact_category {
            ranked.retain(|(memory, _)| match memory {
                Memory::Fact(id, _) => facts
                    .get(id)
                    .is_some_and(|fact| fact.category.as_deref() == Some(category.as_str())),
                _ => true,
            });
        }
        let times_said = self
            .collapse_repeats(tenant, &mut ranked, query, &mut messages)
            .await?;
        ranked.truncate(query.top_k as usize);
        Ok(Ranked {
            memories: ranked,
            evidence,
            messages,
            facts,
            times_said,
            explainer,
        })
    }

    /// When the query names one of the people whose turns lead the ranking
    /// (see [`octopus_core::speakers`]), moves that person's turns ahead of
    /// everyone else's; when it names a day or a month (see
    /// [`octopus_core::dates_named`]), moves the turns said then ahead of the
    /// others on each side. Each side keeps its order, and scores are
    /// lowered to match it. Summaries and facts keep their places. The
    /// messages it reads join `read`.
    async fn put_the_named_first(
        &self,
        tenant: TenantId,
        ranked: &mut [(Memory, f64)],
        query: &RecallQuery,
        read: &mut HashMap<MessageId, Message>,
        explainer: &mut Explainer,
    ) -> Result<()> {
        let weights = &self.recall_weights;
        let dates = match weights.date_first {
            true => dates_named(&query.query),
            false => Vec::new(),
        };
        if !weights.speaker_first && dates.is_empty() {
            return Ok(());
        }
        let head = ranked.len().min(head_of(query));
        self.read_messages_among(tenant, &ranked[..head], read)
            .await?;
        let messages = &*read;
        let message = |memory: &Memory| match memory {
            Memory::Message(id) => messages.get(id),
            Memory::Summary(_) | Memory::Fact(..) => None,
        };
        let speaker = |memory: &Memory| message(memory).and_then(|m| speaker_of(m, &query.user_id));
        let named = match weights.speaker_first {
            true => the_one_named(
                &query.query,
                ranked[..head]
                    .iter()
                    .filter_map(|(m, _)| speaker(m))
                    .collect::<BTreeSet<_>>(),
            ),
            false => None,
        };
        if named.is_none() && dates.is_empty() {
            return Ok(());
        }
        let by_someone_else = |memory: &Memory| {
            named.is_some_and(|named| speaker(memory).is_some_and(|s| s != named))
        };
        let said_another_time = |memory: &Memory| {
            !dates.is_empty()
                && message(memory).is_some_and(|m| {
                    let day = m.timestamp.date_naive();
                    !dates.iter().any(|span| span.holds(day))
                })
        };
        // The dates first, then the speaker: two stable sorts that order as
        // one by (speaker, date) would, each noted on its own.
        let before = explainer.before(ranked);
        ranked[..head].sort_by_key(|(memory, _)| said_another_time(memory));
        explainer.reordered(RecallReordering::NamedDate, before, ranked);
        let before = explainer.before(ranked);
        ranked[..head].sort_by_key(|(memory, _)| by_someone_else(memory));
        explainer.reordered(RecallReordering::NamedSpeaker, before, ranked);
        for i in 1..ranked.len() {
            ranked[i].1 = ranked[i].1.min(ranked[i - 1].1);
        }
        Ok(())
    }

    /// With `[recall] restated` on: among the best-ranked turns, each
    /// restatement of one thing said at different times ordered as the
    /// question's tense wants (see [`octopus_core::restated`]), by the
    /// turns' stored vectors (read in one call) and the question's topics
    /// each holds. The messages it reads join `read`.
    async fn put_restatements_in_order(
        &self,
        tenant: TenantId,
        ranked: &mut Vec<(Memory, f64)>,
        query: &RecallQuery,
        evidence: &HashMap<Memory, Evidence>,
        (episodes, read): (
            &HashMap<MessageId, EpisodeId>,
            &mut HashMap<MessageId, Message>,
        ),
    ) -> Result<()> {
        let similarity = self.recall_weights.restated;
        if similarity <= 0.0 {
            return Ok(());
        }
        let asked = TimeAsked::of(&query.query, query.from, query.to);
        let Some(wanted) = restated::wanted(&query.query, asked) else {
            return Ok(());
        };
        let head = ranked.len().min(head_of(query).max(MIN_TIME_ORDERED_HEAD));
        let among: Vec<(EpisodeId, MessageId)> = messages_among(&ranked[..head])
            .into_iter()
            .filter_map(|id| Some((*episodes.get(&id)?, id)))
            .collect();
        if among.len() < 2 {
            return Ok(());
        }
        let unread: Vec<MessageId> = among
            .iter()
            .map(|(_, id)| *id)
            .filter(|id| !read.contains_key(id))
            .collect();
        let (vectors, windows) =
            tokio::try_join!(self.store.message_vectors(tenant, &among), async {
                match unread.is_empty() {
                    true => Ok(Vec::new()),
                    false => self.store.message_windows(tenant, &unread, 0).await,
                }
            })?;
        read.extend(windows.into_iter().map(|w| (w.message.id, w.message)));
        let vectors: HashMap<Memory, Vec<f32>> = vectors
            .into_iter()
            .map(|(id, vector)| (Memory::Message(id), vector))
            .collect();
        let topics = topic_terms(&query.query);
        let held: HashMap<Memory, HashSet<String>> = among
            .iter()
            .filter_map(|(_, id)| {
                let text = read.get(id)?.content.as_ref()?.text();
                Some((Memory::Message(*id), restated::topics_held(&topics, &text)))
            })
            .collect();
        // A value that changes for a user is the user's to state: an
        // assistant's reply that repeats it is not a restatement.
        let changes: HashSet<Memory> = among
            .iter()
            .filter_map(|(_, id)| read.get(id))
            .filter(|message| message.role == Role::User)
            .filter(|message| {
                message
                    .content
                    .as_ref()
                    .is_some_and(|content| restated::states_a_change(&content.text()))
            })
            .map(|message| Memory::Message(message.id))
            .collect();
        let mut top: Vec<(Memory, f64)> = ranked.drain(..head).collect();
        restated::put_restatements_in_order(
            &mut top,
            restated::same_by_vectors_or_topics(&vectors, &held, similarity as f32),
            |memory| match memory {
                Memory::Message(_) => evidence.get(memory).and_then(|e| e.at),
                Memory::Summary(_) | Memory::Fact(..) => None,
            },
            |memory| changes.contains(memory),
            wanted,
        );
        let floor = top.last().map_or(f64::INFINITY, |(_, score)| *score);
        for (_, score) in ranked.iter_mut() {
            *score = score.min(floor);
        }
        ranked.splice(0..0, top);
        Ok(())
    }
}

/// The fewest of the best-ranked that the orderings by time (what held
/// when asked, restatements) look among, whatever the hits asked for: at
/// one hit, the turn with the new value must be found to take its place.
const MIN_TIME_ORDERED_HEAD: usize = 10;

/// How many of the best-ranked the reorderings look at.
fn head_of(query: &RecallQuery) -> usize {
    (query.top_k * SPEAKER_HEAD_PER_HIT) as usize
}

/// When facts are among the candidates, puts those that held at the time
/// the query asks about ([`TimeAsked`]), and the turns they were learned
/// from, ahead of the facts that did not and the turns that stated
/// those, among the best-ranked (at least [`MIN_TIME_ORDERED_HEAD`]); within
/// the places those take, the rest keeping theirs. A turn is judged by
/// the best-ranked of the candidate facts learned from it:
/// "I live in Lyon with my cat" is about Lyon to "where does she live?"
/// and about the cat to "does she have pets?".
fn put_held_first(
    ranked: &mut [(Memory, f64)],
    query: &RecallQuery,
    facts: &HashMap<FactId, Fact>,
) {
    // Every candidate fact gives its verdict, so that a turn stating a
    // replaced value meets the turn stating the new one even when only a
    // hit or two were asked for.
    let leading: Vec<&Fact> = facts_among(ranked)
        .iter()
        .filter_map(|id| facts.get(id))
        .collect();
    let head = ranked.len().min(head_of(query).max(MIN_TIME_ORDERED_HEAD));
    let ranked = &mut ranked[..head];
    if leading.is_empty() {
        return;
    }
    let asked = TimeAsked::of(&query.query, query.from, query.to);
    let mut fact_held = HashMap::new();
    let mut turn_held: HashMap<MessageId, bool> = HashMap::new();
    // Best-ranked first, so that a turn takes the verdict of its best fact.
    for fact in leading {
        let held = asked.holds(fact);
        fact_held.insert(fact.id, held);
        for id in &fact.message_ids {
            turn_held.entry(*id).or_insert(held);
        }
    }
    put_what_held_first(ranked, |memory| match memory {
        Memory::Fact(id, _) => fact_held.get(id).copied(),
        Memory::Message(id) => turn_held.get(id).copied(),
        Memory::Summary(_) => None,
    });
}

pub(super) fn facts_among(memories: &[(Memory, f64)]) -> Vec<FactId> {
    memories
        .iter()
        .filter_map(|(memory, _)| match memory {
            Memory::Fact(id, _) => Some(*id),
            Memory::Message(_) | Memory::Summary(_) => None,
        })
        .collect()
}

impl Octopus {
    /// Reads the messages among `memories` that `read` does not hold yet
    /// into it.
    pub(super) async fn read_messages_among(
        &self,
        tenant: TenantId,
        memories: &[(Memory, f64)],
        read: &mut HashMap<MessageId, Message>,
    ) -> Result<()> {
        let unread: Vec<MessageId> = messages_among(memories)
            .into_iter()
            .filter(|id| !read.contains_key(id))
            .collect();
        if !unread.is_empty() {
            let windows = self.store.message_windows(tenant, &unread, 0).await?;
            read.extend(windows.into_iter().map(|w| (w.message.id, w.message)));
        }
        Ok(())
    }
}

pub(super) fn messages_among(memories: &[(Memory, f64)]) -> Vec<MessageId> {
    memories
        .iter()
        .filter_map(|(memory, _)| match memory {
            Memory::Message(id) => Some(*id),
            Memory::Summary(_) | Memory::Fact(..) => None,
        })
        .collect()
}

/// The positions, with neighbours outside the query's time range forgotten,
/// and the time of each neighbour that stays noted for recency weighting.
fn within_range(
    mut positions: Vec<MessagePosition>,
    query: &RecallQuery,
    evidence: &mut HashMap<Memory, Evidence>,
) -> Vec<MessagePosition> {
    let in_range = |at: Timestamp| {
        query.from.is_none_or(|from| at >= from) && query.to.is_none_or(|to| at < to)
    };
    for position in &mut positions {
        for adjacent in [&mut position.before, &mut position.after] {
            match adjacent {
                Some(next_to) if in_range(next_to.at) => {
                    evidence
                        .entry(Memory::Message(next_to.id))
                        .or_default()
                        .at
                        .get_or_insert(next_to.at);
                }
                _ => *adjacent = None,
            }
        }
    }
    positions
}

/// Multiplies each score by `0.5^(age / half-life)`, age counted back from the
/// newest candidate, and re-sorts.
fn weigh_recency(
    ranked: &mut [(Memory, f64)],
    evidence: &HashMap<Memory, Evidence>,
    half_life_days: f64,
) {
    let at = |memory: &Memory| evidence.get(memory).and_then(|e| e.at);
    let Some(newest) = ranked.iter().filter_map(|(m, _)| at(m)).max() else {
        return;
    };
    for (memory, score) in ranked.iter_mut() {
        if let Some(when) = at(memory) {
            let age_days = (newest - when).num_seconds() as f64 / 86_400.0;
            *score *= 0.5f64.powf(age_days / half_life_days);
        }
    }
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recency_halves_a_score_per_half_life() {
        let newest = chrono::Utc::now();
        let old = Memory::Message(MessageId::new());
        let new = Memory::Message(MessageId::new());
        let mut evidence = HashMap::new();
        evidence.insert(
            old,
            Evidence {
                at: Some(newest - chrono::Duration::days(10)),
                ..Default::default()
            },
        );
        evidence.insert(
            new,
            Evidence {
                at: Some(newest),
                ..Default::default()
            },
        );
        let mut ranked = vec![(old, 1.0), (new, 0.6)];
        weigh_recency(&mut ranked, &evidence, 10.0);
        assert_eq!(ranked[0], (new, 0.6));
        assert!((ranked[1].1 - 0.5).abs() < 1e-9, "{:?}", ranked[1]);
    }
}
