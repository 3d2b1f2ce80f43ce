//! Answers, not only retrieval. Each question of categories 1–4 is answered
//! by a model (any OpenAI-compatible endpoint) from three prompts: Octopus's
//! working memory for the question, the whole conversation (full history),
//! and the question alone (no memory). A judge model then labels each answer
//! CORRECT or WRONG with the LoCoMo judge prompt that the published "J"
//! figures use. Prints J per category for each prompt, with the prompt's
//! tokens and the answer model's latency.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use octopus_core::TenantId;
use octopus_engine::Octopus;
use serde_json::{Value, json};

use crate::locomo::{Conversation, category_name};

/// The judge prompt of mem0's LoCoMo evaluation (`evaluation/metrics/
/// llm_judge.py`, Apache-2.0), kept word for word so that J here means what
/// it means in the published tables.
const JUDGE_PROMPT: &str = include_str!("locomo_judge_prompt.txt");

/// What the answering model is told, in all three prompts alike.
const ANSWER_INSTRUCTIONS: &str = "You answer questions about past conversations between two people, \
     from what you remember of them. Answer in a short phrase. For a question about time, give the \
     date, month or year itself, worked out from the dates of the conversations.";

/// An OpenAI-compatible chat endpoint and the model to ask there.
pub struct Endpoint {
    /// Up to the version, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    pub model: String,
    pub key: Option<String>,
}

/// One model call's reply and what it cost.
struct Reply {
    text: String,
    prompt_tokens: u64,
    elapsed: Duration,
}

impl Endpoint {
    async fn ask(
        &self,
        http: &reqwest::Client,
        messages: Value,
        json_answer: bool,
    ) -> anyhow::Result<Reply> {
        let mut body = json!({"model": self.model, "messages": messages, "temperature": 0.0});
        if json_answer {
            body["response_format"] = json!({"type": "json_object"});
        }
        let url = format!("{}/chat/completions", self.base_url.trim_end_matches('/'));
        let mut request = http.post(&url).json(&body);
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        let started = Instant::now();
        let response = request
            .send()
            .await
            .with_context(|| format!("POST {url}"))?;
        let status = response.status();
        let answer: Value = response
            .json()
            .await
            .with_context(|| format!("read the answer of {url}"))?;
        if !status.is_success() {
            bail!("{url} answered {status}: {answer}");
        }
        Ok(Reply {
            text: answer["choices"][0]["message"]["content"]
                .as_str()
                .with_context(|| format!("no message content in {answer}"))?
                .to_owned(),
            prompt_tokens: answer["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
            elapsed: started.elapsed(),
        })
    }
}

/// The prompts each question is answered from.
const SYSTEMS: [&str; 3] = ["octopus", "full history", "no memory"];

#[derive(Default)]
struct Tally {
    /// Per category: questions, and those judged CORRECT.
    by_category: BTreeMap<u8, (usize, usize)>,
    prompt_tokens: Vec<u64>,
    latencies: Vec<Duration>,
}

/// Answers and judges every question of categories 1–4 (the first
/// `per_conversation` of each conversation, when given); `agents` are the
/// agents the conversations were imported under, in the same order.
pub async fn run(
    engine: &Octopus,
    tenant: TenantId,
    conversations: &[Conversation],
    agents: &[octopus_core::AgentId],
    answer: &Endpoint,
    judge: &Endpoint,
    per_conversation: Option<usize>,
) -> anyhow::Result<()> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()?;
    let mut tallies: Vec<Tally> = SYSTEMS.iter().map(|_| Tally::default()).collect();
    for (conversation, agent) in conversations.iter().zip(agents) {
        engine
            .update_agent(
                tenant,
                *agent,
                &json!({"system_prompt": ANSWER_INSTRUCTIONS}),
            )
            .await?;
        let spec =
            serde_json::from_value(json!({"agent_id": agent, "user_id": conversation.speaker_a}))?;
        let fresh = engine.create_conversation(tenant, spec).await?;
        let history = transcript(conversation);
        let questions = conversation
            .questions
            .iter()
            .filter(|q| (1..=4).contains(&q.category) && q.answer.is_some())
            .take(per_conversation.unwrap_or(usize::MAX));
        for question in questions {
            let context = engine
                .build_context(tenant, fresh.id, &question.question)
                .await?;
            let prompts = [
                serde_json::to_value(&context.messages)?,
                json!([
                    {"role": "system", "content": format!("{ANSWER_INSTRUCTIONS}\n\nThe conversations:\n{history}")},
                    {"role": "user", "content": question.question},
                ]),
                json!([
                    {"role": "system", "content": ANSWER_INSTRUCTIONS},
                    {"role": "user", "content": question.question},
                ]),
            ];
            let gold = question.answer.as_deref().unwrap_or_default();
            for (tally, messages) in tallies.iter_mut().zip(prompts) {
                let reply = answer.ask(&http, messages, false).await?;
                let verdict = judge
                    .ask(&http, json!([{"role": "user", "content": judge_prompt(&question.question, gold, &reply.text)}]), true)
                    .await?;
                let entry = tally.by_category.entry(question.category).or_default();
                entry.0 += 1;
                entry.1 += usize::from(is_correct(&verdict.text));
                tally.prompt_tokens.push(reply.prompt_tokens);
                tally.latencies.push(reply.elapsed);
            }
        }
    }
    print(&tallies, answer, judge);
    Ok(())
}

