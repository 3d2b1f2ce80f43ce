//! The vector port: where the vectors of knowledge chunks and memories are
//! searched, apart from the relational store that keeps them.
//!
//! The relational store is the truth. Each vector collection (a [`VectorSet`])
//! has a `version` there, bumped in the transaction of every change to its
//! rows. A vector index is told of each committed change afterwards
//! ([`VectorIndex::follow`]) and applies it only when it reflects the version
//! the change started from. Whenever it reflects another version (after a
//! crash between the two writes, a restart, a change made by another server,
//! or follows arriving out of order), the next search *reconciles* it with the
//! rows by key, through [`VectorRows`]: keys it has that the rows no longer do
//! are removed, missing ones are added. Keys are never reused and a row's
//! vector never changes, so equal key sets mean equal indexes, and the index
//! can lag but never lose or resurrect a vector.
//!
//! Nor need it wait for a search: the memory worker compares every set's
//! version with its copy's and reconciles those left behind
//! (`vector_lag`).
//!
//! Implementations: the embedded index in this process (`octopus-vector`),
//! pgvector (`octopus-postgres`), Qdrant (`octopus-qdrant`). Their contract is checked by the vector
//! conformance suite in `octopus-testkit`.
//!
//! # How a store drives an index
//!
//! 1. A change writes the rows and bumps the set's `version` in one transaction
//!    (a set is one kind, knowledge or memory, of one agent of one tenant).
//! 2. Once committed, the store tells the index: `follow(set, before, after,
//!    change)` (`CommittedChange::tell`). The index applies the change only if
//!    it reflects `before`.
//! 3. A search reads the set's state, then asks the index: `search(set, state,
//!    query, rows)`. An index that does not reflect `state` first reconciles by
//!    key through `rows` (`VectorRows`: the state, every key with its fields,
//!    the vectors of given keys, one partition's points). Then the store reads
//!    the rows of the keys found. An index may also keep no copy of a set and
//!    answer from `rows` alone: the embedded one does so for memory sets.
//! 4. Forgetting a user uses `erase`, which removes vectors whatever version the
//!    index reflects.
//!
//! Keys are never reused and a row's vector never changes, so equal key sets
//! mean equal indexes. A crash between the two writes, a restart, another
//! server's writes, or follows out of order leave an index behind, never wrong.
//! Nor does it wait for a search: the memory worker calls
//! `MemoryStore::catch_up_vectors` every few seconds, which reconciles the sets
//! an index knows it missed and any copy seen behind at the same version for a
//! settling time (`LagWatch`), so that a follow still on its way lands instead
//! of racing a reconcile. Filters are data (`PointFilter`: a partition, labels,
//! a time window), so an index can push them down.
//!
//! A new vector backend implements `VectorIndex`, passes
//! `vector_conformance_tests!`, and then runs the storage suite paired with each
//! store it supports.

use std::collections::{BTreeMap, HashMap};

use async_trait::async_trait;

use crate::{AgentId, Result, TenantId, Timestamp};

/// The two kinds of vector collections.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum VectorKind {
    /// An agent's knowledge chunks.
    Knowledge,
    /// The memories of an agent's conversations: messages and summaries.
    Memory,
}

impl VectorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Knowledge => "knowledge",
            Self::Memory => "memory",
        }
    }
}

/// One vector collection: one kind, of one agent, of one tenant. Sets never
/// share vectors; a search reads one set only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VectorSet {
    pub kind: VectorKind,
    pub tenant: TenantId,
    pub agent: AgentId,
}

impl VectorSet {
    pub fn knowledge(tenant: TenantId, agent: AgentId) -> Self {
        Self {
            kind: VectorKind::Knowledge,
            tenant,
            agent,
        }
    }

    pub fn memory(tenant: TenantId, agent: AgentId) -> Self {
        Self {
            kind: VectorKind::Memory,
            tenant,
            agent,
        }
    }
}

/// A set as the relational store sees it: the dimension of its vectors, and
/// the version of its rows. A set's version starts at 0, with no rows, and
/// every change moves it up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetState {
    pub dimension: u32,
    pub version: i64,
}

