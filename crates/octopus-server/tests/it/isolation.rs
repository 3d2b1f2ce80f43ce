//! Tenant isolation over the whole route table: every operation the OpenAPI
//! document lists is called with tenant A's key and tenant B's ids. Each must
//! answer 404 (or, for admin routes, 403), reveal nothing of B, and change
//! nothing of B. A route added later is walked without touching this file; one
//! that takes a body must add its body below, or the walk fails.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use axum::body::Body;
use axum::http::{Request, header};

use crate::harness::{Reply, Seeded, TestServer, agent_body, seed};

/// A valid body for each operation that takes one.
fn body_for(operation: &str, victim: &Seeded) -> Value {
    match operation {
        "create_agent" => agent_body("intruder"),
        "update_agent" => json!({"system_prompt": "pwned"}),
        "create_conversation" => json!({"agent_id": victim.agent, "user_id": "alice"}),
        "append_messages" => json!({"role": "user", "content": "pwned"}),
        "close_episode" => json!({"end_reason": "user_closed", "summary": "pwned"}),
        "set_episode_summary" => json!({"summary": "pwned"}),
        "create_tenant" => json!({"name": "pwned"}),
        "create_api_key" => json!({"name": "pwned"}),
        "ingest_document" => json!({"source": "pwned.md", "text": "pwned"}),
        "search_knowledge" => json!({"query": "victim secret roadmap"}),
        "build_context" => json!({"message": "victim secret roadmap"}),
        "take_turn" => json!({"message": "victim secret roadmap"}),
        "chat_completion" => json!({"model": victim.agent, "user": "alice",
            "messages": [{"role": "user", "content": "victim secret roadmap"}]}),
        "create_procedure" => {
            json!({"agent_id": victim.agent, "name": "pwned", "steps": [{"instruction": "pwn"}]})
        }
        "update_procedure" => json!({"name": "pwned", "is_active": false}),
        "rollback_procedure" => json!({"version": 1}),
        "correct_fact" => json!({"text": "pwned"}),
        "add_fact" => json!({"text": "pwned"}),
        "create_webhook" => {
            json!({"url": "https://hooks.example.com/pwned", "events": ["fact.added"]})
        }
        "recall" => json!({"user_id": "alice", "query": "victim secret roadmap"}),
        "import_conversation" => json!({
            "agent_id": victim.agent, "user_id": "alice",
            "sessions": [{"messages": [{"role": "user", "content": "pwned", "timestamp": "2026-01-01T00:00:00Z"}]}]
        }),
        // An export holding one conversation of the victim's words.
        "import_chats" => Value::String(
            json!([{"conversation_id": "c1", "current_node": "n1", "mapping": {"n1": {"parent": null,
                "message": {"author": {"role": "user"}, "create_time": 1_700_000_000.0,
                    "content": {"content_type": "text", "parts": ["pwned"]}}}}}])
            .to_string(),
        ),
        // A dump of the intruder's own making: it lands in the intruder's tenant.
        "import_dump" => Value::String(
            [
                json!({"type": "header", "format": "octopus-dump", "version": 1,
                       "exported_at": "2026-01-01T00:00:00Z",
                       "tenant_id": "00000000-0000-7000-8000-000000000000", "user_id": null}),
                json!({"type": "end", "records": 1}),
            ]
            .map(|line| line.to_string())
            .join("\n"),
        ),
        other => panic!("operation `{other}` takes a body: add a valid one to the isolation walk"),
    }
}

/// The victim's id for a path or query parameter.
fn id_for(parameter: &str, victim: &Seeded) -> String {
    match parameter {
        "agent_id" => victim.agent.clone(),
        "conversation_id" => victim.conversation.clone(),
        "episode_id" => victim.episode.clone(),
        "tenant_id" => victim.tenant.clone(),
        "key_id" => victim.message.clone(), // any id of B's: a key id is never exposed to A
        "chunk_id" => victim.message.clone(), // likewise: B's agent is refused first
        "procedure_id" => victim.procedure.clone(),
        "fact_id" => victim.fact.clone(),
        "message_id" => victim.message.clone(),
        "webhook_id" => victim.webhook.clone(),
        // Not an object id: each tenant has its own users of that name.
        "user_id" => "alice".to_owned(),
        // Not an id: whose export a file is.
        "format" => "chatgpt".to_owned(),
        other => panic!("path parameter `{other}` is new: map it to one of the victim's ids"),
    }
}

