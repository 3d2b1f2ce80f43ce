//! The HTTP API, in-process (`Router::oneshot`) on a fresh store per test.

#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

mod bad_input;
mod chat_imports;
mod client_operations;
mod console;
mod declared_limits;
mod dumps;
mod explain;
mod fact_changes;
mod facts;
mod flows;
mod harness;
mod isolation;
mod knowledge;
mod message_erasure;
mod openai;
mod pii;
#[cfg(feature = "postgres-tests")]
mod postgres_outage;
mod procedures;
mod profiles;
#[cfg(feature = "qdrant-fault-tests")]
mod qdrant_outage;
mod recall;
mod reply_bounds;
mod status;
mod tool_races;
mod turns;
mod webhooks;
