//! The recall route: what an agent remembers of a user.

use axum::extract::State;
use octopus_core::AgentId;
use octopus_core::recall::{RecallHit, RecallQuery};

use super::Items;
use crate::AppState;
use crate::auth::TenantCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{Json, Path};

/// Recall what the agent remembers of a user: past messages and episode
/// summaries, by meaning and by words, each with its episode, time and scores.
#[utoipa::path(post, path = "/v1/agents/{agent_id}/recall", tag = "recall", security(("bearer" = [])),
    params(("agent_id" = AgentId, Path)), request_body = RecallQuery,
    responses((status = 200, body = Items<RecallHit>), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, description = "the embedding model is not available", body = ErrorBody)))]
pub(crate) async fn recall(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(agent): Path<AgentId>,
    Json(query): Json<RecallQuery>,
) -> ApiResult<axum::Json<Items<RecallHit>>> {
    Ok(axum::Json(Items {
        items: state.octopus.recall(tenant, agent, &query).await?,
    }))
}
