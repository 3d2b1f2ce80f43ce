//! Semantic memory through the API, with the real local model.

use axum::http::{Method, StatusCode};
use serde_json::json;

use crate::harness::{TestServer, seed};

const HANDBOOK: &str = "# Employee handbook

## Leave

Employees receive 25 days of paid vacation per year. Unused days carry over until March.

## Expenses

Travel costs are reimbursed within two weeks when receipts are submitted through the finance portal.
";

const FAQ: &str = "The office kitchen is cleaned every Friday afternoon.\n\nParking permits are issued by the front desk.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_are_ingested_and_found_by_meaning() {
    let server = TestServer::start().await;
    let seeded = seed(&server, "acme").await;
    let key = &seeded.key;
    let base = format!("/v1/agents/{}/knowledge", seeded.agent);

    let empty = server
        .ok(Method::GET, &base, key, None, StatusCode::OK)
        .await;
    assert!(empty["collection"].is_null());

    let report = server
        .ok(
            Method::POST,
            &format!("{base}/documents"),
            key,
            Some(json!({"source": "handbook.md", "text": HANDBOOK, "category": "policy"})),
            StatusCode::CREATED,
        )
        .await;
    assert_eq!(report["chunks"], 2, "one chunk per section: {report}");
    server
        .ok(
            Method::POST,
            &format!("{base}/documents"),
            key,
            Some(json!({"source": "faq.txt", "text": FAQ})),
            StatusCode::CREATED,
        )
        .await;

    // The documents are listed by source, and each reads back whole.
    let documents = server
        .ok(
            Method::GET,
            &format!("{base}/documents"),
            key,
            None,
            StatusCode::OK,
        )
        .await;
    let listed: Vec<(&str, &serde_json::Value, u64)> = documents["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["source"].as_str().unwrap(),
                &d["category"],
                d["chunk_count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("faq.txt", &json!(null), 1),
            ("handbook.md", &json!("policy"), 2)
        ]
    );
    let handbook = server
        .ok(
            Method::GET,
            &format!("{base}/document?source=handbook.md"),
            key,
            None,
            StatusCode::OK,
        )
        .await;
    let text = handbook["text"].as_str().unwrap();
    assert!(
        text.find("25 days of paid vacation").unwrap() < text.find("reimbursed").unwrap(),
        "{text}"
    );
    assert_eq!(handbook["chunks"][1]["chunk_index"], 1);
    let missing = server
        .call(
            Method::GET,
            &format!("{base}/document?source=nothing.md"),
            key,
            None,
        )
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.code(), "document_not_found");

    // No word of the question appears in the answer's chunk.
    let search = json!({"query": "how many holidays do I get?", "top_k": 3, "min_score": 0.0});
    let hits = server
        .ok(
            Method::POST,
            &format!("{base}/search"),
            key,
            Some(search),
            StatusCode::OK,
        )
        .await;
    let first = &hits["items"][0];
    assert!(
        first["chunk"]["content"]
            .as_str()
            .unwrap()
            .contains("25 days of paid vacation"),
        "{hits}"
    );
    assert_eq!(first["chunk"]["heading"], "Employee handbook > Leave");
    assert_eq!(first["chunk"]["source"], "handbook.md");
    assert_eq!(first["chunk"]["category"], "policy");
    assert!(first["score"].as_f64().unwrap() > hits["items"][1]["score"].as_f64().unwrap());

    let filtered =
        json!({"query": "how many holidays do I get?", "min_score": 0.0, "source": "faq.txt"});
    let hits = server
        .ok(
            Method::POST,
            &format!("{base}/search"),
            key,
            Some(filtered),
            StatusCode::OK,
        )
        .await;
    assert!(
        hits["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["chunk"]["source"] == "faq.txt")
    );

    // Modes: words only, meaning only, and both fused, each hit with its scores.
    let by_words = json!({"query": "receipts finance portal", "mode": "keyword", "top_k": 2});
    let hits = server
        .ok(
            Method::POST,
            &format!("{base}/search"),
            key,
            Some(by_words),
            StatusCode::OK,
        )
        .await;
    assert_eq!(
        hits["items"][0]["chunk"]["heading"], "Employee handbook > Expenses",
        "{hits}"
    );
    assert!(hits["items"][0]["keyword_score"].as_f64().unwrap() > 0.0);
    assert!(hits["items"][0]["vector_score"].is_null());
    let by_meaning =
        json!({"query": "receipts finance portal", "mode": "vector", "top_k": 2, "min_score": 0.0});
    let hits = server
        .ok(
            Method::POST,
            &format!("{base}/search"),
            key,
            Some(by_meaning),
            StatusCode::OK,
        )
        .await;
    assert!(
        hits["items"][0]["keyword_score"].is_null()
            && hits["items"][0]["vector_score"].as_f64().is_some()
    );
    let both = json!({"query": "receipts finance portal", "top_k": 2, "min_score": 0.0});
    let hits = server
        .ok(
            Method::POST,
            &format!("{base}/search"),
            key,
            Some(both),
            StatusCode::OK,
        )
        .await;
    let first = &hits["items"][0];
    assert_eq!(first["chunk"]["heading"], "Employee handbook > Expenses");
    assert!(
        first["vector_score"].as_f64().is_some() && first["keyword_score"].as_f64().is_some(),
        "{first}"
    );
    let bad_mode = json!({"query": "x", "mode": "telepathy"});
    let reply = server
        .call(Method::POST, &format!("{base}/search"), key, Some(bad_mode))
        .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(reply.body["error"]["field"], "mode");

    // Without top_k and min_score, the agent's memory settings decide, as
    // edited a moment ago.
    let agent_path = format!("/v1/agents/{}", seeded.agent);
    let patch = json!({"memory": {"knowledge_top_k": 1, "knowledge_min_score": 0.0}});
    server
        .ok(Method::PATCH, &agent_path, key, Some(patch), StatusCode::OK)
        .await;
    let plain = json!({"query": "how many holidays do I get?"});
    let hits = server
        .ok(
            Method::POST,
            &format!("{base}/search"),
            key,
            Some(plain),
            StatusCode::OK,
        )
        .await;
    assert_eq!(hits["items"].as_array().unwrap().len(), 1, "{hits}");
    assert!(
        hits["items"][0]["chunk"]["content"]
            .as_str()
            .unwrap()
            .contains("paid vacation")
    );
    // An agent that takes no knowledge into its contexts (0) can still be
    // searched without naming a depth: the default one.
    let none = json!({"memory": {"knowledge_top_k": 0}});
    server
        .ok(Method::PATCH, &agent_path, key, Some(none), StatusCode::OK)
        .await;
    let hits = server
        .ok(
            Method::POST,
            &format!("{base}/search"),
            key,
            Some(json!({"query": "how many holidays do I get?"})),
            StatusCode::OK,
        )
        .await;
    assert_eq!(hits["items"].as_array().unwrap().len(), 3, "{hits}");
    let restore = json!({"memory": {"knowledge_top_k": 5}});
    server
        .ok(
            Method::PATCH,
            &agent_path,
            key,
            Some(restore),
            StatusCode::OK,
        )
        .await;

    // Re-ingesting a source replaces its chunks.
    let revised = HANDBOOK.replace("25 days", "30 days");
    server
        .ok(
            Method::POST,
            &format!("{base}/documents"),
            key,
            Some(json!({"source": "handbook.md", "text": revised})),
            StatusCode::CREATED,
        )
        .await;
    let info = server
        .ok(Method::GET, &base, key, None, StatusCode::OK)
        .await;
    assert_eq!(
        info["collection"]["chunk_count"], 3,
        "2 handbook chunks (one per section) + 1 faq chunk: {info}"
    );
    assert_eq!(info["collection"]["dimension"], 384);
    let search = json!({"query": "vacation days per year", "top_k": 1, "min_score": 0.0});
    let hits = server
        .ok(
            Method::POST,
            &format!("{base}/search"),
            key,
            Some(search),
            StatusCode::OK,
        )
        .await;
    assert!(
        hits["items"][0]["chunk"]["content"]
            .as_str()
            .unwrap()
            .contains("30 days")
    );

    // Another agent of the same tenant has no knowledge of it.
    let other = server.agent(key, "finance").await;
    let other_base = format!("/v1/agents/{other}/knowledge");
    let search = json!({"query": "vacation days per year", "min_score": -1.0});
    let hits = server
        .ok(
            Method::POST,
            &format!("{other_base}/search"),
            key,
            Some(search),
            StatusCode::OK,
        )
        .await;
    assert!(hits["items"].as_array().unwrap().is_empty());

    let chunk_id = hits_first_chunk_id(&server, key, &base).await;
    server
        .ok(
            Method::DELETE,
            &format!("{base}/chunks/{chunk_id}"),
            key,
            None,
            StatusCode::NO_CONTENT,
        )
        .await;
    let info = server
        .ok(Method::GET, &base, key, None, StatusCode::OK)
        .await;
    assert_eq!(info["collection"]["chunk_count"], 2);

    let reply = server
        .call(
            Method::POST,
            &format!("{base}/search"),
            key,
            Some(json!({"query": "x", "top_k": 0})),
        )
        .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
}

