//! Forgetting a user through the real binary: afterwards no file of the data
//! directory holds a word only that user said, the receipt counts what was
//! made, and another user's data is as it was.

use std::path::Path;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::process::{ADMIN_KEY, Server};

/// Said only by Alice. Lower case, as the full-text index stores its terms.
const MARKER: &str = "quokkaberry47xz";

/// The files of `dir`, recursively, that contain `needle`.
pub(crate) fn files_containing(dir: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let lower = bytes.to_ascii_lowercase();
                if lower
                    .windows(needle.len())
                    .any(|window| window == needle.as_bytes())
                {
                    found.push(path.display().to_string());
                }
            }
        }
    }
    found
}

/// Imports 1,000 short messages (stored as written, not compressed) for
/// `user`, in ten sessions, each message with `marker`.
pub(crate) async fn import_marked(
    server: &Server,
    key: &str,
    agent: &str,
    user: &str,
    marker: &str,
) {
    let sessions: Vec<Value> = (0..10)
        .map(|s| {
            let messages: Vec<Value> = (0..100)
                .map(|m| {
                    json!({"role": if m % 2 == 0 {"user"} else {"assistant"},
                           "content": format!("note {s}-{m}: {marker} is on shelf {m}"),
                           "timestamp": format!("2026-03-{:02}T10:{:02}:{:02}Z", 1 + s, m / 60, m % 60)})
                })
                .collect();
            json!({"messages": messages})
        })
        .collect();
    server
        .call(
            key,
            Method::POST,
            "/v1/conversations/import",
            Some(json!({"agent_id": agent, "user_id": user, "sessions": sessions})),
        )
        .await;
}

