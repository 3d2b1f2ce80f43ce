//! Choosing recall's methods by k-fold over two dev sets at once (LoCoMo's
//! two-person dialogues and BEAM's user–assistant projects), so that what is
//! kept holds on conversations the choice never saw, of either style.
//!
//! The chats are dealt into k folds in turn (so each fold mixes both sets
//! where it can). For each fold, the weights are chosen on the other folds'
//! chats — the candidate with the best mean R@10 over the two sets, each
//! set's questions averaged on their own so that neither outweighs the
//! other — and scored on the fold's. A method (a `[recall]` switch) is
//! tried on top of those kept before it and kept only if its held-out mean
//! gains on each set and it loses on no more folds than it wins.

use octopus_app::AppConfig;
use octopus_core::TenantId;
use octopus_core::fusion::Fusion;
use octopus_core::recall::RecallMode;
use octopus_core::recall_ranking::RankingWeights;
use octopus_engine::Octopus;

use crate::dev_set::{self, AT_10, Chat, Imported, Scored, Source};

/// A retrieval method that is on or off, tried on top of those kept.
pub struct Method {
    pub name: &'static str,
    pub turn_on: fn(&mut RankingWeights),
    /// What it is kept for.
    pub aim: Aim,
}

/// What a method must improve to be kept.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Aim {
    /// Held-out R@10: it gains on each set, and loses on no more folds than
    /// it wins.
    Recall,
    /// The order of an old value and its update: the held-out share of
    /// update questions with the new value first rises, and R@10 falls on
    /// neither set by more than [`ORDER_RECALL_TOLERANCE`].
    Order,
}

/// How much held-out R@10 a method kept for the order may cost on a set:
/// reordering the best hits moves a few across the tenth place either way.
pub const ORDER_RECALL_TOLERANCE: f64 = 0.005;

/// The methods in the order they are tried.
pub const METHODS: [Method; 9] = [
    Method {
        name: "a restated value first in the question's tense (shared topics, or cosine ≥ 0.75)",
        turn_on: |w| w.restated = 0.75,
        aim: Aim::Order,
    },
    Method {
        name: "a restated value first in the question's tense (shared topics, or cosine ≥ 0.6)",
        turn_on: |w| w.restated = 0.6,
        aim: Aim::Order,
    },
    Method {
        name: "a restated value first in the question's tense (shared topics, or cosine ≥ 0.45)",
        turn_on: |w| w.restated = 0.45,
        aim: Aim::Order,
    },
    Method {
        name: "diversity across episodes (0.15)",
        turn_on: |w| w.diversity = 0.15,
        aim: Aim::Recall,
    },
    Method {
        name: "diversity across episodes (0.3)",
        turn_on: |w| w.diversity = 0.3,
        aim: Aim::Recall,
    },
    Method {
        name: "session keys (episode summaries raise their turns)",
        turn_on: |w| w.session_keys = true,
        aim: Aim::Recall,
    },
    Method {
        name: "names searched on their own",
        turn_on: |w| w.names_searched = true,
        aim: Aim::Recall,
    },
    Method {
        name: "query expansion from the best keyword hits",
        turn_on: |w| w.feedback = true,
        aim: Aim::Recall,
    },
    Method {
        name: "query expansion from the best hits by meaning (the user's own words)",
        turn_on: |w| w.meaning_feedback = true,
        aim: Aim::Recall,
    },
];

/// The weights each fold chooses among in `mode`: the defaults'
/// neighbourhood (for hybrid, three vector shares; standardised fusion,
/// which won every LoCoMo fold), with `methods` switched on.
pub fn grid(mode: RecallMode, methods: &[&Method]) -> Vec<RankingWeights> {
    let shares: &[f64] = match mode {
        RecallMode::Hybrid => &[0.3, 0.5, 0.7],
        _ => &[0.5],
    };
    let mut all = Vec::new();
    let fusion = Fusion::Standardised;
    for &vector in shares {
        for neighbour in [0.1, 0.25] {
            for episode in [0.1, 0.25] {
                let mut weights = RankingWeights {
                    vector,
                    neighbour,
                    episode,
                    fusion,
                    ..RankingWeights::default()
                };
                for method in methods {
                    (method.turn_on)(&mut weights);
                }
                all.push(weights);
            }
        }
    }
    all
}

/// A fold's outcome.
pub struct Fold {
    pub chosen: RankingWeights,
    /// Its held-out questions, scored with the chosen weights.
    pub scored: Vec<Scored>,
}

/// Which fold a chat is in.
pub fn fold_of(chat: usize, folds: usize) -> usize {
    chat % folds.max(1)
}

