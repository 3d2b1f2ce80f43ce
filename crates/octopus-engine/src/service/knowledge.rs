//! Semantic memory: ingesting documents into an agent's collection, and searching it.

use octopus_core::bounds::{
    MAX_CATEGORY_CHARS, MAX_QUERY_CHARS, MAX_SOURCE_CHARS, check_chars, check_optional_chars,
};
use octopus_core::chunking::{ChunkingOptions, Format, chunk_text};
use std::collections::HashMap;

use octopus_core::agent::MemoryConfig;
use octopus_core::fusion::reciprocal_rank_fusion;
use octopus_core::knowledge::{
    Chunk, ChunkFilter, ChunkHit, ChunkMetadata, Collection, DocumentSummary, KeywordQuery,
    KnowledgeHit, MAX_TOP_K, NewChunk, SearchMode, VectorQuery,
};
use octopus_core::page::Page;
use octopus_core::search::{search_terms, topic_terms};
use octopus_core::tokens::{ApproximateTokenCounter, TokenCounter};
use octopus_core::{AgentId, Error as DomainError, TenantId, now};
use uuid::Uuid;

use super::QueryVector;
use crate::embedding_stats::EmbeddingPurpose;
use crate::error::Result;
use crate::octopus::Octopus;

/// Texts embedded per batch during ingestion; the ingestion permit is held per batch.
const INGEST_BATCH: usize = 32;
/// Room left in the model's input for the heading path written before each chunk.
const HEADING_ALLOWANCE: usize = 32;

/// A document to ingest.
#[derive(Clone, Debug)]
pub struct IngestDocument {
    /// Names the document; ingesting the same source again replaces its chunks.
    pub source: String,
    pub text: String,
    pub format: Format,
    pub category: Option<String>,
}

/// What an ingestion stored.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct IngestReport {
    pub source: String,
    pub chunks: usize,
    pub tokens: usize,
}

/// A search of an agent's knowledge.
#[derive(Clone, Debug)]
pub struct KnowledgeQuery {
    pub text: String,
    /// Default: the agent's `memory.knowledge_top_k`.
    pub top_k: Option<u32>,
    /// Drops chunks found by meaning with a lower cosine similarity. Chunks
    /// found by words are not held to it: BM25 is on another scale. Default: the
    /// agent's `memory.knowledge_min_score`.
    pub min_score: Option<f64>,
    pub filter: ChunkFilter,
    pub mode: SearchMode,
}

/// Candidates each retriever contributes to a fusion, per hit asked for:
/// fusion rewards agreement, which it can only see deeper than the top-k.
const FUSION_DEPTH: u32 = 4;