/// What a search can filter on, kept beside each vector.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PointFields {
    /// The part of the set a search may keep to: a memory's user.
    pub partition: Option<String>,
    /// Exact-match values by name: a chunk's `source` and `category`, a
    /// memory's `kind` and `episode`.
    pub labels: BTreeMap<String, String>,
    /// When it happened: a chunk's indexing, a memory's message.
    pub at: Option<Timestamp>,
}

impl PointFields {
    pub fn label(mut self, name: &str, value: impl Into<String>) -> Self {
        self.labels.insert(name.to_owned(), value.into());
        self
    }
}

/// A vector and its key and fields. Vectors are L2-normalised by their
/// producers, so a score (the dot product) is the cosine similarity.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub key: u64,
    pub vector: Vec<f32>,
    pub fields: PointFields,
}

/// What a committed change did to a set's rows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VectorChange {
    pub removed: Vec<u64>,
    pub added: Vec<Point>,
}

impl VectorChange {
    /// How the change moves the set's count of vectors.
    pub fn delta(&self) -> i64 {
        self.added.len() as i64 - self.removed.len() as i64
    }
}

/// Which vectors a search may return. Every condition must hold.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PointFilter {
    /// Only this partition.
    pub partition: Option<String>,
    /// The label must have one of these values (and be present).
    pub any_of: Vec<(String, Vec<String>)>,
    /// The label must have none of these values (or be absent).
    pub none_of: Vec<(String, Vec<String>)>,
    /// `at` at or after.
    pub from: Option<Timestamp>,
    /// `at` before.
    pub to: Option<Timestamp>,
}

impl PointFilter {
    pub fn admits(&self, fields: &PointFields) -> bool {
        let label = |name: &String| fields.labels.get(name);
        self.partition
            .as_ref()
            .is_none_or(|p| fields.partition.as_ref() == Some(p))
            && self
                .any_of
                .iter()
                .all(|(name, values)| label(name).is_some_and(|v| values.contains(v)))
            && self
                .none_of
                .iter()
                .all(|(name, values)| label(name).is_none_or(|v| !values.contains(v)))
            && self
                .from
                .is_none_or(|from| fields.at.is_some_and(|at| at >= from))
            && self.to.is_none_or(|to| fields.at.is_some_and(|at| at < to))
    }

    /// Requires `name` to be one of `values`.
    pub fn require(mut self, name: &str, values: Vec<String>) -> Self {
        self.any_of.push((name.to_owned(), values));
        self
    }

    /// Excludes points whose `name` is one of `values`.
    pub fn exclude(mut self, name: &str, values: Vec<String>) -> Self {
        if !values.is_empty() {
            self.none_of.push((name.to_owned(), values));
        }
        self
    }
}

/// A search: the `top_k` nearest vectors to `vector` that `filter` admits.
#[derive(Clone, Debug, PartialEq)]
pub struct Nearest {
    pub vector: Vec<f32>,
    pub top_k: usize,
    pub filter: PointFilter,
}

impl Nearest {
    /// Refuses a query vector whose dimension is not the set's.
    pub fn check_dimension(&self, dimension: u32) -> Result<()> {
        if self.vector.len() == dimension as usize {
            return Ok(());
        }
        Err(crate::Error::invalid(
            "vector",
            format!(
                "has {} dimensions, the collection {dimension}",
                self.vector.len()
            ),
        ))
    }
}

/// One search result: a key and its cosine similarity to the query, to
/// within 0.004: an index may hold its vectors in bfloat16.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoredKey {
    pub key: u64,
    pub score: f32,
}

