//! Two `octopus serve` processes on one PostgreSQL database: what one writes
//! the other reads, recalls and puts in context; they share the memory
//! queue, each job done once; and killing a server while it holds jobs
//! loses none of them.
//!
//! Nothing here depends on which process is faster: the server that writes
//! runs no memory worker (`[worker] memory_worker = false`), so the work it
//! queues can only be done through the shared queue; and a worker is killed
//! only after it has been frozen (SIGSTOP) holding leased jobs, read from
//! the database.

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
/// The same, for a server that only serves the API.
const API_ONLY: &str =
    "[llm]\nsummarise_episodes = false\n[worker]\njob_lease_secs = 3\nmemory_worker = false\n";

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

fn start(dir: &Path, name: &str, database: &str, config_text: &str) -> Server {
    let config = dir.join(format!("{name}.toml"));
    std::fs::write(&config, config_text).unwrap();
    Server::start_on(&dir.join(name), Some(&config), Some(database))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_share_one_database_and_its_memory_queue() {
    let database = octopus_postgres::testing::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let first = start(dir.path(), "first", &database, API_ONLY);
    let second = start(dir.path(), "second", &database, CONFIG);

    // Written through the first server.
    let (_, key, agent) = first.tenant_with_agent("acme").await;
    let conversation = import(&first, &key, &agent, "dana", "the lighthouse restoration").await;
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

    // The first server runs no worker, so every job it queued reached the
    // second through the shared queue, and each was stored once.
    wait_until_drained(&second, Duration::from_secs(120)).await;
    let (a, b) = (metrics(&first).await, metrics(&second).await);
    assert_eq!(
        counter(&a, "stored"),
        0.0,
        "the API-only server did no work"
    );
    assert_eq!(
        counter(&b, "stored"),
        JOBS_PER_IMPORT + 1.0,
        "every job stored exactly once, by the worker that shares the queue"
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

    // More work, and the worker killed while it holds some of it: frozen
    // first, so that what the database says it holds is what it holds when
    // it dies. A third server takes the jobs over once their lease runs out.
    let mut users = Vec::new();
    let held = loop {
        assert!(users.len() < 5, "the worker was never caught holding jobs");
        let user = format!("erin{}", users.len());
        import(&first, &key, &agent, &user, "the allotment harvest").await;
        users.push(user);
        if let Some(held) = freeze_holding_jobs(&second, &database).await {
            break held;
        }
    };
    second.kill_hard();
    let third = start(dir.path(), "third", &database, CONFIG);
    wait_until_drained(&third, Duration::from_secs(120)).await;
    // The jobs the killed worker held were done by the third server (a
    // completion the frozen worker had already sent may have landed too).
    let left = octopus_postgres::testing::memory_jobs(&database, false).await;
    assert!(
        left.is_empty(),
        "jobs left in the queue: {left:?}; the killed worker held {held:?}"
    );
    // Nothing was lost: every message of the later imports is embedded.
    for user in &users {
        let conversations = third
            .call(
                &key,
                Method::GET,
                &format!("/v1/conversations?user_id={user}&agent_id={agent}"),
                None,
            )
            .await;
        let id = conversations["items"][0]["id"].as_str().unwrap();
        let messages = third.conversation_messages(&key, id).await;
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
}

/// Imports [`sessions`] about `topic` for `user`; the conversation's id.
async fn import(server: &Server, key: &str, agent: &str, user: &str, topic: &str) -> String {
    let imported = server
        .call(
            key,
            Method::POST,
            "/v1/conversations/import",
            Some(json!({"agent_id": agent, "user_id": user, "sessions": sessions(topic)})),
        )
        .await;
    imported["conversation"]["id"].as_str().unwrap().to_owned()
}

/// Waits for `worker` (the only server with a worker) to hold leased jobs,
/// then freezes it and returns the jobs it holds. `None` when the queue
/// emptied first: the caller queues more.
async fn freeze_holding_jobs(worker: &Server, database: &str) -> Option<Vec<i64>> {
    use octopus_postgres::testing::memory_jobs;
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if memory_jobs(database, false).await.is_empty() {
            return None;
        }
        if !memory_jobs(database, true).await.is_empty() {
            worker.signal("STOP");
            // Frozen: what is leased now stays leased until the kill.
            let held = memory_jobs(database, true).await;
            if !held.is_empty() {
                return Some(held);
            }
            worker.signal("CONT");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("the worker claimed no job within a minute");
}
