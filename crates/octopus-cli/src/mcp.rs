//! `octopus mcp`: the Model Context Protocol over standard input and output.
//!
//! Two ways, one set of tools (`octopus_server::mcp`):
//! - relayed: each JSON-RPC message read from stdin is posted to the
//!   server's `/mcp` with the tenant's key, and its answer written to
//!   stdout. The server keeps no session, so the relay is a loop;
//! - local: the data directory (or database) opened in this process, with
//!   its memory worker, as `octopus serve` would.
//!
//! Stdout carries the protocol alone; logs go to stderr.

use std::sync::Arc;

use anyhow::{Context, bail};
use octopus_server::mcp::{McpOptions, MemoryServer};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, RwLock};

use crate::cli::{McpArgs, Remote};

pub async fn run(args: McpArgs) -> anyhow::Result<()> {
    let key = args
        .remote
        .api_key
        .clone()
        .context("no API key: set OCTOPUS_API_KEY (or --api-key) to a tenant's key")?;
    if args.opens_data() {
        local(&args, &key).await
    } else {
        relay(&args.remote, key).await
    }
}

async fn local(args: &McpArgs, key: &str) -> anyhow::Result<()> {
    let config = crate::serve::load(&args.local)?;
    crate::serve::init_logging(&config.log.filter);
    let opened = crate::serve::open(&config).await?;
    let octopus = opened.octopus.clone();
    crate::serve::start_workers(&octopus, &config);
    let options = McpOptions {
        allow_forget_user: config.server.mcp_allow_forget_user,
    };
    let server = MemoryServer::for_key(octopus, key, options)
        .await
        .map_err(|error| anyhow::anyhow!("{}", error.body().error.message))?;
    octopus_server::mcp::serve_stdio(server)
        .await
        .context("serve MCP on stdio")
}

/// What the relay shares between messages in flight.
struct Relay {
    http: reqwest::Client,
    url: String,
    key: String,
    /// The protocol version the server chose at initialisation, sent with
    /// every later message as Streamable HTTP asks.
    protocol_version: RwLock<Option<String>>,
    stdout: Mutex<tokio::io::Stdout>,
}

async fn relay(remote: &Remote, key: String) -> anyhow::Result<()> {
    let relay = Arc::new(Relay {
        http: reqwest::Client::new(),
        url: format!("{}/mcp", remote.url.trim_end_matches('/')),
        key,
        protocol_version: RwLock::new(None),
        stdout: Mutex::new(tokio::io::stdout()),
    });
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut in_flight = tokio::task::JoinSet::new();
    while let Some(line) = lines.next_line().await.context("read stdin")? {
        if line.trim().is_empty() {
            continue;
        }
        let message: Value = match serde_json::from_str(&line) {
            Ok(message) => message,
            Err(error) => {
                let reply = json!({"jsonrpc": "2.0", "id": null,
                    "error": {"code": -32700, "message": format!("not JSON: {error}")}});
                relay.write(&reply).await?;
                continue;
            }
        };
        // Initialisation first, alone: the version it settles goes with
        // every later message. The rest run side by side, as a client may
        // have several calls out at once.
        if message["method"] == "initialize" {
            relay.forward(message).await?;
        } else {
            let relay = Arc::clone(&relay);
            in_flight.spawn(async move { relay.forward(message).await });
        }
        while let Some(done) = in_flight.try_join_next() {
            done??;
        }
    }
    while let Some(done) = in_flight.join_next().await {
        done??;
    }
    Ok(())
}

impl Relay {
    /// Posts one message, and writes what the server answers.
    async fn forward(&self, message: Value) -> anyhow::Result<()> {
        let mut request = self
            .http
            .post(&self.url)
            .bearer_auth(&self.key)
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .json(&message);
        if let Some(version) = self.protocol_version.read().await.as_deref() {
            request = request.header("mcp-protocol-version", version);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(error) => {
                return self
                    .fail(
                        &message,
                        format!("reach the Octopus server at {}: {error}", self.url),
                        Value::Null,
                    )
                    .await;
            }
        };
        let status = response.status();
        let event_stream = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.starts_with("text/event-stream"));
        let body = response.text().await.context("read the server's answer")?;
        if !status.is_success() {
            // The server refused the request itself (a key, a body too
            // large): the client hears it as this message's error.
            let detail: Value = serde_json::from_str(&body).unwrap_or(Value::String(body));
            let reason = detail["error"]["message"]
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("the server answered {status}"));
            let mut data = detail["error"].clone();
            if data.is_object() {
                data["status"] = status.as_u16().into();
            }
            return self.fail(&message, reason, data).await;
        }
        let answers: Vec<Value> = if event_stream {
            body.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str(data.trim()).ok())
                .collect()
        } else if body.trim().is_empty() {
            Vec::new() // a notification's 202
        } else {
            vec![serde_json::from_str(&body).context("the server's answer is not JSON")?]
        };
        for answer in answers {
            if message["method"] == "initialize"
                && let Some(version) = answer["result"]["protocolVersion"].as_str()
            {
                *self.protocol_version.write().await = Some(version.to_owned());
            }
            self.write(&answer).await?;
        }
        Ok(())
    }

    /// Answers a request the relay could not deliver with a JSON-RPC
    /// error; a notification has no one to answer, so it is logged.
    async fn fail(&self, message: &Value, reason: String, data: Value) -> anyhow::Result<()> {
        let Some(id) = message.get("id") else {
            eprintln!("octopus mcp: {reason}");
            return Ok(());
        };
        let mut error = json!({"code": -32603, "message": reason});
        if !data.is_null() {
            error["data"] = data;
        }
        self.write(&json!({"jsonrpc": "2.0", "id": id, "error": error}))
            .await
    }

    /// One message, one line.
    async fn write(&self, message: &Value) -> anyhow::Result<()> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        let mut stdout = self.stdout.lock().await;
        if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
            bail!("stdout is closed");
        }
        Ok(())
    }
}
