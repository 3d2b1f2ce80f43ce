//! Acknowledged means durable: a message answered with 2xx survives `kill -9`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::process::Server;

const WRITERS: usize = 8;
const CONVERSATIONS: usize = 4;
const BATCH: usize = 5;

/// Writes batches to its conversation until told to stop or the server dies;
/// returns the batches the server acknowledged, in order.
async fn writer(
    client: reqwest::Client,
    url: String,
    key: String,
    conversation: String,
    writer: usize,
    stop: Arc<AtomicBool>,
) -> Vec<Vec<String>> {
    let mut acknowledged = Vec::new();
    for batch in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let texts: Vec<String> = (0..BATCH)
            .map(|i| format!("w{writer} b{batch} m{i} {}", "lorem ipsum ".repeat(i * 8)))
            .collect();
        let messages: Vec<Value> = texts
            .iter()
            .map(|t| json!({"role": "user", "content": t}))
            .collect();
        let sent = client
            .post(format!("{url}/v1/conversations/{conversation}/messages"))
            .bearer_auth(&key)
            .json(&json!({"messages": messages}))
            .send()
            .await;
        match sent {
            Ok(response) if response.status().is_success() => acknowledged.push(texts),
            _ => break, // the server is gone: what was not acknowledged may or may not be there
        }
    }
    acknowledged
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acknowledged_messages_survive_kill_9() {
    acknowledged_messages_survive(None).await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_postgres_acknowledged_messages_survive_kill_9() {
    acknowledged_messages_survive(Some(octopus_postgres::testing::fresh_database().await)).await;
}

async fn acknowledged_messages_survive(database: Option<String>) {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_on(dir.path(), None, database.as_deref());
    let (key, _agent, mut conversations) = server.seed(CONVERSATIONS + 1).await;
    let fixture_conversation = conversations.pop().unwrap();

    // A fixture with every kind of field, read back before the kill; its
    // times an hour ago, to the microsecond (live messages are dated recently).
    let hour_ago = chrono::Utc::now() - chrono::Duration::hours(1);
    let first_at = hour_ago.format("%Y-%m-%dT%H:%M:%S.678901Z").to_string();
    let second_at = (hour_ago + chrono::Duration::seconds(1))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let fixture = json!({"messages": [
        {"role": "user", "content": [{"type": "text", "text": "chart?"}, {"type": "image_url", "image_url": {"url": "https://x/y.png"}}],
         "contains_pii": true, "redacted_content": "[REDACTED]", "timestamp": first_at},
        {"role": "tool", "content": "ok", "tool_call_id": "c1", "timestamp": second_at,
         "tool_calls": [{"tool_call_id": "c1", "function_name": "lookup", "arguments": {"id": 7}, "result": [1, 2], "duration_ms": 9, "is_error": true}]}
    ]});
    let stored = server
        .call(
            &key,
            Method::POST,
            &format!("/v1/conversations/{fixture_conversation}/messages"),
            Some(fixture),
        )
        .await;
    let fixture_episode = stored["messages"][0]["episode_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let before = server
        .call(
            &key,
            Method::GET,
            &format!("/v1/episodes/{fixture_episode}"),
            None,
        )
        .await;

    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let conversation = conversations[w % CONVERSATIONS].clone();
            tokio::spawn(writer(
                server.client(),
                server.url.clone(),
                key.clone(),
                conversation,
                w,
                stop.clone(),
            ))
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let data_dir = dir.path().to_owned();
    server.kill_hard();
    stop.store(true, Ordering::Relaxed);
    let mut acknowledged = Vec::new();
    for handle in writers {
        acknowledged.push(handle.await.unwrap());
    }
    let total: usize = acknowledged
        .iter()
        .map(|batches| batches.len() * BATCH)
        .sum();
    assert!(
        total > 200,
        "the load was too light to prove anything: {total} messages"
    );
    eprintln!("{total} messages acknowledged by {WRITERS} concurrent writers before kill -9");

    let server = Server::start_on(&data_dir, None, database.as_deref());
    let after = server
        .call(
            &key,
            Method::GET,
            &format!("/v1/episodes/{fixture_episode}"),
            None,
        )
        .await;
    // The memory worker embeds messages in the background: only their
    // embedding reference may have changed since the first read.
    let without_refs = |mut episode: Value| {
        for message in episode["messages"].as_array_mut().unwrap() {
            message["embedding_ref"] = Value::Null;
        }
        episode
    };
    assert_eq!(
        without_refs(after),
        without_refs(before),
        "the fixture reads back identically after the restart"
    );

    let mut stored: HashMap<String, Vec<String>> = HashMap::new();
    for conversation in &conversations {
        let messages = server.conversation_messages(&key, conversation).await;
        let texts: Vec<String> = messages
            .iter()
            .filter_map(|m| m["content"].as_str().map(str::to_owned))
            .filter(|t| t.starts_with('w'))
            .collect();
        assert_eq!(
            texts.iter().collect::<HashSet<_>>().len(),
            texts.len(),
            "no message stored twice"
        );
        stored.insert(conversation.clone(), texts);
    }

    for (w, batches) in acknowledged.iter().enumerate() {
        let texts = &stored[&conversations[w % CONVERSATIONS]];
        let position: HashMap<&str, usize> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| (t.as_str(), i))
            .collect();
        let mut previous = None;
        for batch in batches {
            for text in batch {
                let at = *position
                    .get(text.as_str())
                    .unwrap_or_else(|| panic!("acknowledged message lost: {text}"));
                assert!(
                    previous.is_none_or(|p| at > p),
                    "acknowledged messages out of order at {text}"
                );
                previous = Some(at);
            }
        }
    }
    // Nothing half-written: a batch is one transaction, so what is stored is whole
    // batches back to back, each in its own order.
    for texts in stored.values() {
        assert_eq!(texts.len() % BATCH, 0, "a partial batch is stored");
        for batch in texts.chunks(BATCH) {
            let prefix = batch[0].split(" m0 ").next().unwrap();
            for (i, text) in batch.iter().enumerate() {
                assert!(
                    text.starts_with(&format!("{prefix} m{i} ")),
                    "batch {prefix} is not whole and in order: {text}"
                );
            }
        }
    }

    // The full-text index agrees with the messages after the crash.
    let last = acknowledged.iter().flatten().last().unwrap()[0].clone();
    let word = last.split(' ').take(2).collect::<Vec<_>>().join(" ");
    let hits = server
        .call(
            &key,
            Method::GET,
            &format!("/v1/messages/search?q={}&limit=200", word.replace(' ', "+")),
            None,
        )
        .await;
    assert!(
        hits["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["message"]["content"] == last.as_str()),
        "search lost {last}"
    );
}

/// The vector index is derived from SQLite: after `kill -9` in the middle of an
/// ingest, with an HNSW graph saved long before, the restarted server searches
/// exactly the chunks SQLite holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn knowledge_index_and_sqlite_agree_after_kill_9() {
    knowledge_index_and_rows_agree(None, None).await;
}

/// The same on PostgreSQL, where the vectors live in pgvector beside the rows.
#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_knowledge_index_and_rows_agree_after_kill_9() {
    knowledge_index_and_rows_agree(
        Some(octopus_postgres::testing::fresh_database().await),
        None,
    )
    .await;
}

