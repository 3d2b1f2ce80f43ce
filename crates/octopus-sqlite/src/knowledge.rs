//! Semantic memory on SQLite: chunks in `knowledge_chunks`, searched through an
//! in-memory vector index per collection.
//!
//! The index is derived data, and SQLite is the truth. Each collection row has a
//! `version`, bumped in the transaction of every change. This process's own
//! writes update the index in place, under the collection's lock, in step with
//! that transaction. When the version differs from the one the index reflects
//! (after a restart, a crash, or a change by another process), the index is
//! *reconciled*: the chunk keys are read from SQLite, keys the index has but
//! SQLite no longer does are removed, and missing ones are added with their
//! embeddings. Chunk keys (`seq`, AUTOINCREMENT) are never reused and a chunk's
//! embedding never changes, so equal key sets mean equal indexes.
//!
//! Collections of at least `hnsw_threshold` chunks use an HNSW graph, saved
//! under `data_dir/vectors/` after it is built and after every
//! `max(1000, size / 10)` changes. A restart loads the saved graph and
//! reconciles only the difference; a graph that is missing or does not load
//! (a crash mid-save leaves none, never a torn one) is rebuilt from SQLite.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use async_trait::async_trait;
use octopus_core::knowledge::{
    Chunk, ChunkFilter, ChunkHit, ChunkMetadata, Collection, KeywordQuery, NewChunk, VectorQuery,
    check_dimension, collection_name,
};
use octopus_core::store::KnowledgeStore;
use octopus_core::{AgentId, Error as DomainError, Result, TenantId};
use octopus_vector::VectorIndex;
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params};
use uuid::Uuid;

use crate::SqliteStore;
use crate::codec::{self, micros};
use crate::db::lock;
use crate::error::Result as StoreResult;
use crate::rows::{self, Filters};

type CollectionKey = (TenantId, AgentId);

/// Counts as more changes than any save threshold: a new graph is saved at once.
const NEVER_SAVED: usize = usize::MAX;

/// The in-memory indexes of the collections searched so far.
pub(crate) struct KnowledgeIndexes {
    collections: Mutex<HashMap<CollectionKey, Arc<RwLock<LoadedIndex>>>>,
    /// Where graphs are saved.
    dir: PathBuf,
    hnsw_threshold: usize,
}

/// One collection's index and the filterable metadata of its chunks.
struct LoadedIndex {
    /// The collection version the index reflects; `None` until built.
    version: Option<i64>,
    index: VectorIndex,
    filters: HashMap<u64, FilterFields>,
    /// Changes since the graph was last saved; [`NEVER_SAVED`] for a new graph.
    unsaved: usize,
}

struct FilterFields {
    metadata: ChunkMetadata,
}

impl KnowledgeIndexes {
    pub(crate) fn new(dir: PathBuf, hnsw_threshold: usize) -> Self {
        Self {
            collections: Mutex::default(),
            dir,
            hnsw_threshold,
        }
    }

    fn get(&self, key: CollectionKey, dimension: usize) -> Arc<RwLock<LoadedIndex>> {
        let mut collections = lock(&self.collections);
        Arc::clone(collections.entry(key).or_insert_with(|| {
            Arc::new(RwLock::new(LoadedIndex {
                version: None,
                index: VectorIndex::exact(dimension),
                filters: HashMap::new(),
                unsaved: 0,
            }))
        }))
    }

    fn graph_dir(&self, (tenant, agent): CollectionKey) -> PathBuf {
        self.dir.join(format!("{}-{}", tenant.0, agent.0))
    }

    /// Switches a grown collection to a graph, and saves the graph when enough
    /// has changed since it was last saved. A failed save costs only a longer
    /// rebuild after the next restart, so it is logged, not returned.
    fn after_change(&self, key: CollectionKey, loaded: &mut LoadedIndex) -> StoreResult<()> {
        if loaded
            .index
            .switch_if_large(self.hnsw_threshold)
            .map_err(index_error)?
        {
            loaded.unsaved = NEVER_SAVED;
        }
        if loaded.index.is_hnsw() && loaded.unsaved >= (loaded.index.len() / 10).max(1000) {
            let dir = self.graph_dir(key);
            let saved = std::fs::create_dir_all(&self.dir)
                .map_err(|e| e.to_string())
                .and_then(|()| loaded.index.save(&dir).map_err(|e| e.to_string()));
            match saved {
                Ok(()) => loaded.unsaved = 0,
                Err(error) => {
                    tracing::warn!(%error, path = %dir.display(), "vector index not saved")
                }
            }
        }
        Ok(())
    }
}

