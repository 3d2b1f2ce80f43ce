//! Vector search: exact against HNSW, at 100k real embeddings and at 1M vectors
//! drawn from a mixture fitted to real ones.
//!
//! Queries are held-out vectors of the same kind as the base (real sentences
//! not in the base; fresh draws from the mixture). Truth is the exact top 10.
//! Search latency is single-threaded; builds use both cores.

pub mod cache;
mod mixture;
mod qdrant_layouts;
mod through_store;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use cache::Vectors;
use mixture::{Mixture, Rng};
use octopus_vector::{ExactIndex, HnswIndex, HnswParams, dot};

use crate::corpus;

pub(crate) const K: usize = 10;
const EFFORTS: [usize; 6] = [16, 32, 64, 128, 256, 512];

#[derive(clap::Args)]
pub struct Options {
    /// Real embeddings: sentences from the documentation of the workspace's
    /// dependencies; the last `queries` of them are held out as queries.
    #[arg(long, default_value_t = 100_000)]
    real: usize,
    /// Synthetic vectors drawn from the mixture.
    #[arg(long, default_value_t = 1_000_000)]
    synthetic: usize,
    /// Real vectors the mixture is fitted to.
    #[arg(long, default_value_t = 10_000)]
    fit: usize,
    /// Mixture components.
    #[arg(long, default_value_t = 100)]
    components: usize,
    #[arg(long, default_value_t = 1000)]
    queries: usize,
    #[arg(long, default_value = "Cargo.lock")]
    lockfile: PathBuf,
    /// Model folder [default: the model cache's all-MiniLM-L6-v2].
    #[arg(long)]
    model: Option<PathBuf>,
    /// A PostgreSQL server with pgvector (`scripts/postgres.sh url`): the
    /// 100k real vectors are searched there too, through the store API.
    #[arg(long, env = "OCTOPUS_BENCH_DATABASE_URL")]
    postgres: Option<String>,
    /// A Qdrant server's gRPC URL: the 100k real vectors are searched there
    /// too, beside the embedded index, both under the SQLite store.
    #[arg(long, env = "OCTOPUS_BENCH_QDRANT_URL")]
    qdrant: Option<String>,
    /// Agents in the comparison of Qdrant's two layouts.
    #[arg(long, default_value_t = 100)]
    qdrant_agents: usize,
    /// Only the real vectors: no mixture, no 1M synthetic vectors.
    #[arg(long)]
    real_only: bool,
}

