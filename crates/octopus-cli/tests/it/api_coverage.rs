//! The command line covers the API: every operation of the server's own
//! `/openapi.json` has a command (or is listed below with why it has none),
//! and the commands added to close the gaps reach their operations.

use std::process::Command;

use octopus_testkit::fake_chat::Answer;
use serde_json::{Value, json};

use crate::client_commands::octopus;
use crate::process::{ADMIN_KEY, Server};

/// The command that calls each operation.
const COMMANDS: &[(&str, &str, &str)] = &[
    ("get", "/v1/status", "status"),
    ("get", "/v1/tenants", "tenants list"),
    ("post", "/v1/tenants", "tenants create"),
    ("get", "/v1/tenants/{tenant_id}", "tenants get"),
    ("delete", "/v1/tenants/{tenant_id}", "tenants delete"),
    ("get", "/v1/tenants/{tenant_id}/keys", "keys list"),
    ("post", "/v1/tenants/{tenant_id}/keys", "keys create"),
    (
        "delete",
        "/v1/tenants/{tenant_id}/keys/{key_id}",
        "keys revoke",
    ),
    ("get", "/v1/tenants/{tenant_id}/export", "export"),
    ("get", "/v1/agents", "agents list"),
    ("post", "/v1/agents", "agents create"),
    ("get", "/v1/agents/{agent_id}", "agents get"),
    ("patch", "/v1/agents/{agent_id}", "agents update"),
    ("delete", "/v1/agents/{agent_id}", "agents delete"),
    ("get", "/v1/agents/{agent_id}/knowledge", "knowledge show"),
    (
        "post",
        "/v1/agents/{agent_id}/knowledge/documents",
        "ingest",
    ),
    (
        "post",
        "/v1/agents/{agent_id}/knowledge/search",
        "search knowledge",
    ),
    (
        "delete",
        "/v1/agents/{agent_id}/knowledge/chunks/{chunk_id}",
        "knowledge delete-chunk",
    ),
    (
        "get",
        "/v1/agents/{agent_id}/knowledge/documents",
        "knowledge documents",
    ),
    (
        "get",
        "/v1/agents/{agent_id}/knowledge/document",
        "knowledge document",
    ),
    ("post", "/v1/agents/{agent_id}/recall", "recall"),
    ("get", "/v1/agents/{agent_id}/users", "users list"),
    (
        "get",
        "/v1/agents/{agent_id}/users/{user_id}/profile",
        "users profile",
    ),
    ("get", "/v1/conversations", "conversations list"),
    ("post", "/v1/conversations", "conversations create"),
    ("post", "/v1/conversations/import", "import"),
    ("post", "/v1/conversations/import/{format}", "import-chats"),
    (
        "get",
        "/v1/conversations/{conversation_id}",
        "conversations get",
    ),
    (
        "delete",
        "/v1/conversations/{conversation_id}",
        "conversations delete",
    ),
    (
        "post",
        "/v1/conversations/{conversation_id}/messages",
        "messages append",
    ),
    ("post", "/v1/conversations/{conversation_id}/turns", "turn"),
    (
        "post",
        "/v1/conversations/{conversation_id}/context",
        "context",
    ),
    ("get", "/v1/episodes", "episodes list"),
    ("get", "/v1/episodes/{episode_id}", "episodes get"),
    ("delete", "/v1/episodes/{episode_id}", "episodes delete"),
    ("post", "/v1/episodes/{episode_id}/close", "episodes close"),
    (
        "put",
        "/v1/episodes/{episode_id}/summary",
        "episodes summary",
    ),
    (
        "post",
        "/v1/episodes/{episode_id}/restore",
        "episodes restore",
    ),
    ("post", "/v1/episodes/{episode_id}/purge", "episodes purge"),
    (
        "post",
        "/v1/episodes/{episode_id}/procedures/propose",
        "procedures propose",
    ),
    ("get", "/v1/messages/search", "search messages"),
    ("get", "/v1/procedures", "procedures list"),
    ("post", "/v1/procedures", "procedures create"),
    ("get", "/v1/procedures/{procedure_id}", "procedures get"),
    (
        "patch",
        "/v1/procedures/{procedure_id}",
        "procedures update",
    ),
    (
        "delete",
        "/v1/procedures/{procedure_id}",
        "procedures delete",
    ),
    (
        "post",
        "/v1/procedures/{procedure_id}/approve",
        "procedures approve",
    ),
    (
        "post",
        "/v1/procedures/{procedure_id}/reject",
        "procedures reject",
    ),
    (
        "post",
        "/v1/procedures/{procedure_id}/rollback",
        "procedures rollback",
    ),
    (
        "get",
        "/v1/procedures/{procedure_id}/versions",
        "procedures versions",
    ),
    ("get", "/v1/export", "export"),
    ("post", "/v1/import", "import"),
    ("delete", "/v1/users/{user_id}", "users forget"),
    (
        "get",
        "/v1/agents/{agent_id}/users/{user_id}/facts",
        "users facts",
    ),
    ("get", "/v1/facts/{fact_id}", "facts show"),
    ("patch", "/v1/facts/{fact_id}", "facts correct"),
    ("delete", "/v1/facts/{fact_id}", "facts delete"),
    (
        "post",
        "/v1/agents/{agent_id}/users/{user_id}/facts",
        "facts add",
    ),
    ("delete", "/v1/messages/{message_id}", "messages erase"),
    ("get", "/v1/facts/{fact_id}/history", "facts history"),
    ("post", "/v1/webhooks", "webhooks create"),
    ("get", "/v1/webhooks", "webhooks list"),
    ("get", "/v1/webhooks/{webhook_id}", "webhooks show"),
    ("delete", "/v1/webhooks/{webhook_id}", "webhooks delete"),
    (
        "post",
        "/v1/webhooks/{webhook_id}/enable",
        "webhooks enable",
    ),
    (
        "get",
        "/v1/webhooks/{webhook_id}/deliveries",
        "webhooks deliveries",
    ),
];

