//! BEAM's chats (Tavakoli et al., "Beyond a Million Tokens"): each a folder
//! with `chat.json`, one user's long conversation with an assistant about a
//! project, in batches of sessions, and `probing_questions.json`, questions
//! of ten abilities with the ids of their evidence messages. Read into
//! [`Chat`]s: each batch one session (episode) at its date, the end marker
//! (`->-> 1,1`) cut from every message.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail, ensure};
use chrono::{DateTime, NaiveDate, Utc};
use octopus_core::message::Role;
use serde_json::Value;

use crate::dev_set::{Chat, Line, Question, Session, Source, Update};

/// BEAM's abilities, as its files name them.
pub const ABILITIES: [&str; 10] = [
    "abstention",
    "contradiction_resolution",
    "event_ordering",
    "information_extraction",
    "instruction_following",
    "knowledge_update",
    "multi_session_reasoning",
    "preference_following",
    "summarization",
    "temporal_reasoning",
];

/// Every chat under `dir` (a chat's folder, or a folder of them, or a folder
/// of such folders as `100K/`, `500K/`), in path order (numbers by value).
pub fn load(dir: &Path) -> anyhow::Result<Vec<Chat>> {
    let mut folders = Vec::new();
    find_chats(dir, 0, &mut folders)?;
    ensure!(
        !folders.is_empty(),
        "no BEAM chat (a folder with chat.json) under {}",
        dir.display()
    );
    folders.sort_by_key(|p| sort_key(p.strip_prefix(dir).unwrap_or(p)));
    folders
        .iter()
        .map(|folder| {
            let id = folder
                .strip_prefix(dir)
                .ok()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or_else(|| Path::new(folder.file_name().unwrap_or_default()))
                .to_string_lossy()
                .into_owned();
            read_chat(folder, id.clone(), size_of(folder))
                .with_context(|| format!("read the BEAM chat {}", folder.display()))
        })
        .collect()
}

fn find_chats(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if dir.join("chat.json").is_file() {
        found.push(dir.to_owned());
        return Ok(());
    }
    if depth >= 3 {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).with_context(|| format!("read {}", dir.display()))?;
    for entry in entries.flatten() {
        if entry.path().is_dir() {
            find_chats(&entry.path(), depth + 1, found)?;
        }
    }
    Ok(())
}

/// `100K/12` after `100K/2`: each part compared as a number when it is one.
fn sort_key(path: &Path) -> Vec<(u64, String)> {
    path.components()
        .map(|c| {
            let part = c.as_os_str().to_string_lossy().into_owned();
            let number = part.trim_end_matches('K').parse().unwrap_or(u64::MAX);
            (number, part)
        })
        .collect()
}

fn read_json(path: &Path) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parse {}", path.display()))
}

/// The chat's size: the nearest folder above it named like `100K`.
fn size_of(folder: &Path) -> String {
    folder
        .ancestors()
        .skip(1)
        .filter_map(|p| p.file_name()?.to_str())
        .find(|name| name.ends_with('K') && name[..name.len() - 1].parse::<u32>().is_ok())
        .unwrap_or("BEAM")
        .to_owned()
}

