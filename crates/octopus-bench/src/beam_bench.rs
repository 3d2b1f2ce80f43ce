//! Evidence recall on BEAM's user–assistant chats: each chat imported as
//! one user's history with an agent of its own, its messages embedded by
//! the memory worker with the local model, every question with evidence
//! recalled (top 20, messages only) in keyword, vector and hybrid modes:
//! recall@5/10/20 by ability and by chat size, for knowledge updates the
//! share whose new value ranks above the old, and the evidence in the
//! context a fresh turn is given with the default memory settings.
//!
//! `--select` chooses recall's methods by k-fold over these chats and the
//! LoCoMo dev split's together (see [`crate::selection`]).

use std::path::PathBuf;
use std::time::Instant;

use octopus_core::recall::RecallMode;

use crate::dev_set::{self, AT_10, Chat, Scored};

#[derive(clap::Args)]
pub struct Options {
    /// BEAM's folder: chat folders (each with chat.json and
    /// probing_questions.json), or folders of them (`100K/`, `500K/`).
    #[arg(long, env = "OCTOPUS_BEAM_DIR")]
    data: PathBuf,
    /// Only the first N chats (in path order).
    #[arg(long)]
    chats: Option<usize>,
    /// Folder of the local embedding model; the default cache when absent.
    #[arg(long)]
    model_dir: Option<PathBuf>,
    /// The local model's number format: auto, f32, bf16 or int8.
    #[arg(long, default_value = "auto")]
    precision: String,
    /// Go through the HTTP API as a client would: a server on loopback,
    /// each chat imported with `POST /v1/conversations/import`, each
    /// question asked with `POST /v1/agents/{id}/recall` and as the next
    /// message of a fresh conversation.
    #[arg(long, conflicts_with = "select")]
    http: bool,
    /// Choose recall's methods by k-fold over these chats and LoCoMo's
    /// (`--locomo`) together, and print every fold.
    #[arg(long, requires = "locomo")]
    select: bool,
    /// With `--select`: the LoCoMo dev split's folder.
    #[arg(long, env = "OCTOPUS_LOCOMO_DIR")]
    locomo: Option<PathBuf>,
    /// With `--select`: the number of folds the chats are dealt into.
    #[arg(long, default_value_t = 10)]
    folds: usize,
    /// Keep the store in this folder, and on a later run over the same
    /// chats, recall from it without importing or embedding again.
    #[arg(long, conflicts_with = "http")]
    keep: Option<PathBuf>,
}

const MODES: [(RecallMode, &str); 3] = [
    (RecallMode::Keyword, "keyword"),
    (RecallMode::Vector, "vector"),
    (RecallMode::Hybrid, "hybrid"),
];

pub fn run(options: Options) -> anyhow::Result<()> {
    let mut chats = crate::beam::load(&options.data)?;
    if let Some(n) = options.chats {
        chats.truncate(n);
    }
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let temporary = tempfile::tempdir()?;
        let dir = match &options.keep {
            Some(keep) => {
                std::fs::create_dir_all(keep)?;
                keep.as_path()
            }
            None => temporary.path(),
        };
        // No model to call: summaries are extractive, facts are not made.
        let mut config =
            crate::setup::local_model_config(dir, options.model_dir.clone(), &options.precision)?;
        let messages: usize = chats
            .iter()
            .flat_map(|c| &c.sessions)
            .map(|s| s.lines.len())
            .sum();
        let questions: usize = chats
            .iter()
            .flat_map(|c| &c.questions)
            .filter(|q| !q.evidence.is_empty())
            .count();
        println!(
            "{} chats, {messages} messages, {questions} questions with evidence",
            chats.len()
        );
        if options.http {
            return crate::dev_set_http::run(&chats, config).await;
        }
        if options.select {
            let locomo = options
                .locomo
                .as_deref()
                .unwrap_or(std::path::Path::new("."));
            let mut all: Vec<Chat> = crate::locomo::load(locomo)?
                .iter()
                .map(dev_set::from_locomo)
                .collect();
            all.extend(chats);
            return crate::selection::run(config, &all, options.folds, options.keep.as_deref())
                .await;
        }
        config.engine.embedding.set_query_cache_entries(0);
        let octopus = octopus_app::connect(&config).await?;
        let started = Instant::now();
        let (tenant, imported) =
            dev_set::import_all(&octopus, "beam", &chats, options.keep.as_deref()).await?;
        println!(
            "import and embedding {:.1} s\n",
            started.elapsed().as_secs_f64()
        );
        let mut runs = Vec::new();
        for (mode, name) in MODES {
            let (scored, latencies) =
                dev_set::recall_all(&octopus, tenant, &chats, &imported, mode).await?;
            runs.push((name, scored, latencies));
        }
        println!("{}", dev_set::RECALL_HEADER);
        for (name, scored, _) in &runs {
            dev_set::print_recall(name, scored);
        }
        print_by_size(&chats, &runs);
        println!();
        for (name, _, latencies) in runs {
            crate::locomo_bench::print_latency(
                &format!("{name} recall"),
                latencies,
                "the question's embedding included",
            );
        }
        let contexts = dev_set::contexts(&octopus, tenant, &chats, &imported).await?;
        dev_set::print_contexts("default agent settings", &contexts);
        anyhow::Ok(())
    })
}

/// R@10 of each mode by the chats' size.
pub fn print_by_size(chats: &[Chat], runs: &[(&str, Vec<Scored>, Vec<f64>)]) {
    let size = |chat: usize| chats[chat].group.as_str();
    let sizes = dev_set::abilities(chats.iter().map(|c| c.group.as_str()));
    println!(
        "\n| size | chats | questions | keyword R@10 | vector R@10 | hybrid R@10 |\n|---|---|---|---|---|---|"
    );
    for group in sizes {
        let of = |scored: &[Scored]| {
            dev_set::mean(
                scored
                    .iter()
                    .filter(|s| size(s.chat) == group)
                    .map(|s| s.recall[AT_10]),
            )
        };
        let questions = runs.first().map_or(0, |(_, s, _)| {
            s.iter().filter(|s| size(s.chat) == group).count()
        });
        let chats_of = chats.iter().filter(|c| c.group == group).count();
        let cells: Vec<String> = runs
            .iter()
            .map(|(_, s, _)| format!("{:.3}", of(s)))
            .collect();
        println!(
            "| {group} | {chats_of} | {questions} | {} |",
            cells.join(" | ")
        );
    }
}
