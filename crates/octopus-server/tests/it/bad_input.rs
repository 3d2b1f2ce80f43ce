//! Bad input gets a 4xx with a JSON body naming the problem, never a 500, and
//! writes nothing.

use axum::http::{Method, StatusCode};
use octopus_server::ServerSettings;
use serde_json::{Value, json};

use crate::harness::{ADMIN_KEY, Seeded, TestServer, seed};

/// The seeded episode still holds exactly its two messages.
async fn assert_nothing_written(server: &TestServer, seeded: &Seeded) {
    let episode = server
        .ok(
            Method::GET,
            &format!("/v1/episodes/{}", seeded.episode),
            &seeded.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(episode["message_count"], 2);
    assert_eq!(episode["messages"].as_array().unwrap().len(), 2);
    let episodes = server
        .ok(
            Method::GET,
            "/v1/episodes",
            &seeded.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        episodes["items"].as_array().unwrap().len(),
        1,
        "no episode was opened"
    );
}

async fn append_raw(server: &TestServer, seeded: &Seeded, body: &[u8]) -> crate::harness::Reply {
    let path = format!("/v1/conversations/{}/messages", seeded.conversation);
    server
        .raw(Method::POST, &path, Some(&seeded.key), Some(body.to_vec()))
        .await
}

async fn append(server: &TestServer, seeded: &Seeded, body: Value) -> crate::harness::Reply {
    append_raw(server, seeded, &serde_json::to_vec(&body).unwrap()).await
}

#[tokio::test]
async fn malformed_json_is_400() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    for body in [
        &b"{\"role\": \"user\", \"content\": "[..],
        b"not json",
        b"{} trailing",
    ] {
        let reply = append_raw(&server, &seeded, body).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
        assert_eq!(reply.code(), "malformed_json");
    }
    assert_nothing_written(&server, &seeded).await;
}

/// A key twice in one object is refused in every body, appends included:
/// a proxy that reads the first value would otherwise see another message
/// than the one stored.
#[tokio::test]
async fn a_key_twice_in_one_object_is_422_and_stores_nothing() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    for (body, field) in [
        (
            &br#"{"role": "user", "content": "FIRSTVAL", "role": "assistant", "content": "SECONDVAL"}"#[..],
            "",
        ),
        (
            br#"{"messages": [{"role": "user", "content": "a", "content": "b"}]}"#,
            "messages[0]",
        ),
    ] {
        let reply = append_raw(&server, &seeded, body).await;
        assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", reply.body);
        assert_eq!(reply.code(), "invalid_request");
        let message = reply.body["error"]["message"].as_str().unwrap();
        assert!(message.contains("duplicate field"), "{message}");
        assert!(message.starts_with(field), "{message}");
    }
    assert_nothing_written(&server, &seeded).await;
}

#[tokio::test]
async fn unknown_role_names_the_field() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let reply = append(
        &server,
        &seeded,
        json!({"messages": [
            {"role": "user", "content": "fine"},
            {"role": "robot", "content": "beep"}
        ]}),
    )
    .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(reply.code(), "invalid_request");
    assert_eq!(reply.body["error"]["field"], "messages[1].role");
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("robot")
    );
    assert_nothing_written(&server, &seeded).await;
}

#[tokio::test]
async fn wrong_content_shape_names_the_field() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let cases = [
        (json!({"role": "user", "content": 42}), "content"),
        (json!({"role": "user", "content": {"text": "x"}}), "content"),
        (
            json!({"role": "user", "content": [{"type": "video", "url": "x"}]}),
            "content[0]",
        ),
        (
            json!({"role": "user", "content": []}),
            "messages[0].content",
        ),
        (json!({"role": "user"}), "messages[0].content"),
        (
            json!({"role": "user", "content": "x", "colour": "red"}),
            ".",
        ),
    ];
    for (message, field) in cases {
        // Sent bare (a single message) for the shape errors, in a batch for the
        // rule errors: both forms must name the field.
        let body = if field.starts_with("messages") {
            json!({"messages": [message]})
        } else {
            message.clone()
        };
        let reply = append(&server, &seeded, body).await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{message}: {}",
            reply.body
        );
        assert_eq!(reply.code(), "invalid_request");
        if field != "." {
            assert!(
                reply.body["error"]["field"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with(field),
                "{message}: {}",
                reply.body
            );
        } else {
            assert!(
                reply.body["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("colour"),
                "{}",
                reply.body
            );
        }
    }
    assert_nothing_written(&server, &seeded).await;
}

