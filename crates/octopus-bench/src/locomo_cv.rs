//! Leave-one-conversation-out cross-validation of recall's weights on the
//! LoCoMo dev split: for each conversation in turn, the weights are chosen
//! on the others (best mean R@10 over their questions) and scored on it. So
//! every figure is measured on a conversation the choice never saw; the
//! spread across folds says how much the choice depends on the data.

use std::collections::BTreeMap;

use octopus_core::fusion::Fusion;
use octopus_core::recall::RecallMode;
use octopus_core::recall_ranking::RankingWeights;

/// One question's evidence recall at each of [`crate::locomo::DEPTHS`].
#[derive(Clone, Copy, Debug)]
pub struct Scored {
    /// Index of its conversation.
    pub conversation: usize,
    pub category: u8,
    pub recall: [f64; 4],
}

/// (speaker first, date first): each method added to the ones kept before it.
const SWITCHES: [(bool, bool); 3] = [(false, false), (true, false), (true, true)];

/// The candidates the choice is made among: a small grid around the
/// weights' defaults, each between 0 and 1, with each way of fusing the
/// retrievers' lists and of spreading the ranking across episodes, with
/// neither the named speaker's turns nor the named dates' first, the
/// speaker's alone, or both.
pub fn candidates(mode: RecallMode) -> Vec<RankingWeights> {
    // The fusion and its weight matter only when both retrievers run.
    let (vector_shares, fusions): (&[f64], &[Fusion]) = match mode {
        RecallMode::Hybrid => (
            &[0.2, 0.3, 0.5],
            &[Fusion::Scores, Fusion::Standardised, Fusion::Ranks],
        ),
        _ => (&[0.5], &[Fusion::Scores]),
    };
    let mut all = Vec::new();
    for &fusion in fusions {
        for &vector in vector_shares {
            for neighbour in [0.1, 0.25, 0.5] {
                for episode in [0.25, 0.5, 0.75] {
                    for diversity in [0.0, 0.15] {
                        for (speaker_first, date_first) in SWITCHES {
                            all.push(RankingWeights {
                                vector,
                                neighbour,
                                episode,
                                fusion,
                                diversity,
                                speaker_first,
                                date_first,
                                ..RankingWeights::default()
                            });
                        }
                    }
                }
            }
        }
    }
    all
}

/// A retrieval method that is on or off (a `[recall]` switch), tried by
/// [`method_grid`] on top of the ones kept before it.
pub struct Method {
    pub name: &'static str,
    pub turn_on: fn(&mut RankingWeights),
}

/// The methods in the order they are tried, each added to those kept.
pub const METHODS: [Method; 3] = [
    Method {
        name: "session keys (episode summaries raise their turns)",
        turn_on: |w| w.session_keys = true,
    },
    Method {
        name: "names searched on their own",
        turn_on: |w| w.names_searched = true,
    },
    Method {
        name: "query expansion from the best keyword hits",
        turn_on: |w| w.feedback = true,
    },
];

/// The weights a method is tried under: the defaults' neighbourhood
/// (standardised or score fusion, vector share, neighbour and episode
/// shares each at two values) with the named speaker's and dates' turns
/// first, and `methods` (the ones kept, and the one tried) switched on. The
/// choice among them is still made per fold, so a method is judged with the
/// weights that suit it.
pub fn method_grid(methods: &[&Method]) -> Vec<RankingWeights> {
    let mut all = Vec::new();
    for fusion in [Fusion::Standardised, Fusion::Scores] {
        for vector in [0.3, 0.5] {
            for neighbour in [0.25, 0.5] {
                for episode in [0.25, 0.5] {
                    let mut weights = RankingWeights {
                        vector,
                        neighbour,
                        episode,
                        fusion,
                        diversity: 0.0,
                        speaker_first: true,
                        date_first: true,
                        session_keys: false,
                        names_searched: false,
                        feedback: false,
                        meaning_feedback: false,
                        sub_questions: false,
                        restated: 0.0,
                    };
                    for method in methods {
                        (method.turn_on)(&mut weights);
                    }
                    all.push(weights);
                }
            }
        }
    }
    all
}

/// Whether a method is kept: no held-out fold's R@10 falls, and one rises.
pub fn kept(before: &[Fold], after: &[Fold]) -> bool {
    let change = || {
        before
            .iter()
            .zip(after)
            .map(|(b, a)| a.recall[2] - b.recall[2])
    };
    change().all(|c| c >= -1e-9) && change().any(|c| c > 1e-9)
}

/// A fold's outcome: the weights chosen without its held-out conversation,
/// and their mean recall on it at each depth.
pub struct Fold {
    pub chosen: RankingWeights,
    pub recall: [f64; 4],
    /// The held-out questions, scored with the chosen weights.
    pub scored: Vec<Scored>,
}

