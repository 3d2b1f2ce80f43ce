//! A person's ChatGPT and Claude exports imported as their past, over HTTP:
//! stored once, recalled, and refused whole when the file is not whole.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{Reply, TestServer};

const CHATGPT: &str =
    include_str!("../../../octopus-core/tests/fixtures/chat_exports/chatgpt.json");
const CLAUDE: &str = include_str!("../../../octopus-core/tests/fixtures/chat_exports/claude.json");

async fn import(
    server: &TestServer,
    key: &str,
    format: &str,
    agent: &str,
    user: &str,
    file: &str,
) -> Reply {
    let path = format!("/v1/conversations/import/{format}?agent_id={agent}&user_id={user}");
    server
        .raw(
            Method::POST,
            &path,
            Some(key),
            Some(file.as_bytes().to_vec()),
        )
        .await
}

/// The text of every message stored for `user`, conversation by conversation.
async fn stored(server: &TestServer, key: &str, user: &str) -> Vec<(Value, Vec<Value>)> {
    let conversations = server
        .ok(
            Method::GET,
            &format!("/v1/conversations?user_id={user}"),
            key,
            None,
            StatusCode::OK,
        )
        .await;
    let mut stored = Vec::new();
    for conversation in conversations["items"].as_array().unwrap() {
        let path = format!(
            "/v1/episodes?conversation_id={}",
            conversation["id"].as_str().unwrap()
        );
        let episodes = server
            .ok(Method::GET, &path, key, None, StatusCode::OK)
            .await;
        let mut messages = Vec::new();
        for episode in episodes["items"].as_array().unwrap() {
            assert_eq!(episode["end_reason"], "imported");
            let path = format!("/v1/episodes/{}", episode["id"].as_str().unwrap());
            let episode = server
                .ok(Method::GET, &path, key, None, StatusCode::OK)
                .await;
            messages.extend(episode["messages"].as_array().unwrap().iter().cloned());
        }
        stored.push((conversation.clone(), messages));
    }
    stored
}

