//! Why each candidate for a turn's context was kept or left out: every
//! procedure, profile line, fact, knowledge chunk and recalled memory
//! offered, in the order of the context's blocks, with what became of it
//! and, for a recalled memory, why recall found it where it did. Built
//! only when the request asks (`explain: true`).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::episodic_snippets::Placement;
use crate::pii::PiiKind;
use crate::recall_explanation::RecallExplanation;
use crate::working_memory::{Block, ContextTrace, PruneReason, Retrieved};

/// What became of a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CandidateFate {
    /// In the context, an item of its block.
    Kept,
    /// In the context, inside the passage of `shown_in`: a recalled turn
    /// next to a better-ranked one, shown with it.
    Joined,
    /// Left out: its words were already shown in a better-ranked passage.
    Repeat,
    /// Left out: a recalled memory with no text to show.
    NoText,
    /// Left out: its block was over its own limit (the procedures' share of
    /// the budget, `episodic_max_tokens`, `profile_max_tokens`); the
    /// block's lowest-scored went first.
    BlockLimit,
    /// Left out: the context was over the agent's budget once the oldest
    /// history was gone; the lowest-scored of every block went first.
    OverBudget,
}

impl CandidateFate {
    /// Whether the candidate's words are in the context.
    pub fn kept(self) -> bool {
        matches!(self, CandidateFate::Kept | CandidateFate::Joined)
    }
}

/// One candidate and what became of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ContextCandidate {
    pub block: Block,
    /// The id the trace names it by: a procedure's, a fact's, a chunk's, a
    /// message's, an episode's.
    pub id: String,
    /// Its score as the pruning compared it (each block's best 1); absent
    /// for a recalled memory that was not an item of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    pub fate: CandidateFate,
    /// Whether its words are in the context.
    pub kept: bool,
    /// For a recalled memory shown with another: the id of the passage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shown_in: Option<String>,
    /// The personal data replaced in what went out (the agent's `pii`
    /// policy redacts outgoing text), by kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<PiiKind>,
    /// For a recalled memory: why recall found it where it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<RecallExplanation>,
}

/// Why the context holds what it holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ContextExplanation {
    /// Every candidate offered, block by block in the context's order,
    /// each block's in the order offered (recalled memories best first).
    pub candidates: Vec<ContextCandidate>,
}

/// A recalled memory offered to the context: its id, where it went among
/// the passages, and recall's explanation of it.
#[derive(Clone, Debug)]
pub struct RecalledCandidate {
    pub id: String,
    pub placement: Placement,
    pub recall: Option<RecallExplanation>,
}