#[tokio::test]
async fn oversized_body_is_413() {
    let server = TestServer::with_config(ServerSettings {
        max_body_bytes: 4096,
        ..ServerSettings::default()
    })
    .await;
    let seeded = seed(&server, "acme").await;
    let reply = append(
        &server,
        &seeded,
        json!({"role": "user", "content": "x".repeat(10_000)}),
    )
    .await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(reply.code(), "body_too_large");
    assert_nothing_written(&server, &seeded).await;
}

#[tokio::test]
async fn oversized_message_and_batch_are_422() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let reply = append(
        &server,
        &seeded,
        json!({"role": "user", "content": "x".repeat((1 << 20) + 1)}),
    )
    .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(reply.body["error"]["field"], "messages[0].content");

    let many: Vec<Value> = (0..1001)
        .map(|i| json!({"role": "user", "content": format!("m{i}")}))
        .collect();
    let reply = append(&server, &seeded, json!({"messages": many})).await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(reply.body["error"]["field"], "messages");
    let reply = append(&server, &seeded, json!({"messages": []})).await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_nothing_written(&server, &seeded).await;
}

#[tokio::test]
async fn invalid_ids_are_400() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    for path in [
        "/v1/episodes/not-a-uuid",
        "/v1/agents/123",
        "/v1/conversations/zzz/messages",
    ] {
        let method = if path.ends_with("messages") {
            Method::POST
        } else {
            Method::GET
        };
        let reply = server
            .call(
                method,
                path,
                &seeded.key,
                Some(json!({"role": "user", "content": "x"})),
            )
            .await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{path}: {}",
            reply.body
        );
        assert_eq!(reply.code(), "invalid_id");
    }
    let reply = server
        .call(Method::GET, "/v1/episodes?agent_id=nope", &seeded.key, None)
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.code(), "invalid_query");
    let reply = server
        .call(Method::GET, "/v1/episodes?agentId=x", &seeded.key, None)
        .await;
    assert_eq!(
        reply.status,
        StatusCode::BAD_REQUEST,
        "unknown query parameters are refused"
    );
    assert_nothing_written(&server, &seeded).await;
}

#[tokio::test]
async fn an_unknown_agent_is_404_and_an_unknown_speaker_409() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let ghost = uuid_string();
    let reply = server
        .call(
            Method::POST,
            "/v1/conversations",
            &seeded.key,
            Some(json!({"agent_id": ghost, "user_id": "u"})),
        )
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND);
    assert_eq!(reply.code(), "agent_not_found");

    let reply = append(
        &server,
        &seeded,
        json!({"messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello", "agent_id": ghost}
        ]}),
    )
    .await;
    // The conversation exists: it is not its 404, but the body's conflict.
    assert_eq!(reply.status, StatusCode::CONFLICT);
    assert_eq!(reply.code(), "speaker_not_found");
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("messages[1].agent_id")
    );
    assert_nothing_written(&server, &seeded).await;
}

#[tokio::test]
async fn message_to_a_deleted_conversation_is_410() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let path = format!("/v1/conversations/{}", seeded.conversation);
    server
        .ok(
            Method::DELETE,
            &path,
            &seeded.key,
            None,
            StatusCode::NO_CONTENT,
        )
        .await;
    let reply = append(
        &server,
        &seeded,
        json!({"role": "user", "content": "anyone there?"}),
    )
    .await;
    assert_eq!(reply.status, StatusCode::GONE);
    assert_eq!(reply.code(), "conversation_deleted");
    // Its episodes went with it: not readable, not searchable, listed among
    // the deleted, and restorable one by one.
    let episode_path = format!("/v1/episodes/{}", seeded.episode);
    let gone = server
        .call(Method::GET, &episode_path, &seeded.key, None)
        .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    let found = server
        .ok(
            Method::GET,
            "/v1/messages/search?q=secret+roadmap",
            &seeded.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(found["items"], json!([]));
    let deleted = server
        .ok(
            Method::GET,
            &format!(
                "/v1/episodes?conversation_id={}&deleted=true",
                seeded.conversation
            ),
            &seeded.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(deleted["items"].as_array().unwrap().len(), 1);
    let restored = server
        .ok(
            Method::POST,
            &format!("{episode_path}/restore"),
            &seeded.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(restored["message_count"], 2);
    assert_eq!(restored["end_reason"], "user_closed");
}

#[tokio::test]
async fn restoring_a_live_episode_is_409_not_404() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let reply = server
        .call(
            Method::POST,
            &format!("/v1/episodes/{}/restore", seeded.episode),
            &seeded.key,
            None,
        )
        .await;
    assert_eq!(reply.status, StatusCode::CONFLICT, "{}", reply.body);
    assert_eq!(reply.code(), "episode_live");
}

#[tokio::test]
async fn a_value_of_the_wrong_type_for_an_enum_is_422_naming_the_field() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    for mode in [json!(null), json!(1), json!({"a": 1})] {
        let reply = server
            .call(
                Method::POST,
                &format!("/v1/agents/{}/recall", seeded.agent),
                &seeded.key,
                Some(json!({"user_id": "alice", "query": "roadmap", "mode": mode})),
            )
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{mode}: {}",
            reply.body
        );
        assert_eq!(reply.body["error"]["field"], "mode", "{}", reply.body);
    }
    // Broken JSON is still 400.
    let broken = server
        .raw(
            Method::POST,
            &format!("/v1/agents/{}/recall", seeded.agent),
            Some(&seeded.key),
            Some(b"{\"mode\": ".to_vec()),
        )
        .await;
    assert_eq!(broken.status, StatusCode::BAD_REQUEST);
    assert_eq!(broken.code(), "malformed_json");
}

