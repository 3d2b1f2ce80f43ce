//! A Qdrant outage through the API: searches by meaning answer 503 naming
//! Qdrant, a turn's context is still assembled from what the words find
//! (the trace says so), and once Qdrant is back nothing stored is missing.

use axum::http::{Method, StatusCode};
use octopus_qdrant::testing::OwnQdrant;
use octopus_server::ServerSettings;
use serde_json::{Value, json};

use crate::harness::{TestServer, seed};

/// sam's memories of the knee, recalled.
async fn recall_knee(server: &TestServer, key: &str, agent: &str) -> crate::harness::Reply {
    let recall = json!({"user_id": "sam", "query": "knee pain on descents"});
    server
        .call(
            Method::POST,
            &format!("/v1/agents/{agent}/recall"),
            key,
            Some(recall),
        )
        .await
}

/// The context of sam's next turn.
async fn next_turn(server: &TestServer, key: &str, conversation: &str) -> Value {
    server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{conversation}/context"),
            key,
            Some(json!({"message": "Should I still run downhill with my knee?"})),
            StatusCode::OK,
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_qdrant_is_down_searches_answer_503_and_context_falls_back_to_words() {
    let mut qdrant = OwnQdrant::start();
    let url = qdrant.url();
    let server = TestServer::with_backends(ServerSettings::default(), |app| {
        app.vectors.backend = Some(octopus_app::settings::VectorBackend::Qdrant);
        app.vectors.qdrant.url = url;
        app.vectors.qdrant.timeout_secs = 2;
        app.vectors.qdrant.connect_timeout_secs = 1;
    })
    .await;
    let seeded = seed(&server, "acme").await;
    let (key, agent) = (&seeded.key, seeded.agent);
    let knowledge = format!("/v1/agents/{agent}/knowledge");
    server
        .ok(
            Method::POST,
            &format!("{knowledge}/documents"),
            key,
            Some(json!({"source": "care.md", "text": "Ice a sore knee for fifteen minutes after each run."})),
            StatusCode::CREATED,
        )
        .await;
    let import = json!({
        "agent_id": agent, "user_id": "sam",
        "sessions": [{"messages": [
            {"role": "user", "content": "My left knee hurts when I go downhill", "timestamp": "2026-03-09T19:00:00Z"},
            {"role": "assistant", "content": "Ease off the descents for a week.", "timestamp": "2026-03-09T19:01:00Z"},
        ]}]
    });
    let report = server
        .ok(
            Method::POST,
            "/v1/conversations/import",
            key,
            Some(import),
            StatusCode::CREATED,
        )
        .await;
    let conversation = report["conversation"]["id"].as_str().unwrap().to_owned();
    server.octopus.run_memory_jobs().await.unwrap();

    qdrant.kill();
    let refused = recall_knee(&server, key, &agent).await;
    assert_eq!(
        refused.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{:?}",
        refused.body
    );
    assert_eq!(refused.body["error"]["code"], "unavailable");
    assert!(
        refused.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("qdrant"),
        "{:?}",
        refused.body
    );
    let refused = server
        .call(
            Method::POST,
            &format!("{knowledge}/search"),
            key,
            Some(json!({"query": "what to do for a sore knee"})),
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{:?}",
        refused.body
    );

    // The turn goes on: memories and knowledge found by their words.
    let context = next_turn(&server, key, &conversation).await;
    let trace = &context["trace"];
    assert!(
        trace["vector_search_unavailable"]
            .as_str()
            .unwrap()
            .contains("qdrant"),
        "{trace}"
    );
    let said = |block: &str, text: &str| {
        trace[block]
            .as_array()
            .unwrap()
            .iter()
            .any(|item| item["text"].as_str().unwrap().contains(text))
    };
    assert!(
        said("episodic", "My left knee hurts when I go downhill"),
        "{trace}"
    );
    assert!(said("knowledge", "Ice a sore knee"), "{trace}");

    // Back up: searches by meaning answer again, and the trace says nothing.
    qdrant.resume();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let recalled = loop {
        let reply = recall_knee(&server, key, &agent).await;
        if reply.status == StatusCode::OK {
            break reply.body;
        }
        assert!(std::time::Instant::now() < deadline, "{:?}", reply.body);
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    // Both of sam's turns answer the question (the knee, the descents); which
    // ranks first is the fusion's business. What matters here is that the
    // meaning search is back: the knee is found by its vector again.
    let knee = recalled["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| {
            item["window"]["message"]["content"] == "My left knee hurts when I go downhill"
        })
        .unwrap_or_else(|| panic!("{recalled}"));
    assert!(knee["vector_score"].as_f64().unwrap() > 0.3, "{knee}");
    let context = next_turn(&server, key, &conversation).await;
    assert!(
        context["trace"].get("vector_search_unavailable").is_none(),
        "{context}"
    );
}
