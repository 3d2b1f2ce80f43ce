//! Messages: one turn of a conversation, in the OpenAI chat-message shape, with the
//! per-turn fields memory needs (tool-call records, token count, PII flag,
//! embedding reference).

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{AgentId, ConversationId, EpisodeId, Error, MessageId, Result};

/// Who speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The human's message to the agent.
    User,
    /// The agent's reply; may request tool calls.
    Assistant,
    /// Context injected by the framework.
    System,
    /// The result of a tool call.
    Tool,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::User, Role::Assistant, Role::System, Role::Tool];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
            Role::Tool => "tool",
        }
    }

    /// Tokens of this role are the model's output; all others are its input.
    pub fn is_model_output(self) -> bool {
        self == Role::Assistant
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Role::ALL
            .into_iter()
            .find(|role| role.as_str() == s)
            .ok_or_else(|| {
                Error::invalid(
                    "role",
                    format!("unknown role `{s}`; expected user, assistant, system or tool"),
                )
            })
    }
}

/// A message's content: a plain string, or an array of parts (text, images, audio,
/// files) exactly as the OpenAI chat-completions API takes it.
#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum MessageContent {
    Text(String),
    Parts(Vec<ContentPart>),
}

/// One part of a multi-part content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ContentPart {
    Text {
        text: String,
    },
    ImageUrl {
        image_url: ImageUrl,
    },
    InputAudio {
        input_audio: InputAudio,
    },
    File {
        #[serde(deserialize_with = "crate::bounds::from_object_only")]
        file: FileRef,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImageUrl {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InputAudio {
    pub data: String,
    pub format: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FileRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_data: Option<String>,
}

impl MessageContent {
    /// The readable text: the string itself, or the text parts joined by newlines.
    pub fn text(&self) -> String {
        match self {
            MessageContent::Text(text) => text.clone(),
            MessageContent::Parts(parts) => parts
                .iter()
                .filter_map(|part| match part {
                    ContentPart::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// Whether the content is only white space: text, or parts that are
    /// all text (an image, a sound or a file says something).
    pub fn says_nothing(&self) -> bool {
        match self {
            MessageContent::Text(text) => crate::bounds::is_blank(text),
            MessageContent::Parts(parts) => parts.iter().all(|part| match part {
                ContentPart::Text { text } => crate::bounds::is_blank(text),
                _ => false,
            }),
        }
    }

    /// Refuses text holding NUL, naming the part that does.
    fn check_text(&self) -> Result<()> {
        match self {
            MessageContent::Text(text) => crate::bounds::check_no_nul("content", text),
            MessageContent::Parts(parts) => {
                for (index, part) in parts.iter().enumerate() {
                    if let ContentPart::Text { text } = part {
                        crate::bounds::check_no_nul(&format!("content[{index}].text"), text)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// Bytes of every string the content carries (inline images and audio included).
    pub fn payload_bytes(&self) -> usize {
        match self {
            MessageContent::Text(text) => text.len(),
            MessageContent::Parts(parts) => parts
                .iter()
                .map(|part| match part {
                    ContentPart::Text { text } => text.len(),
                    ContentPart::ImageUrl { image_url } => image_url.url.len(),
                    ContentPart::InputAudio { input_audio } => input_audio.data.len(),
                    ContentPart::File { file } => {
                        file.file_data.as_ref().map_or(0, String::len)
                            + file.file_id.as_ref().map_or(0, String::len)
                            + file.filename.as_ref().map_or(0, String::len)
                    }
                })
                .sum(),
        }
    }
}

// Written by hand so that a wrong shape gets an error that says what is expected,
// not serde's "data did not match any variant of untagged enum".
impl<'de> Deserialize<'de> for MessageContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentVisitor;

        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = MessageContent;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of content parts")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
                Ok(MessageContent::Text(text.to_owned()))
            }

            fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
                Ok(MessageContent::Text(text))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut parts = Vec::with_capacity(seq.size_hint().unwrap_or(1));
                while let Some(part) = seq.next_element::<ContentPart>()? {
                    parts.push(part);
                }
                Ok(MessageContent::Parts(parts))
            }
        }

        deserializer.deserialize_any(ContentVisitor)
    }
}

/// A tool or function call: the request the model made and the result it got back.
///
/// Accepted in this shape (snake_case, or camelCase), and also in the
/// OpenAI assistant shape `{"id", "type": "function", "function": {"name", "arguments"}}`,
/// which is converted to this one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(try_from = "ToolCallWire")]
pub struct ToolCallRecord {
    pub tool_call_id: String,
    pub function_name: String,
    /// The arguments as JSON (an OpenAI arguments string is parsed when it is JSON).
    pub arguments: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default)]
    pub is_error: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolCallWire {
    #[serde(alias = "toolCallId", alias = "id")]
    tool_call_id: Option<String>,
    #[serde(alias = "functionName")]
    function_name: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    function: Option<FunctionWire>,
    arguments: Option<Value>,
    result: Option<Value>,
    #[serde(alias = "durationMs")]
    duration_ms: Option<u64>,
    #[serde(alias = "isError")]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FunctionWire {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
}

/// The longest duration a tool call may record, in milliseconds: the
/// largest integer every JSON client reads exactly (2^53 - 1).
pub const MAX_DURATION_MS: u64 = (1 << 53) - 1;

impl TryFrom<ToolCallWire> for ToolCallRecord {
    type Error = String;

    fn try_from(wire: ToolCallWire) -> Result<Self, String> {
        if let Some(kind) = &wire.kind
            && kind != "function"
        {
            return Err(format!(
                "unsupported tool call type `{kind}`; expected `function`"
            ));
        }
        let tool_call_id = wire.tool_call_id.ok_or("missing field `tool_call_id`")?;
        let (function_name, arguments) = match (wire.function_name, wire.function) {
            (Some(_), Some(_)) => {
                return Err("give either `function_name` or `function`, not both".into());
            }
            (Some(name), None) => (name, wire.arguments),
            (None, Some(function)) => (function.name, function.arguments.or(wire.arguments)),
            (None, None) => return Err("missing field `function_name`".into()),
        };
        for (field, value) in [
            ("tool_call_id", &tool_call_id),
            ("function_name", &function_name),
        ] {
            let max = crate::bounds::MAX_TOOL_NAME_CHARS;
            if value.is_empty() || value.chars().count() > max {
                return Err(format!("`{field}` must be 1 to {max} characters"));
            }
        }
        Ok(ToolCallRecord {
            tool_call_id,
            function_name,
            arguments: arguments.map(parse_json_string).unwrap_or(Value::Null),
            result: wire.result.filter(|result| !result.is_null()),
            duration_ms: wire.duration_ms,
            is_error: wire.is_error.unwrap_or(false),
        })
    }
}

/// OpenAI sends function arguments as a JSON-encoded string; keep the JSON itself.
fn parse_json_string(value: Value) -> Value {
    match &value {
        Value::String(text) => serde_json::from_str(text).unwrap_or(value),
        _ => value,
    }
}

impl ToolCallRecord {
    /// The record of a call the model made, before any result.
    pub fn called(call: &ToolCall) -> Self {
        Self {
            tool_call_id: call.id.clone(),
            function_name: call.name.clone(),
            arguments: call.arguments.clone(),
            result: None,
            duration_ms: None,
            is_error: false,
        }
    }

    /// The call as a chat API takes it back.
    pub fn call(&self) -> ToolCall {
        ToolCall {
            id: self.tool_call_id.clone(),
            name: self.function_name.clone(),
            arguments: self.arguments.clone(),
        }
    }

    /// What full-text search should find this call by.
    pub fn search_text(&self) -> String {
        let mut text = self.function_name.clone();
        for value in [Some(&self.arguments), self.result.as_ref()]
            .into_iter()
            .flatten()
        {
            if !value.is_null() {
                text.push(' ');
                push_json_text(value, &mut text);
            }
        }
        text
    }
}

/// Appends the scalar values of a JSON document (keys and values), without braces
/// and quotes, so a tokenizer sees words rather than syntax.
fn push_json_text(value: &Value, out: &mut String) {
    match value {
        Value::Null => {}
        Value::String(s) => out.push_str(s),
        Value::Bool(_) | Value::Number(_) => out.push_str(&value.to_string()),
        Value::Array(items) => {
            for item in items {
                push_json_text(item, out);
                out.push(' ');
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                out.push_str(key);
                out.push(' ');
                push_json_text(item, out);
                out.push(' ');
            }
        }
    }
}

/// A message as a caller sends it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewMessage {
    pub role: Role,
    /// A string or an array of content parts. May be omitted only when the
    /// message carries tool calls.
    #[serde(default)]
    pub content: Option<MessageContent>,
    /// The OpenAI `name` of the participant.
    #[serde(default)]
    pub name: Option<String>,
    /// For a `tool` message in the OpenAI shape: the call it answers.
    #[serde(default)]
    pub tool_call_id: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<ToolCallRecord>,
    /// Computed by Octopus when absent.
    #[serde(default)]
    pub token_count: Option<u32>,
    /// When the message was said; now when absent (give it when importing).
    #[serde(default)]
    pub timestamp: Option<DateTime<Utc>>,
    /// The agent that spoke, in multi-agent episodes.
    #[serde(default)]
    pub agent_id: Option<AgentId>,
    #[serde(default)]
    pub contains_pii: bool,
    #[serde(default)]
    pub redacted_content: Option<String>,
}

/// Bounds on what one message may carry.
#[derive(Clone, Copy, Debug)]
pub struct MessageLimits {
    /// Bytes of content, tool calls and redacted content together.
    pub max_message_bytes: usize,
    pub max_tool_calls: usize,
}

impl Default for MessageLimits {
    fn default() -> Self {
        Self {
            max_message_bytes: 1 << 20,
            max_tool_calls: 128,
        }
    }
}

pub const MAX_PARTICIPANT_NAME_CHARS: usize = 64;

impl NewMessage {
    /// A plain-text message, for tests and programmatic callers.
    pub fn text(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: Some(MessageContent::Text(content.into())),
            name: None,
            tool_call_id: None,
            tool_calls: Vec::new(),
            token_count: None,
            timestamp: None,
            agent_id: None,
            contains_pii: false,
            redacted_content: None,
        }
    }

    /// Checks the rules a message's fields must satisfy together.
    pub fn validate(&self, limits: &MessageLimits) -> Result<()> {
        if self.content.is_none() && self.tool_calls.is_empty() {
            return Err(Error::invalid(
                "content",
                "is required (it may be omitted only when the message carries tool_calls)",
            ));
        }
        if !self.tool_calls.is_empty() && !matches!(self.role, Role::Assistant | Role::Tool) {
            return Err(Error::invalid(
                "tool_calls",
                format!(
                    "only assistant and tool messages carry tool calls, not {}",
                    self.role
                ),
            ));
        }
        if self.tool_call_id.is_some() && self.role != Role::Tool {
            return Err(Error::invalid(
                "tool_call_id",
                "only tool messages answer a tool call",
            ));
        }
        crate::bounds::check_optional_chars(
            "tool_call_id",
            self.tool_call_id.as_deref(),
            crate::bounds::MAX_TOOL_NAME_CHARS,
        )?;
        if let Some(content) = &self.content {
            content.check_text()?;
            if self.role == Role::User && content.says_nothing() {
                return Err(Error::invalid(
                    "content",
                    "must not be empty: a user's message says something",
                ));
            }
        }
        if let Some(MessageContent::Parts(parts)) = &self.content {
            if parts.is_empty() {
                return Err(Error::invalid(
                    "content",
                    "an array of parts must not be empty",
                ));
            }
            for (index, part) in parts.iter().enumerate() {
                if let ContentPart::ImageUrl { image_url } = part
                    && image_url.url.is_empty()
                {
                    return Err(Error::invalid(
                        format!("content[{index}].image_url.url"),
                        "must not be empty",
                    ));
                }
            }
        }
        crate::bounds::check_optional_chars(
            "name",
            self.name.as_deref(),
            MAX_PARTICIPANT_NAME_CHARS,
        )?;
        if self.tool_calls.len() > limits.max_tool_calls {
            return Err(Error::invalid(
                "tool_calls",
                format!("at most {} tool calls per message", limits.max_tool_calls),
            ));
        }
        for (index, call) in self.tool_calls.iter().enumerate() {
            if call.duration_ms.is_some_and(|ms| ms > MAX_DURATION_MS) {
                return Err(Error::invalid(
                    format!("tool_calls[{index}].duration_ms"),
                    format!("must be at most {MAX_DURATION_MS}"),
                ));
            }
        }
        let bytes = self
            .content
            .as_ref()
            .map_or(0, MessageContent::payload_bytes)
            + self.redacted_content.as_ref().map_or(0, String::len)
            + self
                .tool_calls
                .iter()
                .map(|call| call.search_text().len())
                .sum::<usize>();
        if bytes > limits.max_message_bytes {
            return Err(Error::invalid(
                "content",
                format!(
                    "message is {bytes} bytes; the limit is {}",
                    limits.max_message_bytes
                ),
            ));
        }
        Ok(())
    }
}

/// A message as stored: what the caller sent, placed in its episode.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Message {
    pub id: MessageId,
    pub episode_id: EpisodeId,
    pub conversation_id: ConversationId,
    /// Position in the episode, from 0.
    pub ordinal: u32,
    pub role: Role,
    pub content: Option<MessageContent>,
    pub name: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_calls: Vec<ToolCallRecord>,
    pub token_count: u32,
    pub timestamp: DateTime<Utc>,
    /// The agent that spoke, in multi-agent episodes; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<AgentId>,
    pub contains_pii: bool,
    pub redacted_content: Option<String>,
    /// The id of this message's vector in the vector store, once embedded.
    pub embedding_ref: Option<String>,
    /// A reply generated in a turn: the tokens its model call was billed, as
    /// the provider reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    pub created_at: DateTime<Utc>,
}

impl Message {
    /// Everything full-text search should find this message by: the content's text
    /// and the tool calls' names, arguments and results.
    pub fn search_text(&self) -> String {
        message_search_text(self.content.as_ref(), &self.tool_calls)
    }
}

/// The text full-text search indexes for a message's content and tool calls.
pub fn message_search_text(
    content: Option<&MessageContent>,
    tool_calls: &[ToolCallRecord],
) -> String {
    let mut text = content.map(MessageContent::text).unwrap_or_default();
    for call in tool_calls {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&call.search_text());
    }
    text
}

/// A call the model asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ToolCall {
    /// The provider's id of the call; a tool result names it.
    pub id: String,
    pub name: String,
    /// The arguments as JSON (an object, when the model kept to the schema).
    #[schema(value_type = Object)]
    pub arguments: Value,
}

