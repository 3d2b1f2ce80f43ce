//! Episode summaries by the agent's model: at close, an episode of
//! more than two messages gets a summary of about 200 tokens and key facts
//! from the agent's `summary_model` (or its model). The memory worker asks
//! for them, never a request; while no model can write one (no key, the
//! provider down), an extractive summary stands in and the model is asked
//! again later.

use octopus_core::agent::Agent;
use octopus_core::chat::ChatPurpose;
use octopus_core::chat::{ChatError, ChatRequest, Fault};
use octopus_core::episode::{EpisodeSummary, EpisodeWithMessages, MAX_KEY_FACT_CHARS};
use octopus_core::message::Role;
use octopus_core::summary::SUMMARY_TOKENS;
use octopus_core::tokens::TokenCounter;
use octopus_core::working_memory::ChatMessage;
use serde::Deserialize;

use crate::octopus::Octopus;

/// Most key facts kept from one summary.
pub(crate) const MAX_MODEL_KEY_FACTS: usize = 20;
/// The transcript sent for a summary keeps its last this many characters
/// (about 12,000 tokens): the end of a long session is what it settled.
const MAX_TRANSCRIPT_CHARS: usize = 48_000;

const INSTRUCTIONS: &str = "You write the long-term memory of an assistant. Read the conversation \
between a user and the assistant below and answer with one JSON object and nothing else: \
{\"summary\": \"...\", \"key_facts\": [\"...\"]}. summary: at most 150 words, in the third person: \
what the user wanted, what was found or decided, what is left open. key_facts: up to 10 short, \
self-contained facts worth remembering in later conversations (the user's preferences, names, \
dates, numbers, commitments), each under 20 words; an empty list when there are none.";

impl Octopus {
    /// Asks the agent's summary model for a summary and key facts, with
    /// each key fact's category (in the order of `key_facts`) when the agent
    /// files facts under categories.
    pub(crate) async fn summarise_with_model(
        &self,
        agent: &Agent,
        episode: &EpisodeWithMessages,
    ) -> Result<ModelSummary, ChatError> {
        let model = self.chat.for_agent(agent, ChatPurpose::Summary)?;
        let request = summary_request(episode, agent);
        let reply = model.chat(&request, None).await?;
        parse_summary(&reply.text, self.tokens.as_ref()).ok_or_else(|| {
            ChatError::new(
                model.provider(),
                Fault::Provider,
                format!(
                    "{} answered without the JSON summary asked for: {}",
                    model.model(),
                    octopus_core::excerpt(&reply.text)
                ),
            )
        })
    }
}

/// The instructions (with the agent's own on what to remember, and its
/// categories), then the transcript with its tool calls (redacted where the
/// agent says so), its latest part when it is long.
fn summary_request(episode: &EpisodeWithMessages, agent: &Agent) -> ChatRequest {
    let transcript = latest_transcript(episode, agent);
    ChatRequest {
        messages: vec![
            ChatMessage::new(
                Role::System,
                guided(
                    INSTRUCTIONS,
                    agent.memory.fact_instructions.as_deref(),
                    &agent.memory.fact_categories,
                ),
            ),
            ChatMessage::new(Role::User, format!("Conversation:\n{transcript}")),
        ],
        tools: Vec::new(),
    }
}

/// The transcript of `episode` with its tool calls (redacted where the
/// agent says so), its latest part when it is long.
pub(crate) fn latest_transcript(episode: &EpisodeWithMessages, agent: &Agent) -> String {
    let transcript = super::transcript::transcript(episode, agent.memory.pii.redacts_outgoing());
    let skip = transcript
        .chars()
        .count()
        .saturating_sub(MAX_TRANSCRIPT_CHARS);
    transcript.chars().skip(skip).collect()
}

/// Instructions that ask for facts (`base`), with the categories each fact
/// is filed under, when the agent names any, and the agent owner's own on
/// what to keep and leave out, which take precedence where they disagree.
pub(crate) fn guided(base: &str, fact_instructions: Option<&str>, categories: &[String]) -> String {
    let mut text = base.to_owned();
    if !categories.is_empty() {
        text.push_str(&format!(
            "\n\nWrite each fact as {{\"text\": \"...\", \"category\": \"...\"}}, its category \
             the one of these that fits it best: {}.",
            categories.join(", ")
        ));
    }
    if let Some(own) = fact_instructions {
        text.push_str(&format!(
            "\n\nThe assistant's owner says what to keep as facts and what never \
             to keep; follow it over the guidance above:\n{own}"
        ));
    }
    text
}

/// A model's summary, with the category it gave each key fact (in the
/// order of `key_facts`; `None` where it gave none).
pub(crate) struct ModelSummary {
    pub summary: EpisodeSummary,
    pub categories: Vec<Option<String>>,
}

