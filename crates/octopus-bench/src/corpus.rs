//! Benchmark corpora: the turns of the LoCoMo conversations, and
//! sentences and READMEs from the documentation of the workspace's dependencies.

use std::path::Path;

use anyhow::{Context, ensure};

/// Chat turns, in conversation order.
pub fn chat_turns(data_dir: &Path) -> anyhow::Result<Vec<String>> {
    Ok(crate::locomo::load(data_dir)?
        .into_iter()
        .flat_map(|c| c.sessions)
        .flat_map(|s| s.turns)
        .map(|t| t.text)
        .collect())
}

/// Up to `limit` distinct English sentences from the documentation of the crates
/// this workspace builds with: Markdown files and `///` / `//!` comments, in
/// lockfile order. Deterministic for a given `Cargo.lock`, and present on every
/// machine that has built Octopus, so no corpus has to be downloaded.
pub fn doc_sentences(lockfile: &Path, limit: usize) -> anyhow::Result<Vec<String>> {
    let mut sentences = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut keep = |text: &str, sentences: &mut Vec<String>| {
        for sentence in split_sentences(text) {
            if (30..=400).contains(&sentence.len()) && seen.insert(sentence.clone()) {
                sentences.push(sentence);
            }
        }
    };
    for (_, dir) in package_sources(lockfile)? {
        let mut files = Vec::new();
        collect_files(&dir, &mut files);
        files.sort();
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            if file.extension().is_some_and(|x| x == "md") {
                for paragraph in text.split("\n\n") {
                    let first = paragraph.trim_start();
                    if !first.starts_with(['#', '|', '`', '<', '!', '[', '-', '*'])
                        && !paragraph.starts_with("    ")
                    {
                        keep(paragraph, &mut sentences);
                    }
                }
            } else {
                for comment in doc_comments(&text) {
                    keep(&comment, &mut sentences);
                }
            }
            if sentences.len() >= limit {
                sentences.truncate(limit);
                return Ok(sentences);
            }
        }
    }
    Ok(sentences)
}

/// `(name-version, unpacked source folder)` of every registry package in
/// `lockfile` whose source cargo has unpacked on this machine, in lockfile order.
fn package_sources(lockfile: &Path) -> anyhow::Result<Vec<(String, std::path::PathBuf)>> {
    let registry = registry_source_dirs()?;
    let lock = std::fs::read_to_string(lockfile)
        .with_context(|| format!("read {}", lockfile.display()))?;
    Ok(lock_packages(&lock)
        .into_iter()
        .filter_map(|package| {
            let dir = registry
                .iter()
                .map(|r| r.join(&package))
                .find(|d| d.is_dir())?;
            Some((package, dir))
        })
        .collect())
}

fn registry_source_dirs() -> anyhow::Result<Vec<std::path::PathBuf>> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .context("neither CARGO_HOME nor HOME is set")?;
    let src = cargo_home.join("registry/src");
    let mut dirs: Vec<_> = std::fs::read_dir(&src)
        .with_context(|| format!("read {}", src.display()))?
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// `name-version` of every registry package in a `Cargo.lock`.
fn lock_packages(lock: &str) -> Vec<String> {
    let mut packages = Vec::new();
    let mut name = None;
    for line in lock.lines() {
        if let Some(value) = line.strip_prefix("name = ") {
            name = Some(value.trim_matches('"').to_owned());
        } else if let Some(value) = line.strip_prefix("version = ")
            && let Some(name) = name.take()
        {
            packages.push(format!("{name}-{}", value.trim_matches('"')));
        }
    }
    packages
}

fn collect_files(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for path in entries.flatten().map(|e| e.path()) {
        if path.is_dir() {
            collect_files(&path, files);
        } else if path.extension().is_some_and(|x| x == "md" || x == "rs") {
            files.push(path);
        }
    }
}

/// Runs of consecutive `///` or `//!` lines, joined into one paragraph each.
fn doc_comments(source: &str) -> Vec<String> {
    let mut comments = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in source.lines() {
        let line = line.trim();
        match line
            .strip_prefix("///")
            .or_else(|| line.strip_prefix("//!"))
        {
            Some(text) => current.push(text.trim()),
            None if !current.is_empty() => comments.push(std::mem::take(&mut current).join(" ")),
            None => {}
        }
    }
    comments
}

/// Whitespace-normalised sentences: a split after `.`, `!` or `?` and a space.
fn split_sentences(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut sentences = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for word in words {
        current.push(word);
        if word.ends_with(['.', '!', '?']) {
            sentences.push(std::mem::take(&mut current).join(" "));
        }
    }
    if !current.is_empty() {
        sentences.push(current.join(" "));
    }
    sentences
}

/// Up to `limit` README.md files of at least 2 kB from the workspace's registry
/// dependencies, in lockfile order: (name, text).
pub fn readmes(lockfile: &Path, limit: usize) -> anyhow::Result<Vec<(String, String)>> {
    let mut found = Vec::new();
    for (package, dir) in package_sources(lockfile)? {
        let Ok(text) = std::fs::read_to_string(dir.join("README.md")) else {
            continue;
        };
        if text.len() >= 2048 {
            found.push((format!("{package}/README.md"), text));
        }
        if found.len() == limit {
            break;
        }
    }
    ensure!(
        !found.is_empty(),
        "no README.md found for the packages of {}",
        lockfile.display()
    );
    Ok(found)
}
