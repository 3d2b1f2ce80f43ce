//! Erasing one message through the real binary: its words, and those of
//! the fact learned from it, leave every file of the data directory, from
//! the command line and after a kill -9 at any point of the erasure.

use std::path::Path;
use std::time::Duration;

use reqwest::Method;
use serde_json::json;

use crate::client_commands::octopus;
use crate::forget::{files_containing, memory_work_done};
use crate::process::{ADMIN_KEY, Server};

/// Said in the erased message, and in the fact learned from it: nowhere else.
const SAID: &str = "quibbleford47zx";
const LEARNED: &str = "snorkelwick62vb";

/// Alice says where she keeps the key (and something else after it); a
/// fact learned from that message is brought in as a learned fact travels,
/// by the admin's import. Returns the message's id and the fact's.
async fn said_and_learned(
    server: &Server,
    (tenant, key, agent): (&str, &str, &str),
) -> (String, String) {
    let conversation = server
        .call(
            key,
            Method::POST,
            "/v1/conversations",
            Some(json!({"agent_id": agent, "user_id": "alice"})),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let said = server
        .call(
            key,
            Method::POST,
            &format!("/v1/conversations/{conversation}/messages"),
            Some(json!({"messages": [
                {"role": "user", "content": format!("The spare key is under the {SAID} pot")},
                {"role": "user", "content": "Also, I prefer email to phone calls"}
            ]})),
        )
        .await;
    let message = said["messages"][0]["id"].as_str().unwrap().to_owned();
    let episode = said["messages"][0]["episode_id"].as_str().unwrap();
    let fact = octopus_core::FactId::new().to_string();
    let at = "2026-01-01T00:00:00Z";
    let dump = [
        json!({"type": "header", "format": "octopus-dump", "version": 1, "exported_at": at,
               "tenant_id": tenant, "user_id": null}),
        json!({"type": "fact", "id": fact, "tenant_id": tenant, "agent_id": agent,
               "user_id": "alice", "episode_id": episode, "message_ids": [message],
               "text": format!("Alice hides a key under the {LEARNED} pot"),
               "valid_from": at, "valid_to": null, "superseded_by": null, "created_at": at}),
        json!({"type": "end", "records": 2}),
    ]
    .map(|line| line.to_string())
    .join("\n");
    let reply = server
        .client()
        .post(format!("{}/v1/import", server.url))
        .bearer_auth(ADMIN_KEY)
        .header("content-type", "application/x-ndjson")
        .body(dump)
        .send()
        .await
        .unwrap();
    assert!(
        reply.status().is_success(),
        "{}",
        reply.text().await.unwrap()
    );
    (message, fact)
}

fn no_file_holds(data: &Path, context: &str) {
    for word in [SAID, LEARNED] {
        let files = files_containing(data, word);
        assert!(files.is_empty(), "{context}: {word} still in {files:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_erased_message_leaves_no_word_in_the_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = Server::start(&data);
    let (tenant, key, agent) = server.tenant_with_agent("acme").await;
    let (message, fact) = said_and_learned(&server, (&tenant, &key, &agent)).await;
    memory_work_done(&server, &tenant).await;
    for word in [SAID, LEARNED] {
        assert!(
            !files_containing(&data, word).is_empty(),
            "the scan must see {word} before, or its silence after means nothing"
        );
    }

    let receipt = octopus(
        &server,
        &key,
        &["messages", "erase", &message, "--reason", "she asked"],
    );
    assert_eq!(
        (&receipt["facts_deleted"], &receipt["compacted"]),
        (&json!(1), &json!(true)),
        "{receipt}"
    );
    no_file_holds(&data, "after the erasure");
    let history = octopus(&server, &key, &["facts", "history", &fact]);
    let last = history["items"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (&last["action"], &last["changed_by"]),
        (&json!("deleted"), &json!("k"))
    );

    // After a restart too, and the message left is still there.
    drop(server);
    let server = Server::start(&data);
    let found = server
        .call(&key, Method::GET, "/v1/messages/search?q=email", None)
        .await;
    assert_eq!(found["items"].as_array().unwrap().len(), 1, "{found}");
    no_file_holds(&data, "after a restart");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_erasure_killed_at_any_point_is_finished_at_restart_and_by_a_retry() {
    let mut phases = Vec::new();
    for kill_after_ms in (0u64..=8).chain([12, 20, 40]) {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let server = Server::start(&data);
        let (tenant, key, agent) = server.tenant_with_agent("acme").await;
        let (message, _) = said_and_learned(&server, (&tenant, &key, &agent)).await;
        memory_work_done(&server, &tenant).await;
        assert!(!files_containing(&data, SAID).is_empty());

        let erasing = tokio::spawn(
            server
                .client()
                .delete(format!("{}/v1/messages/{message}", server.url))
                .bearer_auth(&key)
                .send(),
        );
        tokio::time::sleep(Duration::from_millis(kill_after_ms)).await;
        server.kill_hard();
        let _ = erasing.await;

        // At restart, an erasure whose rows were gone is finished before the
        // server listens.
        let server = Server::start(&data);
        let left = server
            .client()
            .delete(format!("{}/v1/messages/{message}", server.url))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap()
            .status();
        let phase = match left {
            reqwest::StatusCode::NOT_FOUND => "rows removed before the kill",
            reqwest::StatusCode::OK => "erased by the retry",
            other => panic!("killed after {kill_after_ms} ms, the retry answered {other}"),
        };
        no_file_holds(&data, &format!("killed after {kill_after_ms} ms"));
        phases.push((kill_after_ms, phase));
    }
    eprintln!("where each kill landed: {phases:?}");
}
