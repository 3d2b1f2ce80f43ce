//! Conversations people had elsewhere, read from the files ChatGPT and
//! Claude let them export (each a `conversations.json`), into messages
//! Octopus can store as their own past.
//!
//! Reading is all or nothing: a file that is not valid JSON (one cut short
//! among them) is refused naming the line and column where it breaks, and a
//! conversation of the wrong shape naming its index and field, before any
//! of it is stored. What a conversation holds that is not said to or by the
//! user (a model's hidden reasoning, messages the service itself hid) is
//! left out; what it cannot hold as text (an image) is kept as a file part.

mod chatgpt;
mod claude;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::message::{ContentPart, FileRef, MessageContent, NewMessage, Role};
use crate::{Error, Result};

/// Most conversations one request imports; a larger export is sent in parts.
pub const MAX_EXPORTED_CONVERSATIONS: usize = 10_000;

/// Whose export a file is.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// ChatGPT's data export: each conversation a tree of messages
    /// (`mapping`), of which the branch ending at `current_node` is the one
    /// the user last saw.
    Chatgpt,
    /// Claude's data export: each conversation a list of `chat_messages`.
    Claude,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 2] = [ExportFormat::Chatgpt, ExportFormat::Claude];

    pub fn as_str(self) -> &'static str {
        match self {
            ExportFormat::Chatgpt => "chatgpt",
            ExportFormat::Claude => "claude",
        }
    }

    /// The format a conversation of an export is written in, by the fields
    /// only that format has.
    pub fn of(conversation: &Value) -> Option<ExportFormat> {
        let object = conversation.as_object()?;
        if object.contains_key("mapping") {
            Some(ExportFormat::Chatgpt)
        } else if object.contains_key("chat_messages") {
            Some(ExportFormat::Claude)
        } else {
            None
        }
    }
}

impl std::fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ExportFormat {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        ExportFormat::ALL
            .into_iter()
            .find(|format| format.as_str() == name)
            .ok_or_else(|| Error::invalid("format", format!("{name:?} is not chatgpt or claude")))
    }
}

/// One conversation of an export, as Octopus will store it.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportedConversation {
    /// Its place in the export's array, by which errors name it.
    pub index: usize,
    /// The export's own id of the conversation, which names it again in a
    /// later export of the same account.
    pub export_id: String,
    pub title: Option<String>,
    /// In the order they were said, each with its time; never empty.
    pub messages: Vec<NewMessage>,
}

/// What one export holds: its conversations with something said in them,
/// and how many it had with nothing to keep.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Export {
    pub conversations: Vec<ExportedConversation>,
    /// Conversations with no message left to store (an empty chat, or one
    /// whose every message was hidden).
    pub empty: usize,
}

/// Reads an export's `conversations.json` (an array of conversations; one
/// conversation alone is read as an array of one).
pub fn read(format: ExportFormat, file: &[u8]) -> Result<Export> {
    let document: Value = serde_json::from_slice(file).map_err(|error| {
        Error::invalid(
            "body",
            format!("is not a whole {format} export: {error} (the file's conversations.json is expected)"),
        )
    })?;
    let conversations = match document {
        Value::Array(conversations) => conversations,
        conversation @ Value::Object(_) => vec![conversation],
        _ => {
            return Err(Error::invalid(
                "body",
                format!("a {format} export is an array of conversations"),
            ));
        }
    };
    read_conversations(format, conversations)
}

/// Reads conversations an export held, in its order.
pub fn read_conversations(format: ExportFormat, conversations: Vec<Value>) -> Result<Export> {
    if conversations.len() > MAX_EXPORTED_CONVERSATIONS {
        return Err(Error::invalid(
            "body",
            format!(
                "{} conversations; one request imports at most {MAX_EXPORTED_CONVERSATIONS}",
                conversations.len()
            ),
        ));
    }
    let mut export = Export::default();
    for (index, conversation) in conversations.into_iter().enumerate() {
        let within = |error: Error| error.within(&format!("conversations[{index}]"));
        if let Some(other) = ExportFormat::of(&conversation).filter(|other| *other != format) {
            return Err(within(Error::invalid(
                "",
                format!("is a conversation of a {other} export, not of a {format} one"),
            )));
        }
        let read = match format {
            ExportFormat::Chatgpt => chatgpt::conversation(index, conversation),
            ExportFormat::Claude => claude::conversation(index, conversation),
        }
        .map_err(within)?;
        match read {
            Some(conversation) => export.conversations.push(conversation),
            None => export.empty += 1,
        }
    }
    Ok(export)
}

/// A field of the wrong shape, as serde says it.
fn shape(error: serde_json::Error) -> Error {
    Error::invalid("", format!("is not of the export's shape: {error}"))
}

/// Messages kept, each given a time: its own, else the one before's (a
/// message never precedes the one it follows), else the conversation's.
fn in_time(
    said: Vec<(NewMessage, Option<DateTime<Utc>>)>,
    began: Option<DateTime<Utc>>,
) -> Result<Vec<NewMessage>> {
    let mut last = began;
    let mut messages = Vec::with_capacity(said.len());
    for (index, (mut message, at)) in said.into_iter().enumerate() {
        let at = match (at, last) {
            (Some(at), Some(last)) => at.max(last),
            (Some(at), None) => at,
            (None, Some(last)) => last,
            (None, None) => {
                return Err(Error::invalid(
                    "",
                    format!(
                        "message {index} has no time, and neither has the conversation or a message before it"
                    ),
                ));
            }
        };
        message.timestamp = Some(at);
        last = Some(at);
        messages.push(message);
    }
    Ok(messages)
}

/// A message of text and file parts, or `None` when it holds neither.
fn content(texts: Vec<String>, files: Vec<FileRef>) -> Option<MessageContent> {
    let texts: Vec<String> = texts
        .into_iter()
        .filter(|text| !crate::bounds::is_blank(text))
        .collect();
    match (texts.len(), files.is_empty()) {
        (0, true) => None,
        (1, true) => texts.into_iter().next().map(MessageContent::Text),
        _ => Some(MessageContent::Parts(
            texts
                .into_iter()
                .map(|text| ContentPart::Text { text })
                .chain(files.into_iter().map(|file| ContentPart::File { file }))
                .collect(),
        )),
    }
}

/// A message said by `role`, when it says something a reader of the
/// conversation would see.
fn said(role: Role, content: Option<MessageContent>) -> Option<NewMessage> {
    let content = content?;
    if content.says_nothing() {
        return None;
    }
    Some(NewMessage {
        content: Some(content),
        ..NewMessage::text(role, "")
    })
}

/// A title, when there is one, within what a conversation's title may hold.
fn title(title: Option<String>) -> Option<String> {
    let title = title?.trim().to_owned();
    match title.is_empty() {
        true => None,
        false => Some(
            title
                .chars()
                .take(crate::conversation::MAX_TITLE_CHARS)
                .collect(),
        ),
    }
}

/// A name within what a participant's or tool's name may hold.
fn short(name: &str, most: usize) -> String {
    name.chars().take(most).collect()
}

#[cfg(test)]
mod tests;
