//! The server's JSON answers as text for a person at a terminal: a list as a
//! table (names, short ids, times, counts), one object as its fields, one per
//! line. Scripts get the JSON itself (`--json`, or any output that is not a
//! terminal).

use serde_json::{Map, Value};

/// The columns a list shows first, in this order, when its items have them;
/// other fields fill the table up to [`MAX_COLUMNS`].
const FIRST_COLUMNS: &[&str] = &[
    "name",
    "id",
    "kind",
    "role",
    "user_id",
    "title",
    "opening",
    "text",
    "content",
    "url",
    "status",
    "state",
    "score",
    "times_said",
    "message_count",
    "chunk_count",
    "version",
    "prefix",
    "at",
    "started_at",
    "last_message_at",
    "created_at",
];

/// Fields that are never a column: ids of what the list is already about,
/// and bookkeeping a person does not read in a table.
const NOT_COLUMNS: &[&str] = &["tenant_id", "hash", "metadata", "updated_at"];

const MAX_COLUMNS: usize = 6;

/// Text longer than this many characters is cut, with "…".
const MAX_CELL_CHARS: usize = 60;

/// `answer` as a person reads it.
pub fn render(answer: &Value) -> String {
    match answer {
        Value::Object(object) => match object.get("items") {
            Some(Value::Array(items)) if items.iter().any(|i| i.get("explanation").is_some()) => {
                explained_hits(items)
            }
            Some(Value::Array(items)) => {
                let mut text = table(items);
                if let Some(Value::String(cursor)) = object.get("next_cursor") {
                    text.push_str(&format!("(more: --cursor {cursor})\n"));
                }
                text
            }
            _ if is_profile(object) => profile(object),
            _ => match object.get("explanation") {
                Some(explanation) => {
                    let mut rest = object.clone();
                    rest.remove("explanation");
                    let mut text = fields(&rest);
                    text.push_str(&candidates(explanation));
                    text
                }
                None => fields(object),
            },
        },
        Value::Array(items) => table(items),
        other => format!("{}\n", cell(other, false)),
    }
}

/// A user's profile, as the server answers it.
fn is_profile(object: &Map<String, Value>) -> bool {
    ["instructions", "preferences", "facts", "recent_episodes"]
        .iter()
        .all(|key| object.contains_key(*key))
}

/// A profile as a person reads it: who, how much they talked, then each
/// kind of fact under its heading, then their recent conversations.
fn profile(object: &Map<String, Value>) -> String {
    let date = |value: &Value| {
        value
            .as_str()
            .map_or("-".to_owned(), |t| t.chars().take(10).collect())
    };
    let mut text = format!("{}\n", cell(&object["user_id"], false));
    if let Some(activity) = object.get("activity").filter(|a| a.is_object()) {
        text.push_str(&format!(
            "{} conversations, {} episodes, {} messages; since {}, last active {}\n",
            activity["conversations"],
            activity["episodes"],
            activity["messages"],
            date(&activity["first_seen_at"]),
            date(&activity["last_active_at"]),
        ));
    }
    if let Some(summary) = object.get("summary").and_then(|s| s["text"].as_str()) {
        text.push_str(&format!("\n{summary}\n"));
    }
    let mut section = |heading: String, facts: &Value| {
        let facts = facts.as_array().map(Vec::as_slice).unwrap_or_default();
        if facts.is_empty() {
            return;
        }
        text.push_str(&format!("\n{heading}\n"));
        for fact in facts {
            let words = fact["text"].as_str().unwrap_or_default();
            text.push_str(&format!("  - {words} (since {})\n", date(&fact["since"])));
        }
    };
    section("Instructions".to_owned(), &object["instructions"]);
    section("Preferences".to_owned(), &object["preferences"]);
    for group in object["facts"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let heading = group["category"]
            .as_str()
            .unwrap_or("Other facts")
            .to_owned();
        section(heading, &group["facts"]);
    }
    let episodes = object["recent_episodes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if !episodes.is_empty() {
        text.push_str("\nRecent conversations\n");
        for episode in episodes {
            let summary = episode["summary"].as_str().unwrap_or_default();
            text.push_str(&format!("  {}  {summary}\n", date(&episode["started_at"])));
        }
    }
    text
}

