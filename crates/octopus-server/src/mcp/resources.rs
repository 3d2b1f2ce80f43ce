//! The resources: episodes (a past conversation, with its summary and
//! messages) and knowledge documents (an agent's document, whole), as text
//! a model can read.
//!
//! - `octopus://episodes/{episode_id}`
//! - `octopus://agents/{agent_id}/documents/{source}`, the source
//!   percent-encoded (a source is often a path);
//! - `octopus://agents/{agent_id}/users/{user_id}/profile`, the user id
//!   percent-encoded: what holds about the user now.

use std::fmt::Write as _;

use octopus_core::episode::EpisodeFilter;
use octopus_core::page::Page;
use octopus_core::{AgentId, EpisodeId, Error as DomainError, TenantId};
use octopus_engine::Octopus;
use rmcp::ErrorData;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};

use super::engine_error;

const EPISODES: &str = "octopus://episodes/";
const AGENTS: &str = "octopus://agents/";
/// How many of the newest episodes, of the agents, and of each agent's
/// documents a listing shows, so that one listing costs a bounded number of
/// reads; the templates reach every one.
const LISTED: u32 = 50;

pub(super) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{EPISODES}{{episode_id}}"), "episode")
            .with_description("A past conversation: its summary, key facts and messages.")
            .with_mime_type("text/plain"),
        ResourceTemplate::new(
            format!("{AGENTS}{{agent_id}}/documents/{{source}}"),
            "document",
        )
        .with_description("A document of an agent's knowledge, whole (source percent-encoded).")
        .with_mime_type("text/plain"),
        ResourceTemplate::new(
            format!("{AGENTS}{{agent_id}}/users/{{user_id}}/profile"),
            "profile",
        )
        .with_description(
            "What holds about a user now: their instructions, preferences and facts, and their recent conversations (user id percent-encoded).",
        )
        .with_mime_type("text/plain"),
    ]
}

/// The tenant's newest episodes and its agents' documents.
pub(super) async fn list(octopus: &Octopus, tenant: TenantId) -> Result<Vec<Resource>, ErrorData> {
    let page = Page {
        limit: LISTED,
        offset: 0,
    };
    let filter = EpisodeFilter {
        page,
        ..EpisodeFilter::default()
    };
    let agents = octopus.all_agents(tenant).await.map_err(engine_error)?;
    let agent_name = |id: AgentId| {
        agents
            .iter()
            .find(|a| a.id == id)
            .map_or_else(|| id.to_string(), |a| a.name.clone())
    };
    let mut resources = Vec::new();
    for episode in octopus
        .list_episodes(tenant, &filter)
        .await
        .map_err(engine_error)?
    {
        let title = episode
            .summary
            .as_deref()
            .map(|s| s.chars().take(80).collect::<String>())
            .unwrap_or_else(|| "(no summary yet)".into());
        resources.push(
            Resource::new(
                format!("{EPISODES}{}", episode.id),
                format!("episode {}", episode.id),
            )
            .with_title(format!(
                "{} with {}, {}: {title}",
                episode.user_id,
                agent_name(episode.agent_id),
                episode.started_at.format("%Y-%m-%d")
            ))
            .with_mime_type("text/plain"),
        );
    }
    for agent in agents.iter().take(LISTED as usize) {
        for document in octopus
            .list_documents(tenant, agent.id, page)
            .await
            .map_err(engine_error)?
        {
            resources.push(
                Resource::new(
                    format!(
                        "{AGENTS}{}/documents/{}",
                        agent.id,
                        encode(&document.source)
                    ),
                    document.source.clone(),
                )
                .with_title(format!("{} ({}'s knowledge)", document.source, agent.name))
                .with_mime_type("text/plain"),
            );
        }
    }
    Ok(resources)
}

pub(super) async fn read(
    octopus: &Octopus,
    tenant: TenantId,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let text = if let Some(id) = uri.strip_prefix(EPISODES) {
        let id: EpisodeId = id.parse().map_err(|_| unknown(uri))?;
        episode_text(octopus, tenant, id).await?
    } else if let Some((agent, user)) = uri
        .strip_prefix(AGENTS)
        .and_then(|rest| rest.strip_suffix("/profile"))
        .and_then(|rest| rest.split_once("/users/"))
    {
        let agent: AgentId = agent.parse().map_err(|_| unknown(uri))?;
        let user = decode(user).ok_or_else(|| unknown(uri))?;
        let profile = octopus
            .user_profile(tenant, agent, &user)
            .await
            .map_err(engine_error)?;
        profile_text(&profile)
    } else if let Some(rest) = uri.strip_prefix(AGENTS) {
        let (agent, source) = rest.split_once("/documents/").ok_or_else(|| unknown(uri))?;
        let agent: AgentId = agent.parse().map_err(|_| unknown(uri))?;
        let source = decode(source).ok_or_else(|| unknown(uri))?;
        let chunks = octopus
            .read_document(tenant, agent, &source)
            .await
            .map_err(engine_error)?;
        chunks
            .iter()
            .map(|c| c.content.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    } else {
        return Err(unknown(uri));
    };
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type("text/plain"),
    ]))
}

