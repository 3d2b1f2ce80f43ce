//! pgvector as an implementation of the vector port
//! (`octopus_core::vectors::VectorIndex`): a copy of each vector set in
//! `vector_points`, searched with pgvector's HNSW index (cosine), filtered and
//! partitioned by indexed columns. Knowledge sets only: a memory set is
//! searched one user at a time, straight from `memory_vectors` by its index
//! on the user (`octopus_core::memory_rows::search_rows`); a copy of every
//! user's vectors under one HNSW graph followed each message at the cost of
//! a graph insert, and a graph over all users finds few of one user's
//! vectors among its `ef_search` candidates. `vector_sets` records the
//! version of the rows each copy reflects: a follow applies a change only
//! when the copy is at the change's starting version, and a search first
//! reconciles a copy that is not at the rows' version.
//!
//! The copy is shared by every server on the database, so one server's
//! follow serves the others' searches. A reconcile reads the rows and the
//! copy without holding a lock (the rows may come over another connection),
//! then applies the difference in a short transaction only if the copy is
//! still at the version it read; otherwise it starts again.

use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use octopus_core::Result;
use octopus_core::vectors::{
    Nearest, Point, ScoredKey, SetState, VectorChange, VectorIndex, VectorKind, VectorRows,
    VectorSet, key_difference, read_points,
};
use sqlx_core::executor::Executor;
use sqlx_core::query::query;
use sqlx_core::query_builder::QueryBuilder;
use sqlx_core::row::Row;
use sqlx_postgres::{PgPool, Postgres};

use crate::error::Error;
use crate::rows::{Tx, int};
use crate::vectors::{DEFAULT_EF_SEARCH, DimensionIndexes, PgVector, ef_search};

/// Whether this index keeps a copy of `set` (see the module's note).
fn holds(set: &VectorSet) -> bool {
    set.kind == VectorKind::Knowledge
}

/// Attempts at applying a reconcile before searching a copy left behind.
const RECONCILE_ATTEMPTS: usize = 3;

/// The vector port on pgvector, in the database of `pool`.
pub struct PgvectorIndex {
    pool: PgPool,
    indexes: DimensionIndexes,
}

impl PgvectorIndex {
    /// Connects to its own database (migrated, as the store's), for vectors
    /// kept apart from the relational store;
    /// `PostgresStore::connect` makes one on its own pool instead.
    pub async fn connect(options: &crate::PostgresOptions) -> Result<Self, Error> {
        Ok(Self::new(crate::db::connect(options).await?))
    }

    pub(crate) fn new(pool: PgPool) -> Self {
        Self {
            pool,
            indexes: DimensionIndexes::default(),
        }
    }

    /// Locks the set's version row until `tx` ends, making it at version 0
    /// if missing, and returns the version.
    async fn lock_set(tx: &mut Tx<'_>, set: VectorSet) -> Result<i64, Error> {
        query(
            "INSERT INTO vector_sets (tenant_id, agent_id, kind, version) VALUES ($1, $2, $3, 0)
             ON CONFLICT DO NOTHING",
        )
        .bind(set.tenant.0)
        .bind(set.agent.0)
        .bind(set.kind.as_str())
        .execute(&mut **tx)
        .await?;
        Ok(sqlx_core::query_scalar::query_scalar(
            "SELECT version FROM vector_sets WHERE tenant_id = $1 AND agent_id = $2 AND kind = $3
             FOR UPDATE",
        )
        .bind(set.tenant.0)
        .bind(set.agent.0)
        .bind(set.kind.as_str())
        .fetch_one(&mut **tx)
        .await?)
    }

