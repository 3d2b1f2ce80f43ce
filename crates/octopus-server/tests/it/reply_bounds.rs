//! A model's reply is bounded while it is read. A provider (or an endpoint a
//! tenant chose) that sends far more than any reply stops being read at
//! `[llm] max_reply_bytes`: the turn fails as the provider's fault (502,
//! naming it), a stream has passed on no more than the bound, and only the
//! user's message stays, as after any provider failure.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use octopus_testkit::fake_chat::{Answer, ChatProvider};
use serde_json::{Value, json};
use std::sync::Arc;
use tower::ServiceExt;

use crate::harness::TestServer;

/// What the providers send: far past the bound and the socket buffers
/// between the two processes.
const FLOOD: usize = 64 * 1024 * 1024;
/// The default bound: the message limit.
const BOUND: usize = 1024 * 1024;

struct Chat {
    server: TestServer,
    fake: Arc<ChatProvider>,
    key: String,
    conversation: String,
}

async fn start(memory: Value, adjust: impl FnOnce(&mut octopus_engine::EngineConfig)) -> Chat {
    let (server, fake, url) = TestServer::with_fake_chat_and(adjust).await;
    let (_, key) = server.tenant("acme").await;
    let (_, conversation) = server.chat_agent(&key, &url, memory).await;
    Chat {
        server,
        fake,
        key,
        conversation,
    }
}

impl Chat {
    async fn stored(&self) -> Vec<Value> {
        self.server
            .conversation_messages(&self.key, &self.conversation)
            .await
    }

    /// A streamed turn's events, `(name, data)`.
    async fn streamed(&self, message: &str) -> Vec<(String, Value)> {
        let request = Request::builder()
            .method(Method::POST)
            .uri(format!("/v1/conversations/{}/turns", self.conversation))
            .header(header::AUTHORIZATION, format!("Bearer {}", self.key))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(
                json!({"message": message, "stream": true}).to_string(),
            ))
            .unwrap();
        let response = self.server.app.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec())
            .unwrap()
            .split("\n\n")
            .filter(|block| !block.trim().is_empty())
            .map(|block| {
                let field = |name: &str| {
                    block
                        .lines()
                        .find_map(|l| l.strip_prefix(name))
                        .unwrap_or_default()
                        .to_owned()
                };
                (
                    field("event: "),
                    serde_json::from_str(&field("data: ")).unwrap(),
                )
            })
            .collect()
    }
}

fn assert_provider_fault(body: &Value) {
    assert_eq!(body["error"]["code"], "llm_provider_failed", "{body}");
    assert_eq!(body["error"]["provider"], "ollama");
    assert_eq!(body["error"]["fault"], "provider");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("max_reply_bytes"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_reply_past_the_bound_is_a_502_and_stops_being_read() {
    let chat = start(json!({}), |_| {}).await;
    chat.fake.then(Answer::Flood { bytes: FLOOD });
    let reply = chat
        .server
        .call(
            Method::POST,
            &format!("/v1/conversations/{}/turns", chat.conversation),
            &chat.key,
            Some(json!({"message": "Tell me everything"})),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_GATEWAY, "{}", reply.body);
    assert_provider_fault(&reply.body);
    let sent = chat.fake.flood_sent();
    assert!(
        sent < FLOOD / 4,
        "the server read {sent} bytes of a {FLOOD}-byte reply"
    );
    let stored = chat.stored().await;
    assert_eq!(stored.len(), 1, "only the user's message: {stored:?}");
    assert_eq!(stored[0]["content"], "Tell me everything");

    // The next turn is a turn like any other.
    let next = chat
        .server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{}/turns", chat.conversation),
            &chat.key,
            Some(json!({"message": "Briefly, then"})),
            StatusCode::OK,
        )
        .await;
    assert_eq!(next["reply"]["content"], "echo: Briefly, then");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_reply_past_the_bound_passes_on_no_more_than_it_and_ends_in_a_502() {
    let chat = start(json!({}), |_| {}).await;
    chat.fake.then(Answer::Flood { bytes: FLOOD });
    let events = chat.streamed("Tell me everything").await;
    let streamed: usize = events
        .iter()
        .filter(|(name, _)| name == "delta")
        .map(|(_, data)| data["text"].as_str().unwrap().len())
        .sum();
    assert!(streamed > 0, "the stream began");
    assert!(
        streamed <= BOUND,
        "{streamed} bytes of deltas, past the bound of {BOUND}"
    );
    let (last, error) = events.last().unwrap();
    assert_eq!(last, "error");
    assert_eq!(error["status"], 502);
    assert_provider_fault(error);
    let sent = chat.fake.flood_sent();
    assert!(
        sent < FLOOD / 4,
        "the server read {sent} bytes of a {FLOOD}-byte stream"
    );
    assert_eq!(chat.stored().await.len(), 1, "only the user's message");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_bound_applies_and_the_openai_door_reports_the_provider() {
    let chat = start(json!({}), |engine| engine.llm.max_reply_bytes = 4096).await;
    // Under the bound: an ordinary reply.
    chat.fake.then(Answer::text("x".repeat(4000)));
    let reply = chat
        .server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{}/turns", chat.conversation),
            &chat.key,
            Some(json!({"message": "A little"})),
            StatusCode::OK,
        )
        .await;
    assert_eq!(reply["reply"]["content"].as_str().unwrap().len(), 4000);
    // Past it, through the OpenAI-compatible door.
    chat.fake.then(Answer::text("x".repeat(5000)));
    let reply = chat
        .server
        .call_with_headers(
            Method::POST,
            "/v1/chat/completions",
            &chat.key,
            &[("x-octopus-conversation", &chat.conversation)],
            Some(json!({"model": "support", "user": "dana",
                "messages": [{"role": "user", "content": "A lot"}]})),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_GATEWAY, "{}", reply.body);
    assert_provider_fault(&reply.body);
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("4096 bytes")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_the_store_cannot_hold_is_the_providers_fault_not_the_callers() {
    let chat = start(json!({}), |engine| engine.limits.max_tool_calls = 4).await;
    // More calls in one reply than a message may record.
    let calls = (0..5)
        .map(|i| (format!("call_{i}"), "lookup".to_owned(), json!({"n": i})))
        .collect();
    chat.fake.then(Answer::Reply {
        text: String::new(),
        tool_calls: calls,
    });
    let reply = chat
        .server
        .call(
            Method::POST,
            &format!("/v1/conversations/{}/turns", chat.conversation),
            &chat.key,
            Some(json!({"message": "Look them up",
                "tools": [{"name": "lookup", "parameters": {"type": "object"}}]})),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_GATEWAY, "{}", reply.body);
    assert_eq!(reply.body["error"]["code"], "llm_provider_failed");
    let message = reply.body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("cannot be stored") && message.contains("tool_calls"),
        "{message}"
    );
    assert_eq!(chat.stored().await.len(), 1, "only the user's message");

    // A NUL the model writes is stored as the replacement character.
    chat.fake.then(Answer::text("a\u{0}b"));
    let reply = chat
        .server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{}/turns", chat.conversation),
            &chat.key,
            Some(json!({"message": "Say it"})),
            StatusCode::OK,
        )
        .await;
    assert_eq!(reply["reply"]["content"], "a\u{fffd}b");
}
