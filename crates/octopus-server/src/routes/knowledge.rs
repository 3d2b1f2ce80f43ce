//! Routes of an agent's knowledge: documents, chunks, the collection, search.

use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use octopus_core::AgentId;
use octopus_core::chunking::Format;
use octopus_core::knowledge::{
    Chunk, ChunkFilter, Collection, DocumentSummary, KnowledgeHit, SearchMode,
};
use octopus_engine::{IngestDocument, KnowledgeQuery};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::{Items, PageParams, page};
use crate::AppState;
use crate::auth::TenantCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{Json, Path, Query};

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum DocumentFormat {
    Markdown,
    Text,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct IngestRequest {
    /// Names the document (a path, a URL). Ingesting the same source again
    /// replaces its chunks.
    pub source: String,
    pub text: String,
    /// `markdown` or `text`; by default Markdown when the source ends in `.md`
    /// or `.markdown`.
    #[serde(default)]
    pub format: Option<DocumentFormat>,
    /// e.g. "policy", "manual", "faq".
    #[serde(default)]
    pub category: Option<String>,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct IngestResponse {
    pub source: String,
    pub chunks: usize,
    pub tokens: usize,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct KnowledgeSearchRequest {
    pub query: String,
    /// `hybrid` (default), `vector` or `keyword`.
    #[serde(default)]
    pub mode: SearchMode,
    /// Default: the agent's `memory.knowledge_top_k`.
    #[serde(default)]
    pub top_k: Option<u32>,
    /// Default: the agent's `memory.knowledge_min_score`.
    #[serde(default)]
    pub min_score: Option<f64>,
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub indexed_from: Option<DateTime<Utc>>,
    #[serde(default)]
    pub indexed_to: Option<DateTime<Utc>>,
}

#[derive(Serialize, ToSchema)]
pub(crate) struct KnowledgeInfo {
    /// None until the agent has knowledge.
    pub collection: Option<Collection>,
}

/// Ingest a document into the agent's knowledge: chunked, embedded, stored.
#[utoipa::path(post, path = "/v1/agents/{agent_id}/knowledge/documents", tag = "knowledge", security(("bearer" = [])),
    params(("agent_id" = AgentId, Path)), request_body = IngestRequest,
    responses((status = 201, body = IngestResponse), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, description = "the embedding model is not available", body = ErrorBody)))]
pub(crate) async fn ingest_document(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(agent): Path<AgentId>,
    Json(body): Json<IngestRequest>,
) -> ApiResult<(StatusCode, axum::Json<IngestResponse>)> {
    let format = match body.format {
        Some(DocumentFormat::Markdown) => Format::Markdown,
        Some(DocumentFormat::Text) => Format::Plain,
        None if is_markdown(&body.source) => Format::Markdown,
        None => Format::Plain,
    };
    let document = IngestDocument {
        source: body.source,
        text: body.text,
        format,
        category: body.category,
    };
    let report = state
        .octopus
        .ingest_document(tenant, agent, document)
        .await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(IngestResponse {
            source: report.source,
            chunks: report.chunks,
            tokens: report.tokens,
        }),
    ))
}

pub(crate) fn is_markdown(source: &str) -> bool {
    let lower = source.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown")
}

/// Search the agent's knowledge by meaning and by words (`mode`), with every score.
#[utoipa::path(post, path = "/v1/agents/{agent_id}/knowledge/search", tag = "knowledge", security(("bearer" = [])),
    params(("agent_id" = AgentId, Path)), request_body = KnowledgeSearchRequest,
    responses((status = 200, body = Items<KnowledgeHit>), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub(crate) async fn search_knowledge(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(agent): Path<AgentId>,
    Json(body): Json<KnowledgeSearchRequest>,
) -> ApiResult<axum::Json<Items<KnowledgeHit>>> {
    let query = KnowledgeQuery {
        text: body.query,
        top_k: body.top_k,
        min_score: body.min_score,
        mode: body.mode,
        filter: ChunkFilter {
            source: body.source,
            category: body.category,
            indexed_from: body.indexed_from,
            indexed_to: body.indexed_to,
        },
    };
    Ok(axum::Json(Items {
        items: state.octopus.search_knowledge(tenant, agent, query).await?,
    }))
}

/// The agent's knowledge collection: name, dimension, model, chunk count.
#[utoipa::path(get, path = "/v1/agents/{agent_id}/knowledge", tag = "knowledge", security(("bearer" = [])),
    params(("agent_id" = AgentId, Path)),
    responses((status = 200, body = KnowledgeInfo), (status = 404, body = ErrorBody)))]
pub(crate) async fn knowledge_info(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(agent): Path<AgentId>,
) -> ApiResult<axum::Json<KnowledgeInfo>> {
    Ok(axum::Json(KnowledgeInfo {
        collection: state.octopus.knowledge_collection(tenant, agent).await?,
    }))
}

/// Delete one chunk of the agent's knowledge.
#[utoipa::path(delete, path = "/v1/agents/{agent_id}/knowledge/chunks/{chunk_id}", tag = "knowledge",
    security(("bearer" = [])), params(("agent_id" = AgentId, Path), ("chunk_id" = Uuid, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)))]
pub(crate) async fn delete_chunk(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path((agent, chunk)): Path<(AgentId, Uuid)>,
) -> ApiResult<StatusCode> {
    state
        .octopus
        .delete_knowledge_chunk(tenant, agent, chunk)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The agent's documents, by source name: category, chunk count and when
/// the newest chunk was indexed.
#[utoipa::path(get, path = "/v1/agents/{agent_id}/knowledge/documents", tag = "knowledge",
    security(("bearer" = [])), params(("agent_id" = AgentId, Path), PageParams),
    responses((status = 200, body = Items<DocumentSummary>), (status = 404, body = ErrorBody)))]
pub(crate) async fn list_documents(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(agent): Path<AgentId>,
    Query(params): Query<PageParams>,
) -> ApiResult<axum::Json<Items<DocumentSummary>>> {
    let page = page(params.limit, params.offset)?;
    Ok(axum::Json(Items {
        items: state.octopus.list_documents(tenant, agent, page).await?,
    }))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct DocumentParams {
    /// The document's source, as it was ingested.
    pub source: String,
}

/// One document of the agent's knowledge.
#[derive(Serialize, ToSchema)]
pub(crate) struct Document {
    pub source: String,
    /// The chunks' text, in order, separated by blank lines.
    pub text: String,
    pub chunks: Vec<Chunk>,
}

/// One document: its chunks in order, and their text joined.
#[utoipa::path(get, path = "/v1/agents/{agent_id}/knowledge/document", tag = "knowledge",
    security(("bearer" = [])), params(("agent_id" = AgentId, Path), DocumentParams),
    responses((status = 200, body = Document), (status = 404, body = ErrorBody)))]
pub(crate) async fn read_document(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(agent): Path<AgentId>,
    Query(params): Query<DocumentParams>,
) -> ApiResult<axum::Json<Document>> {
    let chunks = state
        .octopus
        .read_document(tenant, agent, &params.source)
        .await?;
    let text = chunks
        .iter()
        .map(|c| c.content.as_str())
        .collect::<Vec<_>>()
        .join("\n\n");
    Ok(axum::Json(Document {
        source: params.source,
        text,
        chunks,
    }))
}
