//! The contract of the vector port (`octopus_core::vectors`), which every
//! vector index must pass: [`vector_conformance_tests!`](crate::vector_conformance_tests)
//! expands to one test per rule.
//!
//! The relational truth here is [`TruthRows`]: sets of points held in memory
//! with a version per set, changed the way a store changes its rows (a
//! version bump per committed change), and read by an index through
//! [`VectorRows`] when it reconciles. Every expected result is computed from
//! that truth by brute force, so the rules hold for exact and approximate
//! indexes alike on these small sets.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};
use octopus_core::vector_lag::LagWatch;
use octopus_core::vectors::{
    Nearest, Point, PointFields, PointFilter, ScoredKey, SetState, VectorChange, VectorIndex,
    VectorRows, VectorSet,
};
use octopus_core::{AgentId, Result, TenantId};

/// How far a score may be from the exact cosine: an index may hold vectors
/// in bfloat16 (8 bits of precision), which moves a cosine between unit
/// vectors by at most 2⁻⁹ for the rounding of each side. Points here are far
/// enough apart (a tenth of a radian at least) that this never reorders them.
pub const SCORE_TOLERANCE: f32 = 2.0 / 512.0;

/// A vector index to test, which can be opened again over the same saved
/// state: another server on the same database, or the same process after a
/// restart.
#[async_trait]
pub trait VectorBackend: Send + Sync {
    async fn open(&self) -> Arc<dyn VectorIndex>;
}

/// One set's rows in the truth.
#[derive(Default)]
struct SetRows {
    version: i64,
    dimension: u32,
    points: BTreeMap<u64, (Vec<f32>, PointFields)>,
}

/// The relational truth: sets of points and their versions, in memory.
#[derive(Default)]
pub struct TruthRows {
    sets: std::sync::Mutex<HashMap<VectorSet, SetRows>>,
    next_key: AtomicUsize,
    /// Reads of fields or vectors: what a reconcile costs.
    reads: AtomicUsize,
}

/// A change committed to the truth, not yet told to the index.
pub struct Commit {
    pub set: VectorSet,
    pub before: SetState,
    pub after: i64,
    pub change: VectorChange,
}

impl TruthRows {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<VectorSet, SetRows>> {
        self.sets.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A fresh key: keys are never reused.
    pub fn key(&self) -> u64 {
        self.next_key.fetch_add(1, Ordering::SeqCst) as u64 + 1
    }

    /// Commits a change to the set (made with `dimension` if new): removes
    /// `removed` and adds `added`, with a version bump.
    pub fn commit(
        &self,
        set: VectorSet,
        dimension: u32,
        removed: Vec<u64>,
        added: Vec<Point>,
    ) -> Commit {
        let mut sets = self.lock();
        let rows = sets.entry(set).or_insert_with(|| SetRows {
            dimension,
            ..SetRows::default()
        });
        let before = SetState {
            dimension: rows.dimension,
            version: rows.version,
        };
        for key in &removed {
            rows.points.remove(key);
        }
        for point in &added {
            rows.points
                .insert(point.key, (point.vector.clone(), point.fields.clone()));
        }
        rows.version += 1;
        Commit {
            set,
            before,
            after: rows.version,
            change: VectorChange { removed, added },
        }
    }

    pub fn state(&self, set: VectorSet) -> SetState {
        let sets = self.lock();
        sets.get(&set).map_or(
            SetState {
                dimension: 3,
                version: 0,
            },
            |rows| SetState {
                dimension: rows.dimension,
                version: rows.version,
            },
        )
    }

    pub fn reads(&self) -> usize {
        self.reads.load(Ordering::SeqCst)
    }

    /// The `top_k` nearest points the filter admits, by brute force.
    pub fn nearest(&self, set: VectorSet, query: &Nearest) -> Vec<u64> {
        let sets = self.lock();
        let Some(rows) = sets.get(&set) else {
            return Vec::new();
        };
        let mut scored: Vec<(f32, u64)> = rows
            .points
            .iter()
            .filter(|(_, (_, fields))| query.filter.admits(fields))
            .map(|(key, (vector, _))| (dot(vector, &query.vector), *key))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(query.top_k);
        scored.into_iter().map(|(_, key)| key).collect()
    }
}

#[async_trait]
impl VectorRows for TruthRows {
    async fn vector_state(&self, set: VectorSet) -> Result<Option<SetState>> {
        Ok(self.lock().get(&set).map(|rows| SetState {
            dimension: rows.dimension,
            version: rows.version,
        }))
    }

