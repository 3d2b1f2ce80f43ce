//! The OpenAI-compatible door over HTTP, against a loopback Ollama
//! (`octopus_testkit::fake_chat`): a completion in OpenAI's shape with the
//! memory it used, a resent history stored once, a stream of chunks ending
//! `[DONE]`, a tool round, the errors that name what is wrong, and models.
//! The official OpenAI clients are run against a real server by
//! `crates/octopus-cli/tests/it/clients.rs`.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use octopus_testkit::fake_chat::{Answer, ChatProvider};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::harness::{Reply, TestServer};

struct Proxy {
    server: TestServer,
    fake: Arc<ChatProvider>,
    key: String,
    agent: String,
}

async fn start() -> Proxy {
    let (server, fake, url) = TestServer::with_fake_chat().await;
    let (_, key) = server.tenant("acme").await;
    let agent = server
        .ok(
            Method::POST,
            "/v1/agents",
            &key,
            Some(
                json!({"name": "support", "system_prompt": "You are Acme's support agent.",
                "llm": {"provider": "ollama", "model": "llama3.2", "base_url": url}}),
            ),
            StatusCode::CREATED,
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    Proxy {
        server,
        fake,
        key,
        agent,
    }
}

impl Proxy {
    /// `POST /v1/chat/completions` with `body` and extra headers.
    async fn complete(&self, body: Value, headers: &[(&str, &str)]) -> Reply {
        let mut request = Request::builder()
            .method(Method::POST)
            .uri("/v1/chat/completions")
            .header(header::AUTHORIZATION, format!("Bearer {}", self.key))
            .header(header::CONTENT_TYPE, "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        self.server
            .send(request.body(Body::from(body.to_string())).unwrap())
            .await
    }

    /// A streamed completion's `data:` payloads, in order.
    async fn stream(&self, body: Value) -> Vec<String> {
        let request = Request::builder()
            .method(Method::POST)
            .uri("/v1/chat/completions")
            .header(header::AUTHORIZATION, format!("Bearer {}", self.key))
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        let response = self.server.app.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "text/event-stream"
        );
        assert!(response.headers().contains_key("x-octopus-conversation"));
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec())
            .unwrap()
            .split("\n\n")
            .filter_map(|block| {
                block
                    .lines()
                    .find_map(|l| l.strip_prefix("data: "))
                    .map(str::to_owned)
            })
            .collect()
    }

    /// Every message stored in the conversation, oldest first.
    async fn stored(&self, conversation: &str) -> Vec<Value> {
        let episodes = self
            .server
            .ok(
                Method::GET,
                &format!("/v1/episodes?conversation_id={conversation}"),
                &self.key,
                None,
                StatusCode::OK,
            )
            .await;
        let mut messages = Vec::new();
        for episode in episodes["items"].as_array().unwrap().iter().rev() {
            let id = episode["id"].as_str().unwrap();
            let episode = self
                .server
                .ok(
                    Method::GET,
                    &format!("/v1/episodes/{id}"),
                    &self.key,
                    None,
                    StatusCode::OK,
                )
                .await;
            messages.extend(episode["messages"].as_array().unwrap().clone());
        }
        messages
    }
}