fn texts(messages: &[Value]) -> String {
    messages
        .iter()
        .map(|m| m["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

async fn recalled(
    server: &TestServer,
    key: &str,
    agent: &str,
    user: &str,
    query: &str,
) -> Vec<String> {
    let recall = server
        .ok(
            Method::POST,
            &format!("/v1/agents/{agent}/recall"),
            key,
            Some(json!({"user_id": user, "query": query, "top_k": 3})),
            StatusCode::OK,
        )
        .await;
    recall["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["text"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chatgpt_export_is_imported_once_and_recalled() {
    imported_once_and_recalled(TestServer::start().await).await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chatgpt_export_is_imported_once_and_recalled_on_postgres() {
    imported_once_and_recalled(TestServer::on_postgres().await).await;
}

async fn imported_once_and_recalled(server: TestServer) {
    let (_, key) = server.tenant("acme").await;
    let agent = server.agent(&key, "companion").await;
    let first = import(&server, &key, "chatgpt", &agent, "ana", CHATGPT).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    assert_eq!(
        (
            &first.body["imported"],
            &first.body["already_imported"],
            &first.body["empty"],
            &first.body["messages"]
        ),
        (&json!(2), &json!(0), &json!(1), &json!(9)),
        "{}",
        first.body
    );
    let lisbon = &first.body["conversations"][0];
    assert_eq!(
        (&lisbon["title"], &lisbon["status"], &lisbon["messages"]),
        (&json!("Lisbon in May"), &json!("imported"), &json!(7))
    );

    let conversations = stored(&server, &key, "ana").await;
    assert_eq!(conversations.len(), 2);
    let (conversation, messages) = conversations
        .iter()
        .find(|(c, _)| c["title"] == "Lisbon in May")
        .unwrap();
    assert_eq!(conversation["id"], lisbon["conversation_id"]);
    assert_eq!(
        conversation["created_at"], "2024-05-01T10:40:00.250Z",
        "the conversation's own time"
    );
    assert_eq!(
        conversation["metadata"],
        json!({"imported_from": "chatgpt", "export_id": lisbon["export_id"]})
    );
    let all = texts(messages);
    assert!(
        all.contains("Sintra") && !all.contains("Porto"),
        "the branch the user last saw, alone: {all}"
    );
    let roles: Vec<_> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
            "tool",
            "assistant"
        ]
    );
    assert_eq!(messages[4]["tool_calls"][0]["function_name"], "python");

    // The same export again, and one holding a conversation more: only the new one is stored.
    let again = import(&server, &key, "chatgpt", &agent, "ana", CHATGPT).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(
        (
            &again.body["imported"],
            &again.body["already_imported"],
            &again.body["messages"]
        ),
        (&json!(0), &json!(2), &json!(0))
    );
    let mut later: Vec<Value> = serde_json::from_str(CHATGPT).unwrap();
    let mut newer = later[1].clone();
    newer["conversation_id"] = json!("66b0c0de-0000-4000-8000-000000000004");
    newer["title"] = json!("Sourdough, again");
    later.push(newer);
    let later = import(
        &server,
        &key,
        "chatgpt",
        &agent,
        "ana",
        &serde_json::to_string(&later).unwrap(),
    )
    .await;
    assert_eq!(
        (
            &later.body["imported"],
            &later.body["already_imported"],
            &later.body["messages"]
        ),
        (&json!(1), &json!(2), &json!(2)),
        "{}",
        later.body
    );
    let after = stored(&server, &key, "ana").await;
    assert_eq!(after.len(), 3);
    assert_eq!(
        after.iter().map(|(_, m)| m.len()).sum::<usize>(),
        11,
        "nothing stored twice"
    );
    // Another person importing the same file has conversations of their own.
    let theirs = import(&server, &key, "chatgpt", &agent, "bo", CHATGPT).await;
    assert_eq!(theirs.body["imported"], 2, "{}", theirs.body);

    server.octopus.run_memory_jobs().await.unwrap();
    let hits = recalled(
        &server,
        &key,
        &agent,
        "ana",
        "which hotel are we staying at in Lisbon?",
    )
    .await;
    assert!(
        hits.iter().any(|hit| hit.contains("Hotel Avenida")),
        "{hits:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_export_keeps_attached_files_and_is_recalled() {
    let server = TestServer::start().await;
    let (_, key) = server.tenant("acme").await;
    let agent = server.agent(&key, "companion").await;
    let reply = import(&server, &key, "claude", &agent, "ana", CLAUDE).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    assert_eq!(
        (&reply.body["imported"], &reply.body["messages"]),
        (&json!(2), &json!(4))
    );
    let conversations = stored(&server, &key, "ana").await;
    let (_, budget) = conversations
        .iter()
        .find(|(c, _)| c["title"] == "Rent in the budget sheet")
        .unwrap();
    let question = budget[0]["content"].to_string();
    assert!(
        question.contains("Attached budget.csv:\\nmonth,rent,groceries"),
        "{question}"
    );
    assert!(
        question.contains("apartment.jpg"),
        "a file without words is named: {question}"
    );
    assert_eq!(budget[1]["tool_calls"][0]["function_name"], "web_search");

    server.octopus.run_memory_jobs().await.unwrap();
    let hits = recalled(&server, &key, &agent, "ana", "what does my cat Miso eat?").await;
    assert!(
        hits.iter().any(|hit| hit.contains("salmon kibble")),
        "{hits:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_not_whole_is_refused_and_nothing_is_stored() {
    let server = TestServer::start().await;
    let (_, key) = server.tenant("acme").await;
    let agent = server.agent(&key, "companion").await;

    let cut = &CLAUDE[..CLAUDE.len() * 2 / 3];
    let reply = import(&server, &key, "claude", &agent, "ana", cut).await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(reply.body["error"]["field"], "body");
    assert!(
        reply.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("line"),
        "{}",
        reply.body
    );

    // The first conversation is fine, the second says something in the future.
    let mut broken: Vec<Value> = serde_json::from_str(CHATGPT).unwrap();
    broken[1]["mapping"]["user-3"]["message"]["create_time"] = json!(4_102_444_800.0);
    let reply = import(
        &server,
        &key,
        "chatgpt",
        &agent,
        "ana",
        &serde_json::to_string(&broken).unwrap(),
    )
    .await;
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    assert_eq!(
        reply.body["error"]["field"], "conversations[1].messages[0].timestamp",
        "{}",
        reply.body
    );

    let reply = import(&server, &key, "claude", &agent, "ana", CHATGPT).await;
    assert_eq!(reply.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        reply.body["error"]["field"], "conversations[0]",
        "{}",
        reply.body
    );

    let reply = import(&server, &key, "gemini", &agent, "ana", CLAUDE).await;
    assert_eq!(
        (reply.status, &reply.body["error"]["field"]),
        (StatusCode::UNPROCESSABLE_ENTITY, &json!("format"))
    );

    assert!(
        stored(&server, &key, "ana").await.is_empty(),
        "a refused import stores nothing"
    );
}
