//! Embedders for Octopus, behind [`octopus_core::embedding::Embedder`].
//!
//! - [`local`] (feature `local`, on by default): a BERT-family sentence-embedding
//!   model run in-process on CPU with candle, from a folder holding
//!   `model.safetensors`, `tokenizer.json` and `config.json`, with the
//!   sentence-transformers pooling and normalisation read from the same folder.
//! - [`model_dir`]: where the default model is found.

#[cfg(feature = "local")]
pub mod local;
pub mod model_dir;
pub mod process;
