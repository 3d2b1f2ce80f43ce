//! Routes of episodes: read, list, close, summarise, delete, restore, purge.

use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use octopus_core::episode::{
    CloseEpisode, EndReason, Episode, EpisodeFilter, EpisodeSummary, EpisodeWithMessages,
};
use octopus_core::{AgentId, ConversationId, EpisodeId};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::{Items, page};
use crate::AppState;
use crate::auth::TenantCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{Json, Path, Query};

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListEpisodes {
    pub agent_id: Option<AgentId>,
    pub user_id: Option<String>,
    pub conversation_id: Option<ConversationId>,
    /// Episodes started at or after this instant (RFC 3339; write UTC as `Z`).
    pub from: Option<DateTime<Utc>>,
    /// Episodes started before this instant.
    pub to: Option<DateTime<Utc>>,
    /// List soft-deleted episodes instead of live ones. Default false.
    #[serde(default)]
    pub deleted: bool,
    /// List the episodes retention archived instead of those in use. Default false.
    #[serde(default)]
    pub archived: bool,
    pub limit: Option<u32>,
    pub offset: Option<u32>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CloseEpisodeRequest {
    pub end_reason: EndReason,
    /// When the episode ended; now when absent.
    #[serde(default)]
    pub ended_at: Option<DateTime<Utc>>,
    /// A summary written by the caller; Octopus writes one otherwise.
    #[serde(default)]
    pub summary: Option<String>,
    #[serde(default)]
    pub key_facts: Vec<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EpisodeSummaryRequest {
    pub summary: String,
    #[serde(default)]
    pub key_facts: Vec<String>,
}

/// List episodes, newest first.
#[utoipa::path(get, path = "/v1/episodes", tag = "episodes", security(("bearer" = [])), params(ListEpisodes),
    responses((status = 200, body = Items<Episode>), (status = 400, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub(crate) async fn list_episodes(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Query(params): Query<ListEpisodes>,
) -> ApiResult<axum::Json<Items<Episode>>> {
    let filter = EpisodeFilter {
        agent_id: params.agent_id,
        user_id: params.user_id,
        conversation_id: params.conversation_id,
        from: params.from,
        to: params.to,
        deleted: params.deleted,
        archived: params.archived,
        page: page(params.limit, params.offset)?,
    };
    Ok(axum::Json(Items {
        items: state.octopus.list_episodes(tenant, &filter).await?,
    }))
}

/// Get an episode with its messages in order.
#[utoipa::path(get, path = "/v1/episodes/{episode_id}", tag = "episodes", security(("bearer" = [])),
    params(("episode_id" = EpisodeId, Path)),
    responses((status = 200, body = EpisodeWithMessages), (status = 404, body = ErrorBody)))]
pub(crate) async fn get_episode(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<EpisodeId>,
) -> ApiResult<axum::Json<EpisodeWithMessages>> {
    Ok(axum::Json(state.octopus.get_episode(tenant, id).await?))
}

/// Close an open episode.
#[utoipa::path(post, path = "/v1/episodes/{episode_id}/close", tag = "episodes", security(("bearer" = [])),
    params(("episode_id" = EpisodeId, Path)), request_body = CloseEpisodeRequest,
    responses((status = 200, body = Episode), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub(crate) async fn close_episode(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<EpisodeId>,
    Json(body): Json<CloseEpisodeRequest>,
) -> ApiResult<axum::Json<Episode>> {
    let summary = match body.summary {
        Some(summary) => Some(EpisodeSummary {
            summary,
            key_facts: body.key_facts,
            embedding: None,
        }),
        None if !body.key_facts.is_empty() => {
            return Err(octopus_core::Error::invalid("key_facts", "come with a summary").into());
        }
        None => None,
    };
    let close = CloseEpisode {
        reason: body.end_reason,
        ended_at: body.ended_at,
        summary,
    };
    Ok(axum::Json(
        state.octopus.close_episode(tenant, id, close).await?,
    ))
}

/// Set an episode's summary and key facts, replacing any it had.
#[utoipa::path(put, path = "/v1/episodes/{episode_id}/summary", tag = "episodes", security(("bearer" = [])),
    params(("episode_id" = EpisodeId, Path)), request_body = EpisodeSummaryRequest,
    responses((status = 200, body = Episode), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub(crate) async fn set_episode_summary(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<EpisodeId>,
    Json(body): Json<EpisodeSummaryRequest>,
) -> ApiResult<axum::Json<Episode>> {
    let summary = EpisodeSummary {
        summary: body.summary,
        key_facts: body.key_facts,
        embedding: None,
    };
    Ok(axum::Json(
        state
            .octopus
            .set_episode_summary(tenant, id, summary)
            .await?,
    ))
}

/// Soft-delete an episode: hidden from every read and search until restored or purged.
#[utoipa::path(delete, path = "/v1/episodes/{episode_id}", tag = "episodes", security(("bearer" = [])),
    params(("episode_id" = EpisodeId, Path)),
    responses((status = 200, body = Episode), (status = 404, body = ErrorBody)))]
pub(crate) async fn delete_episode(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<EpisodeId>,
) -> ApiResult<axum::Json<Episode>> {
    Ok(axum::Json(state.octopus.delete_episode(tenant, id).await?))
}

/// Restore a soft-deleted episode, or bring an archived one back into use
/// (kept for another retention period from now).
#[utoipa::path(post, path = "/v1/episodes/{episode_id}/restore", tag = "episodes", security(("bearer" = [])),
    params(("episode_id" = EpisodeId, Path)),
    responses((status = 200, body = Episode), (status = 404, body = ErrorBody)))]
pub(crate) async fn restore_episode(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<EpisodeId>,
) -> ApiResult<axum::Json<Episode>> {
    Ok(axum::Json(state.octopus.restore_episode(tenant, id).await?))
}

/// Remove a soft-deleted or archived episode for good: its messages, their
/// full-text entries and its memory vectors.
#[utoipa::path(post, path = "/v1/episodes/{episode_id}/purge", tag = "episodes", security(("bearer" = [])),
    params(("episode_id" = EpisodeId, Path)),
    responses((status = 204), (status = 404, body = ErrorBody),
        (status = 409, description = "the episode is in use: delete it first", body = ErrorBody)))]
pub(crate) async fn purge_episode(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<EpisodeId>,
) -> ApiResult<StatusCode> {
    state.octopus.purge_episode(tenant, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
