//! Two `octopus serve` processes on one PostgreSQL database: what one writes
//! the other reads, recalls and puts in context; they share the memory
//! queue, each job done once; and killing one mid-work loses no job.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::fairness::metrics;
use crate::process::Server;

const SESSIONS: usize = 12;
const TURNS: usize = 20;

/// Summaries are extractive (no model to call), and a lease short enough
/// that a killed server's jobs come back within the test.
const CONFIG: &str = "[llm]\nsummarise_episodes = false\n[worker]\njob_lease_secs = 3\n";

fn sessions(topic: &str) -> Value {
    let sessions: Vec<Value> = (0..SESSIONS)
        .map(|s| {
            let messages: Vec<Value> = (0..TURNS)
                .map(|t| {
                    let role = if t % 2 == 0 { "user" } else { "assistant" };
                    json!({
                        "role": role,
                        "content": format!("Session {s}, turn {t}: more about {topic}, part {}", s * TURNS + t),
                        "timestamp": format!("2026-02-{:02}T10:{:02}:00Z", 1 + s, t),
                    })
                })
                .collect();
            json!({"messages": messages})
        })
        .collect();
    Value::Array(sessions)
}

/// The jobs an import of [`sessions`] queues: every turn's embedding and
/// every session's summary.
const JOBS_PER_IMPORT: f64 = (SESSIONS * TURNS + SESSIONS) as f64;

fn counter(samples: &HashMap<String, f64>, outcome: &str) -> f64 {
    samples
        .get(&format!(
            "octopus_memory_jobs_completed_total{{outcome=\"{outcome}\"}}"
        ))
        .copied()
        .unwrap_or(0.0)
}

fn waiting(samples: &HashMap<String, f64>) -> f64 {
    samples
        .iter()
        .filter(|(series, _)| series.starts_with("octopus_memory_jobs_queued{"))
        .map(|(_, value)| value)
        .sum()
}

async fn wait_until_drained(server: &Server, within: Duration) {
    let deadline = Instant::now() + within;
    while waiting(&metrics(server).await) > 0.0 {
        assert!(
            Instant::now() < deadline,
            "the memory queue was not drained"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn start(dir: &Path, name: &str, database: &str) -> Server {
    let config = dir.join("octopus.toml");
    std::fs::write(&config, CONFIG).unwrap();
    Server::start_on(&dir.join(name), Some(&config), Some(database))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_share_one_database_and_its_memory_queue() {
    let database = octopus_postgres::testing::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let first = start(dir.path(), "first", &database);
    let second = start(dir.path(), "second", &database);

    // Written through the first server.
    let (_, key, agent) = first.tenant_with_agent("acme").await;
    let imported = first
        .call(
            &key,
            Method::POST,
            "/v1/conversations/import",
            Some(json!({"agent_id": agent, "user_id": "dana", "sessions": sessions("the lighthouse restoration")})),
        )
        .await;
    let conversation = imported["conversation"]["id"].as_str().unwrap().to_owned();
    let live = first
        .call(
            &key,
            Method::POST,
            "/v1/conversations",
            Some(json!({"agent_id": agent, "user_id": "dana"})),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    first
        .call(
            &key,
            Method::POST,
            &format!("/v1/conversations/{live}/messages"),
            Some(json!({"messages": [{"role": "user", "content": "My sister Imogen is getting married in Porto in June"}]})),
        )
        .await;

    // Read through the second: the same key, the same messages.
    let read = second.conversation_messages(&key, &conversation).await;
    assert_eq!(read.len(), SESSIONS * TURNS);

    // Both workers drain the queue; each job is stored once, by one of them.
    wait_until_drained(&second, Duration::from_secs(120)).await;
    let (a, b) = (metrics(&first).await, metrics(&second).await);
    let stored = counter(&a, "stored") + counter(&b, "stored");
    eprintln!(
        "jobs stored: first {}, second {}; superseded: {} and {}",
        counter(&a, "stored"),
        counter(&b, "stored"),
        counter(&a, "superseded"),
        counter(&b, "superseded")
    );
    assert_eq!(
        stored,
        JOBS_PER_IMPORT + 1.0,
        "every job stored exactly once"
    );
    assert!(
        counter(&a, "stored") > 0.0 && counter(&b, "stored") > 0.0,
        "both servers did some of the work"
    );

    // Recall and context through the second server.
    let recalled = second
        .call(
            &key,
            Method::POST,
            &format!("/v1/agents/{agent}/recall"),
            Some(json!({"user_id": "dana", "query": "a wedding in Portugal", "mode": "vector", "top_k": 3})),
        )
        .await;
    assert!(
        recalled["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|hit| hit["window"]["message"].to_string().contains("Imogen")),
        "{recalled}"
    );
    let context = second
        .call(
            &key,
            Method::POST,
            &format!("/v1/conversations/{live}/context"),
            Some(json!({"message": "What is happening with the lighthouse?"})),
        )
        .await;
    let text = context["messages"].to_string();
    assert!(
        text.contains("Imogen"),
        "history from the first server: {text}"
    );
    assert!(
        text.contains("lighthouse restoration"),
        "recalled memories: {text}"
    );

    // More work, and the first server killed in the middle of it: the second
    // takes over the killed one's jobs once their lease runs out.
    first
        .call(
            &key,
            Method::POST,
            "/v1/conversations/import",
            Some(json!({"agent_id": agent, "user_id": "erin", "sessions": sessions("the allotment harvest")})),
        )
        .await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while counter(&metrics(&first).await, "stored") < counter(&a, "stored") + 10.0 {
        assert!(
            Instant::now() < deadline,
            "the first server did no new work"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    first.kill_hard();
    wait_until_drained(&second, Duration::from_secs(120)).await;
    let after = metrics(&second).await;
    assert!(
        counter(&after, "stored") > counter(&b, "stored"),
        "the second server finished the work"
    );
    // Nothing was lost: every message of the second import is embedded.
    let erin = second
        .call(
            &key,
            Method::GET,
            &format!("/v1/conversations?user_id=erin&agent_id={agent}"),
            None,
        )
        .await;
    let erin = erin["items"][0]["id"].as_str().unwrap();
    let messages = second.conversation_messages(&key, erin).await;
    assert_eq!(messages.len(), SESSIONS * TURNS);
    let unembedded: Vec<&Value> = messages
        .iter()
        .filter(|m| m["embedding_ref"].is_null())
        .collect();
    assert!(
        unembedded.is_empty(),
        "jobs lost with the killed server: {unembedded:?}"
    );
}
