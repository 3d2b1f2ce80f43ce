//! Routes of agents: `/v1/agents`.

use axum::extract::State;
use axum::http::StatusCode;
use octopus_core::AgentId;
use octopus_core::agent::{Agent, AgentSpec};
use serde_json::Value;

use super::{Items, PageParams, page};
use crate::AppState;
use crate::auth::TenantCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{Json, Path, Query};

/// Create an agent.
#[utoipa::path(post, path = "/v1/agents", tag = "agents", security(("bearer" = [])),
    request_body = AgentSpec,
    responses((status = 201, body = Agent), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub(crate) async fn create_agent(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Json(spec): Json<AgentSpec>,
) -> ApiResult<(StatusCode, axum::Json<Agent>)> {
    Ok((
        StatusCode::CREATED,
        axum::Json(state.octopus.create_agent(tenant, spec).await?),
    ))
}

/// List the tenant's active agents.
#[utoipa::path(get, path = "/v1/agents", tag = "agents", security(("bearer" = [])), params(PageParams),
    responses((status = 200, body = Items<Agent>)))]
pub(crate) async fn list_agents(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Query(params): Query<PageParams>,
) -> ApiResult<axum::Json<Items<Agent>>> {
    let items = state
        .octopus
        .list_agents(tenant, page(params.limit, params.offset)?)
        .await?;
    Ok(axum::Json(Items { items }))
}

/// Get an agent (inactive ones too).
#[utoipa::path(get, path = "/v1/agents/{agent_id}", tag = "agents", security(("bearer" = [])),
    params(("agent_id" = AgentId, Path)),
    responses((status = 200, body = Agent), (status = 404, body = ErrorBody)))]
pub(crate) async fn get_agent(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<AgentId>,
) -> ApiResult<axum::Json<Agent>> {
    Ok(axum::Json(state.octopus.get_agent(tenant, id).await?))
}

/// Change an agent with a JSON merge patch (RFC 7386) of `name`, `system_prompt`,
/// `llm`, `memory` or `is_active`.
#[utoipa::path(patch, path = "/v1/agents/{agent_id}", tag = "agents", security(("bearer" = [])),
    params(("agent_id" = AgentId, Path)), request_body(content = Object, content_type = "application/json"),
    responses((status = 200, body = Agent), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub(crate) async fn update_agent(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<AgentId>,
    Json(mut patch): Json<Value>,
) -> ApiResult<axum::Json<Agent>> {
    // `3.0` is an integer to JSON; the patch is read into typed settings later.
    crate::extract::integral_numbers_as_integers(&mut patch);
    Ok(axum::Json(
        state.octopus.update_agent(tenant, id, &patch).await?,
    ))
}

/// Delete an agent: it, its knowledge and its recall answer 404 from now on,
/// and its name is free. Its conversations and episodes stay readable until
/// deleted themselves. To pause an agent (read-only) instead, `PATCH` it with
/// `{"is_active": false}`.
#[utoipa::path(delete, path = "/v1/agents/{agent_id}", tag = "agents", security(("bearer" = [])),
    params(("agent_id" = AgentId, Path)),
    responses((status = 204, description = "deleted"), (status = 404, body = ErrorBody)))]
pub(crate) async fn delete_agent(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<AgentId>,
) -> ApiResult<StatusCode> {
    state.octopus.delete_agent(tenant, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
