//! The one place where failures become HTTP responses.
//!
//! Every error body has the same shape, `{"error": {"code", "message", "field"?}}`,
//! with a stable machine-readable `code`. [`ErrorCode`] is the table of every
//! code the server answers with, its status and what it means; the OpenAPI
//! document's error responses are generated from it. Backend failures are
//! logged here, where they are handled, and reach the client only as `internal`.

use std::time::Duration;

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use octopus_core::{DomainCode, ObjectKind};
use serde::Serialize;
use utoipa::ToSchema;

/// Every error code, with its status and meaning.
macro_rules! error_codes {
    ($($variant:ident = ($status:ident, $code:literal, $meaning:literal),)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ErrorCode { $($variant,)* }

        impl ErrorCode {
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The stable code clients match on.
            pub fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $code,)* }
            }

            pub fn status(self) -> StatusCode {
                match self { $(ErrorCode::$variant => StatusCode::$status,)* }
            }

            /// What the code means, for the OpenAPI document.
            pub fn meaning(self) -> &'static str {
                match self { $(ErrorCode::$variant => $meaning,)* }
            }
        }
    };
}

error_codes! {
    MalformedJson = (BAD_REQUEST, "malformed_json", "the body is not valid JSON"),
    InvalidId = (BAD_REQUEST, "invalid_id", "a path parameter is not a valid id"),
    InvalidQuery = (BAD_REQUEST, "invalid_query", "a query parameter is unknown or of the wrong type"),
    UnreadableBody = (BAD_REQUEST, "unreadable_body", "the request body could not be read"),
    Unauthenticated = (UNAUTHORIZED, "unauthenticated", "no API key, or an unknown or revoked one"),
    AdminOnly = (FORBIDDEN, "admin_only", "the operation needs the admin key"),
    TenantKeyRequired = (FORBIDDEN, "tenant_key_required", "tenant data needs a tenant's key, not the admin key"),
    RouteNotFound = (NOT_FOUND, "route_not_found", "no such route"),
    TenantNotFound = (NOT_FOUND, "tenant_not_found", "no such tenant"),
    ApiKeyNotFound = (NOT_FOUND, "api_key_not_found", "no such API key"),
    AgentNotFound = (NOT_FOUND, "agent_not_found", "no such agent for this tenant"),
    ConversationNotFound = (NOT_FOUND, "conversation_not_found", "no such conversation for this tenant"),
    EpisodeNotFound = (NOT_FOUND, "episode_not_found", "no such episode for this tenant"),
    CollectionNotFound = (NOT_FOUND, "collection_not_found", "the agent has no knowledge yet"),
    ChunkNotFound = (NOT_FOUND, "chunk_not_found", "no such knowledge chunk"),
    DocumentNotFound = (NOT_FOUND, "document_not_found", "the agent's knowledge has no document of that source"),
    UserNotFound = (NOT_FOUND, "user_not_found", "the agent has no conversation or fact of this user"),
    ProcedureNotFound = (NOT_FOUND, "procedure_not_found", "no such procedure for this tenant"),
    ProcedureVersionNotFound = (NOT_FOUND, "procedure_version_not_found", "the procedure has no such version"),
    FactNotFound = (NOT_FOUND, "fact_not_found", "no such fact for this tenant (or its episode is deleted or archived)"),
    MessageNotFound = (NOT_FOUND, "message_not_found", "no such message for this tenant (or its episode is deleted)"),
    WebhookNotFound = (NOT_FOUND, "webhook_not_found", "no such webhook for this tenant"),
    MethodNotAllowed = (METHOD_NOT_ALLOWED, "method_not_allowed", "the route does not take that method"),
    RequestTimeout = (REQUEST_TIMEOUT, "request_timeout", "the request body did not arrive in time"),
    AgentInactive = (CONFLICT, "agent_inactive", "the agent is deactivated"),
    AgentDeleted = (CONFLICT, "agent_deleted", "the conversation's agent was deleted"),
    AgentNameTaken = (CONFLICT, "agent_name_taken", "an active agent has that name"),
    ProcedureNameTaken = (CONFLICT, "procedure_name_taken", "an active procedure of the same agent (or shared) has that name"),
    NoPendingVersion = (CONFLICT, "no_pending_version", "the procedure has no version waiting for a decision"),
    NoToolCalls = (CONFLICT, "no_tool_calls", "the episode called no tool: there is no procedure to learn from it"),
    VersionNotApproved = (CONFLICT, "version_not_approved", "only a version that was approved can serve again"),
    EpisodeClosed = (CONFLICT, "episode_closed", "the episode is closed already"),
    EpisodeNotDeleted = (CONFLICT, "episode_not_deleted", "only a deleted or archived episode can be purged"),
    EpisodeLive = (CONFLICT, "episode_live", "the episode is neither deleted nor archived, so there is nothing to restore"),
    ImportConflict = (CONFLICT, "import_conflict", "an object of the dump exists already (its id or name is taken); nothing was imported"),
    CollectionMismatch = (CONFLICT, "collection_mismatch", "the embedding model differs from the collection's"),
    SpeakerNotFound = (CONFLICT, "speaker_not_found", "a message's `agent_id` names no agent of this tenant"),
    NoPendingToolCalls = (CONFLICT, "no_pending_tool_calls", "tool results were sent, but no tool call of this turn waits for one"),
    ToolResultsMismatch = (CONFLICT, "tool_results_mismatch", "the tool results do not answer the pending tool calls exactly, once each"),
    TenantLimitReached = (CONFLICT, "tenant_limit_reached", "the tenant holds as much as its quota allows ([quotas]: procedures, or their trigger patterns' compiled size); remove some first"),
    ConversationDeleted = (GONE, "conversation_deleted", "the conversation is deleted"),
    ConversationMoved = (CONFLICT, "conversation_moved", "another request changed the conversation while this one was decided (a tool call answered, say); send it again"),
    UnknownFactCategory = (CONFLICT, "unknown_fact_category", "the fact's `category` is none of its agent's `memory.fact_categories`"),
    FactKeyTaken = (CONFLICT, "fact_key_taken", "another fact of the user that holds in the same category has the `key`"),
    FactReplaced = (CONFLICT, "fact_replaced", "the fact was replaced by a newer version; correct the version that holds (its `superseded_by` chain ends there)"),
    CorrectionBeforeFact = (CONFLICT, "correction_before_fact", "the correction's `valid_from` is before the version it corrects became true; a correction starts then or later"),
    BodyTooLarge = (PAYLOAD_TOO_LARGE, "body_too_large", "the request body is larger than the server accepts"),
    UnsupportedMediaType = (UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type", "the body is not sent as JSON"),
    InvalidRequest = (UNPROCESSABLE_ENTITY, "invalid_request", "valid JSON, but a field is missing, of the wrong type or out of bounds; `field` names it"),
    QuotaExceeded = (TOO_MANY_REQUESTS, "quota_exceeded", "the tenant is over a quota; retry after `retry-after` seconds"),
    Internal = (INTERNAL_SERVER_ERROR, "internal", "a failure inside the server; see its log"),
    EmbeddingProviderFailed = (BAD_GATEWAY, "embedding_provider_failed", "the embedding provider refused or failed"),
    EmbeddingProviderBusy = (SERVICE_UNAVAILABLE, "embedding_provider_busy", "the embedding provider asked to retry later; so does `retry-after`"),
    Unavailable = (SERVICE_UNAVAILABLE, "unavailable", "the store or a configured part is unavailable"),
    EmbeddingUnavailable = (SERVICE_UNAVAILABLE, "embedding_unavailable", "the embedding model is not available"),
    LlmProviderFailed = (BAD_GATEWAY, "llm_provider_failed", "the agent's model provider failed or refused the request; `provider` names it"),
    LlmProviderBusy = (SERVICE_UNAVAILABLE, "llm_provider_busy", "the agent's model provider is rate-limiting or overloaded; retry after `retry-after`"),
    LlmNotConfigured = (SERVICE_UNAVAILABLE, "llm_not_configured", "the agent's model cannot be called as configured (no API key, a refused key, a base URL the server does not call, a missing deployment or model); the agent's settings or the server's must change"),
    TooManyConnections = (SERVICE_UNAVAILABLE, "too_many_connections", "the server has too many open connections"),
    ServerBusy = (SERVICE_UNAVAILABLE, "server_busy", "the server is receiving as many request bodies as it holds at once; retry after `retry-after`"),
}

impl ErrorCode {
    /// The code of a missing object of kind `kind`.
    fn not_found(kind: ObjectKind) -> Self {
        match kind {
            ObjectKind::Tenant => Self::TenantNotFound,
            ObjectKind::ApiKey => Self::ApiKeyNotFound,
            ObjectKind::Agent => Self::AgentNotFound,
            ObjectKind::Conversation => Self::ConversationNotFound,
            ObjectKind::Episode => Self::EpisodeNotFound,
            ObjectKind::Message => Self::MessageNotFound,
            ObjectKind::Fact => Self::FactNotFound,
            ObjectKind::Webhook => Self::WebhookNotFound,
            ObjectKind::Procedure => Self::ProcedureNotFound,
            ObjectKind::ProcedureVersion => Self::ProcedureVersionNotFound,
            ObjectKind::Collection => Self::CollectionNotFound,
            ObjectKind::Chunk => Self::ChunkNotFound,
            ObjectKind::Document => Self::DocumentNotFound,
            ObjectKind::User => Self::UserNotFound,
        }
    }

    /// The code of a domain conflict or gone state.
    fn domain(code: DomainCode) -> Self {
        match code {
            DomainCode::AgentInactive => Self::AgentInactive,
            DomainCode::AgentDeleted => Self::AgentDeleted,
            DomainCode::AgentNameTaken => Self::AgentNameTaken,
            DomainCode::ProcedureNameTaken => Self::ProcedureNameTaken,
            DomainCode::NoPendingVersion => Self::NoPendingVersion,
            DomainCode::NoToolCalls => Self::NoToolCalls,
            DomainCode::VersionNotApproved => Self::VersionNotApproved,
            DomainCode::EpisodeClosed => Self::EpisodeClosed,
            DomainCode::EpisodeNotDeleted => Self::EpisodeNotDeleted,
            DomainCode::EpisodeLive => Self::EpisodeLive,
            DomainCode::ImportConflict => Self::ImportConflict,
            DomainCode::CollectionMismatch => Self::CollectionMismatch,
            DomainCode::SpeakerNotFound => Self::SpeakerNotFound,
            DomainCode::NoPendingToolCalls => Self::NoPendingToolCalls,
            DomainCode::ToolResultsMismatch => Self::ToolResultsMismatch,
            DomainCode::TenantLimitReached => Self::TenantLimitReached,
            DomainCode::ConversationDeleted => Self::ConversationDeleted,
            DomainCode::ConversationMoved => Self::ConversationMoved,
            DomainCode::FactReplaced => Self::FactReplaced,
            DomainCode::CorrectionBeforeFact => Self::CorrectionBeforeFact,
            DomainCode::UnknownFactCategory => Self::UnknownFactCategory,
            DomainCode::FactKeyTaken => Self::FactKeyTaken,
        }
    }
}

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: ErrorCode,
    pub message: String,
    pub field: Option<String>,
    /// Sent as `retry-after`, in whole seconds.
    pub retry_after: Option<Duration>,
    /// The model provider a failure came from, and whose fault it was.
    pub provider: Option<(String, octopus_core::chat::Fault)>,
}

