//! Realistic message text: the turns of the LoCoMo conversations in
//! `../shared/data/locomo-dev`.

use std::path::Path;

use anyhow::{Context, ensure};
use serde_json::Value;

/// Chat turns, in conversation order.
pub fn chat_turns(data_dir: &Path) -> anyhow::Result<Vec<String>> {
    let mut paths: Vec<_> = std::fs::read_dir(data_dir)
        .with_context(|| format!("read the corpus folder {}", data_dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    let mut turns = Vec::new();
    for path in paths {
        let text =
            std::fs::read_to_string(&path).with_context(|| format!("read {}", path.display()))?;
        let doc: Value =
            serde_json::from_str(&text).with_context(|| format!("parse {}", path.display()))?;
        // A LoCoMo file is one conversation; some copies nest it under "conversation".
        let conversation = doc.get("conversation").unwrap_or(&doc);
        for session in 1.. {
            let Some(session) = conversation
                .get(format!("session_{session}"))
                .and_then(Value::as_array)
            else {
                break;
            };
            turns.extend(
                session
                    .iter()
                    .filter_map(|turn| turn["text"].as_str().map(str::to_owned)),
            );
        }
    }
    ensure!(
        !turns.is_empty(),
        "no LoCoMo turns found in {}",
        data_dir.display()
    );
    Ok(turns)
}
