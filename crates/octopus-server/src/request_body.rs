//! Request bodies: read only by the handlers that take one, after the
//! caller is authenticated, within a size, a deadline and a server-wide
//! budget.
//!
//! A handler's body extractor runs after its other extractors, the key's
//! among them, so a client without a valid key is answered `401` before a
//! byte of its body is read, and its connection closed. A body is then read
//! frame by frame into one buffer that grows with what has arrived (never
//! with what `content-length` promises), copying each frame out of the
//! connection's read buffer: a client trickling a byte per TCP segment
//! costs a byte each, not the page the segment arrived in. Limits:
//!
//! - `max_body_bytes` per request (one request at a time per connection):
//!   past it `413`;
//! - `body_read_timeout_secs` from the headers to the body's last byte:
//!   past it `408`;
//! - `max_body_bytes_in_flight` for all bodies being received at once:
//!   past it `503 server_busy` with `retry-after`.
//!
//! Each of these closes the connection (the rest of the body may still be
//! arriving), as does any answer given without reading a body sent.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use http_body_util::BodyExt;
use tokio::time::Instant;

use crate::error::{ApiError, ErrorCode};

/// Capacity reserved up front for a body whose length is announced; larger
/// ones grow as they arrive.
const UP_FRONT_BYTES: usize = 64 * 1024;

/// The limits bodies are read under.
#[derive(Clone, Debug)]
pub(crate) struct BodyLimits {
    pub max_bytes: usize,
    pub timeout: Duration,
    pub in_flight: Arc<InFlight>,
}

impl Default for BodyLimits {
    fn default() -> Self {
        let config = crate::ServerSettings::default();
        Self {
            max_bytes: config.max_body_bytes,
            timeout: Duration::from_secs(config.body_read_timeout_secs),
            in_flight: Arc::new(InFlight::new(config.max_body_bytes_in_flight)),
        }
    }
}

/// Bytes of request bodies received and not yet handed to a handler, in
/// all, under a cap.
#[derive(Debug)]
pub(crate) struct InFlight {
    bytes: AtomicUsize,
    cap: usize,
}

impl InFlight {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            bytes: AtomicUsize::new(0),
            cap,
        }
    }

    /// Counts `more` bytes, unless that would pass the cap.
    fn take(&self, more: usize) -> bool {
        self.bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                now.checked_add(more).filter(|total| *total <= self.cap)
            })
            .is_ok()
    }

    fn give_back(&self, bytes: usize) {
        self.bytes.fetch_sub(bytes, Ordering::AcqRel);
    }
}

/// One body's share of [`InFlight`], given back when dropped.
struct Share<'a> {
    in_flight: &'a InFlight,
    bytes: usize,
}

impl Drop for Share<'_> {
    fn drop(&mut self) {
        self.in_flight.give_back(self.bytes);
    }
}

/// What [`guard`] leaves on each request for [`read`].
#[derive(Clone)]
struct BodyTerms {
    limits: BodyLimits,
    deadline: Instant,
    read_whole: Arc<AtomicBool>,
}

/// Middleware: stamps each request with its body's limits and deadline
/// (counted from now, when its headers have arrived), and closes the
/// connection after a response given without the body sent being read.
pub(crate) async fn guard(
    State(limits): State<BodyLimits>,
    mut request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let announced = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let has_body = announced.is_some_and(|n| n > 0)
        || (announced.is_none() && headers.contains_key(header::TRANSFER_ENCODING));
    let read_whole = Arc::new(AtomicBool::new(false));
    request.extensions_mut().insert(BodyTerms {
        deadline: Instant::now() + limits.timeout,
        limits,
        read_whole: Arc::clone(&read_whole),
    });
    let mut response = next.run(request).await;
    if has_body && !read_whole.load(Ordering::Acquire) {
        close_after(&mut response);
    }
    response
}

/// Reads the body of `request` whole, under the limits [`guard`] put on it.
pub(crate) async fn read(request: Request) -> Result<Bytes, ApiError> {
    let terms = request.extensions().get::<BodyTerms>().cloned();
    let terms = terms.unwrap_or_else(|| {
        let limits = BodyLimits::default();
        BodyTerms {
            deadline: Instant::now() + limits.timeout,
            limits,
            read_whole: Arc::default(),
        }
    });
    let announced = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    let limits = &terms.limits;
    if announced.is_some_and(|n| n > limits.max_bytes) {
        return Err(too_large(limits.max_bytes));
    }
    let mut body = request.into_body();
    let mut buffer = Vec::with_capacity(announced.unwrap_or(0).min(UP_FRONT_BYTES));
    let mut share = Share {
        in_flight: &limits.in_flight,
        bytes: 0,
    };
    loop {
        let frame = match tokio::time::timeout_at(terms.deadline, body.frame()).await {
            Err(_) => {
                tracing::debug!("request body not received in time");
                return Err(ApiError::from_code(
                    ErrorCode::RequestTimeout,
                    format!(
                        "the request body did not arrive within {} s",
                        limits.timeout.as_secs()
                    ),
                ));
            }
            Ok(None) => break,
            Ok(Some(Err(error))) => {
                return Err(ApiError::from_code(
                    ErrorCode::UnreadableBody,
                    format!("the request body could not be read: {error}"),
                ));
            }
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        if buffer.len() + data.len() > limits.max_bytes {
            return Err(too_large(limits.max_bytes));
        }
        if !limits.in_flight.take(data.len()) {
            tracing::warn!(
                cap = limits.in_flight.cap,
                "request bodies in flight reached the server's cap; one refused"
            );
            let mut busy = ApiError::from_code(
                ErrorCode::ServerBusy,
                "the server is receiving as many request bodies as it holds at once; retry shortly",
            );
            busy.retry_after = Some(Duration::from_secs(1));
            return Err(busy);
        }
        share.bytes += data.len();
        // Copied out, so the connection's read buffer is free again at once.
        buffer.extend_from_slice(&data);
    }
    terms.read_whole.store(true, Ordering::Release);
    Ok(Bytes::from(buffer))
}

fn too_large(max_bytes: usize) -> ApiError {
    ApiError::from_code(
        ErrorCode::BodyTooLarge,
        format!("the request body is larger than the server accepts ({max_bytes} bytes)"),
    )
}

/// The rest of a body we did not read may still be arriving: the
/// connection cannot carry another request.
fn close_after(response: &mut Response) {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
}
