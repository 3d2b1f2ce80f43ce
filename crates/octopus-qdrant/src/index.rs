//! The vector port over Qdrant.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use async_trait::async_trait;
use octopus_core::Result;
use octopus_core::vectors::{
    Nearest, Point, ScoredKey, SetState, VectorChange, VectorIndex, VectorRows, VectorSet,
    key_difference, read_points,
};
use qdrant_client::Qdrant;
use qdrant_client::qdrant::{
    CreateCollectionBuilder, CreateFieldIndexCollectionBuilder, DeletePointsBuilder, Distance,
    FieldType, Filter, KeywordIndexParamsBuilder, PointsIdsList, QueryPointsBuilder,
    ScrollPointsBuilder, SearchParamsBuilder, UpsertPointsBuilder, VectorParamsBuilder,
};
use tokio::sync::Mutex;

use crate::client::{BATCH, Client};
use crate::error::Error;
use crate::layout::{self, AT, KEY, Naming, PARTITION, SET, point_id};
use crate::options::{QdrantLayout, QdrantOptions};
use crate::versions::RECONCILING;

/// The oldest Qdrant this was tested against: conditional upserts
/// (`update_filter`, `update_mode`) came in 1.16.
const OLDEST_SUPPORTED: (u64, u64) = (1, 16);

/// Attempts at a reconcile before searching a copy left behind.
const RECONCILE_ATTEMPTS: usize = 3;

/// Graph search effort, as the embedded index's default: recall@10 about
/// 0.97 on real MiniLM vectors (`octopus-bench vectors`).
const HNSW_EF: u64 = 128;

/// The vector port on a Qdrant server.
pub struct QdrantVectors {
    client: Client,
    /// Collections known to exist, with their payload indexes.
    ready: Mutex<HashSet<String>>,
    /// Label fields indexed so far, by collection.
    indexed_labels: Mutex<HashSet<(String, String)>>,
    /// One change or reconcile of a set at a time in this process; between
    /// processes the versions' compare-and-swap keeps them apart.
    writing: Mutex<HashMap<VectorSet, Arc<Mutex<()>>>>,
    /// Sets whose change Qdrant missed while unreachable, with their
    /// dimension: reconciled by [`VectorIndex::catch_up`] once it answers.
    behind: std::sync::Mutex<HashMap<VectorSet, u32>>,
}

impl QdrantVectors {
    /// Connects, checks the server's version, and makes the versions'
    /// collection if it is missing. Fails with [`Error::Unreachable`] when
    /// the server does not answer, or [`Error::Unsupported`] for a version
    /// older than 1.16.
    pub async fn connect(options: &QdrantOptions) -> Result<Self, Error> {
        let qdrant = Qdrant::from_url(&options.url)
            .api_key(options.api_key.clone())
            .timeout(options.timeout)
            .connect_timeout(options.connect_timeout)
            .skip_compatibility_check()
            .build()
            .map_err(|e| Error::from_client(&options.url, e))?;
        let client = Client {
            qdrant,
            naming: Naming {
                layout: options.layout,
                prefix: options.prefix.clone(),
            },
            url: options.url.clone(),
        };
        let health = match client.call(client.qdrant.health_check()).await {
            Ok(health) => health,
            Err(error) if rest_port(&options.url).await => {
                tracing::debug!(%error, "Qdrant's health check failed on what answers as its REST port");
                return Err(Error::NotGrpc {
                    url: options.url.clone(),
                });
            }
            Err(error) => return Err(error),
        };
        if !supported(&health.version) {
            return Err(Error::Unsupported {
                url: options.url.clone(),
                found: health.version,
                needed: "1.16",
            });
        }
        let vectors = Self {
            client,
            ready: Mutex::default(),
            indexed_labels: Mutex::default(),
            writing: Mutex::default(),
            behind: std::sync::Mutex::default(),
        };
        let versions = vectors.client.naming.versions();
        vectors.ensure_collection(&versions, 1, false).await?;
        tracing::info!(url = %options.url, version = %health.version, layout = ?options.layout, "connected to Qdrant");
        Ok(vectors)
    }