/// The body of every error response.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable, machine-readable: `invalid_request`, `agent_not_found`, …
    pub code: String,
    pub message: String,
    /// The offending field's path, e.g. `messages[2].role`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The agent's model provider, when the failure is its (`llm_*` codes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// With `provider`: whose fault the failure is — `configuration` (the
    /// operator's: a key, a URL, a model), `request` (the provider refused
    /// what it was sent), `busy` (retry later) or `provider` (it failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<octopus_core::chat::Fault>,
}

impl ApiError {
    /// An error with `code`'s status.
    pub fn from_code(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status: code.status(),
            code,
            message: message.into(),
            field: None,
            retry_after: None,
            provider: None,
        }
    }

    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        let field = field.into();
        self.field = (!field.is_empty() && field != ".").then_some(field);
        self
    }

    pub fn not_found_route() -> Self {
        Self::from_code(ErrorCode::RouteNotFound, "no such route")
    }

    pub fn method_not_allowed() -> Self {
        Self::from_code(
            ErrorCode::MethodNotAllowed,
            "this route does not take that method",
        )
    }
}

impl From<octopus_core::Error> for ApiError {
    fn from(error: octopus_core::Error) -> Self {
        use octopus_core::Error as E;
        match error {
            E::Invalid { field, message } => {
                let text = if field.is_empty() {
                    message.clone()
                } else {
                    format!("{field}: {message}")
                };
                ApiError::from_code(ErrorCode::InvalidRequest, text).with_field(field)
            }
            E::NotFound { kind, id } => {
                ApiError::from_code(ErrorCode::not_found(kind), format!("{kind} {id} not found"))
            }
            E::Conflict { code, message } | E::Gone { code, message } => {
                ApiError::from_code(ErrorCode::domain(code), message)
            }
            E::Backend(source) => {
                tracing::error!(error = %source, "storage backend failed");
                ApiError::from_code(ErrorCode::Internal, "internal error; see the server log")
            }
            E::Unavailable { service, source } => {
                tracing::warn!(error = %source, service, "a service the store needs is unavailable");
                ApiError::from_code(
                    ErrorCode::Unavailable,
                    format!("{service} is unreachable; nothing stored was lost, retry later"),
                )
            }
        }
    }
}

