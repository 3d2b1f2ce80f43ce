//! Semantic memory on SQLite: chunks in `knowledge_chunks`, searched by
//! keyword with FTS5 and by vector through the vector index, which follows
//! the rows as [`vector_sets`](crate::vector_sets) describes.

use octopus_core::DomainCode;
use std::collections::HashMap;

use async_trait::async_trait;
use octopus_core::knowledge::{
    Chunk, ChunkFilter, ChunkHit, Collection, DocumentSummary, KeywordQuery, NewChunk, VectorQuery,
    check_chunks, check_new_dimension, collection_name, point_fields,
};
use octopus_core::store::{KnowledgeStore, Page};
use octopus_core::vectors::{Point, ScoredKey, SetState, VectorChange, VectorSet};
use octopus_core::{AgentId, Error as DomainError, Result, TenantId};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params};
use uuid::Uuid;

use crate::SqliteStore;
use crate::codec::{self, micros};
use crate::error::Result as StoreResult;
use crate::rows::{self, Filters};
use crate::vector_sets::{Committed, KnowledgeTable, metadata_from_row, record_change};

/// The most dimensions a collection may have: the largest the embedded index is built for.
pub(crate) const MAX_DIMENSION: u32 = 16_384;

struct CollectionRow {
    dimension: u32,
    model: String,
    version: i64,
    chunk_count: i64,
    created_at: i64,
}

