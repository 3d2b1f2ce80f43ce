//! Sending one request with retries on rate limits and server errors.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;

/// How hard [`send`] tries.
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    /// Retries after a 429, a 5xx, a timeout or a lost connection.
    pub max_retries: u32,
    /// A `retry-after` longer than this is not waited for: the caller gets
    /// the failure, with the delay, at once.
    pub max_retry_wait: Duration,
    /// Deadline of one attempt, from sending to the response's headers (and,
    /// when the caller reads the body whole, to its end).
    pub timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            max_retry_wait: Duration::from_secs(30),
            timeout: Duration::from_secs(60),
        }
    }
}

/// Why a request failed for good.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// The provider's HTTP status; `None` when no response came (refused
    /// connection, timeout).
    pub status: Option<u16>,
    /// What went wrong, safe to show the party that configured the call: the
    /// status and the provider's own short message, sanitised; never the
    /// raw body, nor the system's description of a failed connection (both
    /// go to the log at debug level).
    pub message: String,
    /// When the provider said to come back.
    pub retry_after: Option<Duration>,
    /// Whether a later attempt may succeed (a rate limit, a server error, a
    /// timeout), as opposed to a request the provider will always refuse.
    pub transient: bool,
    /// The destination was refused before any connection: not a public
    /// address ([`crate::destinations`]).
    pub destination_refused: bool,
}

/// Sends what `build` makes until a response with a success status arrives
/// (returned with its body unread, so that it can be streamed), the request
/// fails for good, or the retries run out. A 429 or a 5xx is retried after the
/// `retry-after` the provider sent (or an exponential backoff when it sent
/// none); a timeout or a lost connection likewise. `error_message` reads the
/// provider's message out of an error body. A redirect is a failure: the
/// clients follow none, so that a key never travels to where a `Location`
/// header points.
pub async fn send(
    provider: &str,
    policy: &RetryPolicy,
    build: impl Fn() -> reqwest::RequestBuilder,
    error_message: fn(&str) -> Option<String>,
) -> Result<reqwest::Response, Failure> {
    let mut attempt = 0;
    loop {
        let failure = match build().timeout(policy.timeout).send().await {
            Ok(response) if response.status().is_success() => return Ok(response),
            Ok(response) => {
                let status = response.status();
                let retry_after = retry_after(response.headers());
                let body = crate::error_text(response, crate::MAX_ERROR_BODY_BYTES).await;
                tracing::debug!(provider, status = status.as_u16(), body = %crate::excerpt(&body), "provider answered an error");
                let message = if status.is_redirection() {
                    format!(
                        "HTTP {}: a redirect, which Octopus does not follow; set the base URL to the final address",
                        status.as_u16()
                    )
                } else {
                    match error_message(&body).map(|m| sanitise(&m)) {
                        Some(said) if !said.is_empty() => {
                            format!("HTTP {}: {said}", status.as_u16())
                        }
                        _ => format!("HTTP {}", status.as_u16()),
                    }
                };
                Failure {
                    status: Some(status.as_u16()),
                    transient: status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error(),
                    message,
                    retry_after,
                    destination_refused: false,
                }
            }
            Err(error) => {
                tracing::debug!(provider, %error, "provider request failed");
                let refused = crate::destinations::not_public(&error).cloned();
                Failure {
                    status: None,
                    transient: refused.is_none() && (error.is_connect() || error.is_timeout()),
                    message: match &refused {
                        Some(refused) => refused.to_string(),
                        None => describe(&error),
                    },
                    retry_after: None,
                    destination_refused: refused.is_some(),
                }
            }
        };
        let wait = failure.retry_after.unwrap_or_else(|| backoff(attempt));
        if !failure.transient || attempt >= policy.max_retries || wait > policy.max_retry_wait {
            return Err(failure);
        }
        attempt += 1;
        tracing::warn!(provider, attempt, wait_ms = wait.as_millis() as u64, reason = %failure.message, "provider request retried");
        tokio::time::sleep(wait).await;
    }
}

/// The wait before retry `attempt + 1` when the provider named none: an
/// exponential backoff from 250 ms, doubling up to 16 s, of which a random
/// half is waited ("equal jitter"), so that the callers a rate limit turned
/// away together do not all come back at the same instant.
fn backoff(attempt: u32) -> Duration {
    let ceiling = 250u64 << attempt.min(6);
    let spread = getrandom::u64().unwrap_or(0) % (ceiling / 2 + 1);
    Duration::from_millis(ceiling / 2 + spread)
}

