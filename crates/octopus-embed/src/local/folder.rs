//! A sentence-transformers model folder: what the files say about the pipeline.

use std::path::{Path, PathBuf};

use octopus_core::embedding::EmbedError;
use serde::Deserialize;

use super::pooling::Pooling;

/// What the folder's sentence-transformers configuration says.
#[derive(Debug)]
pub struct FolderConfig {
    pub pooling: Pooling,
    /// Whether the pipeline ends with a Normalize module.
    pub normalize: bool,
    /// Longest input in tokens; longer inputs are truncated.
    pub max_seq_length: usize,
}

#[derive(Deserialize)]
struct Module {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    path: String,
}

#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
}

#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
}

/// The model's own limit when the folder states none (BERT's position table).
const DEFAULT_MAX_SEQ_LENGTH: usize = 512;

pub fn file(dir: &Path, name: &str) -> Result<PathBuf, EmbedError> {
    let path = dir.join(name);
    if path.is_file() {
        Ok(path)
    } else {
        Err(EmbedError::Model(format!(
            "{} is missing; a model folder needs model.safetensors, tokenizer.json and config.json \
             (run scripts/fetch-model.sh for the default model)",
            path.display()
        )))
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, EmbedError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| EmbedError::Model(format!("read {}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| EmbedError::Model(format!("parse {}: {e}", path.display())))
}

impl FolderConfig {
    /// Reads `modules.json`, the pooling module's `config.json` and
    /// `sentence_bert_config.json`. A folder without them is taken as a plain
    /// BERT model with mean pooling and normalisation, the common convention.
    pub fn read(dir: &Path) -> Result<Self, EmbedError> {
        let modules: Vec<Module> = if dir.join("modules.json").is_file() {
            read_json(&dir.join("modules.json"))?
        } else {
            Vec::new()
        };
        let pooling_dir = modules
            .iter()
            .find(|m| m.kind.ends_with(".Pooling"))
            .map(|m| dir.join(&m.path));
        let pooling = match pooling_dir
            .map(|d| d.join("config.json"))
            .filter(|p| p.is_file())
        {
            Some(path) => Pooling::from_flags(&read_json::<PoolingConfig>(&path)?)?,
            None => Pooling::Mean,
        };
        let normalize =
            modules.is_empty() || modules.iter().any(|m| m.kind.ends_with(".Normalize"));
        let max_seq_length = if dir.join("sentence_bert_config.json").is_file() {
            read_json::<SentenceBertConfig>(&dir.join("sentence_bert_config.json"))?.max_seq_length
        } else {
            None
        }
        .unwrap_or(DEFAULT_MAX_SEQ_LENGTH);
        Ok(Self {
            pooling,
            normalize,
            max_seq_length,
        })
    }
}

impl Pooling {
    fn from_flags(config: &PoolingConfig) -> Result<Self, EmbedError> {
        match (
            config.pooling_mode_cls_token,
            config.pooling_mode_mean_tokens,
            config.pooling_mode_max_tokens,
            config.pooling_mode_mean_sqrt_len_tokens,
        ) {
            (true, false, false, false) => Ok(Pooling::Cls),
            (false, true, false, false) => Ok(Pooling::Mean),
            (false, false, true, false) => Ok(Pooling::Max),
            (false, false, false, true) => Ok(Pooling::MeanSqrtLen),
            _ => Err(EmbedError::Model(
                "the pooling config must enable exactly one supported pooling mode".into(),
            )),
        }
    }
}