/// Mean R@10 of `scored` on each source's questions, averaged over the
/// sources present.
fn objective(scored: &[&Scored], source_of: &dyn Fn(usize) -> Source) -> f64 {
    let per_source = [Source::Locomo, Source::Beam].map(|source| {
        let of: Vec<f64> = scored
            .iter()
            .filter(|s| source_of(s.chat) == source)
            .map(|s| s.recall[AT_10])
            .collect();
        (!of.is_empty()).then(|| dev_set::mean(of))
    });
    dev_set::mean(per_source.into_iter().flatten())
}

/// Runs the folds: `results[c]` holds every question scored with candidate
/// `c`; each fold chooses by [`objective`] on the other folds' chats, ties
/// to the earlier candidate.
pub fn folds(
    candidates: &[RankingWeights],
    results: &[Vec<Scored>],
    folds: usize,
    source_of: &dyn Fn(usize) -> Source,
) -> Vec<Fold> {
    (0..folds)
        .map(|held_out| {
            let train = |scored: &[Scored]| {
                let train: Vec<&Scored> = scored
                    .iter()
                    .filter(|s| fold_of(s.chat, folds) != held_out)
                    .collect();
                objective(&train, source_of)
            };
            let mut best = 0;
            let mut best_score = f64::NEG_INFINITY;
            for (c, scored) in results.iter().enumerate() {
                let score = train(scored);
                if score > best_score + 1e-12 {
                    (best, best_score) = (c, score);
                }
            }
            Fold {
                chosen: candidates[best],
                scored: results[best]
                    .iter()
                    .filter(|s| fold_of(s.chat, folds) == held_out)
                    .copied()
                    .collect(),
            }
        })
        .collect()
}

/// Held-out R@10 of each fold (over all its questions).
pub fn per_fold(folds: &[Fold]) -> Vec<f64> {
    folds
        .iter()
        .map(|f| dev_set::mean(f.scored.iter().map(|s| s.recall[AT_10])))
        .collect()
}

/// Held-out R@10 pooled over every fold's questions of `source`.
pub fn pooled(folds: &[Fold], source: Source, source_of: &dyn Fn(usize) -> Source) -> f64 {
    dev_set::mean(
        folds
            .iter()
            .flat_map(|f| &f.scored)
            .filter(|s| source_of(s.chat) == source)
            .map(|s| s.recall[AT_10]),
    )
}

/// The held-out share of update questions whose new value ranks first.
pub fn updates_first(folds: &[Fold]) -> (usize, usize) {
    let order: Vec<bool> = folds
        .iter()
        .flat_map(|f| &f.scored)
        .filter_map(|s| s.updated_first)
        .collect();
    (order.iter().filter(|first| **first).count(), order.len())
}

/// Whether a method is kept, by its [`Aim`].
pub fn kept(
    aim: Aim,
    before: &[Fold],
    after: &[Fold],
    source_of: &dyn Fn(usize) -> Source,
) -> bool {
    let sources = [Source::Locomo, Source::Beam];
    if aim == Aim::Order {
        let holds = sources.iter().all(|s| {
            pooled(after, *s, source_of) >= pooled(before, *s, source_of) - ORDER_RECALL_TOLERANCE
        });
        return holds && updates_first(after).0 > updates_first(before).0;
    }
    let gains = sources
        .iter()
        .all(|s| pooled(after, *s, source_of) > pooled(before, *s, source_of) + 1e-9);
    let (wins, losses) = per_fold(before)
        .iter()
        .zip(per_fold(after))
        .fold((0, 0), |(w, l), (b, a)| {
            (w + usize::from(a > b + 1e-9), l + usize::from(a < b - 1e-9))
        });
    gains && losses <= wins
}

/// Every question recalled with each candidate of `grid` in `mode`.
async fn score_grid(
    octopus: &Octopus,
    tenant: TenantId,
    chats: &[Chat],
    imported: &[Imported],
    mode: RecallMode,
    grid: &[RankingWeights],
) -> anyhow::Result<Vec<Vec<Scored>>> {
    let mut results = Vec::with_capacity(grid.len());
    for weights in grid {
        let engine = octopus.clone().with_recall_weights(*weights);
        results.push(
            dev_set::recall_all(&engine, tenant, chats, imported, mode)
                .await?
                .0,
        );
    }
    Ok(results)
}

