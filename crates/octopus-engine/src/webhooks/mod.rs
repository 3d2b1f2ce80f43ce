//! Sending what the outbox holds to the endpoints tenants registered: each
//! delivery signed ([`signing`]), POSTed under the same outbound rules as a
//! model URL a tenant chose (public addresses only unless the operator
//! allows any, no redirect followed, a bounded wait and answer, no key of
//! the server's ever sent), and its outcome decided here: delivered on a
//! 2xx, tried again on a schedule with jitter otherwise, and the endpoint
//! disabled when it answers 410 Gone or has failed for too long.

pub(crate) mod in_flight;
pub mod signing;

use std::time::Duration;

use octopus_core::Timestamp;
use octopus_core::webhook::{AttemptOutcome, DueDelivery, message_id};
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
    pub fn validate(&self) -> Result<(), String> {
        if self.retry_schedule_secs.is_empty() {
            return Err("[webhooks] retry_schedule_secs must name at least one wait".into());
        }
        if let Some(bad) = self
            .retry_schedule_secs
            .iter()
            .find(|secs| !secs.is_finite() || **secs < 0.0 || **secs > 30.0 * 86_400.0)
        {
            return Err(format!(
                "[webhooks] retry_schedule_secs: {bad} is not a wait from 0 to 30 days"
            ));
        }
        Ok(())
    }

    fn timeout(&self) -> Duration {
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

/// Bytes of a failed answer's body kept for the log.
const ERROR_BODY_BYTES: usize = 1024;

/// Sends deliveries; one HTTP client for all of them, built on first use.
pub(crate) struct Sender {
    settings: WebhookSettings,
    client: std::sync::OnceLock<reqwest::Client>,
}

impl Sender {
    pub(crate) fn new(settings: WebhookSettings) -> Self {
        Self {
            settings,
            client: std::sync::OnceLock::new(),
        }
    }

    fn client(&self) -> Result<&reqwest::Client, String> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let timeout = self.settings.timeout();
        let client = match self.settings.destinations {
            Destinations::Public => {
                octopus_provider_http::destinations::public_only_client(timeout, timeout)?
            }
            Destinations::Any => octopus_provider_http::client(timeout, timeout)?,
        };
        Ok(self.client.get_or_init(|| client))
    }

    pub(crate) fn settings(&self) -> &WebhookSettings {
        &self.settings
    }

    /// Refuses an endpoint URL the outbound rules forbid outright: one that
    /// does not parse, or (unless any address is allowed) one whose host is
    /// an address that is not public. A name is checked when it is resolved,
    /// at each delivery.
    pub(crate) fn check_url(&self, url: &str) -> Result<(), String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| format!("is not a URL: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err("must be an http or https URL".into());
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err("must not hold credentials; verify deliveries by their signature".into());
        }
        match self.settings.destinations {
            Destinations::Any => Ok(()),
            Destinations::Public => octopus_provider_http::destinations::check_literal(&parsed)
                .map_err(|refused| refused.to_string()),
        }
    }

    /// One attempt at `due`, and what it came to at `now`.
    pub(crate) async fn attempt(&self, due: &DueDelivery, now: Timestamp) -> AttemptOutcome {
        let id = message_id(due.event_id);
        let timestamp = now.timestamp();
        let signature = signing::signature(&due.secret, &id, timestamp, &due.payload);
        let sent = async {
            let url = reqwest::Url::parse(&due.url).map_err(|e| (None, format!("bad URL: {e}")))?;
            if self.settings.destinations == Destinations::Public {
                octopus_provider_http::destinations::check_literal(&url)
                    .map_err(|refused| (None, refused.to_string()))?;
            }
            self.client()
                .map_err(|error| (None, error))?
                .post(url)
                .timeout(self.settings.timeout())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .header(
                    reqwest::header::USER_AGENT,
                    concat!("Octopus-Webhooks/", env!("CARGO_PKG_VERSION")),
                )
                .header("webhook-id", &id)
                .header("webhook-timestamp", timestamp.to_string())
                .header("webhook-signature", signature)
                .body(due.payload.clone())
                .send()
                .await
                .map_err(|error| (None, describe(&error)))
        };
        let (status, error) = match sent.await {
            Ok(response) if response.status().is_success() => {
                return AttemptOutcome::Delivered {
                    status: response.status().as_u16(),
                };
            }
            Ok(response) => {
                let status = response.status();
                let body = octopus_provider_http::error_text(response, ERROR_BODY_BYTES).await;
                let what = match status.is_redirection() {
                    true => "a redirect, which is not followed".to_owned(),
                    false => octopus_provider_http::excerpt(&body),
                };
                (Some(status.as_u16()), format!("HTTP {status}: {what}"))
            }
            Err((status, error)) => (status, error),
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

/// What went wrong with a request that got no answer, without the URL's
/// query (it may hold a token of the receiver's).
fn describe(error: &reqwest::Error) -> String {
    if let Some(refused) = octopus_provider_http::destinations::not_public(error) {
        return refused.to_string();
    }
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "could not connect"
    } else {
        "failed"
    };
    let mut source = std::error::Error::source(error);
    let mut innermost = None;
    while let Some(cause) = source {
        innermost = Some(cause.to_string());
        source = cause.source();
    }
    match innermost {
        Some(cause) => format!("{kind}: {}", octopus_provider_http::sanitise(&cause)),
        None => kind.to_owned(),
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
        assert!(settings.validate().unwrap_err().contains("-2"));
    }

    #[test]
    fn endpoints_on_internal_addresses_are_refused_unless_allowed() {
        let public = Sender::new(WebhookSettings::default());
        for url in [
            "http://127.0.0.1:9000/hook",
            "http://169.254.169.254/",
            "http://[::1]/",
        ] {
            assert!(public.check_url(url).is_err(), "{url}");
        }
        assert!(
            public
                .check_url("https://hooks.example.com/octopus")
                .is_ok()
        );
        assert!(
            public
                .check_url("https://user:pw@hooks.example.com/")
                .is_err()
        );
        let any = Sender::new(WebhookSettings {
            destinations: Destinations::Any,
            ..WebhookSettings::default()
        });
        assert!(any.check_url("http://127.0.0.1:9000/hook").is_ok());
    }
}
