//! PII as a client meets it: what a stored message's `redacted_content`
//! holds, and the agent's region for phone numbers without a country code.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{TestServer, agent_body};

/// Appends `texts` as user messages of a new conversation with `agent` and
/// returns each one's `redacted_content` as stored.
async fn stored_redactions(
    server: &TestServer,
    key: &str,
    agent: &str,
    texts: &[&str],
) -> Vec<Value> {
    let conversation = server
        .ok(
            Method::POST,
            "/v1/conversations",
            key,
            Some(json!({"agent_id": agent, "user_id": "dana"})),
            StatusCode::CREATED,
        )
        .await;
    let messages: Vec<Value> = texts
        .iter()
        .map(|text| json!({"role": "user", "content": text}))
        .collect();
    let path = format!(
        "/v1/conversations/{}/messages",
        conversation["id"].as_str().unwrap()
    );
    let stored = server
        .ok(
            Method::POST,
            &path,
            key,
            Some(json!({"messages": messages})),
            StatusCode::CREATED,
        )
        .await;
    let episode = stored["messages"][0]["episode_id"].as_str().unwrap();
    let read = server
        .ok(
            Method::GET,
            &format!("/v1/episodes/{episode}"),
            key,
            None,
            StatusCode::OK,
        )
        .await;
    read["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["redacted_content"].clone())
        .collect()
}

#[tokio::test]
async fn phone_numbers_in_international_and_national_formats_are_redacted_whole() {
    let server = TestServer::start().await;
    let (_, key) = server.tenant("acme").await;
    let agent = server.agent(&key, "support").await;
    let redacted = stored_redactions(
        &server,
        &key,
        &agent,
        &[
            "x 555-867-5309, y",
            "+44 20 7946 0958, thanks",
            "my UK mobile is 07700 900123",
            "the Berlin office: 030 12345678.",
            "or 4155552671",
            "IBAN DE89 3704 0044 0532 0130 01 bounced",
            "order 9876543210 shipped",
        ],
    )
    .await;
    assert_eq!(
        redacted,
        [
            json!("x [PHONE], y"),
            json!("[PHONE], thanks"),
            json!("my UK mobile is [PHONE]"),
            json!("the Berlin office: [PHONE]."),
            json!("or [PHONE]"),
            // A checksum that fails makes no IBAN, and no card of its digits.
            Value::Null,
            Value::Null,
        ]
    );
}

#[tokio::test]
async fn an_agents_region_reads_its_national_numbers_and_a_bad_region_is_refused() {
    let server = TestServer::start().await;
    let (_, key) = server.tenant("acme").await;
    let us = server.agent(&key, "support").await;
    let mut body = agent_body("soporte");
    body["memory"] = json!({"pii_region": "ES"});
    let spain = server
        .ok(
            Method::POST,
            "/v1/agents",
            &key,
            Some(body),
            StatusCode::CREATED,
        )
        .await;
    assert_eq!(spain["memory"]["pii_region"], "ES");
    let spain = spain["id"].as_str().unwrap();
    let text = "Llámame al 912 345 678 mañana";
    assert_eq!(
        stored_redactions(&server, &key, &us, &[text]).await,
        [Value::Null]
    );
    assert_eq!(
        stored_redactions(&server, &key, spain, &[text]).await,
        [json!("Llámame al [PHONE] mañana")]
    );

    let reply = server
        .call(
            Method::PATCH,
            &format!("/v1/agents/{spain}"),
            &key,
            Some(json!({"memory": {"pii_region": "XX"}})),
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(
        reply.body["error"]["field"], "memory.pii_region",
        "{}",
        reply.body
    );
    let kept = server
        .ok(
            Method::GET,
            &format!("/v1/agents/{spain}"),
            &key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        kept["memory"]["pii_region"], "ES",
        "the refused patch changed nothing"
    );
}
