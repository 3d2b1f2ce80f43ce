//! Dumps over HTTP: a tenant's data (or one user's) exported as JSON Lines,
//! and imported back.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use octopus_core::TenantId;
use octopus_core::dump::ImportCounts;
use octopus_engine::{Caller, ImportInto};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::AppState;
use crate::auth::{AdminCaller, AnyCaller, TenantCaller};
use crate::error::{ApiResult, ErrorBody};
use crate::extract::{Path, Query, RawBody};

const NDJSON: &str = "application/x-ndjson";

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExportParams {
    /// Only this user's conversations (and the agents they talk to).
    pub user_id: Option<String>,
}

/// What an import stored.
#[derive(Serialize, ToSchema)]
pub(crate) struct DumpImported {
    /// The tenant the dump went into.
    pub tenant_id: TenantId,
    #[serde(flatten)]
    pub counts: ImportCounts,
    /// With a tenant's key (an import is then a copy, with new ids): the
    /// new id of each agent and conversation, by its id in the dump.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_ids: Option<NewIds>,
}

/// Ids in the dump, and what they became.
#[derive(Serialize, ToSchema)]
pub(crate) struct NewIds {
    #[schema(value_type = BTreeMap<String, String>)]
    pub agents: std::collections::BTreeMap<octopus_core::AgentId, octopus_core::AgentId>,
    #[schema(value_type = BTreeMap<String, String>)]
    pub conversations:
        std::collections::BTreeMap<octopus_core::ConversationId, octopus_core::ConversationId>,
    /// Agents the copy renamed because the tenant had one of the name
    /// already ("support" becomes "support (copy)"): old name to new.
    pub agent_names: std::collections::BTreeMap<String, String>,
    /// Shared procedures renamed for the same reason: old name to new.
    pub procedure_names: std::collections::BTreeMap<String, String>,
}

/// Export the caller's tenant as a dump: JSON Lines, streamed: a header,
/// the tenant, agents, procedures, knowledge chunks, conversations with their
/// episodes and messages, and an `end` record counting the lines. A dump cut short has no `end` record, and an
/// import refuses it.
#[utoipa::path(get, path = "/v1/export", tag = "dumps", security(("bearer" = [])), params(ExportParams),
    responses((status = 200, description = "the dump", content_type = "application/x-ndjson", body = String),
        (status = 422, body = ErrorBody)))]
pub(crate) async fn export_dump(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Query(params): Query<ExportParams>,
) -> ApiResult<Response> {
    stream(&state, tenant, params.user_id).await
}

/// Export a tenant as a dump (admin key).
#[utoipa::path(get, path = "/v1/tenants/{tenant_id}/export", tag = "admin", security(("bearer" = [])),
    params(("tenant_id" = TenantId, Path), ExportParams),
    responses((status = 200, description = "the dump", content_type = "application/x-ndjson", body = String),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub(crate) async fn export_tenant_dump(
    State(state): State<AppState>,
    _: AdminCaller,
    Path(tenant): Path<TenantId>,
    Query(params): Query<ExportParams>,
) -> ApiResult<Response> {
    stream(&state, tenant, params.user_id).await
}

async fn stream(state: &AppState, tenant: TenantId, user: Option<String>) -> ApiResult<Response> {
    let lines = state.octopus.export_dump(tenant, user).await?;
    Ok((
        [(header::CONTENT_TYPE, NDJSON)],
        axum::body::Body::from_stream(Lines(lines)),
    )
        .into_response())
}

/// The dump's lines as a response body. An error midway ends the body
/// early: the client sees a dump without its `end` record.
struct Lines(tokio::sync::mpsc::Receiver<octopus_engine::Result<String>>);

impl futures_core::Stream for Lines {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0
            .poll_recv(cx)
            .map(|line| line.map(|line| line.map(Bytes::from).map_err(std::io::Error::other)))
    }
}

/// Import a dump (JSON Lines) in one transaction: all of it, or on any
/// error nothing. With the admin key it goes into the dump's own tenant,
/// created when it does not exist, with its ids: objects that exist
/// already are a conflict. With a tenant's key it goes into that tenant as
/// a copy, every object with a new id (`new_ids` maps the agents' and
/// conversations'); an agent or shared procedure whose name the tenant has
/// already is renamed, and `new_ids` says to what.
#[utoipa::path(post, path = "/v1/import", tag = "dumps", security(("bearer" = [])),
    request_body(content = String, content_type = "application/x-ndjson", description = "a dump"),
    responses((status = 200, body = DumpImported), (status = 409, body = ErrorBody),
        (status = 422, body = ErrorBody)))]
pub(crate) async fn import_dump(
    State(state): State<AppState>,
    AnyCaller(caller): AnyCaller,
    RawBody(body): RawBody,
) -> ApiResult<axum::Json<DumpImported>> {
    let into = match caller {
        Caller::Admin => ImportInto::DumpTenant,
        Caller::Tenant(tenant) => ImportInto::Tenant(tenant),
    };
    let report = state
        .octopus
        .import_dump(into, std::io::Cursor::new(body))
        .await?;
    Ok(axum::Json(DumpImported {
        tenant_id: report.tenant_id,
        counts: report.counts,
        new_ids: report.new_ids.map(|ids| NewIds {
            agents: ids.agents,
            conversations: ids.conversations,
            agent_names: ids.agent_names,
            procedure_names: ids.procedure_names,
        }),
    }))
}
