//! A user's profile with an agent: what holds about them now, in one view,
//! assembled from what is stored when it is asked for. Their standing
//! instructions and preferences; every other current fact, grouped by
//! category, each with when it became true; the newest past conversations'
//! summaries, a line each; and how much they have talked. Nothing of it is
//! kept apart, so a corrected fact shows its new text at once, a deleted one
//! is gone, and a forgotten user has no profile at all.

use octopus_core::agent::Agent;
use octopus_core::conversation::{UserActivity, validate_user_id};
use octopus_core::episode::{Episode, EpisodeFilter};
use octopus_core::fact::{Fact, FactFilter, FactSource};
use octopus_core::page::Page;
use octopus_core::profile_summary::ProfileSummary;
use octopus_core::standing_requests::{INSTRUCTION, PREFERENCE};
use octopus_core::{AgentId, ConversationId, EpisodeId, FactId, ObjectKind, TenantId};

use crate::error::Result;
use crate::octopus::Octopus;

/// Past conversations whose summaries a profile shows.
pub const PROFILE_EPISODES: usize = 5;
/// Most characters of an episode's line.
const EPISODE_LINE_CHARS: usize = 200;
/// Episodes read to find [`PROFILE_EPISODES`] with a summary (the newest
/// may still be open, or wait for its summary).
const EPISODES_READ: u32 = 20;

/// What holds about one user of one agent.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct UserProfile {
    pub agent_id: AgentId,
    pub user_id: String,
    /// How much they have talked; absent for a user known only by facts a
    /// person added.
    pub activity: Option<UserActivity>,
    /// What they asked for every later turn ("always answer in French").
    pub instructions: Vec<ProfileFact>,
    /// What they said they prefer.
    pub preferences: Vec<ProfileFact>,
    /// Every other fact that holds, by category: the agent's categories in
    /// its order, then any other, then the facts without one.
    pub facts: Vec<FactGroup>,
    /// The newest past conversations with a summary, newest first.
    pub recent_episodes: Vec<EpisodeLine>,
    /// The paragraph the agent's summary model wrote about them
    /// (`memory.profile_summary`), while every fact it was written from
    /// holds.
    pub summary: Option<ProfileSummary>,
}

/// One fact that holds.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ProfileFact {
    pub id: FactId,
    pub text: String,
    /// When it became true.
    pub since: octopus_core::Timestamp,
    /// Whether a model learned it or a person wrote it.
    pub source: FactSource,
    /// Who wrote this version (`model`, `patterns`, or a key's name).
    pub changed_by: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// The facts of one category, the newest first.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct FactGroup {
    /// Absent for the facts filed under none.
    pub category: Option<String>,
    pub facts: Vec<ProfileFact>,
}

/// A past conversation in a line.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct EpisodeLine {
    pub episode_id: EpisodeId,
    pub conversation_id: ConversationId,
    pub started_at: octopus_core::Timestamp,
    /// The summary's first sentence, within 200 characters.
    pub summary: String,
}

impl Octopus {
    /// The profile of `user_id` with `agent`; `user_not_found` when the
    /// agent has neither a live conversation nor a fact of theirs.
    pub async fn user_profile(
        &self,
        tenant: TenantId,
        agent: AgentId,
        user_id: &str,
    ) -> Result<UserProfile> {
        validate_user_id(user_id)?;
        let agent = self.cached_agent(tenant, agent).await?;
        let facts = current_facts(agent.id, user_id, Page::MAX_LIMIT);
        let episodes = recent_filter(agent.id, user_id);
        // Four reads, at once: each a read connection of its own.
        let (activity, facts, episodes, summary) = tokio::try_join!(
            self.store.user_activity(tenant, agent.id, user_id),
            self.all_current_facts(tenant, facts),
            self.store.list_episodes(tenant, &episodes),
            self.store.profile_summary(tenant, agent.id, user_id),
        )?;
        if activity.is_none() && facts.is_empty() {
            return Err(octopus_core::Error::not_found(ObjectKind::User, user_id).into());
        }
        let holding: std::collections::HashSet<FactId> = facts.iter().map(|f| f.id).collect();
        let summary = summary.filter(|summary| summary.stands(&holding));
        if summary.is_none() && agent.memory.profile_summary {
            // None yet, or one a change of facts has outdated.
            self.write_profile_summary_in_background(tenant, agent.id, user_id);
        }
        let mut profile = assemble(&agent, user_id, activity, facts, &episodes);
        profile.summary = summary;
        Ok(profile)
    }

