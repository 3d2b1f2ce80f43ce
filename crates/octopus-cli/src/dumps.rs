//! `octopus export` and the dump form of `octopus import`.

use std::io::Write;

use anyhow::{Context, bail};
use serde_json::Value;

use octopus_client::Client;
use octopus_client::operations as op;

use crate::cli::ExportArgs;

/// Writes the dump to standard output as it arrives, and fails when it ends
/// without its `end` record (the server stopped midway).
pub async fn export(args: ExportArgs) -> anyhow::Result<()> {
    let client = args.remote.client();
    let call = match &args.tenant {
        Some(tenant) => client.call(op::EXPORT_TENANT_DUMP).param(tenant),
        None => client.call(op::EXPORT_DUMP),
    };
    let mut response = call.query_opt("user_id", args.user).open().await?;
    let mut stdout = std::io::stdout().lock();
    // The end of the dump so far: enough to hold its last (short) record.
    let mut tail = Vec::new();
    while let Some(chunk) = response.chunk().await.context("read the dump")? {
        stdout.write_all(&chunk).context("write the dump")?;
        tail.extend_from_slice(&chunk);
        if tail.len() > TAIL_BYTES {
            tail.drain(..tail.len() - TAIL_BYTES);
        }
    }
    stdout.flush().context("write the dump")?;
    let last_line = tail
        .split(|b| *b == b'\n')
        .rfind(|line| !line.iter().all(u8::is_ascii_whitespace))
        .unwrap_or_default();
    let ended =
        serde_json::from_slice::<Value>(last_line).is_ok_and(|record| record["type"] == "end");
    if !ended {
        bail!("the dump ended without its end record: the server stopped midway (see its log)");
    }
    Ok(())
}

const TAIL_BYTES: usize = 4096;

/// Whether `text` is a dump: its first line is a dump's header.
pub fn is_dump(text: &str) -> bool {
    text.lines()
        .find(|line| !line.trim().is_empty())
        .and_then(|line| serde_json::from_str::<Value>(line).ok())
        .is_some_and(|first| first["type"] == "header" && first["format"] == "octopus-dump")
}

/// Sends a dump to the server, which imports it whole or not at all. An
/// agent renamed because the tenant has one of its name is said on standard
/// error, where a person sees it.
pub async fn import(client: &Client, dump: Vec<u8>) -> anyhow::Result<Value> {
    let imported = client
        .call(op::IMPORT_DUMP)
        .bytes("application/x-ndjson", dump)
        .send()
        .await?;
    if let Some(renamed) = imported["new_ids"]["agent_names"].as_object() {
        for (old, new) in renamed {
            eprintln!(
                "note: the agent {old:?} came in as {:?}: the tenant has an agent named {old:?} \
                 (to keep the names, import into a tenant made with `octopus init --no-agent`)",
                new.as_str().unwrap_or_default()
            );
        }
    }
    Ok(imported)
}
