//! Semantic memory: an agent's knowledge, as chunks of text with embeddings,
//! hard-isolated per agent and tenant: no search reaches another's.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::vectors::{
    Nearest, PointFields, PointFilter, ScoredKey, SetState, VectorIndex, VectorRows, VectorSet,
};
use crate::{AgentId, Error, Result, TenantId};

/// The name of an agent's knowledge collection: `agent_{agentId}_{tenantId}`.
pub fn collection_name(agent: AgentId, tenant: TenantId) -> String {
    format!("agent_{agent}_{tenant}")
}

/// A collection's fixed properties: every vector in it has `dimension` floats
/// from `model`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Collection {
    pub name: String,
    pub agent_id: AgentId,
    pub dimension: u32,
    pub model: String,
    pub chunk_count: u64,
    pub created_at: DateTime<Utc>,
}

/// Where a chunk came from: its document, section and category.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ChunkMetadata {
    /// The source document's name, e.g. a file path.
    pub source: String,
    /// Position of the chunk in its source, from 0.
    pub chunk_index: u32,
    /// e.g. "policy", "manual", "faq".
    pub category: Option<String>,
    /// The Markdown headings above the chunk, outermost first, joined by " > ".
    pub heading: Option<String>,
    pub indexed_at: DateTime<Utc>,
}

/// A chunk to store: text, its vector, its metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct NewChunk {
    pub id: Uuid,
    pub content: String,
    pub embedding: Vec<f32>,
    pub metadata: ChunkMetadata,
}

/// A stored chunk, without its vector.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Chunk {
    pub id: Uuid,
    pub agent_id: AgentId,
    pub content: String,
    #[serde(flatten)]
    pub metadata: ChunkMetadata,
}

/// One document of a collection: the chunks ingested from one source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DocumentSummary {
    pub source: String,
    pub category: Option<String>,
    pub chunk_count: u32,
    /// When its newest chunk was indexed.
    pub indexed_at: DateTime<Utc>,
}

/// Which chunks a search may return. Every set field must match.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkFilter {
    pub source: Option<String>,
    pub category: Option<String>,
    /// Indexed at or after.
    pub indexed_from: Option<DateTime<Utc>>,
    /// Indexed before.
    pub indexed_to: Option<DateTime<Utc>>,
}

impl ChunkFilter {
    pub fn matches(&self, metadata: &ChunkMetadata) -> bool {
        self.source.as_ref().is_none_or(|s| *s == metadata.source)
            && self
                .category
                .as_ref()
                .is_none_or(|c| metadata.category.as_ref() == Some(c))
            && self
                .indexed_from
                .is_none_or(|from| metadata.indexed_at >= from)
            && self.indexed_to.is_none_or(|to| metadata.indexed_at < to)
    }

    /// The same conditions on a vector index's fields (see [`point_fields`]).
    pub fn to_points(&self) -> PointFilter {
        let mut filter = PointFilter {
            from: self.indexed_from,
            to: self.indexed_to,
            ..PointFilter::default()
        };
        if let Some(source) = &self.source {
            filter = filter.require("source", vec![source.clone()]);
        }
        if let Some(category) = &self.category {
            filter = filter.require("category", vec![category.clone()]);
        }
        filter
    }
}

/// What a vector index keeps of a chunk to filter on.
pub fn point_fields(metadata: &ChunkMetadata) -> PointFields {
    let mut fields = PointFields {
        at: Some(metadata.indexed_at),
        ..PointFields::default()
    }
    .label("source", metadata.source.clone());
    if let Some(category) = &metadata.category {
        fields = fields.label("category", category.clone());
    }
    fields
}

/// A search by vector.
#[derive(Clone, Debug, PartialEq)]
pub struct VectorQuery {
    pub vector: Vec<f32>,
    pub top_k: u32,
    /// Hits scoring below this (cosine similarity) are dropped.
    pub min_score: f32,
    pub filter: ChunkFilter,
}

/// Most hits one search returns.
pub const MAX_TOP_K: u32 = 1000;

impl VectorQuery {
    /// The search a vector index runs for this query (`min_score` is the
    /// caller's to apply).
    pub fn to_nearest(&self) -> Nearest {
        Nearest {
            vector: self.vector.clone(),
            top_k: self.top_k as usize,
            filter: self.filter.to_points(),
        }
    }

    /// The keys of the collection's chunks nearest this query, at least
    /// `min_score`, best first: `set` searched in `index`, which reconciles
    /// from `rows` when it does not reflect `state`.
    pub async fn nearest_keys(
        &self,
        index: &dyn VectorIndex,
        set: VectorSet,
        state: SetState,
        rows: &dyn VectorRows,
    ) -> Result<Vec<ScoredKey>> {
        self.validate(state.dimension)?;
        let found = index.search(set, state, &self.to_nearest(), rows).await?;
        Ok(found
            .into_iter()
            .filter(|n| n.score >= self.min_score)
            .collect())
    }

