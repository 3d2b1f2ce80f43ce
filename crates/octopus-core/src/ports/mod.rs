//! The ports: narrow async traits that storage, vector indexes, embedders,
//! chat models and the webhook sender implement, whose doc comments are the contract every
//! implementation keeps.

pub mod chat;
pub mod embedding;
pub mod store;
pub mod vectors;
pub mod webhook_sender;
