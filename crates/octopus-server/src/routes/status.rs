//! `GET /v1/status`: what a caller may know of the server it talks to, and
//! of its own memory queue (a tenant's key sees its tenant's; the admin key,
//! every tenant's together).

use axum::extract::State;
use chrono::{DateTime, Utc};
use octopus_engine::Caller;
use serde::Serialize;
use utoipa::ToSchema;

use crate::AppState;
use crate::auth::AnyCaller;
use crate::error::ApiResult;

/// The server, and the caller's memory queue.
#[derive(Serialize, ToSchema)]
pub(crate) struct ServerStatus {
    /// The server's version.
    pub version: &'static str,
    /// Where data is kept: `sqlite` or `postgres`.
    pub database: &'static str,
    /// Where vectors are searched: `embedded`, `pgvector` or `qdrant`.
    pub vectors: &'static str,
    pub embedding: EmbeddingStatus,
    pub memory_queue: QueueStatus,
}

/// The embedding model. It loads at the first text to embed: until then,
/// its fields are empty.
#[derive(Serialize, ToSchema)]
pub(crate) struct EmbeddingStatus {
    pub model: Option<String>,
    pub dimensions: Option<usize>,
    /// The local model's number format (`f32`, `bf16`, `int8`), chosen by
    /// timing each at load (`precision = "auto"`) or by the setting; none for
    /// a remote provider.
    pub precision: Option<&'static str>,
}

/// Memory work waiting: embeddings, summaries and facts the memory worker
/// has yet to make. Recall finds a message by its words at once, and by
/// meaning once `waiting` reaches 0.
#[derive(Serialize, ToSchema)]
pub(crate) struct QueueStatus {
    /// Jobs waiting (`live` and `bulk` together).
    pub waiting: u64,
    /// Jobs of live conversations, done first.
    pub live: u64,
    /// Jobs of imports and other bulk writes.
    pub bulk: u64,
    /// Jobs set aside: they cannot succeed as the server is configured
    /// (a summary with no model reachable).
    pub parked: u64,
    /// When the oldest waiting job was queued.
    pub oldest_queued_at: Option<DateTime<Utc>>,
}

/// The server's version and backends, the embedding model, and the caller's
/// memory queue: with a tenant's key its tenant's, with the admin key every
/// tenant's together.
#[utoipa::path(get, path = "/v1/status", tag = "health", security(("bearer" = [])),
    responses((status = 200, body = ServerStatus)))]
pub(crate) async fn status(
    State(state): State<AppState>,
    AnyCaller(caller): AnyCaller,
) -> ApiResult<axum::Json<ServerStatus>> {
    let octopus = &state.octopus;
    let queues = octopus.memory_queues().await?;
    let mine = queues.iter().filter(|queue| match caller {
        Caller::Tenant(tenant) => queue.tenant_id == tenant,
        Caller::Admin => true,
    });
    let mut queue = QueueStatus {
        waiting: 0,
        live: 0,
        bulk: 0,
        parked: 0,
        oldest_queued_at: None,
    };
    for one in mine {
        queue.live += one.live;
        queue.bulk += one.bulk;
        queue.parked += one.parked;
        queue.oldest_queued_at = match (queue.oldest_queued_at, one.oldest_queued_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    queue.waiting = queue.live + queue.bulk;
    let backends = octopus.backends();
    let embedder = octopus.embedder_in_use();
    Ok(axum::Json(ServerStatus {
        version: env!("CARGO_PKG_VERSION"),
        database: backends.database,
        vectors: backends.vectors,
        embedding: EmbeddingStatus {
            model: embedder.as_ref().map(|(model, _)| model.clone()),
            dimensions: embedder.map(|(_, dimensions)| dimensions),
            precision: octopus
                .embedding_stats()
                .precision()
                .map(|choice| choice.chosen),
        },
        memory_queue: queue,
    }))
}