#[tokio::test]
async fn a_number_with_a_zero_fraction_is_an_integer() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let reply = server
        .call(
            Method::POST,
            &format!("/v1/agents/{}/recall", seeded.agent),
            &seeded.key,
            Some(json!({"user_id": "alice", "query": "roadmap", "mode": "keyword", "top_k": 3.0})),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let reply = server
        .call(
            Method::POST,
            &format!("/v1/agents/{}/recall", seeded.agent),
            &seeded.key,
            Some(json!({"user_id": "alice", "query": "roadmap", "top_k": 3.5})),
        )
        .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(reply.body["error"]["field"], "top_k");
}

#[tokio::test]
async fn an_agent_takes_a_json_merge_patch_by_its_media_type() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let reply = server
        .raw_as(
            Method::PATCH,
            &format!("/v1/agents/{}", seeded.agent),
            Some(&seeded.key),
            "application/merge-patch+json",
            Some(br#"{"system_prompt": "Be brief."}"#.to_vec()),
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.body["system_prompt"], "Be brief.");
    let wrong = server
        .raw_as(
            Method::PATCH,
            &format!("/v1/agents/{}", seeded.agent),
            Some(&seeded.key),
            "text/plain",
            Some(br#"{"system_prompt": "x"}"#.to_vec()),
        )
        .await;
    assert_eq!(wrong.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
}

#[tokio::test]
async fn message_timestamps_are_bounded_and_episode_times_only_move_forward() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    for (at, why) in [
        ("9026-01-01T00:00:00Z", "in the future"),
        ("0001-01-01T00:00:00Z", "before 1970"),
        ("-0044-03-15T00:00:00Z", "a negative year"),
    ] {
        let reply = append(
            &server,
            &seeded,
            json!({"role": "user", "content": "when?", "timestamp": at}),
        )
        .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{why}: {}",
            reply.body
        );
        assert_eq!(
            reply.body["error"]["field"], "messages[0].timestamp",
            "{why}"
        );
    }
    // An import may be old, but not from the future.
    let import = |at: &str| {
        json!({"agent_id": seeded.agent, "user_id": "bob", "sessions": [
            {"messages": [{"role": "user", "content": "hello", "timestamp": at}]}]})
    };
    let future = server
        .call(
            Method::POST,
            "/v1/conversations/import",
            &seeded.key,
            Some(import("9026-01-01T00:00:00Z")),
        )
        .await;
    assert_eq!(
        future.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        future.body
    );
    assert_eq!(
        future.body["error"]["field"],
        "sessions[0].messages[0].timestamp"
    );
    server
        .ok(
            Method::POST,
            "/v1/conversations/import",
            &seeded.key,
            Some(import("1999-12-31T23:59:00Z")),
            StatusCode::CREATED,
        )
        .await;

    // Nothing was stored by the refused appends, and the episode cannot end
    // before it began.
    let path = format!("/v1/episodes/{}", seeded.episode);
    let episode = server
        .ok(Method::GET, &path, &seeded.key, None, StatusCode::OK)
        .await;
    assert_eq!(episode["message_count"], 2);
    let early = server
        .call(
            Method::POST,
            &format!("{path}/close"),
            &seeded.key,
            Some(json!({"end_reason": "user_closed", "ended_at": "2001-01-01T00:00:00Z"})),
        )
        .await;
    assert_eq!(
        early.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        early.body
    );
    assert_eq!(early.body["error"]["field"], "ended_at");
}