fn read_chat(folder: &Path, id: String, group: String) -> anyhow::Result<Chat> {
    let batches = read_json(&folder.join("chat.json"))?;
    let batches = batches
        .as_array()
        .context("chat.json is not a list of batches")?;
    let mut sessions = Vec::new();
    // A batch's date is on its first message; a batch without one follows
    // the one before it by a week.
    let mut at: Option<DateTime<Utc>> = None;
    for (b, batch) in batches.iter().enumerate() {
        let messages: Vec<&Value> = batch["turns"]
            .as_array()
            .with_context(|| format!("batch {b}: no `turns`"))?
            .iter()
            .flat_map(|session| session.as_array().into_iter().flatten())
            .collect();
        let anchor = messages
            .iter()
            .chain(std::iter::once(&batch))
            .find_map(|m| m["time_anchor"].as_str());
        at = Some(match (anchor, at) {
            (Some(text), _) => anchor_time(text)?,
            (None, Some(before)) => before + chrono::Duration::days(7),
            (None, None) => anchor_time("January-01-2024")?,
        });
        let lines = messages
            .iter()
            .enumerate()
            .map(|(m, message)| {
                let role = match message["role"].as_str() {
                    Some("user") => Role::User,
                    Some("assistant") => Role::Assistant,
                    other => bail!("batch {b}, message {m}: role {other:?}"),
                };
                let source_id = match &message["id"] {
                    Value::Number(n) => n.to_string(),
                    Value::String(s) => s.clone(),
                    _ => bail!("batch {b}, message {m}: no `id`"),
                };
                let content = message["content"]
                    .as_str()
                    .with_context(|| format!("batch {b}, message {m}: no `content`"))?;
                Ok(Line {
                    source_id,
                    role,
                    text: without_marker(content).to_owned(),
                })
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        if !lines.is_empty() {
            sessions.push(Session {
                at: at.unwrap_or_default(),
                lines,
            });
        }
    }
    let probes = read_json(&folder.join("probing_questions.json"))?;
    let mut questions = Vec::new();
    for ability in ABILITIES {
        for (q, probe) in probes[ability].as_array().into_iter().flatten().enumerate() {
            let question = probe["question"]
                .as_str()
                .with_context(|| format!("{ability} {q}: no `question`"))?
                .to_owned();
            let (evidence, update) = evidence(&probe["source_chat_ids"])
                .with_context(|| format!("{ability} {q}: source_chat_ids"))?;
            questions.push(Question {
                ability,
                question,
                evidence,
                update,
            });
        }
    }
    Ok(Chat {
        id,
        source: Source::Beam,
        group,
        user: "user".to_owned(),
        sessions,
        questions,
    })
}

/// `March-15-2024`, at noon.
fn anchor_time(text: &str) -> anyhow::Result<DateTime<Utc>> {
    let day = NaiveDate::parse_from_str(text.trim(), "%B-%d-%Y")
        .with_context(|| format!("time anchor {text:?}"))?;
    Ok(day.and_hms_opt(12, 0, 0).unwrap_or_default().and_utc())
}

/// A message's words without BEAM's closing `->-> 1,1`.
fn without_marker(content: &str) -> &str {
    content
        .rfind("->->")
        .map_or(content, |at| &content[..at])
        .trim_end()
}

/// The evidence ids of `source_chat_ids` (a list, or an object of named
/// lists, or either written as a Python literal in a string), and for a
/// knowledge update its old and new messages.
fn evidence(field: &Value) -> anyhow::Result<(Vec<String>, Option<Update>)> {
    let parsed;
    let field = match field {
        Value::String(text) => {
            parsed = python_literal(text)?;
            &parsed
        }
        other => other,
    };
    let ids = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| match v {
                Value::Number(n) => Some(n.to_string()),
                Value::String(s) => Some(s.clone()),
                _ => None,
            })
            .collect()
    };
    Ok(match field {
        Value::Null => (Vec::new(), None),
        Value::Array(_) => (ids(field), None),
        Value::Object(parts) => {
            let all = parts.values().flat_map(&ids).collect();
            let update = match (parts.get("original_info"), parts.get("updated_info")) {
                (Some(original), Some(updated)) => Some(Update {
                    original: ids(original),
                    updated: ids(updated),
                }),
                _ => None,
            };
            (all, update)
        }
        other => bail!("neither a list nor an object: {other}"),
    })
}