    async fn vector_fields(&self, set: VectorSet) -> Result<HashMap<u64, PointFields>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        Ok(self.lock().get(&set).map_or_else(HashMap::new, |rows| {
            rows.points
                .iter()
                .map(|(key, (_, fields))| (*key, fields.clone()))
                .collect()
        }))
    }

    async fn vector_states(&self) -> Result<Vec<(VectorSet, SetState)>> {
        Ok(self
            .lock()
            .iter()
            .map(|(set, rows)| {
                let state = SetState {
                    dimension: rows.dimension,
                    version: rows.version,
                };
                (*set, state)
            })
            .collect())
    }

    async fn vectors(&self, set: VectorSet, keys: &[u64]) -> Result<Vec<(u64, Vec<f32>)>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        let sets = self.lock();
        let Some(rows) = sets.get(&set) else {
            return Ok(Vec::new());
        };
        Ok(keys
            .iter()
            .filter_map(|key| rows.points.get(key).map(|(v, _)| (*key, v.clone())))
            .collect())
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// A unit vector at `angle` radians in the plane of the first two axes, with
/// `extra` further zero dimensions.
pub fn unit(angle: f32, extra: usize) -> Vec<f32> {
    let mut v = vec![angle.cos(), angle.sin()];
    v.extend(std::iter::repeat_n(0.0, extra));
    v
}

fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_750_000_000 + seconds, 0).unwrap()
}

fn fields(user: &str, kind: &str, episode: &str, seconds: i64) -> PointFields {
    PointFields {
        partition: Some(user.to_owned()),
        at: Some(at(seconds)),
        ..PointFields::default()
    }
    .label("kind", kind)
    .label("episode", episode)
}

fn point(rows: &TruthRows, angle: f32, fields: PointFields) -> Point {
    Point {
        key: rows.key(),
        vector: unit(angle, 1),
        fields,
    }
}

/// A knowledge set: every index keeps a copy of those, so the rules about
/// following, reconciling and catching up apply to it. (An index may answer
/// a memory set's searches from the rows, keeping no copy: the embedded one
/// does; [`memory_sets_are_searched_as_the_rows_stand`] holds for both.)
fn fresh_set() -> VectorSet {
    VectorSet::knowledge(TenantId::new(), AgentId::new())
}

fn near(angle: f32, top_k: usize, filter: PointFilter) -> Nearest {
    Nearest {
        vector: unit(angle, 1),
        top_k,
        filter,
    }
}

async fn follow(index: &dyn VectorIndex, commit: Commit) {
    index
        .follow(commit.set, commit.before, commit.after, commit.change)
        .await
        .unwrap();
}

async fn search(
    index: &dyn VectorIndex,
    rows: &TruthRows,
    set: VectorSet,
    query: &Nearest,
) -> Vec<ScoredKey> {
    index
        .search(set, rows.state(set), query, rows)
        .await
        .unwrap()
}

async fn keys(
    index: &dyn VectorIndex,
    rows: &TruthRows,
    set: VectorSet,
    query: &Nearest,
) -> Vec<u64> {
    search(index, rows, set, query)
        .await
        .into_iter()
        .map(|s| s.key)
        .collect()
}

/// Ten points around the circle, of two kinds, in two episodes, an hour
/// apart; the even ones in one user's partition, the odd ones in none (as a
/// memory and a knowledge chunk: an index may hold the two apart); committed
/// and followed.
async fn ten_points(index: &dyn VectorIndex, rows: &TruthRows, set: VectorSet) -> Vec<Point> {
    let points: Vec<Point> = (0..10)
        .map(|i| {
            let kind = if i % 3 == 0 { "summary" } else { "message" };
            let episode = if i < 5 { "e1" } else { "e2" };
            let mut fields = fields("ann", kind, episode, i64::from(i) * 3600);
            if i % 2 == 1 {
                fields.partition = None;
            }
            point(rows, i as f32 * 0.3, fields)
        })
        .collect();
    follow(index, rows.commit(set, 3, Vec::new(), points.clone())).await;
    points
}