    /// The layout this index writes.
    pub fn layout(&self) -> QdrantLayout {
        self.client.naming.layout
    }

    /// Every key `set` holds in Qdrant: what a test or an operator checks
    /// after deleting.
    pub async fn stored_keys(&self, set: VectorSet, dimension: u32) -> Result<Vec<u64>, Error> {
        let collection = self.client.naming.collection(set, dimension);
        if !self.exists(&collection).await? {
            return Ok(Vec::new());
        }
        let mut keys: Vec<u64> = self.held(set, &collection).await?.into_iter().collect();
        keys.sort_unstable();
        Ok(keys)
    }

    /// Waits until Qdrant has finished optimising (building the graphs of)
    /// every collection of this deployment's prefix, polling every
    /// `interval`: what a benchmark waits for before timing searches, since
    /// Qdrant indexes in the background after acknowledging writes.
    pub async fn wait_until_indexed(&self, interval: std::time::Duration) -> Result<(), Error> {
        use qdrant_client::qdrant::CollectionStatus;
        let prefix = &self.client.naming.prefix;
        let listed = self
            .client
            .call(self.client.qdrant.list_collections())
            .await?;
        for collection in listed.collections {
            if !collection.name.starts_with(prefix.as_str()) {
                continue;
            }
            loop {
                let info = self
                    .client
                    .call(self.client.qdrant.collection_info(&collection.name))
                    .await?;
                let status = info.result.map(|r| r.status);
                if status == Some(CollectionStatus::Green as i32) {
                    break;
                }
                tokio::time::sleep(interval).await;
            }
        }
        Ok(())
    }

    async fn exists(&self, collection: &str) -> Result<bool, Error> {
        if self.ready.lock().await.contains(collection) {
            return Ok(true);
        }
        self.client
            .call(self.client.qdrant.collection_exists(collection))
            .await
    }

    async fn lock_for(&self, set: VectorSet) -> Arc<Mutex<()>> {
        Arc::clone(self.writing.lock().await.entry(set).or_default())
    }

    /// Makes `collection` (cosine, of `dimension`) with its payload indexes,
    /// unless this process saw it already.
    async fn ensure_collection(
        &self,
        collection: &str,
        dimension: u32,
        points: bool,
    ) -> Result<(), Error> {
        if self.ready.lock().await.contains(collection) {
            return Ok(());
        }
        let exists = self
            .client
            .call(self.client.qdrant.collection_exists(collection))
            .await?;
        if !exists {
            let created = self
                .client
                .call(self.client.qdrant.create_collection(
                    CreateCollectionBuilder::new(collection).vectors_config(
                        VectorParamsBuilder::new(u64::from(dimension), Distance::Cosine),
                    ),
                ))
                .await;
            match created {
                Ok(_) => {}
                // Another server made it meanwhile.
                Err(Error::Refused(message)) if message.contains("already exists") => {}
                Err(error) => return Err(error),
            }
        }
        if points {
            if self.client.naming.layout == QdrantLayout::Shared {
                self.index_field(
                    collection,
                    SET,
                    FieldType::Keyword,
                    Some(KeywordIndexParamsBuilder::default().is_tenant(true)),
                )
                .await?;
            }
            self.index_field(collection, PARTITION, FieldType::Keyword, None)
                .await?;
            self.index_field(collection, AT, FieldType::Integer, None)
                .await?;
        }
        self.ready.lock().await.insert(collection.to_owned());
        Ok(())
    }

    /// Indexes a payload field; indexing one already indexed is a no-op.
    async fn index_field(
        &self,
        collection: &str,
        field: &str,
        kind: FieldType,
        keyword: Option<KeywordIndexParamsBuilder>,
    ) -> Result<(), Error> {
        let mut request =
            CreateFieldIndexCollectionBuilder::new(collection, field, kind).wait(true);
        if let Some(params) = keyword {
            request = request.field_index_params(params);
        }
        self.client
            .call(self.client.qdrant.create_field_index(request))
            .await?;
        Ok(())
    }