/// The Python literals `source_chat_ids` is written in when it is a string:
/// lists and dicts of integers and quoted strings. Read, never evaluated.
fn python_literal(text: &str) -> anyhow::Result<Value> {
    let mut json = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                json.push('"');
            }
            (Some(q), c) if c == q => {
                quote = None;
                json.push('"');
            }
            (Some(_), '"') => json.push_str("\\\""),
            (Some(_), '\\') => json.push_str("\\\\"),
            (None, c) if c.is_ascii_digit() || "[]{},: -".contains(c) => json.push(c),
            (Some(_), c) => json.push(c),
            (None, c) => {
                bail!("{c:?} in {text:?}: only lists, dicts, integers and strings are read")
            }
        }
    }
    serde_json::from_str(&json).with_context(|| format!("read {text:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn python_literals_read_as_lists_and_objects_and_nothing_else() {
        assert_eq!(python_literal("[28, 30]").unwrap(), json!([28, 30]));
        assert_eq!(
            python_literal("{'original_info': [86], 'updated_info': [114]}").unwrap(),
            json!({"original_info": [86], "updated_info": [114]})
        );
        assert!(python_literal("__import__('os')").is_err());
        let (all, update) =
            evidence(&json!("{'original_info': [86], 'updated_info': [114]}")).unwrap();
        assert_eq!(all, ["86", "114"]);
        let update = update.unwrap();
        assert_eq!(
            (update.original, update.updated),
            (vec!["86".to_owned()], vec!["114".to_owned()])
        );
        assert_eq!(evidence(&json!([3, 5])).unwrap().0, ["3", "5"]);
        assert!(evidence(&Value::Null).unwrap().0.is_empty());
    }

    #[test]
    fn a_chat_reads_with_batches_as_dated_sessions_and_markers_cut() {
        let dir = tempfile::tempdir().unwrap();
        let chat = dir.path().join("100K").join("2");
        std::fs::create_dir_all(&chat).unwrap();
        let message = |id: u32, role: &str, text: &str, anchor: Option<&str>| {
            json!({"role": role, "id": id, "time_anchor": anchor, "index": "1,1",
                   "question_type": "main_question", "content": format!("{text} ->-> 1,{id}")})
        };
        let batches = json!([
            {"batch_number": 1, "time_anchor": null, "turns": [
                [message(0, "user", "I live in Lyon.", Some("March-15-2024")),
                 message(1, "assistant", "Noted.", None)]]},
            {"batch_number": 2, "time_anchor": null, "turns": [
                [message(2, "user", "We moved to Paris.", None)]]}
        ]);
        std::fs::write(chat.join("chat.json"), batches.to_string()).unwrap();
        let probes = json!({
            "knowledge_update": [{"question": "Where do I live?", "answer": "Paris",
                                  "source_chat_ids": {"original_info": [0], "updated_info": [2]}}],
            "abstention": [{"question": "What is my dog's name?", "ideal_response": "Not said."}]
        });
        std::fs::write(chat.join("probing_questions.json"), probes.to_string()).unwrap();
        let chats = load(dir.path()).unwrap();
        assert_eq!(chats.len(), 1);
        let chat = &chats[0];
        assert_eq!(chat.id, "100K/2");
        assert_eq!(chat.group, "100K");
        assert_eq!(chat.sessions.len(), 2);
        assert_eq!(chat.sessions[0].lines[0].text, "I live in Lyon.");
        assert_eq!(
            chat.sessions[0].at.to_rfc3339(),
            "2024-03-15T12:00:00+00:00"
        );
        assert_eq!(
            chat.sessions[1].at.to_rfc3339(),
            "2024-03-22T12:00:00+00:00",
            "a week on"
        );
        assert_eq!(chat.questions.len(), 2);
        assert!(chat.questions[0].evidence.is_empty(), "abstention has none");
        assert_eq!(chat.questions[1].evidence, ["0", "2"]);
        assert!(load(&dir.path().join("none")).is_err());
    }

    #[test]
    fn chats_sort_by_number() {
        let mut paths = [
            Path::new("100K/12"),
            Path::new("100K/2"),
            Path::new("500K/1"),
        ];
        paths.sort_by_key(|p| sort_key(p));
        assert_eq!(
            paths,
            [
                Path::new("100K/2"),
                Path::new("100K/12"),
                Path::new("500K/1")
            ]
        );
    }
}
