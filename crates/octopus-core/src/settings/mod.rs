//! Settings that more than one crate reads: the engine, and the adapter
//! that `octopus-app` builds from them.

pub mod embedding;
pub mod llm;