/// The whole conversation, session by session, each turn with its speaker.
fn transcript(conversation: &Conversation) -> String {
    let mut text = String::new();
    for session in &conversation.sessions {
        text.push_str(&format!("\n[{}]\n", session.at.format("%-d %B %Y, %H:%M")));
        for turn in &session.turns {
            text.push_str(&format!("{}: {}", turn.speaker, turn.text));
            if let Some(caption) = &turn.image_caption {
                text.push_str(&format!(" [shared an image: {caption}]"));
            }
            text.push('\n');
        }
    }
    text
}

fn judge_prompt(question: &str, gold: &str, generated: &str) -> String {
    JUDGE_PROMPT
        .replace("{question}", question)
        .replace("{gold_answer}", gold)
        .replace("{generated_answer}", generated)
}

/// The judge's label: `{"label": "CORRECT"}`, or the word alone when the
/// model wrote no JSON.
fn is_correct(verdict: &str) -> bool {
    let object = verdict
        .find('{')
        .zip(verdict.rfind('}'))
        .and_then(|(start, end)| serde_json::from_str::<Value>(&verdict[start..=end]).ok());
    match object.as_ref().and_then(|o| o["label"].as_str()) {
        Some(label) => label.trim().eq_ignore_ascii_case("correct"),
        None => verdict.contains("CORRECT") && !verdict.contains("WRONG"),
    }
}

fn print(tallies: &[Tally], answer: &Endpoint, judge: &Endpoint) {
    println!(
        "\nAnswers judged (LLM judge J): answer model {} at {}, judge {} at {}",
        answer.model, answer.base_url, judge.model, judge.base_url
    );
    let categories: Vec<u8> = tallies[0].by_category.keys().copied().collect();
    let mut heading = String::from("| prompt |");
    for category in &categories {
        heading.push_str(&format!(" {} |", category_name(*category)));
    }
    heading.push_str(" all | questions | prompt tokens (mean) | answer p50 ms |");
    println!("{heading}\n|{}", "---|".repeat(categories.len() + 5));
    for (name, tally) in SYSTEMS.iter().zip(tallies) {
        let mut row = format!("| {name} |");
        let (mut asked, mut correct) = (0, 0);
        for category in &categories {
            let (n, right) = tally.by_category.get(category).copied().unwrap_or_default();
            asked += n;
            correct += right;
            row.push_str(&format!(" {:.3} |", right as f64 / n.max(1) as f64));
        }
        let mean_tokens = tally.prompt_tokens.iter().sum::<u64>() as f64
            / tally.prompt_tokens.len().max(1) as f64;
        let mut latencies = tally.latencies.clone();
        latencies.sort();
        let p50 = latencies
            .get(latencies.len() / 2)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        row.push_str(&format!(
            " {:.3} | {asked} | {mean_tokens:.0} | {p50:.0} |",
            correct as f64 / asked.max(1) as f64
        ));
        println!("{row}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_judges_label_is_read_from_json_or_from_the_word() {
        assert!(is_correct(r#"{"label": "CORRECT"}"#));
        assert!(is_correct(
            "The answer names the violin.\n```json\n{\"label\": \"CORRECT\"}\n```"
        ));
        assert!(!is_correct(r#"{"label": "WRONG"}"#));
        assert!(is_correct("Same instrument. CORRECT"));
        assert!(!is_correct("Not the same. WRONG"));
    }

    #[test]
    fn the_judge_prompt_carries_the_question_and_both_answers() {
        let prompt = judge_prompt("What does Mel play?", "violin", "She plays the violin.");
        assert!(prompt.contains("Question: What does Mel play?\nGold answer: violin\nGenerated answer: She plays the violin."));
        for placeholder in ["{question}", "{gold_answer}", "{generated_answer}"] {
            assert!(
                !prompt.contains(placeholder),
                "{placeholder} left in the prompt"
            );
        }
    }
}
