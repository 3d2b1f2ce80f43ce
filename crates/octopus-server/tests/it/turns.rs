//! `POST /v1/conversations/{id}/turns` over HTTP, against a loopback Ollama
//! (`octopus_testkit::fake_chat`): a reply with its trace, a stream of
//! server-sent events, and a provider failure that keeps the user's message.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use octopus_testkit::fake_chat::{Answer, ChatProvider};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::harness::TestServer;

struct Chat {
    server: TestServer,
    fake: Arc<ChatProvider>,
    key: String,
    conversation: String,
}

async fn start() -> Chat {
    let (server, fake, url) = TestServer::with_fake_chat().await;
    let (_, key) = server.tenant("acme").await;
    let (_, conversation) = server.chat_agent(&key, &url, json!({})).await;
    Chat {
        server,
        fake,
        key,
        conversation,
    }
}

impl Chat {
    fn path(&self) -> String {
        format!("/v1/conversations/{}/turns", self.conversation)
    }

    async fn messages(&self) -> Vec<Value> {
        self.server
            .conversation_messages(&self.key, &self.conversation)
            .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_answers_with_the_reply_its_usage_and_the_trace() {
    let chat = start().await;
    let reply = chat
        .server
        .ok(
            Method::POST,
            &chat.path(),
            &chat.key,
            Some(json!({"message": "Hello there"})),
            StatusCode::OK,
        )
        .await;
    assert_eq!(reply["reply"]["content"], "echo: Hello there");
    assert_eq!(reply["reply"]["role"], "assistant");
    assert_eq!(reply["provider"], "ollama");
    assert_eq!(reply["tool_calls"], json!([]));
    let (input, output) = *chat.fake.reported_usage().last().unwrap();
    assert_eq!(
        reply["usage"],
        json!({"input_tokens": input, "output_tokens": output})
    );
    assert_eq!(reply["reply"]["usage"], reply["usage"]);
    assert_eq!(reply["trace"]["budget"], 8000);
    assert_eq!(reply["stored_message_ids"].as_array().unwrap().len(), 1);
    let messages = chat.messages().await;
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["id"], reply["stored_message_ids"][0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_turn_is_server_sent_events_ending_with_done() {
    let chat = start().await;
    chat.fake.then(Answer::text("One two three four."));
    let request = Request::builder()
        .method(Method::POST)
        .uri(chat.path())
        .header(header::AUTHORIZATION, format!("Bearer {}", chat.key))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(
            json!({"message": "Count", "stream": true}).to_string(),
        ))
        .unwrap();
    let response = chat.server.app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()[header::CONTENT_TYPE],
        "text/event-stream"
    );
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let events: Vec<(String, Value)> = text
        .split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let name = block
                .lines()
                .find_map(|l| l.strip_prefix("event: "))
                .unwrap()
                .to_owned();
            let data = block
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap();
            (name, serde_json::from_str(data).unwrap())
        })
        .collect();
    let deltas: String = events
        .iter()
        .filter(|(name, _)| name == "delta")
        .map(|(_, data)| data["text"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, "One two three four.");
    assert!(events.iter().filter(|(n, _)| n == "delta").count() >= 4);
    let (last, done) = events.last().unwrap();
    assert_eq!(last, "done");
    assert_eq!(done["reply"]["content"], "One two three four.");
    assert!(done["reply"]["id"].is_string());
    assert_eq!(done["stored_message_ids"].as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_failure_is_a_502_naming_it_and_keeps_only_the_user_message() {
    let chat = start().await;
    chat.fake.then(Answer::Fail {
        status: 500,
        headers: Vec::new(),
        message: "out of memory".into(),
    });
    let reply = chat
        .server
        .call(
            Method::POST,
            &chat.path(),
            &chat.key,
            Some(json!({"message": "Are you there?"})),
        )
        .await;
    assert_eq!(reply.status, StatusCode::BAD_GATEWAY, "{}", reply.body);
    assert_eq!(reply.code(), "llm_provider_failed");
    assert_eq!(reply.body["error"]["provider"], "ollama");
    assert_eq!(reply.body["error"]["fault"], "provider");
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("out of memory")
    );
    let messages = chat.messages().await;
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0]["content"], "Are you there?");

    chat.fake.then(Answer::Fail {
        status: 429,
        headers: vec![("retry-after", "7")],
        message: "slow down".into(),
    });
    let reply = chat
        .server
        .call(
            Method::POST,
            &chat.path(),
            &chat.key,
            Some(json!({"message": "Now?"})),
        )
        .await;
    assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(reply.code(), "llm_provider_busy");
    assert_eq!(reply.body["error"]["fault"], "busy");
    assert_eq!(reply.headers[header::RETRY_AFTER], "7");

    let reply = chat
        .server
        .ok(
            Method::POST,
            &chat.path(),
            &chat.key,
            Some(json!({"message": "And now?"})),
            StatusCode::OK,
        )
        .await;
    assert_eq!(reply["reply"]["content"], "echo: And now?");
    assert_eq!(
        chat.messages().await.len(),
        4,
        "two kept user messages, then a full turn"
    );

