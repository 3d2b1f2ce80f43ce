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
use tokenizers::{Encoding, Tokenizer, TruncationParams};

pub use folder::FolderConfig;
pub use pooling::Pooling;

/// How inputs are grouped into forward passes.
#[derive(Clone, Copy, Debug)]
pub struct BatchLimits {
    /// Most inputs in one forward pass.
    pub max_inputs: usize,
    /// Most tokens (inputs × padded length) in one forward pass. Bounds the
    /// attention tensors (inputs × heads × length²), which otherwise reach a
    /// hundred megabytes for 32 inputs of 256 tokens.
    pub max_tokens: usize,
}

impl Default for BatchLimits {
    fn default() -> Self {
        Self {
            max_inputs: 32,
            max_tokens: 1024,
        }
    }
}

/// A local sentence-embedding model. Cheap to clone; clones share the model.
#[derive(Clone)]
pub struct LocalEmbedder {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    model: BertModel,
    tokenizer: Tokenizer,
    /// The same tokenizer without truncation, for measuring whole texts.
    counter: Tokenizer,
    pad_id: u32,
    folder: FolderConfig,
    dimension: usize,
    limits: BatchLimits,
}

fn model_error(context: &str) -> impl Fn(candle_core::Error) -> EmbedError + '_ {
    move |error| EmbedError::Model(format!("{context}: {error}"))
}

/// The weights, each dense layer's matrix laid out as its transpose.
///
/// A dense layer multiplies by the transpose of its `[out, in]` weight. Read
/// as stored, that transpose is a strided view, and the matrix multiply packs
/// all of it into its own layout on every call, whatever the input's length:
/// most of the time of embedding one short query. Stored transposed once here,
/// and viewed back as `[out, in]`, its transpose is contiguous and is used as
/// it is. The values are the same.
fn dense_weights_transposed(
    safetensors: &[u8],
) -> Result<std::collections::HashMap<String, candle_core::Tensor>, EmbedError> {
    let mut tensors = candle_core::safetensors::load_buffer(safetensors, &Device::Cpu)
        .map_err(model_error("load the weights"))?;
    for (name, tensor) in tensors.iter_mut() {
        let dense =
            name.ends_with(".weight") && name.contains("encoder.layer.") && tensor.rank() == 2;
        if dense {
            *tensor = tensor
                .to_dtype(DType::F32)
                .and_then(|t| t.t()?.contiguous()?.t())
                .map_err(model_error("lay out the weights"))?;
        }
    }
    Ok(tensors)
}

impl LocalEmbedder {
    /// Loads the model in `dir`. Blocks for the time it takes to read the weights.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        Self::load_with(dir, BatchLimits::default())
    }

    /// Loads the model in `dir`, batching within `limits`.
    pub fn load_with(dir: &Path, limits: BatchLimits) -> Result<Self, EmbedError> {
        let folder = FolderConfig::read(dir)?;
        let config_path = folder::file(dir, "config.json")?;
        let config_text = std::fs::read_to_string(&config_path)
            .map_err(|e| EmbedError::Model(format!("read {}: {e}", config_path.display())))?;
        let config: Config = serde_json::from_str(&config_text)
            .map_err(|e| EmbedError::Model(format!("parse {}: {e}", config_path.display())))?;
        let weights_path = folder::file(dir, "model.safetensors")?;
        let weights = std::fs::read(&weights_path)
            .map_err(|e| EmbedError::Model(format!("read {}: {e}", weights_path.display())))?;
        let vb = VarBuilder::from_tensors(
            dense_weights_transposed(&weights)?,
            DType::F32,
            &Device::Cpu,
        );
        let model = BertModel::load(vb, &config).map_err(model_error("build the model"))?;

        let tokenizer_path = folder::file(dir, "tokenizer.json")?;
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| EmbedError::Model(format!("load {}: {e}", tokenizer_path.display())))?;
        // Folders often ship a tokenizer padded to a fixed length. Batches are
        // padded here instead, each to its own longest input (see `embed_blocking`),
        // and inputs are truncated where the model's pipeline truncates them.
        let pad_id = tokenizer.get_padding().map_or(0, |p| p.pad_id);
        tokenizer.with_padding(None);
        let mut counter = tokenizer.clone();
        counter
            .with_truncation(None)
            .map_err(|e| EmbedError::Model(format!("set truncation: {e}")))?;
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
                counter,
                pad_id,
                dimension: config.hidden_size,
                folder,
                limits,
            }),
        })
    }

    /// Embeds on the calling thread. CPU-bound: call it from a blocking context.
    ///
    /// Inputs are tokenised once, sorted by length and batched in that order, so
    /// that each batch pads only to inputs of about its own length; vectors are
    /// returned in the order of `texts`.
    pub fn embed_blocking(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let encodings = self
            .inner
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| EmbedError::Input(format!("tokenize: {e}")))?;
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(encodings[i].get_ids().len()));
        let mut vectors = vec![Vec::new(); encodings.len()];
        let mut rest = order.as_slice();
        while !rest.is_empty() {
            // Longest first, so the first input of a batch sets its padded length.
            let width = encodings[rest[0]].get_ids().len().max(1);
            let size = (self.inner.limits.max_tokens / width)
                .clamp(1, self.inner.limits.max_inputs)
                .min(rest.len());
            let (chunk, tail) = rest.split_at(size);
            let batch: Vec<&Encoding> = chunk.iter().map(|&i| &encodings[i]).collect();
            for (&i, vector) in chunk.iter().zip(self.inner.embed_batch(&batch)?) {
                vectors[i] = vector;
            }
            rest = tail;
        }
        Ok(vectors)
    }
}

impl Inner {
    /// Runs one padded batch through the model.
    fn embed_batch(&self, encodings: &[&Encoding]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let rows = encodings.len();
        let width = encodings
            .iter()
            .map(|e| e.get_ids().len())
            .max()
            .unwrap_or(0);
        let mut ids = Vec::with_capacity(rows * width);
        let mut types = Vec::with_capacity(rows * width);
        let mut mask = Vec::with_capacity(rows * width);
        for encoding in encodings {
            let padding = width - encoding.get_ids().len();
            ids.extend(
                encoding
                    .get_ids()
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(self.pad_id, padding)),
            );
            types.extend(
                encoding
                    .get_type_ids()
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(0, padding)),
            );
            mask.extend(
                encoding
                    .get_attention_mask()
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(0, padding)),
            );
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

    fn max_input_tokens(&self) -> Option<usize> {
        Some(self.inner.folder.max_seq_length)
    }

    fn count_tokens(&self, text: &str) -> Option<usize> {
        self.inner
            .counter
            .encode(text, false)
            .ok()
            .map(|encoding| encoding.get_ids().len())
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