/// The explanation of a context assembled with `trace`, from the recalled
/// memories as they were placed; `redacting` when the agent's policy
/// redacts outgoing text.
pub fn explain_context(
    trace: &ContextTrace,
    recalled: Vec<RecalledCandidate>,
    redacting: bool,
) -> ContextExplanation {
    let pruned: HashMap<(Block, &str), PruneReason> = trace
        .pruned
        .iter()
        .map(|p| ((p.block, p.id.as_str()), p.reason))
        .collect();
    let fate_of = |block: Block, id: &str| match pruned.get(&(block, id)) {
        Some(PruneReason::BlockLimit) => CandidateFate::BlockLimit,
        Some(_) => CandidateFate::OverBudget,
        None => CandidateFate::Kept,
    };
    let redacted = |text: &str| match redacting {
        true => PiiKind::placeholders_in(text),
        false => Vec::new(),
    };
    let item = |block: Block, item: &Retrieved| {
        let fate = fate_of(block, &item.id);
        ContextCandidate {
            block,
            id: item.id.clone(),
            score: Some(item.score),
            fate,
            kept: fate.kept(),
            shown_in: None,
            redacted: redacted(&item.text),
            recall: None,
        }
    };
    let mut candidates: Vec<ContextCandidate> = trace
        .procedures
        .iter()
        .map(|procedure| {
            let id = procedure.id.to_string();
            let fate = fate_of(Block::Procedures, &id);
            ContextCandidate {
                block: Block::Procedures,
                id,
                score: Some(procedure.score),
                fate,
                kept: fate.kept(),
                shown_in: None,
                redacted: Vec::new(),
                recall: None,
            }
        })
        .collect();
    for (block, items) in [
        (Block::Profile, &trace.profile),
        (Block::Facts, &trace.facts),
        (Block::Knowledge, &trace.knowledge),
    ] {
        candidates.extend(items.iter().map(|offered| item(block, offered)));
    }
    let passages: HashMap<&str, &Retrieved> = trace
        .episodic
        .iter()
        .map(|passage| (passage.id.as_str(), passage))
        .collect();
    for recalled in recalled {
        let (fate, passage) = match &recalled.placement {
            Placement::Passage(id) => {
                let fate = match fate_of(Block::Episodic, id) {
                    CandidateFate::Kept if *id != recalled.id => CandidateFate::Joined,
                    fate => fate,
                };
                (fate, passages.get(id.as_str()).copied())
            }
            Placement::Repeat => (CandidateFate::Repeat, None),
            Placement::NoText => (CandidateFate::NoText, None),
        };
        let own = passage.filter(|p| p.id == recalled.id);
        candidates.push(ContextCandidate {
            block: Block::Episodic,
            score: own.map(|p| p.score),
            fate,
            kept: fate.kept(),
            shown_in: passage
                .filter(|p| p.id != recalled.id)
                .map(|p| p.id.clone()),
            redacted: passage.map(|p| redacted(&p.text)).unwrap_or_default(),
            recall: recalled.recall,
            id: recalled.id,
        });
    }
    ContextExplanation { candidates }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::working_memory::Pruned;

    fn offered(id: &str, text: &str, score: f64) -> Retrieved {
        Retrieved {
            id: id.into(),
            label: String::new(),
            text: text.into(),
            score,
        }
    }

    fn pruned(block: Block, id: &str, reason: PruneReason) -> Pruned {
        Pruned {
            block,
            id: id.into(),
            score: Some(0.1),
            tokens: 10,
            reason,
        }
    }

    #[test]
    fn each_candidate_says_what_became_of_it() {
        let trace = ContextTrace {
            budget: 100,
            total_tokens: 90,
            blocks: Vec::new(),
            profile: Vec::new(),
            facts: vec![offered("f1", "Lives in Lyon", 1.0)],
            knowledge: vec![
                offered("k1", "Refunds take a week", 1.0),
                offered("k2", "Write to [EMAIL]", 0.2),
            ],
            episodic: vec![
                offered("m1", "user: hi\nuser: my card is [CARD]", 1.0),
                offered("m3", "user: the blue one", 0.4),
            ],
            pruned: vec![
                pruned(Block::Knowledge, "k2", PruneReason::LowestScore),
                pruned(Block::Episodic, "m3", PruneReason::BlockLimit),
            ],
            procedures: Vec::new(),
            vector_search_unavailable: None,
        };
        let recalled = |id: &str, placement: Placement| RecalledCandidate {
            id: id.into(),
            placement,
            recall: None,
        };
        let explained = explain_context(
            &trace,
            vec![
                recalled("m1", Placement::Passage("m1".into())),
                recalled("m2", Placement::Passage("m1".into())),
                recalled("m3", Placement::Passage("m3".into())),
                recalled("m4", Placement::Repeat),
            ],
            true,
        );
        let fates: Vec<(&str, CandidateFate, bool)> = explained
            .candidates
            .iter()
            .map(|c| (c.id.as_str(), c.fate, c.kept))
            .collect();
        assert_eq!(
            fates,
            [
                ("f1", CandidateFate::Kept, true),
                ("k1", CandidateFate::Kept, true),
                ("k2", CandidateFate::OverBudget, false),
                ("m1", CandidateFate::Kept, true),
                ("m2", CandidateFate::Joined, true),
                ("m3", CandidateFate::BlockLimit, false),
                ("m4", CandidateFate::Repeat, false),
            ]
        );
        let m2 = &explained.candidates[4];
        assert_eq!((m2.shown_in.as_deref(), m2.score), (Some("m1"), None));
        assert_eq!(m2.redacted, [PiiKind::Card]);
        assert_eq!(explained.candidates[2].redacted, [PiiKind::Email]);
        // Without redaction a placeholder a person wrote is just words.
        let plain = explain_context(&trace, Vec::new(), false);
        assert!(plain.candidates.iter().all(|c| c.redacted.is_empty()));
    }
}
