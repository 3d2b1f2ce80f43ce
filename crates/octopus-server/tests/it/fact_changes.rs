//! A person's changes to one fact over HTTP: a correction is in the next
//! context and recall at once, a deletion leaves them at once, the history
//! says who did what, and bad input changes nothing.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{Seeded, TestServer, seed, seed_fact};

const LYON: &str = "Alice lives in Lyon near the old river port";
const MARSEILLE: &str = "Alice lives in Marseille by the sea";

async fn context(server: &TestServer, world: &Seeded) -> String {
    let context = server
        .ok(
            Method::POST,
            &format!("/v1/conversations/{}/context", world.conversation),
            &world.key,
            Some(json!({"message": "Where should we meet?"})),
            StatusCode::OK,
        )
        .await;
    context["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .filter(|text| text.starts_with("[Known Facts About the User]"))
        .collect()
}

async fn recalled_facts(
    server: &TestServer,
    world: &Seeded,
    query: &str,
    mode: &str,
) -> Vec<String> {
    let recalled = server
        .ok(
            Method::POST,
            &format!("/v1/agents/{}/recall", world.agent),
            &world.key,
            Some(json!({"user_id": "alice", "query": query, "mode": mode})),
            StatusCode::OK,
        )
        .await;
    recalled["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|hit| hit["kind"] == "fact")
        .map(|hit| hit["fact"]["text"].as_str().unwrap().to_owned())
        .collect()
}

async fn history(server: &TestServer, world: &Seeded, id: &str) -> Vec<Value> {
    server
        .ok(
            Method::GET,
            &format!("/v1/facts/{id}/history"),
            &world.key,
            None,
            StatusCode::OK,
        )
        .await["items"]
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrected_fact_is_used_at_once_and_a_deleted_one_is_gone_at_once() {
    corrected_then_deleted(TestServer::start().await).await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_corrected_fact_is_used_at_once_and_a_deleted_one_is_gone_at_once() {
    corrected_then_deleted(TestServer::on_postgres().await).await;
}

#[cfg(feature = "qdrant-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_qdrant_a_corrected_fact_is_used_at_once_and_a_deleted_one_is_gone_at_once() {
    corrected_then_deleted(TestServer::on_qdrant().await).await;
}

async fn corrected_then_deleted(server: TestServer) {
    let world = seed(&server, "acme").await;
    let lyon = seed_fact(&server, &world.tenant, &world.episode, LYON).await;
    server.octopus.run_memory_jobs().await.unwrap();
    assert!(context(&server, &world).await.contains(LYON));
    let path = format!("/v1/facts/{lyon}");

    // Bad input is refused by name, and changes nothing.
    for (body, field) in [
        (json!({"text": " "}), "text"),
        (json!({"text": "x".repeat(2001)}), "text"),
        (
            json!({"text": MARSEILLE, "reason": "r".repeat(501)}),
            "reason",
        ),
        (json!({"text": MARSEILLE, "colour": "blue"}), "colour"),
        (json!({"reason": "moved"}), "text"),
    ] {
        let reply = server
            .call(Method::PATCH, &path, &world.key, Some(body.clone()))
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}: {}",
            reply.body
        );
        assert!(
            reply.body.to_string().contains(field),
            "{body}: {}",
            reply.body
        );
    }
    let long_reason = format!("{path}?reason={}", "r".repeat(501));
    let reply = server
        .call(Method::DELETE, &long_reason, &world.key, None)
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    let reply = server
        .call(
            Method::PATCH,
            &format!("/v1/facts/{}", uuid::Uuid::now_v7()),
            &world.key,
            Some(json!({"text": MARSEILLE})),
        )
        .await;
    assert_eq!(
        (reply.status, reply.code()),
        (StatusCode::NOT_FOUND, "fact_not_found")
    );
    assert_eq!(history(&server, &world, &lyon).await.len(), 1);

    // A correction: the next context says it, and recall finds its words.
    let corrected = server
        .ok(
            Method::PATCH,
            &path,
            &world.key,
            Some(json!({"text": MARSEILLE, "reason": "she moved in May"})),
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        (
            &corrected["source"],
            &corrected["changed_by"],
            &corrected["text"]
        ),
        (&json!("manual"), &json!("test"), &json!(MARSEILLE)),
        "written by the key named `test`"
    );
    let marseille = corrected["id"].as_str().unwrap().to_owned();
    assert_ne!(marseille, lyon);
    let shown = context(&server, &world).await;
    assert!(
        shown.contains(MARSEILLE) && !shown.contains("Lyon"),
        "{shown}"
    );
    assert_eq!(
        recalled_facts(&server, &world, "Marseille", "keyword").await,
        [MARSEILLE]
    );
    server.octopus.run_memory_jobs().await.unwrap();
    assert!(
        recalled_facts(
            &server,
            &world,
            "Where does Alice live by the sea?",
            "vector"
        )
        .await
        .contains(&MARSEILLE.to_owned()),
        "embedded by the memory worker"
    );
    let again = server
        .call(
            Method::PATCH,
            &path,
            &world.key,
            Some(json!({"text": "Nice"})),
        )
        .await;
    assert_eq!(
        (again.status, again.code()),
        (StatusCode::CONFLICT, "fact_replaced")
    );
    let entries = history(&server, &world, &marseille).await;
    let seen: Vec<(&str, &str, &str)> = entries
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap(),
                e["text"].as_str().unwrap(),
                e["changed_by"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("imported", LYON, "model"),
            ("corrected", MARSEILLE, "test")
        ]
    );

    // A deletion: gone from context, recall and reads at once.
    let receipt = server
        .ok(
            Method::DELETE,
            &format!("/v1/facts/{marseille}?reason=asked"),
            &world.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        (
            &receipt["versions"],
            &receipt["vectors"],
            &receipt["compacted"]
        ),
        (&json!(2), &json!(2), &json!(true)),
        "{receipt}"
    );
    assert_eq!(
        receipt["fact_id"],
        json!(lyon),
        "named by its first version"
    );
    let shown = context(&server, &world).await;
    assert!(
        !shown.contains("Marseille") && !shown.contains("Lyon"),
        "{shown}"
    );
    for (query, mode) in [
        ("Marseille", "keyword"),
        ("Lyon", "keyword"),
        ("Where does Alice live by the sea?", "vector"),
    ] {
        let found = recalled_facts(&server, &world, query, mode).await;
        assert!(
            found.iter().all(|text| text != MARSEILLE && text != LYON),
            "{query}: {found:?}"
        );
    }
    for id in [&lyon, &marseille] {
        let reply = server
            .call(Method::GET, &format!("/v1/facts/{id}"), &world.key, None)
            .await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.body);
    }
    let entries = history(&server, &world, &lyon).await;
    assert_eq!(entries.len(), 3);
    assert!(entries.iter().all(|e| e["text"].is_null()), "{entries:?}");
    assert_eq!(entries[2]["action"], "deleted");
    assert_eq!(entries[2]["reason"], "asked");
    assert!(entries[1]["reason"].is_null(), "the earlier reasons go too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fact_added_by_hand_is_used_at_once_and_travels_in_a_dump() {
    added_by_hand(TestServer::start().await).await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_fact_added_by_hand_is_used_at_once_and_travels_in_a_dump() {
    added_by_hand(TestServer::on_postgres().await).await;
}

#[cfg(feature = "qdrant-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_qdrant_a_fact_added_by_hand_is_used_at_once_and_travels_in_a_dump() {
    added_by_hand(TestServer::on_qdrant().await).await;
}

