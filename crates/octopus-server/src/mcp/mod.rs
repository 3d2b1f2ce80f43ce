//! The Model Context Protocol door: Octopus's memory as MCP tools and
//! resources, for Claude Desktop, Cursor, IDE agents and agent frameworks.
//!
//! One handler, [`MemoryServer`], serves both transports:
//! - Streamable HTTP at `/mcp` on `octopus serve` ([`router`]): each request
//!   carries a tenant's key, as on every route; the server keeps no session
//!   (stateless, JSON answers), so a client holds nothing open and a
//!   keyless one makes the server hold nothing;
//! - stdio ([`serve_stdio`]), for `octopus mcp` over a data directory.
//!
//! Every tool calls the engine operation its REST route calls; errors carry
//! the REST API's code (`agent_not_found`, `invalid_request`, …) in their
//! `data`.

mod protocol;
mod resources;
mod tools;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use octopus_core::TenantId;
use octopus_engine::{Caller, Error as EngineError, Octopus};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use axum::extract::FromRequestParts;

use crate::AppState;
use crate::auth::TenantAuthor;
use crate::error::{ApiError, ErrorCode};

/// What an operator allows the tools to do beyond reading and adding.
#[derive(Clone, Copy, Debug, Default)]
pub struct McpOptions {
    /// Offer `forget_user`, which erases everything about a user and cannot
    /// be undone. Off unless the operator turns it on.
    pub allow_forget_user: bool,
}

/// The MCP server over one engine. Its tenant is fixed (stdio, opened with
/// a tenant's key) or comes with each HTTP request (`/mcp`).
#[derive(Clone)]
pub struct MemoryServer {
    octopus: Octopus,
    caller: Option<TenantAuthor>,
    options: McpOptions,
}

impl MemoryServer {
    /// A server for one tenant's key.
    pub async fn for_key(
        octopus: Octopus,
        key: &str,
        options: McpOptions,
    ) -> Result<Self, ApiError> {
        match octopus.authenticate(key).await? {
            Caller::Tenant(tenant) => {
                let key_name = octopus.key_name(tenant, key).await?;
                Ok(Self {
                    octopus,
                    caller: Some(TenantAuthor { tenant, key_name }),
                    options,
                })
            }
            Caller::Admin => Err(tenant_key_required()),
        }
    }

    /// The caller: this server's, or the one `/mcp`'s authentication put in
    /// the request.
    fn caller(&self, context: &RequestContext<RoleServer>) -> Result<TenantAuthor, ErrorData> {
        self.caller
            .clone()
            .or_else(|| {
                context
                    .extensions
                    .get::<axum::http::request::Parts>()
                    .and_then(|parts| parts.extensions.get::<TenantAuthor>().cloned())
            })
            .ok_or_else(|| to_mcp_error(ApiError::from(EngineError::Unauthenticated)))
    }

    fn tenant(&self, context: &RequestContext<RoleServer>) -> Result<TenantId, ErrorData> {
        Ok(self.caller(context)?.tenant)
    }
}

impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("octopus", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Octopus is the memory of an agent. Name the agent (its name or id) and the user in each call. \
             `remember` what the user says and what you answer; `recall` past conversations by meaning; \
             `search_knowledge` the agent's documents; `get_context` assembles everything relevant for the \
             user's next message within the agent's token budget.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::list(self.options)))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = self.caller(&context)?;
        tools::call(&self.octopus, &caller, self.options, request)
            .await
            .map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let tenant = self.tenant(&context)?;
        resources::list(&self.octopus, tenant)
            .await
            .map(ListResourcesResult::with_all_items)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(protocol::unread_request(
            &request.method,
            request.params.as_ref(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let tenant = self.tenant(&context)?;
        resources::read(&self.octopus, tenant, &request.uri)
            .await
            .map(Into::into)
    }
}

/// Serves one tenant over standard input and output until the client
/// closes them.
pub async fn serve_stdio(server: MemoryServer) -> std::io::Result<()> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// `/mcp`: Streamable HTTP, stateless, each request authenticated with a
/// tenant's key before its body is read.
pub(crate) fn router(state: AppState, options: McpOptions) -> Router<AppState> {
    let octopus = state.octopus.clone();
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        // Every request needs a tenant's key, which a page that rebinds a
        // name to this server does not have: the Host check guards
        // keyless local servers, and would refuse this one's real names.
        .disable_allowed_hosts();
    let service = StreamableHttpService::new(
        move || {
            Ok(MemoryServer {
                octopus: octopus.clone(),
                caller: None,
                options,
            })
        },
        Arc::new(NeverSessionManager::default()),
        config,
    );
    Router::new()
        .route_service("/mcp", service)
        .layer(middleware::from_fn_with_state(state, authenticate))
}

/// Puts the caller (its tenant, and its key's name for the changes it
/// makes) in the request, then reads the body under the server's limits; a request
/// without a tenant's key ends here, unread. A body that is not one
/// JSON-RPC message gets JSON-RPC's error ([`protocol`]).
async fn authenticate(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let caller = match TenantAuthor::from_request_parts(&mut parts, &state).await {
        Ok(caller) => caller,
        Err(error) => return error.into_response(),
    };
    parts.extensions.insert(caller);
    let bytes = match crate::request_body::read(Request::from_parts(parts.clone(), body)).await {
        Ok(bytes) => bytes,
        Err(error) => return error.into_response(),
    };
    if parts.method == axum::http::Method::POST
        && protocol::is_json(&parts.headers)
        && let Err(refusal) = protocol::check(&bytes)
    {
        return refusal.into_response();
    }
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    protocol::as_json_rpc(response).await
}

fn tenant_key_required() -> ApiError {
    ApiError::from_code(
        ErrorCode::TenantKeyRequired,
        "MCP tools reach one tenant's memory: use a tenant's key, not the admin key",
    )
}

/// An engine failure as an MCP error: the REST API's code, status and
/// field in `data`, so that a client matches on the same codes.
fn to_mcp_error(error: ApiError) -> ErrorData {
    let body = error.body();
    let message = format!("{}: {}", body.error.code, body.error.message);
    let mut data = serde_json::to_value(&body.error).unwrap_or_default();
    data["status"] = error.status.as_u16().into();
    let code = if error.status.is_client_error() {
        rmcp::model::ErrorCode::INVALID_PARAMS
    } else {
        rmcp::model::ErrorCode::INTERNAL_ERROR
    };
    ErrorData::new(code, message, Some(data))
}

/// The MCP error for an engine failure.
fn engine_error(error: impl Into<ApiError>) -> ErrorData {
    to_mcp_error(error.into())
}
