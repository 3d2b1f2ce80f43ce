//! Webhooks over HTTP: an endpoint registered through the API receives each
//! change signed, in order per user, retried until it answers 2xx, never
//! redirected, and is disabled when it answers 410 Gone or fails too long;
//! its log says so. Endpoints on internal addresses are refused unless the
//! operator allows them.

use std::time::Duration;

use axum::http::{Method, StatusCode};
use octopus_engine::EngineConfig;
use octopus_engine::webhooks::{Destinations, WebhookSettings, signing};
use octopus_testkit::webhook_receiver::Receiver;
use serde_json::{Value, json};

use crate::harness::TestServer;

/// Retries this soon after a failure: the tests wait it out.
const RETRY_SECS: f64 = 0.2;

fn loopback(engine: &mut EngineConfig) {
    engine.webhooks = WebhookSettings {
        destinations: Destinations::Any,
        retry_schedule_secs: vec![RETRY_SECS],
        timeout_secs: 5,
        ..WebhookSettings::default()
    };
}

struct World {
    server: TestServer,
    key: String,
    agent: String,
}

async fn world(adjust: impl FnOnce(&mut EngineConfig)) -> World {
    let server = TestServer::with_engine(Default::default(), adjust).await;
    let (_, key) = server.tenant("acme").await;
    let agent = server.agent(&key, "support").await;
    World { server, key, agent }
}

impl World {
    async fn register(&self, url: &str, events: &[&str]) -> Value {
        self.server
            .ok(
                Method::POST,
                "/v1/webhooks",
                &self.key,
                Some(json!({"url": url, "events": events, "description": "audit"})),
                StatusCode::CREATED,
            )
            .await
    }

    /// Registers an endpoint and returns its id.
    async fn register_id(&self, url: &str, events: &[&str]) -> String {
        let created = self.register(url, events).await;
        created["webhook"]["id"].as_str().unwrap().to_owned()
    }

    async fn listed(&self) -> Value {
        self.server
            .ok(Method::GET, "/v1/webhooks", &self.key, None, StatusCode::OK)
            .await
    }

    async fn add_fact(&self, user: &str, text: &str) -> Value {
        self.server
            .ok(
                Method::POST,
                &format!("/v1/agents/{}/users/{user}/facts", self.agent),
                &self.key,
                Some(json!({"text": text})),
                StatusCode::CREATED,
            )
            .await
    }

    async fn deliveries(&self, webhook: &str) -> Vec<Value> {
        let log = self
            .server
            .ok(
                Method::GET,
                &format!("/v1/webhooks/{webhook}/deliveries"),
                &self.key,
                None,
                StatusCode::OK,
            )
            .await;
        log["items"].as_array().unwrap().clone()
    }

    async fn webhook(&self, id: &str) -> Value {
        self.server
            .ok(
                Method::GET,
                &format!("/v1/webhooks/{id}"),
                &self.key,
                None,
                StatusCode::OK,
            )
            .await
    }

    async fn deliver(&self) -> usize {
        self.server.octopus.deliver_webhooks().await.unwrap()
    }

    /// Delivers once the retry is due.
    async fn deliver_retry(&self) -> usize {
        tokio::time::sleep(Duration::from_secs_f64(RETRY_SECS * 1.25)).await;
        self.deliver().await
    }
}

#[tokio::test]
async fn a_change_reaches_its_endpoint_signed_and_is_logged() {
    let world = world(loopback).await;
    let receiver = Receiver::start(&[]).await;
    let created = world
        .register(&receiver.url, &["fact.added", "fact.deleted"])
        .await;
    let secret = created["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_"), "{created}");
    let id = created["webhook"]["id"].as_str().unwrap();
    assert_eq!(created["webhook"]["enabled"], true);
    // The secret is shown once.
    let listed = world.listed().await;
    assert_eq!(listed["items"][0]["id"], id);
    assert!(!listed.to_string().contains(secret));

    let fact = world
        .add_fact("alice", "Alice is allergic to peanuts")
        .await;
    assert_eq!(world.deliver().await, 1);
    let received = receiver.received();
    assert_eq!(received.len(), 1);
    let delivery = &received[0];
    let body = delivery.json();
    assert_eq!(body["type"], "fact.added");
    assert_eq!(body["data"]["fact_id"], fact["id"]);
    assert_eq!(body["data"]["user_id"], "alice");
    assert!(!delivery.body.contains("peanuts"), "ids, not words");
    let message_id = delivery.header("webhook-id").unwrap();
    let timestamp: i64 = delivery
        .header("webhook-timestamp")
        .unwrap()
        .parse()
        .unwrap();
    assert!(message_id.starts_with("msg_"));
    assert!((chrono::Utc::now().timestamp() - timestamp).abs() < 60);
    assert_eq!(
        delivery.header("webhook-signature").unwrap(),
        signing::signature(secret, message_id, timestamp, &delivery.body)
    );
    assert_eq!(delivery.header("content-type"), Some("application/json"));
    assert_eq!(
        delivery.header("authorization"),
        None,
        "no key is ever sent"
    );

    let log = world.deliveries(id).await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["message_id"], message_id);
    assert_eq!(log[0]["state"], "delivered");
    assert_eq!(log[0]["attempts"], 1);
    assert_eq!(log[0]["last_status"], 200);
    // Nothing more is due, and an event it did not ask for is not sent.
    world
        .server
        .ok(
            Method::DELETE,
            "/v1/users/alice",
            &world.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(world.deliver().await, 0);
}

