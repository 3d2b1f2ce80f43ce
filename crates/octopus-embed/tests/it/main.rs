//! Embedders against their references: the local model against
//! sentence-transformers, the HTTP embedders against servers that speak each
//! provider's wire format.

#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

mod http_providers;
mod int8_agreement;
mod local;
