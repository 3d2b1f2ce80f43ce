//! The HTTP embedders against a local server speaking OpenAI's, Azure OpenAI's
//! and Ollama's documented wire formats, rate limits and errors included.

use std::sync::Arc;
use std::time::{Duration, Instant};

use octopus_core::embedding::{EmbedError, Embedder};
use octopus_embed::http::{HttpEmbedderOptions, OllamaEmbedder, OpenAiAuth, OpenAiEmbedder};
use octopus_testkit::fake_providers::{DIMENSION, Provider, provider_vector, serve, unit};
use serde_json::json;

fn options(url: String, model: &str) -> HttpEmbedderOptions {
    let mut options = HttpEmbedderOptions::new(url, model, DIMENSION);
    options.batch_size = 2;
    options
}

fn texts(items: &[&str]) -> Vec<String> {
    items.iter().map(|t| t.to_string()).collect()
}

fn provider_message(error: EmbedError) -> (String, Option<Duration>) {
    match error {
        EmbedError::Provider {
            message,
            retry_after,
            ..
        } => (message, retry_after),
        other => panic!("expected a provider error, got {other:?}"),
    }
}

#[tokio::test]
async fn openai_batches_keep_input_order_and_come_back_normalised() {
    let provider = Arc::new(Provider::default());
    let base = serve(Arc::clone(&provider)).await;
    let embedder = OpenAiEmbedder::new(
        options(format!("{base}/v1/embeddings"), "text-embedding-3-small"),
        OpenAiAuth::Bearer("sk-test".into()),
    )
    .unwrap();
    let inputs = texts(&["alpha", "beta", "gamma", "delta", "epsilon"]);
    let vectors = embedder.embed(&inputs).await.unwrap();
    let expected: Vec<Vec<f32>> = inputs.iter().map(|t| unit(provider_vector(t))).collect();
    assert_eq!(
        vectors, expected,
        "one unit vector per input, in input order"
    );
    let requests = provider.requests();
    assert_eq!(requests.len(), 3, "five inputs in batches of two");
    assert_eq!(requests[0]["input"], json!(["alpha", "beta"]));
    assert_eq!(requests[0]["model"], "text-embedding-3-small");
    assert_eq!(
        requests[0]["dimensions"], DIMENSION,
        "text-embedding-3 models are asked for the configured length"
    );
    assert_eq!(embedder.model(), "openai:text-embedding-3-small");
    assert_eq!(embedder.dimension(), DIMENSION);
}

