//! The one place where failures become HTTP responses.
//!
//! Every error body has the same shape, `{"error": {"code", "message", "field"?}}`,
//! with a stable machine-readable `code`. Backend failures are logged here, where
//! they are handled, and reach the client only as `internal`.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: String,
    pub message: String,
    pub field: Option<String>,
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
}

impl ApiError {
    pub fn new(status: StatusCode, code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            status,
            code: code.into(),
            message: message.into(),
            field: None,
        }
    }

    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        let field = field.into();
        self.field = (!field.is_empty() && field != ".").then_some(field);
        self
    }

    pub fn not_found_route() -> Self {
        Self::new(StatusCode::NOT_FOUND, "route_not_found", "no such route")
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
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
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_request", text)
                    .with_field(field)
            }
            E::NotFound { kind, id } => ApiError::new(
                StatusCode::NOT_FOUND,
                format!("{kind}_not_found"),
                format!("{kind} {id} not found"),
            ),
            E::Conflict { code, message } => ApiError::new(StatusCode::CONFLICT, code, message),
            E::Gone { code, message } => ApiError::new(StatusCode::GONE, code, message),
            E::Backend(source) => {
                tracing::error!(error = %source, "storage backend failed");
                ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "internal error; see the server log",
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
            E::Unauthenticated => ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthenticated",
                error.to_string(),
            ),
            E::AdminOnly => ApiError::new(StatusCode::FORBIDDEN, "admin_only", error.to_string()),
            E::Embedding(embedding) => embedding_error(embedding),
            E::Config(message) => {
                tracing::error!(%message, "configuration error");
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
            }
            E::OpenStore(source) => {
                tracing::error!(error = %source, "store unavailable");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "unavailable",
                    "the store is unavailable",
                )
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
        E::Input(message) => {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_request", message)
        }
        E::Provider {
            provider,
            message,
            retry_after,
        } => {
            let status = if retry_after.is_some() {
                StatusCode::SERVICE_UNAVAILABLE
            } else {
                StatusCode::BAD_GATEWAY
            };
            ApiError::new(
                status,
                "embedding_provider_failed",
                format!("{provider}: {message}"),
            )
        }
        E::Model(message) => {
            tracing::error!(%message, "embedding model unavailable");
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "embedding_unavailable",
                "the embedding model is not available; see the server log (is it installed? scripts/fetch-model.sh)",
            )
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let unauthenticated = self.status == StatusCode::UNAUTHORIZED;
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code,
                message: self.message,
                field: self.field,
            },
        };
        let mut response = (self.status, Json(body)).into_response();
        if unauthenticated {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
