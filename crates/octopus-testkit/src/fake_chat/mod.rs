//! A local server speaking the chat APIs of OpenAI, Azure OpenAI, Anthropic
//! and Ollama as their references document them: request and response bodies,
//! streams (server-sent events with each API's event types; Ollama's
//! newline-delimited JSON), tool calls, usage, authentication and error
//! bodies. Pages: <https://platform.openai.com/docs/api-reference/chat/create>
//! (and the chat completion chunk object),
//! <https://learn.microsoft.com/azure/ai-foundry/openai/reference> (chat
//! completions), <https://docs.anthropic.com/en/api/messages> and
//! <https://docs.anthropic.com/en/docs/build-with-claude/streaming>,
//! <https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion>.
//!
//! Routes and credentials: `POST /v1/chat/completions` (OpenAI, `Bearer
//! sk-test`), `POST /openai/deployments/chat-4o/chat/completions?api-version=…`
//! (Azure, `api-key: azure-key`), `POST /v1/messages` (Anthropic, `x-api-key:
//! ant-key`, `anthropic-version: 2023-06-01`), `POST /api/chat` (Ollama; model
//! `missing` is not pulled).
//!
//! Scripted answers come first; after them every request is answered by
//! echoing the last user message (`echo: …`); when a system message asks for
//! `key_facts`, with a JSON summary of the conversation; when it asks for a
//! `reusable procedure`, with one step per tool the conversation called;
//! when it asks for sub-questions, with "What about Name?" for each
//! capitalised word of the question after the first.

mod flood;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Answer {
    /// A reply with this text and these tool calls `(id, name, arguments)`.
    Reply {
        text: String,
        tool_calls: Vec<(String, String, Value)>,
    },
    /// An error response, in the provider's error shape.
    Fail {
        status: u16,
        headers: Vec<(&'static str, &'static str)>,
        message: String,
    },
    /// No answer for this long, then the default one.
    Stall(Duration),
    /// No answer until the test lets it go (`notify_one`), then the next one.
    Held(Arc<tokio::sync::Notify>),
    /// A 200 whose body is not the API's format.
    Malformed,
    /// A reply of this many bytes of text, whole or streamed as asked, made
    /// as it is sent ([`ChatProvider::flood_sent`] counts what went out).
    Flood { bytes: usize },
    /// A response with this status and body, as it is (not the provider's
    /// shape): an internal service that is no provider, or a redirect
    /// (`location` set).
    Raw {
        status: u16,
        body: String,
        location: Option<String>,
    },
}

impl Answer {
    pub fn text(text: impl Into<String>) -> Self {
        Answer::Reply {
            text: text.into(),
            tool_calls: Vec::new(),
        }
    }

    pub fn tool_call(id: &str, name: &str, arguments: Value) -> Self {
        Answer::Reply {
            text: String::new(),
            tool_calls: vec![(id.into(), name.into(), arguments)],
        }
    }
}

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

/// The provider's state: its script, what it received, what usage it reported.
#[derive(Default)]
pub struct ChatProvider {
    /// Answers whatever key a request carries, or none: a server of a
    /// tenant's own, which the tests watch for keys that should not arrive.
    any_key: bool,
    script: Mutex<VecDeque<Answer>>,
    received: Mutex<Vec<Received>>,
    usage: Mutex<Vec<(u64, u64)>>,
    flood_sent: Arc<AtomicUsize>,
}

impl ChatProvider {
    /// A provider that asks for no key (see `any_key`).
    pub fn keyless() -> Self {
        Self {
            any_key: true,
            ..Self::default()
        }
    }

    /// Answers the next request so.
    pub fn then(&self, answer: Answer) -> &Self {
        self.script.lock().unwrap().push_back(answer);
        self
    }

    /// Drops the scripted answers not given yet: requests get the default again.
    pub fn forget_script(&self) {
        self.script.lock().unwrap().clear();
    }

    /// Every request received, in order.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// The last request's body.
    pub fn last_body(&self) -> Value {
        self.received
            .lock()
            .unwrap()
            .last()
            .map(|r| r.body.clone())
            .unwrap_or_default()
    }

    /// Bytes of [`Answer::Flood`] bodies handed to the connection so far.
    pub fn flood_sent(&self) -> usize {
        self.flood_sent.load(Ordering::Relaxed)
    }

    /// Usage `(input, output)` reported by every successful answer, in order.
    pub fn reported_usage(&self) -> Vec<(u64, u64)> {
        self.usage.lock().unwrap().clone()
    }