/// Operations with no command, and why.
const NO_COMMAND: &[(&str, &str)] = &[
    // Probes and scraping, for load balancers and monitoring, not people:
    // `curl` is the tool.
    ("get", "/healthz"),
    ("get", "/health"),
    ("get", "/readyz"),
    ("get", "/metrics"),
    // OpenAI's wire format, for OpenAI's own clients (tests/it/clients.rs
    // runs them); `octopus chat` and `octopus turn` take turns from here.
    ("post", "/v1/chat/completions"),
    ("get", "/v1/models"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_of_the_api_has_a_command() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let document: Value = reqwest::get(format!("{}/openapi.json", server.url))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut missing = Vec::new();
    for (path, operations) in document["paths"].as_object().unwrap() {
        for method in operations.as_object().unwrap().keys() {
            let covered = COMMANDS.iter().any(|(m, p, _)| m == method && p == path)
                || NO_COMMAND.iter().any(|(m, p)| m == method && p == path);
            if !covered {
                missing.push(format!("{method} {path}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "operations without a command: {missing:#?}"
    );
    // Every command named above exists.
    for (_, _, command) in COMMANDS {
        let mut args: Vec<&str> = command.split(' ').collect();
        args.push("--help");
        let status = Command::new(env!("CARGO_BIN_EXE_octopus"))
            .args(&args)
            .output()
            .unwrap()
            .status;
        assert!(status.success(), "octopus {command} does not exist");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_commands_that_closed_the_gaps_reach_their_operations() {
    let dir = tempfile::tempdir().unwrap();
    let (server, fake, url) = Server::with_loopback_chat(dir.path()).await;
    let tenant = octopus(&server, ADMIN_KEY, &["tenants", "create", "acme"]);
    let tenant_id = tenant["id"].as_str().unwrap();
    assert_eq!(
        octopus(&server, ADMIN_KEY, &["tenants", "get", tenant_id]),
        tenant
    );
    let key = octopus(&server, ADMIN_KEY, &["keys", "create", tenant_id]);
    let key = key["key"].as_str().unwrap();
    // A tenant's key sees the server and its own (empty) memory queue.
    let status = octopus(&server, key, &["status"]);
    assert_eq!(status["database"], "sqlite", "{status}");
    assert_eq!(status["memory_queue"]["waiting"], 0, "{status}");

    // Azure's settings, each by its own flag.
    let azure = octopus(
        &server,
        key,
        &[
            "agents",
            "create",
            "--name",
            "azure",
            "--provider",
            "azure_openai",
            "--model",
            "gpt-4o",
            "--base-url",
            "https://acme.openai.azure.com",
            "--deployment",
            "prod",
            "--api-version",
            "2024-10-21",
            "--api-key-env",
            "OCTOPUS_LLM_KEY_ACME",
            "--temperature",
            "0.2",
        ],
    );
    assert_eq!(azure["llm"]["deployment"], "prod");
    assert_eq!(azure["llm"]["api_version"], "2024-10-21");
    assert_eq!(azure["llm"]["api_key_env"], "OCTOPUS_LLM_KEY_ACME");
    assert_eq!(azure["llm"]["temperature"], 0.2);

    let agent = octopus(
        &server,
        key,
        &[
            "agents",
            "create",
            "--name",
            "buddy",
            "--provider",
            "ollama",
            "--model",
            "llama3.2",
            "--base-url",
            &url,
        ],
    );
    let agent = agent["id"].as_str().unwrap();

    // Knowledge: what the collection holds, a search within an indexing
    // window, one chunk deleted.
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(
        docs.join("kitchen.txt"),
        "The office kitchen is cleaned every Friday afternoon.\n",
    )
    .unwrap();
    octopus(
        &server,
        key,
        &["ingest", docs.to_str().unwrap(), "--agent", agent],
    );
    let shown = octopus(&server, key, &["knowledge", "show", "--agent", agent]);
    assert_eq!(shown["collection"]["chunk_count"], 1, "{shown}");
    let search = |from: &str| {
        octopus(
            &server,
            key,
            &[
                "search",
                "knowledge",
                "kitchen cleaning",
                "--agent",
                agent,
                "--mode",
                "keyword",
                "--indexed-from",
                from,
            ],
        )
    };
    assert!(
        search("2999-01-01T00:00:00Z")["items"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let found = search("2000-01-01T00:00:00Z");
    let chunk = found["items"][0]["chunk"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    octopus(
        &server,
        key,
        &["knowledge", "delete-chunk", &chunk, "--agent", agent],
    );
    assert_eq!(
        octopus(&server, key, &["knowledge", "show", "--agent", agent])["collection"]["chunk_count"],
        0
    );

    // A one-shot turn with tools, then its tool results.
    let conversation = octopus(
        &server,
        key,
        &[
            "conversations",
            "create",
            "--agent",
            agent,
            "--user",
            "dana",
        ],
    );
    let conversation = conversation["id"].as_str().unwrap();
    let tools = dir.path().join("tools.json");
    std::fs::write(
        &tools,
        json!([{"name": "get_order_status", "parameters": {"type": "object"}}]).to_string(),
    )
    .unwrap();
    fake.then(Answer::tool_call(
        "call_1",
        "get_order_status",
        json!({"order": "8821"}),
    ));
    let first = octopus(
        &server,
        key,
        &[
            "turn",
            "--conversation",
            conversation,
            "--message",
            "Where is order 8821?",
            "--tools",
            tools.to_str().unwrap(),
        ],
    );
    let call = first["reply"]["tool_calls"][0]["tool_call_id"]
        .as_str()
        .unwrap();
    let results = dir.path().join("results.json");
    std::fs::write(
        &results,
        json!([{"tool_call_id": call, "content": "shipped with FedEx"}]).to_string(),
    )
    .unwrap();
    fake.then(Answer::text("It shipped with FedEx."));
    let second = octopus(
        &server,
        key,
        &[
            "turn",
            "--conversation",
            conversation,
            "--tool-results",
            results.to_str().unwrap(),
        ],
    );
    assert_eq!(second["reply"]["content"], "It shipped with FedEx.");

    // The episode's summary set by hand, then recalled (or left out).
    let episode = second["reply"]["episode_id"].as_str().unwrap();
    let summarised = octopus(
        &server,
        key,
        &[
            "episodes",
            "summary",
            episode,
            "--text",
            "Order 8821 shipped with FedEx.",
            "--key-fact",
            "order 8821 shipped",
        ],
    );
    assert_eq!(summarised["summary"], "Order 8821 shipped with FedEx.");
    assert_eq!(summarised["key_facts"], json!(["order 8821 shipped"]));
    let recall = |include: &str| {
        octopus(
            &server,
            key,
            &[
                "recall",
                "FedEx order",
                "--agent",
                agent,
                "--user",
                "dana",
                "--mode",
                "vector",
                "--include-summaries",
                include,
                "--min-score",
                "0",
            ],
        )
    };
    let kinds = |answer: Value| -> Vec<String> {
        answer["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["kind"].as_str().unwrap().to_owned())
            .collect()
    };
    // The summary is embedded in the background: wait until it is recalled.
    let summary = "summary".to_owned();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !kinds(recall("true")).contains(&summary) {
        assert!(
            std::time::Instant::now() < deadline,
            "the summary was never recalled"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(!kinds(recall("false")).contains(&summary));
}
