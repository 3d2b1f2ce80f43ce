//! The HNSW graph of a large collection: saved in the data directory, reloaded
//! after a restart, reconciled with SQLite (the truth) after changes it did not
//! see, and rebuilt when the saved copy is unusable.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use octopus_core::knowledge::{ChunkFilter, NewChunk, VectorQuery};
use octopus_core::store::Store;
use octopus_core::{AgentId, TenantId};
use octopus_testkit::fixtures::World;
use octopus_testkit::knowledge::chunk;
use uuid::Uuid;

const DIM: usize = 16;
const THRESHOLD: usize = 50;

fn open(dir: &Path) -> Arc<dyn Store> {
    Arc::new(crate::open(dir, THRESHOLD))
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
        assert!(hits[0].score >= 1.0 - octopus_testkit::vectors::SCORE_TOLERANCE);
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

/// Stores `count` user messages of `user`, numbered from `first`, and embeds
/// each as `vector(number)`; returns the numbers by message id.
async fn remember(
    store: &dyn Store,
    world: &World,
    user: &str,
    numbers: std::ops::Range<u64>,
) -> std::collections::HashMap<octopus_core::MessageId, u64> {
    use octopus_core::memory_jobs::{JobOutcome, MemoryWork};
    use octopus_testkit::fixtures::{batch, conversation, text};

    let spoken = conversation(world.tenant, world.agent, user);
    store.create_conversation(&spoken).await.unwrap();
    let at = octopus_core::now();
    let records = numbers
        .clone()
        .map(|n| text(octopus_core::message::Role::User, &format!("turn {n}"), at))
        .collect();
    let said = store
        .append_messages(world.tenant, batch(spoken.id, records))
        .await
        .unwrap();
    let numbered: std::collections::HashMap<_, _> =
        said.iter().map(|m| m.id).zip(numbers).collect();
    loop {
        let jobs = store
            .claim_memory_jobs(100, at, std::time::Duration::from_secs(60))
            .await
            .unwrap();
        if jobs.is_empty() {
            return numbered;
        }
        for job in &jobs {
            let outcome = match &job.work {
                MemoryWork::EmbedMessage(m) => JobOutcome::MessageEmbedded {
                    message: m.id,
                    vector: vector(numbered[&m.id]),
                },
                MemoryWork::SummariseEpisode(_)
                | MemoryWork::EmbedFact(_)
                | MemoryWork::LearnFacts(_) => JobOutcome::Skipped,
            };
            store
                .complete_memory_job(job, outcome, "test-model", at)
                .await
                .unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_memories_are_searched_whole_inside_a_large_graph() {
    use octopus_core::memory_vectors::MemoryVectorQuery;
    use octopus_core::recall::MemoryKind;

    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let world = World::create(&*store, "acme").await;
    // Bob's 80 memories pass the threshold of 50: the agent's collection is a
    // graph, and Alice's 6 are a small part of it.
    let bob = remember(&*store, &world, "bob", 0..80).await;
    let alice = remember(&*store, &world, "alice", 500..506).await;
    let search = |store: Arc<dyn Store>, user: &'static str, near: u64, top_k: u32| async move {
        let query = MemoryVectorQuery {
            agent_id: world.agent,
            user_id: user.into(),
            vector: vector(near),
            top_k,
            kinds: vec![MemoryKind::Message],
            from: None,
            to: None,
        };
        store.search_memory(world.tenant, &query).await.unwrap()
    };

    for store in [Arc::clone(&store), open(dir.path())] {
        // Near one of Bob's: still every one of Alice's, and only hers, best first.
        let hits = search(Arc::clone(&store), "alice", 7, 10).await;
        let found: HashSet<u64> = hits.iter().map(|h| alice[&h.message_id.unwrap()]).collect();
        assert_eq!(found, (500..506).collect());
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
        let nearest = search(Arc::clone(&store), "alice", 503, 1).await;
        assert_eq!(alice[&nearest[0].message_id.unwrap()], 503);
        // Bob's part is large: the graph serves it, and only his come back.
        let hits = search(Arc::clone(&store), "bob", 42, 5).await;
        assert_eq!(bob[&hits[0].message_id.unwrap()], 42);
        assert!(
            hits.iter()
                .all(|h| bob.contains_key(&h.message_id.unwrap()))
        );
    }
}
