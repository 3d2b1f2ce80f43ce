//! What recall notes of its own work when the query asks why
//! (`explain: true`): the searches' findings, the fused and in-context
//! scores, and the places each reordering changed. When the query does not
//! ask, the [`Explainer`] holds nothing and every note is a no-op, so that
//! recall does no work for an explanation nobody reads.

use std::collections::HashMap;

use octopus_core::fusion::{Fusion, ScoredList};
use octopus_core::recall_explanation::{
    RecallExplanation, RecallFinding, RecallMove, RecallReordering, SearchList, findings, moves,
};
use octopus_core::recall_ranking::Memory;

/// The notes, when the query asked for them.
#[derive(Default)]
pub(super) struct Explainer(Option<Notes>);

struct Notes {
    fusion: Fusion,
    found: HashMap<Memory, Vec<RecallFinding>>,
    fused: HashMap<Memory, f64>,
    in_context: HashMap<Memory, f64>,
    moved: HashMap<Memory, Vec<RecallMove>>,
}

/// The candidates' order before a reordering, when it is being noted.
pub(super) struct Before(Option<Vec<Memory>>);

impl Explainer {
    /// Notes for a query that asked (`explain`), from the lists fusion took
    /// and what it made of them; none otherwise.
    pub fn new(
        explain: bool,
        fusion: Fusion,
        lists: &[ScoredList<Memory>],
        searches: &[SearchList],
        fused: &[(Memory, f64)],
    ) -> Self {
        Self(explain.then(|| Notes {
            fusion,
            found: findings(fusion, lists, searches),
            fused: fused.iter().copied().collect(),
            in_context: HashMap::new(),
            moved: HashMap::new(),
        }))
    }

    /// Notes each candidate's score once ranked in context.
    pub fn ranked_in_context(&mut self, ranked: &[(Memory, f64)]) {
        if let Some(notes) = &mut self.0 {
            notes.in_context = ranked.iter().copied().collect();
        }
    }

    /// The order before a reordering, to compare with the order after it.
    pub fn before(&self, ranked: &[(Memory, f64)]) -> Before {
        Before(
            self.0
                .as_ref()
                .map(|_| ranked.iter().map(|(memory, _)| *memory).collect()),
        )
    }

    /// Notes every candidate `by` moved since `before`.
    pub fn reordered(&mut self, by: RecallReordering, before: Before, ranked: &[(Memory, f64)]) {
        let (Some(notes), Before(Some(before))) = (&mut self.0, before) else {
            return;
        };
        let after: Vec<Memory> = ranked.iter().map(|(memory, _)| *memory).collect();
        for (memory, from, to) in moves(&before, &after) {
            notes
                .moved
                .entry(memory)
                .or_default()
                .push(RecallMove { by, from, to });
        }
    }

    /// Why `memory` is where it is, when the query asked.
    pub fn explain(&mut self, memory: &Memory) -> Option<RecallExplanation> {
        let notes = self.0.as_mut()?;
        Some(RecallExplanation {
            found_by: notes.found.remove(memory).unwrap_or_default(),
            fusion: notes.fusion,
            fused: notes.fused.get(memory).copied().unwrap_or(0.0),
            in_context: notes.in_context.get(memory).copied().unwrap_or(0.0),
            moved: notes.moved.remove(memory).unwrap_or_default(),
        })
    }
}