/// Tokens the provider counted for one call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(value: Value) -> Result<NewMessage, serde_json::Error> {
        serde_json::from_value(value)
    }

    #[test]
    fn accepts_string_and_multipart_content() {
        let text = parse(json!({"role": "user", "content": "hi"})).unwrap();
        assert_eq!(text.content, Some(MessageContent::Text("hi".into())));

        let parts = parse(json!({"role": "user", "content": [
            {"type": "text", "text": "Analyze this chart:"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}}
        ]}))
        .unwrap();
        let Some(MessageContent::Parts(parts)) = parts.content else {
            panic!("expected parts")
        };
        assert_eq!(parts.len(), 2);
        assert_eq!(
            parts[0],
            ContentPart::Text {
                text: "Analyze this chart:".into()
            }
        );
    }

    #[test]
    fn rejects_wrong_content_shape_with_a_clear_message() {
        let error = parse(json!({"role": "user", "content": 42}))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("a string or an array of content parts"),
            "{error}"
        );
        let error = parse(json!({"role": "user", "content": [{"type": "video"}]}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("unknown variant `video`"), "{error}");
    }

    #[test]
    fn rejects_unknown_role_naming_the_choices() {
        let error = parse(json!({"role": "robot", "content": "x"}))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("robot") && error.contains("assistant"),
            "{error}"
        );
    }

    #[test]
    fn a_tool_calls_duration_is_bounded_by_what_json_clients_read_exactly() {
        let with = |ms: u64| {
            parse(json!({"role": "tool", "tool_calls": [{
                "tool_call_id": "c1", "function_name": "f", "duration_ms": ms}]}))
            .unwrap()
            .validate(&MessageLimits::default())
        };
        assert!(with(MAX_DURATION_MS).is_ok());
        match with(MAX_DURATION_MS + 1) {
            Err(Error::Invalid { field, .. }) => assert_eq!(field, "tool_calls[0].duration_ms"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tool_calls_accept_seed_and_openai_shapes() {
        let seed = parse(json!({"role": "tool", "tool_calls": [{
            "toolCallId": "call_abc123", "functionName": "get_order_status",
            "arguments": {"orderId": "ORD-8821"}, "result": {"status": "shipped"},
            "durationMs": 142, "isError": false
        }]}))
        .unwrap();
        let openai = parse(
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": "call_abc123", "type": "function",
                "function": {"name": "get_order_status", "arguments": "{\"orderId\":\"ORD-8821\"}"}
            }]}),
        )
        .unwrap();
        assert_eq!(
            seed.tool_calls[0].tool_call_id,
            openai.tool_calls[0].tool_call_id
        );
        assert_eq!(seed.tool_calls[0].arguments, openai.tool_calls[0].arguments);
        assert_eq!(seed.tool_calls[0].duration_ms, Some(142));
        assert!(openai.tool_calls[0].result.is_none());
    }

    fn part() -> impl proptest::strategy::Strategy<Value = ContentPart> {
        use proptest::prelude::*;
        prop_oneof![
            any::<String>().prop_map(|text| ContentPart::Text { text }),
            (any::<String>(), proptest::option::of("low|high|auto")).prop_map(|(url, detail)| {
                ContentPart::ImageUrl {
                    image_url: ImageUrl { url, detail },
                }
            }),
            (any::<String>(), "wav|mp3").prop_map(|(data, format)| ContentPart::InputAudio {
                input_audio: InputAudio {
                    data,
                    format: format.to_owned()
                }
            }),
        ]
    }

    proptest::proptest! {
        #[test]
        fn content_survives_json(text in proptest::prelude::any::<String>(), parts in proptest::collection::vec(part(), 1..5)) {
            for content in [MessageContent::Text(text.clone()), MessageContent::Parts(parts.clone())] {
                let json = serde_json::to_string(&content).unwrap();
                proptest::prop_assert_eq!(serde_json::from_str::<MessageContent>(&json).unwrap(), content);
            }
        }
    }

    #[test]
    fn content_is_required_without_tool_calls() {
        let message = parse(json!({"role": "user"})).unwrap();
        let error = message.validate(&MessageLimits::default()).unwrap_err();
        assert!(matches!(error, Error::Invalid { ref field, .. } if field == "content"));
    }

    #[test]
    fn a_users_message_says_something_and_no_text_holds_nul() {
        let field_of = |value: serde_json::Value| match parse(value)
            .unwrap()
            .validate(&MessageLimits::default())
        {
            Err(Error::Invalid { field, .. }) => Some(field),
            _ => None,
        };
        assert_eq!(
            field_of(json!({"role": "user", "content": " \n"})).as_deref(),
            Some("content")
        );
        assert_eq!(
            field_of(json!({"role": "user", "content": [{"type": "text", "text": ""}]})).as_deref(),
            Some("content")
        );
        assert_eq!(
            field_of(
                json!({"role": "user", "content": [{"type": "text", "text": ""},
                {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]})
            ),
            None,
            "an image says something"
        );
        assert_eq!(field_of(json!({"role": "assistant", "content": ""})), None);
        assert_eq!(
            field_of(json!({"role": "user", "content": "a\u{0}b"})).as_deref(),
            Some("content")
        );
        assert_eq!(
            field_of(
                json!({"role": "assistant", "content": [{"type": "text", "text": "ok"},
                {"type": "text", "text": "\u{0}"}]})
            )
            .as_deref(),
            Some("content[1].text")
        );
    }

    #[test]
    fn only_assistant_and_tool_messages_carry_tool_calls() {
        let message = parse(json!({"role": "user", "content": "x", "tool_calls": [
            {"tool_call_id": "c", "function_name": "f"}
        ]}))
        .unwrap();
        assert!(message.validate(&MessageLimits::default()).is_err());
    }

    #[test]
    fn oversized_message_is_rejected() {
        let message = NewMessage::text(Role::User, "x".repeat(101));
        let limits = MessageLimits {
            max_message_bytes: 100,
            ..MessageLimits::default()
        };
        assert!(message.validate(&limits).is_err());
        assert!(
            NewMessage::text(Role::User, "x".repeat(100))
                .validate(&limits)
                .is_ok()
        );
    }

    #[test]
    fn search_text_covers_tool_call_payloads() {
        let call = ToolCallRecord {
            tool_call_id: "c1".into(),
            function_name: "get_order_status".into(),
            arguments: json!({"orderId": "ORD-8821"}),
            result: Some(json!({"carrier": "FedEx"})),
            duration_ms: None,
            is_error: false,
        };
        let text = message_search_text(Some(&MessageContent::Text("where is it".into())), &[call]);
        for word in ["where is it", "get_order_status", "ORD-8821", "FedEx"] {
            assert!(text.contains(word), "{text} lacks {word}");
        }
    }
}

