//! A query asked again is not embedded again, unless the cache is off.

use std::sync::Arc;

use octopus_core::recall::RecallQuery;
use octopus_engine::{EngineConfig, Octopus};
use octopus_testkit::fake_providers::{self, Provider};
use serde_json::json;

/// How many times the embedder was sent `text`.
fn embedded(provider: &Provider, text: &str) -> usize {
    provider
        .requests()
        .iter()
        .filter(|body| body.to_string().contains(text))
        .count()
}

async fn engine(entries: usize) -> (Octopus, Arc<Provider>, tempfile::TempDir) {
    let provider = Arc::new(Provider::default());
    let url = fake_providers::serve(Arc::clone(&provider)).await;
    let dir = tempfile::tempdir().unwrap();
    let mut embedding = crate::fake_ollama_embedding(&url);
    embedding.set_query_cache_entries(entries);
    let octopus = crate::open_in(
        dir.path(),
        EngineConfig {
            limits: crate::fixture_limits(),
            embedding,
            ..EngineConfig::default()
        },
    )
    .unwrap();
    (octopus, provider, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_query_is_embedded_once_and_every_time_with_the_cache_off() {
    for (entries, expected) in [(16, 1), (0, 3)] {
        let (octopus, provider, _dir) = engine(entries).await;
        let tenant = octopus.create_tenant("acme").await.unwrap().id;
        let spec = serde_json::from_value(
            json!({"name": "support", "llm": {"provider": "openai", "model": "gpt-4o"}}),
        )
        .unwrap();
        let agent = octopus.create_agent(tenant, spec).await.unwrap().id;
        let query = RecallQuery::new("alice", "where is my blender order");
        for _ in 0..3 {
            octopus.recall(tenant, agent, &query).await.unwrap();
        }
        assert_eq!(
            embedded(&provider, "where is my blender order"),
            expected,
            "query_cache_entries {entries}"
        );
    }
}
