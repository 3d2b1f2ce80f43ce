//! The users of a tenant: forgetting one.

use axum::extract::State;
use octopus_core::AgentId;
use octopus_core::forget::{ForgetReceipt, ForgetUser};
use serde::Deserialize;
use utoipa::IntoParams;

use crate::AppState;
use crate::auth::TenantCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{Path, Query};

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ForgetParams {
    /// Forget only what the user said to this agent; every agent when absent.
    pub agent_id: Option<AgentId>,
}

/// Forget a user: remove every conversation, episode, message, summary, key
/// fact, memory vector, full-text entry, queued job and cached history about
/// them, and procedures learned from their episodes; then compact the stores'
/// files. The receipt counts what each store removed. Cannot be undone.
#[utoipa::path(delete, path = "/v1/users/{user_id}", tag = "users", security(("bearer" = [])),
    params(("user_id" = String, Path), ForgetParams),
    responses((status = 200, body = ForgetReceipt), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub(crate) async fn forget_user(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(user_id): Path<String>,
    Query(params): Query<ForgetParams>,
) -> ApiResult<axum::Json<ForgetReceipt>> {
    let who = ForgetUser {
        user_id,
        agent_id: params.agent_id,
    };
    Ok(axum::Json(state.octopus.forget_user(tenant, who).await?))
}
