//! `octopus-bench beam` end to end on a slice of two chats written in
//! BEAM's shape (batches of sessions of messages with ids, questions of
//! several abilities naming their evidence ids, a knowledge update naming
//! the old and the new message): the local model embeds them, and the
//! tables it prints are read back.

#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

/// A chat of two batches a few weeks apart: `said` are the user's messages,
/// each answered by the assistant.
fn write_chat(dir: &Path, first_day: &str, said: [&[&str]; 2], questions: Value) {
    std::fs::create_dir_all(dir).unwrap();
    let mut id = 0;
    let batches: Vec<Value> = said
        .iter()
        .enumerate()
        .map(|(b, messages)| {
            let mut turns = Vec::new();
            for (i, text) in messages.iter().enumerate() {
                let anchor = (b == 0 && i == 0).then_some(first_day);
                let user = json!({"role": "user", "id": id, "time_anchor": anchor,
                                  "index": format!("{},{}", b + 1, i + 1), "question_type": "main_question",
                                  "content": format!("{text} ->-> {},{}", b + 1, i + 1)});
                let assistant = json!({"role": "assistant", "id": id + 1, "time_anchor": null,
                                       "index": format!("{},{}", b + 1, i + 1), "question_type": "main_question",
                                       "content": "Thanks, noted. Let me know what you would like to do next."});
                id += 2;
                turns.push(json!([user, assistant]));
            }
            json!({"batch_number": b + 1, "time_anchor": null, "turns": turns})
        })
        .collect();
    std::fs::write(dir.join("chat.json"), Value::from(batches).to_string()).unwrap();
    std::fs::write(dir.join("probing_questions.json"), questions.to_string()).unwrap();
}

fn write_slice(root: &Path) {
    write_chat(
        &root.join("100K").join("1"),
        "March-15-2024",
        [
            &[
                "I'm building a budget tracker in Flask, and my first sprint ends on March 29.",
                "Always format code snippets with syntax highlighting when I ask about implementation details.",
                "The dashboard API answers in about 400 ms at the moment.",
            ],
            &[
                "I added a category column to the transactions table.",
                "After the caching tweaks the dashboard API answers in 250 ms.",
                "I also want a notes column on the transactions table.",
            ],
        ],
        json!({
            "information_extraction": [{"question": "When does my first sprint end?", "answer": "March 29",
                                        "source_chat_ids": [0]}],
            "knowledge_update": [{"question": "What is the response time of the dashboard API?", "answer": "250 ms",
                                  "source_chat_ids": {"original_info": [4], "updated_info": [8]}}],
            "multi_session_reasoning": [{"question": "Which columns did I add to the transactions table?",
                                         "answer": "category and notes", "source_chat_ids": "[6, 10]"}],
            "abstention": [{"question": "What is my dog called?", "ideal_response": "Not said."}]
        }),
    );
    write_chat(
        &root.join("100K").join("2"),
        "June-01-2024",
        [
            &[
                "I'm planning a hiking trip to the Alps with three friends in August.",
                "I prefer trains over flights whenever the journey is under eight hours.",
                "The hut near the glacier costs 60 euros a night.",
            ],
            &[
                "We booked the train from Paris to Chamonix for August 3.",
                "The hut near the glacier now costs 75 euros a night after the new season pricing.",
                "My friend Lena will bring the climbing rope.",
            ],
        ],
        json!({
            "information_extraction": [{"question": "Who is bringing the climbing rope?", "answer": "Lena",
                                        "source_chat_ids": [10]}],
            "knowledge_update": [{"question": "How much does the glacier hut cost per night?", "answer": "75 euros",
                                  "source_chat_ids": {"original_info": [4], "updated_info": [8]}}],
        }),
    );
}

/// The cells of the row of the recall table for `mode` and `ability`.
fn row(printed: &str, mode: &str, ability: &str) -> Vec<String> {
    printed
        .lines()
        .find(|line| line.starts_with(&format!("| {mode} | {ability} |")))
        .unwrap_or_else(|| panic!("no row for {mode} {ability}:\n{printed}"))
        .split('|')
        .map(|cell| cell.trim().to_owned())
        .filter(|cell| !cell.is_empty())
        .collect()
}

/// What `octopus-bench beam` printed on the slice, with `more` arguments,
/// having checked that it succeeded.
fn run_on_the_slice(more: &[&str]) -> String {
    let data = tempfile::tempdir().unwrap();
    write_slice(data.path());
    let output = Command::new(env!("CARGO_BIN_EXE_octopus-bench"))
        .args(["beam", "--data"])
        .arg(data.path())
        .args(more)
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{printed}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    printed
}

/// The tables' figures that hold whatever the ranking: every question with
/// evidence counted in each mode, recall that grows with depth and is whole
/// at 20 (a chat holds twelve messages), both updates judged, and a
/// question naming its evidence's own words finding it first.
fn check_tables(printed: &str) {
    for mode in ["keyword", "vector", "hybrid"] {
        // mode, ability, questions, R@5, R@10, R@20, new value first
        let all = row(printed, mode, "all");
        assert_eq!(
            all[2], "5",
            "the abstention question has no evidence: {printed}"
        );
        let recall: Vec<f64> = all[3..6].iter().map(|c| c.parse().unwrap()).collect();
        assert!(
            recall[0] <= recall[1] && recall[1] <= recall[2],
            "{printed}"
        );
        assert_eq!(all[5], "1.000", "{printed}");
        let updates = row(printed, mode, "knowledge_update");
        assert_eq!(updates[2], "2", "{printed}");
        assert!(updates[6].ends_with(" of 2"), "{printed}");
    }
    for mode in ["keyword", "hybrid"] {
        assert_eq!(
            row(printed, mode, "information_extraction")[3],
            "1.000",
            "{printed}"
        );
    }
    // Each size's row, and the context table over the same questions.
    assert!(printed.contains("| 100K | 2 | 5 |"), "{printed}");
    let context = printed
        .lines()
        .skip_while(|l| !l.starts_with("### Evidence in context"))
        .find(|l| l.starts_with("| all |"))
        .unwrap_or_else(|| panic!("no context table: {printed}"));
    assert!(context.starts_with("| all | 5 |"), "{printed}");
}

#[test]
fn the_beam_bench_scores_a_slice_by_ability_with_the_update_order() {
    let printed = run_on_the_slice(&[]);
    assert!(
        printed.contains("2 chats, 24 messages, 5 questions with evidence"),
        "{printed}"
    );
    check_tables(&printed);
    assert!(
        printed.contains("### Evidence in context (default agent settings)"),
        "{printed}"
    );
}

#[test]
fn the_beam_bench_goes_through_the_http_api_too() {
    let printed = run_on_the_slice(&["--http"]);
    assert!(printed.contains("over HTTP: imported in"), "{printed}");
    check_tables(&printed);
    assert!(
        printed.contains("### Evidence in context (over HTTP, default agent settings)"),
        "{printed}"
    );
}