pub async fn followed_changes_are_found_nearest_first_with_cosine_scores(
    backend: &dyn VectorBackend,
) {
    let index = backend.open().await;
    let rows = TruthRows::default();
    let set = fresh_set();
    let points = ten_points(&*index, &rows, set).await;
    let reads = rows.reads();
    let query = near(0.0, 4, PointFilter::default());
    let found = search(&*index, &rows, set, &query).await;
    let expected = rows.nearest(set, &query);
    assert_eq!(
        found.iter().map(|s| s.key).collect::<Vec<_>>(),
        expected,
        "nearest first"
    );
    for hit in &found {
        let point = points.iter().find(|p| p.key == hit.key).unwrap();
        let cosine = dot(&point.vector, &query.vector);
        assert!(
            (hit.score - cosine).abs() <= SCORE_TOLERANCE,
            "score {} is the cosine {cosine}",
            hit.score
        );
    }
    assert_eq!(
        rows.reads(),
        reads,
        "an index that followed every change reads no rows to search"
    );
}

pub async fn filters_keep_to_the_partition_labels_and_time_window(backend: &dyn VectorBackend) {
    let index = backend.open().await;
    let rows = TruthRows::default();
    let set = fresh_set();
    ten_points(&*index, &rows, set).await;
    let strings = |values: &[&str]| values.iter().map(|v| (*v).to_owned()).collect();
    let filters = [
        PointFilter {
            partition: Some("ann".into()),
            ..PointFilter::default()
        },
        PointFilter {
            partition: Some("nobody".into()),
            ..PointFilter::default()
        },
        PointFilter::default().require("kind", strings(&["summary"])),
        PointFilter::default().require("kind", strings(&["summary", "message"])),
        PointFilter::default().require("category", strings(&["faq"])),
        PointFilter::default().exclude("episode", strings(&["e1"])),
        PointFilter {
            partition: Some("ann".into()),
            from: Some(at(2 * 3600)),
            to: Some(at(7 * 3600)),
            ..PointFilter::default()
        }
        .require("kind", strings(&["message"]))
        .exclude("episode", strings(&["e2"])),
    ];
    for filter in filters {
        // Between two points but nearer one: no ties to order arbitrarily.
        let query = near(1.23, 10, filter);
        let found = keys(&*index, &rows, set, &query).await;
        assert_eq!(
            found,
            rows.nearest(set, &query),
            "filter {:?}",
            query.filter
        );
    }
}

pub async fn an_index_that_missed_changes_reconciles_before_searching(backend: &dyn VectorBackend) {
    let index = backend.open().await;
    let rows = TruthRows::default();
    let set = fresh_set();
    let points = ten_points(&*index, &rows, set).await;
    // Committed, but the process stopped before telling the index.
    let added = point(&rows, 0.05, fields("ann", "message", "e3", 0));
    let removed = vec![points[0].key, points[2].key];
    rows.commit(set, 3, removed.clone(), vec![added.clone()]);
    let query = near(0.0, 5, PointFilter::default());
    let found = keys(&*index, &rows, set, &query).await;
    assert_eq!(found, rows.nearest(set, &query));
    assert_eq!(found[0], added.key, "the missed addition is found");
    assert!(
        !found.iter().any(|k| removed.contains(k)),
        "a missed removal never comes back"
    );
    let reads = rows.reads();
    keys(&*index, &rows, set, &query).await;
    assert_eq!(rows.reads(), reads, "reconciled once, not at every search");
}

