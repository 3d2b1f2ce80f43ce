//! Evidence recall on the LoCoMo dev split: each conversation imported through
//! the engine's import (one episode per session, at the session's date), its
//! turns embedded by the memory worker with the local model, then every
//! question of categories 1–4 recalled over that conversation's user and agent
//! in the three modes: recall@1/5/10/20 overall and per category, and recall
//! latency including the query's embedding.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use octopus_app::AppConfig;
use octopus_app::settings::{StorageBackend, VectorBackend};
use octopus_core::conversation::{ConversationImport, ImportedSession};
use octopus_core::message::{NewMessage, Role};
use octopus_core::recall::{RecallHit, RecallMode, RecallQuery};
use octopus_core::{AgentId, EpisodeId, TenantId};
use octopus_engine::Octopus;

use crate::locomo::{self, Conversation, category_name, recall_at_depths};
use crate::locomo_cv::{self, Scored};
use crate::setup;

#[derive(clap::Args)]
pub struct Options {
    /// The LoCoMo dev split's folder: one JSON file per conversation.
    #[arg(long, env = "OCTOPUS_LOCOMO_DIR")]
    data: PathBuf,
    /// What each turn is stored as.
    #[arg(long, value_enum, default_value_t = TurnText::Speaker)]
    turn_text: TurnText,
    /// Turns either side of each hit counted with it (they share the k budget).
    #[arg(long, default_value_t = 0)]
    neighbours: u32,
    /// Folder of the local embedding model; the default cache when absent.
    #[arg(long)]
    model_dir: Option<PathBuf>,
    /// The local model's number format: auto, f32, bf16 or int8.
    #[arg(long, default_value = "auto")]
    precision: String,
    /// A PostgreSQL server (`scripts/postgres.sh url`): the run uses a fresh
    /// database of it (full text in tsvector, vectors in pgvector) instead of
    /// SQLite.
    #[arg(long)]
    postgres: Option<String>,
    /// With `--postgres`: vectors searched by an index in this process,
    /// derived from the database's rows, instead of pgvector.
    #[arg(long, requires = "postgres")]
    embedded_vectors: bool,
    /// A Qdrant server's gRPC URL: vectors are searched there (in collections
    /// of a prefix of their own), with SQLite or `--postgres` for the rest.
    #[arg(long, conflicts_with = "embedded_vectors")]
    qdrant: Option<String>,
    /// Also cross-validate recall's weights, leaving one conversation out
    /// at a time (several minutes: every candidate recalls every question).
    #[arg(long)]
    cv: bool,
    /// Of the cross-validation, only the choice of retrieval methods: each
    /// method added to those kept, and kept only if no held-out
    /// conversation loses and one gains.
    #[arg(long, conflicts_with_all = ["cv", "http"])]
    cv_methods: bool,
    /// Go through the HTTP API as a client would instead: a server on
    /// loopback, each conversation imported with
    /// `POST /v1/conversations/import`, each question asked with
    /// `POST /v1/agents/{id}/recall`.
    #[arg(long, conflicts_with_all = ["cv", "postgres"])]
    http: bool,
    /// Recall episode summaries beside turns, as the API does by default (a
    /// summary hit names no turn, so it takes a place in the top k).
    #[arg(long)]
    summaries: bool,
    /// Snippet budgets (`episodic_max_tokens`) to measure the context with,
    /// beside the default.
    #[arg(long, value_delimiter = ',')]
    context_budgets: Vec<u32>,
    /// With `--context-budgets`: the memories recalled per turn
    /// (`episodic_top_k`) to measure each budget with.
    #[arg(long, value_delimiter = ',', requires = "context_budgets")]
    context_top_k: Vec<u32>,
    /// With `--context-budgets`: the turns shown either side of each
    /// recalled turn (`episodic_neighbours`) to measure each budget with.
    #[arg(long, value_delimiter = ',', requires = "context_budgets")]
    context_neighbours: Vec<u32>,
    /// Also answer each question with a model at this OpenAI-compatible
    /// base URL (`https://api.openai.com/v1`), from Octopus's context, the
    /// full history and no memory, and have `--judge-model` judge each
    /// answer. Keys: `OCTOPUS_BENCH_ANSWER_KEY` and `OCTOPUS_BENCH_JUDGE_KEY`,
    /// else `OPENAI_API_KEY`.
    #[arg(long, requires = "judge_model", conflicts_with = "http")]
    answer_model: Option<String>,
    /// The model to ask at `--answer-model`.
    #[arg(long, default_value = "gpt-4o-mini")]
    answer_model_name: String,
    /// The judge's OpenAI-compatible base URL.
    #[arg(long, requires = "answer_model")]
    judge_model: Option<String>,
    /// The model to ask at `--judge-model` (the published J figures use gpt-4o-mini).
    #[arg(long, default_value = "gpt-4o-mini")]
    judge_model_name: String,
    /// Recall with sub-questions (`[recall] sub_questions`): each agent's
    /// model is the one named by `--sub-questions-model-name` at this
    /// OpenAI-compatible base URL, which splits each question. Key:
    /// `OPENAI_API_KEY`.
    #[arg(long, conflicts_with = "http")]
    sub_questions_model: Option<String>,
    /// The model to ask at `--sub-questions-model`.
    #[arg(long, default_value = "gpt-4o-mini")]
    sub_questions_model_name: String,
    /// With `--answer-model`: only the first N questions of each conversation.
    #[arg(long)]
    questions_per_conversation: Option<usize>,
    /// Leave the named speaker's turns where they rank (`[recall]
    /// speaker_first = false`), to measure what putting them first earns.
    #[arg(long)]
    no_speaker_first: bool,
    /// Put the turns said on the days or months a question names first
    /// (`[recall] date_first`), or not; the configuration's default when
    /// absent.
    #[arg(long)]
    date_first: Option<bool>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum TurnText {
    /// The words said, and an image caption when an image was shared.
    Plain,
    /// `Speaker: words`.
    Speaker,
    /// `[8 May 2023] Speaker: words`: the session's date in the turn.
    Dated,
}

fn stored_text(turn: &locomo::Turn, date: &str, format: TurnText) -> String {
    let said = match &turn.image_caption {
        Some(caption) => format!("{} [shared an image: {caption}]", turn.text),
        None => turn.text.clone(),
    };
    match format {
        TurnText::Plain => said,
        TurnText::Speaker => format!("{}: {said}", turn.speaker),
        TurnText::Dated => format!("[{date}] {}: {said}", turn.speaker),
    }
}

const MODES: [(RecallMode, &str); 3] = [
    (RecallMode::Keyword, "keyword"),
    (RecallMode::Vector, "vector"),
    (RecallMode::Hybrid, "hybrid"),
];

/// Per category: questions with evidence, and summed recall at each depth.
type Sums = HashMap<u8, (usize, [f64; 4])>;

pub fn run(options: Options) -> anyhow::Result<()> {
    let conversations = locomo::load(&options.data)?;
    let names: Vec<&str> = conversations.iter().map(|c| c.id.as_str()).collect();
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let dir = tempfile::tempdir()?;
        // No model to call: summaries are extractive, facts are not made.
        let mut config =
            crate::setup::local_model_config(dir.path(), options.model_dir.clone(), &options.precision)?;
        config.engine.recall.speaker_first = !options.no_speaker_first;
        if let Some(date_first) = options.date_first {
            config.engine.recall.date_first = date_first;
        }
        if let Some(url) = &options.sub_questions_model {
            config.engine.recall.sub_questions = true;
            // The operator vouches for it: the server's key may go there.
            config.engine.llm.allowed_base_urls.push(url.clone());
        }
        if let Some(url) = &options.qdrant {
            config.vectors.backend = Some(VectorBackend::Qdrant);
            config.vectors.qdrant.url = url.clone();
            config.vectors.qdrant.collection_prefix =
                format!("locomo{}_", uuid::Uuid::now_v7().simple());
        }
        if options.http {
            return run_over_http(&conversations, config, &options, &names).await;
        }
        // Every latency includes the question's embedding: no query vector
        // is reused between modes.
        config.engine.embedding.set_query_cache_entries(0);
        if let Some(server) = &options.postgres {
            config.storage.backend = StorageBackend::Postgres;
            config.storage.postgres.url = octopus_postgres::testing::fresh_database_on(server).await;
            if options.embedded_vectors {
                config.vectors.backend = Some(VectorBackend::Embedded);
            }
        }
        println!(
            "storage: {}",
            match (&options.postgres, options.embedded_vectors, &options.qdrant) {
                (None, _, None) => "SQLite (FTS5 + embedded index)",
                (None, _, Some(_)) => "SQLite (FTS5) + Qdrant",
                (Some(_), _, Some(_)) => "PostgreSQL (tsvector) + Qdrant",
                (Some(_), false, None) => "PostgreSQL (tsvector + pgvector)",
                (Some(_), true, None) => "PostgreSQL (tsvector) + embedded index",
            }
        );
        let octopus = octopus_app::connect(&config).await?;
        let tenant = octopus.create_tenant("locomo").await?;

        let started = Instant::now();
        let mut imported = Vec::new();
        for conversation in &conversations {
            imported.push(import(&octopus, tenant.id, conversation, options.turn_text).await?);
        }
        let import_secs = started.elapsed().as_secs_f64();
        if let Some(url) = &options.sub_questions_model {
            let llm = serde_json::json!({"llm": {
                "provider": "openai", "model": options.sub_questions_model_name, "base_url": url,
            }});
            for scope in &imported {
                octopus.update_agent(tenant.id, scope.agent, &llm).await?;
            }
            println!("sub-questions by {} at {url}", options.sub_questions_model_name);
        }
        let started = Instant::now();
        let jobs = octopus.run_memory_jobs().await?;
        let embed_secs = started.elapsed().as_secs_f64();

        let mut sums: Vec<Sums> = vec![Sums::new(); MODES.len()];
        let mut latencies: Vec<Vec<f64>> = vec![Vec::new(); MODES.len()];
        for (m, (mode, _)) in MODES.iter().enumerate() {
            let (scored, times) = evaluate(
                &octopus, tenant.id, &conversations, &imported, *mode, options.neighbours, options.summaries,
            )
            .await?;
            sums[m] = sums_of(&scored);
            latencies[m] = times;
        }
        println!(
            "{} conversations, {} turns; import {import_secs:.1} s, {jobs} memory jobs (embeddings and summaries) {embed_secs:.1} s",
            conversations.len(),
            conversations.iter().flat_map(|c| &c.sessions).map(|s| s.turns.len()).sum::<usize>(),
        );
        println!(
            "turn text: {}; neighbours per hit: {}\n",
            match options.turn_text {
                TurnText::Plain => "`words [shared an image: caption]`",
                TurnText::Speaker => "`Speaker: words [shared an image: caption]`",
                TurnText::Dated => "`[date] Speaker: words [shared an image: caption]`",
            },
            options.neighbours
        );
        println!("| mode | category | questions | R@1 | R@5 | R@10 | R@20 |\n|---|---|---|---|---|---|---|");
        for ((_, name), sums) in MODES.iter().zip(&sums) {
            print_rows(name, sums);
        }
        println!();
        for ((_, name), latencies) in MODES.iter().zip(latencies) {
            print_latency(&format!("{name} recall"), latencies, "the question's embedding included");
        }
        let format = options.turn_text;
        let default = octopus_core::agent::MemoryConfig::default();
        let mut budgets = vec![None];
        let top_ks = match options.context_top_k.is_empty() {
            true => vec![default.episodic_top_k],
            false => options.context_top_k.clone(),
        };
        let neighbours = match options.context_neighbours.is_empty() {
            true => vec![default.episodic_neighbours],
            false => options.context_neighbours.clone(),
        };
        for tokens in &options.context_budgets {
            for top_k in &top_ks {
                budgets.extend(neighbours.iter().map(|n| Some((*tokens, *top_k, *n))));
            }
        }
        for budget in budgets {
            let scores = contexts(&octopus, tenant.id, &conversations, &imported, budget, |turn, date| {
                stored_text(turn, date, format)
            })
            .await?;
            let how = match budget {
                None => "default agent settings".to_owned(),
                Some((tokens, top_k, neighbours)) => format!(
                    "episodic_max_tokens {tokens}, episodic_top_k {top_k}, episodic_neighbours {neighbours}"
                ),
            };
            crate::locomo_context::print(&scores, &how, &names);
        }
        if options.cv {
            cross_validate(&octopus, tenant.id, &conversations, &imported, options.neighbours, options.summaries).await?;
        }
        if options.cv || options.cv_methods {
            select_methods(&octopus, tenant.id, &conversations, &imported, options.neighbours, options.summaries).await?;
        }
        if let (Some(answer_url), Some(judge_url)) = (&options.answer_model, &options.judge_model) {
            let key = |variable: &str| std::env::var(variable).or_else(|_| std::env::var("OPENAI_API_KEY")).ok();
            let answer = crate::locomo_answers::Endpoint {
                base_url: answer_url.clone(),
                model: options.answer_model_name.clone(),
                key: key("OCTOPUS_BENCH_ANSWER_KEY"),
            };
            let judge = crate::locomo_answers::Endpoint {
                base_url: judge_url.clone(),
                model: options.judge_model_name.clone(),
                key: key("OCTOPUS_BENCH_JUDGE_KEY"),
            };
            let agents: Vec<AgentId> = imported.iter().map(|i| i.agent).collect();
            crate::locomo_answers::run(
                &octopus, tenant.id, &conversations, &agents, &answer, &judge, options.questions_per_conversation,
            )
            .await?;
        }
        anyhow::Ok(())
    })
}

