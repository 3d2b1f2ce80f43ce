//! Qdrant's two layouts side by side, with many agents: one collection per
//! kind (the agent a payload field, indexed as Qdrant's tenant key) against
//! one collection per agent. Each agent gets its own slice of the real
//! vectors; each query searches one agent's slice, exact top 10 as truth.

use std::time::Instant;

use octopus_core::vectors::{Nearest, Point, PointFields, PointFilter, VectorIndex, VectorSet};
use octopus_core::{AgentId, TenantId};
use octopus_qdrant::{QdrantLayout, QdrantOptions, QdrantVectors};
use octopus_testkit::vectors::TruthRows;
use uuid::Uuid;

use super::cache::Vectors;
use super::{K, percentiles};

/// Vectors per agent.
const PER_AGENT: usize = 500;

pub async fn report(
    url: &str,
    base: &Vectors,
    queries: &Vectors,
    agents: usize,
) -> anyhow::Result<()> {
    let agents = agents.min(base.len() / PER_AGENT);
    println!(
        "\n## Qdrant layouts with {agents} agents of {PER_AGENT} vectors each\n\n\
         | layout | stored, vectors/s | search recall@10 | p50 ms | p99 ms |\n|---|---|---|---|---|"
    );
    let tenant = TenantId::new();
    let sets: Vec<VectorSet> = (0..agents)
        .map(|_| VectorSet::knowledge(tenant, AgentId::new()))
        .collect();
    for (label, layout) in [
        ("one collection per kind", QdrantLayout::Shared),
        ("one collection per agent", QdrantLayout::PerSet),
    ] {
        let mut options = QdrantOptions::new(url);
        options.layout = layout;
        options.prefix = format!("layout{}_", Uuid::now_v7().simple());
        let index = QdrantVectors::connect(&options).await?;
        let rows = TruthRows::default();
        let started = Instant::now();
        for (n, set) in sets.iter().enumerate() {
            let points = (0..PER_AGENT)
                .map(|i| Point {
                    key: rows.key(),
                    vector: base.get(n * PER_AGENT + i).to_vec(),
                    fields: PointFields::default(),
                })
                .collect();
            let commit = rows.commit(*set, u32::try_from(base.dimension)?, Vec::new(), points);
            index
                .follow(commit.set, commit.before, commit.after, commit.change)
                .await?;
        }
        let rate = (agents * PER_AGENT) as f64 / started.elapsed().as_secs_f64();
        index
            .wait_until_indexed(std::time::Duration::from_millis(200))
            .await?;
        let mut times = Vec::with_capacity(queries.len());
        let mut found = 0;
        for (q, query) in queries.rows().enumerate() {
            let set = sets[q % agents];
            let nearest = Nearest {
                vector: query.to_vec(),
                top_k: K,
                filter: PointFilter::default(),
            };
            let expected = rows.nearest(set, &nearest);
            let started = Instant::now();
            let hits = index.search(set, rows.state(set), &nearest, &rows).await?;
            times.push(started.elapsed().as_secs_f64() * 1e3);
            found += hits.iter().filter(|h| expected.contains(&h.key)).count();
        }
        let (p50, p99) = percentiles(times);
        println!(
            "| {label} | {rate:.0} | {:.3} | {p50:.3} | {p99:.3} |",
            found as f64 / (queries.len() * K) as f64
        );
    }
    Ok(())
}
