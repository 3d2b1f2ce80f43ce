//! What of a message or an episode is embedded for recall, and what text
//! leaves Octopus for an embedder: only what the conversation said, redacted
//! as the agent's policy asks.

use crate::message::{ContentPart, Message, MessageContent, Role};

/// Whether a message is queued for embedding: user and assistant turns with
/// text. System injections and tool results are skipped (they are the
/// system's and the tools' words, not the conversation's); the
/// agent's `min_embedding_tokens` then skips very short turns when the job runs.
pub fn worth_embedding(role: Role, content: Option<&MessageContent>) -> bool {
    // On the append path: decided without building the text.
    let said = |text: &str| !text.trim().is_empty();
    matches!(role, Role::User | Role::Assistant)
        && match content {
            Some(MessageContent::Text(text)) => said(text),
            Some(MessageContent::Parts(parts)) => parts
                .iter()
                .any(|part| matches!(part, ContentPart::Text { text } if said(text))),
            None => false,
        }
}

/// The text a message's vector is made from: its speaker's name, when it has
/// one, before its text, so that "what did Caroline say about…" finds her turns.
/// With `redact` (the agent's `pii` policy redacting outgoing text), the redacted content when there is one.
pub fn embedded_text(message: &Message, redact: bool) -> String {
    let text = outgoing_text(message, redact).unwrap_or_default();
    match &message.name {
        Some(name) => format!("{name}: {text}"),
        None => text,
    }
}

/// A message's text as it may leave for a model or an embedder: with
/// `redact` (the agent's `pii` policy redacting outgoing text), the redacted content, or the content
/// redacted now when none was stored; the content's text otherwise.
pub fn outgoing_text(message: &Message, redact: bool) -> Option<String> {
    let original = message.content.as_ref().map(|c| c.text());
    match (redact, &message.redacted_content) {
        (true, Some(redacted)) => Some(redacted.clone()),
        // Stored before detection, or with detection off: redacted on the
        // way out, so nothing detected ever leaves.
        (true, None) => original.map(|text| crate::pii::egress(&text).into_owned()),
        (false, _) => original,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_tool_and_empty_messages_are_not_embedded() {
        let text = |t: &str| Some(MessageContent::Text(t.into()));
        assert!(worth_embedding(
            Role::User,
            text("I adopted a dog last week").as_ref()
        ));
        assert!(worth_embedding(Role::Assistant, text("ok").as_ref()));
        assert!(!worth_embedding(Role::User, text("   ").as_ref()));
        assert!(!worth_embedding(Role::User, None));
        let image_only = MessageContent::Parts(vec![ContentPart::ImageUrl {
            image_url: crate::message::ImageUrl {
                url: "https://x/y.png".into(),
                detail: None,
            },
        }]);
        assert!(!worth_embedding(Role::User, Some(&image_only)));
        assert!(!worth_embedding(
            Role::System,
            text("Remember the user's name is Ana").as_ref()
        ));
        assert!(!worth_embedding(
            Role::Tool,
            text("{\"status\": \"shipped\"}").as_ref()
        ));
    }
}