/// The same with the vectors on a Qdrant server, which the kill leaves
/// running: it may hold a vector SQLite never committed, or miss one it did.
#[cfg(feature = "qdrant-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_qdrant_knowledge_index_and_rows_agree_after_kill_9() {
    let options = octopus_qdrant::testing::fresh_options(octopus_qdrant::QdrantLayout::Shared);
    let config = format!(
        "[vectors]\nbackend = \"qdrant\"\n[vectors.qdrant]\nurl = \"{}\"\ncollection_prefix = \"{}\"\n",
        options.url, options.prefix
    );
    knowledge_index_and_rows_agree(None, Some(config)).await;
}

/// `qdrant`: the configuration that puts the vectors on Qdrant.
async fn knowledge_index_and_rows_agree(database: Option<String>, qdrant: Option<String>) {
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let config = dir.path().join("octopus.toml");
    // A graph from 10 chunks on: saved when it is built, then not again for
    // another 1,000 changes, so the restart must reconcile what came after.
    let on_qdrant = qdrant.is_some();
    let vectors = qdrant.unwrap_or_else(|| "[vectors.embedded]\nhnsw_threshold = 10\n".into());
    std::fs::write(&config, vectors).unwrap();
    let server = Server::start_on(&data_dir, Some(&config), database.as_deref());
    let (key, agent, _) = server.seed(0).await;
    let documents = format!("/v1/agents/{agent}/knowledge/documents");

    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let ingester = {
        let (client, url, key, stop, done) = (
            server.client(),
            server.url.clone(),
            key.clone(),
            stop.clone(),
            done.clone(),
        );
        tokio::spawn(async move {
            let mut acknowledged: HashMap<String, String> = HashMap::new();
            for i in 0.. {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                // 25 sources written over and over: replacements as well as inserts.
                let source = format!("note-{}.txt", i % 25);
                let text = format!("Note number {i} is about the colour of the sky on day {i}.");
                let sent = client
                    .post(format!("{url}{documents}"))
                    .bearer_auth(&key)
                    .json(&json!({"source": source, "text": text}))
                    .send()
                    .await;
                match sent {
                    Ok(response) if response.status().is_success() => {
                        acknowledged.insert(source, text);
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(response) if !stop.load(Ordering::Relaxed) => {
                        panic!("ingest refused before the kill: {}", response.status())
                    }
                    _ => break,
                }
                if i == 12 {
                    // The first search loads the index: past the threshold,
                    // it becomes a graph and is saved.
                    let search = json!({"query": "sky", "mode": "vector"});
                    let searched = client
                        .post(format!("{url}{documents}").replace("/documents", "/search"))
                        .bearer_auth(&key)
                        .json(&search)
                        .send()
                        .await;
                    assert!(searched.is_ok_and(|r| r.status().is_success()));
                }
            }
            acknowledged
        })
    };
    // Killed in the middle of the ingest, well past the graph's threshold,
    // however slow the machine.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while done.load(Ordering::Relaxed) < 40 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    server.kill_hard();
    stop.store(true, Ordering::Relaxed);
    let acknowledged = ingester.await.unwrap();
    assert!(
        acknowledged.len() >= 10,
        "too few documents to reach the graph: {}",
        acknowledged.len()
    );

    if database.is_none() && !on_qdrant {
        let saved = std::fs::read_dir(data_dir.join("vectors")).unwrap().count();
        assert_eq!(saved, 1, "the graph was saved before the kill");
    }
    let server = Server::start_on(&data_dir, Some(&config), database.as_deref());
    let base = format!("/v1/agents/{agent}/knowledge");
    let collection = server.call(&key, Method::GET, &base, None).await;
    let count = collection["collection"]["chunk_count"].as_u64().unwrap();
    let search = json!({"query": "the colour of the sky", "mode": "vector", "top_k": 100, "min_score": -1.0});
    let hits = server
        .call(&key, Method::POST, &format!("{base}/search"), Some(search))
        .await;
    let hits = hits["items"].as_array().unwrap();
    assert_eq!(
        hits.len() as u64,
        count,
        "every chunk SQLite holds, and nothing else"
    );
    let sources: HashSet<&str> = hits
        .iter()
        .map(|h| h["chunk"]["source"].as_str().unwrap())
        .collect();
    assert_eq!(
        sources.len(),
        hits.len(),
        "one chunk per source: no replaced chunk survived"
    );
    // Each acknowledged text is found as itself (cosine 1), except at most one:
    // the request in flight at the kill may have replaced its source's chunk
    // after the last acknowledgement.
    let mut replaced_in_flight = Vec::new();
    for (source, text) in &acknowledged {
        assert!(
            sources.contains(source.as_str()),
            "{source} was acknowledged"
        );
        let own = json!({"query": text, "mode": "vector", "top_k": 1});
        let found = server
            .call(&key, Method::POST, &format!("{base}/search"), Some(own))
            .await;
        if found["items"][0]["chunk"]["content"] != text.as_str() {
            replaced_in_flight.push(found);
        }
    }
    assert!(replaced_in_flight.len() <= 1, "{replaced_in_flight:?}");
}