/// The relational rows of vector sets, as an index reconciles from them. The
/// reads need not come from one snapshot: a reconcile reads the state first,
/// and rows read later are as new or newer, which only makes the index
/// reflect more than the version it records (the next change or search
/// brings the two together).
#[async_trait]
pub trait VectorRows: Send + Sync {
    /// The set's dimension and version, if the set exists.
    async fn vector_state(&self, set: VectorSet) -> Result<Option<SetState>>;
    /// Every key of the set, with its fields.
    async fn vector_fields(&self, set: VectorSet) -> Result<HashMap<u64, PointFields>>;
    /// The vectors of these keys of the set; keys no longer there are left out.
    async fn vectors(&self, set: VectorSet, keys: &[u64]) -> Result<Vec<(u64, Vec<f32>)>>;
    /// Every set with its state: one read of the sets' version columns, for
    /// finding copies left behind (`vector_lag`).
    async fn vector_states(&self) -> Result<Vec<(VectorSet, SetState)>>;

    /// The `query.top_k` points of one partition of the set (a memory set's
    /// user, `query.filter.partition`) nearest the query that its filter
    /// admits, best first, ties by key: what an index that keeps no copy of
    /// the set answers a search that keeps to a partition with. A store
    /// answers it from an index on the partition, scoring each row as it
    /// reads it. Without a partition in the filter, nothing.
    async fn nearest_in_partition(
        &self,
        set: VectorSet,
        query: &Nearest,
    ) -> Result<Vec<ScoredKey>> {
        let Some(partition) = &query.filter.partition else {
            return Ok(Vec::new());
        };
        nearest_by_reading(self, set, Some(partition), query).await
    }
}

/// The `query.top_k` points of `set` (of `partition` only, when given)
/// nearest the query that its filter admits, best first, ties by key: each
/// point read from `rows` whole and scored here.
pub async fn nearest_by_reading<R: VectorRows + ?Sized>(
    rows: &R,
    set: VectorSet,
    partition: Option<&str>,
    query: &Nearest,
) -> Result<Vec<ScoredKey>> {
    let scored = read_set(rows, set, partition)
        .await?
        .into_iter()
        .filter(|point| query.filter.admits(&point.fields))
        .map(|point| ScoredKey {
            key: point.key,
            score: dot(&point.vector, &query.vector),
        })
        .collect();
    Ok(best(scored, query.top_k))
}

/// The `top_k` best of scored keys, best first; ties by key, as every
/// index orders them.
pub fn best(mut scored: Vec<ScoredKey>, top_k: usize) -> Vec<ScoredKey> {
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
    scored.truncate(top_k);
    scored
}

/// The points of `set` read from `rows` whole, their fields first and then
/// their vectors in batches: only those of `partition` when one is given.
pub async fn read_set<R: VectorRows + ?Sized>(
    rows: &R,
    set: VectorSet,
    partition: Option<&str>,
) -> Result<Vec<Point>> {
    let mut truth = rows.vector_fields(set).await?;
    if let Some(partition) = partition {
        truth.retain(|_, fields| fields.partition.as_deref() == Some(partition));
    }
    let keys: Vec<u64> = truth.keys().copied().collect();
    let mut points = Vec::with_capacity(keys.len());
    for batch in keys.chunks(500) {
        for (key, vector) in rows.vectors(set, batch).await? {
            if let Some(fields) = truth.remove(&key) {
                points.push(Point {
                    key,
                    vector,
                    fields,
                });
            }
        }
    }
    Ok(points)
}

/// What a copy holding the keys `held` must lose and gain to match the rows'
/// keys `truth`: `(stale, missing)`.
pub fn key_difference(
    held: &std::collections::HashSet<u64>,
    truth: &HashMap<u64, PointFields>,
) -> (Vec<u64>, Vec<u64>) {
    let stale = held
        .iter()
        .filter(|k| !truth.contains_key(k))
        .copied()
        .collect();
    let missing = truth
        .keys()
        .filter(|k| !held.contains(k))
        .copied()
        .collect();
    (stale, missing)
}

/// The points of `keys` in `set`, read from `rows`, with their fields from
/// `truth`; keys the rows no longer hold are left out.
pub async fn read_points(
    rows: &dyn VectorRows,
    set: VectorSet,
    keys: &[u64],
    truth: &HashMap<u64, PointFields>,
) -> Result<Vec<Point>> {
    Ok(rows
        .vectors(set, keys)
        .await?
        .into_iter()
        .filter_map(|(key, vector)| {
            truth.get(&key).map(|fields| Point {
                key,
                vector,
                fields: fields.clone(),
            })
        })
        .collect())
}