fn mean(scored: &[&Scored], depth: usize) -> f64 {
    if scored.is_empty() {
        return 0.0;
    }
    scored.iter().map(|s| s.recall[depth]).sum::<f64>() / scored.len() as f64
}

/// Runs the folds. `results[c]` holds every question scored with candidate
/// `c`; the choice maximises mean R@10 (depth index 2), ties to the earlier
/// candidate.
pub fn folds(
    candidates: &[RankingWeights],
    results: &[Vec<Scored>],
    conversations: usize,
) -> Vec<Fold> {
    (0..conversations)
        .map(|held_out| {
            let train_score = |scored: &Vec<Scored>| {
                let train: Vec<&Scored> = scored
                    .iter()
                    .filter(|s| s.conversation != held_out)
                    .collect();
                mean(&train, 2)
            };
            let mut best = 0;
            for (c, scored) in results.iter().enumerate() {
                if train_score(scored) > train_score(&results[best]) + 1e-12 {
                    best = c;
                }
            }
            let test: Vec<Scored> = results[best]
                .iter()
                .filter(|s| s.conversation == held_out)
                .copied()
                .collect();
            let refs: Vec<&Scored> = test.iter().collect();
            Fold {
                chosen: candidates[best],
                recall: [0, 1, 2, 3].map(|d| mean(&refs, d)),
                scored: test,
            }
        })
        .collect()
}

/// Mean, standard deviation (of the folds), minimum and maximum.
pub fn spread(values: &[f64]) -> (f64, f64, f64, f64) {
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (mean, variance.sqrt(), min, max)
}

/// Pooled recall per category of the held-out questions of every fold.
pub fn per_category(folds: &[Fold]) -> BTreeMap<u8, (usize, [f64; 4])> {
    let mut sums: BTreeMap<u8, (usize, [f64; 4])> = BTreeMap::new();
    for scored in folds.iter().flat_map(|f| &f.scored) {
        let entry = sums.entry(scored.category).or_default();
        entry.0 += 1;
        for d in 0..4 {
            entry.1[d] += scored.recall[d];
        }
    }
    for (n, sum) in sums.values_mut() {
        for value in sum.iter_mut() {
            *value /= (*n).max(1) as f64;
        }
    }
    sums
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(conversation: usize, r10: f64) -> Scored {
        Scored {
            conversation,
            category: 4,
            recall: [0.0, 0.0, r10, 0.0],
        }
    }

    #[test]
    fn a_method_is_kept_only_when_no_held_out_fold_loses_and_one_gains() {
        let fold = |r10| Fold {
            chosen: RankingWeights::default(),
            recall: [0.0, 0.0, r10, 0.0],
            scored: Vec::new(),
        };
        let before = [fold(0.70), fold(0.80)];
        assert!(kept(&before, &[fold(0.70), fold(0.85)]));
        // A gain in the mean does not make up for a fold that falls.
        assert!(!kept(&before, &[fold(0.95), fold(0.79)]));
        // A method that changes nothing is not kept either.
        assert!(!kept(&before, &before));
    }

    #[test]
    fn the_method_grid_switches_on_every_method_given_and_only_those() {
        let kept = [&METHODS[0], &METHODS[2]];
        let grid = method_grid(&kept);
        assert_eq!(grid.len(), 16);
        assert!(
            grid.iter()
                .all(|w| w.session_keys && w.feedback && !w.names_searched)
        );
        assert!(method_grid(&[]).iter().all(|w| !w.session_keys));
    }

    #[test]
    fn each_fold_chooses_on_the_other_conversations_and_scores_the_held_out_one() {
        let weights = |vector| RankingWeights {
            vector,
            ..RankingWeights::default()
        };
        let candidates = [weights(0.3), weights(0.7)];
        // Candidate 0 is best on conversations 0 and 1, candidate 1 on 2.
        let results = vec![
            vec![scored(0, 0.9), scored(1, 0.9), scored(2, 0.1)],
            vec![scored(0, 0.2), scored(1, 0.5), scored(2, 0.8)],
        ];
        let folds = folds(&candidates, &results, 3);
        // Held out 0: on 1 and 2, candidate 0 scores 0.5, candidate 1 0.65.
        assert_eq!(folds[0].chosen, candidates[1]);
        assert!((folds[0].recall[2] - 0.2).abs() < 1e-9);
        // Held out 2: candidate 0 (0.9 on both others) wins, scores 0.1 on 2:
        // what was tuned elsewhere does not carry over, and the fold says so.
        assert_eq!(folds[2].chosen, candidates[0]);
        assert!((folds[2].recall[2] - 0.1).abs() < 1e-9);
        let (mean, _, min, max) = spread(&folds.iter().map(|f| f.recall[2]).collect::<Vec<_>>());
        assert!((min - 0.1).abs() < 1e-9 && (max - 0.9).abs() < 1e-9);
        assert!((mean - (0.2 + 0.9 + 0.1) / 3.0).abs() < 1e-9);
    }
}
