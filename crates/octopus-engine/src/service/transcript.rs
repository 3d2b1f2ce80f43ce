//! An episode as plain text for the model's own work on it (its summary, a
//! proposed procedure): each message as `role: text`, each tool call with its
//! arguments, and each tool result shortened, so that what a tool said (an
//! order "shipped with FedEx") reaches the summary too.

use octopus_core::embedded_text::outgoing_text;
use octopus_core::episode::EpisodeWithMessages;
use octopus_core::message::Role;
use serde_json::Value;

/// The transcript, redacted where the agent's `pii` policy redacting outgoing text says so.
pub(crate) fn transcript(episode: &EpisodeWithMessages, redact: bool) -> String {
    let out = |json: &Value| match redact {
        true => octopus_core::pii::egress_json(json).to_string(),
        false => json.to_string(),
    };
    let mut transcript = String::new();
    for message in &episode.messages {
        let text = outgoing_text(message, redact).unwrap_or_default();
        // A tool message's text is its result, written out below.
        if !text.trim().is_empty() && matches!(message.role, Role::User | Role::Assistant) {
            transcript.push_str(&format!("{}: {}\n", message.role, text.trim()));
        }
        for call in &message.tool_calls {
            match &call.result {
                Some(result) => transcript.push_str(&format!(
                    "tool {} returned{}: {}\n",
                    call.function_name,
                    if call.is_error { " an error" } else { "" },
                    octopus_core::excerpt(&out(result))
                )),
                None => transcript.push_str(&format!(
                    "assistant called tool {} with {}\n",
                    call.function_name,
                    out(&call.arguments)
                )),
            }
        }
    }
    transcript
}