    fn record(&self, path: &str, headers: &HeaderMap, body: &Value) {
        self.received.lock().unwrap().push(Received {
            path: path.to_owned(),
            headers: headers.clone(),
            body: body.clone(),
        });
    }

    /// The answer due: scripted, or the default for `body`.
    async fn next(&self, body: &Value, texts: &[(String, String)]) -> Answer {
        loop {
            let scripted = self.script.lock().unwrap().pop_front();
            match scripted {
                Some(Answer::Stall(wait)) => tokio::time::sleep(wait).await,
                Some(Answer::Held(gate)) => gate.notified().await,
                Some(answer) => return answer,
                None => return default_answer(body, texts),
            }
        }
    }

    /// Usage for a reply: a word count of the prompt plus 7, and of the reply.
    fn usage_of(&self, texts: &[(String, String)], reply: &str, calls: usize) -> (u64, u64) {
        let words = |t: &str| t.split_whitespace().count() as u64;
        let input = texts.iter().map(|(_, t)| words(t)).sum::<u64>() + 7;
        let output = words(reply) + 5 * calls as u64 + 1;
        self.usage.lock().unwrap().push((input, output));
        (input, output)
    }
}

/// `(role, text)` of every message of an OpenAI- or Ollama-shaped body, and
/// Anthropic's `system` field and text blocks.
fn texts_of(body: &Value) -> Vec<(String, String)> {
    let mut texts = Vec::new();
    if let Some(system) = body["system"].as_str() {
        texts.push(("system".into(), system.to_owned()));
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or_default().to_owned();
        match &message["content"] {
            Value::String(text) => texts.push((role, text.clone())),
            Value::Array(blocks) => {
                for block in blocks {
                    let text = block["text"].as_str().or(block["content"].as_str());
                    if let Some(text) = text {
                        texts.push((role.clone(), text.to_owned()));
                    }
                }
            }
            _ => {}
        }
    }
    texts
}

fn default_answer(_body: &Value, texts: &[(String, String)]) -> Answer {
    if texts
        .iter()
        .any(|(role, text)| role == "system" && text.contains("reusable procedure"))
    {
        // A procedure with one step per tool the conversation called.
        let tools: Vec<&str> = texts
            .iter()
            .flat_map(|(_, text)| text.lines())
            .filter_map(|line| line.strip_prefix("assistant called tool "))
            .filter_map(|rest| rest.split_whitespace().next())
            .collect();
        let steps: Vec<Value> = tools
            .iter()
            .map(|tool| json!({"instruction": format!("Call {tool} with the customer's details"), "tool": tool}))
            .collect();
        return Answer::text(
            json!({"name": "learned procedure", "description": "Learned from a conversation",
                   "trigger_pattern": "(?i)\\bparcel\\b", "steps": steps})
            .to_string(),
        );
    }
    if texts
        .iter()
        .any(|(role, text)| role == "system" && text.contains("Read the latest messages"))
    {
        // Facts learned during a session: none unless a test scripts some.
        return Answer::text(json!({"facts": []}).to_string());
    }
    if texts
        .iter()
        .any(|(role, text)| role == "system" && text.contains("key_facts"))
    {
        let transcript: Vec<&str> = texts
            .iter()
            .filter(|(role, _)| role != "system")
            .flat_map(|(_, text)| text.split_whitespace())
            .take(12)
            .collect();
        return Answer::text(
            json!({"summary": format!("LLM summary: {}", transcript.join(" ")),
                   "key_facts": ["fact one from the model", "fact two from the model"]})
            .to_string(),
        );
    }
    let last_user = texts
        .iter()
        .rev()
        .find(|(role, _)| role == "user")
        .map(|(_, text)| text.as_str())
        .unwrap_or("");
    if texts
        .iter()
        .any(|(role, text)| role == "system" && text.contains("simple needs none"))
    {
        return Answer::text(sub_questions(last_user));
    }
    if last_user.contains("label an answer to a question as") {
        return Answer::text(judge(last_user));
    }
    if texts.iter().any(|(role, text)| {
        role == "system" && text.contains("You answer questions about past conversations")
    }) {
        return Answer::text(extract_answer(texts, last_user));
    }
    Answer::text(format!("echo: {last_user}"))
}

/// Sub-questions of a question, as a model asked to split it would give
/// them: one "What about Name?" per capitalised word after the first.
fn sub_questions(question: &str) -> String {
    let questions: Vec<String> = question
        .split(|c: char| !c.is_alphanumeric())
        .skip(1)
        .filter(|word| word.chars().next().is_some_and(char::is_uppercase))
        .map(|name| format!("What about {name}?"))
        .collect();
    json!({ "questions": questions }).to_string()
}