fn index_error(error: octopus_vector::HnswError) -> crate::Error {
    crate::Error::VectorIndex(error.to_string())
}

struct CollectionRow {
    dimension: u32,
    model: String,
    version: i64,
    chunk_count: i64,
    created_at: i64,
}

fn collection_row(
    conn: &Connection,
    tenant: TenantId,
    agent: AgentId,
) -> StoreResult<Option<CollectionRow>> {
    Ok(conn
        .prepare_cached(
            "SELECT dimension, model, version, chunk_count, created_at FROM knowledge_collections
             WHERE tenant_id = ?1 AND agent_id = ?2",
        )?
        .query_row([tenant.0.as_bytes(), agent.0.as_bytes()], |row| {
            Ok(CollectionRow {
                dimension: row.get(0)?,
                model: row.get(1)?,
                version: row.get(2)?,
                chunk_count: row.get(3)?,
                created_at: row.get(4)?,
            })
        })
        .optional()?)
}

fn require_collection(
    conn: &Connection,
    tenant: TenantId,
    agent: AgentId,
) -> StoreResult<CollectionRow> {
    collection_row(conn, tenant, agent)?
        .ok_or_else(|| DomainError::not_found("collection", collection_name(agent, tenant)).into())
}

fn collection(tenant: TenantId, agent: AgentId, row: CollectionRow) -> StoreResult<Collection> {
    Ok(Collection {
        name: collection_name(agent, tenant),
        agent_id: agent,
        dimension: row.dimension,
        model: row.model,
        chunk_count: row.chunk_count.unsigned_abs(),
        created_at: codec::instant(row.created_at)?,
    })
}

/// Marks a change to the collection: a new version, and the chunk count moved by
/// `added - removed`. Returns the new version.
fn bump_version(
    conn: &Connection,
    tenant: TenantId,
    agent: AgentId,
    change: &IndexChange,
) -> StoreResult<i64> {
    let delta = change.added.len() as i64 - change.removed.len() as i64;
    Ok(conn.query_row(
        "UPDATE knowledge_collections SET version = version + 1, chunk_count = chunk_count + ?3
         WHERE tenant_id = ?1 AND agent_id = ?2 RETURNING version",
        params![tenant.0.as_bytes(), agent.0.as_bytes(), delta],
        |r| r.get(0),
    )?)
}

/// Inserts chunks; returns their seqs in order.
fn insert_chunks(
    conn: &Connection,
    tenant: TenantId,
    agent: AgentId,
    chunks: &[NewChunk],
) -> StoreResult<Vec<i64>> {
    let mut insert = conn.prepare_cached(
        "INSERT INTO knowledge_chunks (id, tenant_id, agent_id, source, chunk_index, category, heading, content, embedding, indexed_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) RETURNING seq",
    )?;
    let mut seqs = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        let m = &chunk.metadata;
        seqs.push(insert.query_row(
            params![
                chunk.id.as_bytes(),
                tenant.0.as_bytes(),
                agent.0.as_bytes(),
                m.source,
                m.chunk_index,
                m.category,
                m.heading,
                chunk.content,
                codec::embedding_bytes(&chunk.embedding),
                micros(m.indexed_at)
            ],
            |r| r.get(0),
        )?);
    }
    Ok(seqs)
}

fn check_chunks(chunks: &[NewChunk], dimension: u32) -> StoreResult<()> {
    for (i, chunk) in chunks.iter().enumerate() {
        check_dimension(
            &format!("chunks[{i}].embedding"),
            &chunk.embedding,
            dimension,
        )?;
    }
    Ok(())
}