impl Octopus {
    /// Chunks, embeds and stores a document in the agent's collection (created on
    /// first use), replacing any earlier version of the same source.
    pub async fn ingest_document(
        &self,
        tenant: TenantId,
        agent: AgentId,
        document: IngestDocument,
    ) -> Result<IngestReport> {
        check_chars("source", &document.source, 1, MAX_SOURCE_CHARS)?;
        check_optional_chars("category", document.category.as_deref(), MAX_CATEGORY_CHARS)?;
        check_chars("text", &document.text, 1, self.limits.max_document_bytes)?;
        let redact = self
            .active_agent(tenant, agent)
            .await?
            .memory
            .pii
            .redacts_outgoing();
        let _slot = self.quotas.start_ingest(tenant)?;
        let embedder = self.embedder().await?;
        let dimension = u32::try_from(embedder.dimension()).unwrap_or(u32::MAX);
        self.store
            .create_collection(tenant, agent, dimension, embedder.model())
            .await?;

        // Chunks must fit the model's input, or their tails would be invisible to
        // the vector: cap the default 500 tokens at the model's window.
        let mut options = ChunkingOptions::default();
        if let Some(window) = embedder.max_input_tokens() {
            options.max_tokens = options
                .max_tokens
                .min(window.saturating_sub(HEADING_ALLOWANCE).max(16));
        }
        let count = |text: &str| {
            embedder
                .count_tokens(text)
                .unwrap_or_else(|| ApproximateTokenCounter.count(text) as usize)
        };
        let pieces = chunk_text(&document.text, document.format, options, &count);

        let indexed_at = now();
        let mut chunks = Vec::with_capacity(pieces.len());
        for batch in pieces.chunks(INGEST_BATCH) {
            // Each chunk is embedded with its heading path, its context in the document.
            let texts: Vec<String> = batch
                .iter()
                .map(|piece| match &piece.heading {
                    Some(heading) => format!("{heading}\n\n{}", piece.text),
                    None => piece.text.clone(),
                })
                // When the agent's `pii` policy redacts outgoing text the embedder sees no PII of a document either.
                .map(|text| match redact {
                    true => octopus_core::pii::egress(&text).into_owned(),
                    false => text,
                })
                .collect();
            let vectors = {
                let _permit = self.embedding.ingest_permits.acquire().await.map_err(|_| {
                    octopus_core::embedding::EmbedError::Model(
                        "the embedder is shutting down".into(),
                    )
                })?;
                self.embed_counted(EmbeddingPurpose::Knowledge, embedder.as_ref(), &texts)
                    .await?
            };
            for (piece, embedding) in batch.iter().zip(vectors) {
                chunks.push(NewChunk {
                    id: Uuid::now_v7(),
                    content: piece.text.clone(),
                    embedding,
                    metadata: ChunkMetadata {
                        source: document.source.clone(),
                        chunk_index: u32::try_from(chunks.len()).unwrap_or(u32::MAX),
                        category: document.category.clone(),
                        heading: piece.heading.clone(),
                        indexed_at,
                    },
                });
            }
        }
        let report = IngestReport {
            source: document.source.clone(),
            chunks: chunks.len(),
            tokens: pieces.iter().map(|p| p.tokens).sum(),
        };
        self.store
            .replace_source(tenant, agent, &document.source, chunks)
            .await?;
        tracing::info!(tenant_id = %tenant, agent_id = %agent, source = %report.source, chunks = report.chunks, "ingested document");
        Ok(report)
    }

    /// The agent's knowledge best matching the query, by meaning, by words, or
    /// both fused (reciprocal rank fusion), best first. An agent with no
    /// knowledge yet has an empty answer.
    pub async fn search_knowledge(
        &self,
        tenant: TenantId,
        agent: AgentId,
        query: KnowledgeQuery,
    ) -> Result<Vec<KnowledgeHit>> {
        let vector = QueryVector::new(tenant, &query.text);
        self.search_knowledge_with(tenant, agent, query, &vector)
            .await
    }

    /// [`Self::search_knowledge`], with the query's vector shared with the
    /// caller's other searches.
    pub(crate) async fn search_knowledge_with(
        &self,
        tenant: TenantId,
        agent: AgentId,
        query: KnowledgeQuery,
        vector: &QueryVector,
    ) -> Result<Vec<KnowledgeHit>> {
        check_chars("query", &query.text, 1, MAX_QUERY_CHARS)?;
        check_optional_chars(
            "category",
            query.filter.category.as_deref(),
            MAX_CATEGORY_CHARS,
        )?;
        check_optional_chars("source", query.filter.source.as_deref(), MAX_SOURCE_CHARS)?;
        let memory = self.cached_agent(tenant, agent).await?.memory;
        // An agent that takes no knowledge into its contexts (0) still has
        // a collection to search: a search that names no depth gets the
        // default one.
        let top_k = query.top_k.unwrap_or(match memory.knowledge_top_k {
            0 => MemoryConfig::default().knowledge_top_k,
            agents => agents,
        });
        let min_score = query.min_score.unwrap_or(memory.knowledge_min_score);
        if !(-1.0..=1.0).contains(&min_score) {
            return Err(DomainError::invalid("min_score", "must be between -1 and 1").into());
        }
        if top_k == 0 || top_k > MAX_TOP_K {
            return Err(DomainError::invalid(
                "top_k",
                format!("must be between 1 and {MAX_TOP_K}"),
            )
            .into());
        }
        // Without a word, a search by words finds nothing (and a keyword-only
        // search returns an empty list).
        let has_words = !search_terms(&query.text).is_empty();
        // A primary-key read: the collection row carries its chunk count.
        if self.store.collection(tenant, agent).await?.is_none() {
            return Ok(Vec::new());
        }
        let depth = if query.mode == SearchMode::Hybrid {
            (top_k * FUSION_DEPTH).min(MAX_TOP_K)
        } else {
            top_k
        };
        let by_meaning = async {
            if query.mode == SearchMode::Keyword {
                return Ok(Vec::new());
            }
            let vector = vector.get(self).await?;
            let vector_query = VectorQuery {
                vector,
                top_k: depth,
                min_score: min_score as f32,
                filter: query.filter.clone(),
            };
            Ok::<_, crate::error::Error>(
                self.store
                    .search_chunks(tenant, agent, &vector_query)
                    .await?,
            )
        };
        let by_words = async {
            if query.mode == SearchMode::Vector || !has_words {
                return Ok(Vec::new());
            }
            // Stop words would make BM25 score most of the collection (and
            // rank by them): only the words that carry a topic are searched.
            let keyword_query = KeywordQuery {
                text: topic_terms(&query.text).join(" "),
                top_k: depth,
                filter: query.filter.clone(),
            };
            Ok::<_, crate::error::Error>(
                self.store
                    .keyword_search_chunks(tenant, agent, &keyword_query)
                    .await?,
            )
        };
        let (by_meaning, by_words) = tokio::join!(by_meaning, by_words);
        Ok(fuse(by_meaning?, by_words?, query.mode, top_k as usize))
    }

