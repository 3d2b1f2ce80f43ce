//! pgvector on the machine the tests run on, by itself: an HNSW index built
//! and searched for each dimension Octopus stores (a scan past the 2,000
//! that pgvector indexes), with the statements' own shapes (an untyped `vector` column cast to `vector(d)`, cosine
//! distance, iterative scans). An extension compiled for another CPU dies
//! here with "Illegal instruction" at the first long vector; this test then
//! fails by name, with the server's own log line, rather than as a cascade
//! of lost connections in every pgvector test after it.

use sqlx_core::connection::Connection;
use sqlx_core::executor::Executor;
use sqlx_core::query::query;
use sqlx_core::query_as::query_as;

use octopus_postgres::testing;

/// The dimensions of the embedders Octopus ships or is tested with: a tiny
/// test embedder's, all-MiniLM-L6-v2's, and OpenAI's small and large models'.
const DIMENSIONS: [usize; 4] = [8, 384, 1536, 3072];
/// The longest vectors pgvector's HNSW index takes; Octopus scans longer ones.
const MAX_INDEXED: usize = 2000;
const ROWS: usize = 200;

/// A vector of `d` values from a small deterministic generator, so that a
/// failure is reproduced exactly.
fn vector(seed: usize, d: usize) -> Vec<f32> {
    let mut state = (seed as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (0..d)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 2000) as f32 / 1000.0 - 1.0
        })
        .collect()
}

fn literal(values: &[f32]) -> String {
    let parts: Vec<String> = values.iter().map(f32::to_string).collect();
    format!("[{}]", parts.join(","))
}

fn cosine_distance(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    1.0 - dot / (norm(a) * norm(b))
}

/// What the server logged about processes it lost, for the failure message:
/// the log's path comes from `OCTOPUS_TEST_DATABASE_LOG` (scripts/test.sh
/// sets it for the server it starts).
fn server_log_lines() -> String {
    let Ok(path) = std::env::var("OCTOPUS_TEST_DATABASE_LOG") else {
        return "(the server's log: set OCTOPUS_TEST_DATABASE_LOG to read it here)".into();
    };
    match std::fs::read_to_string(&path) {
        Ok(log) => {
            let lost: Vec<&str> = log
                .lines()
                .filter(|line| line.contains("terminated by signal") || line.contains("PANIC"))
                .collect();
            if lost.is_empty() {
                format!("({path} names no lost process)")
            } else {
                lost.join("\n")
            }
        }
        Err(e) => format!("(could not read {path}: {e})"),
    }
}

fn on_this_cpu<T>(what: &str, result: Result<T, sqlx_core::Error>) -> T {
    result.unwrap_or_else(|e| {
        panic!(
            "pgvector failed to {what} on this CPU: {e}\nserver log:\n{}",
            server_log_lines()
        )
    })
}

#[tokio::test]
async fn pgvector_builds_and_searches_an_hnsw_index_of_each_dimension_on_this_cpu() {
    let url = testing::fresh_database().await;
    let mut db = sqlx_postgres::PgConnection::connect(&url).await.unwrap();
    on_this_cpu(
        "load",
        db.execute(
            "CREATE EXTENSION IF NOT EXISTS vector;
             CREATE TABLE points (key bigint, dimension integer, embedding vector NOT NULL);
             SET hnsw.iterative_scan = relaxed_order; SET hnsw.ef_search = 100",
        )
        .await,
    );
    for d in DIMENSIONS {
        for key in 0..ROWS {
            let insert = query("INSERT INTO points VALUES ($1, $2, $3::vector)")
                .bind(key as i64 + (d * ROWS) as i64)
                .bind(d as i32)
                .bind(literal(&vector(key, d)));
            on_this_cpu("store a vector", db.execute(insert).await);
        }
        if d <= MAX_INDEXED {
            let index = format!(
                "CREATE INDEX points_hnsw_{d} ON points
                 USING hnsw ((embedding::vector({d})) vector_cosine_ops) WHERE dimension = {d}"
            );
            on_this_cpu("build an HNSW index", db.execute(index.as_str()).await);
        }
    }
    for d in DIMENSIONS {
        // Where there is an index, only it may answer: the planner is told
        // not to scan the table.
        let scan = if d <= MAX_INDEXED { "off" } else { "on" };
        let plan = format!("SET enable_seqscan = {scan}");
        on_this_cpu("plan", db.execute(plan.as_str()).await);
        let asked = vector(7, d);
        let search = format!(
            "SELECT key, embedding::vector({d}) <=> $1::vector({d}) FROM points
             WHERE dimension = {d} ORDER BY embedding::vector({d}) <=> $1::vector({d}) LIMIT 5"
        );
        let found: Vec<(i64, f64)> = on_this_cpu(
            "search by cosine distance",
            query_as(search.as_str())
                .bind(literal(&asked))
                .fetch_all(&mut db)
                .await,
        );
        assert_eq!(found.len(), 5, "dimension {d}: {found:?}");
        assert_eq!(
            found[0].0,
            7 + (d * ROWS) as i64,
            "dimension {d}: the vector itself comes first: {found:?}"
        );
        assert!(found[0].1.abs() < 1e-6, "dimension {d}: {found:?}");
        for (key, distance) in &found {
            let own = vector(*key as usize - d * ROWS, d);
            let expected = cosine_distance(&asked, &own);
            assert!(
                (distance - expected).abs() < 1e-4,
                "dimension {d}, key {key}: pgvector says {distance}, the definition {expected}"
            );
        }
        assert!(
            found.windows(2).all(|pair| pair[0].1 <= pair[1].1),
            "dimension {d}: {found:?}"
        );
    }
    db.close().await.ok();
}