#[tokio::test]
async fn a_failing_endpoint_is_retried_in_order_per_user() {
    let world = world(loopback).await;
    let receiver = Receiver::start(&[500, 302]).await;
    let id = world.register_id(&receiver.url, &["fact.added"]).await;
    world.add_fact("alice", "Alice likes tea").await;
    world.add_fact("alice", "Alice likes jazz").await;

    assert_eq!(world.deliver().await, 1, "her second waits for her first");
    let log = world.deliveries(&id).await;
    let first = log.iter().find(|d| d["attempts"] == 1).unwrap();
    assert_eq!(first["state"], "pending");
    assert_eq!(first["last_status"], 500);
    assert!(first["last_error"].as_str().unwrap().contains("500"));
    assert!(first["next_attempt_at"].is_string());
    assert!(world.webhook(&id).await["failing_since"].is_string());

    // A redirect is a failure, and is not followed.
    assert_eq!(world.deliver_retry().await, 1);
    let log = world.deliveries(&id).await;
    let first = log.iter().find(|d| d["attempts"] == 2).unwrap();
    assert_eq!(first["last_status"], 302);
    assert!(first["last_error"].as_str().unwrap().contains("redirect"));

    assert_eq!(world.deliver_retry().await, 1);
    assert_eq!(world.deliver().await, 1);
    let received = receiver.received();
    assert!(
        received.iter().all(|r| r.path == "/hook"),
        "never redirected"
    );
    let facts: Vec<Value> = received
        .iter()
        .map(|r| r.json()["data"]["fact_id"].clone())
        .collect();
    assert_eq!(facts[0], facts[1]);
    assert_eq!(facts[0], facts[2]);
    assert_ne!(facts[2], facts[3], "the second only after the first");
    let ids: Vec<&str> = received
        .iter()
        .map(|r| r.header("webhook-id").unwrap())
        .collect();
    assert_eq!(ids[0], ids[2], "a retry is the same message");
    assert!(
        world.webhook(&id).await["failing_since"].is_null(),
        "healthy again"
    );
    assert!(
        world
            .deliveries(&id)
            .await
            .iter()
            .all(|d| d["state"] == "delivered")
    );
}

#[tokio::test]
async fn an_endpoint_that_is_gone_or_fails_too_long_is_disabled_and_says_so() {
    let world = world(|engine| {
        loopback(engine);
        engine.webhooks.disable_after_failing_secs = 0;
    })
    .await;
    let gone = Receiver::start(&[410]).await;
    let failing = Receiver::start(&[503, 503, 503]).await;
    let gone_id = world.register_id(&gone.url, &["fact.added"]).await;
    let failing_id = world.register_id(&failing.url, &["fact.added"]).await;
    world.add_fact("alice", "Alice likes tea").await;
    world.add_fact("alice", "Alice likes jazz").await;

    assert_eq!(world.deliver().await, 2);
    let disabled = world.webhook(&gone_id).await;
    assert_eq!(disabled["enabled"], false);
    assert_eq!(
        disabled["disabled_reason"],
        "the endpoint answered 410 Gone"
    );
    assert!(
        world
            .deliveries(&gone_id)
            .await
            .iter()
            .all(|d| d["state"] == "failed")
    );
    // The other failed once; failing again past the allowed time, it is
    // disabled too.
    assert_eq!(world.webhook(&failing_id).await["enabled"], true);
    assert_eq!(world.deliver_retry().await, 1);
    let disabled = world.webhook(&failing_id).await;
    assert_eq!(disabled["enabled"], false, "{disabled}");
    assert!(
        disabled["disabled_reason"]
            .as_str()
            .unwrap()
            .contains("failed for")
    );

    // Nothing more goes to either; enabled again, what comes next does.
    world.add_fact("alice", "Alice likes chess").await;
    assert_eq!(world.deliver_retry().await, 0);
    let enabled = world
        .server
        .ok(
            Method::POST,
            &format!("/v1/webhooks/{failing_id}/enable"),
            &world.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(enabled["enabled"], true);
    world.add_fact("alice", "Alice likes go").await;
    assert_eq!(world.deliver().await, 1);
    let last = failing.received().pop().unwrap();
    assert_eq!(last.json()["type"], "fact.added");
    assert_eq!(gone.received().len(), 1);
}

#[tokio::test]
async fn endpoints_on_the_servers_network_are_refused_unless_the_operator_allows_them() {
    let world = world(|engine| {
        engine.webhooks.retry_schedule_secs = vec![RETRY_SECS];
    })
    .await;
    let receiver = Receiver::start(&[]).await;
    for url in [
        receiver.url.as_str(),
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]:8080/hook",
    ] {
        let refused = world
            .server
            .call(
                Method::POST,
                "/v1/webhooks",
                &world.key,
                Some(json!({"url": url, "events": ["fact.added"]})),
            )
            .await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{url}");
        assert_eq!(refused.body["error"]["field"], "url", "{}", refused.body);
    }
    // A name is checked where it resolves, at each delivery.
    let by_name = receiver.url.replace("127.0.0.1", "localhost");
    let id = world.register_id(&by_name, &["fact.added"]).await;
    world.add_fact("alice", "Alice likes tea").await;
    assert_eq!(world.deliver().await, 1);
    assert!(receiver.received().is_empty());
    let log = world.deliveries(&id).await;
    assert_eq!(log[0]["state"], "pending");
    assert!(log[0]["last_status"].is_null());
    let error = log[0]["last_error"].as_str().unwrap();
    assert!(error.contains("not reachable from this server"), "{error}");
}

