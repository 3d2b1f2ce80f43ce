//! What learning facts during a session costs: the LoCoMo conversations
//! replayed turn by turn, as a live agent would store them, once with
//! `memory.learn_every_messages` at 0 (facts at close only) and once at the
//! chosen interval, the memory worker running after every turn. Every call
//! the worker makes goes to the loopback fake of the tests
//! (`octopus_testkit::fake_chat`), which records it; the table counts the
//! calls of each kind and the tokens of what each sent (o200k, as GPT-4o
//! counts them).
//!
//! The fake learns no fact (its answer is an empty list), so no learning
//! asks for a decision against known facts; with a real model, a window
//! whose facts have related known ones adds one such call, of at most 30
//! known and 20 new facts.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use octopus_app::AppConfig;
use octopus_core::agent::LlmProvider;
use octopus_core::episode::{CloseEpisode, EndReason};
use octopus_core::tokens::TokenCounter;
use octopus_engine::EngineConfig;
use octopus_engine::token_counting::ModelTokenCounter;
use octopus_testkit::fake_chat::{self, ChatProvider, Received};
use serde_json::json;

use crate::locomo;

#[derive(clap::Args)]
pub struct Options {
    /// The LoCoMo dev split's folder: one JSON file per conversation.
    #[arg(long, env = "OCTOPUS_LOCOMO_DIR")]
    data: PathBuf,
    /// User messages between two learnings, in the measured run.
    #[arg(long, default_value_t = 10)]
    every: u32,
}

pub fn run(options: Options) -> anyhow::Result<()> {
    tokio::runtime::Runtime::new()?.block_on(measure(options))
}

/// What the worker asked of the model in one run.
#[derive(Default)]
struct Asked {
    /// Per kind of call: how many, and the tokens they sent.
    calls: BTreeMap<&'static str, (usize, usize)>,
}

impl Asked {
    fn count(received: &[Received], tokens: &dyn TokenCounter) -> Self {
        let mut asked = Asked::default();
        for call in received {
            let messages = call.body["messages"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let system = messages
                .first()
                .and_then(|m| m["content"].as_str())
                .unwrap_or_default();
            let kind = if system.contains("Read the latest messages") {
                "learning during a session"
            } else if system.contains("key_facts") {
                "summary and key facts at close"
            } else if system.contains("known about the user") {
                "decision against known facts"
            } else {
                "other"
            };
            let sent: usize = messages
                .iter()
                .filter_map(|m| m["content"].as_str())
                .map(|text| tokens.count(text) as usize)
                .sum();
            let entry = asked.calls.entry(kind).or_default();
            entry.0 += 1;
            entry.1 += sent;
        }
        asked
    }

    fn total(&self) -> (usize, usize) {
        self.calls
            .values()
            .fold((0, 0), |(calls, tokens), (c, t)| (calls + c, tokens + t))
    }
}

async fn measure(options: Options) -> anyhow::Result<()> {
    let conversations = locomo::load(&options.data)?;
    let fake = Arc::new(ChatProvider::default());
    let url = fake_chat::serve(Arc::clone(&fake)).await;
    let dir = tempfile::tempdir()?;
    let mut engine = EngineConfig::default();
    engine.llm.allowed_base_urls = vec![url.clone()];
    engine.llm.max_retries = 0;
    // The conversations are dated years back.
    engine.limits.max_live_message_age_secs = 20 * 365 * 86_400;
    let octopus = octopus_app::connect(&AppConfig::in_dir(dir.path(), engine)).await?;
    let tenant = octopus.create_tenant("bench").await?.id;
    let tokens = ModelTokenCounter::for_model(LlmProvider::Openai, "gpt-4o");

    let (mut sessions, mut user_messages) = (0usize, 0usize);
    let mut runs = Vec::new();
    for every in [0, options.every] {
        let agent = octopus
            .create_agent(
                tenant,
                serde_json::from_value(json!({
                    "name": format!("learning every {every}"),
                    "llm": {"provider": "ollama", "model": "bench", "base_url": url},
                    // Only the model's work is measured.
                    "memory": {"learn_every_messages": every, "embed_messages": false},
                }))?,
            )
            .await?;
        let before = fake.received().len();
        (sessions, user_messages) = (0, 0);
        for conversation in &conversations {
            let spec = serde_json::from_value(
                json!({"agent_id": agent.id, "user_id": conversation.speaker_a}),
            )?;
            let id = octopus.create_conversation(tenant, spec).await?.id;
            let mut open = None;
            for session in &conversation.sessions {
                sessions += 1;
                for (i, turn) in session.turns.iter().enumerate() {
                    let role = match turn.speaker == conversation.speaker_a {
                        true => "user",
                        false => "assistant",
                    };
                    user_messages += usize::from(role == "user");
                    let at = session.at + chrono::Duration::seconds(i as i64 * 30);
                    let message = serde_json::from_value(
                        json!({"role": role, "content": turn.text, "timestamp": at}),
                    )?;
                    let stored = octopus.append_messages(tenant, id, vec![message]).await?;
                    open = stored.last().map(|m| m.episode_id);
                    // The worker keeps up with the conversation, as it does live.
                    octopus.run_memory_jobs().await?;
                }
            }
            // The last session closes too, as an idle one would.
            if let Some(episode) = open {
                let close = CloseEpisode {
                    reason: EndReason::Timeout,
                    ended_at: None,
                    summary: None,
                };
                octopus.close_episode(tenant, episode, close).await?;
                octopus.run_memory_jobs().await?;
            }
        }
        runs.push((every, Asked::count(&fake.received()[before..], &tokens)));
    }

    println!(
        "Learning during sessions: {} LoCoMo conversations, {sessions} sessions, {user_messages} user messages, each run\n",
        conversations.len()
    );
    println!(
        "| learn_every_messages | kind of call | calls | calls per session | tokens sent | tokens per session |"
    );
    println!("|---|---|---|---|---|---|");
    for (every, asked) in &runs {
        for (kind, (calls, sent)) in &asked.calls {
            println!(
                "| {every} | {kind} | {calls} | {:.2} | {sent} | {:.0} |",
                *calls as f64 / sessions as f64,
                *sent as f64 / sessions as f64
            );
        }
        let (calls, sent) = asked.total();
        println!(
            "| {every} | all | {calls} | {:.2} | {sent} | {:.0} |",
            calls as f64 / sessions as f64,
            sent as f64 / sessions as f64
        );
    }
    if let [(_, off), (_, on)] = runs.as_slice() {
        let (off_calls, off_sent) = off.total();
        let (on_calls, on_sent) = on.total();
        println!(
            "\nAdded by learning every {} user messages: {:.2} calls and {:.0} tokens sent per session ({:+.0}% tokens).",
            options.every,
            (on_calls as f64 - off_calls as f64) / sessions as f64,
            (on_sent as f64 - off_sent as f64) / sessions as f64,
            (on_sent as f64 / off_sent.max(1) as f64 - 1.0) * 100.0
        );
    }
    Ok(())
}
