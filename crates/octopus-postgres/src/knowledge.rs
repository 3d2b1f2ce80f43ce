//! Semantic memory: collections and chunks, searched by keyword (`tsvector`,
//! ranked by `ts_rank`) and by vector through the vector index, which follows
//! the rows as [`vector_sets`](crate::vector_sets) describes.

use octopus_core::DomainCode;
use std::collections::HashMap;

use async_trait::async_trait;
use octopus_core::knowledge::{
    Chunk, ChunkFilter, ChunkHit, Collection, DocumentSummary, KeywordQuery, NewChunk, VectorQuery,
    check_chunks, check_new_dimension, collection_name, point_fields,
};
use octopus_core::store::{KnowledgeStore, Page};
use octopus_core::vectors::{Point, ScoredKey, VectorChange, VectorSet};
use octopus_core::{AgentId, Error as DomainError, Result, TenantId, Timestamp};
use sqlx_core::executor::Executor;
use sqlx_core::query::query;
use sqlx_core::query_builder::QueryBuilder;
use sqlx_core::row::Row;
use sqlx_postgres::{PgRow, Postgres};
use uuid::Uuid;

use crate::error::Result as StoreResult;
use crate::rows::{Tx, int, u32_at, u64_at};
use crate::vector_sets::{
    Committed, KnowledgeTable, key_of, metadata_from_row, owned_by, record_change,
};
use crate::vectors::PgVector;
use crate::{PostgresStore, domain};

/// The most dimensions a collection may have: pgvector's ceiling for a `vector` column.
pub(crate) const MAX_DIMENSION: u32 = 16_000;

const CHUNK_COLUMNS: &str =
    "c.id, c.source, c.chunk_index, c.category, c.heading, c.content, c.indexed_at";

pub(crate) async fn collection_row<'c>(
    conn: impl Executor<'c, Database = Postgres>,
    tenant: TenantId,
    agent: AgentId,
    lock: bool,
) -> StoreResult<Option<Collection>> {
    let lock = if lock { " FOR UPDATE" } else { "" };
    let row = query(&format!(
        "SELECT dimension, model, chunk_count, created_at FROM knowledge_collections
         WHERE tenant_id = $1 AND agent_id = $2{lock}"
    ))
    .bind(tenant.0)
    .bind(agent.0)
    .fetch_optional(conn)
    .await?;
    row.map(|row| {
        Ok(Collection {
            name: collection_name(agent, tenant),
            agent_id: agent,
            dimension: u32_at(&row, "dimension")?,
            model: row.try_get("model")?,
            chunk_count: u64_at(&row, "chunk_count")?,
            created_at: row.try_get("created_at")?,
        })
    })
    .transpose()
}

async fn require_collection<'c>(
    conn: impl Executor<'c, Database = Postgres>,
    tenant: TenantId,
    agent: AgentId,
    lock: bool,
) -> StoreResult<Collection> {
    collection_row(conn, tenant, agent, lock)
        .await?
        .ok_or_else(|| {
            DomainError::not_found(
                octopus_core::ObjectKind::Collection,
                collection_name(agent, tenant),
            )
            .into()
        })
}

/// Creates the collection unless it exists with this dimension and model;
/// `Conflict` when it exists with others.
pub(crate) async fn ensure_collection(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    agent: AgentId,
    dimension: u32,
    model: &str,
    created_at: Timestamp,
) -> StoreResult<()> {
    query(
        "INSERT INTO knowledge_collections (tenant_id, agent_id, dimension, model, created_at)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (tenant_id, agent_id) DO NOTHING",
    )
    .bind(tenant.0)
    .bind(agent.0)
    .bind(int(dimension))
    .bind(model)
    .bind(created_at)
    .execute(&mut **tx)
    .await?;
    let existing = require_collection(&mut **tx, tenant, agent, false).await?;
    if existing.dimension != dimension || existing.model != model {
        return Err(DomainError::conflict(
            DomainCode::CollectionMismatch,
            format!(
                "the collection holds {}-dimensional vectors of {}, not {dimension}-dimensional vectors of {model}",
                existing.dimension, existing.model
            ),
        )
        .into());
    }
    Ok(())
}