/// B's identifiers and text must not appear in anything A receives, except an id
/// A itself sent (a 404 may name the id it could not find).
fn assert_reveals_nothing(reply: &Value, victim: &Seeded, sent: &str, context: &str) {
    let text = reply.to_string();
    let secrets = [
        &victim.agent,
        &victim.conversation,
        &victim.episode,
        &victim.message,
        &victim.tenant,
        &victim.procedure,
        &victim.fact,
        &victim.webhook,
    ];
    for secret in secrets
        .into_iter()
        .filter(|secret| !sent.contains(secret.as_str()))
    {
        assert!(
            !text.contains(secret.as_str()),
            "{context} revealed {secret}: {text}"
        );
    }
    assert!(
        !text.contains("victim secret roadmap"),
        "{context} revealed B's messages: {text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_foreign_key_reaches_nothing_on_any_route() {
    // Every MCP tool offered, `forget_user` too.
    let settings = octopus_server::ServerSettings {
        mcp_allow_forget_user: true,
        ..Default::default()
    };
    foreign_key_reaches_nothing(TestServer::with_config(settings).await).await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_foreign_key_reaches_nothing_on_any_route() {
    foreign_key_reaches_nothing(TestServer::on_postgres().await).await;
}

#[cfg(feature = "qdrant-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_qdrant_a_foreign_key_reaches_nothing_on_any_route() {
    foreign_key_reaches_nothing(TestServer::on_qdrant().await).await;
}

async fn foreign_key_reaches_nothing(server: TestServer) {
    let victim = seed(&server, "victim").await;
    let intruder = seed(&server, "intruder").await;
    let doc = server
        .raw(Method::GET, "/openapi.json", None, None)
        .await
        .body;

    let mut walked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let Ok(method) = method.to_uppercase().parse::<Method>() else {
                continue;
            };
            if operation.get("security").is_none() {
                continue; // health checks: no key, no tenant data
            }
            walked += 1;
            let name = operation["operationId"].as_str().unwrap();
            let params = operation["parameters"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let mut concrete = path.clone();
            // The same path with ids nobody has: B's must answer as these do.
            let mut nobodys = path.clone();
            let mut names_victim = false;
            for param in params.iter().filter(|p| p["in"] == "path") {
                let param_name = param["name"].as_str().unwrap();
                concrete =
                    concrete.replace(&format!("{{{param_name}}}"), &id_for(param_name, &victim));
                let unknown = match param_name {
                    "user_id" | "format" => id_for(param_name, &victim),
                    _ => uuid::Uuid::now_v7().to_string(),
                };
                nobodys = nobodys.replace(&format!("{{{param_name}}}"), &unknown);
                // The caller's own user of that name: the call succeeds and
                // touches nothing of B's (checked after the walk).
                names_victim |= !matches!(param_name, "user_id" | "format");
            }
            let required_query: Vec<&str> = params
                .iter()
                .filter(|p| p["in"] == "query" && p["required"] == true)
                .map(|p| p["name"].as_str().unwrap())
                .collect();
            let mut base_query = if required_query.contains(&"q") {
                "q=victim+secret+roadmap".to_owned()
            } else if required_query.contains(&"source") {
                "source=victim.md".to_owned()
            } else {
                String::new()
            };
            // Required ids in the query (an import's agent) are B's, as in a path.
            let mut query_names_victim = false;
            for name in required_query
                .iter()
                .filter(|n| matches!(**n, "agent_id" | "user_id"))
            {
                let separator = if base_query.is_empty() { "" } else { "&" };
                base_query = format!("{base_query}{separator}{name}={}", id_for(name, &victim));
                query_names_victim |= *name == "agent_id";
            }
            let body = operation
                .get("requestBody")
                .map(|_| body_for(name, &victim));
            let body_names_victim = body
                .as_ref()
                .is_some_and(|b| b.to_string().contains(&victim.agent));
            let admin = operation["tags"]
                .as_array()
                .is_some_and(|tags| tags.iter().any(|t| t == "admin"));

            let with_query = |query: &str| {
                if query.is_empty() {
                    concrete.clone()
                } else {
                    format!("{concrete}?{query}")
                }
            };
            let reply = match &body {
                // A body that is not JSON (a dump) goes as it is.
                Some(Value::String(text)) => {
                    let content_type = operation["requestBody"]["content"]
                        .as_object()
                        .and_then(|types| types.keys().next().cloned())
                        .unwrap();
                    server
                        .raw_as(
                            method.clone(),
                            &with_query(&base_query),
                            Some(&intruder.key),
                            &content_type,
                            Some(text.clone().into_bytes()),
                        )
                        .await
                }
                _ => {
                    server
                        .call(
                            method.clone(),
                            &with_query(&base_query),
                            &intruder.key,
                            body.clone(),
                        )
                        .await
                }
            };
            let context = format!("{method} {path} ({name})");
            if admin {
                assert_eq!(
                    reply.status,
                    StatusCode::FORBIDDEN,
                    "{context}: {}",
                    reply.body
                );
            } else if names_victim || body_names_victim || query_names_victim {
                assert_eq!(
                    reply.status,
                    StatusCode::NOT_FOUND,
                    "{context}: {}",
                    reply.body
                );
                assert!(
                    reply.code().ends_with("_not_found"),
                    "{context}: {}",
                    reply.body
                );
                if names_victim && !matches!(body, Some(Value::String(_))) {
                    let query = if base_query.is_empty() {
                        String::new()
                    } else {
                        format!("?{base_query}")
                    };
                    let missing = server
                        .call(
                            method.clone(),
                            &format!("{nobodys}{query}"),
                            &intruder.key,
                            body.clone(),
                        )
                        .await;
                    assert_eq!(
                        (missing.status, missing.code()),
                        (reply.status, reply.code()),
                        "{context}: B's ids answer as ids nobody has: {}",
                        missing.body
                    );
                }
            } else {
                assert!(reply.status.is_success(), "{context}: {}", reply.body);
            }
            let sent = format!(
                "{} {}",
                with_query(&base_query),
                body.as_ref().map(Value::to_string).unwrap_or_default()
            );
            assert_reveals_nothing(&reply.body, &victim, &sent, &context);

            // Every id-valued query filter, pointed at B's objects, is a 404 too.
            for param in params.iter().filter(|p| p["in"] == "query") {
                let param_name = param["name"].as_str().unwrap();
                if !matches!(param_name, "agent_id" | "conversation_id")
                    || required_query.contains(&param_name)
                {
                    continue;
                }
                let separator = if base_query.is_empty() { "" } else { "&" };
                let query = format!(
                    "{base_query}{separator}{param_name}={}",
                    id_for(param_name, &victim)
                );
                let reply = server
                    .call(
                        method.clone(),
                        &with_query(&query),
                        &intruder.key,
                        body.clone(),
                    )
                    .await;
                assert_eq!(
                    reply.status,
                    StatusCode::NOT_FOUND,
                    "{context} with {param_name}: {}",
                    reply.body
                );
                assert_reveals_nothing(&reply.body, &victim, &query, &context);
            }
        }
    }
    assert!(walked >= 20, "the walk covered only {walked} operations");
    walk_mcp(&server, &victim, &intruder).await;

    // B's data is exactly as it was.
    let agent = server
        .ok(
            Method::GET,
            &format!("/v1/agents/{}", victim.agent),
            &victim.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(agent["system_prompt"], "You are a helpful support agent.");
    let webhooks = server
        .ok(
            Method::GET,
            "/v1/webhooks",
            &victim.key,
            None,
            StatusCode::OK,
        )
        .await;
    let ids: Vec<&Value> = webhooks["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| &w["id"])
        .collect();
    assert_eq!(
        ids,
        [&json!(victim.webhook)],
        "B's webhooks: none deleted, none added"
    );
    let procedure = server
        .ok(
            Method::GET,
            &format!("/v1/procedures/{}", victim.procedure),
            &victim.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        (
            &procedure["name"],
            &procedure["is_active"],
            &procedure["latest_version"]
        ),
        (&json!("victim escalation"), &json!(true), &json!(1))
    );
    assert_eq!(agent["is_active"], true);
    let conversation = server
        .ok(
            Method::GET,
            &format!("/v1/conversations/{}", victim.conversation),
            &victim.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert!(conversation["deleted_at"].is_null());
    let episode = server
        .ok(
            Method::GET,
            &format!("/v1/episodes/{}", victim.episode),
            &victim.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert!(
        episode["ended_at"].is_null()
            && episode["summary"].is_null()
            && episode["deleted_at"].is_null()
    );
    assert_eq!(episode["messages"].as_array().unwrap().len(), 2);
    let everything = server
        .ok(
            Method::GET,
            "/v1/episodes",
            &victim.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(everything["items"].as_array().unwrap().len(), 1);
    assert!(!everything.to_string().contains("pwned"));
    let history = server
        .ok(
            Method::GET,
            &format!("/v1/facts/{}/history", victim.fact),
            &victim.key,
            None,
            StatusCode::OK,
        )
        .await;
    let entries = history["items"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{history}");
    assert_eq!(entries[0]["text"], "victim secret roadmap fact");

    // Another tenant's fact answers exactly as one that never was.
    let never = uuid::Uuid::now_v7().to_string();
    for (method, tail, body) in [
        (Method::GET, "", None),
        (Method::PATCH, "", Some(json!({"text": "pwned"}))),
        (Method::DELETE, "", None),
        (Method::GET, "/history", None),
    ] {
        let answer =
            |id: &str, reply: Reply| (reply.status, reply.body.to_string().replace(id, "ID"));
        let theirs = server
            .call(
                method.clone(),
                &format!("/v1/facts/{}{tail}", victim.fact),
                &intruder.key,
                body.clone(),
            )
            .await;
        let nobodys = server
            .call(
                method.clone(),
                &format!("/v1/facts/{never}{tail}"),
                &intruder.key,
                body,
            )
            .await;
        assert_eq!(
            answer(&victim.fact, theirs),
            answer(&never, nobodys),
            "{method} /v1/facts/{{id}}{tail}"
        );
    }
}

/// Valid arguments for each MCP tool, naming the victim's agent.
fn mcp_arguments_for(tool: &str, victim: &Seeded) -> Value {
    let agent = &victim.agent;
    match tool {
        "remember" => json!({"agent": agent, "user": "alice", "content": "pwned"}),
        "recall" => json!({"agent": agent, "user": "alice", "query": "victim secret roadmap"}),
        "search_knowledge" => json!({"agent": agent, "query": "victim secret roadmap"}),
        "get_context" => {
            json!({"agent": agent, "user": "alice", "message": "victim secret roadmap"})
        }
        "list_procedures" => json!({"agent": agent}),
        "add_document" => json!({"agent": agent, "source": "pwned.md", "text": "pwned"}),
        "forget_user" => json!({"agent": agent, "user": "alice"}),
        "update_memory" => json!({"fact_id": victim.fact, "text": "pwned"}),
        "delete_memory" => json!({"fact_id": victim.fact}),
        other => panic!("MCP tool `{other}` is new: add its arguments to the isolation walk"),
    }
}

/// One JSON-RPC request to `/mcp` with `key`; the reply.
async fn mcp(server: &TestServer, key: Option<&str>, method: &str, params: Value) -> Reply {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri("/mcp")
        // What every HTTP/1.1 client sends; rmcp refuses a request without it.
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream");
    if let Some(key) = key {
        request = request.header(header::AUTHORIZATION, format!("Bearer {key}"));
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    server
        .send(request.body(Body::from(body.to_string())).unwrap())
        .await
}

/// The MCP door, walked like the routes: every tool the intruder is
/// offered, and every resource of the victim's, answer `*_not_found`,
/// reveal nothing, and change nothing (checked after the walk).
async fn walk_mcp(server: &TestServer, victim: &Seeded, intruder: &Seeded) {
    let keyless = mcp(server, None, "tools/list", json!({})).await;
    assert_eq!(keyless.status, StatusCode::UNAUTHORIZED, "{}", keyless.body);
    let admin = mcp(
        server,
        Some(crate::harness::ADMIN_KEY),
        "tools/list",
        json!({}),
    )
    .await;
    assert_eq!(admin.status, StatusCode::FORBIDDEN, "{}", admin.body);

    let key = Some(intruder.key.as_str());
    let tools = mcp(server, key, "tools/list", json!({})).await.body;
    let tools = tools["result"]["tools"].as_array().unwrap().clone();
    assert!(tools.len() >= 6, "{tools:?}");
    // A 404 may name the id it could not find, which the intruder sent.
    // A tool fails as a result marked `isError`; a resource read, as an
    // MCP error. Either carries the API's code.
    let refused = |reply: &Reply, sent: &str, context: &str| {
        assert_eq!(reply.status, StatusCode::OK, "{context}: {}", reply.body);
        let result = &reply.body["result"];
        let code = match result["isError"] == true {
            true => &result["structuredContent"]["error"]["code"],
            false => &reply.body["error"]["data"]["code"],
        };
        let code = code.as_str().unwrap_or_default();
        assert!(code.ends_with("_not_found"), "{context}: {}", reply.body);
        assert_reveals_nothing(&reply.body, victim, sent, context);
    };
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        let arguments = mcp_arguments_for(name, victim);
        let reply = mcp(
            server,
            key,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        )
        .await;
        refused(&reply, &arguments.to_string(), &format!("MCP tool {name}"));
    }
    for uri in [
        format!("octopus://episodes/{}", victim.episode),
        format!("octopus://agents/{}/documents/victim.md", victim.agent),
        format!("octopus://agents/{}/users/alice/profile", victim.agent),
    ] {
        let reply = mcp(server, key, "resources/read", json!({"uri": uri})).await;
        refused(&reply, &uri, &format!("MCP resource {uri}"));
    }
    let listed = mcp(server, key, "resources/list", json!({})).await;
    assert_reveals_nothing(&listed.body, victim, "", "MCP resources/list");
}
