//! Procedure matching: quality on the labelled set in
//! `crates/octopus-bench/data/procedure-matching.json` (30 procedures, 150
//! messages written for it), and speed against 10,000 active procedures of
//! one tenant.
//!
//! Quality is precision and recall over (message, procedure) pairs for the
//! trigger patterns alone, meaning alone and both, at each threshold. The
//! default threshold is chosen by cross-validation over procedures: in each
//! of 5 folds, the threshold that maximises F1 on the other folds' messages
//! is scored on the fold's own; the spread over folds is reported.

use std::time::Instant;

use octopus_core::ProcedureId;
use octopus_core::embedding::Embedder;
use octopus_core::procedure::{ProcedureContent, ProcedureStep, ServingProcedure};
use octopus_engine::procedure_matching::{Found, ProcedureMatcher, best};
use serde::Deserialize;

#[derive(clap::Args)]
pub struct Options {
    /// Active procedures of one tenant for the speed measurement.
    #[arg(long, default_value_t = 10_000)]
    procedures: usize,
    /// Procedures a context takes at most (the agents' default).
    #[arg(long, default_value_t = 3)]
    top_k: usize,
}

#[derive(Deserialize)]
struct Labelled {
    procedures: Vec<Spec>,
    messages: Vec<Message>,
}

#[derive(Deserialize, Clone)]
struct Spec {
    name: String,
    description: Option<String>,
    trigger_pattern: Option<String>,
    steps: Vec<ProcedureStep>,
}

#[derive(Deserialize)]
struct Message {
    text: String,
    expected: Vec<String>,
    kind: String,
}

const DATA: &str = include_str!("../data/procedure-matching.json");
const FOLDS: usize = 5;

pub fn run(options: Options) -> anyhow::Result<()> {
    let labelled: Labelled = serde_json::from_str(DATA)?;
    let embedder =
        octopus_embed::local::LocalEmbedder::load(&octopus_embed::model_dir::default_model_dir())?;
    let runtime = tokio::runtime::Runtime::new()?;
    let contents: Vec<ProcedureContent> = labelled
        .procedures
        .iter()
        .map(|p| ProcedureContent {
            name: p.name.clone(),
            description: p.description.clone(),
            trigger_pattern: p.trigger_pattern.clone(),
            steps: p.steps.clone(),
        })
        .collect();
    let texts: Vec<String> = contents
        .iter()
        .map(ProcedureContent::semantic_text)
        .collect();
    let procedure_vectors = runtime.block_on(embedder.embed(&texts))?;
    let message_texts: Vec<String> = labelled.messages.iter().map(|m| m.text.clone()).collect();
    let message_vectors = runtime.block_on(embedder.embed(&message_texts))?;
    let serving: Vec<ServingProcedure> = contents
        .iter()
        .zip(&procedure_vectors)
        .map(|(content, vector)| ServingProcedure {
            id: ProcedureId::new(),
            agent_id: None,
            version: 1,
            content: content.clone(),
            embedding: Some(vector.clone()),
        })
        .collect();
    let matcher = ProcedureMatcher::build(serving.clone());
    quality(&labelled, &matcher, &message_vectors, options.top_k);
    speed(&serving, &labelled, &message_vectors, options.procedures);
    Ok(())
}

/// (message, procedure) pairs: true positives, false positives, false negatives.
#[derive(Default, Clone, Copy)]
struct Counts {
    tp: usize,
    fp: usize,
    fn_: usize,
}

impl Counts {
    fn precision(&self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }
    fn recall(&self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }
    fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Regex,
    Semantic,
    Both,
}

fn predicted(
    matcher: &ProcedureMatcher,
    text: &str,
    vector: &[f32],
    mode: Mode,
    threshold: f64,
    top_k: usize,
) -> Vec<String> {
    let mut found: Vec<Found> = Vec::new();
    if mode != Mode::Semantic {
        found.extend(matcher.by_pattern(text));
    }
    if mode != Mode::Regex {
        found.extend(matcher.by_meaning(vector, threshold));
    }
    best(found, top_k)
        .into_iter()
        .map(|f| matcher.procedures[f.index].content.name.clone())
        .collect()
}

fn count(
    labelled: &Labelled,
    matcher: &ProcedureMatcher,
    vectors: &[Vec<f32>],
    mode: Mode,
    threshold: f64,
    top_k: usize,
    include: &dyn Fn(usize) -> bool,
) -> Counts {
    let mut counts = Counts::default();
    for (i, message) in labelled.messages.iter().enumerate() {
        if !include(i) {
            continue;
        }
        let got = predicted(matcher, &message.text, &vectors[i], mode, threshold, top_k);
        counts.tp += got.iter().filter(|g| message.expected.contains(g)).count();
        counts.fp += got.iter().filter(|g| !message.expected.contains(g)).count();
        counts.fn_ += message.expected.iter().filter(|e| !got.contains(e)).count();
    }
    counts
}

