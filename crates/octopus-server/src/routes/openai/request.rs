//! The body of `POST /v1/chat/completions` as Octopus reads it. An OpenAI
//! client sends the whole conversation every time, and Octopus uses only its
//! end (the user's new message, or the tool results after the model's last
//! answer). Each message is still read and checked, but only the end is
//! kept, so a request holds about as much memory as its body, however many
//! messages it lists; lists and parts are bounded while they are read.

use std::fmt;
use std::marker::PhantomData;

use octopus_core::chat::ToolSpec;
use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use utoipa::ToSchema;

/// Most messages a completion's list may hold.
pub const MAX_MESSAGES: usize = 100_000;
/// Most tool results that may end the list (the results of one reply's
/// calls).
pub(crate) const MAX_TRAILING_TOOL_RESULTS: usize = 1024;
/// Most parts one message's content may have.
pub const MAX_CONTENT_PARTS: usize = 1024;

/// A chat completion request in OpenAI's shape. Fields not listed are
/// accepted and ignored.
#[derive(Deserialize, ToSchema)]
pub(crate) struct ChatCompletionRequest {
    /// The agent: its name, or its id.
    pub model: String,
    /// The conversation as the client holds it; only its end is new.
    #[schema(value_type = Vec<ChatMessage>)]
    pub messages: ClientList,
    /// The user; or send the `x-octopus-user` header.
    pub user: Option<String>,
    /// Tools the model may call.
    #[serde(default, deserialize_with = "at_most_tools")]
    pub tools: Vec<ChatTool>,
    /// Answer with `chat.completion.chunk` server-sent events, ending with
    /// `data: [DONE]`.
    #[serde(default)]
    pub stream: bool,
    pub stream_options: Option<StreamOptions>,
}

#[derive(Deserialize, ToSchema)]
pub(crate) struct StreamOptions {
    /// Send usage in a last chunk with no choices, as OpenAI does; otherwise
    /// usage rides on the chunk with the finish reason.
    #[serde(default)]
    pub include_usage: bool,
}

#[derive(Clone, Copy, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ChatRole {
    System,
    Developer,
    User,
    Assistant,
    Tool,
}

/// One message of the client's list. An assistant's `tool_calls` are
/// accepted and not read: Octopus stored them when the model made them.
#[derive(Deserialize, ToSchema)]
pub(crate) struct ChatMessage {
    pub role: ChatRole,
    pub content: Option<ChatContent>,
    /// For a tool's result: the call it answers.
    pub tool_call_id: Option<String>,
}

/// Text, or a list of parts of which only text parts are understood.
#[derive(ToSchema)]
#[serde(untagged)]
pub(crate) enum ChatContent {
    Text(String),
    Parts(Vec<ChatContentPart>),
}

#[derive(Deserialize, ToSchema)]
pub(crate) struct ChatContentPart {
    #[serde(rename = "type")]
    pub kind: String,
    pub text: Option<String>,
}

/// A tool, in OpenAI's shape.
#[derive(Deserialize, ToSchema)]
pub(crate) struct ChatTool {
    /// Always `function`.
    #[serde(rename = "type")]
    pub kind: String,
    pub function: ToolSpec,
}

/// The client's list of messages: how many it held, and its end: the last
/// message that is not a tool's result, with the tool results after it,
/// each with its place in the list.
#[derive(Default)]
pub(crate) struct ClientList {
    pub len: usize,
    pub end: Vec<(usize, ChatMessage)>,
    /// Tool results at the end of the list.
    trailing_results: usize,
}

impl<'de> Deserialize<'de> for ClientList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ListVisitor;

        impl<'de> Visitor<'de> for ListVisitor {
            type Value = ClientList;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of messages")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ClientList, A::Error> {
                let mut list = ClientList::default();
                while let Some(message) = seq.next_element::<ChatMessage>()? {
                    if list.len == MAX_MESSAGES {
                        return Err(de::Error::custom(format!(
                            "more than {MAX_MESSAGES} messages"
                        )));
                    }
                    if message.role != ChatRole::Tool {
                        list.end.clear();
                        list.trailing_results = 0;
                    } else if list.trailing_results == MAX_TRAILING_TOOL_RESULTS {
                        return Err(de::Error::custom(format!(
                            "more than {MAX_TRAILING_TOOL_RESULTS} tool results in a row"
                        )));
                    } else {
                        list.trailing_results += 1;
                    }
                    list.end.push((list.len, message));
                    list.len += 1;
                }
                Ok(list)
            }
        }

        deserializer.deserialize_seq(ListVisitor)
    }
}