/// Waits until the tenant has no memory work queued.
pub(crate) async fn memory_work_done(server: &Server, tenant: &str) {
    let started = Instant::now();
    loop {
        let text = server
            .client()
            .get(format!("{}/metrics", server.url))
            .bearer_auth(ADMIN_KEY)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let queued: f64 = text
            .lines()
            .filter(|l| {
                l.starts_with(&format!(
                    "octopus_memory_jobs_queued{{tenant_id=\"{tenant}\""
                ))
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum();
        if queued == 0.0 {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "memory work still queued: {queued}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Drops BM25 scores, which move with every other user's words.
fn without_scores(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            fields.retain(|name, _| !name.ends_with("score"));
            fields.values_mut().for_each(without_scores);
        }
        Value::Array(items) => items.iter_mut().for_each(without_scores),
        _ => {}
    }
}

/// What one user has, as the API shows it (scores apart).
async fn holdings(server: &Server, key: &str, agent: &str, user: &str, word: &str) -> Value {
    let episodes = server
        .call(
            key,
            Method::GET,
            &format!("/v1/episodes?user_id={user}"),
            None,
        )
        .await["items"]
        .clone();
    let search = server
        .call(
            key,
            Method::GET,
            &format!("/v1/messages/search?q={word}&user_id={user}"),
            None,
        )
        .await;
    let recall = server
        .call(
            key,
            Method::POST,
            &format!("/v1/agents/{agent}/recall"),
            Some(json!({"user_id": user, "query": word, "mode": "keyword"})),
        )
        .await;
    let mut holdings = json!({"episodes": episodes, "search": search, "recall": recall});
    without_scores(&mut holdings);
    holdings
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forgotten_user_leaves_no_trace_in_the_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("octopus.toml");
    // Extractive summaries: no model to call.
    std::fs::write(&config, "[llm]\nsummarise_episodes = false\n").unwrap();
    let data = dir.path().join("data");
    let server = Server::start_with(&data, Some(&config));
    let (tenant, key, agent) = server.tenant_with_agent("acme").await;
    let conversation = |user: &'static str| {
        let body = json!({"agent_id": agent, "user_id": user});
        let server = &server;
        let key = &key;
        async move {
            server
                .call(key, Method::POST, "/v1/conversations", Some(body))
                .await["id"]
                .as_str()
                .unwrap()
                .to_owned()
        }
    };
    let alice = conversation("alice").await;
    let bob = conversation("bob").await;
    let append = |conversation: &str, messages: Value| {
        let path = format!("/v1/conversations/{conversation}/messages");
        let server = &server;
        let key = &key;
        async move {
            server
                .call(
                    key,
                    Method::POST,
                    &path,
                    Some(json!({"messages": messages})),
                )
                .await["messages"]
                .clone()
        }
    };
    let first = append(
        &alice,
        json!([
            {"role": "user", "content": format!("My locker code word is {MARKER}, please remember it for me")},
            {"role": "assistant", "content": format!("Noted: your locker code word is {MARKER}.")},
            {"role": "user", "content": "Thanks, and I also like long walks by the river"}
        ]),
    )
    .await;
    let episode = first[0]["episode_id"].as_str().unwrap().to_owned();
    server
        .call(
            &key,
            Method::POST,
            &format!("/v1/episodes/{episode}/close"),
            Some(json!({"end_reason": "user_closed"})),
        )
        .await;
    append(
        &alice,
        json!([{"role": "user", "content": format!("Did you keep {MARKER} safe for me?")}]),
    )
    .await;
    append(
        &bob,
        json!([
            {"role": "user", "content": "My favourite pastry is the cardamom bun from the corner bakery"},
            {"role": "assistant", "content": "A cardamom bun is a fine choice for a slow morning."}
        ]),
    )
    .await;
    memory_work_done(&server, &tenant).await;

    // What Alice has, as the API shows it: the receipt must count exactly this.
    let alice_episodes = server
        .call(&key, Method::GET, "/v1/episodes?user_id=alice", None)
        .await["items"]
        .as_array()
        .unwrap()
        .clone();
    let mut messages = Vec::new();
    for e in &alice_episodes {
        let path = format!("/v1/episodes/{}", e["id"].as_str().unwrap());
        let full = server.call(&key, Method::GET, &path, None).await;
        messages.extend(full["messages"].as_array().unwrap().iter().cloned());
    }
    let summaries = alice_episodes
        .iter()
        .filter(|e| e["summary"].is_string())
        .count();
    let key_facts: usize = alice_episodes
        .iter()
        .map(|e| e["key_facts"].as_array().unwrap().len())
        .sum();
    let embedded = messages
        .iter()
        .filter(|m| m["embedding_ref"].is_string())
        .count();
    assert_eq!((alice_episodes.len(), messages.len(), summaries), (2, 4, 1));
    assert!(
        embedded >= 3,
        "the worker embedded Alice's messages: {embedded}"
    );
    let bob_before = holdings(&server, &key, &agent, "bob", "cardamom").await;
    assert_eq!(bob_before["search"]["items"].as_array().unwrap().len(), 2);
    let alice_found = holdings(&server, &key, &agent, "alice", MARKER).await;
    assert_eq!(alice_found["search"]["items"].as_array().unwrap().len(), 3);
    assert!(
        !files_containing(&data, MARKER).is_empty(),
        "the scan must see the marker before the forget, or its silence after means nothing"
    );

    let receipt = server
        .call(&key, Method::DELETE, "/v1/users/alice", None)
        .await;
    assert_eq!(
        receipt["relational"],
        json!({"conversations": 1, "episodes": 2, "messages": 4, "summaries": summaries,
               "key_facts": key_facts, "facts": 0, "fact_history": 0, "learned_procedures": 0}),
        "{receipt}"
    );
    assert_eq!(receipt["full_text"]["entries"], 4, "{receipt}");
    assert_eq!(receipt["vectors"]["message_vectors"], embedded, "{receipt}");
    assert_eq!(receipt["vectors"]["summary_vectors"], 1, "{receipt}");
    assert_eq!(receipt["queue"]["jobs"], 0, "{receipt}");
    assert_eq!(receipt["compacted"], true, "{receipt}");

    assert_eq!(files_containing(&data, MARKER), Vec::<String>::new());
    let alice_after = holdings(&server, &key, &agent, "alice", MARKER).await;
    assert_eq!(alice_after["episodes"], json!([]));
    assert_eq!(alice_after["search"]["items"], json!([]));
    assert_eq!(alice_after["recall"]["items"], json!([]));
    assert_eq!(
        holdings(&server, &key, &agent, "bob", "cardamom").await,
        bob_before
    );

    // After a restart too: nothing comes back from a log or a saved index.
    drop(server);
    let server = Server::start_with(&data, Some(&config));
    assert_eq!(
        holdings(&server, &key, &agent, "bob", "cardamom").await,
        bob_before
    );
    let alice_after = holdings(&server, &key, &agent, "alice", MARKER).await;
    assert_eq!(alice_after["search"]["items"], json!([]));
    assert_eq!(files_containing(&data, MARKER), Vec::<String>::new());
}

/// Said only by the victim of the kill test.
const KILL_MARKER: &str = "wombatlantern93q";

/// The kill test's server: extractive summaries, no embeddings (vectors
/// hold no words; the storage conformance suite covers their erasure).
async fn victim_server(data: &Path, config: &Path) -> (Server, String, String) {
    let server = Server::start_with(data, Some(config));
    let (_, key, _) = server.tenant_with_agent("acme").await;
    let agent = server
        .call(
            &key,
            Method::POST,
            "/v1/agents",
            Some(
                json!({"name": "quiet", "llm": {"provider": "ollama", "model": "m"},
                        "memory": {"embed_messages": false, "summarize_on_close": false}}),
            ),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    (server, key, agent)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forget_killed_at_any_point_is_finished_at_restart_and_by_a_retry() {
    let mut phases = Vec::new();
    // Every millisecond of the forget's first few (it takes about ten here),
    // then later: some kills land before the rows' commit, some between it
    // and the end of the compaction, some after.
    let kill_points = (0u64..=16).chain([20, 25, 30, 40, 60]);
    for kill_after_ms in kill_points {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("octopus.toml");
        std::fs::write(&config, "[llm]\nsummarise_episodes = false\n").unwrap();
        let data = dir.path().join("data");
        let (server, key, agent) = victim_server(&data, &config).await;
        import_marked(&server, &key, &agent, "victim0", KILL_MARKER).await;
        // The full-text index holds them too (a search catches it up).
        let found = server
            .call(
                &key,
                Method::GET,
                &format!("/v1/messages/search?q={KILL_MARKER}&limit=5"),
                None,
            )
            .await;
        assert_eq!(found["items"].as_array().unwrap().len(), 5);
        let before = files_containing(&data, KILL_MARKER);
        assert!(
            before
                .iter()
                .any(|f| f.ends_with("search.sqlite") || f.ends_with("search.sqlite-wal")),
            "the index holds the marker before: {before:?}"
        );

        // The forget, and a kill -9 somewhere in it.
        let client = server.client();
        let request = client
            .delete(format!("{}/v1/users/victim0", server.url))
            .bearer_auth(&key)
            .send();
        let forgetting = tokio::spawn(request);
        tokio::time::sleep(Duration::from_millis(kill_after_ms)).await;
        server.kill_hard();
        let _ = forgetting.await;

        // At restart, an erasure whose rows were gone is finished before the
        // server listens: no file holds the marker.
        let server = Server::start_with(&data, Some(&config));
        let left = server
            .call(&key, Method::GET, "/v1/conversations?user_id=victim0", None)
            .await["items"]
            .as_array()
            .unwrap()
            .len();
        let phase = if left == 0 {
            let files = files_containing(&data, KILL_MARKER);
            assert!(
                files.is_empty(),
                "killed after {kill_after_ms} ms, the rows gone: still in {files:?} after the restart"
            );
            "rows removed"
        } else {
            "rows kept"
        };
        phases.push((kill_after_ms, phase));

        // A retry answers, and leaves nothing either way.
        let receipt = server
            .call(&key, Method::DELETE, "/v1/users/victim0", None)
            .await;
        assert_eq!(receipt["compacted"], true, "{receipt}");
        let files = files_containing(&data, KILL_MARKER);
        assert!(
            files.is_empty(),
            "killed after {kill_after_ms} ms, then retried: still in {files:?}"
        );
    }
    eprintln!("where each kill landed: {phases:?}");
}

/// Said only in the purged episode.
const PURGED_MARKER: &str = "pangolinvelvet58k";

/// A purged episode leaves no word of its messages in any file of the data
/// directory: not in the database's free pages, the full-text index, or a
/// write-ahead log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purged_episode_leaves_no_trace_in_the_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("octopus.toml");
    std::fs::write(&config, "[llm]\nsummarise_episodes = false\n").unwrap();
    let data = dir.path().join("data");
    let (server, key, agent) = victim_server(&data, &config).await;
    let conversation = server
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
    let appended = server
        .call(
            &key,
            Method::POST,
            &format!("/v1/conversations/{conversation}/messages"),
            Some(json!({"messages": [
                {"role": "user", "content": format!("The vault phrase is {PURGED_MARKER}")},
                {"role": "assistant", "content": format!("Noted: {PURGED_MARKER}.")}
            ]})),
        )
        .await;
    let episode = appended["messages"][0]["episode_id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Indexed before it goes (a search catches the index up).
    server
        .call(
            &key,
            Method::GET,
            &format!("/v1/messages/search?q={PURGED_MARKER}"),
            None,
        )
        .await;
    assert!(!files_containing(&data, PURGED_MARKER).is_empty());
    server
        .call(
            &key,
            Method::DELETE,
            &format!("/v1/episodes/{episode}"),
            None,
        )
        .await;
    server
        .call(
            &key,
            Method::POST,
            &format!("/v1/episodes/{episode}/purge"),
            None,
        )
        .await;
    let files = files_containing(&data, PURGED_MARKER);
    assert!(
        files.is_empty(),
        "the purged episode's words are still in {files:?}"
    );
}