impl CollectionRow {
    fn state(&self) -> SetState {
        SetState {
            dimension: self.dimension,
            version: self.version,
        }
    }
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
    collection_row(conn, tenant, agent)?.ok_or_else(|| {
        DomainError::not_found(
            octopus_core::ObjectKind::Collection,
            collection_name(agent, tenant),
        )
        .into()
    })
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

/// Makes the agent's collection for `dimension` and `model` unless it
/// exists; one of other vectors is a `Conflict` (`collection_mismatch`).
pub(crate) fn ensure_collection(
    conn: &Connection,
    tenant: TenantId,
    agent: AgentId,
    dimension: u32,
    model: &str,
    created_at: octopus_core::Timestamp,
) -> StoreResult<()> {
    match collection_row(conn, tenant, agent)? {
        Some(existing) if existing.dimension == dimension && existing.model == model => Ok(()),
        Some(existing) => Err(DomainError::conflict(
            DomainCode::CollectionMismatch,
            format!(
                "the collection holds {}-dimensional vectors of {}, not {dimension}-dimensional vectors of {model}",
                existing.dimension, existing.model
            ),
        )
        .into()),
        None => {
            conn.execute(
                "INSERT INTO knowledge_collections (tenant_id, agent_id, dimension, model, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![tenant.0.as_bytes(), agent.0.as_bytes(), dimension, model, micros(created_at)],
            )?;
            Ok(())
        }
    }
}

/// Inserts chunks; returns their seqs in order.
pub(crate) fn insert_chunks(
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

impl SqliteStore {
    /// Runs a change to a collection's chunks in one transaction that also bumps
    /// the collection's version, then has the vector index follow it.
    async fn change_chunks<F>(&self, tenant: TenantId, agent: AgentId, change: F) -> Result<()>
    where
        F: FnOnce(&Connection, &CollectionRow) -> StoreResult<VectorChange> + Send + 'static,
    {
        let committed = self
            .db
            .write(move |conn| {
                let tx =
                    conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let row = require_collection(&tx, tenant, agent)?;
                let change = change(&tx, &row)?;
                let set = VectorSet::knowledge(tenant, agent);
                let committed = record_change::<KnowledgeTable>(&tx, set, row.state(), change)?;
                tx.commit()?;
                Ok::<_, crate::Error>(Some::<Committed>(committed))
            })
            .await?;
        self.follow(committed).await
    }
}

/// The index's share of new chunks: their keys, vectors and fields.
fn added(seqs: Vec<i64>, chunks: Vec<NewChunk>) -> Vec<Point> {
    seqs.into_iter()
        .zip(chunks)
        .map(|(seq, chunk)| Point {
            key: seq as u64,
            fields: point_fields(&chunk.metadata),
            vector: chunk.embedding,
        })
        .collect()
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
        check_new_dimension("dimension", dimension as usize, MAX_DIMENSION)?;
        let model = model.to_owned();
        self.db
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let agent_exists: bool = tx.query_row(
                    "SELECT EXISTS (SELECT 1 FROM agents WHERE id = ?1 AND tenant_id = ?2 AND deleted_at IS NULL)",
                    [agent.0.as_bytes(), tenant.0.as_bytes()],
                    |r| r.get(0),
                )?;
                if !agent_exists {
                    return Err(DomainError::not_found(AgentId::KIND, agent).into());
                }
                ensure_collection(&tx, tenant, agent, dimension, &model, octopus_core::now())?;
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
            Ok(VectorChange {
                removed: Vec::new(),
                added: added(seqs, chunks),
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
        octopus_core::knowledge::check_source(source, &chunks)?;
        let source = source.to_owned();
        self.change_chunks(tenant, agent, move |tx, row| {
            check_chunks(&chunks, row.dimension)?;
            let mut delete = tx.prepare_cached(
                "DELETE FROM knowledge_chunks WHERE tenant_id = ?1 AND agent_id = ?2 AND source = ?3 RETURNING seq",
            )?;
            let removed: Vec<u64> = rows::collect(
                &mut delete,
                params![tenant.0.as_bytes(), agent.0.as_bytes(), source],
                rows::key,
            )?;
            drop(delete);
            let seqs = insert_chunks(tx, tenant, agent, &chunks)?;
            Ok(VectorChange { removed, added: added(seqs, chunks) })
        })
        .await
    }

    async fn search_chunks(
        &self,
        tenant: TenantId,
        agent: AgentId,
        query: &VectorQuery,
    ) -> Result<Vec<ChunkHit>> {
        let state = self
            .db
            .read(move |conn| Ok(require_collection(conn, tenant, agent)?.state()))
            .await?;
        let set = VectorSet::knowledge(tenant, agent);
        let found = query.nearest_keys(&*self.vectors, set, state, self).await?;
        self.db
            .read(move |conn| fetch_hits(conn, tenant, agent, &found, None))
            .await
    }

    async fn keyword_search_chunks(
        &self,
        tenant: TenantId,
        agent: AgentId,
        query: &KeywordQuery,
    ) -> Result<Vec<ChunkHit>> {
        query.validate()?;
        let query = query.clone();
        let statistics = std::sync::Arc::clone(&self.knowledge_statistics);
        self.db
            .read(move |conn| {
                let collection = require_collection(conn, tenant, agent)?;
                let version = (collection.created_at, collection.version);
                let cached = Some((statistics.as_ref(), version));
                keyword_hits(conn, tenant, agent, &query, cached)
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
                Some(seq) => Ok(VectorChange { removed: vec![seq as u64], added: Vec::new() }),
                None => Err(DomainError::not_found(octopus_core::ObjectKind::Chunk, id).into()),
            }
        })
        .await
    }

    async fn list_documents(
        &self,
        tenant: TenantId,
        agent: AgentId,
        page: Page,
    ) -> Result<Vec<DocumentSummary>> {
        self.db
            .read(move |conn| {
                let mut stmt = conn.prepare_cached(
                    "SELECT source, MIN(category) AS category, COUNT(*) AS chunks,
                            MAX(indexed_at) AS indexed_at
                     FROM knowledge_chunks WHERE tenant_id = ?1 AND agent_id = ?2
                     GROUP BY source ORDER BY source LIMIT ?3 OFFSET ?4",
                )?;
                let params = params![
                    tenant.0.as_bytes(),
                    agent.0.as_bytes(),
                    page.limit,
                    page.offset
                ];
                rows::collect(&mut stmt, params, |row| {
                    Ok(DocumentSummary {
                        source: row.get("source")?,
                        category: row.get("category")?,
                        chunk_count: row.get("chunks")?,
                        indexed_at: rows::time(row, "indexed_at")?,
                    })
                })
            })
            .await
    }

    async fn document_chunks(
        &self,
        tenant: TenantId,
        agent: AgentId,
        source: &str,
    ) -> Result<Vec<Chunk>> {
        let source = source.to_owned();
        self.db
            .read(move |conn| {
                let mut stmt = conn.prepare_cached(
                    "SELECT id, source, chunk_index, category, heading, content, indexed_at
                     FROM knowledge_chunks WHERE tenant_id = ?1 AND agent_id = ?2 AND source = ?3
                     ORDER BY chunk_index",
                )?;
                let mut found =
                    stmt.query(params![tenant.0.as_bytes(), agent.0.as_bytes(), source])?;
                let mut chunks = Vec::new();
                while let Some(row) = found.next()? {
                    chunks.push(chunk_from_row(row, agent)?);
                }
                Ok(chunks)
            })
            .await
    }
}

/// A keyword search of one collection: its matches found through its scope
/// token, ranked by BM25 with statistics counted in the collection alone
/// (`fts_rank.rs`; FTS5's `bm25()` counts over every tenant's chunks), each
/// joined to its row and filtered there, the best `top_k` kept.
fn keyword_hits(
    conn: &Connection,
    tenant: TenantId,
    agent: AgentId,
    query: &KeywordQuery,
    cached: crate::search::Cached<'_>,
) -> StoreResult<Vec<ChunkHit>> {
    let terms = octopus_core::search::search_terms(&query.text);
    let scope = knowledge_scope(tenant, agent);
    let statistics = crate::search::ScopedStatistics::count(
        conn,
        "knowledge_fts",
        "knowledge_fts",
        &scope,
        "{heading content}",
        &terms,
        cached,
    )?;
    let mut filters = Filters::default();
    let rank = statistics.rank_sql("knowledge_fts", &mut filters);
    let quoted: Vec<String> = terms.iter().map(|w| format!("\"{w}\"")).collect();
    let scoped = format!(
        "scope : \"{scope}\" AND {{heading content}} : ({})",
        quoted.join(" OR ")
    );
    let scoped = filters.bind(Value::Text(scoped));
    filters.push("c.tenant_id = ?", rows::blob(&tenant.0));
    filters.push("c.agent_id = ?", rows::blob(&agent.0));
    push_chunk_filter(&mut filters, &query.filter);
    let limit = filters.bind(Value::Integer(query.top_k.into()));
    let sql = format!(
        "WITH ranked AS (
             SELECT rowid AS seq, {rank} AS rank FROM knowledge_fts
             WHERE knowledge_fts MATCH {scoped}
         )
         SELECT c.id AS id, c.source AS source, c.chunk_index AS chunk_index, c.category AS category,
                c.heading AS heading, c.content AS content, c.indexed_at AS indexed_at, ranked.rank AS rank
         FROM ranked JOIN knowledge_chunks c ON c.seq = ranked.seq
         {} ORDER BY ranked.rank DESC LIMIT {limit}",
        filters.where_sql()
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    rows::collect(
        &mut stmt,
        rusqlite::params_from_iter(filters.params),
        |row| {
            let rank: f64 = row.get("rank")?;
            Ok(ChunkHit {
                score: rank as f32,
                chunk: chunk_from_row(row, agent)?,
            })
        },
    )
}

/// The conditions of `filter` on a chunk row aliased `c`.
fn push_chunk_filter(filters: &mut Filters, filter: &ChunkFilter) {
    if let Some(source) = &filter.source {
        filters.push("c.source = ?", Value::Text(source.clone()));
    }
    if let Some(category) = &filter.category {
        filters.push("c.category = ?", Value::Text(category.clone()));
    }
    if let Some(from) = filter.indexed_from {
        filters.push("c.indexed_at >= ?", Value::Integer(micros(from)));
    }
    if let Some(to) = filter.indexed_to {
        filters.push("c.indexed_at < ?", Value::Integer(micros(to)));
    }
}

fn chunk_from_row(row: &rusqlite::Row<'_>, agent: AgentId) -> StoreResult<Chunk> {
    Ok(Chunk {
        id: rows::uuid(row, "id")?,
        agent_id: agent,
        content: row.get("content")?,
        metadata: metadata_from_row(row)?,
    })
}

/// The token under which a collection's chunks are indexed, as migration
/// `0010_knowledge_fts_scope`'s triggers write it: `'k' || hex(tenant) ||
/// hex(agent)`.
fn knowledge_scope(tenant: TenantId, agent: AgentId) -> String {
    let hex: String = [tenant.0.as_bytes(), agent.0.as_bytes()]
        .iter()
        .flat_map(|id| id.iter())
        .map(|byte| format!("{byte:02X}"))
        .collect();
    format!("k{hex}")
}

/// The chunks of `neighbours`, in their order, read in one query.
fn fetch_hits(
    conn: &Connection,
    tenant: TenantId,
    agent: AgentId,
    neighbours: &[ScoredKey],
    filter: Option<&ChunkFilter>,
) -> StoreResult<Vec<ChunkHit>> {
    if neighbours.is_empty() {
        return Ok(Vec::new());
    }
    // The unary `+` keeps SQLite from reading the collection's whole range
    // of an index on (tenant, agent, …) to check a handful of keys: the
    // rows are found by key, then checked (9 ms → 1 ms at 100k chunks).
    let mut filters = Filters::default();
    filters.push("+c.tenant_id = ?", rows::blob(&tenant.0));
    filters.push("+c.agent_id = ?", rows::blob(&agent.0));
    if let Some(filter) = filter {
        push_chunk_filter(&mut filters, filter);
    }
    let placeholders: Vec<String> = neighbours
        .iter()
        .map(|n| filters.bind(Value::Integer(n.key as i64)))
        .collect();
    let sql = format!(
        "SELECT seq, id, source, chunk_index, category, heading, content, indexed_at FROM knowledge_chunks c
         {} AND seq IN ({})",
        filters.where_sql(),
        placeholders.join(", ")
    );
    let mut by_seq: HashMap<i64, Chunk> = HashMap::new();
    let mut stmt = conn.prepare(&sql)?;
    let mut found = stmt.query(rusqlite::params_from_iter(filters.params))?;
    while let Some(row) = found.next()? {
        by_seq.insert(row.get("seq")?, chunk_from_row(row, agent)?);
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
