//! Ollama's embedding API: `POST {url}` (normally `…/api/embed`) with
//! `{"model", "input": [...]}`, answered by `{"embeddings": [[...]]}`.

use async_trait::async_trait;
use octopus_core::embedding::{EmbedError, Embedder};
use serde::Deserialize;
use serde_json::json;

use super::{HttpEmbedderOptions, client, normalised, retry};

pub struct OllamaEmbedder {
    options: HttpEmbedderOptions,
    name: String,
    client: reqwest::Client,
}

impl OllamaEmbedder {
    pub fn new(options: HttpEmbedderOptions) -> Result<Self, EmbedError> {
        Ok(Self {
            name: format!("ollama:{}", options.model),
            client: client(&options)?,
            options,
        })
    }

    async fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        // `truncate`: an input longer than the model's window is cut, as the
        // local model does, instead of failing the batch.
        let body = json!({"model": self.options.model, "input": texts, "truncate": true});
        let bytes = retry::send(
            &self.name,
            &self.options,
            || self.client.post(&self.options.url).json(&body),
            error_message,
        )
        .await?;
        let response: Response =
            serde_json::from_slice(&bytes).map_err(|e| EmbedError::Provider {
                provider: self.name.clone(),
                message: format!("unexpected response: {e}"),
                retry_after: None,
            })?;
        if response.embeddings.len() != texts.len() {
            return Err(EmbedError::Provider {
                provider: self.name.clone(),
                message: format!(
                    "unexpected response: {} vectors for {} inputs",
                    response.embeddings.len(),
                    texts.len()
                ),
                retry_after: None,
            });
        }
        normalised(&self.name, self.options.dimension, response.embeddings)
    }
}

#[derive(Deserialize)]
struct Response {
    embeddings: Vec<Vec<f32>>,
}

/// `{"error": "…"}`, the shape of Ollama's errors.
fn error_message(body: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(body).ok()?;
    value["error"].as_str().map(str::to_owned)
}

#[async_trait]
impl Embedder for OllamaEmbedder {
    fn model(&self) -> &str {
        &self.name
    }

    fn dimension(&self) -> usize {
        self.options.dimension
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut vectors = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.options.batch_size.max(1)) {
            vectors.extend(self.embed_batch(batch).await?);
        }
        Ok(vectors)
    }
}
