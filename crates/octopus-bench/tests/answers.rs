//! `octopus-bench locomo --answer-model --judge-model` end to end, on a
//! conversation of two sessions and two questions, with both models the
//! loopback fake on OpenAI's wire format: its answering model can only read
//! (it answers with the line of its prompt closest to the question) and its
//! judge calls an answer CORRECT when it holds the gold answer. So the
//! answers are right exactly when the prompt held the evidence.

#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

use std::process::Command;
use std::sync::Arc;

use octopus_testkit::fake_chat::{self, ChatProvider};
use serde_json::json;

fn conversation() -> serde_json::Value {
    let turn = |speaker: &str, id: &str, text: &str| json!({"speaker": speaker, "dia_id": id, "text": text});
    json!({
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                turn("Caroline", "D1:1", "Hey Mel, how was the weekend?"),
                turn("Melanie", "D1:2", "Lovely. I played the violin in the park orchestra."),
                turn("Caroline", "D1:3", "That sounds wonderful."),
            ],
            "session_2_date_time": "10:00 am on 20 June, 2023",
            "session_2": [
                turn("Melanie", "D2:1", "Did you ever tell me where you grew up?"),
                turn("Caroline", "D2:2", "I have grown up in Sweden, a country of lakes."),
                turn("Melanie", "D2:3", "I would love to visit one day."),
            ],
        },
        "qa": [
            {"question": "Which instrument has Melanie played in the park orchestra?", "answer": "violin",
             "evidence": ["D1:2"], "category": 4},
            {"question": "In which country has Caroline grown up?", "answer": "Sweden",
             "evidence": ["D2:2"], "category": 4},
            {"question": "What is Caroline's favourite colour?", "adversarial_answer": "blue",
             "evidence": [], "category": 5},
        ],
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_judged_for_octopus_and_both_baselines() {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("1.json"), conversation().to_string()).unwrap();
    let fake = Arc::new(ChatProvider::default());
    let url = format!("{}/v1", fake_chat::serve(Arc::clone(&fake)).await);

    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_octopus-bench"))
            .args(["locomo", "--data"])
            .arg(data.path())
            .args(["--answer-model", &url, "--judge-model", &url])
            .env("OPENAI_API_KEY", "sk-test")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{printed}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let row = |prompt: &str| -> Vec<String> {
        printed
            .lines()
            .find(|line| line.starts_with(&format!("| {prompt} |")))
            .unwrap_or_else(|| panic!("no row for {prompt}:\n{printed}"))
            .split('|')
            .map(|cell| cell.trim().to_owned())
            .filter(|cell| !cell.is_empty())
            .collect()
    };
    // prompt, single-hop J, all J, questions, prompt tokens, latency
    let octopus = row("octopus");
    let full = row("full history");
    let none = row("no memory");
    assert_eq!(&octopus[1..4], ["1.000", "1.000", "2"], "{printed}");
    assert_eq!(&full[1..4], ["1.000", "1.000", "2"], "{printed}");
    assert_eq!(&none[1..4], ["0.000", "0.000", "2"], "{printed}");
    // The adversarial question was not asked: two questions, three prompts,
    // an answer and a verdict each.
    let judged = fake
        .received()
        .iter()
        .filter(|r| r.body["response_format"]["type"] == "json_object")
        .count();
    assert_eq!(judged, 6);
    let tokens = |cells: &[String]| cells[4].parse::<f64>().unwrap();
    assert!(tokens(&none) < tokens(&octopus), "{printed}");
}