    async fn set_version(tx: &mut Tx<'_>, set: VectorSet, version: i64) -> Result<(), Error> {
        query(
            "UPDATE vector_sets SET version = $4 WHERE tenant_id = $1 AND agent_id = $2 AND kind = $3",
        )
        .bind(set.tenant.0)
        .bind(set.agent.0)
        .bind(set.kind.as_str())
        .bind(version)
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn remove(tx: &mut Tx<'_>, set: VectorSet, keys: &[u64]) -> Result<(), Error> {
        if keys.is_empty() {
            return Ok(());
        }
        let keys: Vec<i64> = keys.iter().map(|k| *k as i64).collect();
        query(
            "DELETE FROM vector_points
             WHERE tenant_id = $1 AND agent_id = $2 AND kind = $3 AND key = ANY($4)",
        )
        .bind(set.tenant.0)
        .bind(set.agent.0)
        .bind(set.kind.as_str())
        .bind(keys)
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// Adds points; ones already present are left as they are (a key's
    /// vector and fields never change).
    async fn add(tx: &mut Tx<'_>, set: VectorSet, points: &[Point]) -> Result<(), Error> {
        let mut sql = QueryBuilder::<Postgres>::new(
            "INSERT INTO vector_points (tenant_id, agent_id, kind, key, dimension, embedding, partition, labels, at) ",
        );
        // Bounded batches: PostgreSQL takes at most 65535 parameters a statement.
        for batch in points.chunks(1000) {
            sql.reset();
            sql.push_values(batch, |mut row, point| {
                let labels = serde_json::to_string(&point.fields.labels).unwrap_or_default();
                row.push_bind(set.tenant.0)
                    .push_bind(set.agent.0)
                    .push_bind(set.kind.as_str())
                    .push_bind(point.key as i64)
                    .push_bind(int(point.vector.len()))
                    .push_bind(PgVector(point.vector.clone()))
                    .push_bind(point.fields.partition.clone())
                    .push_bind(labels)
                    .push_unseparated("::jsonb")
                    .push_bind(point.fields.at);
            });
            sql.push(" ON CONFLICT DO NOTHING");
            sql.build().execute(&mut **tx).await?;
        }
        Ok(())
    }

    /// Applies `change` when the copy is at `before` (or, when `always_remove`,
    /// removes its keys whatever the copy's version).
    async fn apply(
        &self,
        set: VectorSet,
        before: SetState,
        after: i64,
        change: VectorChange,
        always_remove: bool,
    ) -> Result<(), Error> {
        self.indexes.ensure(&self.pool, before.dimension).await?;
        let mut tx = self.pool.begin().await?;
        let version = Self::lock_set(&mut tx, set).await?;
        if version != before.version {
            if always_remove {
                Self::remove(&mut tx, set, &change.removed).await?;
                tx.commit().await?;
            }
            return Ok(());
        }
        Self::remove(&mut tx, set, &change.removed).await?;
        Self::add(&mut tx, set, &change.added).await?;
        Self::set_version(&mut tx, set, after).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The copy's version and keys, read in one statement.
    async fn copy_of(&self, set: VectorSet) -> Result<(i64, HashSet<u64>), Error> {
        let row = query(
            "SELECT COALESCE((SELECT version FROM vector_sets
                              WHERE tenant_id = $1 AND agent_id = $2 AND kind = $3), 0) AS version,
                    ARRAY(SELECT key FROM vector_points
                          WHERE tenant_id = $1 AND agent_id = $2 AND kind = $3) AS keys",
        )
        .bind(set.tenant.0)
        .bind(set.agent.0)
        .bind(set.kind.as_str())
        .fetch_one(&self.pool)
        .await?;
        let keys: Vec<i64> = row.try_get("keys")?;
        Ok((
            row.try_get("version")?,
            keys.into_iter().map(i64::unsigned_abs).collect(),
        ))
    }

    /// The copy's version, and its nearest keys to the query, read by one
    /// statement.
    async fn nearest(
        &self,
        set: VectorSet,
        d: u32,
        query_: &Nearest,
    ) -> Result<(i64, Vec<ScoredKey>), Error> {
        // The cast to vector(d), the same as the index's expression, lets the
        // planner use the HNSW index of this dimension.
        // The set's three binds are $1–$3: the version's query binds them,
        // the search names them again.
        let mut sql = QueryBuilder::<Postgres>::new(
            "SELECT v.version, h.key, h.distance FROM (SELECT COALESCE((SELECT version FROM vector_sets
                 WHERE tenant_id = ",
        );
        sql.push_bind(set.tenant.0)
            .push(" AND agent_id = ")
            .push_bind(set.agent.0)
            .push(" AND kind = ")
            .push_bind(set.kind.as_str())
            .push(format!(
                "), 0) AS version) v LEFT JOIN LATERAL (SELECT key, embedding::vector({d}) <=> "
            ))
            .push_bind(PgVector(query_.vector.clone()))
            .push(format!(
                "::vector({d}) AS distance FROM vector_points WHERE dimension = {d}
                   AND tenant_id = $1 AND agent_id = $2 AND kind = $3"
            ));
        let filter = &query_.filter;
        if let Some(partition) = &filter.partition {
            sql.push(" AND partition = ").push_bind(partition.clone());
        }
        for (name, values) in &filter.any_of {
            sql.push(" AND labels ->> ")
                .push_bind(name.clone())
                .push(" = ANY(")
                .push_bind(values.clone())
                .push(")");
        }
        for (name, values) in &filter.none_of {
            sql.push(" AND NOT COALESCE(labels ->> ")
                .push_bind(name.clone())
                .push(" = ANY(")
                .push_bind(values.clone())
                .push("), false)");
        }
        if let Some(from) = filter.from {
            sql.push(" AND at >= ").push_bind(from);
        }
        if let Some(to) = filter.to {
            sql.push(" AND at < ").push_bind(to);
        }
        sql.push(" ORDER BY distance LIMIT ")
            .push_bind(i64::try_from(query_.top_k).unwrap_or(i64::MAX))
            .push(") h ON true ORDER BY h.distance, h.key");
        let ef = ef_search(u32::try_from(query_.top_k).unwrap_or(u32::MAX));
        let found = if ef == DEFAULT_EF_SEARCH {
            sql.build().fetch_all(&self.pool).await?
        } else {
            let mut tx = self.pool.begin().await?;
            tx.execute(format!("SET LOCAL hnsw.ef_search = {ef}").as_str())
                .await?;
            let found = sql.build().fetch_all(&mut *tx).await?;
            tx.commit().await?;
            found
        };
        let mut version = 0;
        let mut keys = Vec::with_capacity(found.len());
        for row in &found {
            version = row.try_get("version")?;
            // The version's row alone when nothing matched.
            if let Some(key) = row.try_get::<Option<i64>, _>("key")? {
                let distance: f64 = row.try_get("distance")?;
                keys.push(ScoredKey {
                    key: key.unsigned_abs(),
                    score: (1.0 - distance) as f32,
                });
            }
        }
        Ok((version, keys))
    }

    /// Brings the copy to the rows (read at `state` or later); false when
    /// the copy kept changing under it.
    async fn reconcile_copy(
        &self,
        set: VectorSet,
        state: SetState,
        rows: &dyn VectorRows,
    ) -> Result<bool> {
        self.indexes.ensure(&self.pool, state.dimension).await?;
        for _ in 0..RECONCILE_ATTEMPTS {
            let (read_at, held) = self.copy_of(set).await?;
            if read_at == state.version {
                return Ok(true);
            }
            let fields = rows.vector_fields(set).await?;
            let (stale, missing) = key_difference(&held, &fields);
            let mut added = Vec::with_capacity(missing.len());
            for batch in missing.chunks(500) {
                added.extend(read_points(rows, set, batch, &fields).await?);
            }
            let mut tx = self.pool.begin().await.map_err(Error::from)?;
            if Self::lock_set(&mut tx, set).await? != read_at {
                // A follow or another reconcile moved it meanwhile.
                continue;
            }
            Self::remove(&mut tx, set, &stale).await?;
            Self::add(&mut tx, set, &added).await?;
            Self::set_version(&mut tx, set, state.version).await?;
            tx.commit().await.map_err(Error::from)?;
            tracing::debug!(
                kind = set.kind.as_str(), tenant_id = %set.tenant, agent_id = %set.agent,
                removed = stale.len(), added = added.len(), "reconciled pgvector copy"
            );
            return Ok(true);
        }
        Ok(false)
    }
}

#[async_trait]
impl VectorIndex for PgvectorIndex {
    fn name(&self) -> &'static str {
        "pgvector"
    }