#[tokio::test]
async fn a_429_is_retried_after_the_wait_the_provider_asked_for() {
    let provider = Arc::new(Provider::default());
    let base = serve(Arc::clone(&provider)).await;
    provider.fail_next(
        429,
        vec![("retry-after", "1")],
        json!({"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}}),
    );
    let embedder = OpenAiEmbedder::new(
        options(format!("{base}/v1/embeddings"), "text-embedding-ada-002"),
        OpenAiAuth::Bearer("sk-test".into()),
    )
    .unwrap();
    let started = Instant::now();
    let vectors = embedder.embed(&texts(&["hello"])).await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "the client waited {:?}, not the second the provider asked for",
        started.elapsed()
    );
    assert_eq!(vectors, vec![unit(provider_vector("hello"))]);
    let requests = provider.requests();
    assert_eq!(requests.len(), 2, "one refused request, one retry");
    assert!(
        requests[1].get("dimensions").is_none(),
        "ada-002 rejects `dimensions`"
    );
}

#[tokio::test]
async fn server_errors_are_retried_and_give_up_with_the_providers_message() {
    let provider = Arc::new(Provider::default());
    let base = serve(Arc::clone(&provider)).await;
    let mut options = options(format!("{base}/v1/embeddings"), "text-embedding-3-small");
    options.max_retries = 2;
    let embedder = OpenAiEmbedder::new(options, OpenAiAuth::Bearer("sk-test".into())).unwrap();

    provider.fail_next(
        503,
        vec![("retry-after-ms", "20")],
        json!({"error": {"message": "overloaded", "type": "server_error"}}),
    );
    assert!(
        embedder.embed(&texts(&["once"])).await.is_ok(),
        "one 503 is absorbed by a retry"
    );

    for _ in 0..3 {
        provider.fail_next(
            429,
            vec![("retry-after-ms", "20")],
            json!({"error": {"message": "Rate limit reached for requests", "type": "requests"}}),
        );
    }
    let before = provider.requests().len();
    let (message, retry_after) =
        provider_message(embedder.embed(&texts(&["twice"])).await.unwrap_err());
    assert_eq!(
        provider.requests().len() - before,
        3,
        "the first try and two retries"
    );
    assert!(
        message.contains("429") && message.contains("Rate limit reached"),
        "{message}"
    );
    assert_eq!(
        retry_after,
        Some(Duration::from_millis(20)),
        "the caller learns when to come back"
    );
}

#[tokio::test]
async fn a_wait_longer_than_allowed_is_not_slept_through() {
    let provider = Arc::new(Provider::default());
    let base = serve(Arc::clone(&provider)).await;
    provider.fail_next(
        429,
        vec![("retry-after", "3600")],
        json!({"error": {"message": "quota exceeded", "type": "insufficient_quota"}}),
    );
    let embedder = OpenAiEmbedder::new(
        options(format!("{base}/v1/embeddings"), "text-embedding-3-small"),
        OpenAiAuth::Bearer("sk-test".into()),
    )
    .unwrap();
    let started = Instant::now();
    let (message, retry_after) =
        provider_message(embedder.embed(&texts(&["x"])).await.unwrap_err());
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(message.contains("quota exceeded"), "{message}");
    assert_eq!(retry_after, Some(Duration::from_secs(3600)));
    assert_eq!(provider.requests().len(), 1);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_keep_the_providers_message() {
    let provider = Arc::new(Provider::default());
    let base = serve(Arc::clone(&provider)).await;
    let embedder = OpenAiEmbedder::new(
        options(format!("{base}/v1/embeddings"), "text-embedding-3-small"),
        OpenAiAuth::Bearer("sk-wrong".into()),
    )
    .unwrap();
    let (message, retry_after) =
        provider_message(embedder.embed(&texts(&["x"])).await.unwrap_err());
    assert!(
        message.contains("401") && message.contains("Incorrect API key"),
        "{message}"
    );
    assert_eq!(retry_after, None);

    let embedder = OpenAiEmbedder::new(
        options(format!("{base}/v1/embeddings"), "text-embedding-3-small"),
        OpenAiAuth::Bearer("sk-test".into()),
    )
    .unwrap();
    assert!(
        matches!(embedder.embed(&texts(&["fine", "  "])).await, Err(EmbedError::Input(m)) if m.contains("input 1")),
        "an empty input is the caller's error, named before any request"
    );
}

#[tokio::test]
async fn a_vector_of_another_length_is_refused() {
    let provider = Arc::new(Provider::default());
    let base = serve(Arc::clone(&provider)).await;
    let mut options = options(format!("{base}/v1/embeddings"), "text-embedding-ada-002");
    options.dimension = 1536;
    let embedder = OpenAiEmbedder::new(options, OpenAiAuth::Bearer("sk-test".into())).unwrap();
    let (message, _) = provider_message(embedder.embed(&texts(&["x"])).await.unwrap_err());
    assert!(
        message.contains("8 dimensions") && message.contains("1536"),
        "{message}"
    );
}

#[tokio::test]
async fn azure_openai_uses_the_deployment_url_and_an_api_key_header() {
    let provider = Arc::new(Provider::default());
    let base = serve(Arc::clone(&provider)).await;
    let url =
        format!("{base}/openai/deployments/embeddings-small/embeddings?api-version=2024-10-21");
    let embedder = OpenAiEmbedder::new(
        options(url.clone(), "text-embedding-3-small"),
        OpenAiAuth::ApiKey("azure-key".into()),
    )
    .unwrap();
    let vectors = embedder
        .embed(&texts(&["one", "two", "three"]))
        .await
        .unwrap();
    assert_eq!(vectors[2], unit(provider_vector("three")));

    let wrong = OpenAiEmbedder::new(
        options(url, "text-embedding-3-small"),
        OpenAiAuth::Bearer("azure-key".into()),
    )
    .unwrap();
    let (message, _) = provider_message(wrong.embed(&texts(&["x"])).await.unwrap_err());
    assert!(message.contains("invalid subscription key"), "{message}");
}

#[tokio::test]
async fn ollama_embeds_in_batches_and_reports_a_missing_model() {
    let provider = Arc::new(Provider::default());
    let base = serve(Arc::clone(&provider)).await;
    let embedder =
        OllamaEmbedder::new(options(format!("{base}/api/embed"), "nomic-embed-text")).unwrap();
    let inputs = texts(&["a", "b", "c"]);
    let vectors = embedder.embed(&inputs).await.unwrap();
    assert_eq!(
        vectors,
        inputs
            .iter()
            .map(|t| unit(provider_vector(t)))
            .collect::<Vec<_>>()
    );
    assert_eq!(provider.requests().len(), 2);
    assert_eq!(provider.requests()[0]["truncate"], true);
    assert_eq!(embedder.model(), "ollama:nomic-embed-text");

    provider.fail_next(
        503,
        vec![],
        json!({"error": "server busy, please try again. maximum pending requests exceeded"}),
    );
    assert!(
        embedder.embed(&texts(&["d"])).await.is_ok(),
        "a busy Ollama is retried with backoff"
    );

    let missing =
        OllamaEmbedder::new(options(format!("{base}/api/embed"), "mxbai-embed-large")).unwrap();
    let (message, _) = provider_message(missing.embed(&texts(&["x"])).await.unwrap_err());
    assert!(
        message.contains("404") && message.contains("try pulling it first"),
        "{message}"
    );
}

#[tokio::test]
async fn an_unreachable_provider_is_a_provider_error() {
    // A port nobody listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut options = options(
        format!("http://127.0.0.1:{port}/api/embed"),
        "nomic-embed-text",
    );
    options.max_retries = 1;
    let (message, _) = provider_message(
        OllamaEmbedder::new(options)
            .unwrap()
            .embed(&texts(&["x"]))
            .await
            .unwrap_err(),
    );
    assert!(message.contains("could not connect"), "{message}");
}
