//! Full-text search over a tenant's messages: `/v1/messages/search`.

use axum::extract::State;
use chrono::{DateTime, Utc};
use octopus_core::search::{MessageHit, MessageSearchQuery};
use octopus_core::{AgentId, ConversationId};
use serde::Deserialize;
use utoipa::IntoParams;

use super::Items;
use crate::AppState;
use crate::auth::TenantCaller;
use crate::error::{ApiResult, ErrorBody};
use crate::extract::Query;

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct SearchParams {
    /// Free text. Messages matching any of its words are returned, best BM25 first.
    pub q: String,
    pub agent_id: Option<AgentId>,
    pub user_id: Option<String>,
    pub conversation_id: Option<ConversationId>,
    /// Messages at or after this instant (RFC 3339; write UTC as `Z`).
    pub from: Option<DateTime<Utc>>,
    /// Messages before this instant.
    pub to: Option<DateTime<Utc>>,
    /// 1 to 200; default 20.
    pub limit: Option<u32>,
}

/// Full-text search over the tenant's messages, ranked by BM25. Deleted episodes
/// are never searched.
#[utoipa::path(get, path = "/v1/messages/search", tag = "search", security(("bearer" = [])), params(SearchParams),
    responses((status = 200, body = Items<MessageHit>), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub(crate) async fn search_messages(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Query(params): Query<SearchParams>,
) -> ApiResult<axum::Json<Items<MessageHit>>> {
    let query = MessageSearchQuery {
        text: params.q,
        agent_id: params.agent_id,
        user_id: params.user_id,
        conversation_id: params.conversation_id,
        from: params.from,
        to: params.to,
        limit: params.limit.unwrap_or(20),
    };
    Ok(axum::Json(Items {
        items: state.octopus.search_messages(tenant, &query).await?,
    }))
}
