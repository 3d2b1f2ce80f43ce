//! A local server speaking the embedding APIs of OpenAI, Azure OpenAI and
//! Ollama as they document them: request shapes, authentication, error bodies,
//! and rate limits with `retry-after`. Scripted failures come first; then each
//! input gets [`provider_vector`] of its text.
//!
//! Routes: `POST /v1/embeddings` (OpenAI; key `sk-test`),
//! `POST /openai/deployments/embeddings-small/embeddings?api-version=2024-10-21`
//! (Azure; `api-key: azure-key`), `POST /api/embed` (Ollama; model
//! `nomic-embed-text`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// The length of every vector the provider returns.
pub const DIMENSION: usize = 8;

/// A failure to answer with: status, headers, body.
type Scripted = (StatusCode, Vec<(&'static str, &'static str)>, Value);

/// A provider's answers: scripted failures first, then real embeddings.
#[derive(Default)]
pub struct Provider {
    script: Mutex<VecDeque<Scripted>>,
    requests: Mutex<Vec<Value>>,
}

impl Provider {
    /// Answers the next request with this status, headers and body.
    pub fn fail_next(&self, status: u16, headers: Vec<(&'static str, &'static str)>, body: Value) {
        self.script.lock().unwrap().push_back((
            StatusCode::from_u16(status).unwrap(),
            headers,
            body,
        ));
    }

    /// The bodies of every request received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }

    /// A scripted failure, if one is due.
    fn scripted(&self, body: &Value) -> Option<Response> {
        self.requests.lock().unwrap().push(body.clone());
        let (status, headers, body) = self.script.lock().unwrap().pop_front()?;
        let mut response = (status, Json(body)).into_response();
        for (name, value) in headers {
            response.headers_mut().insert(name, value.parse().unwrap());
        }
        Some(response)
    }
}

/// A deterministic, deliberately unnormalised vector for `text`.
pub fn provider_vector(text: &str) -> Vec<f32> {
    let seed = text
        .bytes()
        .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(b as u32));
    (0..DIMENSION)
        .map(|i| ((seed >> (i * 3)) & 7) as f32 + 1.0)
        .collect()
}

/// `vector` scaled to length 1.
pub fn unit(vector: Vec<f32>) -> Vec<f32> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    vector.into_iter().map(|x| x / norm).collect()
}

fn inputs(body: &Value) -> Option<Vec<String>> {
    body["input"]
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn openai_error(status: StatusCode, message: &str, kind: &str) -> Response {
    (
        status,
        Json(json!({"error": {"message": message, "type": kind, "param": null, "code": null}})),
    )
        .into_response()
}

/// OpenAI's answer: `data` deliberately in reverse order, as the API allows.
fn openai_answer(provider: &Provider, body: &Value) -> Response {
    if let Some(scripted) = provider.scripted(body) {
        return scripted;
    }
    let (Some(model), Some(inputs)) = (body["model"].as_str(), inputs(body)) else {
        return openai_error(
            StatusCode::BAD_REQUEST,
            "'input' is a required property",
            "invalid_request_error",
        );
    };
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(index, text)| json!({"object": "embedding", "index": index, "embedding": provider_vector(text)}))
        .collect();
    Json(json!({"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": 5, "total_tokens": 5}}))
        .into_response()
}

async fn openai(
    State(provider): State<Arc<Provider>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("Bearer sk-test") {
        return openai_error(
            StatusCode::UNAUTHORIZED,
            "Incorrect API key provided: sk-wrong.",
            "invalid_request_error",
        );
    }
    openai_answer(&provider, &body)
}

async fn azure(
    State(provider): State<Arc<Provider>>,
    Path(deployment): Path<String>,
    Query(query): Query<std::collections::HashMap<String, String>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    if headers.get("api-key").and_then(|v| v.to_str().ok()) != Some("azure-key") {
        return openai_error(
            StatusCode::UNAUTHORIZED,
            "Access denied due to invalid subscription key.",
            "invalid_request_error",
        );
    }
    if deployment != "embeddings-small"
        || query.get("api-version").map(String::as_str) != Some("2024-10-21")
    {
        return openai_error(
            StatusCode::NOT_FOUND,
            "The API deployment for this resource does not exist.",
            "invalid_request_error",
        );
    }
    openai_answer(&provider, &body)
}

async fn ollama(State(provider): State<Arc<Provider>>, Json(body): Json<Value>) -> Response {
    if let Some(scripted) = provider.scripted(&body) {
        return scripted;
    }
    let model = body["model"].as_str().unwrap_or_default();
    if model != "nomic-embed-text" {
        return (
            StatusCode::NOT_FOUND,
            Json(json!({"error": format!("model \"{model}\" not found, try pulling it first")})),
        )
            .into_response();
    }
    let Some(inputs) = inputs(&body) else {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid input type"})),
        )
            .into_response();
    };
    let embeddings: Vec<Vec<f32>> = inputs.iter().map(|t| provider_vector(t)).collect();
    Json(json!({"model": model, "embeddings": embeddings, "total_duration": 1, "prompt_eval_count": 4})).into_response()
}

/// Starts the provider on a free loopback port; returns its base URL.
pub async fn serve(provider: Arc<Provider>) -> String {
    let app = axum::Router::new()
        .route("/v1/embeddings", post(openai))
        .route("/openai/deployments/{deployment}/embeddings", post(azure))
        .route("/api/embed", post(ollama))
        .with_state(provider);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{address}")
}
