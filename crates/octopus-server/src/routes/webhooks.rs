//! Routes of webhooks: `/v1/webhooks`. A tenant registers endpoints to hear
//! that its memory changed; each event is signed as the Standard Webhooks
//! specification says, with the endpoint's secret (shown once, at
//! registration), and retried until the endpoint answers 2xx.

use axum::extract::State;
use axum::http::StatusCode;
use octopus_core::WebhookId;
use octopus_core::webhook::{CreatedWebhook, Delivery, NewWebhook, WebhookInfo};

use super::{Items, PageParams, page};
use crate::AppState;
use crate::auth::TenantCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{Json, Path, Query};

/// Register an endpoint for events: `fact.added`, `fact.updated`,
/// `fact.deleted`, `message.erased`, `episode.closed`, `procedure.pending`,
/// `user.forgotten`. The answer holds the signing secret, shown this once.
/// Events carry ids, never the words of a message or a fact.
#[utoipa::path(post, path = "/v1/webhooks", tag = "webhooks", security(("bearer" = [])),
    request_body = NewWebhook,
    responses((status = 201, body = CreatedWebhook), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub(crate) async fn create_webhook(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Json(new): Json<NewWebhook>,
) -> ApiResult<(StatusCode, axum::Json<CreatedWebhook>)> {
    Ok((
        StatusCode::CREATED,
        axum::Json(state.octopus.create_webhook(tenant, new).await?),
    ))
}

/// List the tenant's endpoints, oldest first.
#[utoipa::path(get, path = "/v1/webhooks", tag = "webhooks", security(("bearer" = [])),
    responses((status = 200, body = Items<WebhookInfo>)))]
pub(crate) async fn list_webhooks(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
) -> ApiResult<axum::Json<Items<WebhookInfo>>> {
    let items = state.octopus.list_webhooks(tenant).await?;
    Ok(axum::Json(Items { items }))
}

/// Get an endpoint: whether it is enabled, failing, or disabled and why.
#[utoipa::path(get, path = "/v1/webhooks/{webhook_id}", tag = "webhooks", security(("bearer" = [])),
    params(("webhook_id" = WebhookId, Path)),
    responses((status = 200, body = WebhookInfo), (status = 404, body = ErrorBody)))]
pub(crate) async fn get_webhook(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<WebhookId>,
) -> ApiResult<axum::Json<WebhookInfo>> {
    Ok(axum::Json(state.octopus.get_webhook(tenant, id).await?))
}

/// Delete an endpoint and its delivery log: nothing more is sent to it.
#[utoipa::path(delete, path = "/v1/webhooks/{webhook_id}", tag = "webhooks", security(("bearer" = [])),
    params(("webhook_id" = WebhookId, Path)),
    responses((status = 204, description = "deleted"), (status = 404, body = ErrorBody)))]
pub(crate) async fn delete_webhook(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<WebhookId>,
) -> ApiResult<StatusCode> {
    state.octopus.delete_webhook(tenant, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Enable an endpoint that was disabled (it answered 410 Gone, or failed
/// for too long): events written from now on are delivered to it; those
/// given up stay given up.
#[utoipa::path(post, path = "/v1/webhooks/{webhook_id}/enable", tag = "webhooks", security(("bearer" = [])),
    params(("webhook_id" = WebhookId, Path)),
    responses((status = 200, body = WebhookInfo), (status = 404, body = ErrorBody)))]
pub(crate) async fn enable_webhook(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<WebhookId>,
) -> ApiResult<axum::Json<WebhookInfo>> {
    Ok(axum::Json(state.octopus.enable_webhook(tenant, id).await?))
}

/// The endpoint's delivery log, newest first: each event's state
/// (pending, delivered, failed), attempts, last status and error.
#[utoipa::path(get, path = "/v1/webhooks/{webhook_id}/deliveries", tag = "webhooks",
    security(("bearer" = [])), params(("webhook_id" = WebhookId, Path), PageParams),
    responses((status = 200, body = Items<Delivery>), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub(crate) async fn list_deliveries(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(id): Path<WebhookId>,
    Query(params): Query<PageParams>,
) -> ApiResult<axum::Json<Items<Delivery>>> {
    let items = state
        .octopus
        .webhook_deliveries(tenant, id, page(params.limit, params.offset)?)
        .await?;
    Ok(axum::Json(Items { items }))
}
