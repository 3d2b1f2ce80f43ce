//! The doors for agents, tested with the clients their users run: the
//! official MCP Python SDK (over Streamable HTTP, over `octopus mcp`
//! relaying to a server, and over `octopus mcp` opening a data directory),
//! and the official OpenAI packages for Python and Node against the chat
//! completions. The scripts are in `tests/clients/`; `scripts/test.sh`
//! installs their pinned packages and names them in
//! `OCTOPUS_TEST_CLIENTS_VENV` and `OCTOPUS_TEST_NODE_MODULES`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use octopus_testkit::fake_chat::{self, Answer, ChatProvider};
use reqwest::Method;
use serde_json::{Value, json};

use crate::process::Server;

pub(crate) fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

pub(crate) fn required(variable: &str) -> String {
    std::env::var(variable).unwrap_or_else(|_| {
        panic!("{variable} is not set: scripts/test.sh installs the official clients and sets it")
    })
}

/// Runs `program` with `args` and `env`; its stdout, or a panic with both
/// of its streams.
pub(crate) fn run(program: &Path, args: &[&Path], env: &[(&str, &str)]) -> String {
    run_in(Path::new("."), program, args, env)
}

/// Runs `program` in `dir`; its stdout, or a panic with both of its streams.
pub(crate) fn run_in(dir: &Path, program: &Path, args: &[&Path], env: &[(&str, &str)]) -> String {
    let output = Command::new(program)
        .current_dir(dir)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", program.display()));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{} {:?} failed ({}):\n{stdout}\n{}",
        program.display(),
        args,
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

pub(crate) fn python() -> PathBuf {
    Path::new(&required("OCTOPUS_TEST_CLIENTS_VENV")).join("bin/python")
}

/// The texts of the messages a provider request carried.
fn sent_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_openai_clients_talk_to_an_agent_with_memory() {
    let dir = tempfile::tempdir().unwrap();
    let fake = Arc::new(ChatProvider::default());
    let fake_url = fake_chat::serve(Arc::clone(&fake)).await;
    let config = dir.path().join("octopus.toml");
    std::fs::write(
        &config,
        format!("[llm]\nmax_retries = 0\nallowed_base_urls = [\"{fake_url}\"]\n"),
    )
    .unwrap();
    // The operator's OpenAI key, which the fake asks for.
    let server = Server::start_with_env(
        &dir.path().join("data"),
        Some(&config),
        None,
        &[("OPENAI_API_KEY", "sk-test")],
    );
    let (_, key) = server.tenant("acme").await;
    let agent = json!({"name": "support", "system_prompt": "You are Acme's support agent.",
        "llm": {"provider": "openai", "model": "gpt-4o-mini", "base_url": format!("{fake_url}/v1")}});
    server
        .call(&key, Method::POST, "/v1/agents", Some(agent))
        .await;

    let node_modules = required("OCTOPUS_TEST_NODE_MODULES");
    let python = python();
    let node = PathBuf::from("node");
    let clients: [(&str, &Path, PathBuf); 2] = [
        ("dana", &python, clients_dir().join("openai_chat.py")),
        ("erin", &node, clients_dir().join("openai_chat.cjs")),
    ];
    for (user, program, script) in clients {
        fake.then(Answer::tool_call(
            "call_4417",
            "order_status",
            json!({"order": "4417"}),
        ));
        fake.then(Answer::text("It ships Friday."));
        let before = fake.received().len();
        let printed = run(
            program,
            &[&script],
            &[
                ("OCTOPUS_URL", &server.url),
                ("OCTOPUS_API_KEY", &key),
                ("OCTOPUS_TEST_USER", user),
                ("OCTOPUS_TEST_NODE_MODULES", &node_modules),
            ],
        );
        let reported: Value = serde_json::from_str(printed.trim()).unwrap();

        let received = fake.received();
        assert_eq!(
            received.len() - before,
            4,
            "one provider call per completion"
        );
        // The tool's result reached the model in the second call.
        let round = sent_texts(&received[before + 1].body);
        assert!(
            round.iter().any(|t| t == "shipped; arrives Friday"),
            "{round:?}"
        );
        // The streamed completion sent one message; the model got the
        // agent's system prompt and the earlier turn, from memory.
        let last = &received.last().unwrap().body;
        assert_eq!(last["stream"], true);
        let texts = sent_texts(last);
        assert!(
            texts[0].contains("You are Acme's support agent."),
            "{texts:?}"
        );
        assert!(
            texts.iter().any(|t| t == "My order number is 4417."),
            "memory was not in the request: {texts:?}"
        );
        assert_eq!(texts.last().unwrap(), "What is my order number?");

        // Everything was stored once, in the conversation the header named.
        let conversation = reported["conversation"].as_str().unwrap();
        let episodes = server
            .call(
                &key,
                Method::GET,
                &format!("/v1/episodes?conversation_id={conversation}"),
                None,
            )
            .await;
        let count: u64 = episodes["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["message_count"].as_u64().unwrap())
            .sum();
        // user, tool call, tool result, reply; then two user turns and replies.
        assert_eq!(count, 8, "{user}: {episodes}");
    }
}

/// A server whose operator offers `forget_user`, a tenant with an agent and
/// a procedure, and a second tenant: (server, key, other key).
async fn mcp_server(dir: &Path) -> (Server, String, String) {
    let config = dir.join("octopus.toml");
    std::fs::write(&config, "[server]\nmcp_allow_forget_user = true\n").unwrap();
    let server = Server::start_with(&dir.join("data"), Some(&config));
    let (key, _) = tenant_with_agent_and_procedure(&server).await;
    let (_, other_key) = server.tenant("globex").await;
    (server, key, other_key)
}

async fn tenant_with_agent_and_procedure(server: &Server) -> (String, String) {
    let (_, key) = server.tenant("acme").await;
    let agent = json!({"name": "support", "system_prompt": "You are Acme's support agent.",
        "llm": {"provider": "ollama", "model": "llama3.2"}});
    let agent = server
        .call(&key, Method::POST, "/v1/agents", Some(agent))
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let procedure = json!({"agent_id": agent, "name": "refund request", "trigger_pattern": "refund",
        "steps": [{"instruction": "Check the order date"}, {"instruction": "Issue the refund"}]});
    let procedure = server
        .call(&key, Method::POST, "/v1/procedures", Some(procedure))
        .await;
    if !procedure["pending_version"].is_null() {
        let id = procedure["id"].as_str().unwrap();
        server
            .call(
                &key,
                Method::POST,
                &format!("/v1/procedures/{id}/approve"),
                None,
            )
            .await;
    }
    (key, agent)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_mcp_client_reaches_memory_over_http_and_through_octopus_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let (server, key, other_key) = mcp_server(dir.path()).await;
    let script = clients_dir().join("mcp_tools.py");
    for (mode, user) in [("http", "dana"), ("relay", "erin")] {
        let printed = run(
            &python(),
            &[&script],
            &[
                ("OCTOPUS_MCP_MODE", mode),
                ("OCTOPUS_URL", &server.url),
                ("OCTOPUS_BIN", env!("CARGO_BIN_EXE_octopus")),
                ("OCTOPUS_API_KEY", &key),
                ("OCTOPUS_OTHER_KEY", &other_key),
                ("OCTOPUS_TEST_USER", user),
                ("OCTOPUS_EXPECT_FORGET", "1"),
                ("OCTOPUS_ADMIN_KEY", crate::process::ADMIN_KEY),
            ],
        );
        assert_eq!(printed.trim(), "ok", "{mode}");
    }
    // What the tools stored is what the REST API shows.
    let conversations = server
        .call(&key, Method::GET, "/v1/conversations?user_id=dana", None)
        .await;
    assert_eq!(conversations["items"].as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn octopus_mcp_opens_a_data_directory_with_a_tenants_key() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // The tenant, key and agent are made through a server, which then stops:
    // one process holds a data directory at a time.
    let key = {
        let server = Server::start(&data);
        tenant_with_agent_and_procedure(&server).await.0
    };
    let printed = run(
        &python(),
        &[&clients_dir().join("mcp_tools.py")],
        &[
            ("OCTOPUS_MCP_MODE", "local"),
            ("OCTOPUS_BIN", env!("CARGO_BIN_EXE_octopus")),
            ("OCTOPUS_DATA_DIR", data.to_str().unwrap()),
            ("OCTOPUS_API_KEY", &key),
            ("OCTOPUS_TEST_USER", "dana"),
        ],
    );
    assert_eq!(printed.trim(), "ok");
}