    // Both a message and tool results: a 422 naming the problem.
    let reply = chat
        .server
        .call(
            Method::POST,
            &chat.path(),
            &chat.key,
            Some(json!({"message": "x", "tool_results": [{"tool_call_id": "a", "content": "b"}]})),
        )
        .await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    // Tool results when nothing waits for them: a conflict.
    let reply = chat
        .server
        .call(
            Method::POST,
            &chat.path(),
            &chat.key,
            Some(json!({"tool_results": [{"tool_call_id": "a", "content": "b"}]})),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CONFLICT);
    assert_eq!(reply.code(), "no_pending_tool_calls");
}

/// One turn through the API, insisting on 200; returns the reply's body.
async fn take_turn(chat: &Chat, body: Value) -> Value {
    chat.server
        .ok(
            Method::POST,
            &chat.path(),
            &chat.key,
            Some(body),
            StatusCode::OK,
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn later_turns_see_earlier_tool_rounds_and_unanswered_calls_are_recorded_as_abandoned() {
    let chat = start().await;
    let tools = json!([{"name": "get_order_status", "parameters": {"type": "object"}}]);
    chat.fake.then(Answer::tool_call(
        "call_1",
        "get_order_status",
        json!({"order": "8821"}),
    ));
    let first = take_turn(
        &chat,
        json!({"message": "Where is order 8821?", "tools": tools}),
    )
    .await;
    let call = first["reply"]["tool_calls"][0]["tool_call_id"]
        .as_str()
        .unwrap()
        .to_owned();
    chat.fake.then(Answer::text("It shipped with FedEx."));
    take_turn(
        &chat,
        json!({"tool_results": [{"tool_call_id": call, "content": "shipped with FedEx"}], "tools": tools}),
    )
    .await;

    // The next turn's history holds the round, in Ollama's shape.
    chat.fake
        .then(Answer::text("The lookup said it shipped with FedEx."));
    take_turn(&chat, json!({"message": "What did the order lookup say?"})).await;
    let sent = chat.fake.last_body()["messages"]
        .as_array()
        .unwrap()
        .clone();
    let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    let round = sent
        .iter()
        .position(|m| m["tool_calls"][0]["function"]["name"] == "get_order_status")
        .unwrap_or_else(|| panic!("no tool call in the history sent: {sent:?}"));
    assert_eq!(
        sent[round]["tool_calls"][0]["function"]["arguments"],
        json!({"order": "8821"})
    );
    assert_eq!(roles[round + 1], "tool", "{roles:?}");
    assert_eq!(sent[round + 1]["content"], "shipped with FedEx");
    assert_eq!(sent[round + 2]["content"], "It shipped with FedEx.");

    // A new message while a call is pending: the call is recorded as
    // abandoned, before the message, and the turn goes on.
    chat.fake.then(Answer::tool_call(
        "call_2",
        "get_order_status",
        json!({"order": "9000"}),
    ));
    take_turn(&chat, json!({"message": "And order 9000?", "tools": tools})).await;
    chat.fake.then(Answer::text("Sure."));
    let reply = take_turn(&chat, json!({"message": "Never mind, thanks."})).await;
    assert_eq!(
        reply["stored_message_ids"].as_array().unwrap().len(),
        2,
        "{reply}"
    );
    let stored = chat.messages().await;
    let abandoned = &stored[stored.len() - 3];
    assert_eq!(abandoned["role"], "tool");
    assert_eq!(abandoned["id"], reply["stored_message_ids"][0]);
    assert_eq!(abandoned["tool_calls"][0]["is_error"], true);
    assert_eq!(
        abandoned["tool_calls"][0]["result"],
        json!({"abandoned": true})
    );
    assert_eq!(stored[stored.len() - 2]["content"], "Never mind, thanks.");
    // What the model was sent pairs every call with its result: the call
    // still unanswered when the message came was left out.
    let sent = chat.fake.last_body()["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        !sent
            .iter()
            .any(|m| m["tool_calls"][0]["function"]["arguments"] == json!({"order": "9000"})),
        "{sent:?}"
    );
    // From the next turn on, the model sees the call and that it was abandoned.
    chat.fake.then(Answer::text("Bye."));
    take_turn(&chat, json!({"message": "Bye"})).await;
    let sent = chat.fake.last_body()["messages"]
        .as_array()
        .unwrap()
        .clone();
    let call = sent
        .iter()
        .position(|m| m["tool_calls"][0]["function"]["arguments"] == json!({"order": "9000"}))
        .unwrap_or_else(|| panic!("{sent:?}"));
    assert!(
        sent[call + 1]["content"]
            .as_str()
            .unwrap()
            .starts_with("abandoned")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_budget_keeps_the_latest_exchange_and_an_empty_system_prompt_is_not_sent() {
    let chat = start().await;
    let agent = chat
        .server
        .ok(
            Method::GET,
            &format!("/v1/conversations/{}", chat.conversation),
            &chat.key,
            None,
            StatusCode::OK,
        )
        .await["agent_id"]
        .as_str()
        .unwrap()
        .to_owned();
    chat.server
        .ok(
            Method::PATCH,
            &format!("/v1/agents/{agent}"),
            &chat.key,
            Some(json!({"system_prompt": "", "memory": {"max_working_memory_tokens": 300}})),
            StatusCode::OK,
        )
        .await;
    for turn in 0..4 {
        take_turn(&chat, json!({"message": format!("Turn {turn}: {}", "tell me more about the weather. ".repeat(8))})).await;
    }
    let reply = take_turn(&chat, json!({"message": "And tomorrow?"})).await;
    let sent = chat.fake.last_body()["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        sent.iter().all(|m| m["role"] != "system"),
        "no empty system message: {sent:?}"
    );
    let texts: Vec<&str> = sent
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert!(
        texts.iter().any(|t| t.starts_with("Turn 3:")),
        "the previous message is kept: {texts:?}"
    );
    assert!(
        texts.iter().any(|t| t.starts_with("echo: Turn 3:")),
        "and its answer: {texts:?}"
    );
    assert!(
        !texts.iter().any(|t| t.starts_with("Turn 0:")),
        "older history went: {texts:?}"
    );
    let pruned = reply["trace"]["pruned"].as_array().unwrap();
    assert!(!pruned.is_empty());
    assert!(
        pruned
            .iter()
            .all(|p| p["block"] == "history" && p["reason"] == "oldest_history"),
        "{pruned:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_tool_round_in_one_turn_is_answered_though_ollama_repeats_the_call_id() {
    let chat = start().await;
    let tools = json!([{"name": "get_order_status", "parameters": {"type": "object"}}]);
    chat.fake.then(Answer::tool_call(
        "call_1",
        "get_order_status",
        json!({"order": "1"}),
    ));
    let first = take_turn(
        &chat,
        json!({"message": "Where are orders 1 and 2?", "tools": tools}),
    )
    .await;
    let call = first["reply"]["tool_calls"][0]["tool_call_id"]
        .as_str()
        .unwrap()
        .to_owned();
    chat.fake.then(Answer::tool_call(
        "call_2",
        "get_order_status",
        json!({"order": "2"}),
    ));
    let second = take_turn(
        &chat,
        json!({"tool_results": [{"tool_call_id": call, "content": "order 1 shipped"}], "tools": tools}),
    )
    .await;
    // Ollama numbers each reply's calls from 0: the same id comes again.
    let again = second["reply"]["tool_calls"][0]["tool_call_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(again, call, "the fake speaks Ollama's numbering");
    chat.fake
        .then(Answer::text("Order 1 shipped; order 2 is packed."));
    let last = take_turn(
        &chat,
        json!({"tool_results": [{"tool_call_id": again, "content": "order 2 packed"}], "tools": tools}),
    )
    .await;
    assert_eq!(
        last["reply"]["content"],
        "Order 1 shipped; order 2 is packed."
    );
}

/// Waits, up to a bound, until `done` holds.
async fn eventually(mut done: impl AsyncFnMut() -> bool) {
    for _ in 0..3000 {
        if done().await {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("not done within 30 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_whose_caller_leaves_while_the_model_thinks_still_stores_its_reply() {
    let chat = start().await;
    // Through both doors that answer a whole reply: the turn route, and the
    // OpenAI-compatible one.
    let requests = [
        (
            chat.path(),
            json!({"message": "First question"}),
            "First question",
        ),
        (
            "/v1/chat/completions".to_owned(),
            json!({"model": "support", "user": "dana",
                   "messages": [{"role": "user", "content": "Second question"}]}),
            "Second question",
        ),
    ];
    for (round, (uri, body, question)) in requests.into_iter().enumerate() {
        let gate = Arc::new(tokio::sync::Notify::new());
        chat.fake.then(Answer::Held(Arc::clone(&gate)));
        let called = chat.fake.received().len();
        let request = Request::builder()
            .method(Method::POST)
            .uri(uri)
            .header(header::AUTHORIZATION, format!("Bearer {}", chat.key))
            .header(header::CONTENT_TYPE, "application/json")
            .header("x-octopus-conversation", &chat.conversation)
            .body(Body::from(body.to_string()))
            .unwrap();
        let app = chat.server.app.clone();
        let caller = tokio::spawn(async move { app.oneshot(request).await });
        eventually(async || chat.fake.received().len() > called).await;
        // The caller leaves while the model has the question; then the
        // model answers.
        caller.abort();
        let _ = caller.await;
        gate.notify_one();
        let stored = 2 * (round + 1);
        eventually(async || chat.messages().await.len() == stored).await;
        let messages = chat.messages().await;
        assert_eq!(messages[stored - 2]["content"], question);
        assert_eq!(messages[stored - 1]["role"], "assistant");
        assert_eq!(messages[stored - 1]["content"], format!("echo: {question}"));
    }
    // The next turn's model sees the exchanges, not two questions in a row.
    take_turn(&chat, json!({"message": "Third"})).await;
    let sent = chat.fake.last_body();
    let roles: Vec<&str> = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .filter(|role| *role != "system")
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant", "user"]);
}