    async fn copy_versions(&self, sets: &[VectorSet]) -> Result<Vec<Option<i64>>> {
        let found = query("SELECT tenant_id, agent_id, kind, version FROM vector_sets")
            .fetch_all(&self.pool)
            .await
            .map_err(Error::from)?;
        let mut versions = HashMap::with_capacity(found.len());
        for row in &found {
            let tenant: uuid::Uuid = row.try_get("tenant_id").map_err(Error::from)?;
            let agent: uuid::Uuid = row.try_get("agent_id").map_err(Error::from)?;
            let kind: String = row.try_get("kind").map_err(Error::from)?;
            let version: i64 = row.try_get("version").map_err(Error::from)?;
            versions.insert((tenant, agent, kind), version);
        }
        Ok(sets
            .iter()
            .map(|set| {
                let key = (set.tenant.0, set.agent.0, set.kind.as_str().to_owned());
                holds(set).then(|| versions.get(&key).copied().unwrap_or(0))
            })
            .collect())
    }

    async fn reconcile(
        &self,
        set: VectorSet,
        state: SetState,
        rows: &dyn VectorRows,
    ) -> Result<bool> {
        if !holds(&set) {
            return Ok(true);
        }
        self.reconcile_copy(set, state, rows).await
    }

    async fn follow(
        &self,
        set: VectorSet,
        before: SetState,
        after: i64,
        change: VectorChange,
    ) -> Result<()> {
        if !holds(&set) {
            return Ok(());
        }
        Ok(self.apply(set, before, after, change, false).await?)
    }

    async fn search(
        &self,
        set: VectorSet,
        state: SetState,
        query_: &Nearest,
        rows: &dyn VectorRows,
    ) -> Result<Vec<ScoredKey>> {
        if !holds(&set) {
            return octopus_core::memory_rows::search_rows(set, query_, rows).await;
        }
        let d = state.dimension;
        query_.check_dimension(d)?;
        // One round trip when the copy is in step: the search answers with
        // the version it read.
        let (version, found) = self.nearest(set, d, query_).await?;
        if version == state.version {
            return Ok(found);
        }
        if !self.reconcile_copy(set, state, rows).await? {
            tracing::warn!(
                kind = set.kind.as_str(), tenant_id = %set.tenant, agent_id = %set.agent,
                "pgvector copy kept changing while reconciled; searched as it is"
            );
        }
        Ok(self.nearest(set, d, query_).await?.1)
    }

    async fn erase(
        &self,
        set: VectorSet,
        before: SetState,
        after: i64,
        change: VectorChange,
    ) -> Result<bool> {
        if !holds(&set) {
            return Ok(false);
        }
        // Deleted rows are reclaimed by the VACUUM that forgetting a user
        // runs; no saved copy has to be dropped.
        self.apply(set, before, after, change, true).await?;
        Ok(false)
    }
}
