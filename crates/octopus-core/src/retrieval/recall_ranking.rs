//! Ranking recalled memories in their conversational context.
//!
//! A turn seldom stands alone. "Wow, where was that?" is about the turn
//! before it, and the answer to a question about a trip sits in the episode
//! that was about the trip. So once the retrievers' scores are fused, each
//! turn gains a share of its best neighbour's score — a turn the retrievers
//! missed can be recalled on its neighbour's strength — and then a share of
//! the best score in its episode. On the LoCoMo dev split this took hybrid
//! recall@10 from 0.678 to 0.752 (`cargo run --release -p octopus-bench --
//! locomo`; ARCHITECTURE.md has the steps).

use std::collections::HashMap;

use crate::recall::MessagePosition;
use crate::{EpisodeId, MessageId};

/// How recall weighs its evidence (`[recall]` in the configuration). The
/// defaults are what leave-one-conversation-out cross-validation on the
/// LoCoMo dev split chose (the bench's `locomo --cv`, which prints every
/// fold; the book's recall benchmark has the figures).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RankingWeights {
    /// The vector retriever's share of the fused score; the keyword
    /// retriever has the rest.
    pub vector: f64,
    /// Share of the best neighbouring turn's score a turn gains.
    pub neighbour: f64,
    /// Share of the best score in its episode a memory gains.
    pub episode: f64,
    /// How the retrievers' lists are combined.
    pub fusion: crate::fusion::Fusion,
    /// Each further memory from an episode already ranked higher keeps
    /// `1 − diversity` of its score per memory ahead of it there, so that
    /// the answers to a question spanning conversations are not crowded out
    /// by one conversation's turns. 0 leaves the ranking as it is.
    pub diversity: f64,
    /// When the query names one of the speakers, that speaker's turns go
    /// ahead of everyone else's (see [`crate::speakers`]).
    pub speaker_first: bool,
    /// When the query names a day or a month, the turns said then (or in the
    /// week after) go ahead of the rest, after the named speaker's (see
    /// [`crate::dates_named`]).
    pub date_first: bool,
    /// Episode summaries are searched beside turns as keys to their
    /// episodes: the best score of an episode's summary and facts raises its
    /// turns by the episode share, beside the episode's best, and a summary
    /// takes a place among the hits only when summaries were asked for.
    pub session_keys: bool,
    /// Each person, place or thing the query names (see
    /// [`crate::things_named`]) is searched for by words on its own, and the
    /// turns that mention it join the fusion.
    pub names_searched: bool,
    /// The words the best keyword hits share and the query lacks (see
    /// [`crate::feedback`]) are searched for again with the query's, and
    /// what that finds joins the fusion.
    pub feedback: bool,
    /// The words the best hits by meaning share and the query lacks are
    /// searched for again with the query's, and what that finds joins the
    /// fusion: the question's words in the user's own ("martial arts"
    /// finds turns about karate, and then the other turns about karate).
    /// The search by words waits for the one by meaning.
    pub meaning_feedback: bool,
    /// The agent's summary model (its model when it has none) rewrites the
    /// query into simpler questions (see [`crate::sub_questions`]), each
    /// searched by meaning and by words, and what they find joins the
    /// fusion. A model call per recall; when the model cannot answer, the
    /// query is searched alone.
    pub sub_questions: bool,
    /// When a later turn of the user's says that a value changed ("we
    /// moved to Paris") and is about the same thing as one of the
    /// best-ranked earlier turns (their vectors' cosine at least this, or
    /// two of the question's topic words shared), the one the question's
    /// tense wants goes first: the later for a question about now, the
    /// earlier for one about the past (see [`crate::restated`]). One turn
    /// moves at most. 0 leaves them where they rank.
    pub restated: f64,
}

impl Default for RankingWeights {
    /// What 10-fold cross-validation over LoCoMo's dev conversations and
    /// BEAM's chats together chose, each fold on the other nine
    /// (`octopus-bench beam --select`): standardised fusion, vector share
    /// 0.50 and episode 0.25 in every fold, neighbour 0.25 in nine of ten;
    /// of the methods, restatements ordered by tense at cosine 0.75.
    fn default() -> Self {
        Self {
            vector: 0.5,
            neighbour: 0.25,
            episode: 0.25,
            fusion: crate::fusion::Fusion::Standardised,
            diversity: 0.0,
            speaker_first: true,
            date_first: true,
            session_keys: false,
            names_searched: false,
            feedback: false,
            meaning_feedback: false,
            sub_questions: false,
            restated: 0.75,
        }
    }
}