/// A vector index that follows the relational rows (see the module comment).
/// A change a store made to a set's rows, in the transaction that moved the
/// set from `before` to version `after`: once the transaction commits, the
/// index is told ([`CommittedChange::tell`]).
#[derive(Clone, Debug)]
pub struct CommittedChange {
    pub set: VectorSet,
    pub before: SetState,
    pub after: i64,
    pub change: VectorChange,
}

impl CommittedChange {
    /// Tells `index` of the change, if there was one.
    pub async fn tell(committed: Option<Self>, index: &dyn VectorIndex) -> Result<()> {
        match committed {
            Some(c) => index.follow(c.set, c.before, c.after, c.change).await,
            None => Ok(()),
        }
    }
}

#[async_trait]
pub trait VectorIndex: Send + Sync {
    /// The backend's name, for logs and `/metrics`.
    fn name(&self) -> &'static str;

    /// Hands back memory held beyond what the index needs (capacity grown
    /// for inserts), once a burst of changes is over. Nothing by default.
    async fn release_spare_memory(&self) {}

    /// Reconciles the sets this index knows it left behind (a follow or an
    /// erase that could not reach its server), so that they catch up without
    /// waiting for a search; returns how many it brought up to date. Called
    /// often: cheap when none is behind. Nothing by default (an index in the
    /// same database or process never misses a change).
    async fn catch_up(&self, rows: &dyn VectorRows) -> Result<usize> {
        let _ = rows;
        Ok(0)
    }

    /// The version of the rows each of `sets` is reflected at in this
    /// index's copy (in the order given), or `None` for a set it keeps no
    /// copy of yet. A shared copy (in a database or a server) that has none
    /// of a set is at version 0, the version of a set without rows.
    async fn copy_versions(&self, sets: &[VectorSet]) -> Result<Vec<Option<i64>>>;

    /// Brings the set's copy to the rows (their state read at `state` or
    /// later), as a search does first when the copy is behind; false when
    /// other writers kept changing the copy meanwhile.
    async fn reconcile(
        &self,
        set: VectorSet,
        state: SetState,
        rows: &dyn VectorRows,
    ) -> Result<bool>;

    /// Applies a change its store committed, which moved `set` from `before`
    /// to version `after`, when the index reflects `before`; otherwise leaves
    /// the index to be reconciled at the next search. Applying a change the
    /// index already reflects in part is harmless (removing a missing key,
    /// adding a present one).
    async fn follow(
        &self,
        set: VectorSet,
        before: SetState,
        after: i64,
        change: VectorChange,
    ) -> Result<()>;

    /// The nearest keys, best first, after reconciling the index with `rows`
    /// when it does not reflect `state` (read from `rows` just before).
    async fn search(
        &self,
        set: VectorSet,
        state: SetState,
        query: &Nearest,
        rows: &dyn VectorRows,
    ) -> Result<Vec<ScoredKey>>;

    /// Applies a change that erased data (forgetting a user) like
    /// [`Self::follow`], except that whatever version the index reflects,
    /// nothing of the removed vectors may remain in it or in what it saved
    /// (a graph that only marks removed vectors is dropped, to be rebuilt
    /// from the rows at the next search). Returns whether a saved copy had to
    /// be dropped so.
    async fn erase(
        &self,
        set: VectorSet,
        before: SetState,
        after: i64,
        change: VectorChange,
    ) -> Result<bool>;
}

/// The dot product of two equally long vectors.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight independent sums let the compiler keep eight SIMD lanes busy.
    let mut sums = [0.0f32; 8];
    let chunks = a.len() / 8 * 8;
    for (x, y) in a[..chunks].chunks_exact(8).zip(b[..chunks].chunks_exact(8)) {
        for lane in 0..8 {
            sums[lane] += x[lane] * y[lane];
        }
    }
    let tail: f32 = a[chunks..]
        .iter()
        .zip(&b[chunks..])
        .map(|(x, y)| x * y)
        .sum();
    sums.iter().sum::<f32>() + tail
}