#[tokio::test]
async fn a_deactivated_agent_is_read_only() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let agent = format!("/v1/agents/{}", seeded.agent);
    server
        .ok(
            Method::PATCH,
            &agent,
            &seeded.key,
            Some(json!({"is_active": false})),
            StatusCode::OK,
        )
        .await;
    let conversation = format!("/v1/conversations/{}", seeded.conversation);
    let refused = [
        (
            Method::POST,
            format!("{conversation}/messages"),
            json!({"role": "user", "content": "hi"}),
        ),
        (
            Method::POST,
            format!("{conversation}/context"),
            json!({"message": "hi"}),
        ),
        (
            Method::POST,
            format!("{agent}/knowledge/documents"),
            json!({"source": "a.md", "text": "Some text."}),
        ),
        (
            Method::POST,
            "/v1/conversations".to_owned(),
            json!({"agent_id": seeded.agent, "user_id": "bob"}),
        ),
    ];
    for (method, path, body) in refused {
        let reply = server
            .call(method.clone(), &path, &seeded.key, Some(body))
            .await;
        assert_eq!(
            reply.status,
            StatusCode::CONFLICT,
            "{method} {path}: {}",
            reply.body
        );
        assert_eq!(reply.code(), "agent_inactive");
    }
    // Its memory stays readable.
    let episode = server
        .ok(
            Method::GET,
            &format!("/v1/episodes/{}", seeded.episode),
            &seeded.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(episode["message_count"], 2);
    server
        .ok(
            Method::GET,
            "/v1/messages/search?q=roadmap",
            &seeded.key,
            None,
            StatusCode::OK,
        )
        .await;
    // A patch reactivates it, and it takes messages again.
    server
        .ok(
            Method::PATCH,
            &agent,
            &seeded.key,
            Some(json!({"is_active": true})),
            StatusCode::OK,
        )
        .await;
    let reply = append(
        &server,
        &seeded,
        json!({"role": "user", "content": "back again"}),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
}

#[tokio::test]
async fn unknown_end_reason_is_422() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let path = format!("/v1/episodes/{}/close", seeded.episode);
    let reply = server
        .call(
            Method::POST,
            &path,
            &seeded.key,
            Some(json!({"end_reason": "bored"})),
        )
        .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(reply.body["error"]["field"], "end_reason");
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("user_closed")
    );
    let reply = server
        .call(Method::POST, &path, &seeded.key, Some(json!({})))
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "end_reason is required"
    );
    let episode = server
        .ok(
            Method::GET,
            &format!("/v1/episodes/{}", seeded.episode),
            &seeded.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert!(episode["ended_at"].is_null(), "the episode is still open");
}

#[tokio::test]
async fn bad_agent_config_names_the_nested_field() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let body =
        json!({"name": "x", "llm": {"provider": "openai", "model": "gpt-4o", "temperature": 9}});
    let reply = server
        .call(Method::POST, "/v1/agents", &seeded.key, Some(body))
        .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(reply.body["error"]["field"], "llm.temperature");
    let body = json!({"name": "x", "llm": {"provider": "skynet", "model": "t-800"}});
    let reply = server
        .call(Method::POST, "/v1/agents", &seeded.key, Some(body))
        .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(reply.body["error"]["field"], "llm.provider");
    let path = format!("/v1/agents/{}", seeded.agent);
    let reply = server
        .call(
            Method::PATCH,
            &path,
            &seeded.key,
            Some(json!({"memory": {"max_working_memory_tokens": 0}})),
        )
        .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        reply.body["error"]["field"],
        "memory.max_working_memory_tokens"
    );
    let reply = server
        .call(Method::PATCH, &path, &seeded.key, Some(json!({"id": "x"})))
        .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    let agent = server
        .ok(Method::GET, &path, &seeded.key, None, StatusCode::OK)
        .await;
    assert_eq!(
        agent["memory"]["max_working_memory_tokens"], 8000,
        "a refused patch changes nothing"
    );
}

