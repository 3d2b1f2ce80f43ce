//! Whole flows through the API, as a client sees them.

use axum::http::{Method, StatusCode};
use serde_json::json;

use crate::harness::{TestServer, agent_body, seed};

#[tokio::test]
async fn every_message_field_round_trips_through_the_api() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let helper = server.agent(&seeded.key, "billing").await;
    let sent = json!([
        {"role": "user", "name": "alice_w", "contains_pii": true, "redacted_content": "my email is [EMAIL]",
         "timestamp": "2026-03-14T09:00:00.123456Z",
         "content": [{"type": "text", "text": "Analyze this chart:"},
                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"}}]},
        {"role": "assistant", "content": null, "agent_id": helper, "token_count": 17,
         "timestamp": "2026-03-14T09:00:01Z",
         "tool_calls": [{"tool_call_id": "call_abc123", "function_name": "get_order_status",
                         "arguments": {"orderId": "ORD-8821"}, "is_error": false}]},
        {"role": "tool", "tool_call_id": "call_abc123", "content": "shipped", "timestamp": "2026-03-14T09:00:02Z",
         "tool_calls": [{"tool_call_id": "call_abc123", "function_name": "get_order_status",
                         "arguments": {"orderId": "ORD-8821"}, "result": {"status": "shipped", "carrier": "FedEx"},
                         "duration_ms": 142, "is_error": false}]}
    ]);
    let conversation = server
        .ok(
            Method::POST,
            "/v1/conversations",
            &seeded.key,
            Some(json!({"agent_id": seeded.agent, "user_id": "bob"})),
            StatusCode::CREATED,
        )
        .await;
    let path = format!(
        "/v1/conversations/{}/messages",
        conversation["id"].as_str().unwrap()
    );
    let stored = server
        .ok(
            Method::POST,
            &path,
            &seeded.key,
            Some(json!({"messages": sent})),
            StatusCode::CREATED,
        )
        .await;
    let episode_id = stored["messages"][0]["episode_id"].as_str().unwrap();
    let read = server
        .ok(
            Method::GET,
            &format!("/v1/episodes/{episode_id}"),
            &seeded.key,
            None,
            StatusCode::OK,
        )
        .await;

    assert_eq!(
        read["messages"], stored["messages"],
        "what is read is what the append returned"
    );
    for (index, message) in sent.as_array().unwrap().iter().enumerate() {
        let got = &read["messages"][index];
        for (field, value) in message.as_object().unwrap() {
            assert_eq!(&got[field], value, "messages[{index}].{field}");
        }
        assert_eq!(got["ordinal"], index);
    }
    assert_eq!(
        read["messages"][0]["timestamp"],
        "2026-03-14T09:00:00.123456Z"
    );
    assert_eq!(read["message_count"], 3);
    assert_eq!(read["total_output_tokens"], 17);
}

#[tokio::test]
async fn a_conversation_from_first_message_to_purge() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let key = &seeded.key;
    let episode_path = format!("/v1/episodes/{}", seeded.episode);

    // One message more, bare (not in a batch), lands in the same open episode.
    let path = format!("/v1/conversations/{}/messages", seeded.conversation);
    let more = server
        .ok(
            Method::POST,
            &path,
            key,
            Some(json!({"role": "user", "content": "Where is order 8821?"})),
            StatusCode::CREATED,
        )
        .await;
    assert_eq!(more["messages"][0]["episode_id"], seeded.episode.as_str());
    assert_eq!(more["messages"][0]["ordinal"], 2);

    let hits = server
        .ok(
            Method::GET,
            "/v1/messages/search?q=order%208821",
            key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        hits["items"][0]["message"]["content"],
        "Where is order 8821?"
    );
    assert!(hits["items"][0]["score"].as_f64().unwrap() > 0.0);

    let close = json!({"end_reason": "agent_closed", "summary": "Alice asked after order 8821.", "key_facts": ["order 8821"]});
    let closed = server
        .ok(
            Method::POST,
            &format!("{episode_path}/close"),
            key,
            Some(close),
            StatusCode::OK,
        )
        .await;
    assert_eq!(closed["end_reason"], "agent_closed");
    assert_eq!(closed["key_facts"], json!(["order 8821"]));
    let again = server
        .call(
            Method::POST,
            &format!("{episode_path}/close"),
            key,
            Some(json!({"end_reason": "timeout"})),
        )
        .await;
    assert_eq!(
        (again.status, again.code()),
        (StatusCode::CONFLICT, "episode_closed")
    );

    let next = server
        .ok(
            Method::POST,
            &path,
            key,
            Some(json!({"role": "user", "content": "new day"})),
            StatusCode::CREATED,
        )
        .await;
    assert_ne!(next["messages"][0]["episode_id"], seeded.episode.as_str());

    let listed = server
        .ok(
            Method::GET,
            &format!("/v1/episodes?conversation_id={}", seeded.conversation),
            key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(listed["items"].as_array().unwrap().len(), 2);
    let window = server
        .ok(
            Method::GET,
            "/v1/episodes?from=2000-01-01T00:00:00Z&to=2001-01-01T00:00:00Z",
            key,
            None,
            StatusCode::OK,
        )
        .await;
    assert!(window["items"].as_array().unwrap().is_empty());

    let purge = server
        .call(Method::POST, &format!("{episode_path}/purge"), key, None)
        .await;
    assert_eq!(
        (purge.status, purge.code()),
        (StatusCode::CONFLICT, "episode_not_deleted")
    );
    server
        .ok(Method::DELETE, &episode_path, key, None, StatusCode::OK)
        .await;
    assert_eq!(
        server
            .call(Method::GET, &episode_path, key, None)
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    let deleted = server
        .ok(
            Method::GET,
            "/v1/episodes?deleted=true",
            key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(deleted["items"].as_array().unwrap().len(), 1);
    let hits = server
        .ok(
            Method::GET,
            "/v1/messages/search?q=8821",
            key,
            None,
            StatusCode::OK,
        )
        .await;
    assert!(
        hits["items"].as_array().unwrap().is_empty(),
        "deleted episodes are not searched"
    );
    server
        .ok(
            Method::POST,
            &format!("{episode_path}/restore"),
            key,
            None,
            StatusCode::OK,
        )
        .await;
    server
        .ok(Method::GET, &episode_path, key, None, StatusCode::OK)
        .await;
    server
        .ok(Method::DELETE, &episode_path, key, None, StatusCode::OK)
        .await;
    server
        .ok(
            Method::POST,
            &format!("{episode_path}/purge"),
            key,
            None,
            StatusCode::NO_CONTENT,
        )
        .await;
    let restore = server
        .call(Method::POST, &format!("{episode_path}/restore"), key, None)
        .await;
    assert_eq!(
        restore.status,
        StatusCode::NOT_FOUND,
        "purged is gone for good"
    );
}

#[tokio::test]
async fn agents_are_patched_and_deactivated() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let path = format!("/v1/agents/{}", seeded.agent);
    let patched = server
        .ok(
            Method::PATCH,
            &path,
            &seeded.key,
            Some(json!({"llm": {"temperature": 0.5}, "memory": {"knowledge_top_k": 8}})),
            StatusCode::OK,
        )
        .await;
    assert_eq!(patched["llm"]["temperature"], 0.5);
    assert_eq!(
        patched["llm"]["model"], "gpt-4o-mini",
        "a merge patch keeps what it does not name"
    );
    assert_eq!(patched["memory"]["knowledge_top_k"], 8);
    assert_eq!(
        patched["memory"]["episodic_top_k"],
        octopus_core::agent::MemoryConfig::default().episodic_top_k
    );

    let twin = server
        .call(
            Method::POST,
            "/v1/agents",
            &seeded.key,
            Some(agent_body("support")),
        )
        .await;
    assert_eq!(
        (twin.status, twin.code()),
        (StatusCode::CONFLICT, "agent_name_taken")
    );

    server
        .ok(
            Method::PATCH,
            &path,
            &seeded.key,
            Some(json!({"is_active": false})),
            StatusCode::OK,
        )
        .await;
    let listed = server
        .ok(Method::GET, "/v1/agents", &seeded.key, None, StatusCode::OK)
        .await;
    assert!(listed["items"].as_array().unwrap().is_empty());
    let refused = server
        .call(
            Method::POST,
            "/v1/conversations",
            &seeded.key,
            Some(json!({"agent_id": seeded.agent, "user_id": "u"})),
        )
        .await;
    assert_eq!(
        (refused.status, refused.code()),
        (StatusCode::CONFLICT, "agent_inactive")
    );
    server.agent(&seeded.key, "support").await;
}

#[tokio::test]
async fn openapi_lists_every_route_with_its_security() {
    let server = TestServer::start().await;
    let doc = server
        .raw(Method::GET, "/openapi.json", None, None)
        .await
        .body;
    let paths = doc["paths"].as_object().unwrap();
    for expected in [
        "/v1/tenants",
        "/v1/tenants/{tenant_id}/keys",
        "/v1/agents/{agent_id}",
        "/v1/conversations/{conversation_id}/messages",
        "/v1/episodes/{episode_id}/close",
        "/v1/episodes/{episode_id}/purge",
        "/v1/messages/search",
        "/healthz",
        "/health",
        "/readyz",
    ] {
        assert!(
            paths.contains_key(expected),
            "{expected} missing from the OpenAPI document"
        );
    }
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    let health = server.raw(Method::GET, "/readyz", None, None).await;
    assert_eq!(health.status, StatusCode::OK);
    for probe in ["/healthz", "/health"] {
        let alive = server.raw(Method::GET, probe, None, None).await;
        assert_eq!(alive.status, StatusCode::OK, "{probe}");
        assert_eq!(alive.body["status"], "ok", "{probe}");
    }
}

/// An id the document calls valid is one the server reads, and one it
/// refuses (schemathesis once followed a `null` agent id into
/// `/v1/agents/None`) the document calls invalid too.
#[tokio::test]
async fn ids_in_paths_are_what_the_document_says_they_are() {
    let server = TestServer::start().await;
    let doc = server
        .raw(Method::GET, "/openapi.json", None, None)
        .await
        .body;
    let pattern = doc["components"]["schemas"]["AgentId"]["pattern"]
        .as_str()
        .expect("ids carry a pattern");
    let pattern = regex::Regex::new(pattern).unwrap();
    let (_, key) = server.tenant("acme").await;
    for (id, readable) in [
        ("None", false),
        ("null", false),
        ("0190f5c2-7d4e-7c3a-9b1e", false),
        ("0190f5c2-7d4e-7c3a-9b1e-4a2f6c8d0e1f", true),
        ("0190f5c27d4e7c3a9b1e4a2f6c8d0e1f", true),
        ("{0190f5c2-7d4e-7c3a-9b1e-4a2f6c8d0e1f}", true),
        ("urn:uuid:0190f5c2-7d4e-7c3a-9b1e-4a2f6c8d0e1f", true),
    ] {
        assert_eq!(pattern.is_match(id), readable, "{id}");
        let reply = server
            .call(Method::GET, &format!("/v1/agents/{id}"), &key, None)
            .await;
        let expected = if readable {
            StatusCode::NOT_FOUND
        } else {
            StatusCode::BAD_REQUEST
        };
        assert_eq!(reply.status, expected, "{id}: {}", reply.body);
    }
}

#[tokio::test]
async fn keyword_scores_read_as_bm25_weights_among_the_searchers_messages() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let conversation = server
        .ok(
            Method::POST,
            "/v1/conversations",
            &seeded.key,
            Some(json!({"agent_id": seeded.agent, "user_id": "dana"})),
            StatusCode::CREATED,
        )
        .await;
    // The walk-through's conversation.
    let messages = json!([
        {"role": "user", "content": "Where is my order ORD-8821?"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"tool_call_id": "call_1", "function_name": "get_order_status", "arguments": {"orderId": "ORD-8821"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "shipped", "tool_calls": [
            {"tool_call_id": "call_1", "function_name": "get_order_status", "arguments": {"orderId": "ORD-8821"},
             "result": {"status": "shipped", "carrier": "FedEx"}, "duration_ms": 142}]},
        {"role": "assistant", "content": "It shipped with FedEx and should arrive on Tuesday."}
    ]);
    server
        .ok(
            Method::POST,
            &format!(
                "/v1/conversations/{}/messages",
                conversation["id"].as_str().unwrap()
            ),
            &seeded.key,
            Some(json!({"messages": messages})),
            StatusCode::CREATED,
        )
        .await;
    let found = server
        .ok(
            Method::GET,
            "/v1/messages/search?q=fedex+delivery&user_id=dana",
            &seeded.key,
            None,
            StatusCode::OK,
        )
        .await;
    let scores: Vec<f64> = found["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["score"].as_f64().unwrap())
        .collect();
    // `fedex` is in two of dana's four messages: its weight is ln 2 (0.69),
    // times a term frequency factor near 1. Table-wide FTS5 statistics gave
    // 9.6e-07 here.
    assert_eq!(scores.len(), 2, "{found}");
    assert!(
        scores.iter().all(|s| (0.3..2.0).contains(s)),
        "scores a person can read: {scores:?}"
    );
}

#[tokio::test]
async fn an_azure_agent_without_its_endpoint_or_deployment_is_refused_at_create_and_patch() {
    let server = TestServer::start().await;
    let (_, key) = server.tenant("acme").await;
    let azure = |llm: serde_json::Value| json!({"name": "azure", "llm": llm});
    let reply = server
        .call(
            Method::POST,
            "/v1/agents",
            &key,
            Some(azure(json!({"provider": "azure_openai", "model": "gpt-4o",
                "base_url": "https://acme.openai.azure.com"}))),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(reply.body["error"]["field"], "llm.deployment");
    let reply = server
        .call(
            Method::POST,
            "/v1/agents",
            &key,
            Some(azure(
                json!({"provider": "azure_openai", "model": "gpt-4o", "deployment": "prod"}),
            )),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(reply.body["error"]["field"], "llm.base_url");
    let agent = server
        .ok(
            Method::POST,
            "/v1/agents",
            &key,
            Some(azure(
                json!({"provider": "azure_openai", "model": "gpt-4o", "deployment": "prod",
                "base_url": "https://acme.openai.azure.com"}),
            )),
            StatusCode::CREATED,
        )
        .await;
    let path = format!("/v1/agents/{}", agent["id"].as_str().unwrap());
    // A patch is checked on the merged agent.
    let reply = server
        .call(
            Method::PATCH,
            &path,
            &key,
            Some(json!({"llm": {"deployment": null}})),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(reply.body["error"]["field"], "llm.deployment");
    let other = server.agent(&key, "support").await;
    let reply = server
        .call(
            Method::PATCH,
            &format!("/v1/agents/{other}"),
            &key,
            Some(json!({"llm": {"provider": "azure_openai"}})),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(reply.body["error"]["field"], "llm.base_url");
    // Nothing refused was stored.
    let kept = server
        .ok(Method::GET, &path, &key, None, StatusCode::OK)
        .await;
    assert_eq!(kept["llm"]["deployment"], "prod");
}
