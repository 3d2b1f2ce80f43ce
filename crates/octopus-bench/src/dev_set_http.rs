//! A dev set's chats through the HTTP API, as a client would measure them: a
//! server on loopback with its memory worker running, each chat's agent
//! made with `POST /v1/agents`, its sessions imported with
//! `POST /v1/conversations/import` (a request per session, so that no body
//! nears the server's limit), the client waiting until `/metrics` shows no
//! queued memory job; then every question recalled with
//! `POST /v1/agents/{id}/recall` (top 20, messages only) in each mode, and
//! asked as the next message of a fresh conversation with
//! `POST /v1/conversations/{id}/context`. The server keeps its default
//! cache of query vectors: the first mode pays for each question's
//! embedding.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use octopus_app::AppConfig;
use octopus_client::operations as op;
use serde_json::{Value, json};

use crate::dev_set::{self, Chat};
use crate::setup::send;

/// A chat's messages' source ids by (episode, ordinal) as the API names them.
type SourceIds = HashMap<(String, u64), String>;

pub async fn run(chats: &[Chat], config: AppConfig) -> anyhow::Result<()> {
    let api = crate::setup::tenant_on_loopback(&config, "dev-set-http").await?;

    let started = Instant::now();
    // Per chat: its agent, and source ids by (episode, ordinal).
    let mut remotes: Vec<(String, SourceIds)> = Vec::new();
    for chat in chats {
        let name: String = format!("{}-{}", chat.source.name(), chat.id)
            .chars()
            .map(|c| if c.is_alphanumeric() { c } else { '-' })
            .collect();
        let agent = send(
            &api,
            op::CREATE_AGENT,
            None,
            json!({"name": name, "llm": {"provider": "openai", "model": "gpt-4o"}}),
        )
        .await?;
        let agent = agent["id"].as_str().unwrap_or_default().to_owned();
        let mut ids = HashMap::new();
        for session in &chat.sessions {
            let messages: Vec<Value> = session
                .lines
                .iter()
                .enumerate()
                .map(|(i, line)| {
                    let at = session.at + chrono::Duration::minutes(i as i64);
                    json!({"role": line.role.as_str(), "content": line.text, "timestamp": at})
                })
                .collect();
            let report = send(
                &api,
                op::IMPORT_CONVERSATION,
                None,
                json!({"agent_id": agent, "user_id": chat.user,
                       "sessions": [{"messages": messages}]}),
            )
            .await?;
            let episode = report["episodes"][0]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            for (ordinal, line) in session.lines.iter().enumerate() {
                ids.insert((episode.clone(), ordinal as u64), line.source_id.clone());
            }
        }
        remotes.push((agent, ids));
    }
    let imported = started.elapsed().as_secs_f64();
    crate::api::wait_for_memory_jobs(&api.with_key(crate::setup::ADMIN_KEY)).await?;
    println!(
        "over HTTP: imported in {imported:.1} s, memory jobs done after {:.1} s\n",
        started.elapsed().as_secs_f64()
    );

    println!("{}", dev_set::RECALL_HEADER);
    let mut runs = Vec::new();
    for mode in ["hybrid", "vector", "keyword"] {
        let mut scored = Vec::new();
        let mut latencies = Vec::new();
        for (c, (chat, (agent, ids))) in chats.iter().zip(&remotes).enumerate() {
            for question in chat.questions.iter().filter(|q| !q.evidence.is_empty()) {
                let body = json!({"user_id": chat.user, "query": question.question, "top_k": 20,
                                  "mode": mode, "include_summaries": false, "include_facts": false});
                let asked = Instant::now();
                let answer = send(&api, op::RECALL, Some(agent), body).await?;
                latencies.push(asked.elapsed().as_secs_f64() * 1e3);
                scored.extend(dev_set::score(c, question, &ranked_ids(&answer, ids)));
            }
        }
        dev_set::print_recall(mode, &scored);
        runs.push((mode, scored, latencies));
    }
    let ordered: Vec<_> = ["keyword", "vector", "hybrid"]
        .iter()
        .filter_map(|m| runs.iter().find(|(name, ..)| name == m))
        .map(|(name, scored, latencies)| (*name, scored.clone(), latencies.clone()))
        .collect();
    crate::beam_bench::print_by_size(chats, &ordered);
    println!();
    for (mode, _, latencies) in runs {
        let note = match mode {
            "hybrid" => "a question not asked before: embedded",
            "vector" => "its embedding cached",
            _ => "no embedding",
        };
        crate::locomo_bench::print_latency(&format!("{mode} HTTP request"), latencies, note);
    }

    let mut contexts = Vec::new();
    let mut latencies = Vec::new();
    for (chat, (agent, ids)) in chats.iter().zip(&remotes) {
        let texts: HashMap<&str, &str> = chat
            .sessions
            .iter()
            .flat_map(|s| &s.lines)
            .map(|l| (l.source_id.as_str(), l.text.as_str()))
            .collect();
        let fresh = send(
            &api,
            op::CREATE_CONVERSATION,
            None,
            json!({"agent_id": agent, "user_id": chat.user}),
        )
        .await?;
        let fresh = fresh["id"].as_str().unwrap_or_default().to_owned();
        let learned = learned_over_http(&api, agent, &chat.user, ids).await?;
        for question in chat.questions.iter().filter(|q| !q.evidence.is_empty()) {
            let asked = Instant::now();
            let context = send(
                &api,
                op::BUILD_CONTEXT,
                Some(&fresh),
                json!({"message": question.question}),
            )
            .await?;
            latencies.push(asked.elapsed().as_secs_f64() * 1e3);
            let shown: String = context["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m["content"].as_str())
                .collect::<Vec<_>>()
                .join("\n");
            let tokens = context["trace"]["total_tokens"].as_u64().unwrap_or(0);
            contexts.extend(dev_set::in_context(
                question,
                (&texts, &learned),
                &shown,
                u32::try_from(tokens).unwrap_or(u32::MAX),
            ));
        }
    }
    dev_set::print_contexts("over HTTP, default agent settings", &contexts);
    crate::locomo_bench::print_latency(
        "context HTTP request",
        latencies,
        "the question's embedding cached",
    );
    Ok(())
}

/// The texts of the user's current facts by the source id of each message
/// they were learned from, read as a client reads them.
async fn learned_over_http(
    api: &octopus_client::Client,
    agent: &str,
    user: &str,
    ids: &SourceIds,
) -> anyhow::Result<HashMap<String, Vec<String>>> {
    let facts = api
        .call(op::LIST_FACTS)
        .param(agent)
        .param(user)
        .query("limit", 1000)
        .send()
        .await?;
    let mut ordinals: HashMap<String, HashMap<String, u64>> = HashMap::new();
    let mut learned: HashMap<String, Vec<String>> = HashMap::new();
    for fact in facts["items"].as_array().into_iter().flatten() {
        let Some(episode) = fact["episode_id"].as_str() else {
            continue;
        };
        if !ordinals.contains_key(episode) {
            let read = api.call(op::GET_EPISODE).param(episode).send().await?;
            let by_id = read["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| Some((m["id"].as_str()?.to_owned(), m["ordinal"].as_u64()?)))
                .collect();
            ordinals.insert(episode.to_owned(), by_id);
        }
        for message in fact["message_ids"].as_array().into_iter().flatten() {
            let source = message
                .as_str()
                .and_then(|id| ordinals[episode].get(id))
                .and_then(|ordinal| ids.get(&(episode.to_owned(), *ordinal)));
            if let (Some(source), Some(text)) = (source, fact["text"].as_str()) {
                learned
                    .entry(source.clone())
                    .or_default()
                    .push(text.to_owned());
            }
        }
    }
    Ok(learned)
}

/// The source ids of a recall answer's message hits, in rank order.
fn ranked_ids(answer: &Value, ids: &SourceIds) -> Vec<String> {
    let mut seen = HashSet::new();
    answer["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|hit| {
            let message = &hit["window"]["message"];
            let key = (
                message["episode_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                message["ordinal"].as_u64().unwrap_or(u64::MAX),
            );
            ids.get(&key)
        })
        .filter(|id| seen.insert((*id).clone()))
        .cloned()
        .collect()
}
