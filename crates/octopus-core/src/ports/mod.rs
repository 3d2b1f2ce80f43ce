//! The ports: narrow async traits that storage, vector indexes, embedders
//! and chat models implement, whose doc comments are the contract every
//! implementation keeps.

pub mod chat;
pub mod embedding;
pub mod store;
pub mod vectors;
