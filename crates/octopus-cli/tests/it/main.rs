//! The real `octopus` binary: started, loaded, killed, restarted.

#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

mod api_coverage;
mod client_commands;
#[cfg(feature = "client-tests")]
mod clients;
mod data_dir_lock;
mod durability;
mod fact_erasure;
mod fairness;
mod forget;
mod hostile_clients;
mod licences;
mod message_erasure;
#[cfg(feature = "client-tests")]
mod our_clients;
mod process;
mod qdrant;
mod query_strings;
mod reference_pages;
mod slow_clients;
#[cfg(feature = "soak-tests")]
mod soak;
mod summaries;
mod tenant_deletion;
#[cfg(feature = "postgres-tests")]
mod two_servers;
#[cfg(feature = "postgres-tests")]
mod vector_copies;
mod webhook_outbox;