impl RankingWeights {
    /// Every weight between 0 and 1.
    pub fn validate(&self) -> crate::Result<()> {
        for (name, weight) in [
            ("recall.vector", self.vector),
            ("recall.neighbour", self.neighbour),
            ("recall.episode", self.episode),
            ("recall.diversity", self.diversity),
            ("recall.restated", self.restated),
        ] {
            if !(0.0..=1.0).contains(&weight) {
                return Err(crate::Error::invalid(name, "must be between 0 and 1"));
            }
        }
        Ok(())
    }
}

/// A recalled memory before its text is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Memory {
    Message(MessageId),
    Summary(EpisodeId),
    /// A fact, with the episode its vector is filed under
    /// ([`Fact::vector_episode`](crate::fact::Fact::vector_episode)).
    Fact(crate::FactId, EpisodeId),
}

/// Ranks the fused candidates in their context: `positions` places each
/// candidate message (a message without one is gone and is dropped) and names
/// its neighbours, which join the ranking when a candidate is next to them.
/// Best first; ties in memory order, so that every process ranks alike.
pub fn rank_in_context(
    fused: &[(Memory, f64)],
    positions: &[MessagePosition],
    weights: &RankingWeights,
) -> Vec<(Memory, f64)> {
    let placed: HashMap<MessageId, &MessagePosition> =
        positions.iter().map(|p| (p.id, p)).collect();
    let fused_score: HashMap<Memory, f64> = fused.iter().copied().collect();
    let score_of = |id: MessageId| fused_score.get(&Memory::Message(id)).copied();

    // Each memory's score with its neighbours', and its episode.
    let mut scored: HashMap<Memory, (f64, EpisodeId)> = HashMap::new();
    for &(memory, score) in fused {
        match memory {
            Memory::Summary(episode) | Memory::Fact(_, episode) => {
                scored.insert(memory, (score, episode));
            }
            Memory::Message(id) => {
                let Some(position) = placed.get(&id) else {
                    continue;
                };
                let adjacent = [position.before, position.after];
                let best_neighbour = adjacent
                    .iter()
                    .flatten()
                    .filter_map(|a| score_of(a.id))
                    .fold(0.0, f64::max);
                let own = score + weights.neighbour * best_neighbour;
                scored.insert(memory, (own, position.episode_id));
                // A neighbour no retriever found gains from this turn alone.
                for next_to in adjacent.iter().flatten() {
                    if score_of(next_to.id).is_none() {
                        let gained = weights.neighbour * score;
                        let entry = scored
                            .entry(Memory::Message(next_to.id))
                            .or_insert((0.0, position.episode_id));
                        entry.0 = entry.0.max(gained);
                    }
                }
            }
        }
    }

    let mut episode_best: HashMap<EpisodeId, f64> = HashMap::new();
    for &(score, episode) in scored.values() {
        let best = episode_best.entry(episode).or_insert(0.0);
        *best = best.max(score);
    }
    // With session keys, an episode's summary and facts count again, beside
    // the best, as keys to its turns: a turn of the episode they match gains
    // the episode share of their best score too.
    let mut key_best: HashMap<EpisodeId, f64> = HashMap::new();
    if weights.session_keys {
        for (memory, &(score, episode)) in &scored {
            if matches!(memory, Memory::Summary(_) | Memory::Fact(..)) {
                let best = key_best.entry(episode).or_insert(0.0);
                *best = best.max(score);
            }
        }
    }
    let mut ranked: Vec<(Memory, f64)> = scored
        .into_iter()
        .map(|(memory, (score, episode))| {
            let keyed = match memory {
                Memory::Message(_) => key_best.get(&episode).copied().unwrap_or(0.0),
                Memory::Summary(_) | Memory::Fact(..) => 0.0,
            };
            let context = episode_best[&episode] + keyed;
            (memory, score + weights.episode * context)
        })
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    if weights.diversity > 0.0 {
        let episode_of = |memory: &Memory| match memory {
            Memory::Summary(episode) | Memory::Fact(_, episode) => Some(*episode),
            Memory::Message(id) => placed.get(id).map(|p| p.episode_id),
        };
        let mut ahead: HashMap<EpisodeId, i32> = HashMap::new();
        for (memory, score) in &mut ranked {
            if let Some(episode) = episode_of(memory) {
                let count = ahead.entry(episode).or_insert(0);
                *score *= (1.0 - weights.diversity).powi(*count);
                *count += 1;
            }
        }
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    }
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::Adjacent;

    /// An episode of `n` consecutive turns.
    fn episode(n: usize) -> (EpisodeId, Vec<MessageId>, Vec<MessagePosition>) {
        let episode = EpisodeId::new();
        let ids: Vec<MessageId> = (0..n).map(|_| MessageId::new()).collect();
        let at = crate::now();
        let adjacent = |i: Option<usize>| i.and_then(|i| ids.get(i)).map(|&id| Adjacent { id, at });
        let positions = (0..n)
            .map(|i| MessagePosition {
                id: ids[i],
                episode_id: episode,
                before: adjacent(i.checked_sub(1)),
                after: adjacent(Some(i + 1)),
            })
            .collect();
        (episode, ids, positions)
    }

    /// Half the best neighbour's score and half the episode's best.
    fn halves() -> RankingWeights {
        RankingWeights {
            neighbour: 0.5,
            episode: 0.5,
            ..RankingWeights::default()
        }
    }

    fn score(ranked: &[(Memory, f64)], memory: Memory) -> Option<f64> {
        ranked.iter().find(|(m, _)| *m == memory).map(|(_, s)| *s)
    }

    #[track_caller]
    fn assert_score(ranked: &[(Memory, f64)], memory: Memory, expected: f64) {
        let found = score(ranked, memory).expect("ranked");
        assert!((found - expected).abs() < 1e-9, "{found} != {expected}");
    }

    #[test]
    fn a_turn_gains_half_its_best_neighbour_and_half_its_episode_best() {
        let (_, ids, positions) = episode(4);
        let fused = vec![
            (Memory::Message(ids[1]), 1.0),
            (Memory::Message(ids[2]), 0.4),
        ];
        let ranked = rank_in_context(&fused, &positions, &halves());
        // Turn 1: 1.0 + 0.5 × 0.4 = 1.2, and the episode's best is 1.2.
        assert_score(&ranked, Memory::Message(ids[1]), 1.2 + 0.6);
        // Turn 2: 0.4 + 0.5 × 1.0 = 0.9.
        assert_score(&ranked, Memory::Message(ids[2]), 0.9 + 0.6);
        // Turn 0, found by no retriever: half of turn 1's fused score.
        assert_score(&ranked, Memory::Message(ids[0]), 0.5 + 0.6);
        // Turn 3: half of turn 2's.
        assert_score(&ranked, Memory::Message(ids[3]), 0.2 + 0.6);
        let order: Vec<Memory> = ranked.iter().map(|(m, _)| *m).collect();
        assert_eq!(
            order,
            [1, 2, 0, 3].map(|i| Memory::Message(ids[i])).to_vec()
        );
    }

    #[test]
    fn a_relevant_episode_lifts_its_weaker_turns_above_a_lone_hit() {
        let (_, trip, trip_positions) = episode(6);
        let (_, other, other_positions) = episode(6);
        let fused = vec![
            (Memory::Message(trip[0]), 0.9),
            (Memory::Message(other[3]), 0.7),
            (Memory::Message(trip[4]), 0.6),
        ];
        let positions = [trip_positions, other_positions].concat();
        let ranked = rank_in_context(&fused, &positions, &halves());
        let order: Vec<Memory> = ranked.iter().map(|(m, _)| *m).collect();
        let at = |m| order.iter().position(|x| *x == m).unwrap();
        assert!(
            at(Memory::Message(trip[4])) < at(Memory::Message(other[3])),
            "0.6 + 0.45 beats 0.7 + 0.35: {ranked:?}"
        );
    }

    #[test]
    fn gone_messages_drop_out_and_summaries_count_in_their_episode() {
        let (episode_id, ids, positions) = episode(2);
        let gone = MessageId::new();
        let fused = vec![
            (Memory::Message(gone), 2.0),
            (Memory::Summary(episode_id), 0.8),
            (Memory::Message(ids[0]), 0.2),
        ];
        let ranked = rank_in_context(&fused, &positions, &halves());
        assert_eq!(score(&ranked, Memory::Message(gone)), None);
        // The summary is its episode's best: 0.8 + 0.4.
        assert_score(&ranked, Memory::Summary(episode_id), 1.2);
        assert_score(&ranked, Memory::Message(ids[0]), 0.2 + 0.4);
        assert_score(&ranked, Memory::Message(ids[1]), 0.1 + 0.4);
    }

    #[test]
    fn with_session_keys_a_matching_summary_raises_its_turns_beside_their_best() {
        let (episode_id, ids, positions) = episode(3);
        let fused = vec![
            (Memory::Message(ids[0]), 1.0),
            (Memory::Summary(episode_id), 0.6),
        ];
        let without = rank_in_context(&fused, &positions, &halves());
        // The turn is the episode's best; the summary, below it, adds nothing.
        assert_score(&without, Memory::Message(ids[0]), 1.0 + 0.5);
        let keyed = RankingWeights {
            session_keys: true,
            ..halves()
        };
        let with = rank_in_context(&fused, &positions, &keyed);
        assert_score(&with, Memory::Message(ids[0]), 1.0 + 0.5 * (1.0 + 0.6));
        // Its neighbour too (half of 1.0 from the turn beside it); the
        // summary itself is not raised by its own key.
        assert_score(&with, Memory::Message(ids[1]), 0.5 + 0.5 * (1.0 + 0.6));
        assert_score(&with, Memory::Summary(episode_id), 0.6 + 0.5);
    }

    #[test]
    fn weights_outside_zero_to_one_are_refused_by_name() {
        assert!(RankingWeights::default().validate().is_ok());
        let heavy = RankingWeights {
            episode: 1.5,
            ..RankingWeights::default()
        };
        let error = heavy.validate().unwrap_err().to_string();
        assert!(error.contains("recall.episode"), "{error}");
        let negative = RankingWeights {
            vector: -0.1,
            ..RankingWeights::default()
        };
        assert!(negative.validate().is_err());
    }

    #[test]
    fn without_context_weights_a_turn_keeps_its_fused_score() {
        let (_, ids, positions) = episode(3);
        let fused = vec![
            (Memory::Message(ids[0]), 1.0),
            (Memory::Message(ids[1]), 0.4),
        ];
        let alone = RankingWeights {
            neighbour: 0.0,
            episode: 0.0,
            ..RankingWeights::default()
        };
        let ranked = rank_in_context(&fused, &positions, &alone);
        assert_score(&ranked, Memory::Message(ids[0]), 1.0);
        assert_score(&ranked, Memory::Message(ids[1]), 0.4);
        assert_score(&ranked, Memory::Message(ids[2]), 0.0);
    }

    #[test]
    fn diversity_discounts_each_further_memory_of_an_episode() {
        let (_, crowded, crowded_positions) = episode(3);
        let (_, other, other_positions) = episode(3);
        let fused = vec![
            (Memory::Message(crowded[0]), 1.0),
            (Memory::Message(crowded[2]), 0.9),
            (Memory::Message(other[1]), 0.8),
        ];
        let positions = [crowded_positions, other_positions].concat();
        let plain = RankingWeights {
            neighbour: 0.0,
            episode: 0.0,
            ..RankingWeights::default()
        };
        let ranked = rank_in_context(&fused, &positions, &plain);
        assert_eq!(ranked[1].0, Memory::Message(crowded[2]));
        let diverse = RankingWeights {
            diversity: 0.5,
            ..plain
        };
        let ranked = rank_in_context(&fused, &positions, &diverse);
        assert_eq!(ranked[0], (Memory::Message(crowded[0]), 1.0));
        assert_eq!(ranked[1], (Memory::Message(other[1]), 0.8), "{ranked:?}");
        assert_score(&ranked, Memory::Message(crowded[2]), 0.45);
    }

    #[test]
    fn ties_rank_alike_in_every_process() {
        let (_, ids, positions) = episode(5);
        let fused: Vec<(Memory, f64)> = [0, 2, 4]
            .iter()
            .map(|&i| (Memory::Message(ids[i]), 1.0))
            .collect();
        let first = rank_in_context(&fused, &positions, &RankingWeights::default());
        let reversed: Vec<_> = fused.iter().rev().copied().collect();
        assert_eq!(
            first,
            rank_in_context(&reversed, &positions, &RankingWeights::default())
        );
    }
}