/// Every question's context in a fresh conversation of its user with the
/// conversation's agent, with the agent's snippet budget, memories recalled
/// per turn and neighbours per memory set to `budget` (their defaults when
/// `None`).
async fn contexts(
    engine: &Octopus,
    tenant: TenantId,
    conversations: &[Conversation],
    imported: &[Imported],
    budget: Option<(u32, u32, u32)>,
    text_of: impl Fn(&locomo::Turn, &str) -> String,
) -> anyhow::Result<Vec<crate::locomo_context::ContextScore>> {
    use octopus_core::working_memory::Block;
    let mut scores = Vec::new();
    for (c, (conversation, scope)) in conversations.iter().zip(imported).enumerate() {
        let default = octopus_core::agent::MemoryConfig::default();
        let (tokens, top_k, neighbours) = budget.unwrap_or((
            default.episodic_max_tokens,
            default.episodic_top_k,
            default.episodic_neighbours,
        ));
        let patch = serde_json::json!({"memory": {
            "episodic_max_tokens": tokens, "episodic_top_k": top_k, "episodic_neighbours": neighbours,
        }});
        engine.update_agent(tenant, scope.agent, &patch).await?;
        let spec = serde_json::from_value(serde_json::json!({
            "agent_id": scope.agent, "user_id": conversation.speaker_a,
        }))?;
        let fresh = engine.create_conversation(tenant, spec).await?;
        let texts = crate::locomo_context::turn_texts(conversation, &text_of);
        for question in conversation
            .questions
            .iter()
            .filter(|q| (1..=4).contains(&q.category))
        {
            let context = engine
                .build_context(tenant, fresh.id, &question.question)
                .await?;
            let contents: Vec<&str> = context
                .messages
                .iter()
                .map(|m| m.content.as_str())
                .collect();
            let episodic = context
                .trace
                .blocks
                .iter()
                .find(|b| b.block == Block::Episodic)
                .map_or(0, |b| b.tokens);
            scores.extend(crate::locomo_context::score(
                c,
                question,
                &texts,
                &contents,
                context.trace.total_tokens,
                episodic,
            ));
        }
    }
    Ok(scores)
}

