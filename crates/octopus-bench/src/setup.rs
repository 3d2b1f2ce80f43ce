//! What several benches set up the same way: an agent, plain text messages,
//! and a server on loopback.

use chrono::{DateTime, Utc};
use octopus_core::agent::Agent;
use octopus_core::message::{MessageContent, Role};
use octopus_core::store::MessageRecord;
use octopus_core::{MessageId, TenantId};
use octopus_engine::Octopus;
use serde_json::json;

/// An agent named `name` with default memory settings.
pub async fn agent(octopus: &Octopus, tenant: TenantId, name: &str) -> anyhow::Result<Agent> {
    let spec = serde_json::from_value(
        json!({"name": name, "llm": {"provider": "openai", "model": "gpt-4o"}}),
    )?;
    Ok(octopus.create_agent(tenant, spec).await?)
}

/// A plain text message at `at`, with the usual 4-bytes-per-token estimate.
pub fn text_message(text: String, role: Role, at: DateTime<Utc>) -> MessageRecord {
    MessageRecord {
        id: MessageId::new(),
        role,
        token_count: u32::try_from(text.len() / 4).unwrap_or(u32::MAX),
        content: Some(MessageContent::Text(text)),
        name: None,
        tool_call_id: None,
        tool_calls: Vec::new(),
        timestamp: at,
        agent_id: None,
        contains_pii: false,
        redacted_content: None,
        accounting: Default::default(),
    }
}

/// A SQLite store in `dir` with its vectors in this process, as
/// `octopus serve` opens it by default.
pub fn sqlite_store(dir: &std::path::Path) -> anyhow::Result<octopus_sqlite::SqliteStore> {
    let vectors = std::sync::Arc::new(octopus_vector::EmbeddedVectors::new(
        dir.join("vectors"),
        octopus_vector::DEFAULT_HNSW_THRESHOLD,
    ));
    Ok(octopus_sqlite::SqliteStore::open(
        octopus_sqlite::SqliteOptions::new(dir),
        vectors,
    )?)
}

/// Serves the API over `octopus` on a free loopback port, for as long as the
/// process runs; its base URL.
pub async fn serve_on_loopback(octopus: Octopus) -> anyhow::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move {
        octopus_server::serve(
            listener,
            octopus,
            &Default::default(),
            std::future::pending(),
        )
        .await
    });
    Ok(url)
}
