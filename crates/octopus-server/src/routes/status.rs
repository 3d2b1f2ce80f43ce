//! `GET /v1/status`: what a caller may know of the server it talks to, and
//! of its own memory queue (a tenant's key sees its tenant's; the admin key,
//! every tenant's together).

use axum::extract::State;
use chrono::{DateTime, Utc};
use octopus_core::AgentId;
use octopus_engine::Caller;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::AppState;
use crate::auth::AnyCaller;
use crate::error::{ApiError, ApiResult, ErrorBody, ErrorCode};
use crate::extract::Query;

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct StatusParams {
    /// Also say whether this agent's model can be called (a tenant's key).
    pub agent_id: Option<AgentId>,
}

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
    /// With `agent_id`: that agent's model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentStatus>,
}

/// An agent's model, as far as the server can tell without calling it.
#[derive(Serialize, ToSchema)]
pub(crate) struct AgentStatus {
    pub id: AgentId,
    pub name: String,
    /// `provider/model` of the model that writes summaries and learns facts.
    pub model: String,
    /// Whether that model can be called as the server is set up. Without
    /// it, messages are stored, embedded and recalled, but episodes get
    /// their opening lines as summaries and no fact is learned.
    pub model_callable: bool,
    /// Why it cannot be (no key for the provider, a base URL the operator's
    /// rules forbid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
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
/// tenant's together. With `agent_id`, whether that agent's model can be
/// called.
#[utoipa::path(get, path = "/v1/status", tag = "health", security(("bearer" = [])),
    params(StatusParams),
    responses((status = 200, body = ServerStatus), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody)))]
pub(crate) async fn status(
    State(state): State<AppState>,
    AnyCaller(caller): AnyCaller,
    Query(params): Query<StatusParams>,
) -> ApiResult<axum::Json<ServerStatus>> {
    let octopus = &state.octopus;
    let agent = match (params.agent_id, caller) {
        (None, _) => None,
        (Some(id), Caller::Tenant(tenant)) => {
            let agent = octopus.get_agent(tenant, id).await?;
            let problem = octopus.model_problem(&agent);
            let llm = agent.llm.summary_model.as_ref().unwrap_or(&agent.llm.model);
            Some(AgentStatus {
                id: agent.id,
                model: format!("{}/{llm}", agent.llm.provider.as_str()),
                name: agent.name,
                model_callable: problem.is_none(),
                problem,
            })
        }
        (Some(_), Caller::Admin) => {
            return Err(ApiError::from_code(
                ErrorCode::TenantKeyRequired,
                "an agent belongs to a tenant: ask with the tenant's key",
            ));
        }
    };
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
        agent,
    }))
}