/// The bench through the HTTP API. The server keeps its default cache of
/// query vectors, so the passes are ordered to say what each pays: hybrid
/// first, each question new to the server and embedded; hybrid again, each
/// question repeated; hybrid again with each hit explained; then vector and
/// keyword, whose recall the table shows
/// (vector's embeddings found in the cache, keyword's needing none); then
/// the context, whose question is cached too.
async fn run_over_http(
    conversations: &[Conversation],
    config: AppConfig,
    options: &Options,
    names: &[&str],
) -> anyhow::Result<()> {
    let format = options.turn_text;
    let passes = ["hybrid", "hybrid", "hybrid+explain", "vector", "keyword"];
    let (results, contexts) = crate::locomo_http::run(
        conversations,
        config,
        |turn, date| stored_text(turn, date, format),
        &passes,
        options.summaries,
    )
    .await?;
    println!(
        "\n| mode | category | questions | R@1 | R@5 | R@10 | R@20 |\n|---|---|---|---|---|---|---|"
    );
    for (_, name) in MODES {
        if let Some(at) = passes.iter().position(|pass| *pass == name) {
            print_rows(name, &sums_of(&results[at].scored));
        }
    }
    println!();
    let [new, repeated, explained, vector, keyword] =
        <[_; 5]>::try_from(results).map_err(|_| anyhow::anyhow!("one result per pass"))?;
    let request = |what: &str| format!("{what} HTTP request");
    print_latency(
        &request("hybrid"),
        new.latencies,
        "a question not asked before: embedded",
    );
    print_latency(
        &request("hybrid"),
        repeated.latencies,
        "the same question again: its embedding cached",
    );
    print_latency(
        &request("hybrid"),
        explained.latencies,
        "explain: true, each hit explained; its embedding cached",
    );
    print_latency(&request("vector"), vector.latencies, "its embedding cached");
    print_latency(&request("keyword"), keyword.latencies, "no embedding");
    crate::locomo_context::print(&contexts.scores, "over HTTP, default agent settings", names);
    print_latency(
        &request("context"),
        contexts.latencies,
        "the question's embedding cached",
    );
    Ok(())
}