pub fn run(options: Options) -> anyhow::Result<()> {
    let model = options
        .model
        .clone()
        .unwrap_or_else(octopus_embed::model_dir::default_model_dir);
    let cache_dir = octopus_embed::model_dir::cache_dir().with_file_name("bench");
    let texts = cache::corpus(&cache_dir, options.real, || {
        corpus::doc_sentences(&options.lockfile, options.real)
    })?;
    let real = cache::embeddings(&texts, &model, &cache_dir)?;
    let (base, queries) = split(&real, options.queries);
    println!(
        "real: {} sentences of dependency docs embedded by {}, {} held out as queries\n",
        base.len(),
        model.file_name().unwrap_or_default().to_string_lossy(),
        queries.len()
    );

    println!(
        "## Where HNSW starts to pay (real vectors, ef = {})\n",
        HnswParams::default().expansion_search
    );
    println!(
        "| vectors | exact p50 ms | HNSW p50 ms | HNSW recall@10 | HNSW build s |\n|---|---|---|---|---|"
    );
    for size in [1_000, 2_000, 5_000, 10_000, 20_000, 50_000] {
        let subset = Vectors {
            dimension: base.dimension,
            data: base.data[..size * base.dimension].to_vec(),
        };
        let exact = exact_index(&subset);
        let truth = truth(&subset, &queries);
        let (exact_p50, _) = latency(&queries, |q| exact.search(q, K, |_| true).len());
        let (hnsw, build) = build_hnsw(&subset)?;
        let (recall, p50, _) = measure(&hnsw, &queries, &truth)?;
        println!("| {size} | {exact_p50:.3} | {p50:.3} | {recall:.3} | {build:.2} |");
    }

    println!("\n## 100k real embeddings\n");
    report(&base, &queries)?;
    if options.postgres.is_some() || options.qdrant.is_some() {
        let truth = truth(&base, &queries);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        runtime.block_on(through_store::each_backend(
            &options, &base, &queries, &truth,
        ))?;
        if let Some(url) = &options.qdrant {
            runtime.block_on(qdrant_layouts::report(
                url,
                &base,
                &queries,
                options.qdrant_agents,
            ))?;
        }
    }
    if options.real_only {
        return Ok(());
    }

    let mut rng = Rng::new(0x0c70_9005);
    let fitted = Vectors {
        dimension: base.dimension,
        data: base.data[..options.fit.min(base.len()) * base.dimension].to_vec(),
    };
    let started = Instant::now();
    let mixture = Mixture::fit(&fitted, options.components, 10, &mut rng);
    let synthetic = mixture.sample(options.synthetic, &mut rng);
    let synthetic_queries = mixture.sample(options.queries, &mut rng);
    println!(
        "\n## {} vectors from a mixture of {} full-covariance Gaussians fitted to {} real ones (fit and draw {:.1} s)\n",
        synthetic.len(),
        options.components,
        fitted.len(),
        started.elapsed().as_secs_f64()
    );
    // The structure check: how close is a query's nearest neighbour, real
    // against synthetic, at the same base size? Uniform vectors would score ~0.2.
    let same_size = Vectors {
        dimension: synthetic.dimension,
        data: synthetic.data[..base.len() * base.dimension].to_vec(),
    };
    println!(
        "mean cosine of a query's nearest neighbour among {} vectors: real {:.3}, synthetic {:.3}\n",
        base.len(),
        nearest_similarity(&base, &queries),
        nearest_similarity(&same_size, &synthetic_queries)
    );
    drop(same_size);
    report(&synthetic, &synthetic_queries)
}