    /// Indexes the label fields a filter reads, the first time each is used.
    async fn index_labels(&self, collection: &str, names: &[&str]) -> Result<(), Error> {
        for name in names {
            let entry = (collection.to_owned(), (*name).to_owned());
            if self.indexed_labels.lock().await.contains(&entry) {
                continue;
            }
            self.index_field(
                collection,
                &layout::label_path(name),
                FieldType::Keyword,
                None,
            )
            .await?;
            self.indexed_labels.lock().await.insert(entry);
        }
        Ok(())
    }

    async fn upsert(
        &self,
        collection: &str,
        set: VectorSet,
        points: &[Point],
    ) -> Result<(), Error> {
        for batch in points.chunks(BATCH) {
            let points = batch
                .iter()
                .map(|p| self.client.naming.point(set, p))
                .collect::<Vec<_>>();
            self.client
                .call(
                    self.client
                        .qdrant
                        .upsert_points(UpsertPointsBuilder::new(collection, points).wait(true)),
                )
                .await?;
        }
        Ok(())
    }

    async fn delete(&self, collection: &str, set: VectorSet, keys: &[u64]) -> Result<(), Error> {
        for batch in keys.chunks(BATCH) {
            let ids = batch.iter().map(|&key| point_id(set, key)).collect();
            self.client
                .call(
                    self.client.qdrant.delete_points(
                        DeletePointsBuilder::new(collection)
                            .points(PointsIdsList { ids })
                            .wait(true),
                    ),
                )
                .await?;
        }
        Ok(())
    }

    /// The keys of every point of `set` in Qdrant.
    async fn held(&self, set: VectorSet, collection: &str) -> Result<HashSet<u64>, Error> {
        let mut keys = HashSet::new();
        let filter = Filter {
            must: self.client.naming.set_condition(set).into_iter().collect(),
            ..Filter::default()
        };
        let scroll = ScrollPointsBuilder::new(collection)
            .filter(filter)
            .with_payload(qdrant_client::qdrant::PayloadIncludeSelector {
                fields: vec![KEY.to_owned()],
            });
        self.client
            .scroll_all(scroll, |point| {
                keys.insert(layout::key_of(&point.payload)?);
                Ok(())
            })
            .await?;
        Ok(keys)
    }

    /// Applies a change; when Qdrant cannot be reached, notes the set as
    /// left behind and lets the write it follows stand.
    async fn apply_or_fall_behind(
        &self,
        set: VectorSet,
        before: SetState,
        after: i64,
        change: VectorChange,
        always_remove: bool,
    ) -> Result<()> {
        match self.apply(set, before, after, change, always_remove).await {
            Err(error) if error.is_unreachable() => {
                // Once per set while Qdrant is away, not once per change.
                let newly_behind = self.behind_sets().insert(set, before.dimension).is_none();
                if newly_behind {
                    tracing::warn!(%error, kind = set.kind.as_str(), tenant_id = %set.tenant, agent_id = %set.agent,
                        "Qdrant missed a change; it catches up when it answers again");
                } else {
                    tracing::debug!(%error, kind = set.kind.as_str(), tenant_id = %set.tenant, agent_id = %set.agent,
                        "Qdrant missed another change");
                }
                Ok(())
            }
            other => Ok(other?),
        }
    }