/// Inserts chunks (vectors already checked), without counting them in their
/// collection ([`record_change`] does); returns them as the vector index
/// takes them.
pub(crate) async fn insert_chunks(
    tx: &mut Tx<'_>,
    tenant: TenantId,
    agent: AgentId,
    chunks: &[NewChunk],
) -> StoreResult<Vec<Point>> {
    let mut keys: HashMap<Uuid, u64> = HashMap::with_capacity(chunks.len());
    let mut sql = QueryBuilder::<Postgres>::new(
        "INSERT INTO knowledge_chunks (id, tenant_id, agent_id, source, chunk_index, category, heading, content,
                                       dimension, embedding, indexed_at) ",
    );
    // Bounded batches: PostgreSQL takes at most 65535 parameters a statement.
    for batch in chunks.chunks(1000) {
        sql.reset();
        sql.push_values(batch, |mut row, chunk| {
            let m = &chunk.metadata;
            row.push_bind(chunk.id)
                .push_bind(tenant.0)
                .push_bind(agent.0)
                .push_bind(m.source.clone())
                .push_bind(int(m.chunk_index))
                .push_bind(m.category.clone())
                .push_bind(m.heading.clone())
                .push_bind(chunk.content.clone())
                .push_bind(int(chunk.embedding.len()))
                .push_bind(PgVector(chunk.embedding.clone()))
                .push_bind(m.indexed_at);
        });
        sql.push(" RETURNING id, seq");
        for row in sql.build().fetch_all(&mut **tx).await? {
            keys.insert(row.try_get("id")?, key_of(&row)?);
        }
    }
    chunks
        .iter()
        .map(|chunk| {
            let key = keys
                .get(&chunk.id)
                .copied()
                .ok_or_else(|| crate::error::corrupt("chunk insert", "a row without its key"))?;
            Ok(Point {
                key,
                vector: chunk.embedding.clone(),
                fields: point_fields(&chunk.metadata),
            })
        })
        .collect()
}

fn chunk_from_row(row: &PgRow, agent: AgentId) -> StoreResult<Chunk> {
    Ok(Chunk {
        id: row.try_get("id")?,
        agent_id: agent,
        content: row.try_get("content")?,
        metadata: metadata_from_row(row)?,
    })
}

/// The filter's conditions on chunks aliased `c`.
fn push_filter(sql: &mut QueryBuilder<'_, Postgres>, filter: &ChunkFilter) {
    if let Some(source) = &filter.source {
        sql.push(" AND c.source = ").push_bind(source.clone());
    }
    if let Some(category) = &filter.category {
        sql.push(" AND c.category = ").push_bind(category.clone());
    }
    if let Some(from) = filter.indexed_from {
        sql.push(" AND c.indexed_at >= ").push_bind(from);
    }
    if let Some(to) = filter.indexed_to {
        sql.push(" AND c.indexed_at < ").push_bind(to);
    }
}

/// Begins a change to the agent's collection: its row stays locked until the
/// transaction ends, so that changes to one collection take turns. Returns
/// the collection's dimension.
async fn lock_collection(
    pool: &sqlx_postgres::PgPool,
    tenant: TenantId,
    agent: AgentId,
) -> StoreResult<(Tx<'static>, u32)> {
    let mut tx = pool.begin().await?;
    let collection = require_collection(&mut *tx, tenant, agent, true).await?;
    Ok((tx, collection.dimension))
}

/// Counts and versions `change` in the collection, commits, and returns it
/// for the index to follow.
async fn commit_change(
    mut tx: Tx<'_>,
    tenant: TenantId,
    agent: AgentId,
    change: VectorChange,
) -> StoreResult<Option<Committed>> {
    let set = VectorSet::knowledge(tenant, agent);
    let committed = record_change::<KnowledgeTable>(&mut tx, set, change).await?;
    tx.commit().await?;
    Ok(committed)
}

