//! The LoCoMo recall bench through the HTTP API, as a client would measure
//! it: a server on loopback (its memory worker running as `octopus serve`'s
//! does); each conversation's agent made with `POST /v1/agents`, the
//! conversation imported with `POST /v1/conversations/import` (one session
//! per episode), the client waiting until `/metrics` shows no queued memory
//! job; then every question asked with `POST /v1/agents/{id}/recall`,
//! `top_k` 20 (without summaries unless `--summaries`), once per pass (a
//! pass named `hybrid+explain` asks each hit's explanation), and as
//! the next message of a fresh conversation with
//! `POST /v1/conversations/{id}/context`.
//!
//! The server keeps its default cache of query vectors, as a user's does, so
//! the passes' order says what each one pays: the first pass to embed a
//! question pays for its embedding, and every later one finds it cached.

use std::collections::HashMap;
use std::time::Instant;

use octopus_app::AppConfig;
use octopus_client::operations as op;
use serde_json::{Value, json};

use crate::locomo::{Conversation, Turn};
use crate::locomo_context::ContextScore;
use crate::locomo_cv::Scored;
use crate::setup::send;

/// A conversation as the server knows it: its agent, and the dialogue id of
/// each (episode, ordinal).
struct Remote {
    agent: String,
    dia_ids: HashMap<(String, u64), String>,
}

/// One pass's questions over HTTP: each one's recall, and the latency of
/// each request as the client saw it.
pub struct ModeResult {
    pub scored: Vec<Scored>,
    pub latencies: Vec<f64>,
}

/// Every question's context over HTTP, and each request's latency.
pub struct ContextResult {
    pub scores: Vec<ContextScore>,
    pub latencies: Vec<f64>,
}

pub async fn run(
    conversations: &[Conversation],
    config: AppConfig,
    text_of: impl Fn(&Turn, &str) -> String,
    // The recall mode of each pass over the questions, in order.
    passes: &[&str],
    summaries: bool,
) -> anyhow::Result<(Vec<ModeResult>, ContextResult)> {
    let api = crate::setup::tenant_on_loopback(&config, "locomo-http").await?;

    let started = Instant::now();
    let mut remotes = Vec::new();
    for conversation in conversations {
        let agent = send(
            &api,
            op::CREATE_AGENT,
            None,
            json!({"name": format!("locomo-{}", conversation.id),
                   "llm": {"provider": "openai", "model": "gpt-4o"}}),
        )
        .await?;
        let agent = agent["id"].as_str().unwrap_or_default().to_owned();
        let sessions: Vec<Value> = conversation
            .sessions
            .iter()
            .map(|session| {
                let date = session.at.format("%-d %B %Y").to_string();
                let messages: Vec<Value> = session
                    .turns
                    .iter()
                    .enumerate()
                    .map(|(i, turn)| {
                        let role = if turn.speaker == conversation.speaker_a {
                            "user"
                        } else {
                            "assistant"
                        };
                        let at = session.at + chrono::Duration::seconds(i as i64);
                        json!({"role": role, "content": text_of(turn, &date), "timestamp": at})
                    })
                    .collect();
                json!({"messages": messages})
            })
            .collect();
        let report = send(
            &api,
            op::IMPORT_CONVERSATION,
            None,
            json!({"agent_id": agent, "user_id": conversation.speaker_a, "sessions": sessions}),
        )
        .await?;
        let mut dia_ids = HashMap::new();
        let episodes = report["episodes"].as_array().cloned().unwrap_or_default();
        for (episode, session) in episodes.iter().zip(&conversation.sessions) {
            for (ordinal, turn) in session.turns.iter().enumerate() {
                dia_ids.insert(
                    (
                        episode.as_str().unwrap_or_default().to_owned(),
                        ordinal as u64,
                    ),
                    turn.dia_id.clone(),
                );
            }
        }
        remotes.push(Remote { agent, dia_ids });
    }
    let imported = started.elapsed().as_secs_f64();
    crate::api::wait_for_memory_jobs(&api.with_key(crate::setup::ADMIN_KEY)).await?;
    println!(
        "over HTTP: {} conversations imported in {imported:.1} s, memory jobs done after {:.1} s",
        conversations.len(),
        started.elapsed().as_secs_f64()
    );

    let mut results = Vec::new();
    for mode in passes {
        let mut scored = Vec::new();
        let mut latencies = Vec::new();
        for (c, (conversation, remote)) in conversations.iter().zip(&remotes).enumerate() {
            for question in conversation
                .questions
                .iter()
                .filter(|q| (1..=4).contains(&q.category))
            {
                // "hybrid+explain": hybrid, each hit explained.
                let (mode, explain) = match mode.strip_suffix("+explain") {
                    Some(mode) => (mode, true),
                    None => (*mode, false),
                };
                let mut body = json!({"user_id": conversation.speaker_a, "query": question.question,
                                  "top_k": 20, "mode": mode, "include_summaries": summaries});
                if explain {
                    body["explain"] = true.into();
                }
                let asked = Instant::now();
                let answer = send(&api, op::RECALL, Some(&remote.agent), body).await?;
                latencies.push(asked.elapsed().as_secs_f64() * 1e3);
                let retrieved = turns(&answer, &remote.dia_ids);
                if let Some(recall) =
                    crate::locomo::recall_at_depths(&question.evidence, &retrieved)
                {
                    scored.push(Scored {
                        conversation: c,
                        category: question.category,
                        recall,
                    });
                }
            }
        }
        results.push(ModeResult { scored, latencies });
    }

    // What the model would see: each question as the next message of a
    // fresh conversation of the user with the conversation's agent.
    let mut contexts = ContextResult {
        scores: Vec::new(),
        latencies: Vec::new(),
    };
    for (c, (conversation, remote)) in conversations.iter().zip(&remotes).enumerate() {
        let fresh = send(
            &api,
            op::CREATE_CONVERSATION,
            None,
            json!({"agent_id": remote.agent, "user_id": conversation.speaker_a}),
        )
        .await?;
        let fresh = fresh["id"].as_str().unwrap_or_default().to_owned();
        let texts = crate::locomo_context::turn_texts(conversation, &text_of);
        for question in conversation
            .questions
            .iter()
            .filter(|q| (1..=4).contains(&q.category))
        {
            let asked = Instant::now();
            let context = send(
                &api,
                op::BUILD_CONTEXT,
                Some(&fresh),
                json!({"message": question.question}),
            )
            .await?;
            contexts.latencies.push(asked.elapsed().as_secs_f64() * 1e3);
            let contents: Vec<&str> = context["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m["content"].as_str())
                .collect();
            let tokens = |value: &Value| u32::try_from(value.as_u64().unwrap_or(0)).unwrap_or(0);
            let episodic = context["trace"]["blocks"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|b| b["block"] == "episodic")
                .map_or(0, |b| tokens(&b["tokens"]));
            contexts.scores.extend(crate::locomo_context::score(
                c,
                question,
                &texts,
                &contents,
                tokens(&context["trace"]["total_tokens"]),
                episodic,
            ));
        }
    }
    Ok((results, contexts))
}

/// The dialogue ids of a recall answer's message hits, in rank order.
fn turns(answer: &Value, dia_ids: &HashMap<(String, u64), String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut found = Vec::new();
    for hit in answer["items"].as_array().into_iter().flatten() {
        let message = &hit["window"]["message"];
        let key = (
            message["episode_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            message["ordinal"].as_u64().unwrap_or(u64::MAX),
        );
        if let Some(id) = dia_ids.get(&key)
            && seen.insert(id.clone())
        {
            found.push(id.clone());
        }
    }
    found
}
