//! Explanations over HTTP: a recall hit found by the name search alone, a
//! fact moved ahead by what holds now, and a context candidate left out for
//! the budget, each said; and nothing of it when nobody asked.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use octopus_server::ServerSettings;

use crate::harness::TestServer;

/// Ann's long chat about a trip she plans with Priya: many turns name
/// Priya and the trip at length, one short turn names Priya alone.
fn trip_chat() -> Vec<Value> {
    let mut turns = Vec::new();
    for day in 1..=44 {
        turns.push(format!(
            "Priya and I talked about the trip again on day {day}: the trip dates, the trip \
             budget, the trip bags, and we still did not decide the trip route"
        ));
        turns.push(format!("Noted for day {day}."));
    }
    turns.insert(45, "Priya booked ferries".into());
    turns.insert(46, "Great news.".into());
    turns
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            json!({"role": role, "content": text,
                "timestamp": format!("2026-03-02T{:02}:{:02}:00Z", 8 + i / 60, i % 60)})
        })
        .collect()
}

async fn hits(server: &TestServer, key: &str, agent: &str, query: Value) -> Vec<Value> {
    let reply = server
        .ok(
            Method::POST,
            &format!("/v1/agents/{agent}/recall"),
            key,
            Some(query),
            StatusCode::OK,
        )
        .await;
    reply["items"].as_array().unwrap().clone()
}