/// A lost follow leaves a copy behind at one version, every later follow
/// skipped; a [`LagWatch`] sweep reconciles it without a search, but only
/// once it has stayed there a settle time, and reads nothing of a copy in
/// step.
pub async fn a_copy_left_behind_is_reconciled_without_a_search(backend: &dyn VectorBackend) {
    let index = backend.open().await;
    let rows = TruthRows::default();
    let set = fresh_set();
    let points = ten_points(&*index, &rows, set).await;
    let lost = rows.commit(
        set,
        3,
        vec![points[1].key],
        vec![point(&rows, 0.1, fields("ann", "message", "e3", 1))],
    );
    let skipped = rows.commit(
        set,
        3,
        Vec::new(),
        vec![point(&rows, 0.2, fields("ann", "message", "e3", 2))],
    );
    follow(&*index, skipped).await;
    let behind = index.copy_versions(&[set]).await.unwrap()[0];
    assert_eq!(behind, Some(lost.before.version), "later follows skipped");

    let watch = LagWatch::new(TimeDelta::hours(1));
    let clock = Utc::now();
    let reads = rows.reads();
    assert_eq!(watch.sweep(&*index, &rows, clock).await.unwrap(), 0);
    assert_eq!(rows.reads(), reads, "nothing read while it settles");
    assert_eq!(
        watch
            .sweep(&*index, &rows, clock + TimeDelta::hours(1))
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        index.copy_versions(&[set]).await.unwrap()[0],
        Some(rows.state(set).version)
    );
    let reads = rows.reads();
    let query = near(0.0, 12, PointFilter::default());
    assert_eq!(
        keys(&*index, &rows, set, &query).await,
        rows.nearest(set, &query)
    );
    assert_eq!(rows.reads(), reads, "the search had nothing to reconcile");
    assert_eq!(
        watch
            .sweep(&*index, &rows, clock + TimeDelta::hours(2))
            .await
            .unwrap(),
        0
    );
    assert_eq!(rows.reads(), reads, "a copy in step costs no reads");
}

/// A copy seen behind but still moving (its follows landing) is left to
/// follow: the settle time counts from the last version it was seen at.
pub async fn a_copy_still_following_is_left_to_follow(backend: &dyn VectorBackend) {
    let index = backend.open().await;
    let rows = TruthRows::default();
    let set = fresh_set();
    ten_points(&*index, &rows, set).await;
    let first = rows.commit(
        set,
        3,
        Vec::new(),
        vec![point(&rows, 0.1, fields("ann", "message", "e3", 1))],
    );
    let second = rows.commit(
        set,
        3,
        Vec::new(),
        vec![point(&rows, 0.2, fields("ann", "message", "e3", 2))],
    );
    let watch = LagWatch::new(TimeDelta::hours(1));
    let clock = Utc::now();
    let reads = rows.reads();
    // Two follows on their way: seen behind, then one lands.
    assert_eq!(watch.sweep(&*index, &rows, clock).await.unwrap(), 0);
    follow(&*index, first).await;
    assert_eq!(
        watch
            .sweep(&*index, &rows, clock + TimeDelta::hours(1))
            .await
            .unwrap(),
        0,
        "it moved since it was seen behind"
    );
    follow(&*index, second).await;
    assert_eq!(
        watch
            .sweep(&*index, &rows, clock + TimeDelta::hours(2))
            .await
            .unwrap(),
        0
    );
    assert_eq!(rows.reads(), reads, "followed, never reconciled");
    assert_eq!(
        index.copy_versions(&[set]).await.unwrap()[0],
        Some(rows.state(set).version)
    );
}

pub async fn follows_arriving_out_of_order_leave_it_behind_never_wrong(
    backend: &dyn VectorBackend,
) {
    let index = backend.open().await;
    let rows = TruthRows::default();
    let set = fresh_set();
    let points = ten_points(&*index, &rows, set).await;
    let first = rows.commit(
        set,
        3,
        Vec::new(),
        vec![point(&rows, 0.01, fields("ann", "message", "e3", 1))],
    );
    let second = rows.commit(set, 3, vec![points[0].key], Vec::new());
    follow(&*index, second).await;
    follow(&*index, first).await;
    let query = near(0.0, 10, PointFilter::default());
    assert_eq!(
        keys(&*index, &rows, set, &query).await,
        rows.nearest(set, &query)
    );
}

pub async fn a_change_followed_twice_or_already_reconciled_changes_nothing(
    backend: &dyn VectorBackend,
) {
    let index = backend.open().await;
    let rows = TruthRows::default();
    let set = fresh_set();
    ten_points(&*index, &rows, set).await;
    let extra = point(&rows, 0.15, fields("ann", "message", "e3", 2));
    let commit = rows.commit(set, 3, Vec::new(), vec![extra.clone()]);
    let query = near(0.0, 10, PointFilter::default());
    // A search reconciles before the follow arrives; then the follow.
    let reconciled = keys(&*index, &rows, set, &query).await;
    let (set_, before, after) = (commit.set, commit.before, commit.after);
    index
        .follow(set_, before, after, commit.change.clone())
        .await
        .unwrap();
    index
        .follow(set_, before, after, commit.change)
        .await
        .unwrap();
    let found = keys(&*index, &rows, set, &query).await;
    assert_eq!(found, reconciled);
    assert_eq!(found, rows.nearest(set, &query));
    assert_eq!(
        found.iter().filter(|k| **k == extra.key).count(),
        1,
        "found once"
    );
}