    /// Every fact of the user that holds, page by page.
    async fn all_current_facts(
        &self,
        tenant: TenantId,
        mut filter: FactFilter,
    ) -> octopus_core::Result<Vec<Fact>> {
        let mut facts = Vec::new();
        loop {
            let page = self.store.list_facts(tenant, &filter).await?;
            let full = page.len() == filter.page.limit as usize;
            facts.extend(page);
            if !full {
                return Ok(facts);
            }
            filter.page.offset += filter.page.limit;
        }
    }
}

fn assemble(
    agent: &Agent,
    user_id: &str,
    activity: Option<UserActivity>,
    facts: Vec<Fact>,
    episodes: &[Episode],
) -> UserProfile {
    let mut instructions = Vec::new();
    let mut preferences = Vec::new();
    let mut groups: Vec<FactGroup> = Vec::new();
    // The store lists facts newest first; each group keeps that order.
    for fact in facts {
        let category = fact.category.clone();
        let kept = ProfileFact {
            id: fact.id,
            text: fact.text,
            since: fact.valid_from,
            source: fact.source,
            changed_by: fact.changed_by,
            key: fact.key,
        };
        match category.as_deref() {
            Some(INSTRUCTION) => instructions.push(kept),
            Some(PREFERENCE) => preferences.push(kept),
            _ => match groups.iter_mut().find(|group| group.category == category) {
                Some(group) => group.facts.push(kept),
                None => groups.push(FactGroup {
                    category,
                    facts: vec![kept],
                }),
            },
        }
    }
    let place = |group: &FactGroup| match &group.category {
        Some(category) => match agent
            .memory
            .fact_categories
            .iter()
            .position(|c| c == category)
        {
            Some(index) => (0, index, category.clone()),
            None => (1, 0, category.clone()),
        },
        None => (2, 0, String::new()),
    };
    groups.sort_by_key(place);
    let recent_episodes = recent_lines(episodes);
    UserProfile {
        agent_id: agent.id,
        user_id: user_id.to_owned(),
        activity,
        instructions,
        preferences,
        facts: groups,
        recent_episodes,
        summary: None,
    }
}

/// The newest past conversations with a summary, a line each.
pub(crate) fn recent_lines(episodes: &[Episode]) -> Vec<EpisodeLine> {
    episodes
        .iter()
        .filter_map(|episode| {
            let summary = first_sentence(episode.summary.as_deref()?)?;
            Some(EpisodeLine {
                episode_id: episode.id,
                conversation_id: episode.conversation_id,
                started_at: episode.started_at,
                summary,
            })
        })
        .take(PROFILE_EPISODES)
        .collect()
}

/// The user's facts that hold, the newest first, `limit` a page.
pub(crate) fn current_facts(agent: AgentId, user_id: &str, limit: u32) -> FactFilter {
    FactFilter {
        agent_id: agent,
        user_id: user_id.to_owned(),
        include_replaced: false,
        categories: Vec::new(),
        key: None,
        page: Page { limit, offset: 0 },
    }
}

/// The filter of the episodes [`recent_lines`] is read from.
pub(crate) fn recent_filter(agent: AgentId, user_id: &str) -> EpisodeFilter {
    EpisodeFilter {
        agent_id: Some(agent),
        user_id: Some(user_id.to_owned()),
        page: Page {
            limit: EPISODES_READ,
            offset: 0,
        },
        ..EpisodeFilter::default()
    }
}

/// A summary's first sentence (or first line), within the line's length.
fn first_sentence(summary: &str) -> Option<String> {
    let line = summary
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())?;
    let end = line
        .char_indices()
        .find(|(i, c)| matches!(c, '.' | '!' | '?') && line[i + c.len_utf8()..].starts_with(' '))
        .map_or(line.len(), |(i, c)| i + c.len_utf8());
    octopus_core::words_within(&line[..end], EPISODE_LINE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_episode_line_is_its_summarys_first_sentence() {
        assert_eq!(
            first_sentence("Ana booked Lisbon for May. She asked about Sintra.").as_deref(),
            Some("Ana booked Lisbon for May.")
        );
        assert_eq!(
            first_sentence("\n  Version 2.5 shipped on Monday\nThen more").as_deref(),
            Some("Version 2.5 shipped on Monday")
        );
        let long = "word ".repeat(100);
        let line = first_sentence(&long).unwrap();
        assert!(
            line.ends_with('…') && line.chars().count() <= EPISODE_LINE_CHARS,
            "{line}"
        );
        assert_eq!(first_sentence("  \n "), None);
    }
}
