use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::AppState;

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "health", responses((status = 200, description = "alive")))]
pub(crate) async fn healthz() -> Json<Value> {
    Json(json!({"status": "ok"}))
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