/// One row of latencies: `what` and its percentiles, `note` in brackets.
pub(crate) fn print_latency(what: &str, mut latencies: Vec<f64>, note: &str) {
    if latencies.is_empty() {
        return;
    }
    latencies.sort_by(f64::total_cmp);
    let percentile =
        |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    println!(
        "{what} latency ({note}): p50 {:.2} ms, p95 {:.2} ms",
        percentile(0.50),
        percentile(0.95)
    );
}

/// Every question of categories 1–4, recalled with `engine`'s weights in
/// `mode` over its conversation's user and agent; each question's evidence
/// recall, and each recall's latency (the question's embedding included).
async fn evaluate(
    engine: &Octopus,
    tenant: TenantId,
    conversations: &[Conversation],
    imported: &[Imported],
    mode: RecallMode,
    neighbours: u32,
    summaries: bool,
) -> anyhow::Result<(Vec<Scored>, Vec<f64>)> {
    let mut scored = Vec::new();
    let mut latencies = Vec::new();
    for (c, (conversation, scope)) in conversations.iter().zip(imported).enumerate() {
        for question in conversation
            .questions
            .iter()
            .filter(|q| (1..=4).contains(&q.category))
        {
            let mut query =
                RecallQuery::new(conversation.speaker_a.clone(), question.question.clone());
            query.mode = mode;
            query.top_k = 20;
            query.neighbours = neighbours;
            query.include_summaries = summaries;
            let started = Instant::now();
            let hits = engine.recall(tenant, scope.agent, &query).await?;
            latencies.push(started.elapsed().as_secs_f64() * 1e3);
            let retrieved = scope.turns(&hits);
            if let Some(recall) = recall_at_depths(&question.evidence, &retrieved) {
                scored.push(Scored {
                    conversation: c,
                    category: question.category,
                    recall,
                });
            }
        }
    }
    Ok((scored, latencies))
}

