//! Searching a set straight from its rows, keeping no copy: how the
//! embedded index answers searches of memory sets.
//!
//! A recall keeps to one user's memories: hundreds or thousands of vectors,
//! which the store reads by an index on the user, scoring each as it reads
//! it ([`VectorRows::nearest_in_partition`]). Holding every user's vectors in this
//! process would spend memory in proportion to everything ever stored (a
//! million messages are 1.5 GB of f32s), for a scan that takes about a
//! millisecond from the database's pages. Read from the rows, the scan is
//! exact in f32, and never behind them: there is nothing to follow,
//! reconcile or save.

use octopus_core::Result;
use octopus_core::vectors::{Nearest, ScoredKey, VectorRows, VectorSet, dot, read_set};

use crate::top_k::TopK;

/// The `query.top_k` points of `set` nearest the query that its filter
/// admits, best first, read from `rows`: one partition's points when the
/// filter keeps to one, otherwise every point of the set.
pub(crate) async fn search(
    set: VectorSet,
    query: &Nearest,
    rows: &dyn VectorRows,
) -> Result<Vec<ScoredKey>> {
    if query.filter.partition.is_some() {
        return rows.nearest_in_partition(set, query).await;
    }
    // No search the engine makes of a memory set comes here (each keeps to
    // a user), but the port allows it.
    let points = read_set(rows, set, None).await?;
    let mut best = TopK::new(query.top_k);
    for point in points.iter().filter(|p| query.filter.admits(&p.fields)) {
        best.push(point.key, dot(&point.vector, &query.vector));
    }
    Ok(best
        .into_sorted()
        .into_iter()
        .map(|n| ScoredKey {
            key: n.key,
            score: n.score,
        })
        .collect())
}
