//! `octopus ingest`: send files to a server's knowledge endpoint, one document
//! per file, with progress on standard error.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use octopus_client::operations as op;
use serde_json::{Value, json};

use crate::cli::IngestArgs;

const EXTENSIONS: [&str; 3] = ["md", "markdown", "txt"];

pub async fn run(args: IngestArgs) -> anyhow::Result<Value> {
    let mut files = Vec::new();
    for path in &args.paths {
        collect(path, &mut files).with_context(|| format!("read {}", path.display()))?;
    }
    files.sort();
    files.dedup();
    anyhow::ensure!(
        !files.is_empty(),
        "no .md, .markdown or .txt files under the given paths"
    );

    let client = args.remote.client();
    let agent = client.agent_id(&args.agent).await?;
    let mut progress = Progress::new(files.len());
    let (mut chunks, mut tokens) = (0u64, 0u64);
    for file in &files {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("read {}", file.display()))?;
        let mut body = json!({"source": file.to_string_lossy(), "text": text});
        if let Some(category) = &args.category {
            body["category"] = json!(category);
        }
        let report = client
            .call(op::INGEST_DOCUMENT)
            .param(&agent)
            .json(&body)
            .send()
            .await
            .with_context(|| format!("ingest {}", file.display()))?;
        chunks += report["chunks"].as_u64().unwrap_or(0);
        tokens += report["tokens"].as_u64().unwrap_or(0);
        progress.advance(file, report["chunks"].as_u64().unwrap_or(0));
    }
    progress.finish();
    Ok(json!({"files": files.len(), "chunks": chunks, "tokens": tokens}))
}

/// Files to ingest under `path`: itself if a file, else the matching files of
/// the folder, recursively, skipping hidden entries.
fn collect(path: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if path.is_file() {
        files.push(path.to_owned());
        return Ok(());
    }
    for entry in std::fs::read_dir(path)? {
        let entry = entry?.path();
        let hidden = entry
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if hidden {
            continue;
        }
        if entry.is_dir() {
            collect(&entry, files)?;
        } else if entry
            .extension()
            .is_some_and(|e| EXTENSIONS.contains(&e.to_string_lossy().to_lowercase().as_str()))
        {
            files.push(entry);
        }
    }
    Ok(())
}

/// A bar redrawn in place on a terminal; a line per file otherwise.
struct Progress {
    total: usize,
    done: usize,
    terminal: bool,
}

impl Progress {
    fn new(total: usize) -> Self {
        Self {
            total,
            done: 0,
            terminal: std::io::stderr().is_terminal(),
        }
    }

    fn advance(&mut self, file: &Path, chunks: u64) {
        self.done += 1;
        let mut err = std::io::stderr();
        if self.terminal {
            const WIDTH: usize = 30;
            let filled = WIDTH * self.done / self.total;
            let _ = write!(
                err,
                "\r[{}{}] {}/{} {:<50.50}",
                "#".repeat(filled),
                " ".repeat(WIDTH - filled),
                self.done,
                self.total,
                file.display()
            );
            let _ = err.flush();
        } else {
            let _ = writeln!(
                err,
                "[{}/{}] {} ({chunks} chunks)",
                self.done,
                self.total,
                file.display()
            );
        }
    }

    fn finish(&self) {
        if self.terminal {
            let _ = writeln!(std::io::stderr());
        }
    }
}