/// Brings `loaded` to the collection's current rows: see the module comment.
fn reconcile(
    conn: &mut Connection,
    indexes: &KnowledgeIndexes,
    (tenant, agent): CollectionKey,
    loaded: &mut LoadedIndex,
) -> StoreResult<()> {
    let tx = conn.transaction()?;
    let row = require_collection(&tx, tenant, agent)?;
    let dimension = row.dimension as usize;
    let mut filters = HashMap::new();
    {
        let mut stmt = tx.prepare_cached(
            "SELECT seq, source, chunk_index, category, heading, indexed_at
             FROM knowledge_chunks WHERE tenant_id = ?1 AND agent_id = ?2",
        )?;
        let mut rows = stmt.query([tenant.0.as_bytes(), agent.0.as_bytes()])?;
        while let Some(row) = rows.next()? {
            let seq: i64 = row.get("seq")?;
            filters.insert(
                seq as u64,
                FilterFields {
                    metadata: metadata_from_row(row)?,
                },
            );
        }
    }
    if loaded.version.is_none() && filters.len() >= indexes.hnsw_threshold {
        let dir = indexes.graph_dir((tenant, agent));
        loaded.index = match VectorIndex::load(&dir, dimension) {
            Ok(index) => index,
            Err(error) => {
                if dir.exists() {
                    tracing::warn!(%error, path = %dir.display(), "saved vector index unusable; rebuilding it");
                }
                // Large already: build the graph directly from the rows.
                loaded.unsaved = NEVER_SAVED;
                VectorIndex::graph(dimension).map_err(index_error)?
            }
        };
    }
    let stale: Vec<u64> = loaded
        .index
        .keys()
        .into_iter()
        .filter(|key| !filters.contains_key(key))
        .collect();
    for key in &stale {
        loaded.index.remove(*key).map_err(index_error)?;
    }
    let missing: Vec<i64> = filters
        .keys()
        .filter(|key| !loaded.index.contains(**key))
        .map(|key| *key as i64)
        .collect();
    let mut vectors: Vec<(u64, Vec<f32>)> = Vec::with_capacity(missing.len());
    for batch in missing.chunks(500) {
        let placeholders = vec!["?"; batch.len()].join(", ");
        let mut stmt = tx.prepare(&format!(
            "SELECT seq, embedding FROM knowledge_chunks WHERE seq IN ({placeholders})"
        ))?;
        let mut rows = stmt.query(rusqlite::params_from_iter(batch))?;
        while let Some(row) = rows.next()? {
            let seq: i64 = row.get(0)?;
            let bytes: Vec<u8> = row.get(1)?;
            vectors.push((seq as u64, codec::embedding_from(&bytes)?));
        }
    }
    tx.commit()?;
    let items: Vec<(u64, &[f32])> = vectors.iter().map(|(k, v)| (*k, v.as_slice())).collect();
    loaded.index.insert_many(&items).map_err(index_error)?;
    loaded.filters = filters;
    loaded.version = Some(row.version);
    loaded.unsaved = loaded.unsaved.saturating_add(stale.len() + missing.len());
    indexes.after_change((tenant, agent), loaded)?;
    tracing::debug!(
        tenant_id = %tenant, agent_id = %agent, chunks = loaded.index.len(),
        removed = stale.len(), added = missing.len(), graph = loaded.index.is_hnsw(),
        "reconciled knowledge index"
    );
    Ok(())
}

fn metadata_from_row(row: &rusqlite::Row<'_>) -> StoreResult<ChunkMetadata> {
    Ok(ChunkMetadata {
        source: row.get("source")?,
        chunk_index: row.get("chunk_index")?,
        category: row.get("category")?,
        heading: row.get("heading")?,
        indexed_at: rows::time(row, "indexed_at")?,
    })
}

fn matches(filter: &ChunkFilter, fields: Option<&FilterFields>) -> bool {
    fields.is_some_and(|f| filter.matches(&f.metadata))
}

