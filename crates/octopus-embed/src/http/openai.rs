//! The OpenAI embeddings API, as OpenAI, Azure OpenAI and compatible servers
//! speak it: `POST {url}` with `{"model", "input": [...]}`, answered by
//! `{"data": [{"index", "embedding"}]}`.

use async_trait::async_trait;
use octopus_core::embedding::{EmbedError, Embedder};
use serde::Deserialize;
use serde_json::json;

use super::{HttpEmbedderOptions, client, normalised, retry};

/// How requests prove who sends them.
#[derive(Clone, Debug)]
pub enum OpenAiAuth {
    /// `Authorization: Bearer …` (OpenAI and most compatible servers).
    Bearer(String),
    /// `api-key: …` (Azure OpenAI).
    ApiKey(String),
    /// Nothing (a local compatible server).
    None,
}

pub struct OpenAiEmbedder {
    options: HttpEmbedderOptions,
    auth: OpenAiAuth,
    /// Sent as `dimensions` for models that can shorten their vectors
    /// (text-embedding-3-*); others reject the field.
    request_dimensions: bool,
    name: String,
    client: reqwest::Client,
}

impl OpenAiEmbedder {
    pub fn new(options: HttpEmbedderOptions, auth: OpenAiAuth) -> Result<Self, EmbedError> {
        let request_dimensions = options.model.starts_with("text-embedding-3");
        Ok(Self {
            name: format!("openai:{}", options.model),
            client: client(&options)?,
            options,
            auth,
            request_dimensions,
        })
    }

    async fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut body =
            json!({"model": self.options.model, "input": texts, "encoding_format": "float"});
        if self.request_dimensions {
            body["dimensions"] = json!(self.options.dimension);
        }
        let bytes = retry::send(
            &self.name,
            &self.options,
            || {
                let request = self.client.post(&self.options.url).json(&body);
                match &self.auth {
                    OpenAiAuth::Bearer(key) => request.bearer_auth(key),
                    OpenAiAuth::ApiKey(key) => request.header("api-key", key),
                    OpenAiAuth::None => request,
                }
            },
            error_message,
        )
        .await?;
        let mut response: Response =
            serde_json::from_slice(&bytes).map_err(|e| self.malformed(e.to_string()))?;
        if response.data.len() != texts.len() {
            return Err(self.malformed(format!(
                "{} vectors for {} inputs",
                response.data.len(),
                texts.len()
            )));
        }
        // The API does not promise the order of `data`; `index` does.
        response.data.sort_by_key(|item| item.index);
        if response
            .data
            .iter()
            .enumerate()
            .any(|(at, item)| item.index != at)
        {
            return Err(self.malformed("the indexes of `data` are not 0..n".into()));
        }
        normalised(
            &self.name,
            self.options.dimension,
            response
                .data
                .into_iter()
                .map(|item| item.embedding)
                .collect(),
        )
    }

    fn malformed(&self, message: String) -> EmbedError {
        EmbedError::Provider {
            provider: self.name.clone(),
            message: format!("unexpected response: {message}"),
            retry_after: None,
        }
    }
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    index: usize,
    embedding: Vec<f32>,
}

/// `{"error": {"message": …}}`, the shape of OpenAI's and Azure's errors.
fn error_message(body: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    value["error"]["message"].as_str().map(str::to_owned)
}

#[async_trait]
impl Embedder for OpenAiEmbedder {
    fn model(&self) -> &str {
        &self.name
    }

    fn dimension(&self) -> usize {
        self.options.dimension
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if let Some(at) = texts.iter().position(|t| t.trim().is_empty()) {
            // OpenAI refuses empty input with a 400 for the whole batch.
            return Err(EmbedError::Input(format!("input {at} is empty")));
        }
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.options.batch_size.max(1)) {
            vectors.extend(self.embed_batch(batch).await?);
        }
        Ok(vectors)
    }
}