/// What a failed connection was, in words that tell a caller no more than
/// whether an answer came (the system's own description, with its reasons
/// and addresses, goes to the log).
fn describe(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "no answer within the timeout".into()
    } else if error.is_connect() {
        "could not connect to the provider".into()
    } else {
        "the request failed before an answer came".into()
    }
}

/// Longest provider message passed on, in characters.
const MAX_MESSAGE_CHARS: usize = 200;

/// A provider's message made fit to pass on: control characters out,
/// whitespace collapsed, anything that looks like a credential (a long
/// unbroken run of letters and digits, or `name=value` / `name: value`
/// where the name speaks of a secret) masked, and cut to 200 characters.
pub fn sanitise(message: &str) -> String {
    let mut out = String::new();
    let mut mask_next = false;
    for word in message.split_whitespace() {
        let word: String = word.chars().filter(|c| !c.is_control()).collect();
        if !out.is_empty() {
            out.push(' ');
        }
        if mask_next {
            out.push_str("[redacted]");
            mask_next = false;
            continue;
        }
        let lower = word.to_ascii_lowercase();
        let secretive = [
            "password",
            "passwd",
            "secret",
            "token",
            "apikey",
            "api_key",
            "api-key",
            "credential",
        ]
        .iter()
        .any(|name| lower.contains(name));
        if secretive && let Some((name, value)) = word.split_once(['=', ':']) {
            out.push_str(name);
            out.push_str(&word[name.len()..name.len() + 1]);
            if value.is_empty() {
                mask_next = true;
            } else {
                out.push_str("[redacted]");
            }
        } else if looks_like_a_credential(&word) {
            out.push_str("[redacted]");
        } else {
            out.push_str(&word);
        }
    }
    if out.chars().count() > MAX_MESSAGE_CHARS {
        out = out.chars().take(MAX_MESSAGE_CHARS).collect();
        out.push('…');
    }
    out
}

/// 24 or more letters, digits, `-`, `_` or `*` in a row, with digits among
/// them: key-shaped.
fn looks_like_a_credential(word: &str) -> bool {
    let core = word.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '*');
    core.len() >= 24
        && core.bytes().any(|b| b.is_ascii_digit())
        && core
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'*'))
}

/// `retry-after-ms` (Azure OpenAI) or `retry-after` in seconds (RFC 9110; the
/// HTTP-date form is rare from these APIs and is treated as absent).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    number("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .or_else(|| number("retry-after").map(Duration::from_secs_f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_messages_are_passed_on_without_secrets_or_control_characters() {
        assert_eq!(
            sanitise("The model `gpt-5` does not\nexist."),
            "The model `gpt-5` does not exist."
        );
        assert_eq!(
            sanitise("connect failed: db_password=hunter2 user=app"),
            "connect failed: db_password=[redacted] user=app"
        );
        assert_eq!(
            sanitise("Incorrect API key provided: sk-proj-4f9aQ2mZ8xK1vB7nR3tY6wE0."),
            "Incorrect API key provided: [redacted]"
        );
        assert_eq!(sanitise("token: abc123 rest"), "token: [redacted] rest");
        let long = sanitise(&"word ".repeat(100));
        assert_eq!(long.chars().count(), MAX_MESSAGE_CHARS + 1);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn a_backoff_waits_between_half_and_all_of_its_doubling_ceiling_and_varies() {
        for attempt in 0..10 {
            let ceiling = 250u64 << attempt.min(6);
            let wait = backoff(attempt).as_millis() as u64;
            assert!(
                (ceiling / 2..=ceiling).contains(&wait),
                "attempt {attempt}: {wait} ms"
            );
        }
        let waits: std::collections::HashSet<Duration> = (0..64).map(|_| backoff(3)).collect();
        assert!(waits.len() > 1, "64 backoffs were all {waits:?}");
    }

    #[test]
    fn retry_after_reads_milliseconds_before_seconds() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
        headers.insert("retry-after-ms", "soon".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&headers), None, "a date is treated as absent");
    }
}