#[tokio::test]
async fn authentication_errors_are_json() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let reply = server.raw(Method::GET, "/v1/agents", None, None).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    assert_eq!(reply.code(), "unauthenticated");
    let reply = server
        .call(Method::GET, "/v1/agents", "oct_wrong", None)
        .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    let reply = server
        .call(Method::GET, "/v1/tenants", &seeded.key, None)
        .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert_eq!(reply.code(), "admin_only");
    let reply = server
        .call(Method::GET, "/v1/agents", ADMIN_KEY, None)
        .await;
    assert_eq!(reply.status, StatusCode::FORBIDDEN);
    assert_eq!(reply.code(), "tenant_key_required");
    let reply = server
        .call(Method::GET, "/v1/nowhere", &seeded.key, None)
        .await;
    assert_eq!(
        (reply.status, reply.code()),
        (StatusCode::NOT_FOUND, "route_not_found")
    );
    let reply = server
        .call(Method::PUT, "/v1/agents", &seeded.key, None)
        .await;
    assert_eq!(
        (reply.status, reply.code()),
        (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed")
    );
}

#[tokio::test]
async fn revoked_key_stops_working() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let keys = server
        .ok(
            Method::GET,
            &format!("/v1/tenants/{}/keys", seeded.tenant),
            ADMIN_KEY,
            None,
            StatusCode::OK,
        )
        .await;
    let key_id = keys["items"][0]["id"].as_str().unwrap();
    assert!(
        keys["items"][0].get("hash").is_none() && keys["items"][0].get("key").is_none(),
        "secrets never listed"
    );
    server
        .ok(
            Method::DELETE,
            &format!("/v1/tenants/{}/keys/{key_id}", seeded.tenant),
            ADMIN_KEY,
            None,
            StatusCode::NO_CONTENT,
        )
        .await;
    let reply = server
        .call(Method::GET, "/v1/agents", &seeded.key, None)
        .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
}

pub fn uuid_string() -> String {
    // A syntactically valid id that names nothing.
    "0190f4c2-7a3b-7cde-8f00-123456789abc".to_owned()
}

