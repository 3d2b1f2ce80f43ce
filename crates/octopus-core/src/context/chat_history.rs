//! The current episode's messages as the model reads them on the next turn:
//! user and assistant turns, and tool rounds kept whole (an assistant's
//! calls, then each call's result), so that "what did the order lookup
//! say?" can be answered from history.
//!
//! Chat APIs take a tool result only right after the call it answers, and
//! refuse a call that no result follows. So a call without a stored result
//! (the conversation moved on before it was answered) is left out, and so is
//! a result whose call is not in the episode; history never starts inside a
//! round.

use std::collections::HashSet;

use crate::embedded_text::outgoing_text;
use crate::message::{Message, Role, ToolCallRecord};
use crate::working_memory::ChatMessage;

/// A tool result longer than this many characters reaches history cut
/// short, with a marker saying how much was left out.
pub const MAX_TOOL_RESULT_CHARS: usize = 2_000;

/// A stored message as a chat message: its text and an assistant's tool
/// calls' arguments (redacted with `redact`), a tool result's call id.
pub fn chat_message(message: &Message, redact: bool) -> ChatMessage {
    let text = outgoing_text(message, redact).unwrap_or_default();
    let mut chat = ChatMessage::new(message.role, text);
    match message.role {
        Role::Assistant => {
            chat.tool_calls = message
                .tool_calls
                .iter()
                .map(ToolCallRecord::call)
                .collect();
            if redact {
                for call in &mut chat.tool_calls {
                    call.arguments = crate::pii::egress_json(&call.arguments);
                }
            }
        }
        Role::Tool => {
            chat.tool_call_id = message.tool_call_id.clone();
            chat.name = message.name.clone();
        }
        _ => chat.name = message.name.clone(),
    }
    chat
}

/// What an open episode gives the next turn.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    pub messages: Vec<ChatMessage>,
    /// Tool calls made since the last user message that no result answers.
    pub pending: Vec<ToolCallRecord>,
}

/// The calls of the assistant's messages since the last user message that
/// no tool result answers: what the caller still owes the model.
pub fn pending_calls(messages: &[Message]) -> Vec<&ToolCallRecord> {
    let since = match messages.iter().rposition(|m| m.role == Role::User) {
        Some(user) => user + 1,
        None => 0,
    };
    rounds(messages)
        .filter(|round| round.at >= since)
        .flat_map(|round| round.unanswered())
        .collect()
}

/// A message and the tool results stored right after it, which answer its
/// calls. Results are paired with calls by id within the round only: some
/// providers (Ollama) number the calls of each reply from 0, so an id
/// repeats across rounds.
#[derive(Clone, Copy)]
struct Round<'a> {
    at: usize,
    message: &'a Message,
    results: &'a [Message],
}

impl<'a> Round<'a> {
    fn answers(&self, call: &str) -> bool {
        self.results
            .iter()
            .any(|r| r.tool_call_id.as_deref() == Some(call))
    }

    fn unanswered(self) -> impl Iterator<Item = &'a ToolCallRecord> {
        self.message.tool_calls.iter().filter(move |call| {
            self.message.role == Role::Assistant && !self.answers(&call.tool_call_id)
        })
    }
}

/// The episode's messages as rounds, in order; results that follow no
/// message are left out.
fn rounds(messages: &[Message]) -> impl Iterator<Item = Round<'_>> {
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < messages.len() && messages[at].role == Role::Tool {
            at += 1;
        }
        let message = messages.get(at)?;
        let start = at + 1;
        let end = messages[start..]
            .iter()
            .position(|m| m.role != Role::Tool)
            .map_or(messages.len(), |p| start + p);
        let round = Round {
            at,
            message,
            results: &messages[start..end],
        };
        at = end;
        Some(round)
    })
}

/// The episode's `messages` (oldest first) as history: the last `limit`
/// messages of it, system messages left out, long tool results shortened;
/// and the calls still pending.
pub fn history(messages: &[Message], redact: bool, limit: usize) -> History {
    History {
        messages: chat(messages, redact, limit),
        pending: pending_calls(messages).into_iter().cloned().collect(),
    }
}

fn chat(messages: &[Message], redact: bool, limit: usize) -> Vec<ChatMessage> {
    let mut chat = Vec::with_capacity(messages.len());
    for round in rounds(messages) {
        if round.message.role == Role::System {
            continue;
        }
        let mut turn = chat_message(round.message, redact);
        turn.tool_calls.retain(|call| round.answers(&call.id));
        let called: HashSet<String> = turn.tool_calls.iter().map(|c| c.id.clone()).collect();
        if !turn.content.trim().is_empty() || !turn.tool_calls.is_empty() {
            chat.push(turn);
        }
        for result in round.results {
            if result
                .tool_call_id
                .as_ref()
                .is_some_and(|id| called.contains(id))
            {
                let mut result = chat_message(result, redact);
                result.content = shortened(&result.content, MAX_TOOL_RESULT_CHARS);
                chat.push(result);
            }
        }
    }
    let mut start = chat.len().saturating_sub(limit);
    while chat.get(start).is_some_and(|m| m.role == Role::Tool) {
        start += 1;
    }
    chat.split_off(start)
}

