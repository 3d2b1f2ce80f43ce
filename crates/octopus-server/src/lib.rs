//! The HTTP API of Octopus. The only crate that knows HTTP.
//!
//! - `routes`: the route table, one module per resource, each handler annotated
//!   for the OpenAPI document served at `/openapi.json`;
//! - `auth`: bearer-key authentication and the caller extractors;
//! - `extract`: JSON, path and query extractors whose rejections are JSON errors;
//! - `error`: the table of error codes, and the single mapping from failures
//!   to status codes and error bodies;
//! - `connections`: the accept loop, with caps on connections and timeouts for
//!   slow or idle clients; `request_body`: bodies read after authentication,
//!   within a size, a deadline and a server-wide budget;
//! - `metrics`: what `/metrics` reports; `openapi`: the document, with every
//!   error and limit declared from the code;
//! - `mcp`: the Model Context Protocol door, at `/mcp` and over stdio;
//!   `console`: the web console's page, script and style, at `/console`.

#![forbid(unsafe_code)]

mod auth;
mod connections;
pub mod console;
mod error;
mod extract;
pub mod mcp;
mod metrics;
mod openapi;
mod request_body;
mod routes;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use octopus_engine::Octopus;
use serde::{Deserialize, Serialize};
use tracing::Instrument;

pub use error::{ApiError, ErrorCode};
pub use metrics::Metrics;
pub use routes::openai::MAX_MESSAGES as MAX_COMPLETION_MESSAGES;

/// What the handlers share.
#[derive(Clone)]
pub struct AppState {
    pub octopus: Octopus,
    pub metrics: Arc<Metrics>,
}

/// HTTP settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerSettings {
    /// Address to listen on.
    pub listen: String,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Bytes of request bodies held at once while they arrive, over all
    /// connections; past it a body is refused with `503 server_busy`.
    pub max_body_bytes_in_flight: usize,
    /// Client connections open at once, in all. Lowered at start to what the
    /// process's open-file limit allows.
    pub max_connections: usize,
    /// Client connections open at once from one IP address (0: no cap).
    pub max_connections_per_address: usize,
    /// Connections admitted past `max_connections` for health probes
    /// (`/healthz`, `/readyz`) alone, so that they answer under a flood.
    pub probe_connections: usize,
    /// Seconds a request's headers may take: from a new connection, and
    /// from the first byte of each later request.
    pub header_read_timeout_secs: u64,
    /// Seconds a request's body may take to arrive after its headers.
    pub body_read_timeout_secs: u64,
    /// Seconds a connection with no request in progress stays open.
    pub keep_alive_timeout_secs: u64,
    /// Offer MCP clients the tools that erase or rewrite memory:
    /// `forget_user`, `update_memory` and `delete_memory` (a tenant's key
    /// may always do these over REST; a model should not by default).
    pub mcp_allow_forget_user: bool,
}

impl Default for ServerSettings {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:7700".into(),
            max_body_bytes: 16 << 20,
            max_body_bytes_in_flight: 256 << 20,
            max_connections: 1024,
            max_connections_per_address: 256,
            probe_connections: 16,
            header_read_timeout_secs: 10,
            body_read_timeout_secs: 60,
            keep_alive_timeout_secs: 75,
            mcp_allow_forget_user: false,
        }
    }
}

/// The whole API as a router, with `/openapi.json`.
pub fn app(octopus: Octopus, config: &ServerSettings) -> Router {
    app_with_metrics(octopus, config, Arc::default())
}

fn app_with_metrics(octopus: Octopus, config: &ServerSettings, metrics: Arc<Metrics>) -> Router {
    let body_limits = request_body::BodyLimits {
        max_bytes: config.max_body_bytes,
        timeout: Duration::from_secs(config.body_read_timeout_secs),
        in_flight: Arc::new(request_body::InFlight::new(
            config.max_body_bytes_in_flight.max(config.max_body_bytes),
        )),
    };
    let (router, _) = routes::router().split_for_parts();
    let limits = *octopus.limits();
    let state = AppState { octopus, metrics };
    let mcp_options = mcp::McpOptions {
        allow_forget_user: config.mcp_allow_forget_user,
    };
    router
        .merge(mcp::router(state.clone(), mcp_options))
        .merge(console::router())
        .route(
            "/openapi.json",
            axum::routing::get(move || async move {
                axum::Json(openapi::document(&limits, octopus_core::now()))
            }),
        )
        .fallback(|| async { ApiError::not_found_route() })
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
        // Bodies are read by the handlers' extractors, after the key, under
        // the limits `request_body` states; axum's own limit would only
        // repeat one of them.
        .layer(DefaultBodyLimit::disable())
        .layer(middleware::from_fn_with_state(
            body_limits,
            request_body::guard,
        ))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state.metrics),
            trace_request,
        ))
        .with_state(state)
}

/// Serves the API on `listener` until `shutdown` resolves, under the
/// connection caps and timeouts of `config`.
pub async fn serve(
    listener: tokio::net::TcpListener,
    octopus: Octopus,
    config: &ServerSettings,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let metrics = Arc::new(Metrics::default());
    let app = app_with_metrics(octopus, config, Arc::clone(&metrics));
    let limits = connections::ConnectionLimits::from_config(config);
    connections::serve(listener, app, limits, metrics, shutdown).await
}

/// One span per request, carrying the tenant once authentication knows it;
/// and the request counted in the metrics under its route's template.
async fn trace_request(
    State(metrics): State<Arc<Metrics>>,
    request: Request,
    next: Next,
) -> Response {
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_owned();
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
        metrics.observe_request(method.as_str(), &route, status.as_u16(), started.elapsed());
        response
    }
    .instrument(span)
    .await
}
