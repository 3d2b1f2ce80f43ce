//! Erasing one message over HTTP: gone from the next context, from search
//! and from its episode at once, the facts learned from it with it, their
//! histories saying by whom; bad input changes nothing.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{TestServer, seed, seed_fact_from};

/// The texts of the messages a context for the conversation sends.
async fn context_texts(server: &TestServer, key: &str, conversation: &str) -> Vec<String> {
    let context = server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{conversation}/context"),
            key,
            Some(json!({"message": "What was on the roadmap?"})),
            StatusCode::OK,
        )
        .await;
    context["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_erased_message_is_gone_at_once_with_the_facts_learned_from_it() {
    erased(TestServer::start().await).await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_an_erased_message_is_gone_at_once_with_the_facts_learned_from_it() {
    erased(TestServer::on_postgres().await).await;
}

#[cfg(feature = "qdrant-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_qdrant_an_erased_message_is_gone_at_once_with_the_facts_learned_from_it() {
    erased(TestServer::on_qdrant().await).await;
}

async fn erased(server: TestServer) {
    let world = seed(&server, "acme").await;
    let said = "acme secret roadmap";
    let fact = seed_fact_from(
        &server,
        &world.tenant,
        &world.episode,
        &[&world.message],
        "Alice drafts the quarterly plan",
    )
    .await;
    let before = context_texts(&server, &world.key, &world.conversation).await;
    assert!(before.iter().any(|text| text == said), "{before:?}");
    let episode_path = format!("/v1/episodes/{}", world.episode);
    let messages = |episode: &Value| episode["messages"].as_array().unwrap().len();

    // Bad input names its field, and nothing changes.
    let path = format!("/v1/messages/{}", world.message);
    let long = format!("{path}?reason={}", "x".repeat(501));
    let refused = server.call(Method::DELETE, &long, &world.key, None).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert_eq!(refused.body["error"]["field"], "reason");
    let episode = server
        .ok(Method::GET, &episode_path, &world.key, None, StatusCode::OK)
        .await;
    assert_eq!(messages(&episode), 2);

    let receipt = server
        .ok(
            Method::DELETE,
            &format!("{path}?reason=she+asked"),
            &world.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(receipt["message_id"], world.message.as_str());
    assert_eq!(receipt["episode_id"], world.episode.as_str());
    assert_eq!(receipt["facts_deleted"], 1);
    assert_eq!(receipt["compacted"], true);

    // The next context, from any cache, no longer has it.
    let after = context_texts(&server, &world.key, &world.conversation).await;
    assert!(after.iter().all(|text| text != said), "{after:?}");
    assert!(
        after.iter().all(|text| !text.contains("quarterly plan")),
        "the fact learned from it: {after:?}"
    );
    let episode = server
        .ok(Method::GET, &episode_path, &world.key, None, StatusCode::OK)
        .await;
    assert_eq!(messages(&episode), 1);
    let found = server
        .ok(
            Method::GET,
            "/v1/messages/search?q=roadmap",
            &world.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(found["items"], json!([]), "{found}");

    // The fact is gone; its history says who erased what it came from.
    let gone = server
        .call(Method::GET, &format!("/v1/facts/{fact}"), &world.key, None)
        .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    let history = server
        .ok(
            Method::GET,
            &format!("/v1/facts/{fact}/history"),
            &world.key,
            None,
            StatusCode::OK,
        )
        .await;
    let last = history["items"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["action"], "deleted");
    assert_eq!(last["text"], Value::Null);
    assert!(
        last["reason"]
            .as_str()
            .unwrap()
            .ends_with("erased: she asked"),
        "{last}"
    );

    let again = server.call(Method::DELETE, &path, &world.key, None).await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    assert_eq!(again.code(), "message_not_found");
}
