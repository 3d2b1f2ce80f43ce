//! Combining ranked lists from different retrievers.

use std::collections::HashMap;
use std::hash::Hash;

/// The constant of reciprocal rank fusion (Cormack et al., 2009): it damps the
/// weight of the very first ranks, so that agreement between lists counts more
/// than one list's favourite.
pub const RRF_K: f32 = 60.0;

/// Reciprocal rank fusion: each item scores the sum, over the lists it appears
/// in, of `1 / (RRF_K + rank)` (ranks from 1). Best first; ties keep the order
/// of first appearance.
pub fn reciprocal_rank_fusion<T: Eq + Hash + Clone>(lists: &[Vec<T>]) -> Vec<(T, f32)> {
    let mut scores: HashMap<T, (f64, usize)> = HashMap::new();
    let mut order = 0;
    for list in lists {
        for (rank, item) in list.iter().enumerate() {
            let entry = scores.entry(item.clone()).or_insert_with(|| {
                order += 1;
                (0.0, order)
            });
            entry.0 += 1.0 / (f64::from(RRF_K) + rank as f64 + 1.0);
        }
    }
    best_first(scores)
        .into_iter()
        .map(|(item, score)| (item, score as f32))
        .collect()
}

/// One retriever's scored list, as [`score_fusion`] takes it.
#[derive(Clone, Debug)]
pub struct ScoredList<T> {
    /// Best first.
    pub items: Vec<(T, f64)>,
    /// Share of the fused score this list gives.
    pub weight: f64,
    /// The score of no match at all (0 for BM25 and cosine), when the list
    /// holds every match there was: its worst item is then a weak match, not
    /// the edge of a cut-off, and scales above zero. `None` for a cut list.
    pub floor: Option<f64>,
}

/// Score fusion: each list's scores are scaled to [0, 1] (its best 1, its
/// worst or its floor 0), and an item scores the weighted sum of its scaled
/// scores. Unlike rank fusion it keeps how far ahead a list's best items are,
/// so one retriever's confident hit is not diluted by the other's near-ties
/// (Bruch et al., 2023, found it ahead of RRF; so did our LoCoMo recall).
/// Best first; ties keep the order of first appearance.
pub fn score_fusion<T: Eq + Hash + Clone>(lists: &[ScoredList<T>]) -> Vec<(T, f64)> {
    Fusion::Scores.fuse(lists)
}

/// How recall combines its retrievers' lists (`[recall] fusion`).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Fusion {
    /// [`score_fusion`]: each list's scores scaled to [0, 1] by its range.
    Scores,
    /// [`standardised_fusion`]: each list's scores divided by their spread.
    #[default]
    Standardised,
    /// Reciprocal ranks, weighted by list ([`weighted_rank_fusion`]).
    Ranks,
}

impl Fusion {
    /// The lists fused: each item scores the sum, over the lists holding
    /// it, of the list's weight times the item's [`Self::scaled`] score
    /// there. Best first; ties keep the order of first appearance.
    pub fn fuse<T: Eq + Hash + Clone>(self, lists: &[ScoredList<T>]) -> Vec<(T, f64)> {
        let mut scores: HashMap<T, (f64, usize)> = HashMap::new();
        let mut order = 0;
        for list in lists {
            for ((item, _), scaled) in list.items.iter().zip(self.scaled(list)) {
                let entry = scores.entry(item.clone()).or_insert_with(|| {
                    order += 1;
                    (0.0, order)
                });
                entry.0 += list.weight * scaled;
            }
        }
        best_first(scores)
    }

