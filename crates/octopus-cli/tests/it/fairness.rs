//! One tenant's bulk work does not starve another's live memory: with an
//! import of 2,000 messages just queued by one tenant, another tenant's live
//! message is recallable by meaning within seconds, while the import still
//! waits. `/metrics` shows the queues. Against the real binary and the local
//! model.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};

use crate::process::{ADMIN_KEY, Server};

const IMPORTED_SESSIONS: usize = 100;
const TURNS_PER_SESSION: usize = 20;
/// The target for a live message to become recallable.
const LIVE_RECALL_WITHIN: Duration = Duration::from_secs(2);

const TOPICS: [&str; 8] = [
    "the quarterly budget spreadsheet",
    "a hiking trip in the Alps",
    "my sourdough starter",
    "the new espresso machine at work",
    "learning to play the cello",
    "a leaking kitchen tap",
    "the football match on Sunday",
    "repainting the garden fence",
];

fn imported_sessions() -> Value {
    let sessions: Vec<Value> = (0..IMPORTED_SESSIONS)
        .map(|s| {
            let messages: Vec<Value> = (0..TURNS_PER_SESSION)
                .map(|t| {
                    let role = if t % 2 == 0 { "user" } else { "assistant" };
                    let topic = TOPICS[(s + t) % TOPICS.len()];
                    json!({
                        "role": role,
                        "content": format!("Session {s}, turn {t}: let us talk about {topic} again"),
                        "timestamp": format!("2026-01-{:02}T10:{:02}:00Z", 1 + s % 28, t),
                    })
                })
                .collect();
            json!({"messages": messages})
        })
        .collect();
    Value::Array(sessions)
}

/// Parses the Prometheus text format: every sample line is `name{labels} value`
/// or `name value`; returns each sample's value by its name and labels.
pub(crate) fn parse_prometheus(text: &str) -> HashMap<String, f64> {
    let mut samples = HashMap::new();
    for line in text.lines() {
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let words: Vec<&str> = comment.split_whitespace().collect();
            assert!(
                matches!(words.first(), Some(&"HELP") | Some(&"TYPE")),
                "a comment line is HELP or TYPE: {line}"
            );
            if words[0] == "TYPE" {
                assert!(
                    ["counter", "gauge", "histogram"].contains(&words[2]),
                    "{line}"
                );
            }
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect("name and value");
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("a number: {line}"));
        let name_end = series.find('{').unwrap_or(series.len());
        let name = &series[..name_end];
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "metric name: {line}"
        );
        if name_end < series.len() {
            let labels = &series[name_end..];
            assert!(labels.starts_with('{') && labels.ends_with('}'), "{line}");
            for pair in labels[1..labels.len() - 1].split("\",") {
                let (label, quoted) = pair.split_once('=').expect("label=value");
                assert!(
                    label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                    "{line}"
                );
                assert!(quoted.starts_with('"'), "{line}");
            }
        }
        samples.insert(series.to_owned(), value);
    }
    samples
}

