//! Routes of tenants and their API keys (the admin key).

use axum::extract::State;
use axum::http::StatusCode;
use octopus_core::forget::TenantDeletionReceipt;
use octopus_core::tenant::{ApiKey, Tenant};
use octopus_core::{ApiKeyId, TenantId};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{Items, PageParams, page};
use crate::AppState;
use crate::auth::AdminCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{Json, Path, Query};

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateTenant {
    pub name: String,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CreateApiKey {
    pub name: String,
}

/// A new key. `key` is the secret: it is shown only in this response.
#[derive(Serialize, ToSchema)]
pub(crate) struct CreatedApiKey {
    pub key: String,
    #[serde(flatten)]
    pub api_key: ApiKey,
}

/// Create a tenant.
#[utoipa::path(post, path = "/v1/tenants", tag = "admin", security(("bearer" = [])),
    request_body = CreateTenant,
    responses((status = 201, body = Tenant), (status = 422, body = ErrorBody)))]
pub(crate) async fn create_tenant(
    State(state): State<AppState>,
    _: AdminCaller,
    Json(body): Json<CreateTenant>,
) -> ApiResult<(StatusCode, axum::Json<Tenant>)> {
    Ok((
        StatusCode::CREATED,
        axum::Json(state.octopus.create_tenant(&body.name).await?),
    ))
}

/// List tenants.
#[utoipa::path(get, path = "/v1/tenants", tag = "admin", security(("bearer" = [])), params(PageParams),
    responses((status = 200, body = Items<Tenant>)))]
pub(crate) async fn list_tenants(
    State(state): State<AppState>,
    _: AdminCaller,
    Query(params): Query<PageParams>,
) -> ApiResult<axum::Json<Items<Tenant>>> {
    let items = state
        .octopus
        .list_tenants(page(params.limit, params.offset)?)
        .await?;
    Ok(axum::Json(Items { items }))
}

/// Get a tenant.
#[utoipa::path(get, path = "/v1/tenants/{tenant_id}", tag = "admin", security(("bearer" = [])),
    params(("tenant_id" = TenantId, Path)),
    responses((status = 200, body = Tenant), (status = 404, body = ErrorBody)))]
pub(crate) async fn get_tenant(
    State(state): State<AppState>,
    _: AdminCaller,
    Path(id): Path<TenantId>,
) -> ApiResult<axum::Json<Tenant>> {
    Ok(axum::Json(state.octopus.get_tenant(id).await?))
}

/// Delete a tenant and everything under it: its API keys, agents,
/// conversations, episodes, messages, facts, procedures, knowledge, memory
/// vectors, queued work, webhooks and their deliveries, with their full-text
/// entries and their copies in the vector index; then compact the stores'
/// files. The receipt counts what each store removed. Cannot be undone.
#[utoipa::path(delete, path = "/v1/tenants/{tenant_id}", tag = "admin", security(("bearer" = [])),
    params(("tenant_id" = TenantId, Path)),
    responses((status = 200, body = TenantDeletionReceipt), (status = 404, body = ErrorBody)))]
pub(crate) async fn delete_tenant(
    State(state): State<AppState>,
    _: AdminCaller,
    Path(id): Path<TenantId>,
) -> ApiResult<axum::Json<TenantDeletionReceipt>> {
    Ok(axum::Json(state.octopus.delete_tenant(id).await?))
}

/// Create an API key for a tenant. The response is the only time its secret is shown.
#[utoipa::path(post, path = "/v1/tenants/{tenant_id}/keys", tag = "admin", security(("bearer" = [])),
    params(("tenant_id" = TenantId, Path)), request_body = CreateApiKey,
    responses((status = 201, body = CreatedApiKey), (status = 404, body = ErrorBody)))]
pub(crate) async fn create_api_key(
    State(state): State<AppState>,
    _: AdminCaller,
    Path(tenant): Path<TenantId>,
    Json(body): Json<CreateApiKey>,
) -> ApiResult<(StatusCode, axum::Json<CreatedApiKey>)> {
    let (api_key, key) = state.octopus.create_api_key(tenant, &body.name).await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(CreatedApiKey { key, api_key }),
    ))
}

/// List a tenant's API keys (without their secrets).
#[utoipa::path(get, path = "/v1/tenants/{tenant_id}/keys", tag = "admin", security(("bearer" = [])),
    params(("tenant_id" = TenantId, Path)),
    responses((status = 200, body = Items<ApiKey>), (status = 404, body = ErrorBody)))]
pub(crate) async fn list_api_keys(
    State(state): State<AppState>,
    _: AdminCaller,
    Path(tenant): Path<TenantId>,
) -> ApiResult<axum::Json<Items<ApiKey>>> {
    Ok(axum::Json(Items {
        items: state.octopus.list_api_keys(tenant).await?,
    }))
}

/// Revoke an API key.
#[utoipa::path(delete, path = "/v1/tenants/{tenant_id}/keys/{key_id}", tag = "admin", security(("bearer" = [])),
    params(("tenant_id" = TenantId, Path), ("key_id" = ApiKeyId, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)))]
pub(crate) async fn revoke_api_key(
    State(state): State<AppState>,
    _: AdminCaller,
    Path((tenant, key)): Path<(TenantId, ApiKeyId)>,
) -> ApiResult<StatusCode> {
    state.octopus.revoke_api_key(tenant, key).await?;
    Ok(StatusCode::NO_CONTENT)
}