impl SqliteStore {
    /// Runs a change to a collection's chunks: under the collection's index lock,
    /// in one transaction that also bumps the version; then applies the change to
    /// the index when it was current, or leaves it to be rebuilt.
    async fn change_chunks<F>(&self, tenant: TenantId, agent: AgentId, change: F) -> Result<()>
    where
        F: FnOnce(&Connection, &CollectionRow) -> StoreResult<IndexChange> + Send + 'static,
    {
        let indexes = Arc::clone(&self.knowledge);
        self.db
            .write(move |conn| {
                let tx =
                    conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let row = require_collection(&tx, tenant, agent)?;
                let loaded = indexes.get((tenant, agent), row.dimension as usize);
                let mut loaded = loaded.write().unwrap_or_else(|p| p.into_inner());
                let applied = change(&tx, &row)?;
                let version = bump_version(&tx, tenant, agent, &applied)?;
                tx.commit()?;
                if loaded.version == Some(row.version) {
                    // Committed: from here a failure leaves the index behind
                    // SQLite, and the next search reconciles it.
                    loaded.version = None;
                    loaded.unsaved = loaded
                        .unsaved
                        .saturating_add(applied.removed.len() + applied.added.len());
                    for seq in applied.removed {
                        loaded.index.remove(seq as u64).map_err(index_error)?;
                        loaded.filters.remove(&(seq as u64));
                    }
                    let items: Vec<(u64, &[f32])> = applied
                        .added
                        .iter()
                        .map(|(seq, chunk)| (*seq as u64, chunk.embedding.as_slice()))
                        .collect();
                    loaded.index.insert_many(&items).map_err(index_error)?;
                    for (seq, chunk) in applied.added {
                        loaded.filters.insert(
                            seq as u64,
                            FilterFields {
                                metadata: chunk.metadata,
                            },
                        );
                    }
                    loaded.version = Some(version);
                    indexes.after_change((tenant, agent), &mut loaded)?;
                }
                Ok(())
            })
            .await
    }
}

/// What a change did to the rows, for the index to follow.
struct IndexChange {
    removed: Vec<i64>,
    added: Vec<(i64, NewChunk)>,
}