fn contents(messages: &[Value]) -> Vec<(&str, &str)> {
    messages
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap(),
                m["content"].as_str().unwrap_or(""),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_answers_in_openais_shape_and_stores_a_resent_history_once() {
    let proxy = start().await;
    let first = proxy
        .complete(
            json!({"model": "support", "user": "dana", "temperature": 0.2,
                   "messages": [{"role": "system", "content": "Be terse."},
                                {"role": "user", "content": "My order number is 4417."}]}),
            &[],
        )
        .await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let body = &first.body;
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["model"], "support");
    assert!(body["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert!(body["created"].as_i64().unwrap() > 1_700_000_000);
    let choice = &body["choices"][0];
    assert_eq!(choice["index"], 0);
    assert_eq!(choice["finish_reason"], "stop");
    assert_eq!(choice["message"]["role"], "assistant");
    assert_eq!(
        choice["message"]["content"],
        "echo: My order number is 4417."
    );
    assert!(choice["message"].get("tool_calls").is_none());
    let (input, output) = *proxy.fake.reported_usage().last().unwrap();
    assert_eq!(
        body["usage"],
        json!({"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output})
    );
    let conversation = first.headers["x-octopus-conversation"].to_str().unwrap();
    assert_eq!(body["octopus"]["conversation_id"], conversation);
    assert_eq!(body["octopus"]["provider"], "ollama");
    assert_eq!(body["octopus"]["trace"]["budget"], 8000);

    // The client resends everything, as OpenAI clients do: only the new
    // user message is stored, and the model sees the stored history.
    let second = proxy
        .complete(
            json!({"model": proxy.agent, "messages": [
                {"role": "system", "content": "Be terse."},
                {"role": "user", "content": "My order number is 4417."},
                {"role": "assistant", "content": "echo: My order number is 4417."},
                {"role": "user", "content": [{"type": "text", "text": "Where is"}, {"type": "text", "text": "my order?"}]}]}),
            &[("x-octopus-user", "dana")],
        )
        .await;
    assert_eq!(second.status, StatusCode::OK, "{}", second.body);
    assert_eq!(
        second.headers["x-octopus-conversation"].to_str().unwrap(),
        conversation
    );
    assert_eq!(
        contents(&proxy.stored(conversation).await),
        [
            ("user", "My order number is 4417."),
            ("assistant", "echo: My order number is 4417."),
            ("user", "Where is\nmy order?"),
            ("assistant", "echo: Where is\nmy order?"),
        ]
    );
    // The model got the agent's system prompt (not the client's) and the
    // earlier turn from memory.
    let sent = proxy.fake.last_body();
    let sent_text = sent["messages"].to_string();
    assert!(
        sent_text.contains("You are Acme's support agent."),
        "{sent}"
    );
    assert!(!sent_text.contains("Be terse."), "{sent}");
    assert!(sent_text.contains("4417"), "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_with_no_conversation_gets_one_and_a_named_conversation_is_continued() {
    let proxy = start().await;
    let ask = |text: &str| json!({"model": "support", "user": "erin", "messages": [{"role": "user", "content": text}]});
    let first = proxy.complete(ask("Hello"), &[]).await;
    let conversation = first.headers["x-octopus-conversation"]
        .to_str()
        .unwrap()
        .to_owned();
    // A second conversation of the same user, named explicitly.
    let other = proxy
        .server
        .ok(
            Method::POST,
            "/v1/conversations",
            &proxy.key,
            Some(json!({"agent_id": proxy.agent, "user_id": "erin"})),
            StatusCode::CREATED,
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let named = proxy
        .complete(
            ask("Into the other one"),
            &[("x-octopus-conversation", &other)],
        )
        .await;
    assert_eq!(named.status, StatusCode::OK, "{}", named.body);
    assert_eq!(named.headers["x-octopus-conversation"], other.as_str());
    assert_eq!(
        contents(&proxy.stored(&other).await),
        [
            ("user", "Into the other one"),
            ("assistant", "echo: Into the other one")
        ]
    );
    assert_eq!(proxy.stored(&conversation).await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_completion_is_chunks_ending_with_done() {
    let proxy = start().await;
    proxy.fake.then(Answer::text("One two three four."));
    let events = proxy
        .stream(json!({"model": "support", "user": "dana", "stream": true,
                       "messages": [{"role": "user", "content": "Count"}]}))
        .await;
    assert_eq!(events.last().unwrap(), "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    assert!(chunks.iter().all(|c| c["object"] == "chat.completion.chunk"
        && c["id"] == chunks[0]["id"]
        && c["model"] == "support"));
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "One two three four.");
    assert!(chunks.len() >= 6, "the text came in pieces: {chunks:?}");
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    let (input, output) = *proxy.fake.reported_usage().last().unwrap();
    assert_eq!(last["usage"]["prompt_tokens"], input);
    assert_eq!(last["usage"]["completion_tokens"], output);
    assert!(last["octopus"]["trace"].is_object());

    // Asked for, usage comes in a last chunk of no choices, as OpenAI sends it.
    let events = proxy
        .stream(json!({"model": "support", "user": "dana", "stream": true,
                       "stream_options": {"include_usage": true},
                       "messages": [{"role": "user", "content": "Again"}]}))
        .await;
    let usage: Value = serde_json::from_str(&events[events.len() - 2]).unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert!(usage["usage"]["total_tokens"].as_u64().unwrap() > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_round_passes_the_calls_out_and_the_results_in() {
    let proxy = start().await;
    proxy.fake.then(Answer::tool_call(
        "call_1",
        "order_status",
        json!({"order": "4417"}),
    ));
    proxy.fake.then(Answer::text("It ships today."));
    let tools = json!([{"type": "function", "function": {"name": "order_status",
        "description": "Look up an order", "parameters": {"type": "object",
        "properties": {"order": {"type": "string"}}, "required": ["order"]}}}]);
    let question = json!({"role": "user", "content": "Where is order 4417?"});
    let asked = proxy
        .complete(
            json!({"model": "support", "user": "dana", "tools": tools, "messages": [question]}),
            &[],
        )
        .await;
    assert_eq!(asked.status, StatusCode::OK, "{}", asked.body);
    let choice = &asked.body["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["content"], Value::Null);
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!(call["type"], "function");
    assert_eq!(call["function"]["name"], "order_status");
    // Arguments are a JSON string, as OpenAI sends them.
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"order": "4417"}));
    let offered = proxy.fake.last_body();
    assert_eq!(offered["tools"][0]["function"]["name"], "order_status");

    let id = call["id"].as_str().unwrap();
    let answered = proxy
        .complete(
            json!({"model": "support", "user": "dana", "tools": tools, "messages": [
                question,
                {"role": "assistant", "content": null, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": id, "content": "shipped, arrives Friday"}]}),
            &[],
        )
        .await;
    assert_eq!(answered.status, StatusCode::OK, "{}", answered.body);
    assert_eq!(
        answered.body["choices"][0]["message"]["content"],
        "It ships today."
    );
    let sent = proxy.fake.last_body()["messages"].to_string();
    assert!(sent.contains("shipped, arrives Friday"), "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_completions_name_the_problem_and_store_nothing() {
    let proxy = start().await;
    let user = |text: &str| json!({"role": "user", "content": text});
    let cases = [
        (
            json!({"model": "nobody", "user": "dana", "messages": [user("Hi")]}),
            StatusCode::NOT_FOUND,
            "agent_not_found",
            "nobody",
        ),
        (
            json!({"model": "support", "messages": [user("Hi")]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
            "user",
        ),
        (
            json!({"model": "support", "user": "dana", "messages": [user("Hi"), {"role": "assistant", "content": "Hello"}]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
            "messages",
        ),
        (
            json!({"model": "support", "user": "dana", "messages": [{"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]}]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
            "messages[0].content",
        ),
        (
            json!({"model": "support", "user": "dana", "messages": [{"role": "wizard", "content": "Hi"}]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
            "messages[0].role",
        ),
        (
            json!({"model": "support", "user": "dana", "messages": [user("Hi")],
                   "tools": [{"type": "code_interpreter", "function": {"name": "x"}}]}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
            "tools[0].type",
        ),
    ];
    for (body, status, code, names) in cases {
        let reply = proxy.complete(body.clone(), &[]).await;
        assert_eq!(reply.status, status, "{body}: {}", reply.body);
        assert_eq!(reply.code(), code, "{body}");
        assert!(
            reply.body.to_string().contains(names),
            "{body}: {} does not name {names}",
            reply.body
        );
    }
    let reply = proxy
        .complete(
            json!({"model": "support", "user": "dana", "messages": [user("Hi")]}),
            &[("x-octopus-conversation", "not-an-id")],
        )
        .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(reply.body.to_string().contains("x-octopus-conversation"));
    assert!(proxy.fake.received().is_empty(), "no model was called");
    let conversations = proxy
        .server
        .ok(
            Method::GET,
            "/v1/conversations",
            &proxy.key,
            None,
            StatusCode::OK,
        )
        .await;
    assert_eq!(conversations["items"], json!([]), "nothing was stored");

    // Another user's conversation is refused by name, and keeps its messages.
    let dana = proxy
        .complete(
            json!({"model": "support", "user": "dana", "messages": [user("Mine")]}),
            &[],
        )
        .await;
    let danas = dana.headers["x-octopus-conversation"].to_str().unwrap();
    let reply = proxy
        .complete(
            json!({"model": "support", "user": "mallory", "messages": [user("Also mine")]}),
            &[("x-octopus-conversation", danas)],
        )
        .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert!(reply.body.to_string().contains("x-octopus-conversation"));
    assert_eq!(proxy.stored(danas).await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_are_the_tenants_active_agents_and_a_foreign_conversation_is_not_found() {
    let proxy = start().await;
    let second = proxy.server.agent(&proxy.key, "sales").await;
    let retired = proxy.server.agent(&proxy.key, "retired").await;
    proxy
        .server
        .ok(
            Method::PATCH,
            &format!("/v1/agents/{retired}"),
            &proxy.key,
            Some(json!({"is_active": false})),
            StatusCode::OK,
        )
        .await;
    let (_, other_key) = proxy.server.tenant("globex").await;
    proxy.server.agent(&other_key, "globex-bot").await;

    let models = proxy
        .server
        .ok(Method::GET, "/v1/models", &proxy.key, None, StatusCode::OK)
        .await;
    assert_eq!(models["object"], "list");
    let mut names: Vec<(&str, &str)> = models["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            assert_eq!(m["object"], "model");
            (
                m["id"].as_str().unwrap(),
                m["octopus"]["agent_id"].as_str().unwrap(),
            )
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            ("sales", second.as_str()),
            ("support", proxy.agent.as_str())
        ]
    );

    // A conversation of another tenant is not found, and nothing of it shows.
    let globex = proxy
        .server
        .ok(
            Method::POST,
            "/v1/conversations",
            &other_key,
            Some(json!({"agent_id": proxy.server.agent(&other_key, "globex-2").await, "user_id": "dana"})),
            StatusCode::CREATED,
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let reply = proxy
        .complete(
            json!({"model": "support", "user": "dana", "messages": [{"role": "user", "content": "Hi"}]}),
            &[("x-octopus-conversation", &globex)],
        )
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "{}", reply.body);
    assert_eq!(reply.code(), "conversation_not_found");
}
