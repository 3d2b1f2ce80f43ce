//! A paragraph about a user, written by their agent's summary model from
//! what holds about them (their current facts, their newest conversations'
//! summaries) when the agent's `memory.profile_summary` asks for one, and
//! written again by the memory worker as they talk. It names the facts it
//! was written from: it stands while each of them still holds, so that a
//! corrected or deleted fact never speaks through it.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::{AgentId, FactId, Timestamp};

/// Most characters of a paragraph kept; a model that writes more is cut at
/// a sentence within it.
pub const MAX_PROFILE_SUMMARY_CHARS: usize = 1_200;

/// Most facts a paragraph is written from: the user's standing requests,
/// then their newest other facts.
pub const PROFILE_SUMMARY_FACTS: usize = 100;

/// What the summary model is asked.
pub const PROFILE_SUMMARY_INSTRUCTIONS: &str = "You write a short profile of a user for the \
assistant that talks with them. From the facts and past conversations below, write one \
paragraph of at most 80 words, in the third person, saying who the user is, what matters to \
them now, and how they like to be answered. Use only what the facts and conversations say; \
where they disagree, the newer wins. Answer with the paragraph alone.";

/// The paragraph written about one user of one agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ProfileSummary {
    pub agent_id: AgentId,
    pub user_id: String,
    pub text: String,
    /// The facts it was written from.
    pub fact_ids: Vec<FactId>,
    pub written_at: chrono::DateTime<chrono::Utc>,
}

impl ProfileSummary {
    /// Whether it still stands: every fact it was written from holds.
    pub fn stands(&self, holding: &HashSet<FactId>) -> bool {
        self.fact_ids.iter().all(|id| holding.contains(id))
    }
}

/// What the model is given: the facts, a line each with since when each
/// holds, then the past conversations, a line each.
pub fn profile_summary_prompt(
    user_id: &str,
    facts: &[(String, Timestamp)],
    conversations: &[(String, Timestamp)],
) -> String {
    let day = |at: &Timestamp| at.format("%Y-%m-%d").to_string();
    let mut prompt = format!("The user: {user_id}\n\nFacts that hold now:\n");
    for (text, since) in facts {
        prompt.push_str(&format!("- {text} (since {})\n", day(since)));
    }
    if !conversations.is_empty() {
        prompt.push_str("\nTheir newest conversations:\n");
        for (summary, at) in conversations {
            prompt.push_str(&format!("- {}: {summary}\n", day(at)));
        }
    }
    prompt
}

/// The paragraph in a model's reply: its text, trimmed, within
/// [`MAX_PROFILE_SUMMARY_CHARS`] (cut after the last sentence that fits);
/// `None` for an empty reply.
pub fn read_profile_summary(reply: &str) -> Option<String> {
    let text = reply.trim();
    if text.is_empty() {
        return None;
    }
    if text.chars().count() <= MAX_PROFILE_SUMMARY_CHARS {
        return Some(text.to_owned());
    }
    let within: String = text.chars().take(MAX_PROFILE_SUMMARY_CHARS).collect();
    let end = within
        .rfind(['.', '!', '?'])
        .map_or(within.len(), |at| at + 1);
    Some(within[..end].trim_end().to_owned())
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn a_summary_stands_while_each_of_its_facts_holds() {
        let (a, b) = (FactId::new(), FactId::new());
        let summary = ProfileSummary {
            agent_id: AgentId::new(),
            user_id: "ann".into(),
            text: "Ann lives in Lyon.".into(),
            fact_ids: vec![a, b],
            written_at: chrono::Utc::now(),
        };
        assert!(summary.stands(&HashSet::from([a, b, FactId::new()])));
        assert!(!summary.stands(&HashSet::from([a])), "b was corrected");
    }

    #[test]
    fn the_prompt_dates_each_line_and_a_long_reply_ends_at_a_sentence() {
        let at = chrono::Utc.with_ymd_and_hms(2026, 3, 2, 10, 0, 0).unwrap();
        let prompt = profile_summary_prompt(
            "ann",
            &[("Ann lives in Lyon".into(), at)],
            &[("Ann planned a trip.".into(), at)],
        );
        assert!(
            prompt.contains("- Ann lives in Lyon (since 2026-03-02)\n"),
            "{prompt}"
        );
        assert!(
            prompt.contains("- 2026-03-02: Ann planned a trip.\n"),
            "{prompt}"
        );
        assert_eq!(read_profile_summary("  \n"), None);
        let long = "Ann likes tea. ".repeat(200);
        let read = read_profile_summary(&long).unwrap();
        assert!(read.chars().count() <= MAX_PROFILE_SUMMARY_CHARS);
        assert!(read.ends_with("tea."), "{read}");
    }
}
