//! Tenant isolation over the whole route table: every operation the OpenAPI
//! document lists is called with tenant A's key and tenant B's ids. Each must
//! answer 404 (or, for admin routes, 403), reveal nothing of B, and change
//! nothing of B. A route added later is walked without touching this file; one
//! that takes a body must add its body below, or the walk fails.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{Seeded, TestServer, agent_body, seed};

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
        "recall" => json!({"user_id": "alice", "query": "victim secret roadmap"}),
        "import_conversation" => json!({
            "agent_id": victim.agent, "user_id": "alice",
            "sessions": [{"messages": [{"role": "user", "content": "pwned", "timestamp": "2026-01-01T00:00:00Z"}]}]
        }),
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
        // Not an object id: each tenant has its own users of that name.
        "user_id" => "alice".to_owned(),
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
    foreign_key_reaches_nothing(TestServer::start().await).await;
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
            let mut names_victim = false;
            for param in params.iter().filter(|p| p["in"] == "path") {
                let param_name = param["name"].as_str().unwrap();
                concrete =
                    concrete.replace(&format!("{{{param_name}}}"), &id_for(param_name, &victim));
                // The caller's own user of that name: the call succeeds and
                // touches nothing of B's (checked after the walk).
                names_victim |= param_name != "user_id";
            }
            let required_query: Vec<&str> = params
                .iter()
                .filter(|p| p["in"] == "query" && p["required"] == true)
                .map(|p| p["name"].as_str().unwrap())
                .collect();
            let base_query = if required_query.contains(&"q") {
                "q=victim+secret+roadmap".to_owned()
            } else if required_query.contains(&"source") {
                "source=victim.md".to_owned()
            } else {
                String::new()
            };
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
            } else if names_victim || body_names_victim {
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
                if !matches!(param_name, "agent_id" | "conversation_id") {
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
}
