//! Serving TCP connections so that no client can hold the server hostage.
//!
//! A connection costs a file descriptor and a task for as long as it is open,
//! whether or not its client ever finishes a request. So every connection is
//! bounded in number (in all, and per client address) and in time:
//!
//! - **the first request**: a new connection's first request head must be
//!   complete within `header_read_timeout_secs` of the connection: a client
//!   that connects and sends nothing holds its slot that long, no longer;
//! - **keep-alive**: after a request, a connection with none in progress is
//!   closed after `keep_alive_timeout_secs` without a byte;
//! - **headers**: once a request's first byte has arrived, its headers must be
//!   complete within `header_read_timeout_secs` (a client trickling one byte at
//!   a time does not reset this);
//! - **body**: a request's whole body must arrive within
//!   `body_read_timeout_secs` ([`crate::request_body`]).
//!
//! A connection over the caps is answered `503` with `retry-after` and closed at
//! once, without a task of its own: under a flood of connections the server
//! keeps its descriptors for the clients it is serving. When the cap in all
//! is reached, a few more connections (`probe_connections`) are admitted for
//! health probes alone, from addresses that hold no other connection: they
//! are served `/healthz` and `/readyz`, one request each within 2 s, and
//! anything else is `503 too_many_connections`; so an orchestrator's probes
//! still see a live server while others hold every connection.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};
use tower::ServiceExt;

use crate::ServerSettings;
use crate::metrics::Metrics;

/// How long connections still serving a request may finish after shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// Descriptors kept for the store's files, the index and the log, beyond
/// client connections.
const RESERVED_DESCRIPTORS: usize = 64;

/// The caps and timeouts, as configured.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnectionLimits {
    pub max_connections: usize,
    pub max_connections_per_address: usize,
    pub header_read_timeout: Duration,
    pub keep_alive_timeout: Duration,
    /// Connections admitted past `max_connections`, for health probes only.
    pub probe_connections: usize,
}

impl ConnectionLimits {
    pub(crate) fn from_config(config: &ServerSettings) -> Self {
        let mut max_connections = config.max_connections;
        // More connections than descriptors would fail at accept time instead,
        // where nobody can be told why.
        if let Some(open_files) = open_file_limit() {
            let usable = open_files.saturating_sub(RESERVED_DESCRIPTORS).max(1);
            if usable < max_connections {
                tracing::warn!(
                    configured = max_connections,
                    open_file_limit = open_files,
                    using = usable,
                    "max_connections exceeds the process's open-file limit; lowered"
                );
                max_connections = usable;
            }
        }
        Self {
            max_connections,
            max_connections_per_address: match config.max_connections_per_address {
                0 => usize::MAX,
                n => n,
            },
            header_read_timeout: Duration::from_secs(config.header_read_timeout_secs),
            keep_alive_timeout: Duration::from_secs(config.keep_alive_timeout_secs),
            probe_connections: config.probe_connections,
        }
    }
}

/// Accepts connections on `listener` and serves `router` on each until
/// `shutdown` resolves; then waits a little for requests in progress.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    let admission = Arc::new(Admission::new(limits, Arc::clone(&metrics)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of descriptors or memory: retrying at once would spin.
                    tracing::error!(%error, "accept failed; pausing");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(slot) = Admission::admit(&admission, peer.ip()) else {
            refuse(&stream);
            continue;
        };
        let probes_only = slot.lane == Lane::ProbesOnly;
        let _ = stream.set_nodelay(true);
        let activity = Arc::new(Activity::default());
        let mut watched_limits = limits;
        if probes_only {
            // A probe asks at once; the reserve must not be held long.
            watched_limits.header_read_timeout =
                limits.header_read_timeout.min(PROBE_HEADER_TIMEOUT);
        }
        let io = TokioIo::new(Watched::new(stream, Arc::clone(&activity), watched_limits));
        let router = router.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let request_guard = activity.begin();
            let router = router.clone();
            async move {
                let response = if probes_only && !is_probe(&request) {
                    Ok(too_many_connections())
                } else {
                    router.oneshot(request.map(Body::new)).await
                };
                drop(request_guard);
                response
            }
        });
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            // Our own `Watched` times the headers: hyper's timer would also
            // run while a kept-alive connection is idle.
            .header_read_timeout(None)
            .keep_alive(!probes_only)
            .serve_connection(io, service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection closed");
            }
            drop(slot);
        });
    }
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the shutdown grace period; closing them");
    }
    Ok(())
}

/// The longest a connection in the probes' reserve may take to send its request.
const PROBE_HEADER_TIMEOUT: Duration = Duration::from_secs(2);

const TOO_MANY_CONNECTIONS: &str = r#"{"error":{"code":"too_many_connections","message":"the server has too many open connections (from this address or in all); retry later"}}"#;

