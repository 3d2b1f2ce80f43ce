//! The HTTP API of Octopus. The only crate that knows HTTP.
//!
//! - `routes`: the route table, one module per resource, each handler annotated
//!   for the OpenAPI document served at `/openapi.json`;
//! - `auth`: bearer-key authentication and the caller extractors;
//! - `extract`: JSON, path and query extractors whose rejections are JSON errors;
//! - `error`: the single mapping from failures to status codes and error bodies.

mod auth;
mod error;
mod extract;
mod routes;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::middleware::{self, Next};
use axum::response::Response;
use octopus_engine::Octopus;
use serde::{Deserialize, Serialize};
use tracing::Instrument;

pub use error::ApiError;

/// What the handlers share.
#[derive(Clone)]
pub struct AppState {
    pub octopus: Octopus,
}

/// HTTP settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Address to listen on.
    pub listen: String,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:7700".into(),
            max_body_bytes: 16 << 20,
        }
    }
}

/// The whole API as a router, with `/openapi.json`.
pub fn app(octopus: Octopus, config: &ServerConfig) -> Router {
    let (router, openapi) = routes::router().split_for_parts();
    let openapi = Arc::new(openapi);
    router
        .route(
            "/openapi.json",
            axum::routing::get(move || {
                let openapi = Arc::clone(&openapi);
                async move { axum::Json(openapi.as_ref().clone()) }
            }),
        )
        .fallback(|| async { ApiError::not_found_route() })
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .layer(middleware::from_fn(trace_request))
        .with_state(AppState { octopus })
}

/// The OpenAPI document, for tests and tools.
pub fn openapi() -> utoipa::openapi::OpenApi {
    routes::router().into_openapi()
}

/// Serves `app` on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    app: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}

/// One span per request, carrying the tenant once authentication knows it.
async fn trace_request(request: Request, next: Next) -> Response {
    let span = tracing::info_span!(
        "request",
        method = %request.method(),
        path = %request.uri().path(),
        tenant_id = tracing::field::Empty,
    );
    let started = Instant::now();
    async move {
        let response = next.run(request).await;
        let status = response.status();
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        if status.is_server_error() {
            tracing::warn!(%status, elapsed_ms, "request failed");
        } else {
            tracing::debug!(%status, elapsed_ms, "request served");
        }
        response
    }
    .instrument(span)
    .await
}