    pub fn validate(&self, dimension: u32) -> Result<()> {
        check_dimension("vector", &self.vector, dimension)?;
        if self.top_k == 0 || self.top_k > MAX_TOP_K {
            return Err(Error::invalid(
                "top_k",
                format!("must be between 1 and {MAX_TOP_K}"),
            ));
        }
        if !(-1.0..=1.0).contains(&self.min_score) {
            return Err(Error::invalid("min_score", "must be between -1 and 1"));
        }
        Ok(())
    }
}

/// Every chunk replacing a source's must belong to that source.
pub fn check_source(source: &str, chunks: &[NewChunk]) -> Result<()> {
    match chunks.iter().position(|c| c.metadata.source != source) {
        Some(stray) => Err(Error::invalid(
            format!("chunks[{stray}].source"),
            format!("must be `{source}`"),
        )),
        None => Ok(()),
    }
}

/// Each chunk's vector must have the collection's dimension.
pub fn check_chunks(chunks: &[NewChunk], dimension: u32) -> Result<()> {
    for (i, chunk) in chunks.iter().enumerate() {
        check_dimension(
            &format!("chunks[{i}].embedding"),
            &chunk.embedding,
            dimension,
        )?;
    }
    Ok(())
}

/// A new collection's dimension, `dimensions` long vectors, must be one its
/// store can index: from 1 to `max` (each store has its own ceiling).
pub fn check_new_dimension(field: &str, dimensions: usize, max: u32) -> Result<u32> {
    u32::try_from(dimensions)
        .ok()
        .filter(|d| (1..=max).contains(d))
        .ok_or_else(|| Error::invalid(field, format!("must be between 1 and {max} dimensions")))
}

/// A vector must have the collection's dimension and finite values.
pub fn check_dimension(field: &str, vector: &[f32], dimension: u32) -> Result<()> {
    if vector.len() != dimension as usize {
        return Err(Error::invalid(
            field,
            format!(
                "has {} dimensions; the collection holds vectors of {dimension}",
                vector.len()
            ),
        ));
    }
    if vector.iter().any(|x| !x.is_finite()) {
        return Err(Error::invalid(field, "must hold finite numbers"));
    }
    Ok(())
}

/// A search by words, ranked by BM25.
#[derive(Clone, Debug, PartialEq)]
pub struct KeywordQuery {
    pub text: String,
    pub top_k: u32,
    pub filter: ChunkFilter,
}

impl KeywordQuery {
    /// At least one word to search for, and a `top_k` in range.
    pub fn validate(&self) -> Result<()> {
        if crate::search::search_terms(&self.text).is_empty() {
            return Err(Error::invalid("query", "must contain at least one word"));
        }
        if self.top_k == 0 || self.top_k > MAX_TOP_K {
            return Err(Error::invalid(
                "top_k",
                format!("must be between 1 and {MAX_TOP_K}"),
            ));
        }
        Ok(())
    }
}

/// How a knowledge search finds chunks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// By meaning and by words, fused by reciprocal rank.
    #[default]
    Hybrid,
    /// By meaning only (cosine similarity of embeddings).
    Vector,
    /// By words only (BM25).
    Keyword,
}

/// A chunk found by a knowledge search, with every score that placed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct KnowledgeHit {
    /// The ranking score: the fused score in hybrid mode, else the one below.
    pub score: f32,
    /// Cosine similarity, when found by meaning.
    pub vector_score: Option<f32>,
    /// BM25 (higher is better), when found by words.
    pub keyword_score: Option<f32>,
    pub chunk: Chunk,
}

/// A chunk found by a search, with its score (higher is closer).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ChunkHit {
    pub score: f32,
    pub chunk: Chunk,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collection_name_follows_the_seed() {
        let agent = AgentId(Uuid::nil());
        let tenant = TenantId(Uuid::max());
        assert_eq!(
            collection_name(agent, tenant),
            "agent_00000000-0000-0000-0000-000000000000_ffffffff-ffff-ffff-ffff-ffffffffffff"
        );
    }

    #[test]
    fn wrong_dimension_and_nan_are_refused() {
        assert!(check_dimension("v", &[0.0; 3], 4).is_err());
        assert!(check_dimension("v", &[0.0, f32::NAN, 0.0, 0.0], 4).is_err());
        assert!(check_dimension("v", &[0.0; 4], 4).is_ok());
    }
}