/// The dot product of `query` with the vector [`vector_to_bytes`] wrote
/// into `bytes`, read in place; `None` when the lengths differ.
pub fn dot_with_bytes(bytes: &[u8], query: &[f32]) -> Option<f32> {
    if bytes.len() != query.len() * 4 {
        return None;
    }
    let mut sums = [0.0f32; 8];
    let chunks = query.len() / 8 * 8;
    for (b, q) in bytes[..chunks * 4]
        .chunks_exact(32)
        .zip(query[..chunks].chunks_exact(8))
    {
        for lane in 0..8 {
            let at = lane * 4;
            let value = f32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
            sums[lane] += value * q[lane];
        }
    }
    let tail: f32 = bytes[chunks * 4..]
        .chunks_exact(4)
        .zip(&query[chunks..])
        .map(|(b, q)| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) * q)
        .sum();
    Some(sums.iter().sum::<f32>() + tail)
}

/// A vector as the SQL stores keep it in a blob: its values in order, each
/// four little-endian bytes.
pub fn vector_to_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The vector [`vector_to_bytes`] wrote; `None` if `bytes` cannot be one
/// (its length is not a whole number of values).
pub fn vector_from_bytes(bytes: &[u8]) -> Option<Vec<f32>> {
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_survives_its_bytes_and_a_ragged_blob_is_refused() {
        let vector = vec![0.5, -1.25, f32::MIN_POSITIVE, 3.0e7];
        let bytes = vector_to_bytes(&vector);
        assert_eq!(bytes.len(), 16);
        assert_eq!(vector_from_bytes(&bytes), Some(vector));
        assert_eq!(vector_from_bytes(&bytes[..15]), None);
        let long: Vec<f32> = (0..19).map(|i| i as f32 * 0.25 - 2.0).collect();
        let query: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.1).collect();
        let expected = dot(&long, &query);
        let found = dot_with_bytes(&vector_to_bytes(&long), &query).unwrap();
        assert!((found - expected).abs() < 1e-4, "{found} != {expected}");
        assert_eq!(dot_with_bytes(&bytes, &query), None, "lengths differ");
    }

    fn fields() -> PointFields {
        PointFields {
            partition: Some("ann".into()),
            at: Some(chrono::DateTime::from_timestamp(100, 0).unwrap_or_default()),
            ..PointFields::default()
        }
        .label("kind", "message")
        .label("episode", "e1")
    }

    #[test]
    fn a_filter_admits_only_points_meeting_every_condition() {
        let at = |s| chrono::DateTime::from_timestamp(s, 0);
        assert!(PointFilter::default().admits(&fields()));
        let mine = PointFilter {
            partition: Some("ann".into()),
            ..PointFilter::default()
        };
        assert!(mine.admits(&fields()));
        let theirs = PointFilter {
            partition: Some("bob".into()),
            ..PointFilter::default()
        };
        assert!(!theirs.admits(&fields()));
        let kinds = |k: &[&str]| k.iter().map(|s| (*s).to_owned()).collect();
        assert!(
            PointFilter::default()
                .require("kind", kinds(&["summary", "message"]))
                .admits(&fields())
        );
        assert!(
            !PointFilter::default()
                .require("kind", kinds(&["summary"]))
                .admits(&fields())
        );
        assert!(
            !PointFilter::default()
                .require("category", kinds(&["faq"]))
                .admits(&fields()),
            "a required label must be present"
        );
        assert!(
            !PointFilter::default()
                .exclude("episode", kinds(&["e1"]))
                .admits(&fields())
        );
        assert!(
            PointFilter::default()
                .exclude("category", kinds(&["faq"]))
                .admits(&fields()),
            "an excluded label may be absent"
        );
        let window = |from, to| PointFilter {
            from: at(from),
            to: at(to),
            ..PointFilter::default()
        };
        assert!(window(100, 101).admits(&fields()));
        assert!(!window(90, 100).admits(&fields()), "`to` is exclusive");
        assert!(!window(101, 200).admits(&fields()));
    }
}