async fn episode_text(
    octopus: &Octopus,
    tenant: TenantId,
    id: EpisodeId,
) -> Result<String, ErrorData> {
    let found = octopus
        .get_episode(tenant, id)
        .await
        .map_err(engine_error)?;
    let episode = &found.episode;
    let mut text = format!(
        "Episode {} of conversation {}: user {}, agent {}, started {}{}.\n",
        episode.id,
        episode.conversation_id,
        episode.user_id,
        episode.agent_id,
        episode.started_at.format("%Y-%m-%d %H:%M UTC"),
        episode
            .ended_at
            .map(|end| format!(", ended {}", end.format("%Y-%m-%d %H:%M UTC")))
            .unwrap_or_else(|| ", still open".into()),
    );
    if let Some(summary) = &episode.summary {
        let _ = writeln!(text, "\nSummary: {summary}");
    }
    if !episode.key_facts.is_empty() {
        let _ = writeln!(text, "\nKey facts:");
        for fact in &episode.key_facts {
            let _ = writeln!(text, "- {fact}");
        }
    }
    let _ = writeln!(text, "\nMessages:");
    for message in &found.messages {
        let content = message
            .redacted_content
            .clone()
            .or_else(|| message.content.as_ref().map(|c| c.text()))
            .unwrap_or_default();
        let _ = writeln!(
            text,
            "[{} {}] {}",
            message.timestamp.format("%Y-%m-%d %H:%M"),
            message.role,
            content
        );
    }
    Ok(text)
}

/// A profile as a model reads it: headed lists, a line each.
fn profile_text(profile: &octopus_engine::UserProfile) -> String {
    let mut text = format!("What holds about {} now.\n", profile.user_id);
    if let Some(activity) = &profile.activity {
        let _ = writeln!(
            text,
            "{} conversations ({} messages) since {}, the last on {}.",
            activity.conversations,
            activity.messages,
            activity.first_seen_at.format("%Y-%m-%d"),
            activity.last_active_at.format("%Y-%m-%d")
        );
    }
    if let Some(summary) = &profile.summary {
        let _ = writeln!(text, "\n{}", summary.text);
    }
    let mut section = |heading: &str, facts: &[octopus_engine::ProfileFact]| {
        if facts.is_empty() {
            return;
        }
        let _ = writeln!(text, "\n{heading}");
        for fact in facts {
            let _ = writeln!(
                text,
                "  - {} (since {})",
                fact.text,
                fact.since.format("%Y-%m-%d")
            );
        }
    };
    section("Instructions", &profile.instructions);
    section("Preferences", &profile.preferences);
    for group in &profile.facts {
        section(
            group.category.as_deref().unwrap_or("Other facts"),
            &group.facts,
        );
    }
    if !profile.recent_episodes.is_empty() {
        let _ = writeln!(text, "\nRecent conversations");
        for line in &profile.recent_episodes {
            let _ = writeln!(
                text,
                "  {}  {} (octopus://episodes/{})",
                line.started_at.format("%Y-%m-%d"),
                line.summary,
                line.episode_id
            );
        }
    }
    text
}

fn unknown(uri: &str) -> ErrorData {
    engine_error(DomainError::invalid(
        "uri",
        format!(
            "`{uri}` is not an Octopus resource (octopus://episodes/{{id}}, octopus://agents/{{id}}/documents/{{source}} or octopus://agents/{{id}}/users/{{user_id}}/profile)"
        ),
    ))
}

/// Percent-encodes everything but unreserved characters (RFC 3986).
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = std::str::from_utf8(bytes.get(index + 1..index + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_survives_encoding_into_a_uri() {
        for source in ["handbook.md", "docs/hr/leave policy.md", "ünïcode?#&.txt"] {
            let encoded = encode(source);
            assert!(
                !encoded.contains('/') && !encoded.contains(' '),
                "{encoded}"
            );
            assert_eq!(decode(&encoded).as_deref(), Some(source));
        }
        assert_eq!(decode("bad%2"), None);
        assert_eq!(decode("bad%zz"), None);
    }
}
