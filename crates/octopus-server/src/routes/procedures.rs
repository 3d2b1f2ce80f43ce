//! Procedural memory: procedures, their versions and approval.

use axum::extract::State;
use axum::http::StatusCode;
use octopus_core::procedure::{
    Decision, Procedure, ProcedureFilter, ProcedureSpec, ProcedureVersion,
};
use octopus_core::{AgentId, ProcedureId};
use octopus_engine::ProcedureUpdate;
use serde::Deserialize;
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

use super::{Items, page};
use crate::AppState;
use crate::auth::{TenantAuthor, TenantCaller};
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{Json, Path, Query};

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListProcedures {
    /// This agent's own procedures (with `shared=true`, also the shared ones).
    pub agent_id: Option<AgentId>,
    /// Only shared procedures (`true`) or only agents' own (`false`).
    pub shared: Option<bool>,
    pub active: Option<bool>,
    /// Procedures with a serving (approved) version, or without.
    pub approved: Option<bool>,
    /// Words in the name or description.
    pub text: Option<String>,
    pub limit: Option<u32>,
    pub offset: Option<u32>,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RollbackRequest {
    /// An approved version, which serves again.
    pub version: u32,
}

/// Create a procedure: version 1, pending approval. It matches nothing until
/// it is approved. Without `agent_id` it is shared by every agent of the tenant.
#[utoipa::path(post, path = "/v1/procedures", tag = "procedures", security(("bearer" = [])),
    request_body = ProcedureSpec,
    responses((status = 201, body = Procedure), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub(crate) async fn create_procedure(
    State(state): State<AppState>,
    author: TenantAuthor,
    Json(spec): Json<ProcedureSpec>,
) -> ApiResult<(StatusCode, axum::Json<Procedure>)> {
    let procedure = state
        .octopus
        .create_procedure(author.tenant, spec, author.key_name)
        .await?;
    Ok((StatusCode::CREATED, axum::Json(procedure)))
}

/// List procedures, newest first.
#[utoipa::path(get, path = "/v1/procedures", tag = "procedures", security(("bearer" = [])),
    params(ListProcedures),
    responses((status = 200, body = Items<Procedure>), (status = 404, body = ErrorBody)))]
pub(crate) async fn list_procedures(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Query(params): Query<ListProcedures>,
) -> ApiResult<axum::Json<Items<Procedure>>> {
    let filter = ProcedureFilter {
        agent_id: params.agent_id,
        shared: params.shared,
        active: params.active,
        approved: params.approved,
        text: params.text,
        page: page(params.limit, params.offset)?,
    };
    Ok(axum::Json(Items {
        items: state.octopus.list_procedures(tenant, &filter).await?,
    }))
}

/// Get a procedure: its serving version (or, before any approval, its newest).
#[utoipa::path(get, path = "/v1/procedures/{procedure_id}", tag = "procedures", security(("bearer" = [])),
    params(("procedure_id" = ProcedureId, Path)),
    responses((status = 200, body = Procedure), (status = 404, body = ErrorBody)))]
pub(crate) async fn get_procedure(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<ProcedureId>,
) -> ApiResult<axum::Json<Procedure>> {
    Ok(axum::Json(state.octopus.get_procedure(tenant, id).await?))
}

/// Change a procedure with a JSON merge patch. New `name`, `description`,
/// `trigger_pattern` or `steps` make the next version, pending approval; an
/// approved version keeps serving until then. `is_active` alone makes no
/// version: `false` deactivates the procedure (it never matches).
#[utoipa::path(patch, path = "/v1/procedures/{procedure_id}", tag = "procedures", security(("bearer" = [])),
    params(("procedure_id" = ProcedureId, Path)), request_body(content = Object, content_type = "application/json"),
    responses((status = 200, body = Procedure), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub(crate) async fn update_procedure(
    State(state): State<AppState>,
    author: TenantAuthor,
    Path(id): Path<ProcedureId>,
    Json(patch): Json<Value>,
) -> ApiResult<axum::Json<Procedure>> {
    let Value::Object(mut fields) = patch else {
        return Err(octopus_core::Error::invalid("", "a merge patch is a JSON object").into());
    };
    let is_active = match fields.remove("is_active") {
        None => None,
        Some(Value::Bool(active)) => Some(active),
        Some(_) => {
            return Err(octopus_core::Error::invalid("is_active", "must be a boolean").into());
        }
    };
    if let Some(unknown) = fields
        .keys()
        .find(|key| !["name", "description", "trigger_pattern", "steps"].contains(&key.as_str()))
    {
        return Err(octopus_core::Error::invalid(unknown.clone(), "unknown field").into());
    }
    let update = ProcedureUpdate {
        content: (!fields.is_empty()).then_some(Value::Object(fields)),
        is_active,
    };
    Ok(axum::Json(
        state
            .octopus
            .update_procedure(author.tenant, id, update, author.key_name)
            .await?,
    ))
}

/// Delete a procedure and every version of it.
#[utoipa::path(delete, path = "/v1/procedures/{procedure_id}", tag = "procedures", security(("bearer" = [])),
    params(("procedure_id" = ProcedureId, Path)),
    responses((status = 204, description = "deleted"), (status = 404, body = ErrorBody)))]
