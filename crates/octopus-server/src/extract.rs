//! Extractors whose rejections are JSON errors naming the problem, in place of
//! axum's plain-text ones.

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// A JSON body. Malformed JSON is 400 `malformed_json`; JSON of the wrong shape is
/// 422 `invalid_request` with the path of the offending field; a body over the
/// limit is 413 `body_too_large`.
pub struct Json<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        if let Some(content_type) = request.headers().get(axum::http::header::CONTENT_TYPE)
            && !content_type
                .to_str()
                .is_ok_and(|v| v.starts_with("application/json"))
        {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "send the body as application/json",
            ));
        }
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(body_rejection)?;
        parse_json(&bytes).map(Json)
    }
}

/// Parses JSON with the path of any shape error.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        if inner.is_data() {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_request",
                format!("{path}: {inner}"),
            )
            .with_field(path)
        } else {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "malformed_json",
                format!("the body is not valid JSON: {inner}"),
            )
        }
    })?;
    deserializer.end().map_err(|error| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "malformed_json",
            format!("the body is not valid JSON: {error}"),
        )
    })?;
    Ok(value)
}

fn body_rejection(rejection: BytesRejection) -> ApiError {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            "the request body is larger than the server accepts",
        )
    } else {
        ApiError::new(rejection.status(), "unreadable_body", rejection.body_text())
    }
}

/// Path parameters. A malformed id is 400 `invalid_id`.
pub struct Path<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for Path<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| Path(value))
            .map_err(|rejection: PathRejection| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_id",
                    format!("invalid path parameter: {}", rejection.body_text()),
                )
            })
    }
}

/// Query parameters. Bad ones are 400 `invalid_query`.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(value)| Query(value))
            .map_err(|rejection: QueryRejection| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "invalid_query",
                    rejection.body_text(),
                )
            })
    }
}