async fn added_by_hand(server: TestServer) {
    let world = seed(&server, "acme").await;
    let path = format!("/v1/agents/{}/users/alice/facts", world.agent);
    server
        .ok(
            Method::PATCH,
            &format!("/v1/agents/{}", world.agent),
            &world.key,
            Some(json!({"memory": {"fact_categories": ["health", "diet"]}})),
            StatusCode::OK,
        )
        .await;
    let before = server
        .ok(Method::GET, &path, &world.key, None, StatusCode::OK)
        .await;

    // Bad input names its field, and nothing is stored.
    for (body, field) in [
        (json!({"text": " "}), "text"),
        (json!({"text": "x".repeat(2001)}), "text"),
        (
            json!({"text": "Alice is allergic to peanuts", "reason": "y".repeat(501)}),
            "reason",
        ),
        (
            json!({"text": "Alice is allergic to peanuts", "key": "k".repeat(201)}),
            "key",
        ),
        // A date outside the sane range: not before 1900, not in the future.
        (
            json!({"text": "Alice is allergic to peanuts", "valid_from": "9999-12-31T00:00:00Z"}),
            "valid_from",
        ),
        (
            json!({"text": "Alice is allergic to peanuts", "valid_from": "1899-12-31T23:59:59Z"}),
            "valid_from",
        ),
    ] {
        let refused = server
            .call(Method::POST, &path, &world.key, Some(body))
            .await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            refused.body
        );
        assert_eq!(refused.body["error"]["field"], field, "{}", refused.body);
    }
    // A category the agent does not have conflicts with its settings.
    let unknown = server
        .call(
            Method::POST,
            &path,
            &world.key,
            Some(json!({"text": "Alice is allergic to peanuts", "category": "sports"})),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::CONFLICT, "{}", unknown.body);
    assert_eq!(unknown.code(), "unknown_fact_category");
    assert!(
        unknown.body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("category \"sports\""),
        "{}",
        unknown.body
    );
    let (_, other) = server.tenant("globex").await;
    let foreign = server
        .call(Method::POST, &path, &other, Some(json!({"text": "pwned"})))
        .await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
    let unchanged = server
        .ok(Method::GET, &path, &world.key, None, StatusCode::OK)
        .await;
    assert_eq!(unchanged, before);

    let added = server
        .ok(
            Method::POST,
            &path,
            &world.key,
            Some(
                json!({"text": "Alice is allergic to peanuts", "category": "health",
                        "reason": "she told us on the phone", "key": "allergy"}),
            ),
            StatusCode::CREATED,
        )
        .await;
    assert_eq!(
        (&added["source"], &added["episode_id"], &added["category"]),
        (&json!("manual"), &Value::Null, &json!("health"))
    );
    assert!(
        context(&server, &world)
            .await
            .contains("Alice is allergic to peanuts")
    );
    assert_eq!(
        recalled_facts(&server, &world, "peanuts", "keyword").await,
        ["Alice is allergic to peanuts"]
    );
    let entries = history(&server, &world, added["id"].as_str().unwrap()).await;
    assert_eq!(entries[0]["action"], "added");
    assert_eq!(entries[0]["reason"], "she told us on the phone");

    // Its key reads it back, and no other fact that holds in its category
    // may take the key.
    let allergy = format!("{path}?key=allergy");
    let by_key = || server.ok(Method::GET, &allergy, &world.key, None, StatusCode::OK);
    let keyed = by_key().await;
    assert_eq!(keyed["items"].as_array().unwrap().len(), 1, "{keyed}");
    assert_eq!(keyed["items"][0]["id"], added["id"]);
    let taken = server
        .call(
            Method::POST,
            &path,
            &world.key,
            Some(json!({"text": "Alice is allergic to cats", "category": "health", "key": "allergy"})),
        )
        .await;
    assert_eq!(taken.status, StatusCode::CONFLICT, "{}", taken.body);
    assert_eq!(taken.code(), "fact_key_taken");
    assert_eq!(
        by_key().await,
        keyed,
        "nothing of the refused fact is stored"
    );

    // Recalled without messages: the seed's turn and fact share their
    // words, and only the fact comes back.
    let recall_path = format!("/v1/agents/{}/recall", world.agent);
    let recall = |body: Value| server.call(Method::POST, &recall_path, &world.key, Some(body));
    let kinds = |reply: &crate::harness::Reply| -> Vec<String> {
        reply.body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|hit| hit["kind"].as_str().unwrap().to_owned())
            .collect()
    };
    let every = recall(json!({"user_id": "alice", "query": "secret roadmap"})).await;
    assert!(
        kinds(&every).contains(&"message".to_owned()),
        "{}",
        every.body
    );
    let facts_only =
        recall(json!({"user_id": "alice", "query": "secret roadmap", "include_messages": false}))
            .await;
    let found = kinds(&facts_only);
    assert!(
        found.contains(&"fact".to_owned()) && !found.contains(&"message".to_owned()),
        "{found:?}"
    );
    let nothing = recall(json!({"user_id": "alice", "query": "secret roadmap",
        "include_messages": false, "include_summaries": false, "include_facts": false}))
    .await;
    assert_eq!(nothing.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(nothing.body["error"]["field"], "include_messages");

    // A dump carries it to another tenant, still of no episode.
    let dump = server
        .raw(Method::GET, "/v1/export", Some(&world.key), None)
        .await;
    assert_eq!(dump.status, StatusCode::OK, "{}", dump.body);
    let text = dump.body.as_str().unwrap().to_owned();
    assert!(text.contains("Alice is allergic to peanuts"));
    let (_, copy) = server.tenant("copy").await;
    let imported = server
        .raw_as(
            Method::POST,
            "/v1/import",
            Some(&copy),
            "application/x-ndjson",
            Some(text.into_bytes()),
        )
        .await;
    assert_eq!(imported.status, StatusCode::OK, "{}", imported.body);
    let agents = server
        .ok(Method::GET, "/v1/agents", &copy, None, StatusCode::OK)
        .await;
    let copied = agents["items"][0]["id"].as_str().unwrap();
    let facts = server
        .ok(
            Method::GET,
            &format!("/v1/agents/{copied}/users/alice/facts?category=health"),
            &copy,
            None,
            StatusCode::OK,
        )
        .await;
    let facts = facts["items"].as_array().unwrap();
    assert_eq!(facts.len(), 1, "{facts:?}");
    assert_eq!(
        (&facts[0]["text"], &facts[0]["episode_id"], &facts[0]["key"]),
        (
            &json!("Alice is allergic to peanuts"),
            &Value::Null,
            &json!("allergy")
        )
    );
}