    /// Each item's score in one list as this fusion scales it, before the
    /// list's weight, in the list's order.
    pub fn scaled<T>(self, list: &ScoredList<T>) -> Vec<f64> {
        match self {
            Fusion::Scores => linearly_scaled(list, |scores, worst| {
                let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                best - worst
            }),
            Fusion::Standardised => linearly_scaled(list, |scores, _| {
                let n = scores.len() as f64;
                let mean = scores.iter().sum::<f64>() / n;
                (scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n).sqrt()
            }),
            Fusion::Ranks => {
                let first = 1.0 / (f64::from(RRF_K) + 1.0);
                (0..list.items.len())
                    .map(|rank| 1.0 / (f64::from(RRF_K) + rank as f64 + 1.0) / first)
                    .collect()
            }
        }
    }
}

/// A list's scores less its worst (or its floor), divided by what
/// `divisor` makes of the list's scores and worst (each scores 1 when that
/// is not positive).
fn linearly_scaled<T>(list: &ScoredList<T>, divisor: impl Fn(&[f64], f64) -> f64) -> Vec<f64> {
    let values: Vec<f64> = list.items.iter().map(|(_, s)| *s).collect();
    let worst = values.iter().copied().fold(f64::INFINITY, f64::min);
    let worst = list.floor.map_or(worst, |floor| floor.min(worst));
    let by = divisor(&values, worst);
    values
        .iter()
        .map(|score| match by > 0.0 {
            true => (score - worst) / by,
            false => 1.0,
        })
        .collect()
}

/// Per-query standardisation (z-scores, Montague & Aslam 2001): each list's
/// scores, less its worst (or its floor), divided by their standard
/// deviation, so that a list whose scores bunch together counts its lead for
/// more than one whose scores spread out. Weighted and summed; best first.
pub fn standardised_fusion<T: Eq + Hash + Clone>(lists: &[ScoredList<T>]) -> Vec<(T, f64)> {
    Fusion::Standardised.fuse(lists)
}

/// Reciprocal rank fusion with a weight per list: each item scores the
/// weighted sum of `1 / (RRF_K + rank)`, scaled so that an item first in
/// every list scores 1. Scores are ignored.
pub fn weighted_rank_fusion<T: Eq + Hash + Clone>(lists: &[ScoredList<T>]) -> Vec<(T, f64)> {
    Fusion::Ranks.fuse(lists)
}