#[async_trait]
impl KnowledgeStore for SqliteStore {
    async fn create_collection(
        &self,
        tenant: TenantId,
        agent: AgentId,
        dimension: u32,
        model: &str,
    ) -> Result<Collection> {
        if dimension == 0 || dimension > 16_384 {
            return Err(DomainError::invalid(
                "dimension",
                "must be between 1 and 16384",
            ));
        }
        let model = model.to_owned();
        self.db
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let agent_exists: bool = tx.query_row(
                    "SELECT EXISTS (SELECT 1 FROM agents WHERE id = ?1 AND tenant_id = ?2)",
                    [agent.0.as_bytes(), tenant.0.as_bytes()],
                    |r| r.get(0),
                )?;
                if !agent_exists {
                    return Err(DomainError::not_found(AgentId::KIND, agent).into());
                }
                if let Some(existing) = collection_row(&tx, tenant, agent)? {
                    if existing.dimension != dimension || existing.model != model {
                        return Err(DomainError::conflict(
                            "collection_mismatch",
                            format!(
                                "the collection holds {}-dimensional vectors of {}, not {dimension}-dimensional vectors of {model}",
                                existing.dimension, existing.model
                            ),
                        )
                        .into());
                    }
                } else {
                    tx.execute(
                        "INSERT INTO knowledge_collections (tenant_id, agent_id, dimension, model, created_at)
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                        params![tenant.0.as_bytes(), agent.0.as_bytes(), dimension, model, micros(octopus_core::now())],
                    )?;
                }
                let row = require_collection(&tx, tenant, agent)?;
                let created = collection(tenant, agent, row)?;
                tx.commit()?;
                Ok(created)
            })
            .await
    }

    async fn collection(&self, tenant: TenantId, agent: AgentId) -> Result<Option<Collection>> {
        self.db
            .read(move |conn| match collection_row(conn, tenant, agent)? {
                Some(row) => Ok(Some(collection(tenant, agent, row)?)),
                None => Ok(None),
            })
            .await
    }

    async fn store_chunks(
        &self,
        tenant: TenantId,
        agent: AgentId,
        chunks: Vec<NewChunk>,
    ) -> Result<()> {
        self.change_chunks(tenant, agent, move |tx, row| {
            check_chunks(&chunks, row.dimension)?;
            let seqs = insert_chunks(tx, tenant, agent, &chunks)?;
            Ok(IndexChange {
                removed: Vec::new(),
                added: seqs.into_iter().zip(chunks).collect(),
            })
        })
        .await
    }

    async fn replace_source(
        &self,
        tenant: TenantId,
        agent: AgentId,
        source: &str,
        chunks: Vec<NewChunk>,
    ) -> Result<()> {
        if let Some(stray) = chunks.iter().position(|c| c.metadata.source != source) {
            return Err(DomainError::invalid(
                format!("chunks[{stray}].source"),
                format!("must be `{source}`"),
            ));
        }
        let source = source.to_owned();
        self.change_chunks(tenant, agent, move |tx, row| {
            check_chunks(&chunks, row.dimension)?;
            let mut delete = tx.prepare_cached(
                "DELETE FROM knowledge_chunks WHERE tenant_id = ?1 AND agent_id = ?2 AND source = ?3 RETURNING seq",
            )?;
            let removed: Vec<i64> = rows::collect(
                &mut delete,
                params![tenant.0.as_bytes(), agent.0.as_bytes(), source],
                |r| Ok(r.get(0)?),
            )?;
            drop(delete);
            let seqs = insert_chunks(tx, tenant, agent, &chunks)?;
            Ok(IndexChange { removed, added: seqs.into_iter().zip(chunks).collect() })
        })
        .await
    }

    async fn search_chunks(
        &self,
        tenant: TenantId,
        agent: AgentId,
        query: &VectorQuery,
    ) -> Result<Vec<ChunkHit>> {
        let query = query.clone();
        let indexes = Arc::clone(&self.knowledge);
        self.db
            .read(move |conn| {
                let row = require_collection(conn, tenant, agent)?;
                query.validate(row.dimension)?;
                let loaded = indexes.get((tenant, agent), row.dimension as usize);
                let stale =
                    loaded.read().unwrap_or_else(|p| p.into_inner()).version != Some(row.version);
                if stale {
                    let mut writable = loaded.write().unwrap_or_else(|p| p.into_inner());
                    if writable.version != Some(row.version) {
                        reconcile(conn, &indexes, (tenant, agent), &mut writable)?;
                    }
                }
                let neighbours = {
                    let loaded = loaded.read().unwrap_or_else(|p| p.into_inner());
                    loaded
                        .index
                        .search(&query.vector, query.top_k as usize, |key| {
                            matches(&query.filter, loaded.filters.get(&key))
                        })
                        .map_err(index_error)?
                };
                let neighbours: Vec<_> = neighbours
                    .into_iter()
                    .filter(|n| n.score >= query.min_score)
                    .collect();
                fetch_hits(conn, tenant, agent, &neighbours)
            })
            .await
    }

    async fn keyword_search_chunks(
        &self,
        tenant: TenantId,
        agent: AgentId,
        query: &KeywordQuery,
    ) -> Result<Vec<ChunkHit>> {
        if octopus_core::search::search_terms(&query.text).is_empty() {
            return Err(DomainError::invalid(
                "query",
                "must contain at least one word",
            ));
        }
        if query.top_k == 0 || query.top_k > octopus_core::knowledge::MAX_TOP_K {
            return Err(DomainError::invalid(
                "top_k",
                format!(
                    "must be between 1 and {}",
                    octopus_core::knowledge::MAX_TOP_K
                ),
            ));
        }
        let query = query.clone();
        self.db
            .read(move |conn| {
                require_collection(conn, tenant, agent)?;
                let mut filters = Filters::default();
                filters.push("knowledge_fts MATCH ?", Value::Text(crate::search::fts_query(&query.text)));
                filters.push("c.tenant_id = ?", rows::blob(&tenant.0));
                filters.push("c.agent_id = ?", rows::blob(&agent.0));
                if let Some(source) = query.filter.source {
                    filters.push("c.source = ?", Value::Text(source));
                }
                if let Some(category) = query.filter.category {
                    filters.push("c.category = ?", Value::Text(category));
                }
                if let Some(from) = query.filter.indexed_from {
                    filters.push("c.indexed_at >= ?", Value::Integer(micros(from)));
                }
                if let Some(to) = query.filter.indexed_to {
                    filters.push("c.indexed_at < ?", Value::Integer(micros(to)));
                }
                let limit = filters.bind(Value::Integer(query.top_k.into()));
                let sql = format!(
                    "SELECT c.id AS id, c.source AS source, c.chunk_index AS chunk_index, c.category AS category,
                            c.heading AS heading, c.content AS content, c.indexed_at AS indexed_at,
                            bm25(knowledge_fts) AS rank
                     FROM knowledge_fts JOIN knowledge_chunks c ON c.seq = knowledge_fts.rowid
                     {} ORDER BY rank LIMIT {limit}",
                    filters.where_sql()
                );
                let mut stmt = conn.prepare_cached(&sql)?;
                rows::collect(&mut stmt, rusqlite::params_from_iter(filters.params), |row| {
                    let rank: f64 = row.get("rank")?;
                    Ok(ChunkHit {
                        // bm25() is lower-is-better.
                        score: -rank as f32,
                        chunk: Chunk {
                            id: rows::uuid(row, "id")?,
                            agent_id: agent,
                            content: row.get("content")?,
                            metadata: metadata_from_row(row)?,
                        },
                    })
                })
            })
            .await
    }

    async fn delete_chunk(&self, tenant: TenantId, agent: AgentId, id: Uuid) -> Result<()> {
        self.change_chunks(tenant, agent, move |tx, _| {
            let seq: Option<i64> = tx
                .query_row(
                    "DELETE FROM knowledge_chunks WHERE id = ?1 AND tenant_id = ?2 AND agent_id = ?3 RETURNING seq",
                    [id.as_bytes(), tenant.0.as_bytes(), agent.0.as_bytes()],
                    |r| r.get(0),
                )
                .optional()?;
            match seq {
                Some(seq) => Ok(IndexChange { removed: vec![seq], added: Vec::new() }),
                None => Err(DomainError::not_found("chunk", id).into()),
            }
        })
        .await
    }
}