impl From<octopus_engine::Error> for ApiError {
    fn from(error: octopus_engine::Error) -> Self {
        use octopus_engine::Error as E;
        match error {
            E::Domain(domain) => domain.into(),
            E::Unauthenticated => {
                ApiError::from_code(ErrorCode::Unauthenticated, error.to_string())
            }
            E::AdminOnly => ApiError::from_code(ErrorCode::AdminOnly, error.to_string()),
            E::Quota { retry_after, .. } => ApiError {
                retry_after: Some(retry_after),
                ..ApiError::from_code(ErrorCode::QuotaExceeded, error.to_string())
            },
            E::Embedding(embedding) => embedding_error(embedding),
            E::Chat(chat) => chat_error(chat),
            E::Config(message) => {
                tracing::error!(%message, "configuration error");
                ApiError::from_code(ErrorCode::Unavailable, message)
            }
        }
    }
}

/// Whose fault an embedding failure is decides the status: the caller's input
/// (422), the provider (502, or 503 when it asked to retry later), or our model
/// (503, logged).
fn embedding_error(error: octopus_core::embedding::EmbedError) -> ApiError {
    use octopus_core::embedding::EmbedError as E;
    match error {
        E::Input(message) => ApiError::from_code(ErrorCode::InvalidRequest, message),
        E::Provider {
            provider,
            message,
            retry_after,
        } => {
            let message = format!("{provider}: {message}");
            match retry_after {
                Some(after) => ApiError {
                    retry_after: Some(after),
                    ..ApiError::from_code(ErrorCode::EmbeddingProviderBusy, message)
                },
                None => ApiError::from_code(ErrorCode::EmbeddingProviderFailed, message),
            }
        }
        E::Model(message) => {
            tracing::error!(%message, "embedding model unavailable");
            ApiError::from_code(
                ErrorCode::EmbeddingUnavailable,
                "the embedding model is not available; see the server log (is it installed? scripts/fetch-model.sh)",
            )
        }
    }
}

