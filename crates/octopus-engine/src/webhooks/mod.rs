//! Sending what the outbox holds to the endpoints tenants registered: each
//! delivery signed ([`signing`]) and handed to the `WebhookSender` port
//! (over HTTP, under the outbound rules: `octopus_provider_http::webhooks`),
//! and its outcome decided here: delivered on a 2xx, tried again on a
//! schedule with jitter otherwise, and the endpoint disabled when it answers
//! 410 Gone or has failed for too long.

pub(crate) mod in_flight;
pub mod signing;

use std::sync::Arc;
use std::time::Duration;

use octopus_core::Timestamp;
use octopus_core::webhook::{AttemptOutcome, DueDelivery, message_id};
use octopus_core::webhook_sender::{PostAnswer, UrlRefused, WebhookPost, WebhookSender};
use serde::{Deserialize, Serialize};

/// Where endpoints may point (`[webhooks] destinations`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Destinations {
    /// Public addresses only (the default): no endpoint reaches the
    /// server's own network.
    #[default]
    Public,
    /// Any address, internal ones included: for a deployment whose tenants
    /// are trusted with the server's network.
    Any,
}

/// How events are delivered (`[webhooks]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebhookSettings {
    pub destinations: Destinations,
    /// Seconds one attempt may take, from connecting to the answer's status.
    pub timeout_secs: u64,
    /// Seconds to wait before each attempt after a failure: the first
    /// retry waits the first, and so on; the last repeats. Each wait is
    /// lengthened by up to a fifth at random, so that endpoints that failed
    /// together are not all tried again at once.
    pub retry_schedule_secs: Vec<f64>,
    /// An endpoint whose every attempt failed for this long is disabled.
    pub disable_after_failing_secs: u64,
    /// Days the log keeps a delivered or given-up delivery.
    pub keep_deliveries_days: u64,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        Self {
            destinations: Destinations::Public,
            timeout_secs: 15,
            retry_schedule_secs: vec![5.0, 300.0, 1800.0, 7200.0, 18_000.0, 36_000.0],
            disable_after_failing_secs: 86_400,
            keep_deliveries_days: 7,
        }
    }
}

impl WebhookSettings {
    /// Refuses a schedule that is empty or holds a negative or endless wait.
    pub fn validate(&self) -> crate::error::Result<()> {
        if self.retry_schedule_secs.is_empty() {
            return Err(crate::error::Error::Config(
                "[webhooks] retry_schedule_secs must name at least one wait".into(),
            ));
        }
        if let Some(bad) = self
            .retry_schedule_secs
            .iter()
            .find(|secs| !secs.is_finite() || **secs < 0.0 || **secs > 30.0 * 86_400.0)
        {
            return Err(crate::error::Error::Config(format!(
                "[webhooks] retry_schedule_secs: {bad} is not a wait from 0 to 30 days"
            )));
        }
        Ok(())
    }

    /// How long one attempt may take, from connecting to the answer's
    /// status.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.max(1))
    }

    /// How long a claimed delivery is held: longer than an attempt takes.
    pub(crate) fn lease(&self) -> Duration {
        self.timeout() * 2 + Duration::from_secs(5)
    }

    /// When to try again after the `attempts`th failed attempt.
    fn retry_at(&self, attempts: u32, at: Timestamp) -> Timestamp {
        let schedule = &self.retry_schedule_secs;
        let index = (attempts.max(1) as usize - 1).min(schedule.len().saturating_sub(1));
        let base = schedule.get(index).copied().unwrap_or(5.0);
        let wait = base * (1.0 + 0.2 * unit_random());
        at + chrono::Duration::milliseconds((wait * 1000.0) as i64)
    }
}

/// A number in [0, 1) from the OS's random source.
fn unit_random() -> f64 {
    let mut bytes = [0u8; 4];
    match getrandom::fill(&mut bytes) {
        Ok(()) => f64::from(u32::from_le_bytes(bytes)) / (f64::from(u32::MAX) + 1.0),
        Err(_) => 0.5,
    }
}

/// Decides what each attempt came to; the port carries it.
pub(crate) struct Sender {
    settings: WebhookSettings,
    transport: Arc<dyn WebhookSender>,
}

impl Sender {
    pub(crate) fn new(settings: WebhookSettings, transport: Arc<dyn WebhookSender>) -> Self {
        Self {
            settings,
            transport,
        }
    }

    pub(crate) fn settings(&self) -> &WebhookSettings {
        &self.settings
    }

    /// Refuses an endpoint URL the outbound rules forbid outright.
    pub(crate) fn check_url(&self, url: &str) -> Result<(), UrlRefused> {
        self.transport.check_url(url)
    }

    /// One attempt at `due`, and what it came to at `now`.
    pub(crate) async fn attempt(&self, due: &DueDelivery, now: Timestamp) -> AttemptOutcome {
        let message_id = message_id(due.event_id);
        let timestamp = now.timestamp();
        let signature = signing::signature(&due.secret, &message_id, timestamp, &due.payload);
        let post = WebhookPost {
            url: due.url.clone(),
            message_id,
            timestamp,
            signature,
            payload: due.payload.clone(),
        };
        let (status, error) = match self.transport.post(&post).await {
            PostAnswer::Answered { status, .. } if (200..300).contains(&status) => {
                return AttemptOutcome::Delivered { status };
            }
            PostAnswer::Answered { status, detail } => (Some(status), detail),
            PostAnswer::NoAnswer { error } => (None, error),
        };
        if status == Some(410) {
            return AttemptOutcome::Disable {
                status,
                error,
                reason: "the endpoint answered 410 Gone".into(),
            };
        }
        let failing_since = due.failing_since;
        let failing_for = failing_since.map(|since| now - since);
        let limit = chrono::Duration::seconds(
            i64::try_from(self.settings.disable_after_failing_secs).unwrap_or(i64::MAX),
        );
        if failing_for.is_some_and(|failing| failing >= limit) {
            let reason = format!(
                "every delivery failed for {} s (since {}); the last: {error}",
                self.settings.disable_after_failing_secs,
                failing_since.map(|s| s.to_rfc3339()).unwrap_or_default(),
            );
            return AttemptOutcome::Disable {
                status,
                error,
                reason,
            };
        }
        AttemptOutcome::Failed {
            status,
            error,
            retry_at: self.settings.retry_at(due.attempts + 1, now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_follow_the_schedule_with_at_most_a_fifth_more() {
        let settings = WebhookSettings {
            retry_schedule_secs: vec![5.0, 300.0],
            ..WebhookSettings::default()
        };
        let at = chrono::DateTime::UNIX_EPOCH;
        for (attempts, base) in [(1, 5.0), (2, 300.0), (3, 300.0), (9, 300.0)] {
            let wait = (settings.retry_at(attempts, at) - at).num_milliseconds() as f64 / 1000.0;
            assert!(wait >= base && wait <= base * 1.2, "{attempts}: {wait}");
        }
    }

    #[test]
    fn a_schedule_must_hold_sane_waits() {
        let mut settings = WebhookSettings::default();
        assert!(settings.validate().is_ok());
        settings.retry_schedule_secs = vec![];
        assert!(settings.validate().is_err());
        settings.retry_schedule_secs = vec![1.0, -2.0];
        assert!(settings.validate().unwrap_err().to_string().contains("-2"));
    }
}
