//! Knowledge search through Octopus's PostgreSQL store API, as a server
//! would: the same 100k real vectors as the raw index figures, stored as
//! knowledge chunks and searched with `search_chunks`, by pgvector or by the
//! embedded index derived from the rows.

use std::sync::Arc;
use std::time::Instant;

use octopus_core::knowledge::{ChunkFilter, ChunkMetadata, NewChunk, VectorQuery};
use octopus_core::store::{KnowledgeStore, Store};
use octopus_engine::Octopus;
use octopus_postgres::{PostgresOptions, PostgresStore, VectorMode};
use uuid::Uuid;

use super::cache::Vectors;
use super::{K, percentiles};

/// Stores `base` in a fresh database of `server` and measures search, with
/// vectors searched as `vectors` says, against `truth` (the exact top 10 of
/// each query).
pub async fn report(
    server: &str,
    vectors: VectorMode,
    base: &Vectors,
    queries: &Vectors,
    truth: &[Vec<u64>],
) -> anyhow::Result<()> {
    let url = octopus_postgres::testing::fresh_database_on(server).await;
    let label = match &vectors {
        VectorMode::Pgvector => "pgvector (HNSW m = 16, ef_construction = 64; ef_search = 100)",
        VectorMode::Embedded { .. } => {
            "embedded index derived from the rows (HNSW M = 16, ef = 64)"
        }
    };
    let mut options = PostgresOptions::new(&url);
    options.vectors = vectors;
    let store = PostgresStore::connect(options).await?;
    let octopus = Octopus::with_store(
        Arc::new(store.clone()) as Arc<dyn Store>,
        Default::default(),
    );
    let tenant = octopus.create_tenant("bench").await?.id;
    let agent = crate::setup::agent(&octopus, tenant, "pgvector").await?.id;
    let dimension = u32::try_from(base.dimension)?;
    store
        .create_collection(tenant, agent, dimension, "bench")
        .await?;

    let started = Instant::now();
    let rows: Vec<&[f32]> = base.rows().collect();
    for (batch_number, batch) in rows.chunks(1000).enumerate() {
        let chunks = batch
            .iter()
            .enumerate()
            .map(|(i, vector)| {
                let key = batch_number * 1000 + i;
                NewChunk {
                    id: Uuid::from_u128(key as u128),
                    content: format!("chunk {key}"),
                    embedding: vector.to_vec(),
                    metadata: ChunkMetadata {
                        source: format!("doc-{}", key / 100),
                        chunk_index: (key % 100) as u32,
                        category: None,
                        heading: None,
                        indexed_at: octopus_core::now(),
                    },
                }
            })
            .collect();
        store.store_chunks(tenant, agent, chunks).await?;
    }
    let build = started.elapsed().as_secs_f64();
    println!(
        "{label}: {} vectors stored through the store API in {build:.1} s ({:.0} vectors/s, 1 caller)",
        base.len(),
        base.len() as f64 / build
    );

    let search = |vector: &[f32]| VectorQuery {
        vector: vector.to_vec(),
        top_k: K as u32,
        min_score: -1.0,
        filter: ChunkFilter::default(),
    };
    // Warm up, as a serving database would be: pgvector's index into shared
    // buffers; the embedded index built from the rows by the first search.
    let started = Instant::now();
    for query in queries.prefix(100).rows() {
        store.search_chunks(tenant, agent, &search(query)).await?;
    }
    println!(
        "first 100 searches (warming; the embedded index builds its graph from the rows here): {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let mut found = 0usize;
    let mut times = Vec::with_capacity(queries.len());
    for (query, expected) in queries.rows().zip(truth) {
        let started = Instant::now();
        let hits = store.search_chunks(tenant, agent, &search(query)).await?;
        times.push(started.elapsed().as_secs_f64() * 1e3);
        found += hits
            .iter()
            .filter(|hit| expected.contains(&(hit.chunk.id.as_u128() as u64)))
            .count();
    }
    let (p50, p99) = percentiles(times);
    println!("\n| search_chunks on PostgreSQL | recall@10 | p50 ms | p99 ms |\n|---|---|---|---|");
    println!(
        "| {label} | {:.3} | {p50:.3} | {p99:.3} |",
        found as f64 / (truth.len() * K) as f64
    );
    store.close().await;
    Ok(())
}
