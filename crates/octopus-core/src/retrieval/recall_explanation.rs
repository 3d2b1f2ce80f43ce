//! Why recall returned a memory where it did: every search that found it
//! (its place there, its own score, and what it added to the fusion), the
//! fused score and the score in context, and each reordering that moved
//! it. Asked for with `explain: true`; otherwise nothing here is built.

use std::collections::HashMap;
use std::hash::Hash;

use serde::{Deserialize, Serialize};

use crate::fusion::{Fusion, ScoredList};

/// One of recall's searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecallSearch {
    /// The query's vector among the user's memory vectors (messages,
    /// summaries, facts); the score is the cosine similarity.
    Vector,
    /// The query's topic words among the user's messages and facts; the
    /// score is BM25.
    Keyword,
    /// A person, place or thing the query names, searched for by words on
    /// its own (`[recall] names_searched`).
    Name,
    /// A simpler question a model split the query into, by meaning
    /// (`[recall] sub_questions`).
    SubQuestionVector,
    /// The same sub-question, by words.
    SubQuestionKeyword,
    /// The query's words with those its best keyword hits share
    /// (`[recall] feedback`).
    KeywordFeedback,
    /// The query's words with those its best hits by meaning share
    /// (`[recall] meaning_feedback`).
    MeaningFeedback,
}

/// A search's list as fusion took it: which search, and what it looked for
/// when that was not the query itself.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchList {
    pub search: RecallSearch,
    pub looked_for: Option<String>,
}

impl SearchList {
    pub fn of(search: RecallSearch) -> Self {
        Self {
            search,
            looked_for: None,
        }
    }

    pub fn looking_for(search: RecallSearch, text: impl Into<String>) -> Self {
        Self {
            search,
            looked_for: Some(text.into()),
        }
    }
}

/// A search that found a memory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RecallFinding {
    pub search: RecallSearch,
    /// What the search looked for when it was not the query: the name, the
    /// sub-question, the words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub looked_for: Option<String>,
    /// The memory's place in that search's list, from 1.
    pub rank: u32,
    /// The search's own score: a cosine similarity by meaning, BM25 by words.
    pub score: f64,
    /// The list's share of the fused score.
    pub weight: f64,
    /// What it added to the fused score: its score scaled as the fusion
    /// scales its list, times the weight. A hit's contributions sum to its
    /// `fused` score.
    pub contribution: f64,
}

/// A step of recall's ranking that reorders the candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecallReordering {
    /// Scores weighted by age (`recency_half_life_days`), then re-sorted.
    Recency,
    /// The query names one of the speakers: their turns go first.
    NamedSpeaker,
    /// The query names a day or a month: the turns said then go first.
    NamedDate,
    /// Facts that held at the time the query asks about (now, unless it
    /// names another), and the turns they came from, go ahead of facts
    /// replaced since and the turns that stated those.
    HeldAtTimeAsked,
    /// Of two of the user's turns saying one thing at different times, the
    /// one the question's tense wants goes first.
    Restated,
}

/// A reordering that moved a memory: its place before and after, from 1,
/// among the candidates as they stood at that step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RecallMove {
    pub by: RecallReordering,
    pub from: u32,
    pub to: u32,
}

/// Why a recall hit was returned where it was.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RecallExplanation {
    /// Every search that found it, best contribution first. Empty for a
    /// turn no search found, brought in next to one that was.
    pub found_by: Vec<RecallFinding>,
    /// How the searches' lists were combined.
    pub fusion: Fusion,
    /// The fusion's score: the sum of the contributions.
    pub fused: f64,
    /// The score once ranked in context: the fused score raised by a share
    /// of its best neighbouring turn's and of its episode's best.
    pub in_context: f64,
    /// Each reordering that changed its place, in the order they ran.
    pub moved: Vec<RecallMove>,
}

/// Every search's finding of each memory, from the lists fusion took
/// (best first, each named by `searches` in the same order).
pub fn findings<T: Eq + Hash + Clone>(
    fusion: Fusion,
    lists: &[ScoredList<T>],
    searches: &[SearchList],
) -> HashMap<T, Vec<RecallFinding>> {
    let mut found: HashMap<T, Vec<RecallFinding>> = HashMap::new();
    for (list, named) in lists.iter().zip(searches) {
        for (rank, ((item, score), scaled)) in
            list.items.iter().zip(fusion.scaled(list)).enumerate()
        {
            found.entry(item.clone()).or_default().push(RecallFinding {
                search: named.search,
                looked_for: named.looked_for.clone(),
                rank: rank as u32 + 1,
                score: *score,
                weight: list.weight,
                contribution: list.weight * scaled,
            });
        }
    }
    for each in found.values_mut() {
        each.sort_by(|a, b| b.contribution.total_cmp(&a.contribution));
    }
    found
}

/// The moves a reordering made: each item whose place in `after` differs
/// from its place in `before`, with both places (from 1).
pub fn moves<T: Eq + Hash + Clone>(before: &[T], after: &[T]) -> Vec<(T, u32, u32)> {
    let was: HashMap<&T, usize> = before.iter().enumerate().map(|(i, t)| (t, i)).collect();
    after
        .iter()
        .enumerate()
        .filter_map(|(to, item)| {
            let from = *was.get(item)?;
            (from != to).then(|| (item.clone(), from as u32 + 1, to as u32 + 1))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[(&'static str, f64)], weight: f64) -> ScoredList<&'static str> {
        ScoredList {
            items: items.to_vec(),
            weight,
            floor: Some(0.0),
        }
    }

    #[test]
    fn contributions_sum_to_the_fused_score_whatever_the_fusion() {
        let lists = [
            list(&[("a", 0.9), ("b", 0.5), ("c", 0.2)], 0.5),
            list(&[("b", 7.0), ("d", 3.0)], 0.5),
            list(&[("d", 2.0)], 0.25),
        ];
        let searches = [
            SearchList::of(RecallSearch::Vector),
            SearchList::of(RecallSearch::Keyword),
            SearchList::looking_for(RecallSearch::Name, "Lyon"),
        ];
        for fusion in [Fusion::Scores, Fusion::Standardised, Fusion::Ranks] {
            let fused: HashMap<_, _> = fusion.fuse(&lists).into_iter().collect();
            let found = findings(fusion, &lists, &searches);
            for (item, score) in &fused {
                let sum: f64 = found[item].iter().map(|f| f.contribution).sum();
                assert!(
                    (sum - score).abs() < 1e-12,
                    "{fusion:?} {item}: {sum} vs {score}"
                );
            }
            let d = &found["d"];
            assert_eq!(d.len(), 2);
            let by_name = d.iter().find(|f| f.search == RecallSearch::Name).unwrap();
            assert_eq!(
                (by_name.rank, by_name.looked_for.as_deref()),
                (1, Some("Lyon"))
            );
            let by_words = d
                .iter()
                .find(|f| f.search == RecallSearch::Keyword)
                .unwrap();
            assert_eq!((by_words.rank, by_words.score), (2, 3.0));
        }
    }

    #[test]
    fn moves_name_only_what_changed_place() {
        let moved = moves(&["a", "b", "c", "d"], &["c", "a", "b", "d"]);
        assert_eq!(moved, [("c", 3, 1), ("a", 1, 2), ("b", 2, 3)]);
        assert!(moves(&["a", "b"], &["a", "b"]).is_empty());
    }
}