    fn behind_sets(&self) -> std::sync::MutexGuard<'_, HashMap<VectorSet, u32>> {
        self.behind.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies a change when the copy is at `before` (with `always_remove`,
    /// removes the change's keys whatever the copy's version).
    async fn apply(
        &self,
        set: VectorSet,
        before: SetState,
        after: i64,
        change: VectorChange,
        always_remove: bool,
    ) -> Result<(), Error> {
        let collection = self.client.naming.collection(set, before.dimension);
        self.ensure_collection(&collection, before.dimension, true)
            .await?;
        let lock = self.lock_for(set).await;
        let _writing = lock.lock().await;
        let current = self.client.read_version(set).await?;
        if current.version != before.version {
            if always_remove {
                self.delete(&collection, set, &change.removed).await?;
            }
            return Ok(());
        }
        self.delete(&collection, set, &change.removed).await?;
        self.upsert(&collection, set, &change.added).await?;
        self.client
            .swap_version(set, before.dimension, &current, after)
            .await?;
        Ok(())
    }

    /// Brings the copy to the rows (read at `state` or later); false when
    /// other writers kept changing it.
    async fn reconcile_copy(
        &self,
        set: VectorSet,
        state: SetState,
        rows: &dyn VectorRows,
    ) -> Result<bool> {
        let collection = self.client.naming.collection(set, state.dimension);
        // A catch-up reaches here without a search having made the collection.
        self.ensure_collection(&collection, state.dimension, true)
            .await?;
        let lock = self.lock_for(set).await;
        let _writing = lock.lock().await;
        for _ in 0..RECONCILE_ATTEMPTS {
            let current = self.client.read_version(set).await?;
            if current.version == state.version {
                return Ok(true);
            }
            let Some(reconciling) = self
                .client
                .swap_version(set, state.dimension, &current, RECONCILING)
                .await?
            else {
                continue;
            };
            let held = self.held(set, &collection).await?;
            let fields = rows.vector_fields(set).await?;
            let (stale, missing) = key_difference(&held, &fields);
            for batch in missing.chunks(500) {
                let added = read_points(rows, set, batch, &fields).await?;
                self.upsert(&collection, set, &added).await?;
            }
            self.delete(&collection, set, &stale).await?;
            let settled = self
                .client
                .swap_version(set, state.dimension, &reconciling, state.version)
                .await?
                .is_some();
            tracing::debug!(
                kind = set.kind.as_str(), tenant_id = %set.tenant, agent_id = %set.agent,
                removed = stale.len(), added = missing.len(), settled, "reconciled Qdrant copy"
            );
            return Ok(settled);
        }
        Ok(false)
    }

    async fn nearest(
        &self,
        set: VectorSet,
        collection: &str,
        query: &Nearest,
    ) -> Result<Vec<ScoredKey>, Error> {
        let filter = layout::search_filter(&self.client.naming, set, &query.filter);
        let found = self
            .client
            .call(
                self.client.qdrant.query(
                    QueryPointsBuilder::new(collection)
                        .query(query.vector.clone())
                        .filter(filter)
                        .limit(query.top_k as u64)
                        .params(
                            SearchParamsBuilder::default().hnsw_ef(HNSW_EF.max(query.top_k as u64)),
                        )
                        .with_payload(qdrant_client::qdrant::PayloadIncludeSelector {
                            fields: vec![KEY.to_owned()],
                        }),
                ),
            )
            .await?;
        let mut hits = found
            .result
            .iter()
            .map(|point| {
                Ok(ScoredKey {
                    key: layout::key_of(&point.payload)?,
                    score: point.score,
                })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        // Equal scores in key order, as the other backends give them.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.key.cmp(&b.key)));
        Ok(hits)
    }
}

/// Whether a server version (`1.18.0`) is at least [`OLDEST_SUPPORTED`].
fn supported(version: &str) -> bool {
    let mut parts = version.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
    let major = parts.next().unwrap_or(0);
    let minor = parts.next().unwrap_or(0);
    (major, minor) >= OLDEST_SUPPORTED
}

#[async_trait]
impl VectorIndex for QdrantVectors {
    fn name(&self) -> &'static str {
        "qdrant"
    }

    /// A follow that cannot reach Qdrant leaves the copy behind, and the
    /// write it follows stands: it catches up when Qdrant answers again.
    async fn follow(
        &self,
        set: VectorSet,
        before: SetState,
        after: i64,
        change: VectorChange,
    ) -> Result<()> {
        self.apply_or_fall_behind(set, before, after, change, false)
            .await
    }

    async fn search(
        &self,
        set: VectorSet,
        state: SetState,
        query: &Nearest,
        rows: &dyn VectorRows,
    ) -> Result<Vec<ScoredKey>> {
        let d = state.dimension;
        query.check_dimension(d)?;
        let collection = self.client.naming.collection(set, d);
        self.ensure_collection(&collection, d, true).await?;
        let labels: Vec<&str> = query
            .filter
            .any_of
            .iter()
            .chain(&query.filter.none_of)
            .map(|(name, _)| name.as_str())
            .collect();
        self.index_labels(&collection, &labels).await?;
        let (version, found) = tokio::join!(
            self.client.read_version(set),
            self.nearest(set, &collection, query)
        );
        if version?.version == state.version {
            return Ok(found?);
        }
        if !self.reconcile_copy(set, state, rows).await? {
            tracing::warn!(
                kind = set.kind.as_str(), tenant_id = %set.tenant, agent_id = %set.agent,
                "Qdrant copy kept changing while reconciled; searched as it is"
            );
        }
        Ok(self.nearest(set, &collection, query).await?)
    }

    async fn copy_versions(&self, sets: &[VectorSet]) -> Result<Vec<Option<i64>>> {
        // The version points may name another deployment's sets too (a
        // Qdrant shared by several): only the sets asked about count.
        let recorded: HashMap<VectorSet, i64> = self
            .client
            .recorded_sets()
            .await?
            .into_iter()
            .map(|copy| (copy.set, copy.version))
            .collect();
        Ok(sets
            .iter()
            .map(|set| Some(recorded.get(set).copied().unwrap_or(0)))
            .collect())
    }

    async fn reconcile(
        &self,
        set: VectorSet,
        state: SetState,
        rows: &dyn VectorRows,
    ) -> Result<bool> {
        self.reconcile_copy(set, state, rows).await
    }

    async fn erase(
        &self,
        set: VectorSet,
        before: SetState,
        after: i64,
        change: VectorChange,
    ) -> Result<bool> {
        // Qdrant deletes for real; nothing saved elsewhere to drop. While it
        // is unreachable the erased vectors stay in it until it catches up
        // (or a search of the set reconciles it).
        self.apply_or_fall_behind(set, before, after, change, true)
            .await?;
        Ok(false)
    }

    async fn catch_up(&self, rows: &dyn VectorRows) -> Result<usize> {
        let behind: Vec<(VectorSet, u32)> =
            self.behind_sets().iter().map(|(s, d)| (*s, *d)).collect();
        let mut caught_up = 0;
        for (set, dimension) in behind {
            // A set whose rows are all gone is reconciled to nothing.
            let state = rows.vector_state(set).await?.unwrap_or(SetState {
                dimension,
                version: 0,
            });
            if self.reconcile_copy(set, state, rows).await? {
                self.behind_sets().remove(&set);
                caught_up += 1;
            }
        }
        Ok(caught_up)
    }
}

/// Whether what listens at `url` answers plain HTTP as Qdrant's REST API
/// does (its root names Qdrant): a gRPC client pointed there fails in ways
/// that say nothing of why ("operation was canceled", "h2 protocol error").
async fn rest_port(url: &str) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Some(address) = url
        .strip_prefix("http://")
        .map(|rest| rest.split('/').next().unwrap_or(rest).to_owned())
    else {
        return false;
    };
    let probe = async {
        let mut stream = tokio::net::TcpStream::connect(&address).await.ok()?;
        stream
            .write_all(b"GET / HTTP/1.0\r\nHost: qdrant\r\n\r\n")
            .await
            .ok()?;
        let mut answer = vec![0u8; 4096];
        let mut read = 0;
        while read < answer.len() {
            match stream.read(&mut answer[read..]).await.ok()? {
                0 => break,
                n => read += n,
            }
        }
        let answer = String::from_utf8_lossy(&answer[..read]).to_ascii_lowercase();
        Some(answer.starts_with("http/1.") && answer.contains("qdrant"))
    };
    tokio::time::timeout(std::time::Duration::from_secs(2), probe)
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::supported;

    #[test]
    fn versions_from_1_16_on_are_supported() {
        assert!(supported("1.18.0"));
        assert!(supported("1.16.0"));
        assert!(supported("2.0.0"));
        assert!(!supported("1.15.3"));
        assert!(!supported("garbage"));
    }
}
