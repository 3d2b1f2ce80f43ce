//! Knowledge search through Octopus's store API, as a server would: the same
//! 100k real vectors as the raw index figures, stored as knowledge chunks and
//! searched with `search_chunks`, by each vector backend (the embedded index,
//! pgvector, Qdrant).

use std::sync::Arc;
use std::time::Instant;

use octopus_core::knowledge::{ChunkFilter, ChunkMetadata, NewChunk, VectorQuery};
use octopus_core::store::Store;
use octopus_engine::Octopus;
use uuid::Uuid;

use super::cache::Vectors;
use super::{K, Options, percentiles};

/// The same vectors through every backend the options reach: on PostgreSQL
/// (pgvector, and the embedded index derived from its rows), and on SQLite
/// (the embedded index, and Qdrant in both layouts).
pub async fn each_backend(
    options: &Options,
    base: &Vectors,
    queries: &Vectors,
    truth: &[Vec<u64>],
) -> anyhow::Result<()> {
    let graphs = tempfile::tempdir()?;
    if let Some(server) = &options.postgres {
        use octopus_postgres::{PostgresOptions, PostgresStore};
        println!("\n## The same 100k real embeddings as knowledge chunks on PostgreSQL\n");
        for (label, embedded) in [
            (
                "pgvector (HNSW m = 16, ef_construction = 64; ef_search = 100)",
                false,
            ),
            (
                "embedded index derived from the rows (HNSW M = 16, ef = 128)",
                true,
            ),
        ] {
            let url = octopus_postgres::testing::fresh_database_on(server).await;
            let options = PostgresOptions::new(&url);
            let store = if embedded {
                let vectors = Arc::new(octopus_vector::EmbeddedVectors::new(
                    graphs.path().join("postgres"),
                    octopus_vector::DEFAULT_HNSW_THRESHOLD,
                ));
                PostgresStore::connect_with_vectors(options, vectors).await?
            } else {
                PostgresStore::connect(options).await?
            };
            report(label, Arc::new(store.clone()), None, base, queries, truth).await?;
            store.close().await;
        }
    }
    if let Some(url) = &options.qdrant {
        use octopus_qdrant::{QdrantLayout, QdrantVectors};
        use octopus_sqlite::{SqliteOptions, SqliteStore};
        println!("\n## The same 100k real embeddings as knowledge chunks on SQLite\n");
        let embedded = crate::setup::sqlite_store(&graphs.path().join("sqlite"))?;
        report(
            "embedded index (HNSW M = 16, ef = 128)",
            Arc::new(embedded),
            None,
            base,
            queries,
            truth,
        )
        .await?;
        for (label, layout) in [
            (
                "Qdrant, one collection per kind (HNSW m = 16, ef = 128)",
                QdrantLayout::Shared,
            ),
            (
                "Qdrant, one collection per agent (HNSW m = 16, ef = 128)",
                QdrantLayout::PerSet,
            ),
        ] {
            let mut options = octopus_qdrant::QdrantOptions::new(url.as_str());
            options.layout = layout;
            options.prefix = format!("bench{}_", Uuid::now_v7().simple());
            let vectors = Arc::new(QdrantVectors::connect(&options).await?);
            let dir = graphs.path().join(format!("qdrant-{layout:?}"));
            let store = SqliteStore::open(SqliteOptions::new(dir), Arc::clone(&vectors) as _)?;
            report(label, Arc::new(store), Some(&vectors), base, queries, truth).await?;
        }
    }
    Ok(())
}

/// Stores `base` as one agent's knowledge chunks in `store` and measures
/// search against `truth` (the exact top 10 of each query). With `qdrant`,
/// searches wait until Qdrant has built its graphs in the background, as a
/// serving Qdrant would have.
pub async fn report(
    label: &str,
    store: Arc<dyn Store>,
    qdrant: Option<&octopus_qdrant::QdrantVectors>,
    base: &Vectors,
    queries: &Vectors,
    truth: &[Vec<u64>],
) -> anyhow::Result<()> {
    let octopus = Octopus::with_store(Arc::clone(&store), Default::default());
    let tenant = octopus.create_tenant("bench").await?.id;
    let agent = crate::setup::agent(&octopus, tenant, "vectors").await?.id;
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
    if let Some(qdrant) = qdrant {
        let started = Instant::now();
        qdrant
            .wait_until_indexed(std::time::Duration::from_millis(200))
            .await?;
        println!(
            "Qdrant indexed them in the background {:.1} s after the last write was acknowledged",
            started.elapsed().as_secs_f64()
        );
    }

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
    println!("\n| search_chunks | recall@10 | p50 ms | p99 ms |\n|---|---|---|---|");
    println!(
        "| {label} | {:.3} | {p50:.3} | {p99:.3} |",
        found as f64 / (truth.len() * K) as f64
    );
    Ok(())
}