/// A LoCoMo judge: CORRECT when the generated answer holds the gold one.
fn judge(prompt: &str) -> String {
    // The last of each: the prompt's own example comes first.
    let line = |label: &str| {
        prompt
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix(label))
            .unwrap_or_default()
            .trim()
            .to_lowercase()
    };
    let (gold, generated) = (line("Gold answer:"), line("Generated answer:"));
    let correct = !gold.is_empty() && generated.contains(&gold);
    json!({"label": if correct { "CORRECT" } else { "WRONG" }}).to_string()
}

/// An answering model that can only read: the line of its system prompt
/// sharing the most words with the question (nothing when none shares one).
fn extract_answer(texts: &[(String, String)], question: &str) -> String {
    let words = |text: &str| -> std::collections::HashSet<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.len() > 3)
            .map(str::to_lowercase)
            .collect()
    };
    let asked = words(question);
    texts
        .iter()
        .filter(|(role, _)| role == "system")
        .flat_map(|(_, text)| text.lines())
        .map(|line| (words(line).intersection(&asked).count(), line))
        .filter(|(shared, _)| *shared > 0)
        .max_by_key(|(shared, _)| *shared)
        .map_or_else(|| "I do not know.".to_owned(), |(_, line)| line.to_owned())
}

/// Pieces a streamed reply is sent in: words with their following space.
fn pieces(text: &str) -> Vec<String> {
    text.split_inclusive(' ').map(str::to_owned).collect()
}

fn sse(events: Vec<(Option<&str>, Value)>, done: bool) -> Response {
    let mut body = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            body.push_str(&format!("event: {name}\n"));
        }
        body.push_str(&format!("data: {data}\n\n"));
    }
    if done {
        body.push_str("data: [DONE]\n\n");
    }
    ([("content-type", "text/event-stream")], body).into_response()
}

/// The response an [`Answer::Raw`] describes.
fn raw_response(answer: Answer) -> Response {
    let Answer::Raw {
        status,
        body,
        location,
    } = answer
    else {
        unreachable!("only raw answers")
    };
    let mut response = (StatusCode::from_u16(status).unwrap(), body).into_response();
    if let Some(location) = location {
        response
            .headers_mut()
            .insert("location", location.parse().unwrap());
    }
    response
}

fn with_headers(mut response: Response, headers: &[(&'static str, &'static str)]) -> Response {
    for (name, value) in headers {
        response.headers_mut().insert(*name, value.parse().unwrap());
    }
    response
}

fn openai_error(status: u16, message: &str) -> Response {
    let kind = match status {
        429 => "rate_limit_exceeded",
        401 => "invalid_request_error",
        _ => "server_error",
    };
    (
        StatusCode::from_u16(status).unwrap(),
        Json(json!({"error": {"message": message, "type": kind, "param": null, "code": null}})),
    )
        .into_response()
}

async fn openai_answer(provider: &ChatProvider, body: Value) -> Response {
    let texts = texts_of(&body);
    let (text, calls) = match provider.next(&body, &texts).await {
        Answer::Reply { text, tool_calls } => (text, tool_calls),
        Answer::Fail {
            status,
            headers,
            message,
        } => return with_headers(openai_error(status, &message), &headers),
        Answer::Malformed if body["stream"] == json!(true) => {
            return (
                [("content-type", "text/event-stream")],
                "data: {\"choices\": [\n\n",
            )
                .into_response();
        }
        Answer::Malformed => return Json(json!({"object": "list", "data": []})).into_response(),
        Answer::Flood { bytes } => {
            let streamed = body["stream"] == json!(true);
            return flood::flood(
                flood::Wire::OpenAi,
                streamed,
                bytes,
                provider.flood_sent.clone(),
            );
        }
        raw @ Answer::Raw { .. } => return raw_response(raw),
        Answer::Stall(_) | Answer::Held(_) => unreachable!("stalls are waited out"),
    };
    let (input, output) = provider.usage_of(&texts, &text, calls.len());
    let usage = json!({"prompt_tokens": input, "completion_tokens": output,
                       "total_tokens": input + output});
    let model = body["model"]
        .as_str()
        .unwrap_or("gpt-4o-2024-08-06")
        .to_owned();
    let finish = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-123", "object": "chat.completion.chunk", "created": 1_741_569_952,
               "model": model, "system_fingerprint": "fp_44709d6fcb",
               "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]})
    };
    if body["stream"] == json!(true) {
        let mut events = vec![(
            None,
            chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        )];
        for piece in pieces(&text) {
            events.push((None, chunk(json!({"content": piece}), Value::Null)));
        }
        for (index, (id, name, arguments)) in calls.iter().enumerate() {
            let arguments = arguments.to_string();
            let (head, tail) = arguments.split_at(arguments.len() / 2);
            events.push((
                None,
                chunk(
                    json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}}]}),
                    Value::Null,
                ),
            ));
            for part in [head, tail] {
                events.push((
                    None,
                    chunk(
                        json!({"tool_calls": [{"index": index,
                    "function": {"arguments": part}}]}),
                        Value::Null,
                    ),
                ));
            }
        }
        events.push((None, chunk(json!({}), json!(finish))));
        if body["stream_options"]["include_usage"] == json!(true) {
            events.push((
                None,
                json!({"id": "chatcmpl-123", "object": "chat.completion.chunk",
                "created": 1_741_569_952, "model": model, "choices": [], "usage": usage}),
            ));
        }
        return sse(events, true);
    }
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()}})
        })
        .collect();
    let mut message = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }, "refusal": null});
    if !tool_calls.is_empty() {
        message["tool_calls"] = json!(tool_calls);
    }
    Json(
        json!({"id": "chatcmpl-123", "object": "chat.completion", "created": 1_741_569_952,
        "model": model, "choices": [{"index": 0, "message": message, "logprobs": null,
        "finish_reason": finish}], "usage": usage}),
    )
    .into_response()
}

