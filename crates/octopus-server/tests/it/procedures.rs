//! Procedural memory over HTTP: a procedure created, approved, triggered by
//! its pattern and by meaning, versioned and rolled back, deactivated; and
//! bad patterns refused with the parse error.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::TestServer;

struct Setup {
    server: TestServer,
    key: String,
    agent: String,
    conversation: String,
}

async fn setup() -> Setup {
    let server = TestServer::start().await;
    let (_, key) = server.tenant("acme").await;
    let agent = server
        .ok(
            Method::POST,
            "/v1/agents",
            &key,
            Some(
                json!({"name": "support", "system_prompt": "You are Acme's support agent.",
                "llm": {"provider": "openai", "model": "gpt-4o-mini"},
                "memory": {"procedure_min_score": 0.35}}),
            ),
            StatusCode::CREATED,
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let conversation = server
        .ok(
            Method::POST,
            "/v1/conversations",
            &key,
            Some(json!({"agent_id": agent, "user_id": "dana"})),
            StatusCode::CREATED,
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    Setup {
        server,
        key,
        agent,
        conversation,
    }
}

impl Setup {
    async fn context(&self, message: &str) -> Value {
        self.server
            .ok(
                Method::POST,
                &format!("/v1/conversations/{}/context", self.conversation),
                &self.key,
                Some(json!({"message": message})),
                StatusCode::OK,
            )
            .await
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
        expected: StatusCode,
    ) -> Value {
        self.server
            .ok(method, path, &self.key, body, expected)
            .await
    }
}

fn matched(context: &Value) -> Vec<(String, String)> {
    context["trace"]["procedures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_owned(),
                m["matched_by"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_procedure_is_approved_triggered_versioned_and_seen_in_the_trace() {
    let s = setup().await;
    let created = s
        .call(Method::POST, "/v1/procedures", Some(json!({
            "agent_id": s.agent, "name": "refund request",
            "description": "How to handle a customer asking for their money back",
            "trigger_pattern": "(?i)\\brefund",
            "steps": [
                {"instruction": "Check the receipt and the purchase date."},
                {"instruction": "Issue the refund.", "tool": "issue_refund",
                 "arguments": {"type": "object", "properties": {"order_id": {"type": "string"}}}}
            ]
        })), StatusCode::CREATED)
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["is_approved"], false);
    assert_eq!(created["pending_version"], 1);
    assert_eq!(created["created_by"], "test", "the API key's name");
    assert!(
        matched(&s.context("I want a refund").await).is_empty(),
        "not approved yet"
    );

    let approved = s
        .call(
            Method::POST,
            &format!("/v1/procedures/{id}/approve"),
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        (&approved["is_approved"], &approved["approved_by"]),
        (&json!(true), &json!("test"))
    );
    let context = s.context("Can I get a REFUND for my blender?").await;
    assert_eq!(
        matched(&context),
        [("refund request".to_owned(), "regex".to_owned())]
    );
    assert_eq!(context["trace"]["procedures"][0]["score"], 1.0);
    let procedures = context["messages"][1]["content"].as_str().unwrap();
    assert!(procedures.starts_with("[Procedures]"), "{procedures}");
    assert!(procedures.contains("refund request:\n1. Check the receipt and the purchase date.\n2. Issue the refund. (tool: issue_refund"), "{procedures}");
    let block = context["trace"]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["block"] == "procedures")
        .unwrap()
        .clone();
    assert_eq!(block["items"], 1);

    // Version 2 waits; version 1 keeps serving until it is approved.
    let updated = s
        .call(
            Method::PATCH,
            &format!("/v1/procedures/{id}"),
            Some(json!({"steps": [{"instruction": "Refund at once, no questions."}]})),
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        (&updated["serving_version"], &updated["pending_version"]),
        (&json!(1), &json!(2))
    );
    let serving = |context: &Value| {
        context["messages"][1]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(serving(&s.context("refund please").await).contains("Check the receipt"));
    s.call(
        Method::POST,
        &format!("/v1/procedures/{id}/approve"),
        None,
        StatusCode::OK,
    )
    .await;
    assert!(serving(&s.context("refund please").await).contains("Refund at once"));
    let versions = s
        .call(
            Method::GET,
            &format!("/v1/procedures/{id}/versions"),
            None,
            StatusCode::OK,
        )
        .await;
    let statuses: Vec<&str> = versions["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["approved", "approved"]);
    let rolled = s
        .call(
            Method::POST,
            &format!("/v1/procedures/{id}/rollback"),
            Some(json!({"version": 1})),
            StatusCode::OK,
        )
        .await;
    assert_eq!(rolled["serving_version"], 1);
    assert!(serving(&s.context("refund please").await).contains("Check the receipt"));
    let reply = s
        .server
        .call(
            Method::POST,
            &format!("/v1/procedures/{id}/approve"),
            &s.key,
            None,
        )
        .await;
    assert_eq!(
        (reply.status, reply.code()),
        (StatusCode::CONFLICT, "no_pending_version")
    );

    // Deactivated, it never matches.
    s.call(
        Method::PATCH,
        &format!("/v1/procedures/{id}"),
        Some(json!({"is_active": false})),
        StatusCode::OK,
    )
    .await;
    assert!(matched(&s.context("refund please").await).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_procedure_without_a_pattern_matches_by_meaning_and_shared_ones_reach_every_agent() {
    let s = setup().await;
    // Shared: no agent_id.
    let created = s
        .call(
            Method::POST,
            "/v1/procedures",
            Some(json!({
                "name": "password reset",
                "description": "The user cannot sign in because they forgot their password",
                "steps": [{"instruction": "Send a password reset link to the account's email."}]
            })),
            StatusCode::CREATED,
        )
        .await;
    let id = created["id"].as_str().unwrap();
    s.call(
        Method::POST,
        &format!("/v1/procedures/{id}/approve"),
        None,
        StatusCode::OK,
    )
    .await;
    let context = s.context("I forgot my password and cannot log in").await;
    assert_eq!(
        matched(&context),
        [("password reset".to_owned(), "semantic".to_owned())]
    );
    let score = context["trace"]["procedures"][0]["score"].as_f64().unwrap();
    assert!((0.35..1.0).contains(&score), "{score}");
    assert!(matched(&s.context("What time do you open on Sundays?").await).is_empty());
    let listed = s
        .call(
            Method::GET,
            "/v1/procedures?shared=true",
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(listed["items"].as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_patterns_are_422_with_the_parse_error_and_nothing_is_stored() {
    let s = setup().await;
    let reply = s
        .server
        .call(
            Method::POST,
            "/v1/procedures",
            &s.key,
            Some(json!({
                "agent_id": s.agent, "name": "broken", "trigger_pattern": "(unclosed",
                "steps": [{"instruction": "x"}]
            })),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(reply.body["error"]["field"], "trigger_pattern");
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unclosed group"),
        "{}",
        reply.body
    );
    let reply = s
        .server
        .call(
            Method::POST,
            "/v1/procedures",
            &s.key,
            Some(json!({
                "name": "empty", "steps": []
            })),
        )
        .await;
    assert_eq!(
        (reply.status, reply.body["error"]["field"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("steps"))
    );
    let listed = s
        .call(Method::GET, "/v1/procedures", None, StatusCode::OK)
        .await;
    assert!(
        listed["items"].as_array().unwrap().is_empty(),
        "nothing stored"
    );

    // A pattern that backtracks exponentially elsewhere is linear here.
    let created = s
        .call(
            Method::POST,
            "/v1/procedures",
            Some(json!({
                "agent_id": s.agent, "name": "evil", "trigger_pattern": "(a+)+$",
                "steps": [{"instruction": "x"}]
            })),
            StatusCode::CREATED,
        )
        .await;
    let id = created["id"].as_str().unwrap();
    s.call(
        Method::POST,
        &format!("/v1/procedures/{id}/approve"),
        None,
        StatusCode::OK,
    )
    .await;
    let context = s.context(&format!("{}b", "a".repeat(30))).await;
    assert!(
        context["trace"]["procedures"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["matched_by"] != "regex")
    );
    let context = s.context(&"a".repeat(30)).await;
    assert_eq!(context["trace"]["procedures"][0]["matched_by"], "regex");
}