/// Whether a request is a health probe, which the reserve serves.
fn is_probe(request: &hyper::Request<Incoming>) -> bool {
    matches!(*request.method(), hyper::Method::GET | hyper::Method::HEAD)
        && matches!(request.uri().path(), "/healthz" | "/health" | "/readyz")
}

/// The answer to a request the probes' reserve does not serve.
fn too_many_connections() -> axum::response::Response {
    axum::response::Response::builder()
        .status(hyper::StatusCode::SERVICE_UNAVAILABLE)
        .header("content-type", "application/json")
        .header("retry-after", "1")
        .header("connection", "close")
        .body(Body::from(TOO_MANY_CONNECTIONS))
        .unwrap_or_default()
}

/// Answers a connection over the caps and closes it. One non-blocking write: a
/// refused client never gets a task or a timer.
fn refuse(stream: &TcpStream) {
    const BODY: &str = TOO_MANY_CONNECTIONS;
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    let _ = stream.try_write(response.as_bytes());
}

/// Counts open connections, in all and per client address.
struct Admission {
    limits: ConnectionLimits,
    per_address: Mutex<HashMap<IpAddr, usize>>,
    /// Connections of the normal lane, and of the probes' reserve.
    open: AtomicUsize,
    open_probes: AtomicUsize,
    metrics: Arc<Metrics>,
}

/// Which requests a connection is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lane {
    Normal,
    /// Admitted past the cap in all: health probes only.
    ProbesOnly,
}

/// A connection's place under the caps, given back when it is dropped.
struct Slot {
    admission: Arc<Admission>,
    address: IpAddr,
    lane: Lane,
}

impl Admission {
    fn new(limits: ConnectionLimits, metrics: Arc<Metrics>) -> Self {
        Self {
            limits,
            per_address: Mutex::new(HashMap::new()),
            open: AtomicUsize::new(0),
            open_probes: AtomicUsize::new(0),
            metrics,
        }
    }

    fn admit(this: &Arc<Self>, address: IpAddr) -> Option<Slot> {
        let mut per_address = this
            .per_address
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let from_address = per_address.get(&address).copied().unwrap_or(0);
        let open = this.open.load(Ordering::Relaxed);
        let open_probes = this.open_probes.load(Ordering::Relaxed);
        let lane = if from_address >= this.limits.max_connections_per_address {
            None
        } else if open < this.limits.max_connections {
            Some(Lane::Normal)
        } else if open_probes < this.limits.probe_connections && from_address == 0 {
            // Only for an address holding no other connection: those that
            // filled the cap cannot fill the reserve too.
            Some(Lane::ProbesOnly)
        } else {
            None
        };
        let Some(lane) = lane else {
            this.metrics.connection_refused();
            return None;
        };
        per_address.insert(address, from_address + 1);
        match lane {
            Lane::Normal => this.open.store(open + 1, Ordering::Relaxed),
            Lane::ProbesOnly => this.open_probes.store(open_probes + 1, Ordering::Relaxed),
        }
        this.metrics.connection_opened();
        Some(Slot {
            admission: Arc::clone(this),
            address,
            lane,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut per_address = self
            .admission
            .per_address
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(count) = per_address.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                per_address.remove(&self.address);
            }
        }
        match self.lane {
            Lane::Normal => self.admission.open.fetch_sub(1, Ordering::Relaxed),
            Lane::ProbesOnly => self.admission.open_probes.fetch_sub(1, Ordering::Relaxed),
        };
        self.admission.metrics.connection_closed();
    }
}

/// What the service tells the stream about the requests on its connection.
#[derive(Default)]
struct Activity {
    /// Requests handed to the router and not yet answered.
    in_progress: AtomicUsize,
    /// Requests handed to the router so far; a change means the head being
    /// read was complete.
    started: AtomicU64,
    /// The connection's task, parked on a read while a request was in
    /// progress: woken when the request ends, so the idle timer starts then
    /// even if the client sends nothing more.
    parked_reader: Mutex<Option<Waker>>,
}

struct RequestGuard(Arc<Activity>);

impl Activity {
    fn begin(self: &Arc<Self>) -> RequestGuard {
        self.in_progress.fetch_add(1, Ordering::AcqRel);
        self.started.fetch_add(1, Ordering::AcqRel);
        RequestGuard(Arc::clone(self))
    }
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        self.0.in_progress.fetch_sub(1, Ordering::AcqRel);
        let parked = self
            .0
            .parked_reader
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(waker) = parked {
            waker.wake();
        }
    }
}