/// `text` cut to `limit` characters, with a marker of what was left out.
pub fn shortened(text: &str, limit: usize) -> String {
    let total = text.chars().count();
    if total <= limit {
        return text.to_owned();
    }
    let kept: String = text.chars().take(limit).collect();
    format!("{kept}… [shortened: {} more characters]", total - limit)
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use serde_json::json;

    use super::*;
    use crate::ids::{ConversationId, EpisodeId, MessageId};
    use crate::message::{MessageContent, ToolCallRecord};

    fn message(role: Role, text: &str) -> Message {
        Message {
            id: MessageId::new(),
            episode_id: EpisodeId::new(),
            conversation_id: ConversationId::new(),
            ordinal: 0,
            role,
            content: Some(MessageContent::Text(text.into())),
            name: None,
            tool_call_id: None,
            tool_calls: Vec::new(),
            token_count: 0,
            timestamp: Utc::now(),
            agent_id: None,
            contains_pii: false,
            redacted_content: None,
            embedding_ref: None,
            usage: None,
            created_at: Utc::now(),
        }
    }

    fn call(id: &str) -> ToolCallRecord {
        ToolCallRecord {
            tool_call_id: id.into(),
            function_name: "get_order_status".into(),
            arguments: json!({"order": "ORD-8821"}),
            result: None,
            duration_ms: None,
            is_error: false,
        }
    }

    fn calls(ids: &[&str]) -> Message {
        Message {
            tool_calls: ids.iter().map(|id| call(id)).collect(),
            ..message(Role::Assistant, "")
        }
    }

    fn result(id: &str, text: &str) -> Message {
        Message {
            tool_call_id: Some(id.into()),
            name: Some("get_order_status".into()),
            ..message(Role::Tool, text)
        }
    }

    fn shape(history: &[ChatMessage]) -> Vec<String> {
        history
            .iter()
            .map(
                |m| match (m.role, m.tool_calls.is_empty(), &m.tool_call_id) {
                    (Role::Assistant, false, _) => format!(
                        "calls {}",
                        m.tool_calls
                            .iter()
                            .map(|c| c.id.as_str())
                            .collect::<Vec<_>>()
                            .join(",")
                    ),
                    (Role::Tool, _, Some(id)) => format!("result {id}: {}", m.content),
                    (role, _, _) => format!("{role}: {}", m.content),
                },
            )
            .collect()
    }

    #[test]
    fn a_tool_round_stays_whole_in_history() {
        let messages = [
            message(Role::User, "Where is order 8821?"),
            calls(&["a"]),
            result("a", "shipped with FedEx"),
            message(Role::Assistant, "It shipped with FedEx."),
            message(Role::User, "Thanks"),
        ];
        assert_eq!(
            shape(&chat(&messages, false, 20)),
            [
                "user: Where is order 8821?",
                "calls a",
                "result a: shipped with FedEx",
                "assistant: It shipped with FedEx.",
                "user: Thanks",
            ]
        );
        // Three messages fit: the round is not cut into.
        assert_eq!(
            shape(&chat(&messages, false, 3)),
            ["assistant: It shipped with FedEx.", "user: Thanks"]
        );
        assert_eq!(shape(&chat(&messages, false, 4)).len(), 4);
    }

    #[test]
    fn calls_without_results_and_results_without_calls_are_left_out() {
        let messages = [
            message(Role::User, "Look up two orders"),
            Message {
                content: Some(MessageContent::Text("Checking.".into())),
                ..calls(&["a", "b"])
            },
            result("a", "shipped"),
            result("z", "from nowhere"),
            message(Role::User, "Never mind"),
            calls(&["c"]),
        ];
        let history = history(&messages, false, 20);
        assert_eq!(
            shape(&history.messages),
            [
                "user: Look up two orders",
                "calls a",
                "result a: shipped",
                "user: Never mind"
            ]
        );
        // The call after the last user message is still owed; `b` was left behind.
        let pending: Vec<&str> = history
            .pending
            .iter()
            .map(|c| c.tool_call_id.as_str())
            .collect();
        assert_eq!(pending, ["c"]);
    }

    #[test]
    fn an_id_repeated_across_rounds_pairs_within_its_round() {
        // Ollama numbers each reply's calls from 0.
        let messages = [
            message(Role::User, "Where is order 1?"),
            calls(&["call_0"]),
            result("call_0", "shipped"),
            message(Role::User, "And order 2?"),
            calls(&["call_0"]),
        ];
        let open = history(&messages, false, 20);
        assert_eq!(
            shape(&open.messages),
            [
                "user: Where is order 1?",
                "calls call_0",
                "result call_0: shipped",
                "user: And order 2?"
            ]
        );
        assert_eq!(open.pending.len(), 1, "the second call is still owed");
        let moved_on = [&messages[..], &[message(Role::User, "Never mind")]].concat();
        assert_eq!(
            shape(&chat(&moved_on, false, 20)).last().unwrap(),
            "user: Never mind"
        );
        assert!(history(&moved_on, false, 20).pending.is_empty());
    }

    #[test]
    fn long_results_are_shortened_with_a_marker() {
        let long = "x".repeat(MAX_TOOL_RESULT_CHARS + 10);
        let messages = [
            message(Role::User, "dump"),
            calls(&["a"]),
            result("a", &long),
        ];
        let kept = &chat(&messages, false, 20)[2].content;
        assert!(
            kept.ends_with("… [shortened: 10 more characters]"),
            "{kept}"
        );
        assert_eq!(
            kept.chars().filter(|c| *c == 'x').count(),
            MAX_TOOL_RESULT_CHARS
        );
    }
}
