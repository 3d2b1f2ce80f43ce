//! Embedders against their references: the local model against
//! sentence-transformers, the HTTP embedders against servers that speak each
//! provider's wire format.

mod http_providers;
mod local;
