//! Health probes without a key: `/healthz` (the process; `/health` too)
//! and `/readyz` (the store).

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use serde_json::{Value, json};

use crate::AppState;
use crate::auth::AdminCaller;
use crate::error::ApiResult;

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "health", responses((status = 200, description = "alive")))]
pub(crate) async fn healthz() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

/// The process is up: `/healthz` under the name other servers use.
#[utoipa::path(get, path = "/health", tag = "health", responses((status = 200, description = "alive")))]
pub(crate) async fn health() -> Json<Value> {
    healthz().await
}

/// The store answers queries.
#[utoipa::path(get, path = "/readyz", tag = "health", responses(
    (status = 200, description = "ready"),
    (status = 503, description = "the store does not answer")
))]
pub(crate) async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Value>) {
    match state.octopus.ready().await {
        Ok(()) => (StatusCode::OK, Json(json!({"status": "ready"}))),
        Err(error) => {
            tracing::warn!(%error, "readiness check failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({"status": "unavailable"})),
            )
        }
    }
}

/// Prometheus metrics: requests by route and status with latency histograms,
/// open connections, each tenant's waiting memory work and the age of its
/// oldest job, and embedding throughput. Needs the admin key: the per-tenant
/// series name every tenant.
#[utoipa::path(get, path = "/metrics", tag = "admin", security(("bearer" = [])), responses(
    (status = 200, description = "the Prometheus text format, version 0.0.4", content_type = "text/plain; version=0.0.4", body = String),
))]
pub(crate) async fn metrics(
    _admin: AdminCaller,
    State(state): State<AppState>,
) -> ApiResult<([(header::HeaderName, &'static str); 1], String)> {
    let queues = state.octopus.memory_queues().await?;
    let text = state.metrics.render(
        &queues,
        state.octopus.embedding_stats(),
        state.octopus.memory_job_stats(),
        state.octopus.erased_words_waiting(),
    );
    Ok((
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    ))
}