async fn openai(
    State(provider): State<Arc<ChatProvider>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    provider.record("/v1/chat/completions", &headers, &body);
    if !provider.any_key
        && headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("Bearer sk-test")
    {
        return openai_error(401, "Incorrect API key provided.");
    }
    openai_answer(&provider, body).await
}

async fn azure(
    State(provider): State<Arc<ChatProvider>>,
    Path(deployment): Path<String>,
    Query(query): Query<std::collections::HashMap<String, String>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let path = format!(
        "/openai/deployments/{deployment}/chat/completions?api-version={}",
        query.get("api-version").map(String::as_str).unwrap_or("")
    );
    provider.record(&path, &headers, &body);
    if !provider.any_key
        && headers.get("api-key").and_then(|v| v.to_str().ok()) != Some("azure-key")
    {
        return openai_error(401, "Access denied due to invalid subscription key.");
    }
    if deployment != "chat-4o" || !query.contains_key("api-version") {
        return openai_error(404, "The API deployment for this resource does not exist.");
    }
    openai_answer(&provider, body).await
}

fn anthropic_error(status: u16, message: &str) -> Response {
    let kind = match status {
        429 => "rate_limit_error",
        401 => "authentication_error",
        529 => "overloaded_error",
        400 => "invalid_request_error",
        _ => "api_error",
    };
    (
        StatusCode::from_u16(status).unwrap(),
        Json(json!({"type": "error", "error": {"type": kind, "message": message}})),
    )
        .into_response()
}

