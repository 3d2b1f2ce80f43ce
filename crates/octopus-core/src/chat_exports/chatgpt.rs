//! A ChatGPT export's conversation: a tree of messages (`mapping`, each node
//! naming its `parent`) in which every edited question and regenerated
//! answer starts a branch. The user last saw the branch that ends at
//! `current_node`; that branch alone is their conversation, and the
//! abandoned ones are left out.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{ExportedConversation, content, in_time, said, short};
use crate::message::{FileRef, MAX_PARTICIPANT_NAME_CHARS, NewMessage, Role, ToolCallRecord};
use crate::{Error, Result};

#[derive(Deserialize)]
struct Conversation {
    #[serde(default)]
    conversation_id: Option<String>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    create_time: Option<f64>,
    mapping: HashMap<String, Node>,
    #[serde(default)]
    current_node: Option<String>,
}

#[derive(Deserialize)]
struct Node {
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    parent: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    id: Option<String>,
    author: Author,
    #[serde(default)]
    create_time: Option<f64>,
    #[serde(default)]
    content: Map<String, Value>,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
    /// Whom an assistant's message is for: `all` (the user), or a tool.
    #[serde(default)]
    recipient: Option<String>,
}

#[derive(Deserialize)]
struct Author {
    role: String,
    #[serde(default)]
    name: Option<String>,
}

pub(super) fn conversation(index: usize, value: Value) -> Result<Option<ExportedConversation>> {
    let conversation: Conversation = serde_json::from_value(value).map_err(super::shape)?;
    let export_id = conversation
        .conversation_id
        .clone()
        .or_else(|| conversation.id.clone())
        .filter(|id| !id.is_empty())
        .ok_or_else(|| Error::invalid("conversation_id", "is missing: a conversation has an id"))?;
    let began = conversation.create_time.map(time).transpose()?;
    let mut said_here = Vec::new();
    for node_id in current_branch(&conversation)? {
        let Some(message) = &conversation.mapping[node_id].message else {
            continue;
        };
        let at = message
            .create_time
            .map(time)
            .transpose()
            .map_err(|e| e.within(&format!("mapping.{node_id}.message")))?;
        if let Some(kept) = kept(node_id, message) {
            said_here.push((kept, at));
        }
    }
    if said_here.is_empty() {
        return Ok(None);
    }
    Ok(Some(ExportedConversation {
        index,
        export_id,
        title: super::title(conversation.title),
        messages: in_time(said_here, began)?,
    }))
}

/// The node ids from the first message to `current_node`.
fn current_branch(conversation: &Conversation) -> Result<Vec<&str>> {
    let current = conversation.current_node.as_deref().ok_or_else(|| {
        Error::invalid(
            "current_node",
            "is missing: it names the branch the user last saw",
        )
    })?;
    if !conversation.mapping.contains_key(current) {
        return Err(Error::invalid(
            "current_node",
            format!("{current:?} is not a node of mapping"),
        ));
    }
    let mut branch = vec![current];
    let mut seen = HashSet::from([current]);
    let mut child = current;
    while let Some(parent) = conversation.mapping[child].parent.as_deref() {
        if !conversation.mapping.contains_key(parent) {
            return Err(Error::invalid(
                "mapping",
                format!("node {parent:?}, the parent of {child:?}, is missing"),
            ));
        }
        if !seen.insert(parent) {
            return Err(Error::invalid(
                "mapping",
                format!("node {parent:?} is its own ancestor"),
            ));
        }
        branch.push(parent);
        child = parent;
    }
    branch.reverse();
    Ok(branch)
}

/// The message as Octopus keeps it, or `None` for one nobody saw (hidden by
/// the service, a model's reasoning) or that says nothing.
fn kept(node_id: &str, message: &Message) -> Option<NewMessage> {
    let kind = message
        .content
        .get("content_type")
        .and_then(Value::as_str)
        .unwrap_or("text");
    let hidden = message
        .metadata
        .as_ref()
        .and_then(|metadata| metadata.get("is_visually_hidden_from_conversation"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    // What the user told ChatGPT about themselves is hidden from the chat,
    // and is some of the most lasting of what it holds.
    if kind == "user_editable_context" {
        let told = ["user_profile", "user_instructions"]
            .iter()
            .filter_map(|field| message.content.get(*field).and_then(Value::as_str))
            .map(str::to_owned)
            .collect();
        return said(Role::System, content(told, Vec::new()));
    }
    if hidden
        || matches!(
            kind,
            "thoughts" | "reasoning_recap" | "model_editable_context"
        )
    {
        return None;
    }
    let (texts, files) = parts(&message.content);
    match message.author.role.as_str() {
        "user" => said(Role::User, content(texts, files)),
        "system" => said(Role::System, content(texts, files)),
        "tool" => said(Role::Tool, content(texts, files)).map(|mut tool| {
            tool.name = message
                .author
                .name
                .as_deref()
                .map(|name| short(name, MAX_PARTICIPANT_NAME_CHARS));
            tool
        }),
        "assistant" => match message.recipient.as_deref() {
            None | Some("all") | Some("assistant") => said(Role::Assistant, content(texts, files)),
            // The model addressing a tool (running code, searching): a call.
            Some(tool) => {
                let input = texts.join("\n");
                Some(NewMessage {
                    content: None,
                    tool_calls: vec![ToolCallRecord {
                        tool_call_id: message.id.clone().unwrap_or_else(|| node_id.to_owned()),
                        function_name: short(tool, crate::bounds::MAX_TOOL_NAME_CHARS),
                        arguments: json!({ "input": input }),
                        result: None,
                        duration_ms: None,
                        is_error: false,
                    }],
                    ..NewMessage::text(Role::Assistant, "")
                })
            }
        },
        _ => None,
    }
}

/// The text and files of a message's content, whatever its type.
fn parts(content: &Map<String, Value>) -> (Vec<String>, Vec<FileRef>) {
    let mut texts = Vec::new();
    let mut files = Vec::new();
    let text_of = |field: &str| {
        content
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    for part in content
        .get("parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match part {
            Value::String(text) => texts.push(text.clone()),
            Value::Object(part) => {
                if let Some(text) = part.get("text").and_then(Value::as_str) {
                    // A voice message's transcript.
                    texts.push(text.to_owned());
                } else if let Some(pointer) = part.get("asset_pointer").and_then(Value::as_str) {
                    // An image or file the export does not hold the words of.
                    files.push(FileRef {
                        file_id: Some(pointer.to_owned()),
                        filename: None,
                        file_data: None,
                    });
                }
            }
            _ => {}
        }
    }
    // Code the model ran and what it printed, a quoted page, a search's result.
    if let Some(title) = text_of("title").filter(|_| texts.is_empty()) {
        texts.push(title);
    }
    texts.extend(text_of("text"));
    texts.extend(text_of("result"));
    (texts, files)
}

/// A time as the export writes it: seconds since 1970, with a fraction.
fn time(seconds: f64) -> Result<DateTime<Utc>> {
    let whole = seconds.floor();
    let nanos = ((seconds - whole) * 1e9).round().clamp(0.0, 999_999_999.0) as u32;
    (seconds.is_finite() && whole.abs() < 1e15)
        .then(|| DateTime::from_timestamp(whole as i64, nanos))
        .flatten()
        .ok_or_else(|| Error::invalid("create_time", format!("{seconds} is not a time")))
}