/// Recall hits with their explanations: a line each, and under it the
/// searches that found it and each reordering that moved it.
fn explained_hits(items: &[Value]) -> String {
    let number = |value: &Value| value.as_f64().map_or("-".to_owned(), |n| format!("{n:.3}"));
    let mut text = String::new();
    for (place, hit) in items.iter().enumerate() {
        text.push_str(&format!(
            "{}. {} {}  {}\n",
            place + 1,
            number(&hit["score"]),
            cell(&hit["kind"], false),
            cell(&hit["text"], true),
        ));
        let explanation = &hit["explanation"];
        let found: Vec<String> = explanation["found_by"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|found| {
                let looked_for = match found["looked_for"].as_str() {
                    Some(words) => format!(" \"{words}\""),
                    None => String::new(),
                };
                format!(
                    "{}{looked_for} #{} ({}, adds {})",
                    cell(&found["search"], false),
                    found["rank"],
                    number(&found["score"]),
                    number(&found["contribution"]),
                )
            })
            .collect();
        let found = match found.is_empty() {
            true => "next to a turn that was found".to_owned(),
            false => found.join(", "),
        };
        text.push_str(&format!("   found by {found}\n"));
        let mut scores = format!(
            "   {} fusion {} → in context {}",
            cell(&explanation["fusion"], false),
            number(&explanation["fused"]),
            number(&explanation["in_context"]),
        );
        for moved in explanation["moved"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            scores.push_str(&format!(
                "; {} moved it {} → {}",
                cell(&moved["by"], false),
                moved["from"],
                moved["to"]
            ));
        }
        text.push_str(&scores);
        text.push('\n');
    }
    text
}

/// A context's candidates, a line each: kept or why not, its block, its id.
fn candidates(explanation: &Value) -> String {
    let mut rows = vec![vec![
        "fate".to_owned(),
        "block".to_owned(),
        "id".to_owned(),
        "score".to_owned(),
        "shown in".to_owned(),
    ]];
    for candidate in explanation["candidates"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        rows.push(
            ["fate", "block", "id", "score", "shown_in"]
                .iter()
                .map(|field| cell(&candidate[*field], true))
                .collect(),
        );
    }
    format!(
        "\nWhy each candidate was kept or left out\n{}",
        aligned(&rows)
    )
}

/// Items as a table: a header, then a row each.
fn table(items: &[Value]) -> String {
    if items.is_empty() {
        return "(none)\n".to_owned();
    }
    let columns = columns(items);
    if columns.is_empty() {
        return items
            .iter()
            .map(|item| format!("{}\n", cell(item, false)))
            .collect();
    }
    let mut rows: Vec<Vec<String>> = vec![columns.iter().map(|c| c.to_string()).collect()];
    for item in items {
        rows.push(
            columns
                .iter()
                .map(|column| cell(&item[column.as_str()], true))
                .collect(),
        );
    }
    aligned(&rows)
}

/// The scalar fields the items share, the [`FIRST_COLUMNS`] first.
fn columns(items: &[Value]) -> Vec<String> {
    let mut present: Vec<String> = Vec::new();
    for item in items {
        let Value::Object(object) = item else {
            continue;
        };
        for (key, value) in object {
            let shown = is_scalar(value) || is_text_of(value);
            if shown && !NOT_COLUMNS.contains(&key.as_str()) && !present.contains(key) {
                present.push(key.clone());
            }
        }
    }
    let mut columns: Vec<String> = FIRST_COLUMNS
        .iter()
        .filter(|column| present.iter().any(|p| p == *column))
        .map(|column| column.to_string())
        .collect();
    // Other fields fill the rest; ids of other objects (`agent_id`, …) are
    // left to the JSON, where a script reads them.
    for key in present {
        if columns.len() >= MAX_COLUMNS {
            break;
        }
        if !columns.contains(&key) && !key.ends_with("_id") {
            columns.push(key);
        }
    }
    columns.truncate(MAX_COLUMNS);
    columns
}

/// One object: its fields, one per line, the [`FIRST_COLUMNS`] first, ids
/// whole (to be copied into the next command).
fn fields(object: &Map<String, Value>) -> String {
    let rank = |key: &str| {
        FIRST_COLUMNS
            .iter()
            .position(|first| *first == key)
            .unwrap_or(FIRST_COLUMNS.len())
    };
    let mut keys: Vec<&String> = object.keys().collect();
    keys.sort_by_key(|key| rank(key));
    let rows: Vec<Vec<String>> = keys
        .into_iter()
        .map(|key| vec![format!("{key}:"), summary(&object[key])])
        .collect();
    aligned(&rows)
}

