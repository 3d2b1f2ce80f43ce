//! Embedding for the service's operations: the embedder loaded on first
//! use, queries' vectors cached, every call counted and held to the
//! embedder's contract.

use std::sync::Arc;

use octopus_core::TenantId;
use octopus_core::embedding::{EmbedError, Embedder};

use crate::embedding_stats::EmbeddingPurpose;
use crate::error::{Error, Result};
use crate::octopus::{Embedding, Octopus};

impl Octopus {
    /// Uses `embedder` instead of the configured model.
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        let embedding = Embedding::new(Arc::new(Arc::clone(&embedder)));
        embedding.loaded.set(embedder).ok();
        self.embedding = Arc::new(embedding);
        self
    }

    /// The embedder, loaded on first use; a local model's number format is
    /// kept for the statistics.
    pub async fn embedder(&self) -> Result<Arc<dyn Embedder>> {
        let loaded = self
            .embedding
            .loaded
            .get_or_try_init(|| async {
                let loaded = self.embedding.source.load().await?;
                if let Some(precision) = loaded.precision {
                    self.embedding_stats.set_precision(precision);
                }
                Ok::<_, Error>(loaded.embedder)
            })
            .await?;
        Ok(Arc::clone(loaded))
    }

    /// The vector of one of `tenant`'s query texts, embedded in the
    /// tenant's turn (see [`crate::tenant_turns`]).
    pub(crate) async fn embed_query(&self, tenant: TenantId, text: &str) -> Result<Vec<f32>> {
        let cache = self.query_vectors.as_deref();
        if let Some(known) = cache.and_then(|c| c.get(&text.to_owned())) {
            return Ok(known.as_ref().clone());
        }
        let embedder = self.embedder().await?;
        let texts = [text.to_owned()];
        let vectors = self
            .embed_for_request(tenant, embedder.as_ref(), &texts)
            .await?;
        let vector = vectors.into_iter().next().unwrap_or_default();
        if let Some(cache) = cache {
            cache.insert(text.to_owned(), Arc::new(vector.clone()));
        }
        Ok(vector)
    }

    /// Embeds `texts` for one of `tenant`'s requests waiting on them, in the
    /// readers' queue, in the tenant's turn.
    pub(crate) async fn embed_for_request(
        &self,
        tenant: TenantId,
        embedder: &dyn Embedder,
        texts: &[String],
    ) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
        let _turn = self.query_turns.take(tenant).await;
        self.embed_counted(EmbeddingPurpose::Query, embedder, texts)
            .await
    }

    /// Embeds `texts`, counted in the embedding statistics, and checks that
    /// the embedder kept its contract: one vector per text, each of its
    /// dimension. A short or malformed answer is an error, never a silently
    /// missing or empty vector.
    pub(crate) async fn embed_counted(
        &self,
        purpose: EmbeddingPurpose,
        embedder: &dyn Embedder,
        texts: &[String],
    ) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
        let started = std::time::Instant::now();
        let vectors = match purpose {
            EmbeddingPurpose::Query => embedder.embed_for_reader(texts).await?,
            EmbeddingPurpose::Memory | EmbeddingPurpose::Knowledge => embedder.embed(texts).await?,
        };
        if vectors.len() != texts.len() {
            return Err(EmbedError::Model(format!(
                "{} returned {} vectors for {} texts",
                embedder.model(),
                vectors.len(),
                texts.len()
            )));
        }
        if let Some(wrong) = vectors.iter().find(|v| v.len() != embedder.dimension()) {
            return Err(EmbedError::Model(format!(
                "{} returned a vector of {} dimensions where it has {}",
                embedder.model(),
                wrong.len(),
                embedder.dimension()
            )));
        }
        self.embedding_stats
            .record(purpose, texts.len(), started.elapsed());
        Ok(vectors)
    }
}

/// A query's vector, embedded on first use and shared by the searches of one
/// request. Searches by words start at once; only those by meaning wait.
pub(crate) struct QueryVector {
    tenant: TenantId,
    text: String,
    vector: tokio::sync::OnceCell<Vec<f32>>,
}

impl QueryVector {
    pub(crate) fn new(tenant: TenantId, text: &str) -> Self {
        Self {
            tenant,
            text: text.to_owned(),
            vector: tokio::sync::OnceCell::new(),
        }
    }

    pub(crate) async fn get(&self, octopus: &Octopus) -> Result<Vec<f32>> {
        let vector = self
            .vector
            .get_or_try_init(|| octopus.embed_query(self.tenant, &self.text))
            .await?;
        Ok(vector.clone())
    }
}