#[tokio::test]
async fn bad_registrations_answer_422_naming_the_field_and_store_nothing() {
    let world = world(loopback).await;
    for (body, field) in [
        (
            json!({"url": "ftp://example.com", "events": ["fact.added"]}),
            "url",
        ),
        (
            json!({"url": "https://example.com", "events": []}),
            "events",
        ),
        (
            json!({"url": "https://example.com", "events": ["fact.changed"]}),
            "events",
        ),
        (
            json!({"url": "https://example.com", "events": ["fact.added"], "description": "x".repeat(501)}),
            "description",
        ),
        (json!({"events": ["fact.added"]}), "url"),
    ] {
        let refused = world
            .server
            .call(Method::POST, "/v1/webhooks", &world.key, Some(body.clone()))
            .await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        // Named as the field, or in the message of a body that does not parse.
        let error = &refused.body["error"];
        let named = error["field"].as_str().map(str::to_owned);
        let named = named.unwrap_or_else(|| error["message"].to_string());
        assert!(named.contains(field), "{body}: {}", refused.body);
    }
    let listed = world.listed().await;
    assert_eq!(listed["items"], json!([]));
}

/// A receiver that accepts connections and never answers: every attempt
/// at it lasts the whole timeout.
async fn silent_receiver() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    (url, held)
}

/// One tenant's endpoints that never answer hold only their own slots of
/// the dispatcher: another tenant's delivery goes out while every one of
/// them is still waiting out its timeout. (Before, the dispatcher sent a
/// round of the 16 oldest deliveries and waited for the whole round.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_endpoint_of_one_tenant_delays_no_other_tenants_delivery() {
    const SILENT_FOR: u64 = 120;
    let world = world(|engine| {
        loopback(engine);
        engine.webhooks.timeout_secs = SILENT_FOR;
    })
    .await;
    let (silent, _held) = silent_receiver().await;
    for _ in 0..16 {
        world.register(&silent, &["fact.added"]).await;
    }
    for user in ["ann", "bob", "cy"] {
        world.add_fact(user, &format!("{user} likes tea")).await;
    }
    world.server.octopus.start_webhook_dispatcher();

    // Another tenant, with an endpoint that answers.
    let (_, key) = world.server.tenant("globex").await;
    let agent = world.server.agent(&key, "support").await;
    let receiver = Receiver::start(&[]).await;
    world
        .server
        .ok(
            Method::POST,
            "/v1/webhooks",
            &key,
            Some(json!({"url": receiver.url, "events": ["fact.added"]})),
            StatusCode::CREATED,
        )
        .await;
    let started = std::time::Instant::now();
    world
        .server
        .ok(
            Method::POST,
            &format!("/v1/agents/{agent}/users/dora/facts"),
            &key,
            Some(json!({"text": "Dora likes coffee"})),
            StatusCode::CREATED,
        )
        .await;
    while receiver.received().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(SILENT_FOR / 2),
            "the other tenant's delivery waited behind the silent endpoints"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let body = receiver.received()[0].json();
    assert_eq!(body["type"], "fact.added");
    assert_eq!(body["data"]["user_id"], "dora", "{body}");
}