#[tokio::test]
async fn every_free_form_field_has_a_length_limit() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let megabyte = "m".repeat(1 << 20);
    let cases = [
        (
            Method::POST,
            "/v1/agents".to_owned(),
            json!({"name": "big", "llm": {"provider": "openai", "model": megabyte}}),
            "llm.model",
        ),
        (
            Method::POST,
            "/v1/conversations".to_owned(),
            json!({"agent_id": seeded.agent, "user_id": "bob", "metadata": {"blob": "x".repeat(5 << 20)}}),
            "metadata",
        ),
        (
            Method::POST,
            format!("/v1/agents/{}/knowledge/documents", seeded.agent),
            json!({"source": "a.md", "text": "Some text.", "category": megabyte}),
            "category",
        ),
        (
            Method::POST,
            format!("/v1/agents/{}/recall", seeded.agent),
            json!({"user_id": "alice", "query": "q".repeat(20_000)}),
            "query",
        ),
        (
            Method::POST,
            format!("/v1/conversations/{}/messages", seeded.conversation),
            json!({"role": "tool", "content": "ok", "tool_call_id": "c".repeat(300)}),
            "messages[0].tool_call_id",
        ),
    ];
    for (method, path, body, field) in cases {
        let reply = server
            .call(method.clone(), &path, &seeded.key, Some(body))
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{method} {path}: {}",
            reply.body
        );
        assert_eq!(reply.body["error"]["field"], field, "{}", reply.body);
    }
    // Nothing was written: still one agent, one conversation.
    let agents = server
        .ok(Method::GET, "/v1/agents", &seeded.key, None, StatusCode::OK)
        .await;
    assert_eq!(agents["items"].as_array().unwrap().len(), 1);
    let conversations = server
        .ok(
            Method::GET,
            "/v1/conversations",
            &seeded.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(conversations["items"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn past_a_tenants_queue_quota_appends_are_429_with_retry_after_and_store_nothing() {
    const QUOTA: u64 = 8;
    let server = TestServer::with_engine(ServerSettings::default(), |engine| {
        engine.quotas.max_queued_memory_jobs = QUOTA;
    })
    .await;
    // The seed queued embeddings of its own (its turns, its imported fact):
    // a batch fills the queue to the quota exactly, whether the server
    // counts the queue again or goes by its last count.
    let seeded = seed(&server, "acme").await;
    let queued = server.octopus.pending_memory_jobs().await.unwrap();
    assert!(queued < QUOTA, "{queued} jobs queued by the seed");
    let fill: Vec<Value> = (0..QUOTA - queued)
        .map(|i| json!({"role": "user", "content": format!("one more thing, number {i}")}))
        .collect();
    let reply = append(&server, &seeded, json!({ "messages": fill })).await;
    assert_eq!(reply.status, StatusCode::CREATED, "up to the quota");
    // A batch as large as the quota is past it, however the queue was
    // counted since.
    let past: Vec<Value> = (0..QUOTA)
        .map(|i| json!({"role": "user", "content": format!("past the quota, number {i}")}))
        .collect();
    let reply = append(&server, &seeded, json!({ "messages": past })).await;
    assert_eq!(
        reply.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        reply.body
    );
    assert_eq!(reply.code(), "quota_exceeded");
    let retry_after: u64 = reply.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry_after >= 1);
    let episode = server
        .ok(
            Method::GET,
            &format!("/v1/episodes/{}", seeded.episode),
            &seeded.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        episode["message_count"],
        2 + QUOTA - queued,
        "the refused batch left nothing"
    );

    // Another tenant has a queue of its own.
    let other = seed(&server, "other").await;
    let reply = append(&server, &other, json!({"role": "user", "content": "hello"})).await;
    assert_eq!(reply.status, StatusCode::CREATED);
}

#[tokio::test]
async fn past_the_ingestion_quota_a_document_is_429_and_nothing_is_stored() {
    // A quota of no concurrent ingestion: every document is over it.
    let server = TestServer::with_engine(ServerSettings::default(), |engine| {
        engine.quotas.max_concurrent_ingests = 0;
    })
    .await;
    let seeded = seed(&server, "acme").await;
    let reply = server
        .call(
            Method::POST,
            &format!("/v1/agents/{}/knowledge/documents", seeded.agent),
            &seeded.key,
            Some(json!({"source": "a.md", "text": "Some text to remember."})),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        reply.body
    );
    assert_eq!(reply.code(), "quota_exceeded");
    assert!(reply.headers.contains_key("retry-after"));
    let knowledge = server
        .call(
            Method::GET,
            &format!("/v1/agents/{}/knowledge", seeded.agent),
            &seeded.key,
            None,
        )
        .await;
    assert_eq!(knowledge.status, StatusCode::OK);
    assert!(
        knowledge.body["collection"].is_null(),
        "no collection was made: {}",
        knowledge.body
    );
}

#[tokio::test]
async fn a_deleted_agent_and_everything_under_it_answer_404() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let agent = format!("/v1/agents/{}", seeded.agent);
    server
        .ok(
            Method::DELETE,
            &agent,
            &seeded.key,
            None,
            StatusCode::NO_CONTENT,
        )
        .await;
    let gone = [
        (Method::GET, agent.clone(), None),
        (Method::GET, format!("{agent}/knowledge"), None),
        (
            Method::PATCH,
            agent.clone(),
            Some(json!({"is_active": true})),
        ),
        (
            Method::POST,
            format!("{agent}/recall"),
            Some(json!({"user_id": "alice", "query": "roadmap", "mode": "keyword"})),
        ),
        (
            Method::POST,
            format!("{agent}/knowledge/search"),
            Some(json!({"query": "roadmap", "mode": "keyword"})),
        ),
        (Method::DELETE, agent.clone(), None),
    ];
    for (method, path, body) in gone {
        let reply = server.call(method.clone(), &path, &seeded.key, body).await;
        assert_eq!(
            reply.status,
            StatusCode::NOT_FOUND,
            "{method} {path}: {}",
            reply.body
        );
        assert_eq!(reply.code(), "agent_not_found");
    }
    // Its conversations stay readable, and take no more messages or turns:
    // a conflict with their agent's state, not a missing conversation.
    let conversation = format!("/v1/conversations/{}", seeded.conversation);
    server
        .ok(
            Method::GET,
            &conversation,
            &seeded.key,
            None,
            StatusCode::OK,
        )
        .await;
    for (path, body) in [
        (
            format!("{conversation}/messages"),
            json!({"role": "user", "content": "hi"}),
        ),
        (format!("{conversation}/context"), json!({"message": "hi"})),
    ] {
        let reply = server
            .call(Method::POST, &path, &seeded.key, Some(body))
            .await;
        assert_eq!(reply.status, StatusCode::CONFLICT, "{path}: {}", reply.body);
        assert_eq!(reply.code(), "agent_deleted");
    }
    // Its episodes stay readable; its name is free again.
    server
        .ok(
            Method::GET,
            &format!("/v1/episodes/{}", seeded.episode),
            &seeded.key,
            None,
            StatusCode::OK,
        )
        .await;
    server.agent(&seeded.key, "support").await;
}