async fn hits_first_chunk_id(server: &TestServer, key: &str, base: &str) -> String {
    let search = json!({"query": "kitchen cleaning", "top_k": 1, "min_score": -1.0});
    let hits = server
        .ok(
            Method::POST,
            &format!("{base}/search"),
            key,
            Some(search),
            StatusCode::OK,
        )
        .await;
    hits["items"][0]["chunk"]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_configured_http_provider_embeds_and_its_refusal_stores_nothing() {
    use octopus_core::embedding_settings::{EmbeddingSettings, HttpEmbedding};
    use octopus_testkit::fake_providers::{DIMENSION, Provider, serve};

    let provider = std::sync::Arc::new(Provider::default());
    let url = serve(std::sync::Arc::clone(&provider)).await;
    let server = TestServer::with_engine(Default::default(), |engine| {
        engine.embedding = EmbeddingSettings::Ollama(HttpEmbedding::new(
            format!("{url}/api/embed"),
            "nomic-embed-text",
            DIMENSION,
        ));
    })
    .await;
    let seeded = seed(&server, "acme").await;
    let base = format!("/v1/agents/{}/knowledge", seeded.agent);
    let document = json!({"source": "faq.txt", "text": FAQ});
    server
        .ok(
            Method::POST,
            &format!("{base}/documents"),
            &seeded.key,
            Some(document.clone()),
            StatusCode::CREATED,
        )
        .await;
    let collection = server
        .ok(Method::GET, &base, &seeded.key, None, StatusCode::OK)
        .await;
    assert_eq!(collection["collection"]["model"], "ollama:nomic-embed-text");
    assert_eq!(collection["collection"]["dimension"], DIMENSION);
    let chunks = collection["collection"]["chunk_count"].clone();
    assert!(
        !provider.requests().is_empty(),
        "the provider embedded the chunks"
    );

    let search = json!({"query": "kitchen cleaning", "mode": "vector", "min_score": 0.0});
    let hits = server
        .ok(
            Method::POST,
            &format!("{base}/search"),
            &seeded.key,
            Some(search),
            StatusCode::OK,
        )
        .await;
    assert_eq!(hits["items"][0]["chunk"]["source"], "faq.txt", "{hits}");

    // The provider is out of quota for an hour: the ingest fails at once with
    // 503, names the provider, and the collection keeps what it had.
    provider.fail_next(
        429,
        vec![("retry-after", "3600")],
        json!({"error": "rate limited"}),
    );
    let refused = server
        .call(
            Method::POST,
            &format!("{base}/documents"),
            &seeded.key,
            Some(json!({"source": "new.txt", "text": "Something new to remember."})),
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        refused.body
    );
    assert_eq!(refused.code(), "embedding_provider_busy");
    assert_eq!(refused.headers["retry-after"], "3600");
    assert!(
        refused.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ollama:nomic-embed-text")
    );
    let after = server
        .ok(Method::GET, &base, &seeded.key, None, StatusCode::OK)
        .await;
    assert_eq!(after["collection"]["chunk_count"], chunks);
}
