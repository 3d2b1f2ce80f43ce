//! A thin client of the HTTP API, for the subcommands that talk to a server.

use anyhow::{Context, bail};
use reqwest::Method;
use serde_json::Value;

use crate::cli::Remote;

/// What a request carries.
enum Body {
    None,
    Json(Value),
    Raw(&'static str, Vec<u8>),
}

pub struct Client {
    http: reqwest::Client,
    base: String,
    key: Option<String>,
}

impl Client {
    pub fn new(remote: &Remote) -> Self {
        Self {
            http: reqwest::Client::new(),
            base: remote.url.trim_end_matches('/').to_owned(),
            key: remote.api_key.clone(),
        }
    }

    /// Sends a request; a non-2xx answer becomes an error carrying the server's
    /// message.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<Value>,
    ) -> anyhow::Result<Value> {
        let body = body.map_or(Body::None, Body::Json);
        self.send_body(method, path, query, body).await
    }

    /// Posts `bytes` as `content_type`; the answer is read as by [`Self::send`].
    pub async fn send_bytes(
        &self,
        path: &str,
        content_type: &'static str,
        bytes: Vec<u8>,
    ) -> anyhow::Result<Value> {
        self.send_body(Method::POST, path, &[], Body::Raw(content_type, bytes))
            .await
    }

    async fn send_body(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Body,
    ) -> anyhow::Result<Value> {
        let response = self.request(method.clone(), path, query, body).await?;
        let status = response.status();
        let text = response.text().await.context("read the server's answer")?;
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        if !status.is_success() {
            let message = value["error"]["message"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| value.to_string());
            let code = value["error"]["code"].as_str().unwrap_or("error");
            bail!("{method} {path}: {status} {code}: {message}");
        }
        Ok(value)
    }

    /// Sends a request whose successful answer is read as it arrives (a
    /// stream of server-sent events); an error answer is read whole.
    pub async fn stream(&self, path: &str, body: Value) -> anyhow::Result<reqwest::Response> {
        self.open(Method::POST, path, &[], Body::Json(body)).await
    }

    /// Gets a long answer (a dump), to be read as it arrives.
    pub async fn download(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> anyhow::Result<reqwest::Response> {
        self.open(Method::GET, path, query, Body::None).await
    }

    async fn open(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Body,
    ) -> anyhow::Result<reqwest::Response> {
        let response = self.request(method.clone(), path, query, body).await?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status();
        let value: Value = response.json().await.unwrap_or(Value::Null);
        let code = value["error"]["code"].as_str().unwrap_or("error");
        let message = value["error"]["message"].as_str().unwrap_or("");
        bail!("{method} {path}: {status} {code}: {message}");
    }

    async fn request(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Body,
    ) -> anyhow::Result<reqwest::Response> {
        let url = format!("{}{path}", self.base);
        let mut request = self.http.request(method, &url).query(query);
        match &self.key {
            Some(key) => request = request.bearer_auth(key),
            None => bail!("no API key: pass --api-key or set OCTOPUS_API_KEY"),
        }
        match body {
            Body::None => {}
            Body::Json(body) => request = request.json(&body),
            Body::Raw(content_type, bytes) => {
                request = request
                    .header(reqwest::header::CONTENT_TYPE, content_type)
                    .body(bytes);
            }
        }
        request
            .send()
            .await
            .with_context(|| format!("reach the Octopus server at {}", self.base))
    }
}

impl Client {
    /// The id of the agent `agent` names: an id as it is, or else the
    /// tenant's agent of that name.
    pub async fn agent_id(&self, agent: &str) -> anyhow::Result<String> {
        if is_id(agent) {
            return Ok(agent.to_owned());
        }
        const PAGE: usize = 200;
        for offset in (0..).step_by(PAGE) {
            let params = [("limit", PAGE.to_string()), ("offset", offset.to_string())];
            let page = self.send(Method::GET, "/v1/agents", &params, None).await?;
            let agents = page["items"].as_array().cloned().unwrap_or_default();
            if let Some(found) = agents.iter().find(|a| a["name"] == agent) {
                return Ok(found["id"].as_str().unwrap_or_default().to_owned());
            }
            if agents.len() < PAGE {
                break;
            }
        }
        bail!("no agent named {agent:?} (`octopus agents list` shows the tenant's agents)")
    }

    /// [`Self::agent_id`] for an option that may be absent.
    pub async fn maybe_agent_id(&self, agent: Option<String>) -> anyhow::Result<Option<String>> {
        match agent {
            Some(agent) => Ok(Some(self.agent_id(&agent).await?)),
            None => Ok(None),
        }
    }
}

/// Whether `text` is written as an id (a UUID) rather than a name.
fn is_id(text: &str) -> bool {
    text.len() == 36
        && text.char_indices().all(|(at, c)| match at {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// Query pairs for the options that are set.
pub fn query(pairs: &[(&'static str, Option<String>)]) -> Vec<(&'static str, String)> {
    pairs
        .iter()
        .filter_map(|(name, value)| value.clone().map(|v| (*name, v)))
        .collect()
}

/// `segment` percent-encoded for a URL path: user ids are free text.
pub fn encode_path(segment: &str) -> String {
    segment
        .bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(byte).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}
