//! Evidence recall on the LoCoMo dev split: each conversation imported with its
//! sessions' dates (one episode per session), every question of categories 1–4
//! asked of that conversation, recall@1/5/10/20 overall and per category.
//!
//! Today it measures the keyword path (Octopus's message search: FTS5 BM25).
//! Vector and hybrid recall join when message embeddings exist.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use octopus_core::message::Role;
use octopus_core::search::MessageSearchQuery;
use octopus_core::store::{AppendMessages, MessageRecord, Store};
use octopus_core::{MessageId, TenantId};
use octopus_engine::Octopus;
use octopus_sqlite::{SqliteOptions, SqliteStore};
use serde_json::json;

use crate::locomo::{self, Conversation, evidence_recall};
use crate::setup;

const DEPTHS: [usize; 4] = [1, 5, 10, 20];

#[derive(clap::Args)]
pub struct Options {
    #[arg(long, default_value = "../shared/data/locomo-dev")]
    data: PathBuf,
}

/// What is stored for a turn: who said it, what they said, and the caption of
/// an image they shared.
fn stored_text(turn: &locomo::Turn) -> String {
    match &turn.image_caption {
        Some(caption) => format!(
            "{}: {} [shared an image: {caption}]",
            turn.speaker, turn.text
        ),
        None => format!("{}: {}", turn.speaker, turn.text),
    }
}

pub fn run(options: Options) -> anyhow::Result<()> {
    let conversations = locomo::load(&options.data)?;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let dir = tempfile::tempdir()?;
        let store = SqliteStore::open(SqliteOptions::new(dir.path()))?;
        let store: Arc<dyn Store> = Arc::new(store);
        let octopus = Octopus::with_store(Arc::clone(&store), Default::default());
        let tenant = octopus.create_tenant("locomo").await?;
        // Per category: (questions, summed recall at each depth).
        let mut sums: HashMap<u8, (usize, [f64; 4])> = HashMap::new();
        let mut latencies = Vec::new();
        for conversation in &conversations {
            let (search, dia_ids) = import(&octopus, &*store, tenant.id, conversation).await?;
            for question in conversation.questions.iter().filter(|q| (1..=4).contains(&q.category)) {
                let query = MessageSearchQuery {
                    text: question.question.clone(),
                    limit: 20,
                    ..search.clone()
                };
                let started = Instant::now();
                let hits = store.search_messages(tenant.id, &query).await?;
                latencies.push(started.elapsed().as_secs_f64() * 1e3);
                let retrieved: Vec<String> = hits
                    .iter()
                    .filter_map(|h| dia_ids.get(&h.message.id).cloned())
                    .collect();
                let entry = sums.entry(question.category).or_default();
                for (at, depth) in DEPTHS.iter().enumerate() {
                    if let Some(recall) = evidence_recall(&question.evidence, &retrieved, *depth) {
                        entry.1[at] += recall;
                    }
                }
                entry.0 += usize::from(!question.evidence.is_empty());
            }
        }
        latencies.sort_by(f64::total_cmp);
        let percentile = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
        println!(
            "{} conversations, {} turns, {} questions of categories 1-4; text stored per turn: `speaker: text [shared an image: caption]`\n",
            conversations.len(),
            conversations.iter().flat_map(|c| &c.sessions).map(|s| s.turns.len()).sum::<usize>(),
            sums.values().map(|(n, _)| n).sum::<usize>()
        );
        println!("| mode | category | questions | R@1 | R@5 | R@10 | R@20 |\n|---|---|---|---|---|---|---|");
        let mut categories: Vec<_> = sums.keys().copied().collect();
        categories.sort();
        let all = sums.values().fold((0, [0.0; 4]), |mut acc, (n, r)| {
            acc.0 += n;
            (0..4).for_each(|i| acc.1[i] += r[i]);
            acc
        });
        let row = |name: &str, (n, r): (usize, [f64; 4])| {
            let n = n.max(1) as f64;
            println!("| keyword | {name} | {} | {:.3} | {:.3} | {:.3} | {:.3} |", n, r[0] / n, r[1] / n, r[2] / n, r[3] / n);
        };
        row("all", all);
        for category in categories {
            let name = ["", "1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop"][category as usize];
            row(name, sums[&category]);
        }
        println!(
            "\nkeyword recall latency: p50 {:.2} ms, p95 {:.2} ms",
            percentile(0.50),
            percentile(0.95)
        );
        anyhow::Ok(())
    })
}

/// Imports one conversation: `speaker_a` is the user, `speaker_b` the agent's
/// side, each session appended at its date. Returns the search scope and the
/// dialogue id of every stored message.
async fn import(
    octopus: &Octopus,
    store: &dyn Store,
    tenant: TenantId,
    conversation: &Conversation,
) -> anyhow::Result<(MessageSearchQuery, HashMap<MessageId, String>)> {
    let agent = setup::agent(octopus, tenant, &format!("locomo-{}", conversation.id)).await?;
    let spec =
        serde_json::from_value(json!({"agent_id": agent.id, "user_id": conversation.speaker_a}))?;
    let stored = octopus.create_conversation(tenant, spec).await?;
    let mut dia_ids = HashMap::new();
    for session in &conversation.sessions {
        let messages: Vec<MessageRecord> = session
            .turns
            .iter()
            .enumerate()
            .map(|(i, turn)| {
                let role = if turn.speaker == conversation.speaker_a {
                    Role::User
                } else {
                    Role::Assistant
                };
                let at = session.at + chrono::Duration::seconds(i as i64);
                let message = setup::text_message(stored_text(turn), role, at);
                dia_ids.insert(message.id, turn.dia_id.clone());
                message
            })
            .collect();
        let batch = AppendMessages {
            conversation_id: stored.id,
            messages,
            idle_timeout: chrono::Duration::minutes(30),
            now: octopus_core::now(),
        };
        store.append_messages(tenant, batch).await?;
    }
    let scope = MessageSearchQuery {
        text: String::new(),
        agent_id: Some(agent.id),
        user_id: Some(conversation.speaker_a.clone()),
        conversation_id: Some(stored.id),
        from: None,
        to: None,
        limit: 20,
    };
    Ok((scope, dia_ids))
}