/// The chunks of `neighbours`, in their order, read in one query.
fn fetch_hits(
    conn: &Connection,
    tenant: TenantId,
    agent: AgentId,
    neighbours: &[octopus_vector::Neighbour],
) -> StoreResult<Vec<ChunkHit>> {
    if neighbours.is_empty() {
        return Ok(Vec::new());
    }
    let placeholders = vec!["?"; neighbours.len()].join(", ");
    let sql = format!(
        "SELECT seq, id, source, chunk_index, category, heading, content, indexed_at FROM knowledge_chunks
         WHERE tenant_id = ? AND agent_id = ? AND seq IN ({placeholders})"
    );
    let mut values: Vec<rusqlite::types::Value> = vec![rows::blob(&tenant.0), rows::blob(&agent.0)];
    values.extend(
        neighbours
            .iter()
            .map(|n| rusqlite::types::Value::Integer(n.key as i64)),
    );
    let mut by_seq: HashMap<i64, Chunk> = HashMap::new();
    let mut stmt = conn.prepare(&sql)?;
    let mut found = stmt.query(rusqlite::params_from_iter(values))?;
    while let Some(row) = found.next()? {
        let chunk = Chunk {
            id: rows::uuid(row, "id")?,
            agent_id: agent,
            content: row.get("content")?,
            metadata: metadata_from_row(row)?,
        };
        by_seq.insert(row.get("seq")?, chunk);
    }
    // A chunk deleted between the index lookup and this read is simply absent.
    Ok(neighbours
        .iter()
        .filter_map(|n| {
            by_seq.remove(&(n.key as i64)).map(|chunk| ChunkHit {
                score: n.score,
                chunk,
            })
        })
        .collect())
}