/// A nested value in one line: a list's length, an object's name or id.
fn summary(value: &Value) -> String {
    match value {
        Value::Array(items) if items.iter().all(is_scalar) && items.len() <= 8 => items
            .iter()
            .map(|item| cell(item, false))
            .collect::<Vec<_>>()
            .join(", "),
        Value::Array(items) => match items.len() {
            1 => "1 item".to_owned(),
            n => format!("{n} items"),
        },
        Value::Object(object) => {
            let named = ["name", "text", "id"]
                .iter()
                .find_map(|key| object.get(*key).filter(|v| is_scalar(v)));
            match named {
                Some(value) => cell(value, false),
                None => {
                    let inner: Vec<String> = object
                        .iter()
                        .filter(|(_, v)| is_scalar(v))
                        .map(|(k, v)| format!("{k}={}", cell(v, false)))
                        .collect();
                    cut(&inner.join(" "), MAX_CELL_CHARS * 2)
                }
            }
        }
        other => cell(other, false),
    }
}

fn is_scalar(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

/// A message's content given as parts (text and images): read as its text.
fn is_text_of(value: &Value) -> bool {
    matches!(value, Value::Array(parts) if parts.iter().all(|p| p.get("type").is_some()))
}

/// One value as a cell: ids shortened to their first 8 characters when
/// `short_ids`, times to the minute, long text cut, nothing as "-".
fn cell(value: &Value, short_ids: bool) -> String {
    match value {
        Value::Null => "-".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => format!("{f:.3}"),
            _ => n.to_string(),
        },
        Value::String(text) if short_ids && octopus_client::is_id(text) => {
            text.chars().take(8).collect()
        }
        Value::String(text) if is_time(text) => format!("{} {}", &text[..10], &text[11..16]),
        Value::String(text) => cut(
            &text.split_whitespace().collect::<Vec<_>>().join(" "),
            MAX_CELL_CHARS,
        ),
        Value::Array(parts) if is_text_of(value) => cut(
            &parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            MAX_CELL_CHARS,
        ),
        other => cut(&other.to_string(), MAX_CELL_CHARS),
    }
}

/// Whether `text` is an RFC 3339 time, as the API writes them.
fn is_time(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= 20
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes[10] == b'T'
        && bytes[13] == b':'
        && bytes[..4].iter().all(u8::is_ascii_digit)
}

fn cut(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", text[..at].trim_end()),
        None => text.to_owned(),
    }
}

