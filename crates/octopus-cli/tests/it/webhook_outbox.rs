//! Webhooks through the real binary and its command line: an event whose
//! change committed is delivered after a kill -9 that came before its
//! delivery, in the order the changes were made; a change that was refused
//! sends nothing.

use std::process::Command;
use std::time::Duration;

use octopus_testkit::webhook_receiver::Receiver;
use serde_json::{Value, json};

use crate::client_commands::octopus;
use crate::process::Server;

/// Polls `done` every 100 ms for up to a minute.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..600 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting until {what}");
}

fn deliveries(server: &Server, key: &str, webhook: &str) -> Vec<Value> {
    let log = octopus(server, key, &["webhooks", "deliveries", webhook]);
    log["items"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committed_change_is_delivered_after_a_kill_and_a_refused_one_never() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = dir.path().join("octopus.toml");
    std::fs::write(
        &config,
        "[webhooks]\ndestinations = \"any\"\nretry_schedule_secs = [0.3]\ntimeout_secs = 5\n",
    )
    .unwrap();
    let receiver = Receiver::start(&[]).await;
    receiver.answer_from_now_on(503);

    let server = Server::start_with(&data, Some(&config));
    let (_, key, agent) = server.tenant_with_agent("acme").await;
    let created = octopus(
        &server,
        &key,
        &[
            "webhooks",
            "create",
            &receiver.url,
            "--event",
            "fact.added",
            "--event",
            "fact.deleted",
            "--description",
            "audit",
        ],
    );
    let secret = created["secret"].as_str().unwrap().to_owned();
    let webhook = created["webhook"]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        octopus(&server, &key, &["webhooks", "list"])["items"][0]["id"],
        webhook.as_str()
    );

    let fact = octopus(
        &server,
        &key,
        &[
            "facts",
            "add",
            "alice",
            "Alice likes tea",
            "--agent",
            &agent,
        ],
    );
    let fact = fact["id"].as_str().unwrap().to_owned();
    octopus(&server, &key, &["facts", "delete", &fact]);
    // The endpoint fails while the server runs: the first event is tried
    // (and stays pending), the second waits behind it.
    eventually("the first delivery was tried", || {
        deliveries(&server, &key, &webhook)
            .iter()
            .any(|d| d["last_status"] == 503)
    })
    .await;
    let pending = deliveries(&server, &key, &webhook);
    assert_eq!(pending.len(), 2);
    assert!(
        pending.iter().all(|d| d["state"] == "pending"),
        "{pending:?}"
    );
    server.kill_hard();

    // After the kill, the endpoint recovers and the server comes back.
    receiver.answer_from_now_on(200);
    let server = Server::start_with(&data, Some(&config));
    eventually("both events were delivered", || {
        deliveries(&server, &key, &webhook)
            .iter()
            .all(|d| d["state"] == "delivered")
    })
    .await;
    let accepted: Vec<Value> = receiver
        .received()
        .iter()
        .rev()
        .take(2)
        .rev()
        .map(|r| r.json())
        .collect();
    assert_eq!(
        accepted
            .iter()
            .map(|b| b["type"].clone())
            .collect::<Vec<_>>(),
        [json!("fact.added"), json!("fact.deleted")],
        "in the order the changes were made"
    );
    assert!(
        accepted
            .iter()
            .all(|b| b["data"]["lineage_id"] == fact.as_str())
    );
    let last = receiver.received().pop().unwrap();
    assert!(last.header("webhook-signature").unwrap().starts_with("v1,"));
    assert!(secret.starts_with("whsec_"));

    // A refused change writes no event.
    let received = receiver.received().len();
    let refused = Command::new(env!("CARGO_BIN_EXE_octopus"))
        .args([
            "facts",
            "add",
            "alice",
            "Alice likes jazz",
            "--agent",
            &agent,
        ])
        .args(["--category", "hobbies"])
        .env("OCTOPUS_URL", &server.url)
        .env("OCTOPUS_API_KEY", &key)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("unknown_fact_category"));
    // A change after it is delivered alone: one of the refused change
    // would have come first, each user's events going out in order.
    let chess = octopus(
        &server,
        &key,
        &[
            "facts",
            "add",
            "alice",
            "Alice likes chess",
            "--agent",
            &agent,
        ],
    );
    eventually("the next change was delivered", || {
        receiver.received()[received..]
            .iter()
            .any(|r| r.json()["data"]["fact_id"] == chess["id"])
    })
    .await;
    let after: Vec<Value> = receiver.received()[received..]
        .iter()
        .map(|r| r.json())
        .collect();
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(after[0]["type"], "fact.added");

    // The endpoint goes, with its log.
    octopus(&server, &key, &["webhooks", "delete", &webhook]);
    assert_eq!(
        octopus(&server, &key, &["webhooks", "list"])["items"],
        json!([])
    );
}