fn show(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| format!("{v:.3}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Imports every chat, then prints the modes' folds and the methods'
/// forward selection.
pub async fn run(
    mut config: AppConfig,
    chats: &[Chat],
    k: usize,
    keep: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    // Each question is embedded once for every candidate.
    config.engine.embedding.set_query_cache_entries(16_384);
    let octopus = octopus_app::connect(&config).await?;
    let (tenant, imported) = dev_set::import_all(&octopus, "selection", chats, keep).await?;
    let source_of = |chat: usize| chats[chat].source;
    let names = |fold: usize| {
        chats
            .iter()
            .enumerate()
            .filter(|(c, _)| fold_of(*c, k) == fold)
            .map(|(_, chat)| format!("{} {}", chat.source.name(), chat.id))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!("\n## Folds\n\n| fold | chats |\n|---|---|");
    for fold in 0..k {
        println!("| {fold} | {} |", names(fold));
    }

    println!(
        "\n## Modes\n\nHeld-out R@10 per fold, the weights chosen per fold on the other folds.\n\n| mode | per fold | LoCoMo | BEAM |\n|---|---|---|---|"
    );
    for (mode, name) in [
        (RecallMode::Keyword, "keyword"),
        (RecallMode::Vector, "vector"),
        (RecallMode::Hybrid, "hybrid"),
    ] {
        let grid = grid(mode, &[]);
        let results = score_grid(&octopus, tenant, chats, &imported, mode, &grid).await?;
        let folds = folds(&grid, &results, k, &source_of);
        println!(
            "| {name} | {} | {:.3} | {:.3} |",
            show(&per_fold(&folds)),
            pooled(&folds, Source::Locomo, &source_of),
            pooled(&folds, Source::Beam, &source_of),
        );
    }

    println!(
        "\n## Methods, each added to those kept (hybrid)\n\n\
         | method | before, per fold | after, per fold | wins / losses | LoCoMo before → after | BEAM before → after | new value first, before → after | kept |\n|---|---|---|---|---|---|---|---|"
    );
    let mut kept_methods: Vec<&Method> = Vec::new();
    let run = |methods: Vec<&'static Method>| {
        let (octopus, imported, source_of) = (&octopus, &imported, &source_of);
        async move {
            let grid = grid(RecallMode::Hybrid, &methods);
            let results =
                score_grid(octopus, tenant, chats, imported, RecallMode::Hybrid, &grid).await?;
            anyhow::Ok(folds(&grid, &results, k, source_of))
        }
    };
    let mut before = run(Vec::new()).await?;
    for method in &METHODS {
        let mut trial = kept_methods.clone();
        trial.push(method);
        let after = run(trial.clone()).await?;
        let keep = kept(method.aim, &before, &after, &source_of);
        let (b, a) = (per_fold(&before), per_fold(&after));
        let wins = b.iter().zip(&a).filter(|(b, a)| **a > **b + 1e-9).count();
        let losses = b.iter().zip(&a).filter(|(b, a)| **a < **b - 1e-9).count();
        let (first_before, updates) = updates_first(&before);
        let (first_after, _) = updates_first(&after);
        println!(
            "| {} | {} | {} | {wins} / {losses} | {:.3} → {:.3} | {:.3} → {:.3} | {first_before} → {first_after} of {updates} | {} |",
            method.name,
            show(&b),
            show(&a),
            pooled(&before, Source::Locomo, &source_of),
            pooled(&after, Source::Locomo, &source_of),
            pooled(&before, Source::Beam, &source_of),
            pooled(&after, Source::Beam, &source_of),
            if keep { "yes" } else { "no" },
        );
        if keep {
            kept_methods = trial;
            before = after;
        }
    }
    println!(
        "\n| fold | weights chosen with the methods kept (fusion, vector, neighbour, episode) |\n|---|---|"
    );
    for (f, fold) in before.iter().enumerate() {
        let w = fold.chosen;
        println!(
            "| {f} | {:?}, {:.2}, {:.2}, {:.2} |",
            w.fusion, w.vector, w.neighbour, w.episode
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(chat: usize, r10: f64) -> Scored {
        Scored {
            chat,
            ability: "x",
            recall: [0.0, r10, 0.0],
            updated_first: None,
        }
    }

    /// Chats 0 and 1 are LoCoMo's, 2 and 3 BEAM's; two folds: {0, 2}, {1, 3}.
    fn source_of(chat: usize) -> Source {
        if chat < 2 {
            Source::Locomo
        } else {
            Source::Beam
        }
    }

    #[test]
    fn each_fold_chooses_on_the_others_with_each_set_weighed_alike() {
        let weights = |vector| RankingWeights {
            vector,
            ..RankingWeights::default()
        };
        let candidates = [weights(0.3), weights(0.7)];
        // On fold 1's chats, candidate 0 is better on LoCoMo by a little and
        // worse on BEAM by more: averaged per set, candidate 1 wins.
        let results = vec![
            vec![
                scored(0, 0.5),
                scored(1, 0.62),
                scored(2, 0.9),
                scored(3, 0.30),
                scored(3, 0.30),
            ],
            vec![
                scored(0, 0.4),
                scored(1, 0.60),
                scored(2, 0.1),
                scored(3, 0.50),
                scored(3, 0.50),
            ],
        ];
        let folds = folds(&candidates, &results, 2, &source_of);
        // Held out fold 0: trained on chats 1 and 3.
        assert_eq!(folds[0].chosen, candidates[1]);
        assert_eq!(per_fold(&folds)[0], (0.4 + 0.1) / 2.0);
        // Held out fold 1: trained on chats 0 and 2, where candidate 0 wins.
        assert_eq!(folds[1].chosen, candidates[0]);
        assert!((pooled(&folds, Source::Beam, &source_of) - (0.1 + 0.3 + 0.3) / 3.0).abs() < 1e-9);
    }

    #[test]
    fn a_method_is_kept_only_when_both_sets_gain_and_it_wins_as_often_as_it_loses() {
        let fold = |scores: Vec<Scored>| Fold {
            chosen: RankingWeights::default(),
            scored: scores,
        };
        let before = [
            fold(vec![scored(0, 0.5), scored(2, 0.5)]),
            fold(vec![scored(1, 0.5), scored(3, 0.5)]),
        ];
        let both_gain = [
            fold(vec![scored(0, 0.6), scored(2, 0.6)]),
            fold(vec![scored(1, 0.5), scored(3, 0.5)]),
        ];
        assert!(kept(Aim::Recall, &before, &both_gain, &source_of));
        // BEAM gains a lot, LoCoMo loses a little: not kept.
        let one_set = [
            fold(vec![scored(0, 0.45), scored(2, 0.9)]),
            fold(vec![scored(1, 0.5), scored(3, 0.9)]),
        ];
        assert!(!kept(Aim::Recall, &before, &one_set, &source_of));
        // Both sets gain on the mean, but one fold wins and two lose.
        let before3 = [
            fold(vec![scored(0, 0.5)]),
            fold(vec![scored(2, 0.5)]),
            fold(vec![scored(1, 0.5), scored(3, 0.5)]),
        ];
        let after3 = [
            fold(vec![scored(0, 0.9)]),
            fold(vec![scored(2, 0.9)]),
            fold(vec![scored(1, 0.45), scored(3, 0.45)]),
        ];
        assert!(
            kept(Aim::Recall, &before3, &after3, &source_of),
            "two wins, one loss"
        );
        // Both sets gain on the mean, by two big wins against three small
        // losses: not kept.
        let single = |chat, r10| fold(vec![scored(chat, r10)]);
        let before5: Vec<Fold> = (0..5).map(|c| single(c, 0.5)).collect();
        let after5 = [
            single(0, 1.0),
            single(1, 0.45),
            single(2, 1.0),
            single(3, 0.45),
            single(4, 0.45),
        ];
        assert!(pooled(&after5, Source::Beam, &source_of) > 0.5);
        assert!(pooled(&after5, Source::Locomo, &source_of) > 0.5);
        assert!(
            !kept(Aim::Recall, &before5, &after5, &source_of),
            "two wins, three losses"
        );
        assert!(
            !kept(Aim::Recall, &before, &before, &source_of),
            "no change is not a gain"
        );
    }

    #[test]
    fn an_order_method_is_kept_when_more_updates_lead_at_little_cost_in_recall() {
        let update = |chat, r10, first| Scored {
            updated_first: Some(first),
            ..scored(chat, r10)
        };
        let fold = |scores: Vec<Scored>| Fold {
            chosen: RankingWeights::default(),
            scored: scores,
        };
        let before = [fold(vec![scored(0, 0.5), update(2, 0.5, false)])];
        let ordered = [fold(vec![scored(0, 0.498), update(2, 0.5, true)])];
        assert_eq!(updates_first(&ordered), (1, 1));
        assert!(kept(Aim::Order, &before, &ordered, &source_of));
        assert!(
            !kept(Aim::Recall, &before, &ordered, &source_of),
            "no recall gained"
        );
        let costly = [fold(vec![scored(0, 0.4), update(2, 0.5, true)])];
        assert!(!kept(Aim::Order, &before, &costly, &source_of));
        assert!(!kept(Aim::Order, &before, &before, &source_of));
    }

    #[test]
    fn the_grid_switches_on_the_methods_given() {
        let grid = grid(RecallMode::Hybrid, &[&METHODS[3]]);
        assert_eq!(grid.len(), 12);
        assert!(grid.iter().all(|w| w.diversity > 0.0 && !w.feedback));
        assert_eq!(super::grid(RecallMode::Vector, &[]).len(), 4);
        assert_eq!(fold_of(13, 10), 3);
    }
}
