//! The HNSW graph of a large collection: saved in the data directory, reloaded
//! after a restart, reconciled with SQLite (the truth) after changes it did not
//! see, and rebuilt when the saved copy is unusable.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use octopus_core::knowledge::{ChunkFilter, NewChunk, VectorQuery};
use octopus_core::store::Store;
use octopus_core::{AgentId, TenantId};
use octopus_sqlite::{SqliteOptions, SqliteStore};
use octopus_testkit::fixtures::World;
use octopus_testkit::knowledge::chunk;
use uuid::Uuid;

const DIM: usize = 16;
const THRESHOLD: usize = 50;

fn open(dir: &Path) -> Arc<dyn Store> {
    let mut options = SqliteOptions::new(dir);
    options.hnsw_threshold = THRESHOLD;
    Arc::new(SqliteStore::open(options).unwrap())
}

/// A deterministic unit vector per number, spread over all dimensions.
fn vector(n: u64) -> Vec<f32> {
    let mut state = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let v: Vec<f32> = (0..DIM)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 2000) as f32 / 1000.0 - 1.0
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}

fn chunks(source: &str, numbers: std::ops::Range<u64>) -> Vec<NewChunk> {
    numbers
        .enumerate()
        .map(|(i, n)| chunk(source, i as u32, &format!("chunk {n}"), vector(n)))
        .collect()
}

/// Every chunk the collection returns for a query that asks for all of them.
async fn everything(store: &dyn Store, tenant: TenantId, agent: AgentId) -> HashSet<Uuid> {
    let query = VectorQuery {
        vector: vector(0),
        top_k: 100,
        min_score: -1.0,
        filter: ChunkFilter::default(),
    };
    let hits = store.search_chunks(tenant, agent, &query).await.unwrap();
    hits.into_iter().map(|h| h.chunk.id).collect()
}

/// The index agrees with the rows: exactly the live chunks come back, and each
/// one is its own nearest neighbour.
async fn assert_agrees(store: &dyn Store, tenant: TenantId, agent: AgentId, live: &[NewChunk]) {
    let expected: HashSet<Uuid> = live.iter().map(|c| c.id).collect();
    assert_eq!(everything(store, tenant, agent).await, expected);
    for chunk in live.iter().step_by(7) {
        let query = VectorQuery {
            vector: chunk.embedding.clone(),
            top_k: 1,
            min_score: -1.0,
            filter: ChunkFilter::default(),
        };
        let hits = store.search_chunks(tenant, agent, &query).await.unwrap();
        assert_eq!(
            hits[0].chunk.id, chunk.id,
            "{} is its own nearest",
            chunk.content
        );
        assert!(hits[0].score > 0.999);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_graph_is_saved_reloaded_and_reconciled_with_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let first = open(dir.path());
    let world = World::create(&*first, "acme").await;
    let (tenant, agent) = (world.tenant, world.agent);
    first
        .create_collection(tenant, agent, DIM as u32, "test-model")
        .await
        .unwrap();
    let mut live = Vec::new();
    for source in 0..8u64 {
        let batch = chunks(&format!("s{source}"), source * 10..source * 10 + 10);
        first
            .store_chunks(tenant, agent, batch.clone())
            .await
            .unwrap();
        live.extend(batch);
    }
    assert_agrees(&*first, tenant, agent, &live).await;
    let saved = dir
        .path()
        .join("vectors")
        .join(format!("{}-{}", tenant.0, agent.0));
    assert!(
        saved.join("graph.usearch").is_file(),
        "80 chunks passed the threshold of 50: the graph is saved"
    );

    // Another process changes the collection; the first one never hears of it.
    let second = open(dir.path());
    let replacement = chunks("s1", 1000..1003);
    second
        .replace_source(tenant, agent, "s1", replacement.clone())
        .await
        .unwrap();
    live.retain(|c| c.metadata.source != "s1");
    live.extend(replacement);
    let gone = live.iter().position(|c| c.metadata.source == "s2").unwrap();
    second
        .delete_chunk(tenant, agent, live.remove(gone).id)
        .await
        .unwrap();
    let added = chunks("s9", 2000..2005);
    second
        .store_chunks(tenant, agent, added.clone())
        .await
        .unwrap();
    live.extend(added);
    assert_agrees(&*first, tenant, agent, &live).await;
    drop((first, second));

    // A restart loads the saved graph, older than the rows, and reconciles.
    let restarted = open(dir.path());
    assert_agrees(&*restarted, tenant, agent, &live).await;
    drop(restarted);

    // A saved graph that does not load is rebuilt from SQLite.
    std::fs::write(saved.join("graph.usearch"), b"torn").unwrap();
    let rebuilt = open(dir.path());
    assert_agrees(&*rebuilt, tenant, agent, &live).await;
}
