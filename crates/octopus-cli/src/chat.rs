//! `octopus chat`: a terminal conversation with an agent through a running
//! server. Each line is a turn (`POST …/turns` with `stream`), its reply
//! printed as it arrives; `/trace` shows what memory the last turn used,
//! `/new` closes the episode, `/quit` or end of input leaves.

use std::io::Write;

use anyhow::{Context, bail};
use octopus_client::Client;
use octopus_client::operations as op;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::cli::ChatArgs;

pub async fn chat(args: ChatArgs) -> anyhow::Result<()> {
    let client = args.remote.client();
    let conversation = match args.conversation {
        Some(id) => id,
        None => {
            let agent = client.agent_id(&args.agent).await?;
            let created = client
                .call(op::CREATE_CONVERSATION)
                .json(&json!({"agent_id": agent, "user_id": args.user}))
                .send()
                .await?;
            created["id"]
                .as_str()
                .context("the server returned no conversation id")?
                .to_owned()
        }
    };
    println!("Conversation {conversation}. /trace, /new, /quit.");
    let mut last: Option<Value> = None;
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    loop {
        print!("you> ");
        std::io::stdout().flush().ok();
        let Some(line) = lines.next_line().await.context("read the terminal")? else {
            println!();
            return Ok(());
        };
        let line = line.trim();
        match line {
            "" => continue,
            "/quit" | "/exit" => return Ok(()),
            "/help" => {
                println!("/trace: what memory the last turn used; /new: close the episode; /quit")
            }
            "/trace" => match &last {
                Some(turn) => print_trace(turn),
                None => println!("(no turn yet)"),
            },
            "/new" => match last.as_ref().and_then(|t| t["episode_id"].as_str()) {
                Some(episode) => {
                    match client
                        .call(op::CLOSE_EPISODE)
                        .param(episode)
                        .json(&json!({"end_reason": "user_closed"}))
                        .send()
                        .await
                    {
                        Ok(_) => {
                            println!("(episode {episode} closed; the next message starts another)")
                        }
                        Err(error) => println!("(could not close the episode: {error:#})"),
                    }
                    last = None;
                }
                None => println!("(no episode open from this chat)"),
            },
            message => match turn(&client, &conversation, message).await {
                Ok(done) => last = Some(done),
                Err(error) => println!("\n(error: {error:#})"),
            },
        }
    }
}

/// One streamed turn: prints the reply as it comes; returns the final event.
async fn turn(client: &Client, conversation: &str, message: &str) -> anyhow::Result<Value> {
    let mut response = client
        .call(op::TAKE_TURN)
        .param(conversation)
        .json(&json!({"message": message, "stream": true}))
        .open()
        .await?;
    print!("agent> ");
    let mut pending = String::new();
    while let Some(chunk) = response.chunk().await.context("read the reply")? {
        pending.push_str(&String::from_utf8_lossy(&chunk));
        // Events end with a blank line.
        while let Some(end) = pending.find("\n\n") {
            let event: String = pending.drain(..end + 2).collect();
            let name = field(&event, "event").unwrap_or_default();
            let data: Value = serde_json::from_str(&field(&event, "data").unwrap_or_default())
                .unwrap_or(Value::Null);
            match name.as_str() {
                "delta" => {
                    print!("{}", data["text"].as_str().unwrap_or(""));
                    std::io::stdout().flush().ok();
                }
                "done" => {
                    println!();
                    return Ok(data);
                }
                "error" => {
                    println!();
                    bail!(
                        "{} {}",
                        data["error"]["code"].as_str().unwrap_or("error"),
                        data["error"]["message"].as_str().unwrap_or("")
                    );
                }
                _ => {}
            }
        }
    }
    bail!("the server closed the stream before the turn was done")
}

/// The value of the first `name:` line of an event.
fn field(event: &str, name: &str) -> Option<String> {
    event
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
        .map(|value| value.trim_start().to_owned())
}

/// Tokens per block, what was retrieved and what was pruned.
fn print_trace(turn: &Value) {
    let trace = &turn["trace"];
    println!(
        "model {} ({}): {} input / {} output tokens",
        turn["model"].as_str().unwrap_or("?"),
        turn["provider"].as_str().unwrap_or("?"),
        turn["usage"]["input_tokens"],
        turn["usage"]["output_tokens"]
    );
    println!(
        "context: {} of {} tokens",
        trace["total_tokens"], trace["budget"]
    );
    for block in trace["blocks"].as_array().into_iter().flatten() {
        println!(
            "  {:<14} {:>6} tokens  {} item(s)",
            block["block"].as_str().unwrap_or("?"),
            block["tokens"],
            block["items"]
        );
    }
    for (name, items) in [
        ("knowledge", &trace["knowledge"]),
        ("episodic", &trace["episodic"]),
    ] {
        for item in items.as_array().into_iter().flatten() {
            let text: String = item["text"]
                .as_str()
                .unwrap_or("")
                .chars()
                .take(70)
                .collect();
            println!(
                "  {name} {:.2} [{}] {text}",
                item["score"].as_f64().unwrap_or(0.0),
                item["label"].as_str().unwrap_or("")
            );
        }
    }
    for pruned in trace["pruned"].as_array().into_iter().flatten() {
        println!(
            "  pruned {} {} ({} tokens)",
            pruned["block"].as_str().unwrap_or("?"),
            pruned["id"].as_str().unwrap_or("?"),
            pruned["tokens"]
        );
    }
}