impl<'de> Deserialize<'de> for ChatContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentVisitor;

        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = ChatContent;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("text, or a list of content parts")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<ChatContent, E> {
                Ok(ChatContent::Text(text.to_owned()))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<ChatContent, E> {
                Ok(ChatContent::Text(text))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<ChatContent, A::Error> {
                bounded(seq, MAX_CONTENT_PARTS, "content parts").map(ChatContent::Parts)
            }
        }

        deserializer.deserialize_any(ContentVisitor)
    }
}

/// The tools, refused past the most a turn may offer while they are read.
fn at_most_tools<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<ChatTool>, D::Error> {
    struct ToolsVisitor(PhantomData<ChatTool>);

    impl<'de> Visitor<'de> for ToolsVisitor {
        type Value = Vec<ChatTool>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a list of tools")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Vec<ChatTool>, A::Error> {
            bounded(seq, octopus_engine::MAX_TOOLS, "tools")
        }
    }

    deserializer.deserialize_seq(ToolsVisitor(PhantomData))
}

/// The elements of `seq`, refused as soon as there are more than `max`.
fn bounded<'de, A: SeqAccess<'de>, T: Deserialize<'de>>(
    mut seq: A,
    max: usize,
    what: &str,
) -> Result<Vec<T>, A::Error> {
    let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(max));
    while let Some(item) = seq.next_element()? {
        if items.len() == max {
            return Err(de::Error::custom(format!("more than {max} {what}")));
        }
        items.push(item);
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(json: &str) -> Result<ClientList, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn only_the_end_of_the_list_is_kept_with_its_places() {
        let kept = list(
            r#"[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"},
                {"role":"assistant","content":null},{"role":"tool","content":"42","tool_call_id":"c1"},
                {"role":"tool","content":"43","tool_call_id":"c2"}]"#,
        )
        .unwrap();
        assert_eq!(kept.len, 5);
        let places: Vec<usize> = kept.end.iter().map(|(at, _)| *at).collect();
        assert_eq!(places, [2, 3, 4]);
        assert!(kept.end[0].1.role == ChatRole::Assistant);
    }

    #[test]
    fn every_message_is_still_checked() {
        let error = list(
            r#"[{"role":"user","content":"Hi"},{"role":"robot"},{"role":"user","content":"x"}]"#,
        )
        .err()
        .expect("an unknown role is refused, though not kept");
        assert!(error.to_string().contains("robot"), "{error}");
    }

    #[test]
    fn lists_and_parts_are_refused_past_their_bounds_while_read() {
        let message = r#"{"role":"user","content":"x"}"#;
        let at_limit = format!("[{}]", vec![message; MAX_MESSAGES].join(","));
        assert_eq!(list(&at_limit).unwrap().len, MAX_MESSAGES);
        let over = format!("[{}]", vec![message; MAX_MESSAGES + 1].join(","));
        let error = list(&over).err().unwrap().to_string();
        assert!(
            error.contains(&format!("more than {MAX_MESSAGES} messages")),
            "{error}"
        );

        let part = r#"{"type":"text","text":"a"}"#;
        let parts = |n: usize| {
            format!(
                r#"{{"role":"user","content":[{}]}}"#,
                vec![part; n].join(",")
            )
        };
        let fits: ChatMessage = serde_json::from_str(&parts(MAX_CONTENT_PARTS)).unwrap();
        assert!(
            matches!(fits.content, Some(ChatContent::Parts(p)) if p.len() == MAX_CONTENT_PARTS)
        );
        let error = serde_json::from_str::<ChatMessage>(&parts(MAX_CONTENT_PARTS + 1))
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("content parts"), "{error}");

        let results = |n: usize| {
            let result = r#"{"role":"tool","content":"ok","tool_call_id":"c"}"#;
            format!("[{}]", vec![result; n].join(","))
        };
        assert!(list(&results(MAX_TRAILING_TOOL_RESULTS)).is_ok());
        assert!(list(&results(MAX_TRAILING_TOOL_RESULTS + 1)).is_err());
    }

    #[test]
    fn content_is_text_or_parts_and_nothing_else() {
        let text: ChatMessage = serde_json::from_str(r#"{"role":"user","content":"Hi"}"#).unwrap();
        assert!(matches!(text.content, Some(ChatContent::Text(t)) if t == "Hi"));
        let null: ChatMessage =
            serde_json::from_str(r#"{"role":"assistant","content":null}"#).unwrap();
        assert!(null.content.is_none());
        assert!(serde_json::from_str::<ChatMessage>(r#"{"role":"user","content":7}"#).is_err());
    }
}