fn quality(labelled: &Labelled, matcher: &ProcedureMatcher, vectors: &[Vec<f32>], top_k: usize) {
    let all = |_: usize| true;
    let thresholds: Vec<f64> = (4..=16).map(|t| f64::from(t) * 0.05).collect();
    println!(
        "{} procedures, {} messages ({} with a keyword, {} paraphrases, {} near misses); top {top_k} per message\n",
        labelled.procedures.len(),
        labelled.messages.len(),
        labelled
            .messages
            .iter()
            .filter(|m| m.kind == "keyword")
            .count(),
        labelled
            .messages
            .iter()
            .filter(|m| m.kind == "paraphrase")
            .count(),
        labelled
            .messages
            .iter()
            .filter(|m| m.kind == "near_miss")
            .count(),
    );
    let regex = count(labelled, matcher, vectors, Mode::Regex, 0.0, top_k, &all);
    println!("| method | threshold | precision | recall | F1 |\n|---|---|---|---|---|");
    println!(
        "| regex | — | {:.3} | {:.3} | {:.3} |",
        regex.precision(),
        regex.recall(),
        regex.f1()
    );
    for &threshold in &thresholds {
        for (name, mode) in [("semantic", Mode::Semantic), ("both", Mode::Both)] {
            let c = count(labelled, matcher, vectors, mode, threshold, top_k, &all);
            println!(
                "| {name} | {threshold:.2} | {:.3} | {:.3} | {:.3} |",
                c.precision(),
                c.recall(),
                c.f1()
            );
        }
    }

    // Cross-validation over procedures: a fold is every sixth procedure and
    // the messages labelled with it (near misses go with their procedure).
    let fold_of = |i: usize| (i / 5) % FOLDS;
    let mut chosen = Vec::new();
    let mut held_out = Vec::new();
    for fold in 0..FOLDS {
        let train = |i: usize| fold_of(i) != fold;
        let test = |i: usize| fold_of(i) == fold;
        let best_threshold = thresholds
            .iter()
            .copied()
            .max_by(|a, b| {
                let fa = count(labelled, matcher, vectors, Mode::Both, *a, top_k, &train).f1();
                let fb = count(labelled, matcher, vectors, Mode::Both, *b, top_k, &train).f1();
                fa.total_cmp(&fb).then(b.total_cmp(a))
            })
            .unwrap_or(0.5);
        let scored = count(
            labelled,
            matcher,
            vectors,
            Mode::Both,
            best_threshold,
            top_k,
            &test,
        );
        chosen.push(best_threshold);
        held_out.push(scored);
    }
    let f1s: Vec<f64> = held_out.iter().map(Counts::f1).collect();
    let mean = f1s.iter().sum::<f64>() / f1s.len() as f64;
    let spread = f1s.iter().map(|f| (f - mean).powi(2)).sum::<f64>() / f1s.len() as f64;
    let mut sorted = chosen.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "\n5-fold cross-validation over procedures (regex and meaning): thresholds chosen {:?}, median {:.2}; held-out F1 {:.3} ± {:.3} (min {:.3}, max {:.3})",
        chosen.iter().map(|t| format!("{t:.2}")).collect::<Vec<_>>(),
        sorted[sorted.len() / 2],
        mean,
        spread.sqrt(),
        f1s.iter().copied().fold(f64::INFINITY, f64::min),
        f1s.iter().copied().fold(0.0, f64::max),
    );
}

/// Matching one message against `n` procedures: the labelled ones repeated
/// with patterns of their own and slightly moved vectors.
fn speed(base: &[ServingProcedure], labelled: &Labelled, vectors: &[Vec<f32>], n: usize) {
    let procedures: Vec<ServingProcedure> = (0..n)
        .map(|i| {
            let original = &base[i % base.len()];
            let mut content = original.content.clone();
            content.name = format!("{} {i}", content.name);
            if i >= base.len() {
                content.trigger_pattern = Some(format!(r"(?i)\b(sku{i}|case {i})\b"));
            }
            let vector = original.embedding.as_ref().map(|v| {
                let mut moved: Vec<f32> = v
                    .iter()
                    .enumerate()
                    .map(|(d, x)| x + 0.02 * (((i * 31 + d * 17) % 13) as f32 / 13.0 - 0.5))
                    .collect();
                let norm = moved.iter().map(|x| x * x).sum::<f32>().sqrt();
                moved.iter_mut().for_each(|x| *x /= norm);
                moved
            });
            ServingProcedure {
                id: ProcedureId::new(),
                agent_id: None,
                version: 1,
                content,
                embedding: vector,
            }
        })
        .collect();
    let started = Instant::now();
    let matcher = ProcedureMatcher::build(procedures);
    let built = started.elapsed();
    let (mut by_pattern, mut by_meaning) = (Vec::new(), Vec::new());
    for round in 0..4 {
        for (message, vector) in labelled.messages.iter().zip(vectors) {
            let t = Instant::now();
            let found = matcher.by_pattern(&message.text);
            let pattern_time = t.elapsed();
            let t = Instant::now();
            let close = matcher.by_meaning(vector, 0.5);
            let meaning_time = t.elapsed();
            std::hint::black_box((found, close));
            // The first round warms the regex engine's lazy DFA.
            if round > 0 {
                by_pattern.push(pattern_time);
                by_meaning.push(meaning_time);
            }
        }
    }
    println!(
        "\n{n} active procedures of one tenant (matcher built in {:.2} s, kept until they change); {} messages, 3 rounds after a warm-up\n",
        built.as_secs_f64(),
        labelled.messages.len()
    );
    println!("| matching one message | p50 ms | p95 ms | max ms |\n|---|---|---|---|");
    for (name, times) in [
        ("trigger patterns (one multi-pattern automaton)", by_pattern),
        ("by meaning (message vector given)", by_meaning),
    ] {
        let (p50, p95, max) = crate::latency::p50_p95_max(times);
        println!("| {name} | {p50:.3} | {p95:.3} | {max:.3} |");
    }
}
