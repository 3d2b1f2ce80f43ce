//! The limits the API declares are the limits it applies, and siblings
//! refuse alike: a long message goes wherever a message goes, NUL is
//! refused in every text, a user's message says something on every door, a
//! time window runs forwards, a query string is UTF-8 like a path, a patch
//! cannot remove a required field without being told which, and an import
//! names the line and the ids the caller sent. `/mcp` answers JSON-RPC's own
//! errors.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};

use crate::harness::{ADMIN_KEY, Reply, Seeded, TestServer, seed};

/// One JSON-RPC request to `/mcp`, as its body is given.
async fn mcp_raw(server: &TestServer, key: &str, method: Method, body: &str) -> Reply {
    let request = Request::builder()
        .method(method)
        .uri("/mcp")
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header(header::AUTHORIZATION, format!("Bearer {key}"))
        .body(Body::from(body.to_owned()))
        .unwrap();
    server.send(request).await
}

async fn mcp_tool(server: &TestServer, key: &str, tool: &str, arguments: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": tool, "arguments": arguments}});
    let reply = mcp_raw(server, key, Method::POST, &body.to_string()).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    reply.body
}

fn field(reply: &Reply) -> &str {
    reply.body["error"]["field"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_longer_than_a_query_is_taken_wherever_a_message_is() {
    let (server, _fake, url) = TestServer::with_fake_chat().await;
    let (_, key) = server.tenant("acme").await;
    let (_, conversation) = server.chat_agent(&key, &url, json!({})).await;
    // Three times the longest search query, well within a message.
    let long = "the parcel from Lyon was late again. ".repeat(850);
    assert!(long.chars().count() > 3 * octopus_core::bounds::MAX_QUERY_CHARS);
    let context = server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{conversation}/context"),
            &key,
            Some(json!({"message": long})),
            StatusCode::OK,
        )
        .await;
    let last = context["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        last["content"],
        long.as_str(),
        "the message itself is whole"
    );
    let turn = server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{conversation}/turns"),
            &key,
            Some(json!({"message": long})),
            StatusCode::OK,
        )
        .await;
    assert_eq!(turn["reply"]["content"], format!("echo: {long}"));
    let completion = server
        .call_with_headers(
            Method::POST,
            "/v1/chat/completions",
            &key,
            &[("x-octopus-conversation", &conversation)],
            Some(json!({"model": "support", "user": "dana",
                "messages": [{"role": "user", "content": long}]})),
        )
        .await;
    assert_eq!(completion.status, StatusCode::OK, "{}", completion.body);
    let answer = mcp_tool(
        &server,
        &key,
        "get_context",
        json!({"agent": "support", "user": "dana", "message": long}),
    )
    .await;
    assert!(answer["error"].is_null(), "{answer}");
    assert_ne!(answer["result"]["isError"], true, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nul_is_refused_in_names_ids_contents_and_sources_and_nothing_is_written() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let key = &seeded.key;
    let mut agent = crate::harness::agent_body("sup\u{0}port");
    let reply = server
        .call(Method::POST, "/v1/agents", key, Some(agent.clone()))
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(field(&reply), "name");
    agent["name"] = json!("fine");
    agent["system_prompt"] = json!("be \u{0} brief");
    let reply = server
        .call(Method::POST, "/v1/agents", key, Some(agent))
        .await;
    assert_eq!(field(&reply), "system_prompt", "{}", reply.body);

    let reply = server
        .call(
            Method::POST,
            "/v1/conversations",
            key,
            Some(json!({"agent_id": seeded.agent, "user_id": "ali\u{0}ce"})),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(field(&reply), "user_id");

    let reply = server
        .call(
            Method::POST,
            &format!("/v1/conversations/{}/messages", seeded.conversation),
            key,
            Some(json!({"messages": [{"role": "user", "content": "hi\u{0}"}]})),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(field(&reply), "messages[0].content");

    let reply = server
        .call(
            Method::POST,
            &format!("/v1/agents/{}/knowledge/documents", seeded.agent),
            key,
            Some(json!({"source": "a\u{0}.md", "text": "Refunds take five days."})),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(field(&reply), "source");

    assert_nothing_written(&server, &seeded).await;
}

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
    let agents = server
        .ok(Method::GET, "/v1/agents", &seeded.key, None, StatusCode::OK)
        .await;
    assert_eq!(agents["items"].as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blank_user_message_is_refused_by_append_and_remember_as_by_turns() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    for content in [
        json!(""),
        json!(" \n"),
        json!([{"type": "text", "text": " "}]),
    ] {
        let reply = server
            .call(
                Method::POST,
                &format!("/v1/conversations/{}/messages", seeded.conversation),
                &seeded.key,
                Some(json!({"role": "user", "content": content})),
            )
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            reply.body
        );
        assert!(field(&reply).ends_with("content"), "{}", reply.body);
    }
    let answer = mcp_tool(
        &server,
        &seeded.key,
        "remember",
        json!({"agent": "support", "user": "alice", "content": "  "}),
    )
    .await;
    // The model reads why, as the tool's result.
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["error"]["code"], "invalid_request",
        "{answer}"
    );
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.starts_with("invalid_request: ")),
        "{answer}"
    );
    // An assistant may say nothing in words (a call, a pause).
    server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{}/messages", seeded.conversation),
            &seeded.key,
            Some(json!({"role": "assistant", "content": ""})),
            StatusCode::CREATED,
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_whose_from_is_after_its_to_is_refused_naming_from() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let window = "from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z";
    for path in [
        format!("/v1/messages/search?q=roadmap&{window}"),
        format!("/v1/episodes?{window}"),
    ] {
        let reply = server.call(Method::GET, &path, &seeded.key, None).await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{path}: {}",
            reply.body
        );
        assert_eq!(field(&reply), "from", "{path}");
    }
    let reply = server
        .call(
            Method::POST,
            &format!("/v1/agents/{}/recall", seeded.agent),
            &seeded.key,
            Some(json!({"user_id": "alice", "query": "roadmap",
                "from": "2026-03-02T00:00:00Z", "to": "2026-03-01T00:00:00Z"})),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(field(&reply), "from");
    // The same instant at both ends is an empty window, not a mistake.
    server
        .ok(
            Method::GET,
            "/v1/episodes?from=2026-03-01T00:00:00Z&to=2026-03-01T00:00:00Z",
            &seeded.key,
            None,
            StatusCode::OK,
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_string_that_is_not_utf8_is_refused_as_a_path_would_be() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let reply = server
        .call(
            Method::GET,
            "/v1/messages/search?q=%FF%FE",
            &seeded.key,
            None,
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert_eq!(reply.code(), "invalid_query");
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`q`")
    );
    let path = server
        .call(Method::GET, "/v1/episodes/%FF%FE", &seeded.key, None)
        .await;
    assert_eq!(path.status, StatusCode::BAD_REQUEST);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_that_removes_a_required_field_names_it() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let path = format!("/v1/agents/{}", seeded.agent);
    for (patch, named) in [
        (json!({"llm": null}), "llm"),
        (json!({"name": null}), "name"),
        (json!({"llm": {"provider": null}}), "llm"),
        (json!({"llm": {"model": 5}}), "llm.model"),
    ] {
        let reply = server
            .call(Method::PATCH, &path, &seeded.key, Some(patch.clone()))
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{patch}: {}",
            reply.body
        );
        assert_eq!(field(&reply), named, "{patch}: {}", reply.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_error_names_the_line_and_the_ids_the_caller_sent() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let dump = server
        .raw(
            Method::GET,
            &format!("/v1/tenants/{}/export", seeded.tenant),
            Some(ADMIN_KEY),
            None,
        )
        .await
        .body
        .as_str()
        .unwrap()
        .to_owned();
    let lines: Vec<&str> = dump.lines().collect();
    let conversation: Value = lines
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["type"] == "conversation")
        .unwrap();
    // Blank lines, then a conversation of an agent the dump does not bring,
    // into another tenant: everything it brings gets new ids.
    let sent = [
        lines[0].to_owned(),
        String::new(),
        String::new(),
        conversation.to_string(),
        json!({"type": "end", "records": 2}).to_string(),
    ]
    .join("\n");
    let (_, globex) = server.tenant("globex").await;
    let reply = server
        .raw_as(
            Method::POST,
            "/v1/import",
            Some(&globex),
            "application/x-ndjson",
            Some(sent.into_bytes()),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    let message = reply.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("line 4 (conversation)"), "{message}");
    assert!(
        message.contains(conversation["agent_id"].as_str().unwrap()),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_listing_more_messages_than_declared_is_refused_naming_messages() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let max = octopus_server::MAX_COMPLETION_MESSAGES;
    let messages = vec![json!({"role": "user", "content": "x"}); max + 1];
    let reply = server
        .call(
            Method::POST,
            "/v1/chat/completions",
            &seeded.key,
            Some(json!({"model": "support", "user": "alice", "messages": messages})),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(field(&reply), "messages", "{}", reply.body);
    assert_nothing_written(&server, &seeded).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_answers_what_is_not_one_good_request_with_json_rpcs_errors() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let key = &seeded.key;
    for (body, status, code) in [
        ("{\"jsonrpc\": \"2.0\", ", StatusCode::BAD_REQUEST, -32700),
        ("null", StatusCode::BAD_REQUEST, -32600),
        (
            r#"{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}"#,
            StatusCode::BAD_REQUEST,
            -32600,
        ),
        (
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#,
            StatusCode::BAD_REQUEST,
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}"#,
            StatusCode::OK,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"recall","arguments":"x"}}"#,
            StatusCode::OK,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{}}"#,
            StatusCode::OK,
            -32602,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"no/such/method"}"#,
            StatusCode::OK,
            -32601,
        ),
    ] {
        let reply = mcp_raw(&server, key, Method::POST, body).await;
        assert_eq!(reply.status, status, "{body}: {}", reply.body);
        assert_eq!(reply.body["jsonrpc"], "2.0", "{body}: {}", reply.body);
        assert_eq!(reply.body["error"]["code"], code, "{body}: {}", reply.body);
    }
    // The transport's refusals are JSON-RPC errors too.
    let reply = mcp_raw(&server, key, Method::GET, "").await;
    assert_eq!(reply.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(reply.body["error"]["code"], -32000, "{}", reply.body);
    let request = Request::builder()
        .method(Method::POST)
        .uri("/mcp")
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "text/html")
        .header(header::AUTHORIZATION, format!("Bearer {key}"))
        .body(Body::from(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        ))
        .unwrap();
    let reply = server.send(request).await;
    assert_eq!(reply.status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(reply.body["error"]["code"], -32000, "{}", reply.body);
    // A good request still works.
    let reply = mcp_raw(
        &server,
        key,
        Method::POST,
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert!(
        reply.body["result"]["tools"].as_array().is_some(),
        "{}",
        reply.body
    );
}
