//! One tenant asking many questions at once holds at most a core's worth of
//! places in the embedder's queue of readers' queries, so another tenant's
//! question is not queued behind all of them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use octopus_core::embedding::{EmbedError, Embedder};
use octopus_core::recall::RecallQuery;
use octopus_core::{AgentId, TenantId};
use octopus_engine::Octopus;
use serde_json::json;
use tokio::sync::Semaphore;

/// An embedder whose readers' queries wait at a gate the test opens, and
/// which counts, by the first word of each query, how many are waiting or
/// running inside it at once.
struct GatedEmbedder {
    gate: Semaphore,
    inside: Mutex<HashMap<String, (usize, usize)>>,
}

impl GatedEmbedder {
    fn closed() -> Self {
        Self {
            gate: Semaphore::new(0),
            inside: Mutex::default(),
        }
    }

    /// Queries of `who` inside now, and the most there were at once.
    fn inside(&self, who: &str) -> (usize, usize) {
        let inside = self.inside.lock().unwrap();
        inside.get(who).copied().unwrap_or_default()
    }

    fn count(&self, who: &str, change: isize) {
        let mut inside = self.inside.lock().unwrap();
        let (now, most) = inside.entry(who.to_owned()).or_default();
        *now = now.checked_add_signed(change).unwrap();
        *most = (*most).max(*now);
    }
}

#[async_trait::async_trait]
impl Embedder for GatedEmbedder {
    fn model(&self) -> &str {
        "gated"
    }

    fn dimension(&self) -> usize {
        4
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|_| vec![0.5; 4]).collect())
    }

    async fn embed_for_reader(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let who = texts[0].split(' ').next().unwrap_or_default().to_owned();
        self.count(&who, 1);
        // Passing takes a permit and gives it back: once open, the gate
        // lets every query through, one after another.
        drop(self.gate.acquire().await.unwrap());
        self.count(&who, -1);
        self.embed(texts).await
    }
}

async fn tenant_with_agent(octopus: &Octopus, name: &str) -> (TenantId, AgentId) {
    let tenant = octopus.create_tenant(name).await.unwrap().id;
    let spec = serde_json::from_value(
        json!({"name": "support", "llm": {"provider": "openai", "model": "gpt-4o"}}),
    )
    .unwrap();
    (tenant, octopus.create_agent(tenant, spec).await.unwrap().id)
}

/// Waits until `done` holds; a generous deadline only turns a hang into a
/// failure.
async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_asking_many_questions_holds_a_cores_worth_of_the_queue() {
    let dir = tempfile::tempdir().unwrap();
    let embedder = Arc::new(GatedEmbedder::closed());
    let octopus = crate::open_with_fixture_limits(dir.path())
        .with_embedder(Arc::clone(&embedder) as Arc<dyn Embedder>);
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let (busy, busy_agent) = tenant_with_agent(&octopus, "busy").await;
    let (quiet, quiet_agent) = tenant_with_agent(&octopus, "quiet").await;

    let asked = cores + 4;
    let mut recalls = Vec::new();
    for i in 0..asked {
        let octopus = octopus.clone();
        let query = RecallQuery::new("alice", format!("busy question number {i}"));
        recalls.push(tokio::spawn(async move {
            octopus.recall(busy, busy_agent, &query).await
        }));
    }
    until(
        "the busy tenant's first questions reach the embedder",
        || embedder.inside("busy").0 >= cores,
    )
    .await;
    let octopus_for_quiet = octopus.clone();
    recalls.push(tokio::spawn(async move {
        let query = RecallQuery::new("bob", "quiet question about my order");
        octopus_for_quiet.recall(quiet, quiet_agent, &query).await
    }));
    until("the quiet tenant's question reaches the embedder", || {
        embedder.inside("quiet").0 == 1
    })
    .await;
    assert_eq!(
        embedder.inside("busy"),
        (cores, cores),
        "the busy tenant holds one place a core, its other {} questions wait on its own turns",
        asked - cores
    );

    embedder.gate.add_permits(1);
    for recall in recalls {
        recall.await.unwrap().unwrap();
    }
    assert_eq!(
        embedder.inside("busy"),
        (0, cores),
        "every question answered"
    );
}