pub async fn another_instance_finds_the_same_vectors(backend: &dyn VectorBackend) {
    let first = backend.open().await;
    let rows = TruthRows::default();
    let set = fresh_set();
    ten_points(&*first, &rows, set).await;
    let commit = rows.commit(
        set,
        3,
        Vec::new(),
        vec![point(&rows, 0.15, fields("bob", "message", "e3", 3))],
    );
    follow(&*first, commit).await;
    let second = backend.open().await;
    let query = near(0.0, 6, PointFilter::default());
    assert_eq!(
        keys(&*second, &rows, set, &query).await,
        rows.nearest(set, &query),
        "a restarted process, or another server, finds what the first stored"
    );
    // A change followed by the second is seen by the first.
    let commit = rows.commit(
        set,
        3,
        Vec::new(),
        vec![point(&rows, 0.22, fields("ann", "message", "e3", 4))],
    );
    follow(&*second, commit).await;
    assert_eq!(
        keys(&*first, &rows, set, &query).await,
        rows.nearest(set, &query)
    );
}

pub async fn sets_never_share_vectors(backend: &dyn VectorBackend) {
    let index = backend.open().await;
    let rows = TruthRows::default();
    let (tenant, other_tenant, agent) = (TenantId::new(), TenantId::new(), AgentId::new());
    let sets = [
        VectorSet::memory(tenant, agent),
        VectorSet::knowledge(tenant, agent),
        VectorSet::memory(other_tenant, agent),
        VectorSet::memory(tenant, AgentId::new()),
    ];
    for set in sets {
        ten_points(&*index, &rows, set).await;
    }
    let query = near(0.5, 20, PointFilter::default());
    for set in sets {
        let found = keys(&*index, &rows, set, &query).await;
        assert_eq!(found.len(), 10, "only its own ten");
        assert_eq!(found, rows.nearest(set, &query));
    }
}

pub async fn sets_of_different_dimensions_are_searched_alike(backend: &dyn VectorBackend) {
    let index = backend.open().await;
    let rows = TruthRows::default();
    let (small, large) = (fresh_set(), fresh_set());
    for (set, extra) in [(small, 1), (large, 382)] {
        let points = (0..6)
            .map(|i| Point {
                key: rows.key(),
                vector: unit(i as f32 * 0.4, extra),
                fields: fields("ann", "message", "e1", i),
            })
            .collect();
        follow(
            &*index,
            rows.commit(set, 2 + extra as u32, Vec::new(), points),
        )
        .await;
        let query = Nearest {
            vector: unit(0.9, extra),
            top_k: 3,
            filter: PointFilter::default(),
        };
        assert_eq!(
            keys(&*index, &rows, set, &query).await,
            rows.nearest(set, &query)
        );
    }
}

pub async fn a_set_with_no_vectors_finds_nothing(backend: &dyn VectorBackend) {
    let index = backend.open().await;
    let rows = TruthRows::default();
    let set = fresh_set();
    let query = near(0.0, 5, PointFilter::default());
    assert!(keys(&*index, &rows, set, &query).await.is_empty());
    let points = ten_points(&*index, &rows, set).await;
    let keys_all = points.iter().map(|p| p.key).collect();
    follow(&*index, rows.commit(set, 3, keys_all, Vec::new())).await;
    assert!(keys(&*index, &rows, set, &query).await.is_empty());
}

