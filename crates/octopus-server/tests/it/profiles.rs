//! A user's profile over HTTP, on every backend: what holds now, changed
//! at once by a correction or a deletion, gone with a forgotten user, and
//! nobody's to another tenant.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{TestServer, seed};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_shows_what_holds_now() {
    profile_holds_now(TestServer::start().await).await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_profile_shows_what_holds_now() {
    profile_holds_now(TestServer::on_postgres().await).await;
}

#[cfg(feature = "qdrant-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_qdrant_a_profile_shows_what_holds_now() {
    profile_holds_now(TestServer::on_qdrant().await).await;
}

/// The texts of a list of profile facts.
fn texts(facts: &Value) -> Vec<&str> {
    facts
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["text"].as_str().unwrap())
        .collect()
}

async fn profile_holds_now(server: TestServer) {
    let world = seed(&server, "acme").await;
    let other = seed(&server, "globex").await;
    let key = &world.key;
    server
        .ok(
            Method::PATCH,
            &format!("/v1/agents/{}", world.agent),
            key,
            Some(json!({"memory": {"fact_categories": ["travel", "family"]}})),
            StatusCode::OK,
        )
        .await;
    let facts = format!("/v1/agents/{}/users/alice/facts", world.agent);
    let mut added = Vec::new();
    for (text, category) in [
        ("Alice has a sister, Ana", Some("family")),
        ("Alice flies to Lisbon on 10 May", Some("travel")),
        ("Alice stays at Hotel Avenida", Some("travel")),
        ("Alice works night shifts", None),
    ] {
        let fact = server
            .ok(
                Method::POST,
                &facts,
                key,
                Some(json!({"text": text, "category": category})),
                StatusCode::CREATED,
            )
            .await;
        added.push(fact["id"].as_str().unwrap().to_owned());
    }
    server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{}/messages", world.conversation),
            key,
            Some(json!({"role": "user", "content": "Always answer me in French."})),
            StatusCode::CREATED,
        )
        .await;
    server
        .ok(
            Method::POST,
            &format!("/v1/episodes/{}/close", world.episode),
            key,
            Some(json!({"end_reason": "user_closed",
                "summary": "Alice planned her Lisbon trip. She asked for answers in French."})),
            StatusCode::OK,
        )
        .await;
    server.octopus.run_memory_jobs().await.unwrap();

    let path = format!("/v1/agents/{}/users/alice/profile", world.agent);
    let profile = server
        .ok(Method::GET, &path, key, None, StatusCode::OK)
        .await;
    assert_eq!(profile["user_id"], "alice");
    assert_eq!(
        texts(&profile["instructions"]),
        ["Always answer me in French."],
        "{profile}"
    );
    let groups: Vec<(Value, Vec<&str>)> = profile["facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["category"].clone(), texts(&g["facts"])))
        .collect();
    // The seeded fact of the episode has no category either.
    let none: Vec<&str> = groups[2].1.clone();
    assert_eq!(
        groups[..2],
        [
            (
                json!("travel"),
                vec![
                    "Alice stays at Hotel Avenida",
                    "Alice flies to Lisbon on 10 May"
                ]
            ),
            (json!("family"), vec!["Alice has a sister, Ana"]),
        ],
        "the agent's categories in its order, the newest fact first"
    );
    assert!(
        groups[2].0.is_null() && none.contains(&"Alice works night shifts"),
        "{groups:?}"
    );
    assert_eq!(
        profile["recent_episodes"][0]["summary"],
        "Alice planned her Lisbon trip."
    );
    assert_eq!(
        profile["recent_episodes"][0]["episode_id"],
        world.episode.as_str()
    );
    let activity = &profile["activity"];
    assert_eq!(
        (
            &activity["conversations"],
            &activity["episodes"],
            &activity["messages"]
        ),
        (&json!(1), &json!(1), &json!(3))
    );

    // The context of a turn shows the profile only when the agent asks for it.
    let context = format!("/v1/conversations/{}/context", world.conversation);
    let ask = json!({"message": "What should I pack?"});
    let about = |context: &Value| {
        context["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| {
                m["content"]
                    .as_str()
                    .unwrap_or_default()
                    .starts_with("[About the User]")
            })
            .map(|m| m["content"].as_str().unwrap().to_owned())
    };
    let without = server
        .ok(
            Method::POST,
            &context,
            key,
            Some(ask.clone()),
            StatusCode::OK,
        )
        .await;
    assert_eq!(about(&without), None);
    server
        .ok(
            Method::PATCH,
            &format!("/v1/agents/{}", world.agent),
            key,
            Some(json!({"memory": {"profile_max_tokens": 200}})),
            StatusCode::OK,
        )
        .await;
    let with = server
        .ok(Method::POST, &context, key, Some(ask), StatusCode::OK)
        .await;
    let block = about(&with).expect("a profile block");
    assert!(
        block.contains("1 conversations with you (3 messages)")
            && block.contains("Alice planned her Lisbon trip."),
        "{block}"
    );
    let profile_block = with["trace"]["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["block"] == "profile")
        .unwrap()
        .clone();
    assert_eq!(profile_block["items"], 2, "{profile_block}");
    let refused = server
        .call(
            Method::PATCH,
            &format!("/v1/agents/{}", world.agent),
            key,
            Some(json!({"memory": {"profile_max_tokens": 9_000}})),
        )
        .await;
    assert_eq!(
        (refused.status, &refused.body["error"]["field"]),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            &json!("memory.profile_max_tokens")
        ),
        "{}",
        refused.body
    );

    // A corrected fact shows its new text; a deleted one is gone.
    server
        .ok(
            Method::PATCH,
            &format!("/v1/facts/{}", added[1]),
            key,
            Some(json!({"text": "Alice flies to Lisbon on 12 May"})),
            StatusCode::OK,
        )
        .await;
    server
        .ok(
            Method::DELETE,
            &format!("/v1/facts/{}", added[2]),
            key,
            None,
            StatusCode::OK,
        )
        .await;
    let profile = server
        .ok(Method::GET, &path, key, None, StatusCode::OK)
        .await;
    assert_eq!(profile["facts"][0]["category"], "travel");
    assert_eq!(
        texts(&profile["facts"][0]["facts"]),
        ["Alice flies to Lisbon on 12 May"]
    );

    // Another tenant finds neither the agent nor a user of its own agent's.
    let reply = server.call(Method::GET, &path, &other.key, None).await;
    assert_eq!(
        (reply.status, reply.code()),
        (StatusCode::NOT_FOUND, "agent_not_found")
    );
    let theirs = format!("/v1/agents/{}/users/bob/profile", other.agent);
    let reply = server.call(Method::GET, &theirs, &other.key, None).await;
    assert_eq!(
        (reply.status, reply.code()),
        (StatusCode::NOT_FOUND, "user_not_found")
    );
    let long = format!(
        "/v1/agents/{}/users/{}/profile",
        world.agent,
        "x".repeat(300)
    );
    let reply = server.call(Method::GET, &long, key, None).await;
    assert_eq!(
        (reply.status, &reply.body["error"]["field"]),
        (StatusCode::UNPROCESSABLE_ENTITY, &json!("user_id"))
    );

    // A forgotten user has no profile.
    server
        .ok(Method::DELETE, "/v1/users/alice", key, None, StatusCode::OK)
        .await;
    let reply = server.call(Method::GET, &path, key, None).await;
    assert_eq!(
        (reply.status, reply.code()),
        (StatusCode::NOT_FOUND, "user_not_found"),
        "{}",
        reply.body
    );
    // The other tenant's alice is untouched.
    let theirs = format!("/v1/agents/{}/users/alice/profile", other.agent);
    server
        .ok(Method::GET, &theirs, &other.key, None, StatusCode::OK)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_summary_follows_the_facts() {
    let (server, _fake, url) = TestServer::with_fake_chat().await;
    profile_summary_follows_the_facts(server, &url).await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_profile_summary_follows_the_facts() {
    use octopus_testkit::fake_chat::{self, ChatProvider};
    let url = fake_chat::serve(std::sync::Arc::new(ChatProvider::default())).await;
    let database = octopus_postgres::testing::fresh_database().await;
    let server = TestServer::with_backends(Default::default(), |app| {
        app.storage.backend = octopus_app::settings::StorageBackend::Postgres;
        app.storage.postgres.url = database;
        app.engine.llm.max_retries = 0;
        app.engine.llm.allowed_base_urls = vec![url.clone()];
    })
    .await;
    profile_summary_follows_the_facts(server, &url).await;
}

/// The profile as it is once `written` holds of it, read until then (the
/// paragraph is written in a task of its own).
async fn profile_once(
    server: &TestServer,
    key: &str,
    path: &str,
    written: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let profile = server
            .ok(Method::GET, path, key, None, StatusCode::OK)
            .await;
        if written(&profile) {
            return profile;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never written: {profile:#}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The loopback model echoes what it is asked, so the paragraph shows the
/// facts it was written from.
async fn profile_summary_follows_the_facts(server: TestServer, url: &str) {
    let (tenant, key) = server.tenant("acme").await;
    let (agent, conversation) = server
        .chat_agent(
            &key,
            url,
            json!({"profile_summary": true, "profile_max_tokens": 400}),
        )
        .await;
    let path = format!("/v1/agents/{agent}/users/dana/profile");
    let facts = format!("/v1/agents/{agent}/users/dana/facts");
    let lyon = server
        .ok(
            Method::POST,
            &facts,
            &key,
            Some(json!({"text": "Dana lives in Lyon"})),
            StatusCode::CREATED,
        )
        .await;
    server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{conversation}/messages"),
            &key,
            Some(json!({"role": "user", "content": "I keep bees on my roof."})),
            StatusCode::CREATED,
        )
        .await;
    server.octopus.run_memory_jobs().await.unwrap();
    let profile = profile_once(&server, &key, &path, |p| {
        p["summary"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Dana lives in Lyon"))
    })
    .await;
    assert_eq!(
        profile["summary"]["fact_ids"],
        json!([lyon["id"]]),
        "{profile:#}"
    );

    // It leads the context's profile block.
    let context = server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{conversation}/context"),
            &key,
            Some(json!({"message": "Where do I live?"})),
            StatusCode::OK,
        )
        .await;
    let trace = &context["trace"]["profile"];
    assert_eq!(trace[0]["id"], "summary", "{trace:#}");
    assert!(
        trace[0]["text"]
            .as_str()
            .unwrap()
            .contains("Dana lives in Lyon")
    );

    // Corrected: the old paragraph is never shown again; a new one is written.
    let paris = server
        .ok(
            Method::PATCH,
            &format!("/v1/facts/{}", lyon["id"].as_str().unwrap()),
            &key,
            Some(json!({"text": "Dana lives in Paris"})),
            StatusCode::OK,
        )
        .await;
    let shows_lyon = |p: &Value| {
        p["summary"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Lyon"))
    };
    let profile = server
        .ok(Method::GET, &path, &key, None, StatusCode::OK)
        .await;
    assert!(!shows_lyon(&profile), "{profile:#}");
    let profile = profile_once(&server, &key, &path, |p| {
        p["summary"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("Dana lives in Paris"))
    })
    .await;
    assert!(!shows_lyon(&profile), "{profile:#}");

    // Deleted: gone from the paragraph at once.
    server
        .ok(
            Method::DELETE,
            &format!("/v1/facts/{}", paris["id"].as_str().unwrap()),
            &key,
            None,
            StatusCode::OK,
        )
        .await;
    let profile = server
        .ok(Method::GET, &path, &key, None, StatusCode::OK)
        .await;
    let says_paris = profile["summary"]["text"]
        .as_str()
        .is_some_and(|t| t.contains("Paris"));
    assert!(!says_paris, "{profile:#}");

    // Forgotten: no profile, and no paragraph left to show.
    server
        .ok(
            Method::DELETE,
            &format!("/v1/users/dana?agent_id={agent}"),
            &key,
            None,
            StatusCode::OK,
        )
        .await;
    let reply = server.call(Method::GET, &path, &key, None).await;
    assert_eq!(
        (reply.status, reply.code()),
        (StatusCode::NOT_FOUND, "user_not_found")
    );
    let summary = server
        .octopus
        .store()
        .profile_summary(tenant.parse().unwrap(), agent.parse().unwrap(), "dana")
        .await
        .unwrap();
    assert_eq!(summary, None);
}
