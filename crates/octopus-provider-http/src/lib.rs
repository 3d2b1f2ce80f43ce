//! What every outbound HTTP client in Octopus shares (the embedders of
//! `octopus-embed`, the chat models of `octopus-llm`, and [`webhooks`]): the
//! TLS setup, a client with sane timeouts, the rules on where a request
//! may go ([`destinations`]), and [`send`], which retries a request on rate
//! limits and server errors honouring the provider's `retry-after`.

#![forbid(unsafe_code)]

mod body;
pub mod destinations;
mod retry;
pub mod webhooks;

use std::time::Duration;

pub use body::{error_text, read_at_most};
pub use retry::{Failure, RetryPolicy, sanitise, send};

/// Bytes of an error body read for the provider's message: error bodies
/// are short, and the rest of a long one is not read.
pub const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// Installs ring as the process's TLS crypto provider. The workspace builds
/// reqwest with rustls but without a provider (aws-lc, the default one, is a
/// heavy C build), and reqwest panics when it builds a client before one is
/// installed: every binary calls this first. Repeated calls do nothing.
pub fn install_tls_provider() {
    static PROVIDER: std::sync::Once = std::sync::Once::new();
    PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// An HTTP client whose connections give up after `connect_timeout`, and whose
/// reads give up when the server sends nothing for `read_timeout`. A whole
/// request's deadline is set per request (a streamed answer may rightly take
/// longer than any one read). It follows no redirect: the headers carry API
/// keys. A client that cannot be built (no TLS backend, say) is an error: one
/// without timeouts could hang a worker forever. For URLs an untrusted party
/// chose, use [`destinations::public_only_client`].
pub fn client(
    connect_timeout: Duration,
    read_timeout: Duration,
) -> Result<reqwest::Client, ClientError> {
    install_tls_provider();
    Ok(reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .read_timeout(read_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()?)
}

/// An HTTP client that could not be built (no TLS backend, say).
#[derive(Debug, thiserror::Error)]
#[error("cannot build the HTTP client: {0}")]
pub struct ClientError(#[from] reqwest::Error);

pub use octopus_core::excerpt;
