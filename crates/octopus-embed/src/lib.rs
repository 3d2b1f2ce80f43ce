//! Embedders for Octopus, behind [`octopus_core::embedding::Embedder`].
//!
//! - [`local`] (feature `local`, on by default): a BERT-family sentence-embedding
//!   model run in-process on CPU by our own encoder, from a folder holding
//!   `model.safetensors`, `tokenizer.json` and `config.json`, with the
//!   sentence-transformers pooling and normalisation read from the same folder.
//! - [`http`] (feature `http`, on by default): OpenAI-compatible (also Azure
//!   OpenAI) and Ollama embedding APIs.
//! - [`model_dir`]: where the default model is found.
//! - [`configured`] (feature `http`): the embedder `[embedding]` names, as
//!   the engine's `EmbedderSource`, loaded on first use.

#[cfg(feature = "http")]
pub mod configured;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "local")]
pub mod local;
pub mod model_dir;