/// A TCP stream whose reads fail with `TimedOut` when the client is too slow:
/// idle past the keep-alive timeout, or a request head unfinished past the
/// header timeout. While a request is being handled the stream imposes
/// nothing (the body has its own deadline, and handlers may take their time).
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
    limits: ConnectionLimits,
    /// The last byte read or written.
    last_activity: Instant,
    /// When the first byte of the request head being read arrived (for a new
    /// connection's first request: when it was accepted).
    head_started: Option<Instant>,
    /// `activity.started` when `head_started` was set.
    seen_requests: u64,
    timer: Pin<Box<Sleep>>,
}

impl Watched {
    fn new(inner: TcpStream, activity: Arc<Activity>, limits: ConnectionLimits) -> Self {
        let now = Instant::now();
        Self {
            inner,
            activity,
            limits,
            last_activity: now,
            // The first request's head is timed from the connection: a client
            // that sends nothing gets the header timeout, not the keep-alive.
            head_started: Some(now),
            seen_requests: 0,
            timer: Box::pin(tokio::time::sleep_until(now + limits.header_read_timeout)),
        }
    }

    /// When an idle or half-read connection is closed, or `None` while a
    /// request is in progress.
    fn deadline(&mut self) -> Option<Instant> {
        let started = self.activity.started.load(Ordering::Acquire);
        if started != self.seen_requests {
            // The head we were timing became a request; the next one starts fresh.
            self.seen_requests = started;
            self.head_started = None;
            self.last_activity = Instant::now();
        }
        if self.activity.in_progress.load(Ordering::Acquire) > 0 {
            return None;
        }
        Some(match self.head_started {
            Some(started) => started + self.limits.header_read_timeout,
            None => self.last_activity + self.limits.keep_alive_timeout,
        })
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    let now = Instant::now();
                    this.last_activity = now;
                    let idle = this.activity.in_progress.load(Ordering::Acquire) == 0;
                    if idle && this.head_started.is_none() {
                        this.head_started = Some(now);
                        this.seen_requests = this.activity.started.load(Ordering::Acquire);
                    }
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(error)) => Poll::Ready(Err(error)),
            Poll::Pending => {
                let Some(deadline) = this.deadline() else {
                    *this
                        .activity
                        .parked_reader
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) =
                        Some(cx.waker().clone());
                    return Poll::Pending;
                };
                if this.timer.deadline() != deadline {
                    this.timer.as_mut().reset(deadline);
                }
                match this.timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        match this.head_started {
                            Some(_) => "request headers not received in time",
                            None => "idle connection timed out",
                        },
                    ))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.inner).poll_write(cx, buf);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            this.last_activity = Instant::now();
        }
        written
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// The soft limit on open files, where the platform tells it.
fn open_file_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(total: usize, per_address: usize) -> ConnectionLimits {
        ConnectionLimits {
            max_connections: total,
            max_connections_per_address: per_address,
            header_read_timeout: Duration::from_secs(1),
            keep_alive_timeout: Duration::from_secs(1),
            probe_connections: 0,
        }
    }

    #[test]
    fn past_the_cap_in_all_a_reserve_admits_probes_only() {
        let mut limits = limits(2, 5);
        limits.probe_connections = 1;
        let admission = Arc::new(Admission::new(limits, Arc::default()));
        let a: IpAddr = "127.0.0.2".parse().unwrap();
        let b: IpAddr = "127.0.0.3".parse().unwrap();
        let _first = Admission::admit(&admission, a).unwrap();
        let _second = Admission::admit(&admission, a).unwrap();
        assert!(
            Admission::admit(&admission, a).is_none(),
            "not for an address that holds connections"
        );
        let probe = Admission::admit(&admission, b).expect("the reserve");
        assert_eq!(probe.lane, Lane::ProbesOnly);
        assert!(
            Admission::admit(&admission, b).is_none(),
            "the reserve is full"
        );
        drop(probe);
        assert_eq!(
            Admission::admit(&admission, b).map(|slot| slot.lane),
            Some(Lane::ProbesOnly),
            "its slot came back"
        );
    }

    #[test]
    fn admission_caps_each_address_and_the_total_and_gives_slots_back() {
        let admission = Arc::new(Admission::new(limits(3, 2), Arc::default()));
        let a: IpAddr = "127.0.0.2".parse().unwrap();
        let b: IpAddr = "127.0.0.3".parse().unwrap();
        let first = Admission::admit(&admission, a).expect("first from a");
        let _second = Admission::admit(&admission, a).expect("second from a");
        assert!(Admission::admit(&admission, a).is_none(), "a is at its cap");
        let _third = Admission::admit(&admission, b).expect("b has its own cap");
        assert!(
            Admission::admit(&admission, b).is_none(),
            "the total is at its cap"
        );
        drop(first);
        assert!(
            Admission::admit(&admission, a).is_some(),
            "a slot came back"
        );
    }

    #[test]
    fn the_open_file_limit_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(open_file_limit().is_some_and(|n| n > 0));
        }
    }
}
