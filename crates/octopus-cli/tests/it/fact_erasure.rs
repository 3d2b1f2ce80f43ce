//! Deleting one fact through the real binary: its words, of every version,
//! leave every file of the data directory, from the command line and after
//! a kill -9 at any point of the deletion.

use std::path::Path;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};

use crate::client_commands::octopus;
use crate::forget::{files_containing, memory_work_done};
use crate::process::{ADMIN_KEY, Server};

/// The words of the fact as learned, and as a person corrected it: said
/// nowhere else.
const LEARNED: &str = "zorbleton93qx";
const CORRECTED: &str = "frumpelstad58kq";

/// A fact about alice with `text`, of the episode of her first message,
/// brought in as a learned fact travels: a dump holding it alone, imported
/// with the admin key into its tenant. Returns its id.
async fn learned_fact(
    server: &Server,
    (tenant, key, agent): (&str, &str, &str),
    text: &str,
) -> String {
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
            Some(json!({"messages": [{"role": "user", "content": "I moved house last spring"}]})),
        )
        .await;
    let episode = said["messages"][0]["episode_id"].as_str().unwrap();
    let id = octopus_core::FactId::new().to_string();
    let at = "2026-01-01T00:00:00Z";
    let dump = [
        json!({"type": "header", "format": "octopus-dump", "version": 1, "exported_at": at,
               "tenant_id": tenant, "user_id": null}),
        json!({"type": "fact", "id": id, "tenant_id": tenant, "agent_id": agent,
               "user_id": "alice", "episode_id": episode, "message_ids": [], "text": text,
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
    id
}

fn no_file_holds(data: &Path, words: &[&str], context: &str) {
    for word in words {
        let files = files_containing(data, word);
        assert!(files.is_empty(), "{context}: {word} still in {files:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_fact_leaves_no_word_in_the_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = Server::start(&data);
    let (tenant, key, agent) = server.tenant_with_agent("acme").await;
    let fact = learned_fact(
        &server,
        (&tenant, &key, &agent),
        &format!("Alice lives in {LEARNED}"),
    )
    .await;

    // Corrected from the command line: a second version, the first kept.
    let corrected = octopus(
        &server,
        &key,
        &[
            "facts",
            "correct",
            &fact,
            &format!("Alice lives in {CORRECTED}"),
            "--reason",
            "she moved",
        ],
    );
    assert_eq!(corrected["source"], "manual", "{corrected}");
    assert_eq!(corrected["changed_by"], "k", "the key's name: {corrected}");
    memory_work_done(&server, &tenant).await;
    let shown = octopus(&server, &key, &["facts", "show", &fact]);
    assert_eq!(shown["superseded_by"], corrected["id"], "{shown}");
    for word in [LEARNED, CORRECTED] {
        assert!(
            !files_containing(&data, word).is_empty(),
            "the scan must see {word} before, or its silence after means nothing"
        );
    }

    let receipt = octopus(
        &server,
        &key,
        &[
            "facts",
            "delete",
            corrected["id"].as_str().unwrap(),
            "--reason",
            "asked",
        ],
    );
    assert_eq!(
        (
            &receipt["versions"],
            &receipt["vectors"],
            &receipt["compacted"]
        ),
        (&json!(2), &json!(2), &json!(true)),
        "{receipt}"
    );
    no_file_holds(&data, &[LEARNED, CORRECTED], "after the deletion");
    let history = octopus(&server, &key, &["facts", "history", &fact]);
    let entries: Vec<(&str, &Value)> = history["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["action"].as_str().unwrap(), &e["text"]))
        .collect();
    assert_eq!(
        entries,
        [
            ("imported", &Value::Null),
            ("corrected", &Value::Null),
            ("deleted", &Value::Null)
        ]
    );

    // After a restart too: nothing comes back from a log or a saved index.
    drop(server);
    let server = Server::start(&data);
    let listed = server
        .call(
            &key,
            Method::GET,
            &format!("/v1/agents/{agent}/users/alice/facts?include_replaced=true"),
            None,
        )
        .await;
    assert_eq!(listed["items"], json!([]));
    no_file_holds(&data, &[LEARNED, CORRECTED], "after a restart");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fact_deletion_killed_at_any_point_is_finished_at_restart_and_by_a_retry() {
    let mut phases = Vec::new();
    for kill_after_ms in (0u64..=8).chain([12, 20, 40]) {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let server = Server::start(&data);
        let (tenant, key, agent) = server.tenant_with_agent("acme").await;
        let fact = learned_fact(
            &server,
            (&tenant, &key, &agent),
            &format!("Alice keeps {LEARNED} in her locker"),
        )
        .await;
        memory_work_done(&server, &tenant).await;
        assert!(!files_containing(&data, LEARNED).is_empty());

        let deleting = tokio::spawn(
            server
                .client()
                .delete(format!("{}/v1/facts/{fact}", server.url))
                .bearer_auth(&key)
                .send(),
        );
        tokio::time::sleep(Duration::from_millis(kill_after_ms)).await;
        server.kill_hard();
        let _ = deleting.await;

        // At restart, a deletion whose rows were gone is finished before the
        // server listens.
        let server = Server::start(&data);
        let left = server
            .client()
            .get(format!("{}/v1/facts/{fact}", server.url))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap()
            .status();
        let phase = if left == reqwest::StatusCode::NOT_FOUND {
            no_file_holds(
                &data,
                &[LEARNED],
                &format!("killed after {kill_after_ms} ms, the rows gone, restarted"),
            );
            "rows removed"
        } else {
            // Not yet deleted: a retry deletes it.
            let receipt = octopus(&server, &key, &["facts", "delete", &fact]);
            assert_eq!(receipt["compacted"], true, "{receipt}");
            "rows kept"
        };
        no_file_holds(
            &data,
            &[LEARNED],
            &format!("killed after {kill_after_ms} ms"),
        );
        phases.push((kill_after_ms, phase));
    }
    eprintln!("where each kill landed: {phases:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fact_added_from_the_command_line_is_used_then_leaves_no_word() {
    const ADDED: &str = "wobblethorp38jn";
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = Server::start(&data);
    let (tenant, key, agent) = server.tenant_with_agent("acme").await;
    let added = octopus(
        &server,
        &key,
        &[
            "facts",
            "add",
            "alice",
            &format!("Alice's locker is {ADDED}"),
            "--agent",
            &agent,
            "--reason",
            "she told the desk",
        ],
    );
    assert_eq!(
        (&added["source"], &added["changed_by"], &added["episode_id"]),
        (&json!("manual"), &json!("k"), &Value::Null),
        "{added}"
    );
    memory_work_done(&server, &tenant).await;
    let recalled = server
        .call(
            &key,
            Method::POST,
            &format!("/v1/agents/{agent}/recall"),
            Some(json!({"user_id": "alice", "query": "Where is Alice's locker?"})),
        )
        .await;
    let hit = recalled["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|hit| hit["kind"] == "fact")
        .unwrap_or_else(|| panic!("{recalled}"));
    assert!(
        hit["episode_id"].is_null() && hit["vector_score"].is_number(),
        "{hit}"
    );
    assert!(!files_containing(&data, ADDED).is_empty());

    let receipt = octopus(
        &server,
        &key,
        &["facts", "delete", added["id"].as_str().unwrap()],
    );
    assert_eq!(
        (&receipt["versions"], &receipt["vectors"]),
        (&json!(1), &json!(1)),
        "{receipt}"
    );
    no_file_holds(&data, &[ADDED], "after the deletion");
}