    /// The agent's collection, if it has any knowledge.
    pub async fn knowledge_collection(
        &self,
        tenant: TenantId,
        agent: AgentId,
    ) -> Result<Option<Collection>> {
        self.cached_agent(tenant, agent).await?;
        Ok(self.store.collection(tenant, agent).await?)
    }

    /// The agent's documents by source name, a page of them.
    pub async fn list_documents(
        &self,
        tenant: TenantId,
        agent: AgentId,
        page: Page,
    ) -> Result<Vec<DocumentSummary>> {
        self.cached_agent(tenant, agent).await?;
        Ok(self.store.list_documents(tenant, agent, page).await?)
    }

    /// One document of the agent's knowledge: its chunks in order.
    pub async fn read_document(
        &self,
        tenant: TenantId,
        agent: AgentId,
        source: &str,
    ) -> Result<Vec<Chunk>> {
        self.cached_agent(tenant, agent).await?;
        let chunks = self.store.document_chunks(tenant, agent, source).await?;
        if chunks.is_empty() {
            return Err(DomainError::not_found(octopus_core::ObjectKind::Document, source).into());
        }
        Ok(chunks)
    }

    pub async fn delete_knowledge_chunk(
        &self,
        tenant: TenantId,
        agent: AgentId,
        chunk: Uuid,
    ) -> Result<()> {
        self.cached_agent(tenant, agent).await?;
        Ok(self.store.delete_chunk(tenant, agent, chunk).await?)
    }
}

/// Ranks the retrievers' hits as `mode` says, keeping every score.
fn fuse(
    by_meaning: Vec<ChunkHit>,
    by_words: Vec<ChunkHit>,
    mode: SearchMode,
    top_k: usize,
) -> Vec<KnowledgeHit> {
    let mut vector_scores: HashMap<Uuid, f32> =
        by_meaning.iter().map(|h| (h.chunk.id, h.score)).collect();
    let mut keyword_scores: HashMap<Uuid, f32> =
        by_words.iter().map(|h| (h.chunk.id, h.score)).collect();
    let ranking: Vec<(Uuid, f32)> = match mode {
        SearchMode::Vector => by_meaning.iter().map(|h| (h.chunk.id, h.score)).collect(),
        SearchMode::Keyword => by_words.iter().map(|h| (h.chunk.id, h.score)).collect(),
        SearchMode::Hybrid => reciprocal_rank_fusion(&[
            by_meaning.iter().map(|h| h.chunk.id).collect(),
            by_words.iter().map(|h| h.chunk.id).collect(),
        ]),
    };
    let mut chunks: HashMap<Uuid, Chunk> = by_meaning
        .into_iter()
        .chain(by_words)
        .map(|h| (h.chunk.id, h.chunk))
        .collect();
    ranking
        .into_iter()
        .take(top_k)
        .filter_map(|(id, score)| {
            chunks.remove(&id).map(|chunk| KnowledgeHit {
                score,
                vector_score: vector_scores.remove(&id),
                keyword_score: keyword_scores.remove(&id),
                chunk,
            })
        })
        .collect()
}