/// Exact search, then HNSW across search efforts: recall, latency, build, size.
fn report(base: &Vectors, queries: &Vectors) -> anyhow::Result<()> {
    let exact = exact_index(base);
    let started = Instant::now();
    let truth = truth(base, queries);
    eprintln!(
        "vectors: exact truth in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let (p50, p99) = latency(&queries.prefix(100), |q| exact.search(q, K, |_| true).len());
    // The exact index holds bfloat16, so against the f32 truth it can miss.
    let exact_found: usize = queries
        .rows()
        .zip(&truth)
        .map(|(q, expected)| {
            let hits = exact.search(q, K, |_| true);
            hits.iter().filter(|h| expected.contains(&h.key)).count()
        })
        .sum();
    let exact_recall = exact_found as f64 / (truth.len() * K) as f64;
    drop(exact);
    let (hnsw, build) = build_hnsw(base)?;
    let dir = tempfile::tempdir()?;
    let saved = dir.path().join("index");
    hnsw.save(&saved)?;
    let file_bytes: u64 = std::fs::read_dir(&saved)?
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();
    let started = Instant::now();
    let loaded = HnswIndex::load(&saved, base.dimension, HnswParams::default())
        .context("load the saved index")?;
    let load = started.elapsed().as_secs_f64();
    println!(
        "HNSW (M = {}, efConstruction = {}): build {build:.1} s on 2 threads ({:.0} vectors/s), {:.0} MB in memory, {:.0} MB on disk, load {load:.2} s",
        HnswParams::default().connectivity,
        HnswParams::default().expansion_add,
        base.len() as f64 / build,
        hnsw.memory_bytes() as f64 / 1e6,
        file_bytes as f64 / 1e6,
    );
    drop(hnsw);
    println!("\n| search | ef | recall@10 | p50 ms | p99 ms |\n|---|---|---|---|---|");
    println!("| exact (bfloat16) | - | {exact_recall:.3} | {p50:.3} | {p99:.3} |");
    for effort in EFFORTS {
        loaded.set_search_effort(effort);
        let (recall, p50, p99) = measure(&loaded, queries, &truth)?;
        println!("| HNSW | {effort} | {recall:.3} | {p50:.3} | {p99:.3} |");
    }
    Ok(())
}

fn split(real: &Vectors, queries: usize) -> (Vectors, Vectors) {
    let at = (real.len() - queries) * real.dimension;
    (
        Vectors {
            dimension: real.dimension,
            data: real.data[..at].to_vec(),
        },
        Vectors {
            dimension: real.dimension,
            data: real.data[at..].to_vec(),
        },
    )
}

fn exact_index(base: &Vectors) -> ExactIndex {
    let mut index = ExactIndex::new(base.dimension);
    for (key, vector) in base.rows().enumerate() {
        index.insert(key as u64, vector);
    }
    index
}

/// The exact top `K` of every query, in f32 (the indexes hold bfloat16),
/// on both cores.
fn truth(base: &Vectors, queries: &Vectors) -> Vec<Vec<u64>> {
    let top = |query: &[f32]| -> Vec<u64> {
        let mut scored: Vec<(f32, u64)> = base
            .rows()
            .enumerate()
            .map(|(key, v)| (dot(query, v), key as u64))
            .collect();
        let last = K.min(scored.len()) - 1;
        scored.select_nth_unstable_by(last, |a, b| b.0.total_cmp(&a.0));
        scored.truncate(K);
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().map(|(_, key)| key).collect()
    };
    let rows: Vec<&[f32]> = queries.rows().collect();
    let half = rows.len().div_ceil(2);
    std::thread::scope(|scope| {
        let parts: Vec<_> = rows
            .chunks(half.max(1))
            .map(|part| scope.spawn(move || part.iter().map(|q| top(q)).collect::<Vec<Vec<u64>>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|p| p.join().unwrap_or_default())
            .collect()
    })
}

fn build_hnsw(base: &Vectors) -> anyhow::Result<(HnswIndex, f64)> {
    let started = Instant::now();
    let mut index = HnswIndex::new(base.dimension, HnswParams::default())?;
    let items: Vec<(u64, &[f32])> = base
        .rows()
        .enumerate()
        .map(|(k, v)| (k as u64, v))
        .collect();
    index.insert_many(&items, 2)?;
    Ok((index, started.elapsed().as_secs_f64()))
}

/// Recall@10 against `truth`, and p50/p99 latency in ms.
fn measure(
    index: &HnswIndex,
    queries: &Vectors,
    truth: &[Vec<u64>],
) -> anyhow::Result<(f64, f64, f64)> {
    let mut found = 0usize;
    let mut times = Vec::with_capacity(queries.len());
    for (query, expected) in queries.rows().zip(truth) {
        let started = Instant::now();
        let hits = index.search(query, K, |_| true)?;
        times.push(started.elapsed().as_secs_f64() * 1e3);
        found += hits.iter().filter(|h| expected.contains(&h.key)).count();
    }
    let (p50, p99) = percentiles(times);
    Ok((found as f64 / (truth.len() * K) as f64, p50, p99))
}

fn latency(queries: &Vectors, mut search: impl FnMut(&[f32]) -> usize) -> (f64, f64) {
    let times = queries
        .rows()
        .map(|q| {
            let started = Instant::now();
            std::hint::black_box(search(q));
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    percentiles(times)
}

pub(crate) fn percentiles(mut times: Vec<f64>) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    let at = |p: f64| times[((times.len() as f64 * p) as usize).min(times.len() - 1)];
    (at(0.50), at(0.99))
}

/// Mean similarity of each query to its nearest base vector.
fn nearest_similarity(base: &Vectors, queries: &Vectors) -> f64 {
    let sample = queries.prefix(200);
    sample
        .rows()
        .map(|q| {
            base.rows()
                .map(|v| dot(q, v))
                .fold(f32::NEG_INFINITY, f32::max) as f64
        })
        .sum::<f64>()
        / sample.len() as f64
}