#[async_trait]
impl KnowledgeStore for PostgresStore {
    async fn create_collection(
        &self,
        tenant: TenantId,
        agent: AgentId,
        dimension: u32,
        model: &str,
    ) -> Result<Collection> {
        check_new_dimension("dimension", dimension as usize, MAX_DIMENSION)?;
        domain(async {
            let mut tx = self.pool.begin().await?;
            // The agent's row is locked so that it cannot be deleted meanwhile.
            let agent_exists = query(
                "SELECT 1 FROM agents WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL FOR SHARE",
            )
            .bind(agent.0)
            .bind(tenant.0)
            .fetch_optional(&mut *tx)
            .await?
            .is_some();
            if !agent_exists {
                return Err(DomainError::not_found(AgentId::KIND, agent).into());
            }
            ensure_collection(&mut tx, tenant, agent, dimension, model, octopus_core::now()).await?;
            let created = require_collection(&mut *tx, tenant, agent, false).await?;
            tx.commit().await?;
            Ok(created)
        })
        .await
    }

    async fn collection(&self, tenant: TenantId, agent: AgentId) -> Result<Option<Collection>> {
        domain(collection_row(&self.pool, tenant, agent, false)).await
    }

    async fn store_chunks(
        &self,
        tenant: TenantId,
        agent: AgentId,
        chunks: Vec<NewChunk>,
    ) -> Result<()> {
        domain(async {
            let (mut tx, dimension) = lock_collection(&self.pool, tenant, agent).await?;
            check_chunks(&chunks, dimension)?;
            let added = insert_chunks(&mut tx, tenant, agent, &chunks).await?;
            let change = VectorChange {
                removed: Vec::new(),
                added,
            };
            let committed = commit_change(tx, tenant, agent, change).await?;
            Ok(self.follow(committed).await?)
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
        domain(async {
            let (mut tx, dimension) = lock_collection(&self.pool, tenant, agent).await?;
            check_chunks(&chunks, dimension)?;
            let removed = query(
                "DELETE FROM knowledge_chunks WHERE tenant_id = $1 AND agent_id = $2 AND source = $3
                 RETURNING seq",
            )
            .bind(tenant.0)
            .bind(agent.0)
            .bind(source)
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(key_of)
            .collect::<StoreResult<Vec<u64>>>()?;
            let added = insert_chunks(&mut tx, tenant, agent, &chunks).await?;
            let change = VectorChange { removed, added };
            let committed = commit_change(tx, tenant, agent, change).await?;
            Ok(self.follow(committed).await?)
        })
        .await
    }

    async fn search_chunks(
        &self,
        tenant: TenantId,
        agent: AgentId,
        query_: &VectorQuery,
    ) -> Result<Vec<ChunkHit>> {
        domain(async {
            let state = crate::vector_sets::state::<KnowledgeTable>(&self.pool, tenant, agent)
                .await?
                .ok_or_else(|| {
                    DomainError::not_found(
                        octopus_core::ObjectKind::Collection,
                        collection_name(agent, tenant),
                    )
                })?;
            let set = VectorSet::knowledge(tenant, agent);
            let found = query_
                .nearest_keys(&*self.vectors, set, state, self)
                .await?;
            self.chunks_found(tenant, agent, found).await
        })
        .await
    }

    async fn keyword_search_chunks(
        &self,
        tenant: TenantId,
        agent: AgentId,
        query_: &KeywordQuery,
    ) -> Result<Vec<ChunkHit>> {
        query_.validate()?;
        domain(async {
            require_collection(&self.pool, tenant, agent, false).await?;
            let mut sql = QueryBuilder::<Postgres>::new(format!(
                "SELECT {CHUNK_COLUMNS}, ts_rank(c.search, q, 1) AS rank
                 FROM to_tsquery('english', "
            ));
            sql.push_bind(crate::search::any_word(&query_.text));
            sql.push(") q, knowledge_chunks c WHERE c.search @@ q AND c.tenant_id = ")
                .push_bind(tenant.0)
                .push(" AND c.agent_id = ")
                .push_bind(agent.0);
            push_filter(&mut sql, &query_.filter);
            sql.push(" ORDER BY rank DESC, c.id LIMIT ")
                .push_bind(i64::from(query_.top_k));
            let rows = sql.build().fetch_all(&self.pool).await?;
            rows.iter()
                .map(|row| {
                    let rank: f32 = row.try_get("rank")?;
                    Ok(ChunkHit {
                        score: rank,
                        chunk: chunk_from_row(row, agent)?,
                    })
                })
                .collect()
        })
        .await
    }

    async fn delete_chunk(&self, tenant: TenantId, agent: AgentId, id: Uuid) -> Result<()> {
        domain(async {
            let (mut tx, _) = lock_collection(&self.pool, tenant, agent).await?;
            let removed = query(
                "DELETE FROM knowledge_chunks WHERE id = $1 AND tenant_id = $2 AND agent_id = $3 RETURNING seq",
            )
            .bind(id)
            .bind(tenant.0)
            .bind(agent.0)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or_else(|| DomainError::not_found(octopus_core::ObjectKind::Chunk, id))?;
            let change = VectorChange { removed: vec![key_of(&removed)?], added: Vec::new() };
            let committed = commit_change(tx, tenant, agent, change).await?;
            Ok(self.follow(committed).await?)
        })
        .await
    }

    async fn list_documents(
        &self,
        tenant: TenantId,
        agent: AgentId,
        page: Page,
    ) -> Result<Vec<DocumentSummary>> {
        domain(async {
            let rows = query(
                "SELECT source, MIN(category) AS category, COUNT(*)::int AS chunks,
                        MAX(indexed_at) AS indexed_at
                 FROM knowledge_chunks WHERE tenant_id = $1 AND agent_id = $2
                 GROUP BY source ORDER BY source COLLATE \"C\" LIMIT $3 OFFSET $4",
            )
            .bind(tenant.0)
            .bind(agent.0)
            .bind(i64::from(page.limit))
            .bind(i64::from(page.offset))
            .fetch_all(&self.pool)
            .await?;
            rows.iter()
                .map(|row| {
                    Ok(DocumentSummary {
                        source: row.try_get("source")?,
                        category: row.try_get("category")?,
                        chunk_count: u32_at(row, "chunks")?,
                        indexed_at: row.try_get("indexed_at")?,
                    })
                })
                .collect()
        })
        .await
    }

    async fn document_chunks(
        &self,
        tenant: TenantId,
        agent: AgentId,
        source: &str,
    ) -> Result<Vec<Chunk>> {
        domain(async {
            let rows = query(&format!(
                "SELECT {CHUNK_COLUMNS} FROM knowledge_chunks c
                 WHERE c.tenant_id = $1 AND c.agent_id = $2 AND c.source = $3
                 ORDER BY c.chunk_index"
            ))
            .bind(tenant.0)
            .bind(agent.0)
            .bind(source)
            .fetch_all(&self.pool)
            .await?;
            rows.iter().map(|row| chunk_from_row(row, agent)).collect()
        })
        .await
    }
}

impl PostgresStore {
    /// The chunks of the keys found, in their order; a chunk deleted between
    /// the index lookup and this read is absent.
    async fn chunks_found(
        &self,
        tenant: TenantId,
        agent: AgentId,
        found: Vec<ScoredKey>,
    ) -> StoreResult<Vec<ChunkHit>> {
        let seqs: Vec<i64> = found.iter().map(|n| n.key as i64).collect();
        let rows = query(&format!(
            "SELECT c.seq, c.tenant_id, c.agent_id, {CHUNK_COLUMNS} FROM knowledge_chunks c
             WHERE c.seq = ANY($1)"
        ))
        .bind(seqs)
        .fetch_all(&self.pool)
        .await?;
        let mut by_key: HashMap<u64, Chunk> = HashMap::with_capacity(rows.len());
        for row in &rows {
            if owned_by(row, tenant, agent)? {
                by_key.insert(key_of(row)?, chunk_from_row(row, agent)?);
            }
        }
        Ok(found
            .into_iter()
            .filter_map(|n| {
                by_key.remove(&n.key).map(|chunk| ChunkHit {
                    score: n.score,
                    chunk,
                })
            })
            .collect())
    }
}