fn searches(hit: &Value) -> Vec<&str> {
    hit["explanation"]["found_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|found| found["search"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recall_and_context_say_why() {
    let server = TestServer::with_engine(ServerSettings::default(), |engine| {
        engine.recall.names_searched = true;
    })
    .await;
    let (_, key) = server.tenant("acme").await;
    let agent = server.agent(&key, "planner").await;
    let import = json!({"agent_id": agent, "user_id": "ann",
        "sessions": [{"messages": trip_chat()}]});
    server
        .ok(
            Method::POST,
            "/v1/conversations/import",
            &key,
            Some(import),
            StatusCode::CREATED,
        )
        .await;
    server.octopus.run_memory_jobs().await.unwrap();

    // Found by the name search alone: the keyword search's forty places
    // went to the turns naming Priya and the trip three times over.
    let question = "What did Priya decide about the trip?";
    let found = hits(
        &server,
        &key,
        &agent,
        json!({"user_id": "ann", "query": question, "mode": "keyword", "explain": true}),
    )
    .await;
    let ferries = found
        .iter()
        .find(|hit| hit["text"] == "Priya booked ferries")
        .unwrap_or_else(|| panic!("{found:#?}"));
    assert_eq!(searches(ferries), ["name"], "{ferries:#}");
    let by_name = &ferries["explanation"]["found_by"][0];
    assert_eq!(
        (&by_name["looked_for"], &by_name["rank"]),
        (&json!("Priya"), &json!(1))
    );
    let explanation = &ferries["explanation"];
    let fused = explanation["fused"].as_f64().unwrap();
    let contribution = by_name["contribution"].as_f64().unwrap();
    assert!((fused - contribution).abs() < 1e-9, "{explanation:#}");
    assert!(explanation["in_context"].as_f64().unwrap() >= fused);
    assert_eq!(explanation["fusion"], "standardised");
    // Every other hit the keyword search found too.
    assert!(
        found
            .iter()
            .filter(|hit| hit["text"] != "Priya booked ferries")
            .all(|hit| searches(hit).contains(&"keyword")),
        "{found:#?}"
    );
    // Nobody asked: no explanation, and the same hits in the same order.
    let plain = hits(
        &server,
        &key,
        &agent,
        json!({"user_id": "ann", "query": question, "mode": "keyword"}),
    )
    .await;
    assert!(plain.iter().all(|hit| hit.get("explanation").is_none()));
    let texts = |hits: &[Value]| -> Vec<Value> { hits.iter().map(|h| h["text"].clone()).collect() };
    assert_eq!(texts(&plain), texts(&found));

    // Moved by what holds now: the old home matches the question better,
    // the corrected one holds.
    let facts = format!("/v1/agents/{agent}/users/ann/facts");
    let old = server
        .ok(
            Method::POST,
            &facts,
            &key,
            Some(json!({"text": "Ann lives in Lyon, where she lives near the old town"})),
            StatusCode::CREATED,
        )
        .await;
    let new = server
        .ok(
            Method::PATCH,
            &format!("/v1/facts/{}", old["id"].as_str().unwrap()),
            &key,
            Some(json!({"text": "Ann has moved house to Paris"})),
            StatusCode::OK,
        )
        .await;
    server.octopus.run_memory_jobs().await.unwrap();
    let found = hits(
        &server,
        &key,
        &agent,
        json!({"user_id": "ann", "query": "Where does Ann live?", "top_k": 2,
            "include_messages": false, "include_summaries": false, "explain": true}),
    )
    .await;
    let ids: Vec<&Value> = found.iter().map(|hit| &hit["fact"]["id"]).collect();
    assert_eq!(ids, [&new["id"], &old["id"]], "{found:#?}");
    let explanation = &found[0]["explanation"];
    assert_eq!(
        explanation["moved"],
        json!([{"by": "held_at_time_asked", "from": 2, "to": 1}]),
        "{explanation:#}"
    );
    assert!(
        explanation["in_context"].as_f64() < found[1]["explanation"]["in_context"].as_f64(),
        "it ranked second before it was moved: {found:#?}"
    );

    // Left out for the budget: a context too small for every passage.
    server
        .ok(
            Method::PATCH,
            &format!("/v1/agents/{agent}"),
            &key,
            Some(json!({"memory": {"max_working_memory_tokens": 400}})),
            StatusCode::OK,
        )
        .await;
    let conversation = server.conversation(&key, &agent, "ann").await;
    let path = format!("/v1/conversations/{conversation}/context");
    let context = server
        .ok(
            Method::POST,
            &path,
            &key,
            Some(json!({"message": question, "explain": true})),
            StatusCode::OK,
        )
        .await;
    let candidates = context["explanation"]["candidates"].as_array().unwrap();
    let shown: String = context["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default())
        .collect();
    let dropped: Vec<&Value> = candidates
        .iter()
        .filter(|c| c["fate"] == "over_budget")
        .collect();
    assert!(!dropped.is_empty(), "{candidates:#?}");
    // A recalled turn shown with another is in (or out with) its passage.
    let passage_of = |candidate: &Value| match &candidate["shown_in"] {
        Value::String(id) => id.clone(),
        _ => candidate["id"].as_str().unwrap().to_owned(),
    };
    for candidate in &dropped {
        assert_eq!(candidate["kept"], false);
        let pruned = context["trace"]["pruned"].as_array().unwrap();
        assert!(
            pruned
                .iter()
                .any(|p| p["id"] == passage_of(candidate) && p["reason"] == "lowest_score"),
            "{candidate:#}"
        );
    }
    let kept: Vec<&Value> = candidates
        .iter()
        .filter(|c| c["fate"] == "kept" && c["block"] == "episodic")
        .collect();
    assert!(!kept.is_empty(), "{candidates:#?}");
    for candidate in kept.iter().chain(&dropped) {
        let passage = context["trace"]["episodic"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == passage_of(candidate))
            .unwrap();
        let in_context = shown.contains(passage["text"].as_str().unwrap());
        assert_eq!(in_context, candidate["kept"] == true, "{candidate:#}");
        assert!(
            !candidate["recall"]["found_by"]
                .as_array()
                .unwrap()
                .is_empty()
        );
    }
    let plain = server
        .ok(
            Method::POST,
            &path,
            &key,
            Some(json!({"message": question})),
            StatusCode::OK,
        )
        .await;
    assert!(plain.get("explanation").is_none(), "{plain:#}");
    assert_eq!(plain["messages"], context["messages"]);
}
