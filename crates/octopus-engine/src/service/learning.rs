//! Facts learned during a session: every `memory.learn_every_messages` user
//! messages the append queues a learning of the open episode, and the memory
//! worker asks the agent's summary model for the facts the messages since
//! the last learning state. They are decided against the user's related
//! facts as a close's are ([`super::facts`]), and stored only if no other
//! learning read that window meanwhile, so a window is learned once.

use octopus_core::agent::Agent;
use octopus_core::chat::ChatPurpose;
use octopus_core::chat::{ChatError, ChatRequest, Fault};
use octopus_core::episode::EpisodeWithMessages;
use octopus_core::fact::MAX_FACTS_PER_CLOSE;
use octopus_core::memory_jobs::LearnedFacts;
use octopus_core::message::Role;
use octopus_core::working_memory::ChatMessage;
use serde::Deserialize;

use super::summaries::{guided, latest_transcript, read_facts};
use crate::octopus::Octopus;

const INSTRUCTIONS: &str = "You keep the long-term memory of an assistant about its user. Read \
the latest messages of a conversation below and answer with one JSON object and nothing else: \
{\"facts\": [\"...\"]}. facts: up to 10 short, self-contained facts about the user that these \
messages state and that are worth remembering in later conversations (the user's preferences, \
names, dates, numbers, commitments), each under 20 words; an empty list when there are none.";

/// The messages of `episode` no learning has read yet: after its
/// `facts_learned_through`. `None` when none of them is the user's, since
/// facts about a user come from what the user says.
pub(crate) fn unlearned(episode: &EpisodeWithMessages) -> Option<EpisodeWithMessages> {
    let from = episode.episode.facts_learned_through;
    let messages: Vec<_> = episode
        .messages
        .iter()
        .filter(|m| m.ordinal >= from)
        .cloned()
        .collect();
    messages
        .iter()
        .any(|m| m.role == Role::User)
        .then(|| EpisodeWithMessages {
            episode: episode.episode.clone(),
            messages,
        })
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    facts: Vec<serde_json::Value>,
}

impl Octopus {
    /// Asks the agent's summary model for the facts of `window` (the
    /// messages [`unlearned`] returned), and decides them against the user's
    /// facts.
    pub(crate) async fn learn_from_window(
        &self,
        agent: &Agent,
        window: &EpisodeWithMessages,
    ) -> Result<LearnedFacts, ChatError> {
        let model = self.chat.for_agent(agent, ChatPurpose::Summary)?;
        let request = ChatRequest {
            messages: vec![
                ChatMessage::new(
                    Role::System,
                    guided(
                        INSTRUCTIONS,
                        agent.memory.fact_instructions.as_deref(),
                        &agent.memory.fact_categories,
                    ),
                ),
                ChatMessage::new(
                    Role::User,
                    format!("Messages:\n{}", latest_transcript(window, agent)),
                ),
            ],
            tools: Vec::new(),
        };
        let reply = model.chat(&request, None).await?;
        let answer = read_answer(&reply.text).ok_or_else(|| {
            ChatError::new(
                model.provider(),
                Fault::Provider,
                format!(
                    "{} answered without the JSON facts asked for: {}",
                    model.model(),
                    octopus_core::excerpt(&reply.text)
                ),
            )
        })?;
        let (texts, categories) = read_facts(answer.facts, MAX_FACTS_PER_CLOSE);
        let facts = self.learn_facts(agent, window, &texts, &categories).await?;
        let through = window
            .messages
            .last()
            .map_or(window.episode.facts_learned_through, |m| m.ordinal + 1);
        Ok(LearnedFacts {
            episode: window.episode.id,
            from: window.episode.facts_learned_through,
            through,
            facts,
        })
    }
}

/// The JSON object in a model's answer, which may wrap it in prose or a
/// code fence.
fn read_answer(text: &str) -> Option<Answer> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    serde_json::from_str(text.get(start..=end)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_read_through_its_fence_and_without_facts_is_none() {
        let fenced = "Sure:\n```json\n{\"facts\": [\"Dana is vegetarian\"]}\n```";
        assert_eq!(read_answer(fenced).unwrap().facts.len(), 1);
        assert!(read_answer("{}").unwrap().facts.is_empty());
        assert!(read_answer("No facts here.").is_none());
    }
}