pub(crate) async fn delete_procedure(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<ProcedureId>,
) -> ApiResult<StatusCode> {
    state.octopus.delete_procedure(tenant, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Approve the pending version: it serves from now on.
#[utoipa::path(post, path = "/v1/procedures/{procedure_id}/approve", tag = "procedures", security(("bearer" = [])),
    params(("procedure_id" = ProcedureId, Path)),
    responses((status = 200, body = Procedure), (status = 404, body = ErrorBody)))]
pub(crate) async fn approve_procedure(
    State(state): State<AppState>,
    author: TenantAuthor,
    Path(id): Path<ProcedureId>,
) -> ApiResult<axum::Json<Procedure>> {
    decide(state, author, id, Decision::Approve).await
}

/// Reject the pending version: it never serves.
#[utoipa::path(post, path = "/v1/procedures/{procedure_id}/reject", tag = "procedures", security(("bearer" = [])),
    params(("procedure_id" = ProcedureId, Path)),
    responses((status = 200, body = Procedure), (status = 404, body = ErrorBody)))]
pub(crate) async fn reject_procedure(
    State(state): State<AppState>,
    author: TenantAuthor,
    Path(id): Path<ProcedureId>,
) -> ApiResult<axum::Json<Procedure>> {
    decide(state, author, id, Decision::Reject).await
}

async fn decide(
    state: AppState,
    author: TenantAuthor,
    id: ProcedureId,
    decision: Decision,
) -> ApiResult<axum::Json<Procedure>> {
    Ok(axum::Json(
        state
            .octopus
            .decide_procedure(author.tenant, id, decision, author.key_name)
            .await?,
    ))
}

/// Every version of a procedure, oldest first, with who wrote and who
/// decided each.
#[utoipa::path(get, path = "/v1/procedures/{procedure_id}/versions", tag = "procedures", security(("bearer" = [])),
    params(("procedure_id" = ProcedureId, Path)),
    responses((status = 200, body = Items<ProcedureVersion>), (status = 404, body = ErrorBody)))]
pub(crate) async fn procedure_versions(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<ProcedureId>,
) -> ApiResult<axum::Json<Items<ProcedureVersion>>> {
    Ok(axum::Json(Items {
        items: state.octopus.procedure_versions(tenant, id).await?,
    }))
}

/// Make an earlier approved version serve again.
#[utoipa::path(post, path = "/v1/procedures/{procedure_id}/rollback", tag = "procedures", security(("bearer" = [])),
    params(("procedure_id" = ProcedureId, Path)), request_body = RollbackRequest,
    responses((status = 200, body = Procedure), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub(crate) async fn rollback_procedure(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<ProcedureId>,
    Json(body): Json<RollbackRequest>,
) -> ApiResult<axum::Json<Procedure>> {
    Ok(axum::Json(
        state
            .octopus
            .rollback_procedure(tenant, id, body.version)
            .await?,
    ))
}

/// Ask the agent's model to turn this episode's tool calls into a draft
/// procedure of its agent, stored pending approval (`created_by`:
/// `learned:{episode}`). A person approves it before it can ever match.
/// 409 `no_tool_calls` for an episode that called no tool; 503 when the
/// agent has no model to ask.
#[utoipa::path(post, path = "/v1/episodes/{episode_id}/procedures/propose", tag = "procedures", security(("bearer" = [])),
    params(("episode_id" = octopus_core::EpisodeId, Path)),
    responses((status = 201, body = Procedure), (status = 404, body = ErrorBody)))]
pub(crate) async fn propose_procedure(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(episode): Path<octopus_core::EpisodeId>,
) -> ApiResult<(StatusCode, axum::Json<Procedure>)> {
    let procedure = state.octopus.propose_procedure(tenant, episode).await?;
    Ok((StatusCode::CREATED, axum::Json(procedure)))
}
