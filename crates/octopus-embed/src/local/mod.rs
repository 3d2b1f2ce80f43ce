//! A BERT-family sentence-embedding model, run in-process on CPU with candle.
//!
//! Inputs are tokenised with the folder's `tokenizer.json`, padded to the longest
//! input of each batch (not to a fixed length) and truncated to the folder's
//! `max_seq_length`; token vectors are pooled and normalised as the folder's
//! sentence-transformers modules say.

mod folder;
mod pooling;

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use octopus_core::embedding::{EmbedError, Embedder};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

pub use folder::FolderConfig;
pub use pooling::Pooling;

/// Texts embedded in one forward pass.
const DEFAULT_BATCH: usize = 32;

/// A local sentence-embedding model. Cheap to clone; clones share the model.
#[derive(Clone)]
pub struct LocalEmbedder {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    model: BertModel,
    tokenizer: Tokenizer,
    folder: FolderConfig,
    dimension: usize,
    batch: usize,
}

fn model_error(context: &str) -> impl Fn(candle_core::Error) -> EmbedError + '_ {
    move |error| EmbedError::Model(format!("{context}: {error}"))
}

impl LocalEmbedder {
    /// Loads the model in `dir`. Blocks for the time it takes to read the weights.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let folder = FolderConfig::read(dir)?;
        let config_path = folder::file(dir, "config.json")?;
        let config_text = std::fs::read_to_string(&config_path)
            .map_err(|e| EmbedError::Model(format!("read {}: {e}", config_path.display())))?;
        let config: Config = serde_json::from_str(&config_text)
            .map_err(|e| EmbedError::Model(format!("parse {}: {e}", config_path.display())))?;
        let weights_path = folder::file(dir, "model.safetensors")?;
        let weights = std::fs::read(&weights_path)
            .map_err(|e| EmbedError::Model(format!("read {}: {e}", weights_path.display())))?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(model_error("load the weights"))?;
        let model = BertModel::load(vb, &config).map_err(model_error("build the model"))?;

        let tokenizer_path = folder::file(dir, "tokenizer.json")?;
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| EmbedError::Model(format!("load {}: {e}", tokenizer_path.display())))?;
        // Folders often ship a tokenizer padded to a fixed length; pad each batch
        // only to its longest input instead, and truncate where the model does.
        let padding = PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..tokenizer.get_padding().cloned().unwrap_or_default()
        };
        tokenizer.with_padding(Some(padding));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: folder.max_seq_length,
                ..Default::default()
            }))
            .map_err(|e| EmbedError::Model(format!("set truncation: {e}")))?;

        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "local".into());
        tracing::info!(model = %name, pooling = ?folder.pooling, normalize = folder.normalize, max_seq_length = folder.max_seq_length, "loaded embedding model");
        Ok(Self {
            inner: Arc::new(Inner {
                name,
                model,
                tokenizer,
                dimension: config.hidden_size,
                folder,
                batch: DEFAULT_BATCH,
            }),
        })
    }

    /// Embeds on the calling thread. CPU-bound: call it from a blocking context.
    pub fn embed_blocking(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut vectors = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(self.inner.batch) {
            vectors.extend(self.inner.embed_batch(chunk)?);
        }
        Ok(vectors)
    }
}

impl Inner {
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Input(format!("tokenize: {e}")))?;
        let rows = encodings.len();
        let width = encodings.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(rows * width);
        let mut types = Vec::with_capacity(rows * width);
        let mut mask = Vec::with_capacity(rows * width);
        for encoding in &encodings {
            ids.extend_from_slice(encoding.get_ids());
            types.extend_from_slice(encoding.get_type_ids());
            mask.extend_from_slice(encoding.get_attention_mask());
        }
        let shape = (rows, width);
        let tensor = |data: Vec<u32>| {
            Tensor::from_vec(data, shape, &Device::Cpu).map_err(model_error("build inputs"))
        };
        let (ids, types, mask) = (tensor(ids)?, tensor(types)?, tensor(mask)?);
        let tokens = self
            .model
            .forward(&ids, &types, Some(&mask))
            .map_err(model_error("run the model"))?;
        let mut pooled = self
            .folder
            .pooling
            .apply(&tokens, &mask)
            .map_err(model_error("pool"))?;
        if self.folder.normalize {
            pooled = pooling::l2_normalize(&pooled).map_err(model_error("normalise"))?;
        }
        pooled
            .to_vec2::<f32>()
            .map_err(model_error("read the vectors"))
    }
}

#[async_trait]
impl Embedder for LocalEmbedder {
    fn model(&self) -> &str {
        &self.inner.name
    }

    fn dimension(&self) -> usize {
        self.inner.dimension
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let this = self.clone();
        let texts = texts.to_vec();
        tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            this.embed_blocking(&refs)
        })
        .await
        .map_err(|e| EmbedError::Model(format!("the embedding task failed: {e}")))?
    }
}