/// A failed model call: the operator's configuration (503
/// `llm_not_configured`), a busy provider (503 with `retry-after`), or a
/// provider that failed or refused (502). The provider's own words are kept.
fn chat_error(error: octopus_core::chat::ChatError) -> ApiError {
    use octopus_core::chat::Fault;
    let code = match error.fault {
        Fault::Configuration => ErrorCode::LlmNotConfigured,
        Fault::Busy => ErrorCode::LlmProviderBusy,
        Fault::Request | Fault::Provider => ErrorCode::LlmProviderFailed,
    };
    let retry_after = match error.fault {
        Fault::Busy => Some(error.retry_after.unwrap_or(Duration::from_secs(1))),
        _ => None,
    };
    ApiError {
        retry_after,
        provider: Some((error.provider.clone(), error.fault)),
        ..ApiError::from_code(
            code,
            format!("model provider {}: {}", error.provider, error.message),
        )
    }
}

impl ApiError {
    /// The JSON body of this error.
    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorDetail {
                code: self.code.as_str().to_owned(),
                message: self.message.clone(),
                field: self.field.clone(),
                provider: self.provider.as_ref().map(|(name, _)| name.clone()),
                fault: self.provider.as_ref().map(|(_, fault)| *fault),
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = self.body();
        let mut response = (self.status, Json(body)).into_response();
        let headers = response.headers_mut();
        if self.status == StatusCode::UNAUTHORIZED {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(after) = self.retry_after {
            let seconds = after.as_secs() + u64::from(after.subsec_nanos() > 0);
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds.max(1)));
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_errors_by_status() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            assert!(seen.insert(code.as_str()), "{} twice", code.as_str());
            assert!(
                code.status().is_client_error() || code.status().is_server_error(),
                "{code:?}"
            );
        }
    }

    #[test]
    fn every_missing_kind_has_a_not_found_code_of_its_own_named_after_it() {
        let mut seen = std::collections::HashSet::new();
        for &kind in ObjectKind::ALL {
            let code = ErrorCode::not_found(kind);
            assert!(seen.insert(code), "{kind:?} shares {code:?}");
            assert_eq!(code.status(), StatusCode::NOT_FOUND, "{kind:?}");
            assert_eq!(code.as_str(), format!("{}_not_found", kind.as_str()));
        }
        assert!(!seen.contains(&ErrorCode::RouteNotFound));
    }

    #[test]
    fn every_domain_code_has_a_row_of_its_own_with_a_documented_status() {
        let mut seen = std::collections::HashSet::new();
        for &domain in DomainCode::ALL {
            let code = ErrorCode::domain(domain);
            assert!(seen.insert(code), "{domain:?} shares {code:?}");
            assert!(ErrorCode::ALL.contains(&code), "{code:?} is documented");
            let expected = match domain {
                DomainCode::ConversationDeleted => StatusCode::GONE,
                _ => StatusCode::CONFLICT,
            };
            assert_eq!(code.status(), expected, "{domain:?}");
            // The wire name is the variant's, in snake case.
            let snake: String = format!("{domain:?}")
                .chars()
                .enumerate()
                .flat_map(|(i, c)| {
                    let lower = c.to_ascii_lowercase();
                    (c.is_ascii_uppercase() && i > 0)
                        .then_some('_')
                        .into_iter()
                        .chain([lower])
                })
                .collect();
            assert_eq!(code.as_str(), snake);
        }
    }
}
