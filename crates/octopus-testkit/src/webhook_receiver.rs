//! A loopback endpoint for webhook deliveries: it records every request
//! (headers and body) and answers with the statuses a test scripts, then
//! its standing answer (200 unless set). A 3xx answer points at `/elsewhere`, which
//! records that it was followed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;

/// One request the endpoint received.
#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: String,
    /// When it arrived.
    pub at: std::time::Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap()
    }
}

struct Inner {
    received: Mutex<Vec<Received>>,
    answers: Mutex<VecDeque<u16>>,
    standing: std::sync::atomic::AtomicU16,
}

/// A running endpoint; it stops with the runtime.
#[derive(Clone)]
pub struct Receiver {
    /// Where deliveries go: `http://127.0.0.1:{port}/hook`.
    pub url: String,
    inner: Arc<Inner>,
}

impl Receiver {
    /// An endpoint answering `answers` in turn, then 200.
    pub async fn start(answers: &[u16]) -> Self {
        let inner = Arc::new(Inner {
            received: Mutex::default(),
            answers: Mutex::default(),
            standing: 200.into(),
        });
        inner.answers.lock().unwrap().extend(answers);
        let app = axum::Router::new()
            .route("/hook", post(hook))
            .route("/elsewhere", post(elsewhere))
            .with_state(Arc::clone(&inner));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self {
            url: format!("http://{address}/hook"),
            inner,
        }
    }

    /// Scripts the next answers (after those still pending).
    pub fn answer(&self, statuses: &[u16]) {
        self.inner.answers.lock().unwrap().extend(statuses);
    }

    /// Answers `status` once the scripted answers are spent.
    pub fn answer_from_now_on(&self, status: u16) {
        self.inner
            .standing
            .store(status, std::sync::atomic::Ordering::SeqCst);
    }

    /// Everything received so far, in order.
    pub fn received(&self) -> Vec<Received> {
        self.inner.received.lock().unwrap().clone()
    }
}

async fn hook(
    State(inner): State<Arc<Inner>>,
    headers: HeaderMap,
    body: String,
) -> impl IntoResponse {
    inner.received.lock().unwrap().push(Received {
        path: "/hook".into(),
        headers,
        body,
        at: std::time::Instant::now(),
    });
    let standing = inner.standing.load(std::sync::atomic::Ordering::SeqCst);
    let status = inner
        .answers
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or(standing);
    let status = StatusCode::from_u16(status).unwrap();
    let mut answer = HeaderMap::new();
    if status.is_redirection() {
        answer.insert(header::LOCATION, "/elsewhere".parse().unwrap());
    }
    (status, answer, "")
}

async fn elsewhere(
    State(inner): State<Arc<Inner>>,
    headers: HeaderMap,
    body: String,
) -> StatusCode {
    inner.received.lock().unwrap().push(Received {
        path: "/elsewhere".into(),
        headers,
        body,
        at: std::time::Instant::now(),
    });
    StatusCode::OK
}
