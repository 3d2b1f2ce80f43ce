//! The port webhook deliveries leave through: one signed POST to a
//! tenant's endpoint, and what came back. Whether that counts as delivered,
//! when to try again and when to give up is the engine's to decide; how the
//! request travels (which addresses it may reach, how long it may take) is
//! the implementation's, in `octopus-provider-http`.

use async_trait::async_trait;

/// One delivery attempt as it goes out: the endpoint, the body, and the
/// Standard Webhooks headers that sign it.
#[derive(Clone, Debug, PartialEq)]
pub struct WebhookPost {
    pub url: String,
    /// `webhook-id`: the event's message id, the same on every retry.
    pub message_id: String,
    /// `webhook-timestamp`, in seconds since the epoch.
    pub timestamp: i64,
    /// `webhook-signature`.
    pub signature: String,
    /// The JSON body.
    pub payload: String,
}

/// What one POST came to.
#[derive(Clone, Debug, PartialEq)]
pub enum PostAnswer {
    /// The endpoint answered with `status`; `detail` is a short excerpt of
    /// the body of an answer that was not a success (redirects are not
    /// followed, and say so).
    Answered { status: u16, detail: String },
    /// No answer: refused before sending, no connection, a timeout. Names
    /// no secret and no query string of the URL.
    NoAnswer { error: String },
}

/// An endpoint URL the outbound rules refuse, and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UrlRefused(pub String);

/// Sends webhook deliveries.
#[async_trait]
pub trait WebhookSender: Send + Sync {
    /// Refuses an endpoint URL the outbound rules forbid outright, before it
    /// is stored: one that does not parse, holds credentials, or names an
    /// address the rules keep out. A host name is checked again each time it
    /// is resolved.
    fn check_url(&self, url: &str) -> Result<(), UrlRefused>;

    /// Sends one attempt; never waits longer than the sender's timeout.
    async fn post(&self, post: &WebhookPost) -> PostAnswer;
}