fn sums_of(scored: &[Scored]) -> Sums {
    let mut sums = Sums::new();
    for s in scored {
        let entry = sums.entry(s.category).or_default();
        entry.0 += 1;
        for d in 0..4 {
            entry.1[d] += s.recall[d];
        }
    }
    sums
}

/// Leave-one-conversation-out: each mode's weights chosen on two
/// conversations and scored on the third (see `locomo_cv`).
async fn cross_validate(
    octopus: &Octopus,
    tenant: TenantId,
    conversations: &[Conversation],
    imported: &[Imported],
    neighbours: u32,
    summaries: bool,
) -> anyhow::Result<()> {
    println!("\n## Leave one conversation out\n");
    println!(
        "Each mode's weights (fusion, vector share, neighbour share, episode share, diversity, speaker first, date first) \
         are chosen on two conversations by mean R@10 over their questions, among {} candidates \
         for hybrid and {} for keyword and vector, and scored on the third.\n",
        locomo_cv::candidates(RecallMode::Hybrid).len(),
        locomo_cv::candidates(RecallMode::Keyword).len()
    );
    // Each question is embedded once for all candidates.
    let octopus = octopus.clone().with_query_cache(8192);
    let mut by_mode = Vec::new();
    let mut hybrid_runs = None;
    for (mode, name) in MODES {
        let candidates = locomo_cv::candidates(mode);
        let mut results = Vec::with_capacity(candidates.len());
        for weights in &candidates {
            let engine = octopus.clone().with_recall_weights(*weights);
            results.push(
                evaluate(
                    &engine,
                    tenant,
                    conversations,
                    imported,
                    mode,
                    neighbours,
                    summaries,
                )
                .await?
                .0,
            );
        }
        by_mode.push((
            name,
            locomo_cv::folds(&candidates, &results, conversations.len()),
        ));
        if mode == RecallMode::Hybrid {
            hybrid_runs = Some((candidates, results));
        }
    }
    println!(
        "| held out | questions | mode | chosen (fusion, vector, neighbour, episode, diversity, speaker first, date first) | R@5 | R@10 | R@20 |\n|---|---|---|---|---|---|---|"
    );
    for c in 0..conversations.len() {
        for (name, folds) in &by_mode {
            let fold = &folds[c];
            let w = fold.chosen;
            println!(
                "| {} | {} | {name} | {:?}, {:.2}, {:.2}, {:.2}, {:.2}, {}, {} | {:.3} | {:.3} | {:.3} |",
                conversations[c].id,
                fold.scored.len(),
                w.fusion,
                w.vector,
                w.neighbour,
                w.episode,
                w.diversity,
                w.speaker_first,
                w.date_first,
                fold.recall[1],
                fold.recall[2],
                fold.recall[3]
            );
        }
    }
    println!("\n| mode | R@10 mean | std | min | max |\n|---|---|---|---|---|");
    for (name, folds) in &by_mode {
        let (mean, std, min, max) =
            locomo_cv::spread(&folds.iter().map(|f| f.recall[2]).collect::<Vec<_>>());
        println!("| {name} | {mean:.3} | {std:.3} | {min:.3} | {max:.3} |");
    }
    let fold_r10 = |name: &str| -> Vec<f64> {
        by_mode
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| f.iter().map(|f| f.recall[2]).collect())
            .unwrap_or_default()
    };
    let gaps: Vec<String> = fold_r10("hybrid")
        .iter()
        .zip(fold_r10("keyword"))
        .map(|(h, k)| format!("{:+.3}", h - k))
        .collect();
    println!("\nhybrid − keyword R@10 per fold: {}", gaps.join(", "));
    if let Some((candidates, results)) = &hybrid_runs {
        compare_methods(
            candidates,
            results,
            conversations.len(),
            &fold_r10("keyword"),
        );
    }
    println!(
        "\n| mode | category | held-out questions | R@5 | R@10 | R@20 |\n|---|---|---|---|---|---|"
    );
    for (name, folds) in &by_mode {
        for (category, (n, recall)) in locomo_cv::per_category(folds) {
            println!(
                "| {name} | {} | {n} | {:.3} | {:.3} | {:.3} |",
                category_name(category),
                recall[1],
                recall[2],
                recall[3]
            );
        }
    }
    Ok(())
}

