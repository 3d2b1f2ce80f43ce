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

/// The cells of the harness's table row for `prompt`.
fn row(printed: &str, prompt: &str) -> Vec<String> {
    printed
        .lines()
        .find(|line| line.starts_with(&format!("| {prompt} |")))
        .unwrap_or_else(|| panic!("no row for {prompt}:\n{printed}"))
        .split('|')
        .map(|cell| cell.trim().to_owned())
        .filter(|cell| !cell.is_empty())
        .collect()
}

/// Runs `octopus-bench locomo` on [`conversation`] with the loopback fake as
/// the answering and judging model, and `more` arguments (`FAKE_URL` in them
/// stands for the fake's base URL); what it printed, having checked that it
/// succeeded, and the fake.
async fn run_against_the_fake(more: &'static [&'static str]) -> (String, Arc<ChatProvider>) {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("1.json"), conversation().to_string()).unwrap();
    let fake = Arc::new(ChatProvider::default());
    let url = format!("{}/v1", fake_chat::serve(Arc::clone(&fake)).await);

    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_octopus-bench"))
            .args(["locomo", "--data"])
            .arg(data.path())
            .args(["--answer-model", &url, "--judge-model", &url])
            .args(more.iter().map(|arg| arg.replace("FAKE_URL", &url)))
            .env("OPENAI_API_KEY", "sk-test")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{printed}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (printed, fake)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_judged_for_octopus_and_both_baselines() {
    let (printed, fake) = run_against_the_fake(&[]).await;
    let row = |prompt: &str| row(&printed, prompt);
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

/// With `--sub-questions-model`, every recall first has the agent's model
/// split its question (the fake gives "What about Name?" per name), and the
/// evidence is still found and the answers still right.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recall_with_sub_questions_asks_the_agents_model_and_still_finds_the_evidence() {
    let (printed, fake) = run_against_the_fake(&[
        "--sub-questions-model",
        "FAKE_URL",
        "--sub-questions-model-name",
        "model-sub",
    ])
    .await;
    let octopus = row(&printed, "octopus");
    assert_eq!(&octopus[1..4], ["1.000", "1.000", "2"], "{printed}");
    let split: Vec<String> = fake
        .received()
        .iter()
        .filter(|r| r.body["model"] == "model-sub")
        .map(|r| {
            r.body["messages"][1]["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    // Each question, in each recall mode (keyword, vector, hybrid), then
    // for its context and its answer.
    for question in [
        "Which instrument has Melanie played in the park orchestra?",
        "In which country has Caroline grown up?",
    ] {
        let times = split.iter().filter(|asked| *asked == question).count();
        assert!(times >= 4, "{question} split {times} times: {split:?}");
    }
    assert!(printed.contains("sub-questions by model-sub"), "{printed}");
}

/// The same harness against a real model, not a fake: Gemma 3 270M run by
/// llama.cpp behind OpenAI's wire format (`small_model_server.mjs`), as the
/// answering model and as the judge. A model this small answers badly, so
/// what is checked is what does not depend on its wits: with every recall's
/// question split into sub-questions by it, every question is answered and
/// judged from each prompt, J is a share, and the prompts' sizes, counted by
/// the model's own tokenizer, are as the harness built them (the question
/// alone smallest).
#[cfg(feature = "small-model-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_small_model_answers_and_judges_from_each_prompt() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    let model = std::env::var("OCTOPUS_TEST_SMALL_MODEL")
        .expect("OCTOPUS_TEST_SMALL_MODEL: scripts/clients.sh fetches the model");
    let node_modules = std::env::var("OCTOPUS_TEST_LLM_NODE_MODULES")
        .expect("OCTOPUS_TEST_LLM_NODE_MODULES: scripts/clients.sh installs node-llama-cpp");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/small_model_server.mjs");
    let mut server = Command::new("node")
        .args([script, &model, &node_modules])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start node");
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().expect("the model server exited").unwrap();
        if let Some(url) = line.strip_prefix("listening on ") {
            break url.to_owned();
        }
    };
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("1.json"), conversation().to_string()).unwrap();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_octopus-bench"))
            .args(["locomo", "--data"])
            .arg(data.path())
            .args(["--answer-model", &url, "--judge-model", &url])
            .args([
                "--answer-model-name",
                "gemma-3-270m",
                "--judge-model-name",
                "gemma-3-270m",
            ])
            // And every recall's question split by it into sub-questions.
            .args(["--sub-questions-model", &url])
            .args(["--sub-questions-model-name", "gemma-3-270m"])
            .env("OPENAI_API_KEY", "sk-local")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    server.kill().unwrap();
    server.wait().unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{printed}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let row = |prompt: &str| row(&printed, prompt);
    let tokens = |cells: &[String]| cells[4].parse::<f64>().unwrap();
    let rows = ["octopus", "full history", "no memory"].map(row);
    for cells in &rows {
        assert_eq!(
            cells[3], "2",
            "both questions answered and judged: {printed}"
        );
        let j: f64 = cells[2].parse().unwrap();
        assert!((0.0..=1.0).contains(&j), "{printed}");
        assert!(
            tokens(cells) > 0.0,
            "the model counted its prompt: {printed}"
        );
    }
    let [octopus, full, none] = &rows;
    assert!(tokens(none) < tokens(octopus), "{printed}");
    assert!(tokens(none) < tokens(full), "{printed}");
}