async fn anthropic(
    State(provider): State<Arc<ChatProvider>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    provider.record("/v1/messages", &headers, &body);
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if !provider.any_key && header("x-api-key") != Some("ant-key") {
        return anthropic_error(401, "invalid x-api-key");
    }
    if header("anthropic-version").is_none() || body["max_tokens"].as_u64().is_none() {
        return anthropic_error(400, "max_tokens: Field required");
    }
    let texts = texts_of(&body);
    let (text, calls) = match provider.next(&body, &texts).await {
        Answer::Reply { text, tool_calls } => (text, tool_calls),
        Answer::Fail {
            status,
            headers,
            message,
        } => return with_headers(anthropic_error(status, &message), &headers),
        Answer::Malformed if body["stream"] == json!(true) => {
            return sse(vec![(Some("message_start"), json!("not an event"))], false);
        }
        Answer::Malformed => return Json(json!({"type": "message"})).into_response(),
        Answer::Flood { bytes } => {
            let streamed = body["stream"] == json!(true);
            return flood::flood(
                flood::Wire::Anthropic,
                streamed,
                bytes,
                provider.flood_sent.clone(),
            );
        }
        raw @ Answer::Raw { .. } => return raw_response(raw),
        Answer::Stall(_) | Answer::Held(_) => unreachable!("stalls are waited out"),
    };
    let (input, output) = provider.usage_of(&texts, &text, calls.len());
    let model = body["model"].as_str().unwrap_or_default().to_owned();
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    if body["stream"] == json!(true) {
        let mut events = vec![
            (
                Some("message_start"),
                json!({"type": "message_start", "message": {"id": "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY", "type": "message", "role": "assistant", "content": [], "model": model, "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": input, "output_tokens": 1}}}),
            ),
            (Some("ping"), json!({"type": "ping"})),
        ];
        let mut index = 0;
        if !text.is_empty() {
            events.push((Some("content_block_start"), json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})));
            for piece in pieces(&text) {
                events.push((Some("content_block_delta"), json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}})));
            }
            events.push((
                Some("content_block_stop"),
                json!({"type": "content_block_stop", "index": 0}),
            ));
            index = 1;
        }
        for (id, name, arguments) in &calls {
            events.push((Some("content_block_start"), json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
            let arguments = arguments.to_string();
            let (head, tail) = arguments.split_at(arguments.len() / 2);
            for part in ["", head, tail] {
                events.push((Some("content_block_delta"), json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": part}})));
            }
            events.push((
                Some("content_block_stop"),
                json!({"type": "content_block_stop", "index": index}),
            ));
            index += 1;
        }
        events.push((Some("message_delta"), json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": output}})));
        events.push((Some("message_stop"), json!({"type": "message_stop"})));
        return sse(events, false);
    }
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    for (id, name, arguments) in &calls {
        content.push(json!({"type": "tool_use", "id": id, "name": name, "input": arguments}));
    }
    Json(
        json!({"id": "msg_013Zva2CMHLNnXjNJJKqJ2EF", "type": "message", "role": "assistant",
        "model": model, "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": input, "output_tokens": output}}),
    )
    .into_response()
}

async fn ollama(
    State(provider): State<Arc<ChatProvider>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    provider.record("/api/chat", &headers, &body);
    let model = body["model"].as_str().unwrap_or_default().to_owned();
    if model == "missing" {
        return (
            StatusCode::NOT_FOUND,
            Json(json!({"error": format!("model \"{model}\" not found, try pulling it first")})),
        )
            .into_response();
    }
    let texts = texts_of(&body);
    // Ollama streams unless told not to.
    let stream = body["stream"] != json!(false);
    let (text, calls) = match provider.next(&body, &texts).await {
        Answer::Reply { text, tool_calls } => (text, tool_calls),
        Answer::Fail {
            status,
            headers,
            message,
        } => {
            let response = (
                StatusCode::from_u16(status).unwrap(),
                Json(json!({"error": message})),
            );
            return with_headers(response.into_response(), &headers);
        }
        Answer::Malformed => return "{\"model\": \"llama3.2\", \"message\": ".into_response(),
        Answer::Flood { bytes } => {
            return flood::flood(
                flood::Wire::Ollama,
                stream,
                bytes,
                provider.flood_sent.clone(),
            );
        }
        raw @ Answer::Raw { .. } => return raw_response(raw),
        Answer::Stall(_) | Answer::Held(_) => unreachable!("stalls are waited out"),
    };
    let (input, output) = provider.usage_of(&texts, &text, calls.len());
    let created = "2023-12-12T14:13:43.416799Z";
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(_, name, arguments)| json!({"function": {"name": name, "arguments": arguments}}))
        .collect();
    let last = |content: &str| {
        let mut message = json!({"role": "assistant", "content": content});
        if !tool_calls.is_empty() {
            message["tool_calls"] = json!(tool_calls);
        }
        json!({"model": model, "created_at": created, "message": message, "done": true,
            "done_reason": "stop", "total_duration": 5_191_566_416u64, "load_duration": 2_154_458,
            "prompt_eval_count": input, "prompt_eval_duration": 383_809_000,
            "eval_count": output, "eval_duration": 4_799_921_000u64})
    };
    if !stream {
        return Json(last(&text)).into_response();
    }
    let mut lines = String::new();
    for piece in pieces(&text) {
        let part = json!({"model": model, "created_at": created,
            "message": {"role": "assistant", "content": piece}, "done": false});
        lines.push_str(&format!("{part}\n"));
    }
    lines.push_str(&format!("{}\n", last("")));
    ([("content-type", "application/x-ndjson")], lines).into_response()
}

/// Starts the provider on a free loopback port; returns its base URL.
pub async fn serve(provider: Arc<ChatProvider>) -> String {
    let app = axum::Router::new()
        .route("/v1/chat/completions", post(openai))
        .route(
            "/openai/deployments/{deployment}/chat/completions",
            post(azure),
        )
        .route("/v1/messages", post(anthropic))
        .route("/api/chat", post(ollama))
        .with_state(provider);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{address}")
}
