//! The users of a tenant: the facts an agent learned about one, and
//! forgetting one.

use axum::extract::State;
use octopus_core::AgentId;
use octopus_core::conversation::UserSummary;
use octopus_core::fact::{Fact, FactFilter, NewFactSpec};
use octopus_core::forget::{ForgetReceipt, ForgetUser};
use serde::Deserialize;
use utoipa::IntoParams;

use super::{Items, PageParams, page};
use crate::AppState;
use crate::auth::{TenantAuthor, TenantCaller};
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{Json, Path, Query};

/// The users who have a live conversation with the agent, by user id: how
/// many conversations each has and when the newest last changed.
#[utoipa::path(get, path = "/v1/agents/{agent_id}/users", tag = "users",
    security(("bearer" = [])), params(("agent_id" = AgentId, Path), PageParams),
    responses((status = 200, body = Items<UserSummary>), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub(crate) async fn list_users(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(agent): Path<AgentId>,
    Query(params): Query<PageParams>,
) -> ApiResult<axum::Json<Items<UserSummary>>> {
    let page = page(params.limit, params.offset)?;
    Ok(axum::Json(Items {
        items: state.octopus.list_users(tenant, agent, page).await?,
    }))
}

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

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct FactParams {
    /// Replaced facts too, each with the period it held. Default false.
    #[serde(default)]
    pub include_replaced: bool,
    /// Only facts filed under this category (one of the agent's
    /// `memory.fact_categories`, or a standing request's `instruction` or
    /// `preference`).
    pub category: Option<String>,
    /// Only the fact the client added under this key (one per category,
    /// with `include_replaced`, its replaced versions too).
    pub key: Option<String>,
    /// 1 to 1000; default 50.
    pub limit: Option<u32>,
    /// Default 0.
    pub offset: Option<u32>,
}

/// The facts the agent learned about a user: each with the episode and
/// messages it came from, when it became true (`valid_from`) and, once a
/// newer fact replaced it, until when (`valid_to`, `superseded_by`). Facts
/// are learned during a session and when an episode closes, by the agent's
/// model, or added by a person; a user's standing instructions and
/// preferences are filed as the memory worker reads their messages. The
/// newest first.
#[utoipa::path(get, path = "/v1/agents/{agent_id}/users/{user_id}/facts", tag = "users",
    security(("bearer" = [])),
    params(("agent_id" = AgentId, Path), ("user_id" = String, Path), FactParams),
    responses((status = 200, body = Items<Fact>), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub(crate) async fn list_facts(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path((agent_id, user_id)): Path<(AgentId, String)>,
    Query(params): Query<FactParams>,
) -> ApiResult<axum::Json<Items<Fact>>> {
    let filter = FactFilter {
        agent_id,
        user_id,
        include_replaced: params.include_replaced,
        categories: params.category.into_iter().collect(),
        key: params.key,
        page: page(params.limit, params.offset)?,
    };
    Ok(axum::Json(Items {
        items: state.octopus.list_facts(tenant, &filter).await?,
    }))
}

/// Add a fact about a user by hand: of no episode or message,
/// `source: manual`, `changed_by` the key's name. It is in the next context
/// and found by its words at once, and by meaning once the memory worker
/// embedded it; it is corrected, deleted and forgotten as a learned fact is.
/// A `key` of the client's names it for reading back (`?key=`): while a
/// fact with the key holds in the category, another is refused (409
/// `fact_key_taken`); correct that one instead.
#[utoipa::path(post, path = "/v1/agents/{agent_id}/users/{user_id}/facts", tag = "users",
    security(("bearer" = [])),
    params(("agent_id" = AgentId, Path), ("user_id" = String, Path)),
    request_body = NewFactSpec,
    responses((status = 201, body = Fact), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub(crate) async fn add_fact(
    State(state): State<AppState>,
    caller: TenantAuthor,
    Path((agent_id, user_id)): Path<(AgentId, String)>,
    Json(spec): Json<NewFactSpec>,
) -> ApiResult<(axum::http::StatusCode, axum::Json<Fact>)> {
    let fact = state
        .octopus
        .add_fact(caller.tenant, agent_id, &user_id, spec, caller.name())
        .await?;
    Ok((axum::http::StatusCode::CREATED, axum::Json(fact)))
}