#[derive(Deserialize)]
struct Answer {
    summary: String,
    #[serde(default)]
    key_facts: Vec<serde_json::Value>,
}

/// The JSON object in a model's answer (which may wrap it in prose or a code
/// fence), held to the summary's bounds: about 200 tokens, at most
/// [`MAX_MODEL_KEY_FACTS`] facts of bounded length, each a string or a
/// `{"text", "category"}` object. `None` when there is none.
pub(crate) fn parse_summary(text: &str, tokens: &dyn TokenCounter) -> Option<ModelSummary> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    let answer: Answer = serde_json::from_str(text.get(start..=end)?).ok()?;
    let summary = clip_to_tokens(answer.summary.trim(), SUMMARY_TOKENS, tokens);
    if summary.is_empty() {
        return None;
    }
    let (key_facts, categories) = read_facts(answer.key_facts, MAX_MODEL_KEY_FACTS);
    Some(ModelSummary {
        summary: EpisodeSummary {
            summary,
            key_facts,
            embedding: None,
        },
        categories,
    })
}

/// The facts of a model's answer, each a string or a `{"text", "category"}`
/// object, with their categories (in lower case; `None` where it gave none):
/// at most `most`, each of bounded length, the empty and the unreadable left
/// out.
pub(crate) fn read_facts(
    values: Vec<serde_json::Value>,
    most: usize,
) -> (Vec<String>, Vec<Option<String>>) {
    values
        .into_iter()
        .filter_map(|fact| {
            let (text, category) = match &fact {
                serde_json::Value::String(text) => (text.as_str(), None),
                serde_json::Value::Object(fields) => (
                    fields.get("text")?.as_str()?,
                    fields
                        .get("category")
                        .and_then(|c| c.as_str())
                        .map(|c| c.trim().to_lowercase()),
                ),
                _ => return None,
            };
            let text = text.trim();
            (!text.is_empty()).then(|| (text.chars().take(MAX_KEY_FACT_CHARS).collect(), category))
        })
        .take(most)
        .unzip()
}

/// `text` cut at a word boundary to at most `limit` tokens.
fn clip_to_tokens(text: &str, limit: u32, tokens: &dyn TokenCounter) -> String {
    if tokens.count(text) <= limit {
        return text.to_owned();
    }
    let mut kept = String::new();
    for word in text.split_inclusive(char::is_whitespace) {
        if tokens.count(&format!("{kept}{word}")) > limit {
            break;
        }
        kept.push_str(word);
    }
    kept.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use octopus_core::tokens::ApproximateTokenCounter;

    #[test]
    fn the_json_is_found_in_a_fenced_answer_and_held_to_its_bounds() {
        let answer = "Here you go:\n```json\n{\"summary\": \"Dana asked about a refund.\", \
                      \"key_facts\": [\"Dana's order is 1182\", \"\", 7, \"She prefers email\"]}\n```";
        let summary = parse_summary(answer, &ApproximateTokenCounter)
            .unwrap()
            .summary;
        assert_eq!(summary.summary, "Dana asked about a refund.");
        assert_eq!(
            summary.key_facts,
            ["Dana's order is 1182", "She prefers email"]
        );
        assert!(parse_summary("I cannot do that.", &ApproximateTokenCounter).is_none());
        assert!(parse_summary("{\"summary\": \"  \"}", &ApproximateTokenCounter).is_none());
        let long = format!("{{\"summary\": \"{}\"}}", "word ".repeat(2000));
        let clipped = parse_summary(&long, &ApproximateTokenCounter)
            .unwrap()
            .summary;
        assert!(ApproximateTokenCounter.count(&clipped.summary) <= SUMMARY_TOKENS);
        assert!(clipped.summary.len() > 100);
    }

    #[test]
    fn key_facts_may_come_with_their_category() {
        let answer = r#"{"summary": "Dana ordered.", "key_facts": [
            {"text": "Dana is vegetarian", "category": "Preference"},
            "Dana's order is 1182", {"category": "plan"}, {"text": "Dana flies on Monday"}]}"#;
        let parsed = parse_summary(answer, &ApproximateTokenCounter).unwrap();
        assert_eq!(
            parsed.summary.key_facts,
            [
                "Dana is vegetarian",
                "Dana's order is 1182",
                "Dana flies on Monday"
            ]
        );
        assert_eq!(
            parsed.categories,
            [Some("preference".to_owned()), None, None],
            "a category as given, in lower case; a fact without text is no fact"
        );
        let asked = guided(INSTRUCTIONS, None, &["preference".into(), "plan".into()]);
        assert!(
            asked.ends_with("fits it best: preference, plan."),
            "{asked}"
        );
        assert_eq!(guided(INSTRUCTIONS, None, &[]), INSTRUCTIONS);
    }
}
