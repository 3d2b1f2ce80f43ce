//! `GET /v1/status`: the server, and the caller's own memory queue.

use axum::http::{Method, StatusCode};
use serde_json::json;

use crate::harness::{ADMIN_KEY, TestServer};

async fn status(server: &TestServer, key: &str) -> serde_json::Value {
    let reply = server.call(Method::GET, "/v1/status", key, None).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_sees_the_server_and_its_own_queue_only() {
    let server = TestServer::start().await;
    let (_, busy) = server.tenant("busy").await;
    let (_, idle) = server.tenant("idle").await;
    let agent = server.agent(&busy, "support").await;
    let conversation = server.conversation(&busy, &agent, "alice").await;
    // No memory worker runs here: the messages' embeddings wait.
    for text in ["My dog is called Biscuit", "He is a greyhound"] {
        server
            .ok(
                Method::POST,
                &format!("/v1/conversations/{conversation}/messages"),
                &busy,
                Some(json!({"role": "user", "content": text})),
                StatusCode::CREATED,
            )
            .await;
    }
    let busy_sees = status(&server, &busy).await;
    assert_eq!(busy_sees["database"], "sqlite");
    assert_eq!(busy_sees["vectors"], "embedded");
    assert_eq!(busy_sees["version"], env!("CARGO_PKG_VERSION"));
    let waiting = busy_sees["memory_queue"]["waiting"].as_u64().unwrap();
    assert!(waiting >= 2, "{busy_sees}");
    assert!(!busy_sees["memory_queue"]["oldest_queued_at"].is_null());

    let idle_sees = status(&server, &idle).await;
    assert_eq!(idle_sees["memory_queue"]["waiting"], 0, "{idle_sees}");
    assert!(idle_sees["memory_queue"]["oldest_queued_at"].is_null());

    let admin_sees = status(&server, ADMIN_KEY).await;
    assert_eq!(
        admin_sees["memory_queue"]["waiting"], waiting,
        "{admin_sees}"
    );

    // Once the worker has done the work, the queue is empty.
    while server.octopus.run_memory_jobs().await.unwrap() > 0 {}
    let done = status(&server, &busy).await;
    assert_eq!(done["memory_queue"]["waiting"], 0, "{done}");
    assert!(done["embedding"]["model"].is_string(), "{done}");
    let keyless = server.raw(Method::GET, "/v1/status", None, None).await;
    assert_eq!(keyless.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_whose_model_cannot_be_called_is_named_with_why() {
    let server = TestServer::start().await;
    let (_, key) = server.tenant("acme").await;
    let openai = server.agent(&key, "support").await;
    let local = server
        .ok(
            Method::POST,
            "/v1/agents",
            &key,
            Some(json!({"name": "local", "llm": {"provider": "ollama", "model": "llama3.2:1b"}})),
            StatusCode::CREATED,
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let of = |agent: &str| format!("/v1/status?agent_id={agent}");
    let local_sees = server.call(Method::GET, &of(&local), &key, None).await.body;
    assert_eq!(local_sees["agent"]["name"], "local", "{local_sees}");
    assert_eq!(local_sees["agent"]["model"], "ollama/llama3.2:1b");
    assert_eq!(local_sees["agent"]["model_callable"], true, "{local_sees}");
    if std::env::var_os("OPENAI_API_KEY").is_none() {
        let openai_sees = server
            .call(Method::GET, &of(&openai), &key, None)
            .await
            .body;
        assert_eq!(
            openai_sees["agent"]["model_callable"], false,
            "{openai_sees}"
        );
        assert!(
            openai_sees["agent"]["problem"]
                .as_str()
                .is_some_and(|why| why.contains("OPENAI_API_KEY")),
            "{openai_sees}"
        );
    }
    // Another tenant's agent is not found; the admin key has no agents.
    let (_, other) = server.tenant("other").await;
    let foreign = server.call(Method::GET, &of(&local), &other, None).await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND, "{}", foreign.body);
    let admin = server.call(Method::GET, &of(&local), ADMIN_KEY, None).await;
    assert_eq!(admin.status, StatusCode::FORBIDDEN, "{}", admin.body);
    // Without agent_id, no agent is said.
    let plain = server
        .call(Method::GET, "/v1/status", &key, None)
        .await
        .body;
    assert!(plain.get("agent").is_none(), "{plain}");
}
