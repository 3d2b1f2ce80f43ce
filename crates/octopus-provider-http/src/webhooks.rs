//! Webhook deliveries over HTTP: each attempt POSTed under the same
//! outbound rules as a model URL a tenant chose (public addresses only
//! unless the operator allows any, no redirect followed, a bounded wait and
//! answer, no key of the server's ever sent).

use std::time::Duration;

use async_trait::async_trait;
use octopus_core::webhook_sender::{PostAnswer, UrlRefused, WebhookPost, WebhookSender};

use crate::destinations::{check_literal, not_public, public_only_client};

/// Bytes of a failed answer's body kept for the log.
const ERROR_BODY_BYTES: usize = 1024;

/// Sends deliveries; one HTTP client for all of them, built on first use.
pub struct HttpWebhookSender {
    public_only: bool,
    timeout: Duration,
    client: std::sync::OnceLock<reqwest::Client>,
}

impl HttpWebhookSender {
    /// A sender whose attempts take at most `timeout`, from connecting to
    /// the answer's status; to public addresses only when `public_only`.
    pub fn new(public_only: bool, timeout: Duration) -> Self {
        Self {
            public_only,
            timeout,
            client: std::sync::OnceLock::new(),
        }
    }

    fn client(&self) -> Result<&reqwest::Client, crate::ClientError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let client = match self.public_only {
            true => public_only_client(self.timeout, self.timeout)?,
            false => crate::client(self.timeout, self.timeout)?,
        };
        Ok(self.client.get_or_init(|| client))
    }

    fn parse(&self, url: &str) -> Result<reqwest::Url, UrlRefused> {
        let parsed =
            reqwest::Url::parse(url).map_err(|e| UrlRefused(format!("is not a URL: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(UrlRefused("must be an http or https URL".into()));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(UrlRefused(
                "must not hold credentials; verify deliveries by their signature".into(),
            ));
        }
        if self.public_only {
            check_literal(&parsed).map_err(|refused| UrlRefused(refused.to_string()))?;
        }
        Ok(parsed)
    }
}

#[async_trait]
impl WebhookSender for HttpWebhookSender {
    fn check_url(&self, url: &str) -> Result<(), UrlRefused> {
        self.parse(url).map(|_| ())
    }

    async fn post(&self, post: &WebhookPost) -> PostAnswer {
        let sent = async {
            let url = self.parse(&post.url).map_err(|refused| refused.0)?;
            self.client()
                .map_err(|e| e.to_string())?
                .post(url)
                .timeout(self.timeout)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .header(
                    reqwest::header::USER_AGENT,
                    concat!("Octopus-Webhooks/", env!("CARGO_PKG_VERSION")),
                )
                .header("webhook-id", &post.message_id)
                .header("webhook-timestamp", post.timestamp.to_string())
                .header("webhook-signature", &post.signature)
                .body(post.payload.clone())
                .send()
                .await
                .map_err(|error| describe(&error))
        };
        match sent.await {
            Ok(response) if response.status().is_success() => PostAnswer::Answered {
                status: response.status().as_u16(),
                detail: String::new(),
            },
            Ok(response) => {
                let status = response.status();
                let body = crate::error_text(response, ERROR_BODY_BYTES).await;
                let what = match status.is_redirection() {
                    true => "a redirect, which is not followed".to_owned(),
                    false => crate::excerpt(&body),
                };
                PostAnswer::Answered {
                    status: status.as_u16(),
                    detail: format!("HTTP {status}: {what}"),
                }
            }
            Err(error) => PostAnswer::NoAnswer { error },
        }
    }
}

/// What went wrong with a request that got no answer, without the URL's
/// query (it may hold a token of the receiver's).
fn describe(error: &reqwest::Error) -> String {
    if let Some(refused) = not_public(error) {
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
        Some(cause) => format!("{kind}: {}", crate::sanitise(&cause)),
        None => kind.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_on_internal_addresses_are_refused_unless_allowed() {
        let public = HttpWebhookSender::new(true, Duration::from_secs(1));
        for url in [
            "http://127.0.0.1:9000/hook",
            "http://169.254.169.254/",
            "http://[::1]/",
            "ftp://hooks.example.com/",
        ] {
            assert!(public.check_url(url).is_err(), "{url}");
        }
        assert!(
            public
                .check_url("https://hooks.example.com/octopus")
                .is_ok()
        );
        let credentials = public
            .check_url("https://user:pw@hooks.example.com/")
            .unwrap_err();
        assert!(credentials.0.contains("credentials"), "{credentials}");
        let any = HttpWebhookSender::new(false, Duration::from_secs(1));
        assert!(any.check_url("http://127.0.0.1:9000/hook").is_ok());
    }
}
