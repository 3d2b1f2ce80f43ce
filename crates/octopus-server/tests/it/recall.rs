//! Import and recall over HTTP, with the local embedding model.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::TestServer;

fn session(day: u32, turns: &[(&str, &str)]) -> Value {
    let messages: Vec<Value> = turns
        .iter()
        .enumerate()
        .map(|(i, (role, text))| {
            json!({"role": role, "content": text, "timestamp": format!("2026-03-{day:02}T19:{i:02}:00Z")})
        })
        .collect();
    json!({"messages": messages})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imported_sessions_become_episodes_and_are_recalled() {
    let server = TestServer::start().await;
    let (_, key) = server.tenant("acme").await;
    let agent = server.agent(&key, "coach").await;
    let import = json!({
        "agent_id": agent, "user_id": "sam", "title": "Training log",
        "sessions": [
            session(2, &[("user", "I ran my first half marathon in Porto on Sunday"), ("assistant", "Amazing! How did your legs feel afterwards?")]),
            session(9, &[("user", "My left knee hurts when I go downhill"), ("assistant", "Ease off the descents and ice it after runs."), ("user", "I will book a physiotherapist")]),
        ]
    });
    let report = server
        .ok(
            Method::POST,
            "/v1/conversations/import",
            &key,
            Some(import),
            StatusCode::CREATED,
        )
        .await;
    assert_eq!(report["messages"], 5);
    let episodes = report["episodes"].as_array().unwrap();
    assert_eq!(episodes.len(), 2);
    let second = server
        .ok(
            Method::GET,
            &format!("/v1/episodes/{}", episodes[1].as_str().unwrap()),
            &key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(second["end_reason"], "imported");
    assert_eq!(second["started_at"], "2026-03-09T19:00:00Z");
    assert_eq!(second["ended_at"], "2026-03-09T19:02:00Z");
    assert_eq!(second["messages"].as_array().unwrap().len(), 3);
    // The conversation began and was last active when its messages say.
    let conversation = report["conversation"]["id"].as_str().unwrap();
    let conversation = server
        .ok(
            Method::GET,
            &format!("/v1/conversations/{conversation}"),
            &key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(conversation["created_at"], "2026-03-02T19:00:00Z");
    assert_eq!(conversation["updated_at"], "2026-03-09T19:02:00Z");
    let users = server
        .ok(
            Method::GET,
            &format!("/v1/agents/{agent}/users"),
            &key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(users["items"][0]["last_active_at"], "2026-03-09T19:02:00Z");

    server.octopus.run_memory_jobs().await.unwrap();
    let recalled = server
        .ok(
            Method::POST,
            &format!("/v1/agents/{agent}/recall"),
            &key,
            Some(json!({"user_id": "sam", "query": "knee pain on descents", "top_k": 2, "neighbours": 1, "include_summaries": false})),
            StatusCode::OK,
        )
        .await;
    let hits = recalled["items"].as_array().unwrap();
    assert_eq!(hits.len(), 2);
    let first = &hits[0];
    assert_eq!(first["kind"], "message");
    assert_eq!(
        first["window"]["message"]["content"],
        "My left knee hurts when I go downhill"
    );
    assert_eq!(
        first["window"]["after"][0]["content"],
        "Ease off the descents and ice it after runs."
    );
    assert_eq!(first["episode_id"], episodes[1]);
    assert!(first["vector_score"].as_f64().unwrap() > 0.3, "{first}");
    assert!(
        first["keyword_score"].as_f64().is_some(),
        "`knee` matched: {first}"
    );

    // The working memory of a next turn recalls the knee, with a trace.
    let conversation = report["conversation"]["id"].as_str().unwrap();
    let context = server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{conversation}/context"),
            &key,
            Some(json!({"message": "Should I still run downhill with my knee?"})),
            StatusCode::OK,
        )
        .await;
    let messages = context["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap(),
        &json!({"role": "user", "content": "Should I still run downhill with my knee?"})
    );
    assert!(
        context["trace"]["episodic"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["text"]
                .as_str()
                .unwrap()
                .contains("user: My left knee hurts when I go downhill")),
        "{context}"
    );
    let texts: Vec<&str> = context["trace"]["episodic"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    let distinct: std::collections::HashSet<&&str> = texts.iter().collect();
    assert_eq!(
        distinct.len(),
        texts.len(),
        "nothing shown twice: {texts:?}"
    );
    assert!(
        context["trace"]["total_tokens"].as_u64().unwrap()
            <= context["trace"]["budget"].as_u64().unwrap()
    );
    assert_eq!(
        context["episode_id"],
        Value::Null,
        "imported sessions are closed: no history"
    );
    let reply = server
        .call(
            Method::POST,
            &format!("/v1/conversations/{conversation}/context"),
            &key,
            Some(json!({"message": ""})),
        )
        .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(reply.body["error"]["field"], "message");

    // The second session had 3 messages: it got an extractive summary.
    let summaries = server
        .ok(
            Method::POST,
            &format!("/v1/agents/{agent}/recall"),
            &key,
            Some(json!({"user_id": "sam", "query": "knee injury", "mode": "vector"})),
            StatusCode::OK,
        )
        .await;
    assert!(
        summaries["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["kind"] == "summary" && h["summary"].as_str().unwrap().contains("knee")),
        "{summaries}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_imports_and_recalls_name_the_field_and_store_nothing() {
    let server = TestServer::start().await;
    let (_, key) = server.tenant("acme").await;
    let agent = server.agent(&key, "coach").await;

    let no_time = json!({"agent_id": agent, "user_id": "sam", "sessions": [
        session(2, &[("user", "fine")]),
        {"messages": [{"role": "user", "content": "when?"}]}
    ]});
    let reply = server
        .call(
            Method::POST,
            "/v1/conversations/import",
            &key,
            Some(no_time),
        )
        .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        reply.body["error"]["field"], "sessions[1].messages[0].timestamp",
        "{}",
        reply.body
    );

    let bad_role = json!({"agent_id": agent, "user_id": "sam", "sessions": [
        session(2, &[("user", "fine"), ("robot", "beep")])
    ]});
    let reply = server
        .call(
            Method::POST,
            "/v1/conversations/import",
            &key,
            Some(bad_role),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    let conversations = server
        .ok(Method::GET, "/v1/conversations", &key, None, StatusCode::OK)
        .await;
    assert_eq!(
        conversations["items"],
        json!([]),
        "a refused import stores nothing"
    );

    let recall = format!("/v1/agents/{agent}/recall");
    for (body, field) in [
        (
            json!({"user_id": "sam", "query": "x", "neighbours": 99}),
            "neighbours",
        ),
        (json!({"user_id": "sam", "query": "x", "top_k": 0}), "top_k"),
        (json!({"user_id": "", "query": "x"}), "user_id"),
        (json!({"user_id": "sam", "query": " \t "}), "query"),
    ] {
        let reply = server
            .call(Method::POST, &recall, &key, Some(body.clone()))
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            reply.body
        );
        assert_eq!(
            reply.body["error"]["field"], field,
            "{body}: {}",
            reply.body
        );
    }
    // A window that runs backwards is a mistake, named by its `from`.
    let backwards = json!({"user_id": "sam", "query": "x", "from": "2026-05-01T00:00:00Z", "to": "2026-04-01T00:00:00Z"});
    let reply = server
        .call(Method::POST, &recall, &key, Some(backwards))
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(reply.body["error"]["field"], "from");
    let reply = server
        .call(Method::POST, &recall, &key, Some(json!({"query": "x"})))
        .await;
    assert_eq!(reply.status.as_u16() / 100, 4, "{}", reply.body);
    assert!(reply.body.to_string().contains("user_id"), "{}", reply.body);
}