pub(crate) async fn metrics(server: &Server) -> HashMap<String, f64> {
    let response = server
        .client()
        .get(format!("{}/metrics", server.url))
        .bearer_auth(ADMIN_KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    let content_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    parse_prometheus(&response.text().await.unwrap())
}

fn queued(samples: &HashMap<String, f64>, tenant: &str, class: &str) -> f64 {
    samples
        .get(&format!(
            "octopus_memory_jobs_queued{{tenant_id=\"{tenant}\",class=\"{class}\"}}"
        ))
        .copied()
        .unwrap_or(0.0)
}

/// What the agent remembers of `user0` for `query`, by meaning only.
async fn recall(server: &Server, key: &str, agent: &str, query: &str) -> Value {
    let body =
        json!({"user_id": "user0", "query": query, "mode": "vector", "top_k": 3, "min_score": 0.3});
    server
        .call(
            key,
            Method::POST,
            &format!("/v1/agents/{agent}/recall"),
            Some(body),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_live_message_is_recalled_within_seconds_behind_another_tenants_import() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let (bulk_tenant, bulk_key, bulk_agent) = server.tenant_with_agent("bulk").await;
    let (live_tenant, live_key, live_agent) = server.tenant_with_agent("live").await;
    let live_conversation = server
        .call(
            &live_key,
            Method::POST,
            "/v1/conversations",
            Some(json!({"agent_id": live_agent, "user_id": "user0"})),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // The model loads on first use; load it before the clock starts.
    recall(&server, &live_key, &live_agent, "warm up").await;

    let imported = server
        .call(
            &bulk_key,
            Method::POST,
            "/v1/conversations/import",
            Some(json!({"agent_id": bulk_agent, "user_id": "importer", "sessions": imported_sessions()})),
        )
        .await;
    assert_eq!(
        imported["messages"].as_u64(),
        Some((IMPORTED_SESSIONS * TURNS_PER_SESSION) as u64)
    );

    let live_text = "My cat Whiskers hides under the bed whenever I vacuum the living room";
    server
        .call(
            &live_key,
            Method::POST,
            &format!("/v1/conversations/{live_conversation}/messages"),
            Some(json!({"role": "user", "content": live_text})),
        )
        .await;
    let appended = Instant::now();
    let recalled_after = loop {
        let hits = recall(
            &server,
            &live_key,
            &live_agent,
            "pet frightened by household cleaning",
        )
        .await;
        let found = hits["items"].as_array().unwrap().iter().any(|hit| {
            hit["window"]["message"]["content"].as_str() == Some(live_text)
                && hit["vector_score"].as_f64().is_some_and(|s| s > 0.0)
        });
        if found {
            break appended.elapsed();
        }
        assert!(
            appended.elapsed() < Duration::from_secs(60),
            "the live message was never recalled"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    println!("live message recallable by meaning after {recalled_after:?}");

    // Fair, not merely fast: the import is still waiting when the live message
    // is found, and the metrics say so, tenant by tenant.
    let samples = metrics(&server).await;
    let still_queued = queued(&samples, &bulk_tenant, "bulk");
    assert!(
        still_queued > 1000.0,
        "the import should still be mostly queued, {still_queued} jobs are"
    );
    assert_eq!(queued(&samples, &live_tenant, "live"), 0.0);
    assert!(
        samples
            .get(&format!(
                "octopus_memory_job_oldest_age_seconds{{tenant_id=\"{bulk_tenant}\"}}"
            ))
            .is_some_and(|age| *age >= 0.0)
    );
    assert!(samples["octopus_embedded_texts_total{purpose=\"memory\"}"] >= 1.0);
    // The model's number format, chosen by measurement (the default
    // `auto`): the fastest of what was timed, where more than one was.
    let chosen: Vec<&String> = samples
        .keys()
        .filter(|series| series.starts_with("octopus_embedding_precision{"))
        .collect();
    assert_eq!(chosen.len(), 1, "{chosen:?}");
    assert!(
        chosen[0].ends_with(",chosen_by=\"measurement\"}"),
        "{chosen:?}"
    );
    let timed: Vec<(&String, f64)> = samples
        .iter()
        .filter(|(series, _)| series.starts_with("octopus_embedding_calibration_seconds{"))
        .map(|(series, seconds)| (series, *seconds))
        .collect();
    if let Some((fastest, _)) = timed.iter().min_by(|a, b| a.1.total_cmp(&b.1)) {
        let precision = fastest.split('"').nth(1).unwrap();
        assert!(
            chosen[0].contains(&format!("precision=\"{precision}\"")),
            "{chosen:?} {timed:?}"
        );
    }
    assert!(samples["octopus_connections_open"] >= 1.0);
    assert!(
        samples
            .keys()
            .any(|series| series.starts_with("octopus_http_requests_total{method=\"POST\",route=\"/v1/agents/{agent_id}/recall\",status=\"200\"}")),
        "requests are counted by route template"
    );
    assert!(
        recalled_after <= LIVE_RECALL_WITHIN,
        "recallable after {recalled_after:?}, target {LIVE_RECALL_WITHIN:?}"
    );

    // The metrics name every tenant, so only the admin key reads them.
    let refused = server
        .client()
        .get(format!("{}/metrics", server.url))
        .bearer_auth(&live_key)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), reqwest::StatusCode::FORBIDDEN);
}
