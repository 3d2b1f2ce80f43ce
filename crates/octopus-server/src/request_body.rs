//! Every request body is read whole, within a size limit and a deadline,
//! before any handler sees the request.
//!
//! Handlers all want their body whole (JSON), so buffering costs nothing they
//! would not pay, and it puts the two limits in one place: a body larger than
//! `max_body_bytes` is `413`, and one that has not fully arrived
//! `body_read_timeout_secs` after its headers is `408` and its connection is
//! closed. A client sending one byte at a time cannot keep a connection (and
//! the handler's task) for longer than that.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};

use crate::error::{ApiError, ErrorCode};

/// The limits a body is read under.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyLimits {
    pub max_bytes: usize,
    pub timeout: Duration,
}

pub(crate) async fn read_whole_body(
    State(limits): State<BodyLimits>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let read = Limited::new(body, limits.max_bytes).collect();
    let bytes: Bytes = match tokio::time::timeout(limits.timeout, read).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(error)) if error.downcast_ref::<LengthLimitError>().is_some() => {
            return close_after(ApiError::from_code(
                ErrorCode::BodyTooLarge,
                format!(
                    "the request body is larger than the server accepts ({} bytes)",
                    limits.max_bytes
                ),
            ));
        }
        Ok(Err(error)) => {
            return close_after(ApiError::from_code(
                ErrorCode::UnreadableBody,
                format!("the request body could not be read: {error}"),
            ));
        }
        Err(_) => {
            tracing::debug!("request body not received in time");
            return close_after(ApiError::from_code(
                ErrorCode::RequestTimeout,
                format!(
                    "the request body did not arrive within {} s",
                    limits.timeout.as_secs()
                ),
            ));
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// The rest of a body we gave up on may still be arriving: the connection
/// cannot carry another request.
fn close_after(error: ApiError) -> Response {
    let mut response = error.into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}