/// A person's erasure of one message: its words gone from every store, the
/// facts learned from it deleted, and its episode's summary written again.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageErasure {
    pub message_id: MessageId,
    /// The name of the API key that asked: the facts' histories keep it.
    pub changed_by: String,
    pub reason: Option<String>,
    pub at: DateTime<Utc>,
}

impl MessageErasure {
    pub fn validate(&self) -> Result<()> {
        crate::bounds::check_optional_chars(
            "reason",
            self.reason.as_deref(),
            crate::fact::MAX_REASON_CHARS,
        )
    }
}

/// What erasing a message removed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct MessageErasureReceipt {
    pub message_id: MessageId,
    pub episode_id: EpisodeId,
    /// Facts learned from the message, deleted with every version of them.
    pub facts_deleted: u64,
    /// Memory vectors removed: the message's, its facts', its episode's
    /// summary's.
    pub vectors: u64,
    /// The episode's summary (and key facts) was dropped: a closed episode's
    /// is written again from the messages left, by the agent's model when
    /// one answers, or extractively.
    pub summary_dropped: bool,
    /// No removed word is left on disk now. When false, a reader (an export,
    /// a backup) holds back the last step, and the words leave the files'
    /// logs as soon as it ends, without delaying anyone's writes.
    pub compacted: bool,
}