/// Forward selection of the retrieval methods under leave-one-conversation-
/// out: each method in turn is added to those kept so far, the other
/// weights chosen per fold among [`locomo_cv::method_grid`], and it is kept
/// only if no held-out conversation's R@10 falls and one rises.
async fn select_methods(
    octopus: &Octopus,
    tenant: TenantId,
    conversations: &[Conversation],
    imported: &[Imported],
    neighbours: u32,
    summaries: bool,
) -> anyhow::Result<()> {
    let octopus = octopus.clone().with_query_cache(8192);
    let run = |methods: Vec<&'static locomo_cv::Method>| {
        let octopus = octopus.clone();
        async move {
            let grid = locomo_cv::method_grid(&methods);
            let mut results = Vec::with_capacity(grid.len());
            for weights in &grid {
                let engine = octopus.clone().with_recall_weights(*weights);
                let (scored, _) = evaluate(
                    &engine,
                    tenant,
                    conversations,
                    imported,
                    RecallMode::Hybrid,
                    neighbours,
                    summaries,
                )
                .await?;
                results.push(scored);
            }
            anyhow::Ok(locomo_cv::folds(&grid, &results, conversations.len()))
        }
    };
    let held_out: Vec<&str> = conversations.iter().map(|c| c.id.as_str()).collect();
    println!(
        "\n## Retrieval methods, each added to those kept\n\nHybrid R@10 of each held-out conversation ({}), \
         the other weights chosen per fold among {} candidates; a method is kept only if no fold loses and one gains.\n",
        held_out.join(", "),
        locomo_cv::method_grid(&[]).len()
    );
    println!(
        "| method | before, per fold | after, per fold | mean before → after | R@10 change by category (multi-hop, temporal, open-domain, single-hop) | kept |\n|---|---|---|---|---|---|"
    );
    let mut kept: Vec<&'static locomo_cv::Method> = Vec::new();
    let mut before = run(kept.clone()).await?;
    for method in &locomo_cv::METHODS {
        let mut trial = kept.clone();
        trial.push(method);
        let after = run(trial.clone()).await?;
        let keep = locomo_cv::kept(&before, &after);
        let r10 =
            |folds: &[locomo_cv::Fold]| -> Vec<f64> { folds.iter().map(|f| f.recall[2]).collect() };
        let show = |values: &[f64]| {
            values
                .iter()
                .map(|v| format!("{v:.3}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let by_category = |folds: &[locomo_cv::Fold]| locomo_cv::per_category(folds);
        let (was, now) = (by_category(&before), by_category(&after));
        let change: Vec<String> = now
            .iter()
            .map(|(category, (_, recall))| {
                let old = was.get(category).map_or(0.0, |(_, r)| r[2]);
                format!("{:+.3}", recall[2] - old)
            })
            .collect();
        let (mean_before, ..) = locomo_cv::spread(&r10(&before));
        let (mean_after, ..) = locomo_cv::spread(&r10(&after));
        println!(
            "| {} | {} | {} | {mean_before:.3} → {mean_after:.3} | {} | {} |",
            method.name,
            show(&r10(&before)),
            show(&r10(&after)),
            change.join(", "),
            if keep { "yes" } else { "no" }
        );
        if keep {
            kept = trial;
            before = after;
        }
    }
    Ok(())
}

/// Each way of fusing, diversity off or on, and the named speaker and the
/// named dates first or not, cross-validated on its own:
/// the choice of the other weights is made among the candidates using it
/// only, so each row says what that method earns on held-out conversations.
fn compare_methods(
    candidates: &[octopus_core::recall_ranking::RankingWeights],
    results: &[Vec<Scored>],
    conversations: usize,
    keyword: &[f64],
) {
    use octopus_core::fusion::Fusion;
    type Rule = Box<dyn Fn(&octopus_core::recall_ranking::RankingWeights) -> bool>;
    let methods: [(&str, Rule); 8] = [
        ("score fusion", Box::new(|w| w.fusion == Fusion::Scores)),
        (
            "standardised fusion",
            Box::new(|w| w.fusion == Fusion::Standardised),
        ),
        (
            "weighted rank fusion",
            Box::new(|w| w.fusion == Fusion::Ranks),
        ),
        ("no diversity", Box::new(|w| w.diversity == 0.0)),
        ("diversity 0.15", Box::new(|w| w.diversity > 0.0)),
        ("speaker first off", Box::new(|w| !w.speaker_first)),
        (
            "speaker first on",
            Box::new(|w| w.speaker_first && !w.date_first),
        ),
        ("speaker and date first on", Box::new(|w| w.date_first)),
    ];
    println!(
        "\n| hybrid, method held fixed | R@10 per fold | mean ± std | − keyword per fold | R@10 by category (multi-hop, temporal, open-domain, single-hop) | chosen per fold (vector, neighbour, episode) |\n|---|---|---|---|---|---|"
    );
    for (name, rule) in methods {
        let (kept, kept_results): (Vec<_>, Vec<_>) = candidates
            .iter()
            .zip(results)
            .filter(|(w, _)| rule(w))
            .map(|(w, r)| (*w, r.clone()))
            .unzip();
        let folds = locomo_cv::folds(&kept, &kept_results, conversations);
        let per_fold: Vec<f64> = folds.iter().map(|f| f.recall[2]).collect();
        let by_category: Vec<String> = locomo_cv::per_category(&folds)
            .values()
            .map(|(_, recall)| format!("{:.3}", recall[2]))
            .collect();
        let (mean, std, _, _) = locomo_cv::spread(&per_fold);
        let show = |values: Vec<String>| values.join(", ");
        let chosen: Vec<String> = folds
            .iter()
            .map(|f| {
                let w = f.chosen;
                format!("{:.2}/{:.2}/{:.2}", w.vector, w.neighbour, w.episode)
            })
            .collect();
        println!(
            "| {name} | {} | {mean:.3} ± {std:.3} | {} | {} | {} |",
            show(per_fold.iter().map(|r| format!("{r:.3}")).collect()),
            show(
                per_fold
                    .iter()
                    .zip(keyword)
                    .map(|(h, k)| format!("{:+.3}", h - k))
                    .collect()
            ),
            show(by_category),
            show(chosen),
        );
    }
}

fn print_rows(mode: &str, sums: &Sums) {
    let all = sums.values().fold((0, [0.0; 4]), |mut acc, (n, r)| {
        acc.0 += n;
        (0..4).for_each(|i| acc.1[i] += r[i]);
        acc
    });
    let row = |name: &str, (n, r): (usize, [f64; 4])| {
        let n = n.max(1) as f64;
        println!(
            "| {mode} | {name} | {n} | {:.3} | {:.3} | {:.3} | {:.3} |",
            r[0] / n,
            r[1] / n,
            r[2] / n,
            r[3] / n
        );
    };
    row("all", all);
    let mut categories: Vec<_> = sums.keys().copied().collect();
    categories.sort();
    for category in categories {
        row(category_name(category), sums[&category]);
    }
}

/// Where one conversation went, and how to name its turns.
struct Imported {
    agent: AgentId,
    /// Dialogue ids by episode (session) and ordinal (turn).
    dia_ids: HashMap<(EpisodeId, u32), String>,
}

impl Imported {
    /// The dialogue ids of the hits in rank order, each followed by its
    /// neighbouring turns, without repeats.
    fn turns(&self, hits: &[RecallHit]) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        let mut turns = Vec::new();
        for window in hits.iter().filter_map(|h| h.window.as_ref()) {
            let around = std::iter::once(&window.message)
                .chain(window.before.iter().rev())
                .chain(&window.after);
            for message in around {
                if let Some(id) = self.dia_ids.get(&(message.episode_id, message.ordinal))
                    && seen.insert(id.clone())
                {
                    turns.push(id.clone());
                }
            }
        }
        turns
    }
}

/// Imports one conversation: `speaker_a` is the user, `speaker_b` the agent's
/// side, each session at its date, a second per turn.
async fn import(
    octopus: &Octopus,
    tenant: TenantId,
    conversation: &Conversation,
    format: TurnText,
) -> anyhow::Result<Imported> {
    let agent = setup::agent(octopus, tenant, &format!("locomo-{}", conversation.id)).await?;
    let sessions = conversation
        .sessions
        .iter()
        .map(|session| {
            let date = session.at.format("%-d %B %Y").to_string();
            let messages = session
                .turns
                .iter()
                .enumerate()
                .map(|(i, turn)| {
                    let role = if turn.speaker == conversation.speaker_a {
                        Role::User
                    } else {
                        Role::Assistant
                    };
                    NewMessage {
                        timestamp: Some(session.at + chrono::Duration::seconds(i as i64)),
                        ..NewMessage::text(role, stored_text(turn, &date, format))
                    }
                })
                .collect();
            ImportedSession { messages }
        })
        .collect();
    let report = octopus
        .import_conversation(
            tenant,
            ConversationImport {
                agent_id: agent.id,
                user_id: conversation.speaker_a.clone(),
                title: Some(format!("LoCoMo {}", conversation.id)),
                metadata: Default::default(),
                sessions,
            },
        )
        .await?;
    let mut dia_ids = HashMap::new();
    for (episode, session) in report.episodes.iter().zip(&conversation.sessions) {
        for (ordinal, turn) in session.turns.iter().enumerate() {
            dia_ids.insert((*episode, ordinal as u32), turn.dia_id.clone());
        }
    }
    Ok(Imported {
        agent: agent.id,
        dia_ids,
    })
}