/// Rows with each column as wide as its widest cell, two spaces apart; the
/// last column not padded.
fn aligned(rows: &[Vec<String>]) -> String {
    let width = |column: usize| {
        rows.iter()
            .map(|row| row.get(column).map_or(0, |c| c.chars().count()))
            .max()
            .unwrap_or(0)
    };
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns).map(width).collect();
    let mut text = String::new();
    for row in rows {
        let mut line = String::new();
        for (column, value) in row.iter().enumerate() {
            if column + 1 == row.len() {
                line.push_str(value);
            } else {
                let pad = widths[column] - value.chars().count();
                line.push_str(value);
                line.push_str(&" ".repeat(pad + 2));
            }
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_profile_reads_as_headed_lists() {
        let fact = |text: &str| json!({"id": "f", "text": text, "since": "2026-03-02T10:00:00Z", "source": "learned"});
        let profile = json!({
            "agent_id": "a", "user_id": "alice",
            "activity": {"conversations": 2, "episodes": 3, "messages": 40,
                "first_seen_at": "2026-01-05T09:00:00Z", "last_active_at": "2026-03-02T10:00:00Z"},
            "instructions": [fact("Always answer in French.")],
            "preferences": [],
            "facts": [{"category": "travel", "facts": [fact("Alice flies to Lisbon on 12 May, with her sister Ana and their two children")]},
                      {"category": null, "facts": [fact("Alice works nights")]}],
            "recent_episodes": [{"episode_id": "e", "conversation_id": "c",
                "started_at": "2026-03-01T08:00:00Z", "summary": "Alice planned her Lisbon trip."}],
            "summary": {"text": "Alice, a night nurse, is flying to Lisbon in May.", "fact_ids": [], "written_at": "2026-03-02T10:00:00Z"}
        });
        assert_eq!(
            render(&profile),
            "alice\n2 conversations, 3 episodes, 40 messages; since 2026-01-05, last active 2026-03-02\n\n\
             Alice, a night nurse, is flying to Lisbon in May.\n\n\
             Instructions\n  - Always answer in French. (since 2026-03-02)\n\n\
             travel\n  - Alice flies to Lisbon on 12 May, with her sister Ana and their two children (since 2026-03-02)\n\n\
             Other facts\n  - Alice works nights (since 2026-03-02)\n\n\
             Recent conversations\n  2026-03-01  Alice planned her Lisbon trip.\n"
        );
    }

    #[test]
    fn an_explained_hit_says_what_found_it_and_what_moved_it() {
        let hits = json!({"items": [{"kind": "fact", "text": "Ann has moved house to Paris", "score": 0.8,
            "explanation": {"fusion": "standardised", "fused": 0.7, "in_context": 0.8,
                "found_by": [{"search": "name", "looked_for": "Ann", "rank": 1, "score": 2.5, "weight": 0.25, "contribution": 0.25},
                             {"search": "vector", "rank": 3, "score": 0.41, "weight": 0.5, "contribution": 0.45}],
                "moved": [{"by": "held_at_time_asked", "from": 2, "to": 1}]}}]});
        assert_eq!(
            render(&hits),
            "1. 0.800 fact  Ann has moved house to Paris\n   \
             found by name \"Ann\" #1 (2.500, adds 0.250), vector #3 (0.410, adds 0.450)\n   \
             standardised fusion 0.700 → in context 0.800; held_at_time_asked moved it 2 → 1\n"
        );
        let context = json!({"tokenizer": "o200k_base", "explanation": {"candidates": [
            {"fate": "over_budget", "block": "episodic", "id": "0b7f5a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "score": 0.25, "kept": false}]}});
        assert_eq!(
            render(&context),
            "tokenizer:  o200k_base\n\nWhy each candidate was kept or left out\n\
             fate         block     id        score  shown in\n\
             over_budget  episodic  0b7f5a4e  0.250  -\n"
        );
    }

    #[test]
    fn a_list_is_a_table_of_names_short_ids_times_and_counts() {
        let agents = json!({"items": [
            {"id": "0b7f5a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "tenant_id": "9b7f5a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
             "name": "support", "system_prompt": "You are Acme's support agent.\nBe brief.",
             "llm": {"provider": "openai", "model": "gpt-4o-mini"},
             "created_at": "2026-03-02T10:00:00.123456Z"},
            {"id": "1b7f5a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "tenant_id": "9b7f5a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
             "name": "concierge", "system_prompt": null, "llm": {"provider": "ollama", "model": "llama3.2"},
             "created_at": "2026-03-03T11:30:00Z"}
        ], "next_cursor": null});
        assert_eq!(
            render(&agents),
            "name       id        created_at        system_prompt\n\
             support    0b7f5a4e  2026-03-02 10:00  You are Acme's support agent. Be brief.\n\
             concierge  1b7f5a4e  2026-03-03 11:30  -\n"
        );
    }

    #[test]
    fn one_object_is_its_fields_and_nested_values_in_a_line() {
        let key = json!({"id": "0b7f5a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b", "name": "init",
                         "prefix": "oct_1a2b3c4d", "scopes": ["read", "write"],
                         "agent": {"name": "support", "id": "x"}, "calls": [{"a": 1}, {"a": 2}],
                         "revoked_at": null});
        assert_eq!(
            render(&key),
            "name:        init\n\
             id:          0b7f5a4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b\n\
             prefix:      oct_1a2b3c4d\n\
             agent:       support\n\
             calls:       2 items\n\
             revoked_at:  -\n\
             scopes:      read, write\n"
        );
    }

    #[test]
    fn long_text_is_cut_and_an_empty_list_says_so() {
        let long = "word ".repeat(40);
        let hits = json!({"items": [{"kind": "message", "text": long, "score": 0.5}]});
        let shown = render(&hits);
        let row = shown.lines().nth(1).unwrap();
        assert!(row.ends_with('…') || row.contains("… "), "{row}");
        assert!(row.chars().count() < 90, "{row}");
        assert_eq!(render(&json!({"items": []})), "(none)\n");
        assert_eq!(
            render(&json!({"items": [{"name": "a"}], "next_cursor": "abc"})),
            "name\na\n(more: --cursor abc)\n"
        );
    }
}
