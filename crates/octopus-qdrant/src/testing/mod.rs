//! For test suites: the Qdrant server to test against.
//!
//! `OCTOPUS_TEST_QDRANT_URL` names its gRPC URL (`scripts/test.sh` starts a
//! throwaway server with `scripts/qdrant.sh` and sets it). Each test
//! writes under a prefix of its own, so tests share the server freely.

use crate::{QdrantLayout, QdrantOptions};

#[cfg(feature = "fault-tests")]
mod own_server;
#[cfg(feature = "fault-tests")]
pub use own_server::OwnQdrant;

const SERVER_VARIABLE: &str = "OCTOPUS_TEST_QDRANT_URL";

/// The test server's gRPC URL.
///
/// # Panics
/// When `OCTOPUS_TEST_QDRANT_URL` is not set, with how to set it.
pub fn server_url() -> String {
    std::env::var(SERVER_VARIABLE)
        .ok()
        .filter(|url| !url.is_empty())
        .unwrap_or_else(|| {
            panic!(
                "{SERVER_VARIABLE} is not set: start Qdrant and export \
                 {SERVER_VARIABLE}=http://127.0.0.1:GRPC_PORT (scripts/test.sh starts one when \
                 OCTOPUS_TEST_QDRANT_BIN names a qdrant binary, or one is on PATH)"
            )
        })
}

/// Options for the test server, with collections under a fresh prefix.
pub fn fresh_options(layout: QdrantLayout) -> QdrantOptions {
    let mut options = QdrantOptions::new(server_url());
    options.layout = layout;
    options.prefix = format!("t{}_", uuid::Uuid::now_v7().simple());
    options
}