/// Items by score, best first; ties by order of first appearance.
fn best_first<T>(scores: HashMap<T, (f64, usize)>) -> Vec<(T, f64)> {
    let mut fused: Vec<(T, f64, usize)> = scores
        .into_iter()
        .map(|(item, (score, first))| (item, score, first))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    fused
        .into_iter()
        .map(|(item, score, _)| (item, score))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_beats_a_single_top_rank() {
        // "b" is second in both lists; "a" first in one only.
        let fused = reciprocal_rank_fusion(&[vec!["a", "b", "c"], vec!["d", "b", "e"]]);
        assert_eq!(fused[0].0, "b");
        assert!((fused[0].1 - 2.0 / 62.0).abs() < 1e-6);
        assert_eq!(fused.len(), 5);
        assert_eq!(fused[1].0, "a", "ties keep the order of first appearance");
    }

    #[test]
    fn one_list_keeps_its_order() {
        let fused = reciprocal_rank_fusion(&[vec![3, 1, 2]]);
        assert_eq!(
            fused.iter().map(|(item, _)| *item).collect::<Vec<_>>(),
            vec![3, 1, 2]
        );
    }

    fn cut<T>(items: Vec<(T, f64)>, weight: f64) -> ScoredList<T> {
        ScoredList {
            items,
            weight,
            floor: None,
        }
    }

    #[test]
    fn score_fusion_keeps_a_confident_lead() {
        // "b" is second in both lists, so rank fusion puts it first whatever
        // the scores. Score fusion does too while "b" nearly ties the vector
        // list's best...
        let keyword = vec![("a", 20.0), ("b", 5.0), ("c", 4.0)];
        let vector = vec![("d", 0.62), ("b", 0.61), ("e", 0.30)];
        let fused = score_fusion(&[cut(keyword, 0.5), cut(vector, 0.5)]);
        assert_eq!(fused[0].0, "b", "{fused:?}");
        // ...but not when it trails both lists' best by far.
        let keyword = vec![("a", 40.0), ("b", 5.0), ("c", 4.0)];
        let vector = vec![("d", 0.62), ("b", 0.40), ("e", 0.30)];
        let fused = score_fusion(&[cut(keyword, 0.5), cut(vector, 0.5)]);
        assert_eq!(fused[0], ("a", 0.5));
        let b = fused.iter().find(|(item, _)| *item == "b").unwrap().1;
        assert!(
            (b - (0.5 * 1.0 / 36.0 + 0.5 * 0.10 / 0.32)).abs() < 1e-9,
            "{b}"
        );
        assert_eq!(fused.len(), 5);
    }

    #[test]
    fn score_fusion_scales_each_list_on_its_own() {
        let one = score_fusion(&[cut(vec![("x", 7.5)], 1.0)]);
        assert_eq!(one, vec![("x", 1.0)], "a lone item is its list's best");
        let fused = score_fusion(&[cut(vec![("p", 3.0), ("q", 2.0), ("r", 1.0)], 1.0)]);
        assert_eq!(fused, vec![("p", 1.0), ("q", 0.5), ("r", 0.0)]);
    }

    #[test]
    fn standardising_counts_a_lead_by_the_list_s_spread() {
        // Same range, different spread: a lead counts in standard deviations.
        let even = cut(vec![("a", 4.0), ("b", 3.0), ("c", 2.0), ("d", 1.0)], 0.5);
        let lone_lead = cut(vec![("e", 4.0), ("f", 1.1), ("g", 1.0), ("h", 1.0)], 0.5);
        let fused = standardised_fusion(&[even, lone_lead]);
        let score = |x| fused.iter().find(|(i, _)| *i == x).unwrap().1;
        // a: 0.5 × 3 / sd(4, 3, 2, 1); e: 0.5 × 3 / sd(4, 1.1, 1, 1).
        let sd = |v: [f64; 4]| {
            let m = v.iter().sum::<f64>() / 4.0;
            (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 4.0).sqrt()
        };
        assert!((score("a") - 1.5 / sd([4.0, 3.0, 2.0, 1.0])).abs() < 1e-9);
        assert!((score("e") - 1.5 / sd([4.0, 1.1, 1.0, 1.0])).abs() < 1e-9);
        assert_eq!(score("d"), 0.0);
        // Score fusion scales both by their range: the two leads tie.
        let scaled = score_fusion(&[
            cut(vec![("a", 4.0), ("d", 1.0)], 0.5),
            cut(vec![("e", 4.0), ("h", 1.0)], 0.5),
        ]);
        assert_eq!(scaled[0].1, scaled[1].1);
    }

    #[test]
    fn weighted_ranks_ignore_scores_and_give_the_top_of_every_list_one() {
        let keyword = cut(vec![("a", 90.0), ("b", 1.0)], 0.7);
        let vector = cut(vec![("a", 0.2), ("c", 0.1)], 0.3);
        let fused = weighted_rank_fusion(&[keyword, vector]);
        assert_eq!(fused[0].0, "a");
        assert!((fused[0].1 - 1.0).abs() < 1e-12, "{fused:?}");
        let b = fused.iter().find(|(i, _)| *i == "b").unwrap().1;
        assert!((b - 0.7 * 61.0 / 62.0).abs() < 1e-9, "{b}");
        assert_eq!(
            Fusion::Ranks.fuse(&[cut(vec![("x", 1.0)], 1.0)]),
            vec![("x", 1.0)]
        );
    }

    #[test]
    fn a_complete_list_scales_from_its_floor() {
        let whole = ScoredList {
            items: vec![("p", 4.0), ("q", 1.0)],
            weight: 1.0,
            floor: Some(0.0),
        };
        assert_eq!(score_fusion(&[whole]), vec![("p", 1.0), ("q", 0.25)]);
    }
}
