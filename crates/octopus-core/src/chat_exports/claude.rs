//! A Claude export's conversation: its `chat_messages` in order, each from
//! the `human` or the `assistant`, with its text (or content blocks: text,
//! tool uses and their results) and the text Claude extracted from the
//! files attached to it.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

use super::{ExportedConversation, content, in_time, said, short};
use crate::message::{FileRef, NewMessage, Role, ToolCallRecord};
use crate::{Error, Result};

#[derive(Deserialize)]
struct Conversation {
    #[serde(default)]
    uuid: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    created_at: Option<DateTime<Utc>>,
    chat_messages: Vec<ChatMessage>,
}

#[derive(Deserialize)]
struct ChatMessage {
    #[serde(default)]
    uuid: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    content: Vec<Value>,
    sender: String,
    #[serde(default)]
    created_at: Option<DateTime<Utc>>,
    #[serde(default)]
    attachments: Vec<Attachment>,
    #[serde(default)]
    files: Vec<Attachment>,
}

#[derive(Deserialize)]
struct Attachment {
    #[serde(default)]
    file_name: Option<String>,
    #[serde(default)]
    extracted_content: Option<String>,
}

pub(super) fn conversation(index: usize, value: Value) -> Result<Option<ExportedConversation>> {
    let conversation: Conversation = serde_json::from_value(value).map_err(super::shape)?;
    let export_id = conversation
        .uuid
        .filter(|id| !id.is_empty())
        .ok_or_else(|| Error::invalid("uuid", "is missing: a conversation has an id"))?;
    let said_here: Vec<_> = conversation
        .chat_messages
        .iter()
        .enumerate()
        .filter_map(|(position, message)| {
            kept(position, message).map(|kept| (kept, message.created_at))
        })
        .collect();
    if said_here.is_empty() {
        return Ok(None);
    }
    Ok(Some(ExportedConversation {
        index,
        export_id,
        title: super::title(conversation.name),
        messages: in_time(said_here, conversation.created_at)?,
    }))
}

fn kept(position: usize, message: &ChatMessage) -> Option<NewMessage> {
    let role = match message.sender.as_str() {
        "human" | "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" => Role::System,
        _ => return None,
    };
    let mut texts = Vec::new();
    let mut calls: Vec<ToolCallRecord> = Vec::new();
    for block in &message.content {
        let field = |name: &str| block.get(name).and_then(Value::as_str);
        match field("type") {
            Some("text") => texts.extend(field("text").map(str::to_owned)),
            Some("tool_use") => calls.push(ToolCallRecord {
                tool_call_id: field("id").map(str::to_owned).unwrap_or_else(|| {
                    let id = message.uuid.as_deref().unwrap_or("message");
                    format!("{id}-{position}-{}", calls.len())
                }),
                function_name: short(
                    field("name").unwrap_or("tool"),
                    crate::bounds::MAX_TOOL_NAME_CHARS,
                ),
                arguments: block.get("input").cloned().unwrap_or(Value::Null),
                result: None,
                duration_ms: None,
                is_error: false,
            }),
            Some("tool_result") => {
                let result = Value::String(result_text(block.get("content")));
                let is_error = block
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let answers = |call: &&mut ToolCallRecord| match field("tool_use_id") {
                    Some(id) => call.tool_call_id == id,
                    None => {
                        call.result.is_none() && Some(call.function_name.as_str()) == field("name")
                    }
                };
                match calls.iter_mut().rev().find(answers) {
                    Some(call) => {
                        call.result = Some(result);
                        call.is_error = is_error;
                    }
                    None => calls.push(ToolCallRecord {
                        tool_call_id: field("tool_use_id").unwrap_or("result").to_owned(),
                        function_name: short(
                            field("name").unwrap_or("tool"),
                            crate::bounds::MAX_TOOL_NAME_CHARS,
                        ),
                        arguments: Value::Null,
                        result: Some(result),
                        duration_ms: None,
                        is_error,
                    }),
                }
            }
            // A model's thinking, and blocks without words of the conversation.
            _ => {}
        }
    }
    // Exports from before content blocks hold the words in `text` alone.
    if texts.is_empty() && calls.is_empty() {
        texts.extend(message.text.clone());
    }
    let mut files = Vec::new();
    for attachment in message.attachments.iter().chain(&message.files) {
        let name = attachment.file_name.clone();
        match attachment
            .extracted_content
            .as_deref()
            .filter(|text| !text.trim().is_empty())
        {
            Some(text) => texts.push(match &name {
                Some(name) => format!("Attached {name}:\n{text}"),
                None => text.to_owned(),
            }),
            None if name.is_some() => files.push(FileRef {
                file_id: None,
                filename: name,
                file_data: None,
            }),
            None => {}
        }
    }
    // A file attached with its words is listed again, without them.
    files.retain(|file| {
        !message
            .attachments
            .iter()
            .any(|a| a.extracted_content.is_some() && a.file_name == file.filename)
    });
    let mut kept = said(role, content(texts, files));
    if role == Role::Assistant && !calls.is_empty() {
        let mut message = kept.unwrap_or_else(|| NewMessage {
            content: None,
            ..NewMessage::text(Role::Assistant, "")
        });
        message.tool_calls = calls;
        kept = Some(message);
    }
    kept
}

/// A tool result's words: a string, or the text of its blocks.
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
