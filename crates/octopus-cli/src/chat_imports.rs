//! `octopus import-chats`: a ChatGPT or Claude export's conversations.json,
//! read and checked here whole, then sent in parts small enough for the
//! server's request limit. Nothing is sent when the file is not whole; a
//! part refused midway leaves the parts before it stored, and running the
//! command again (the same conversations are never stored twice) finishes it.

use anyhow::Context;
use octopus_client::operations as op;
use octopus_core::chat_exports::{self, ExportFormat};
use serde_json::{Value, json};

use crate::cli::ImportChatsArgs;

/// Bytes of conversations sent in one request: well under the server's
/// default limit on a request's body.
const PART_BYTES: usize = 4 << 20;

pub async fn run(args: ImportChatsArgs) -> anyhow::Result<Value> {
    let file =
        std::fs::read(&args.file).with_context(|| format!("read {}", args.file.display()))?;
    anyhow::ensure!(
        !file.starts_with(b"PK\x03\x04"),
        "{} is the export's zip: unzip it, and give its conversations.json",
        args.file.display()
    );
    let conversations = match serde_json::from_slice::<Value>(&file)
        .with_context(|| format!("{} is not a whole export", args.file.display()))?
    {
        Value::Array(conversations) => conversations,
        conversation @ Value::Object(_) => vec![conversation],
        _ => anyhow::bail!("{} holds no conversations", args.file.display()),
    };
    let format = match &args.format {
        Some(format) => format.parse::<ExportFormat>()?,
        None => conversations
            .iter()
            .find_map(ExportFormat::of)
            .with_context(|| {
                format!(
                    "{} is neither a ChatGPT nor a Claude export: give --format",
                    args.file.display()
                )
            })?,
    };
    // Every conversation is read as the server will, before any is sent.
    chat_exports::read_conversations(format, conversations.clone()).with_context(|| {
        format!(
            "{} is not a {format} export Octopus can read",
            args.file.display()
        )
    })?;

    let client = args.remote.client();
    let agent = client.agent_id(&args.agent).await?;
    let parts = parts(&conversations);
    let mut total = json!({"conversations": [], "imported": 0, "already_imported": 0, "empty": 0, "messages": 0});
    for (number, part) in parts.iter().enumerate() {
        if parts.len() > 1 {
            eprintln!(
                "sending conversations {} to {} of {}",
                part.start + 1,
                part.end,
                conversations.len()
            );
        }
        let reply = client
            .call(op::IMPORT_CHATS)
            .param(format)
            .query("agent_id", &agent)
            .query("user_id", &args.user)
            .json(&&conversations[part.clone()])
            .send()
            .await
            .with_context(|| match number {
                0 => "nothing was imported".to_owned(),
                _ => format!(
                    "conversations 1 to {} were imported; run the command again to import the rest",
                    part.start
                ),
            })?;
        add(&mut total, reply, part.start);
    }
    Ok(total)
}

/// Ranges of conversations, each of at most [`PART_BYTES`] of JSON (one
/// larger conversation alone).
fn parts(conversations: &[Value]) -> Vec<std::ops::Range<usize>> {
    let mut parts = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (index, conversation) in conversations.iter().enumerate() {
        let size = conversation.to_string().len() + 1;
        if index > start && bytes + size > PART_BYTES {
            parts.push(start..index);
            (start, bytes) = (index, 0);
        }
        bytes += size;
    }
    if start < conversations.len() {
        parts.push(start..conversations.len());
    }
    parts
}

/// One part's report added to the whole's, its conversations' places in
/// the part made places in the file.
fn add(total: &mut Value, mut reply: Value, offset: usize) {
    for field in ["imported", "already_imported", "empty", "messages"] {
        let sum = total[field].as_u64().unwrap_or(0) + reply[field].as_u64().unwrap_or(0);
        total[field] = json!(sum);
    }
    if let Some(Value::Array(chats)) = reply.get_mut("conversations").map(Value::take) {
        for mut chat in chats {
            let index = chat["index"].as_u64().unwrap_or(0) + offset as u64;
            chat["index"] = json!(index);
            if let Some(all) = total["conversations"].as_array_mut() {
                all.push(chat);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_hold_whole_conversations_under_the_limit() {
        let big = json!({"text": "x".repeat(PART_BYTES / 3)});
        let conversations = vec![
            big.clone(),
            big.clone(),
            big.clone(),
            json!({"text": "x".repeat(PART_BYTES * 2)}),
            big,
        ];
        assert_eq!(parts(&conversations), [0..2, 2..3, 3..4, 4..5]);
        assert_eq!(parts(&[]), Vec::<std::ops::Range<usize>>::new());
    }

    #[test]
    fn reports_add_up_with_places_in_the_file() {
        let mut total = json!({"conversations": [], "imported": 0, "already_imported": 0, "empty": 0, "messages": 0});
        add(
            &mut total,
            json!({"conversations": [{"index": 0}], "imported": 1, "already_imported": 0, "empty": 1, "messages": 5}),
            0,
        );
        add(
            &mut total,
            json!({"conversations": [{"index": 1}], "imported": 0, "already_imported": 1, "empty": 0, "messages": 0}),
            3,
        );
        assert_eq!(total["conversations"], json!([{"index": 0}, {"index": 4}]));
        assert_eq!(
            (
                &total["imported"],
                &total["already_imported"],
                &total["empty"],
                &total["messages"]
            ),
            (&json!(1), &json!(1), &json!(1), &json!(5))
        );
    }
}