pub async fn erased_vectors_are_gone_even_from_an_index_behind_the_rows(
    backend: &dyn VectorBackend,
) {
    let index = backend.open().await;
    let rows = TruthRows::default();
    let set = fresh_set();
    let points = ten_points(&*index, &rows, set).await;
    let in_step = rows.state(set);
    // A change the index never heard of: it is now behind.
    rows.commit(
        set,
        3,
        Vec::new(),
        vec![point(&rows, 2.0, fields("cyd", "message", "e3", 5))],
    );
    // Forgetting ann: her vectors are erased from the rows, and the index
    // is told, though it cannot apply the change in order.
    let anns: Vec<u64> = points
        .iter()
        .filter(|p| p.fields.partition.as_deref() == Some("ann"))
        .map(|p| p.key)
        .collect();
    let erased = rows.commit(set, 3, anns.clone(), Vec::new());
    index
        .erase(erased.set, erased.before, erased.after, erased.change)
        .await
        .unwrap();
    // Even a search by a caller that read the older version, which the
    // index may answer without reconciling, finds none of hers.
    let query = near(0.0, 10, PointFilter::default());
    let stale = index.search(set, in_step, &query, &rows).await.unwrap();
    assert!(
        !stale.iter().any(|s| anns.contains(&s.key)),
        "an erased vector was found"
    );
    assert_eq!(
        keys(&*index, &rows, set, &query).await,
        rows.nearest(set, &query)
    );
}

/// Whether an index keeps a copy of memory sets or reads their rows at each
/// search, a search finds what the rows hold now: changes followed or not,
/// within one user's partition or across the set, and nothing of an erased
/// user, even asked at the version before the erasure.
pub async fn memory_sets_are_searched_as_the_rows_stand(backend: &dyn VectorBackend) {
    let index = backend.open().await;
    let rows = TruthRows::default();
    let set = VectorSet::memory(TenantId::new(), AgentId::new());
    let points = ten_points(&*index, &rows, set).await;
    let anns = |within: bool| PointFilter {
        partition: within.then(|| "ann".to_owned()),
        ..PointFilter::default()
    };
    let agrees = |query: Nearest| {
        let (index, rows) = (&index, &rows);
        async move {
            let found = keys(&**index, rows, set, &query).await;
            assert_eq!(found, rows.nearest(set, &query), "{:?}", query.filter);
            found
        }
    };
    assert_eq!(agrees(near(0.0, 3, anns(true))).await.len(), 3);
    assert_eq!(agrees(near(0.0, 20, anns(false))).await.len(), 10);

    // Committed and not followed: an addition to ann's, a removal of hers.
    let added = point(&rows, 0.1, fields("ann", "message", "e3", 7));
    rows.commit(set, 3, vec![points[0].key], vec![added.clone()]);
    let found = agrees(near(0.0, 4, anns(true))).await;
    assert_eq!(found[0], added.key);
    assert!(!found.contains(&points[0].key));
    agrees(near(0.0, 20, anns(false))).await;

    let in_step = rows.state(set);
    let hers: Vec<u64> = [points[2].key, points[4].key, added.key].into();
    let erased = rows.commit(set, 3, hers.clone(), Vec::new());
    index
        .erase(erased.set, erased.before, erased.after, erased.change)
        .await
        .unwrap();
    let stale = index
        .search(set, in_step, &near(0.0, 20, anns(true)), &rows)
        .await
        .unwrap();
    assert!(!stale.iter().any(|s| hers.contains(&s.key)));
    agrees(near(0.0, 20, anns(true))).await;
}

/// Expands to the vector port's rules for the [`VectorBackend`] `$backend`
/// builds, one `#[tokio::test]` each.
#[macro_export]
macro_rules! vector_conformance_tests {
    ($backend:expr) => {
        $crate::vector_conformance_tests!(@each $backend;
            followed_changes_are_found_nearest_first_with_cosine_scores,
            filters_keep_to_the_partition_labels_and_time_window,
            an_index_that_missed_changes_reconciles_before_searching,
            follows_arriving_out_of_order_leave_it_behind_never_wrong,
            a_copy_left_behind_is_reconciled_without_a_search,
            a_copy_still_following_is_left_to_follow,
            a_change_followed_twice_or_already_reconciled_changes_nothing,
            another_instance_finds_the_same_vectors,
            sets_never_share_vectors,
            sets_of_different_dimensions_are_searched_alike,
            a_set_with_no_vectors_finds_nothing,
            erased_vectors_are_gone_even_from_an_index_behind_the_rows,
            memory_sets_are_searched_as_the_rows_stand
        );
    };
    (@each $backend:expr; $($rule:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $rule() {
                let backend = $backend;
                $crate::vectors::$rule(&backend).await;
            }
        )*
    };
}
