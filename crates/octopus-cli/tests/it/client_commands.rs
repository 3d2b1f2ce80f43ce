//! The client subcommands, run as a user would, against a real server.

use std::process::Command;

use serde_json::{Value, json};

use crate::process::{ADMIN_KEY, Server};

/// Runs `octopus ARGS` with `key`; returns its JSON output, or panics with stderr.
pub(crate) fn octopus(server: &Server, key: &str, args: &[&str]) -> Value {
    let stdout = octopus_text(server, key, args);
    if stdout.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&stdout).unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_drives_a_running_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let tenant = octopus(&server, ADMIN_KEY, &["tenants", "create", "acme"]);
    let tenant = tenant["id"].as_str().unwrap();
    let key = octopus(
        &server,
        ADMIN_KEY,
        &["keys", "create", tenant, "--name", "cli"],
    );
    let key = key["key"].as_str().unwrap();

    let agent = octopus(
        &server,
        key,
        &[
            "agents",
            "create",
            "--name",
            "support",
            "--model",
            "gpt-4o-mini",
            "--memory",
            r#"{"episodic_top_k": 5}"#,
        ],
    );
    assert_eq!(agent["memory"]["episodic_top_k"], 5);
    let agent = agent["id"].as_str().unwrap();
    let conversation = octopus(
        &server,
        key,
        &[
            "conversations",
            "create",
            "--agent",
            agent,
            "--user",
            "alice",
        ],
    );
    let conversation = conversation["id"].as_str().unwrap();

    let appended = octopus(
        &server,
        key,
        &[
            "messages",
            "append",
            conversation,
            "--role",
            "user",
            "--content",
            "my parcel is late",
        ],
    );
    let episode = appended["messages"][0]["episode_id"].as_str().unwrap();
    let batch = dir.path().join("batch.json");
    std::fs::write(
        &batch,
        r#"{"messages": [{"role": "assistant", "content": "It ships tomorrow."}]}"#,
    )
    .unwrap();
    octopus(
        &server,
        key,
        &[
            "messages",
            "append",
            conversation,
            "--file",
            batch.to_str().unwrap(),
        ],
    );

    let listed = octopus(&server, key, &["episodes", "list", "--user", "alice"]);
    assert_eq!(listed["items"][0]["message_count"], 2);
    let hits = octopus(
        &server,
        key,
        &["search", "messages", "parcel", "--user", "alice"],
    );
    assert_eq!(hits["items"][0]["message"]["content"], "my parcel is late");
    let closed = octopus(
        &server,
        key,
        &["episodes", "close", episode, "--reason", "agent_closed"],
    );
    assert_eq!(closed["end_reason"], "agent_closed");
    let read = octopus(&server, key, &["episodes", "get", episode]);
    assert_eq!(read["messages"][1]["content"], "It ships tomorrow.");

    // A folder of documents becomes the agent's knowledge.
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(docs.join("policies")).unwrap();
    std::fs::write(
        docs.join("policies/leave.md"),
        "# Leave\n\nEmployees receive 25 days of paid vacation per year.",
    )
    .unwrap();
    std::fs::write(
        docs.join("kitchen.txt"),
        "The kitchen is cleaned every Friday.",
    )
    .unwrap();
    std::fs::write(docs.join("logo.png"), [0u8, 1, 2]).unwrap();
    std::fs::write(docs.join(".draft.md"), "hidden").unwrap();
    let report = octopus(
        &server,
        key,
        &[
            "ingest",
            docs.to_str().unwrap(),
            "--agent",
            agent,
            "--category",
            "hr",
        ],
    );
    assert_eq!(
        report["files"], 2,
        "only .md/.markdown/.txt, hidden files skipped: {report}"
    );
    assert_eq!(report["chunks"], 2);
    let hits = octopus(
        &server,
        key,
        &[
            "search",
            "knowledge",
            "how much vacation?",
            "--agent",
            agent,
            "--min-score",
            "0",
        ],
    );
    let first = &hits["items"][0];
    assert!(
        first["chunk"]["content"]
            .as_str()
            .unwrap()
            .contains("25 days"),
        "{hits}"
    );
    assert_eq!(first["chunk"]["category"], "hr");
    assert!(first["vector_score"].is_number() && first["score"].is_number());
    let hits = octopus(
        &server,
        key,
        &[
            "search",
            "knowledge",
            "Friday",
            "--agent",
            agent,
            "--mode",
            "keyword",
        ],
    );
    assert!(
        hits["items"][0]["chunk"]["source"]
            .as_str()
            .unwrap()
            .ends_with("kitchen.txt")
    );

    // Import a past session; the server's memory worker embeds it in the
    // background, and recall and context find it by meaning.
    let history = dir.path().join("history.json");
    std::fs::write(
        &history,
        json!([{"messages": [
            {"role": "user", "content": "I am training for the Lisbon marathon in October", "timestamp": "2026-02-01T08:00:00Z"},
            {"role": "assistant", "content": "Great goal! Let us plan your long runs.", "timestamp": "2026-02-01T08:01:00Z"}
        ]}])
        .to_string(),
    )
    .unwrap();
    let imported = octopus(
        &server,
        key,
        &[
            "import",
            history.to_str().unwrap(),
            "--agent",
            agent,
            "--user",
            "runner",
        ],
    );
    assert_eq!(imported["messages"], 2, "{imported}");
    let recall = || {
        octopus(
            &server,
            key,
            &[
                "recall",
                "which race am I preparing for?",
                "--agent",
                agent,
                "--user",
                "runner",
                "--mode",
                "vector",
                "--neighbours",
                "1",
            ],
        )
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let hits = loop {
        let hits = recall();
        if hits["items"]
            .as_array()
            .is_some_and(|items| !items.is_empty())
        {
            break hits;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the worker never embedded the import"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert!(hits.to_string().contains("Lisbon marathon"), "{hits}");
    let conversation = imported["conversation"]["id"].as_str().unwrap();
    let context = octopus(
        &server,
        key,
        &[
            "context",
            "How many weeks until my race?",
            "--conversation",
            conversation,
        ],
    );
    assert_eq!(
        context["messages"].as_array().unwrap().last().unwrap()["content"],
        "How many weeks until my race?"
    );
    assert!(
        context["trace"]["episodic"].to_string().contains("Lisbon"),
        "{context}"
    );

    // Forgetting the runner takes the imported conversation and its sessions.
    let sessions = octopus(&server, key, &["episodes", "list", "--user", "runner"])["items"]
        .as_array()
        .unwrap()
        .len();
    let receipt = octopus(&server, key, &["users", "forget", "runner"]);
    assert_eq!(receipt["relational"]["conversations"], 1, "{receipt}");
    assert_eq!(receipt["relational"]["episodes"], sessions, "{receipt}");
    let listed = octopus(&server, key, &["episodes", "list", "--user", "runner"]);
    assert_eq!(listed["items"], serde_json::json!([]));

    // A refused request exits non-zero and says why.
    let output = Command::new(env!("CARGO_BIN_EXE_octopus"))
        .args(["episodes", "close", episode])
        .env("OCTOPUS_URL", &server.url)
        .env("OCTOPUS_API_KEY", key)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("episode_closed"));

    // A reader that closes the pipe before the answer is written (as
    // `octopus … | head -2` may): the command ends quietly, with success.
    let mut listing = Command::new(env!("CARGO_BIN_EXE_octopus"))
        .args(["episodes", "list"])
        .env("OCTOPUS_URL", &server.url)
        .env("OCTOPUS_API_KEY", key)
        .env("RUST_BACKTRACE", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(listing.stdout.take());
    let ended = listing.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&ended.stderr);
    assert!(ended.status.success(), "{:?}: {stderr}", ended.status);
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn octopus_chat_streams_turns_shows_the_trace_and_starts_new_episodes() {
    use std::io::Write;

    let dir = tempfile::tempdir().unwrap();
    let (server, fake, url) = Server::with_loopback_chat(dir.path()).await;
    let tenant = octopus(&server, ADMIN_KEY, &["tenants", "create", "acme"]);
    let key = octopus(
        &server,
        ADMIN_KEY,
        &["keys", "create", tenant["id"].as_str().unwrap()],
    );
    let key = key["key"].as_str().unwrap();
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
            "--system-prompt",
            "Be kind.",
        ],
    );
    let agent = agent["id"].as_str().unwrap();

    let mut chat = Command::new(env!("CARGO_BIN_EXE_octopus"))
        .args(["chat", "--agent", agent, "--user", "dana"])
        .env("OCTOPUS_URL", &server.url)
        .env("OCTOPUS_API_KEY", key)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    chat.stdin
        .take()
        .unwrap()
        .write_all(b"Hello there\n/trace\n/new\nSecond question\n/quit\n")
        .unwrap();
    let output = tokio::task::spawn_blocking(move || chat.wait_with_output().unwrap())
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("agent> echo: Hello there\n"), "{stdout}");
    assert!(
        stdout.contains("agent> echo: Second question\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("context: ") && stdout.contains("system_prompt"),
        "/trace: {stdout}"
    );
    assert!(
        stdout.contains("closed; the next message starts another"),
        "/new: {stdout}"
    );
    // The second turn was sent without the first exchange: a new episode.
    let second = fake.last_body();
    let contents: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert!(!contents.contains(&"Hello there"), "{contents:?}");
    let conversations = octopus(&server, key, &["conversations", "list", "--agent", agent]);
    let conversation = conversations["items"][0]["id"].as_str().unwrap();
    let episodes = octopus(
        &server,
        key,
        &["episodes", "list", "--conversation", conversation],
    );
    assert_eq!(episodes["items"].as_array().unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn octopus_procedures_manages_versions_from_yaml_and_json_files() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let tenant = octopus(&server, ADMIN_KEY, &["tenants", "create", "acme"]);
    let key = octopus(
        &server,
        ADMIN_KEY,
        &[
            "keys",
            "create",
            tenant["id"].as_str().unwrap(),
            "--name",
            "ops",
        ],
    );
    let key = key["key"].as_str().unwrap();
    let agent = octopus(
        &server,
        key,
        &[
            "agents",
            "create",
            "--name",
            "support",
            "--model",
            "gpt-4o-mini",
        ],
    );
    let agent = agent["id"].as_str().unwrap();
    let yaml = dir.path().join("refund.yaml");
    std::fs::write(
        &yaml,
        "name: refund request\n\
         description: A customer wants their money back\n\
         trigger_pattern: '(?i)\\brefund'\n\
         steps:\n  - instruction: Check the receipt\n  - instruction: Issue the refund\n    tool: issue_refund\n",
    )
    .unwrap();
    let created = octopus(
        &server,
        key,
        &[
            "procedures",
            "create",
            yaml.to_str().unwrap(),
            "--agent",
            agent,
        ],
    );
    let id = created["id"].as_str().unwrap();
    assert_eq!(created["steps"][1]["tool"], "issue_refund");
    assert_eq!(created["created_by"], "ops");
    let approved = octopus(&server, key, &["procedures", "approve", id]);
    assert_eq!(approved["serving_version"], 1);

    let json_patch = dir.path().join("patch.json");
    std::fs::write(
        &json_patch,
        r#"{"steps": [{"instruction": "Refund at once"}]}"#,
    )
    .unwrap();
    let updated = octopus(
        &server,
        key,
        &[
            "procedures",
            "update",
            id,
            "--file",
            json_patch.to_str().unwrap(),
        ],
    );
    assert_eq!(
        (&updated["serving_version"], &updated["pending_version"]),
        (&json!(1), &json!(2))
    );
    octopus(&server, key, &["procedures", "approve", id]);
    let versions = octopus(&server, key, &["procedures", "versions", id]);
    assert_eq!(versions["items"].as_array().unwrap().len(), 2);
    let rolled = octopus(
        &server,
        key,
        &["procedures", "rollback", id, "--version", "1"],
    );
    assert_eq!(rolled["steps"][0]["instruction"], "Check the receipt");
    let listed = octopus(
        &server,
        key,
        &["procedures", "list", "--agent", agent, "--approved", "true"],
    );
    assert_eq!(listed["items"].as_array().unwrap().len(), 1);
    let paused = octopus(
        &server,
        key,
        &["procedures", "update", id, "--active", "false"],
    );
    assert_eq!(paused["is_active"], false);
    octopus(&server, key, &["procedures", "delete", id]);
    let listed = octopus(&server, key, &["procedures", "list"]);
    assert!(listed["items"].as_array().unwrap().is_empty());
}

/// Runs `octopus ARGS` with `key` and returns its standard output as text.
fn octopus_text(server: &Server, key: &str, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_octopus"))
        .args(args)
        .env("OCTOPUS_URL", &server.url)
        .env("OCTOPUS_API_KEY", key)
        // The admin commands read the admin key where the server's is set.
        .env("OCTOPUS_ADMIN_KEY", key)
        .env_remove("OCTOPUS_AGENT")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "octopus {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn octopus_export_and_import_move_a_tenant_to_another_server() {
    let dir = tempfile::tempdir().unwrap();
    let first = Server::start(&dir.path().join("first"));
    let (tenant, key, agent) = first.tenant_with_agent("acme").await;
    let conversation = octopus(
        &first,
        &key,
        &[
            "conversations",
            "create",
            "--agent",
            &agent,
            "--user",
            "alice",
        ],
    );
    let conversation = conversation["id"].as_str().unwrap();
    octopus(
        &first,
        &key,
        &[
            "messages",
            "append",
            conversation,
            "--role",
            "user",
            "--content",
            "my parcel is late",
        ],
    );

    let dump = octopus_text(&first, ADMIN_KEY, &["export", "--tenant", &tenant]);
    // The tenant's own key exports the same records (the header's time apart).
    let own = octopus_text(&first, &key, &["export"]);
    assert_eq!(
        own.lines().skip(1).collect::<Vec<_>>(),
        dump.lines().skip(1).collect::<Vec<_>>()
    );
    let lines: Vec<Value> = dump
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.first().unwrap()["type"], "header");
    assert_eq!(lines.last().unwrap()["type"], "end");
    assert!(dump.contains("my parcel is late"));
    let alone = octopus_text(&first, &key, &["export", "--user", "bob"]);
    assert!(
        !alone.contains("my parcel is late"),
        "bob's dump holds only bob's"
    );

    let file = dir.path().join("acme.jsonl");
    std::fs::write(&file, &dump).unwrap();
    let second = Server::start(&dir.path().join("second"));
    let report = octopus(&second, ADMIN_KEY, &["import", file.to_str().unwrap()]);
    assert_eq!(
        (report["tenant_id"].as_str(), &report["messages"]),
        (Some(tenant.as_str()), &json!(1))
    );
    let moved = octopus(&second, ADMIN_KEY, &["keys", "create", &tenant]);
    let moved = moved["key"].as_str().unwrap();
    let listed =
        |server: &Server, key: &str| octopus(server, key, &["episodes", "list", "--user", "alice"]);
    assert_eq!(listed(&second, moved), listed(&first, &key));

    // Restored again: every id is taken, and the command says so and fails.
    let output = Command::new(env!("CARGO_BIN_EXE_octopus"))
        .args(["import", file.to_str().unwrap()])
        .env("OCTOPUS_URL", &second.url)
        .env("OCTOPUS_API_KEY", ADMIN_KEY)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("import_conflict"));
}

/// `octopus` run with exactly these variables of its own (and no key or
/// agent inherited from the test's environment).
fn octopus_with(server: &Server, env: &[(&str, &str)], args: &[&str]) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_octopus"));
    command.args(args).env("OCTOPUS_URL", &server.url);
    for name in ["OCTOPUS_API_KEY", "OCTOPUS_ADMIN_KEY", "OCTOPUS_AGENT"] {
        command.env_remove(name);
    }
    command.envs(env.iter().copied()).output().unwrap()
}

/// The `export NAME=value` lines of `octopus init`, as pairs.
fn exports(output: &std::process::Output) -> Vec<(String, String)> {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let (name, value) = line
                .strip_prefix("export ")
                .unwrap()
                .split_once('=')
                .unwrap();
            (name.to_owned(), value.to_owned())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_gives_a_key_and_an_agent_that_remember_and_recall_take_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());

    let refused = octopus_with(&server, &[], &["init"]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("OCTOPUS_ADMIN_KEY"), "{said}");
    // A key chosen by hand for a server that holds another.
    let wrong = octopus_with(
        &server,
        &[("OCTOPUS_ADMIN_KEY", "oct_admin_choose_your_own")],
        &["init"],
    );
    assert!(!wrong.status.success());
    let said = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        said.contains("not the server's admin key") && said.contains("printed once"),
        "{said}"
    );

    let first = exports(&octopus_with(
        &server,
        &[("OCTOPUS_ADMIN_KEY", ADMIN_KEY)],
        &["init"],
    ));
    let names: Vec<&str> = first.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["OCTOPUS_URL", "OCTOPUS_API_KEY", "OCTOPUS_AGENT"]);
    assert_eq!(first[0].1, server.url);
    assert_eq!(first[2].1, "assistant");
    let key = first[1].1.as_str();

    // Run again: the same tenant and agent, found by name; a new key, and
    // word of how many the tenant holds.
    let again = octopus_with(&server, &[("OCTOPUS_ADMIN_KEY", ADMIN_KEY)], &["init"]);
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(
        said.contains("found") && said.contains("2 live keys named \"init\""),
        "{said}"
    );
    let second = exports(&again);
    assert_ne!(second[1].1, key);
    // With the key it exported in the environment, init reuses it.
    let reused = octopus_with(
        &server,
        &[("OCTOPUS_ADMIN_KEY", ADMIN_KEY), ("OCTOPUS_API_KEY", key)],
        &["init"],
    );
    assert!(String::from_utf8_lossy(&reused.stdout).contains("reused"));
    assert_eq!(exports(&reused)[1].1, key);
    let tenants = octopus(&server, ADMIN_KEY, &["tenants", "list"]);
    assert_eq!(tenants["items"].as_array().unwrap().len(), 1);
    // Tenants and keys by name: two live keys share the name "init".
    let keys = octopus(&server, ADMIN_KEY, &["keys", "list", "default"]);
    assert_eq!(keys["items"].as_array().unwrap().len(), 2, "{keys}");
    let ambiguous = octopus_with(
        &server,
        &[("OCTOPUS_ADMIN_KEY", ADMIN_KEY)],
        &["keys", "revoke", "default", "init"],
    );
    assert!(!ambiguous.status.success());
    let said = String::from_utf8_lossy(&ambiguous.stderr);
    assert!(said.contains("2 live keys are named \"init\""), "{said}");
    octopus(
        &server,
        ADMIN_KEY,
        &["keys", "create", "default", "--name", "spare"],
    );
    octopus(&server, ADMIN_KEY, &["keys", "revoke", "default", "spare"]);
    let keys = octopus(&server, ADMIN_KEY, &["keys", "list", "default"]);
    let spare = keys["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|key| key["name"] == "spare")
        .unwrap();
    assert!(!spare["revoked_at"].is_null(), "{keys}");
    let agents = octopus(&server, key, &["agents", "list"]);
    assert_eq!(agents["items"].as_array().unwrap().len(), 1);

    let env = [("OCTOPUS_API_KEY", key), ("OCTOPUS_AGENT", "assistant")];
    let stored = octopus_with(
        &server,
        &env,
        &["remember", "--user", "alice", "I keep bees on the roof"],
    );
    assert!(
        stored.status.success(),
        "{}",
        String::from_utf8_lossy(&stored.stderr)
    );
    if std::env::var_os("OPENAI_API_KEY").is_none() {
        let said = String::from_utf8_lossy(&stored.stderr);
        assert!(
            said.contains("facts and summaries wait for a model")
                && said.contains("OPENAI_API_KEY"),
            "{said}"
        );
    }
    let stored: Value = serde_json::from_slice(&stored.stdout).unwrap();
    assert_eq!(stored["role"], "user");
    let again = octopus_with(
        &server,
        &env,
        &["remember", "--user", "alice", "The bees swarmed in May"],
    );
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(
        again["conversation_id"], stored["conversation_id"],
        "the newest conversation is reused"
    );

    let recalled = octopus_with(&server, &env, &["recall", "--user", "alice", "bees roof"]);
    let recalled: Value = serde_json::from_slice(&recalled.stdout).unwrap();
    assert_eq!(
        recalled["items"][0]["window"]["message"]["content"],
        "I keep bees on the roof"
    );

    // A name where an id goes: the command line finds it; the API says a name is not an id.
    let shown = octopus(&server, key, &["agents", "get", "assistant"]);
    assert_eq!(shown["name"], "assistant");
    let unknown = octopus_with(
        &server,
        &[("OCTOPUS_API_KEY", key)],
        &["agents", "get", "nobody"],
    );
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no agent named \"nobody\""));
    let answer = reqwest::Client::new()
        .get(format!("{}/v1/agents/assistant", server.url))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 400);
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_id");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("a name is not an id"),
        "{body}"
    );

    // A restore into a tenant made for it: no agent of its own, so the
    // dump's agent keeps its name and recall by that name finds its memory.
    let dump = dir.path().join("default.jsonl");
    let exported = octopus_with(&server, &[("OCTOPUS_API_KEY", key)], &["export"]);
    assert!(exported.status.success());
    std::fs::write(&dump, &exported.stdout).unwrap();
    let restored = octopus_with(
        &server,
        &[("OCTOPUS_ADMIN_KEY", ADMIN_KEY)],
        &["init", "--tenant", "restored", "--no-agent"],
    );
    let restored = exports(&restored);
    let names: Vec<&str> = restored.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["OCTOPUS_URL", "OCTOPUS_API_KEY"]);
    let restored_key = restored[1].1.as_str();
    let imported = octopus_with(
        &server,
        &[("OCTOPUS_API_KEY", restored_key)],
        &["import", dump.to_str().unwrap()],
    );
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    let found = octopus_with(
        &server,
        &[
            ("OCTOPUS_API_KEY", restored_key),
            ("OCTOPUS_AGENT", "assistant"),
        ],
        &[
            "recall",
            "--user",
            "alice",
            "bees roof",
            "--mode",
            "keyword",
        ],
    );
    let found: Value = serde_json::from_slice(&found.stdout).unwrap();
    assert_eq!(
        found["items"][0]["text"], "I keep bees on the roof",
        "{found}"
    );
    // Into a tenant that has an agent of the name, the copy is renamed, and
    // the command says so.
    let copied = octopus_with(
        &server,
        &[("OCTOPUS_API_KEY", key)],
        &["import", dump.to_str().unwrap()],
    );
    let said = String::from_utf8_lossy(&copied.stderr);
    assert!(
        copied.status.success() && said.contains("came in as \"assistant (copy)\""),
        "{said}"
    );
}

/// Started without an admin key, the server makes one and prints it last,
/// after the lines about where it listens, as a line to paste.
#[test]
fn a_generated_admin_key_is_printed_last_as_an_export() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_octopus"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--log",
            "warn",
            "--data-dir",
        ])
        .arg(dir.path())
        .env_remove("OCTOPUS_ADMIN_KEY")
        .env_remove("OCTOPUS_CONFIG")
        .env_remove("OCTOPUS_DATABASE_URL")
        .env_remove("OCTOPUS_QDRANT_URL")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    let key = loop {
        let line = lines.next().expect("the server ended").unwrap();
        if let Some(key) = line.trim().strip_prefix("export OCTOPUS_ADMIN_KEY=") {
            break key.to_owned();
        }
        seen.push(line);
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        seen.iter()
            .any(|line| line.starts_with("Octopus listening on")),
        "the key comes after where the server listens: {seen:?}"
    );
    assert!(key.starts_with("oct_"), "{key}");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(
        rest.iter()
            .any(|line| line.contains("OCTOPUS_ADMIN_KEY set")),
        "it says how to choose one: {rest:?}"
    );
}

/// `text` with what changes from run to run (short ids, minutes) masked.
fn masked(text: &str) -> String {
    text.split_inclusive(['\n', ' '])
        .map(|word| {
            let bare = word.trim_end();
            let id_like = bare.len() == 8 && bare.chars().all(|c| c.is_ascii_hexdigit());
            let time_like = bare.len() == 5 && bare.as_bytes()[2] == b':';
            let date_like =
                bare.len() == 10 && bare.as_bytes()[4] == b'-' && bare.as_bytes()[7] == b'-';
            match (id_like, time_like, date_like) {
                (true, _, _) => word.replacen(bare, "<id>    ", 1),
                (_, true, _) => word.replacen(bare, "hh:mm", 1),
                (_, _, true) => word.replacen(bare, "yyyy-mm-dd", 1),
                _ => word.to_owned(),
            }
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_gets_tables_and_a_script_gets_json() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let (_, key) = server.tenant("acme").await;
    for (name, prompt) in [
        ("support", "You are Acme's support agent."),
        ("concierge", "You find restaurants."),
    ] {
        octopus(
            &server,
            &key,
            &[
                "agents",
                "create",
                "--name",
                name,
                "--model",
                "gpt-4o-mini",
                "--system-prompt",
                prompt,
            ],
        );
    }
    let env = [("OCTOPUS_API_KEY", key.as_str())];
    let table = octopus_with(&server, &env, &["agents", "list", "--table"]);
    assert!(table.status.success());
    assert_eq!(
        masked(&String::from_utf8_lossy(&table.stdout)),
        "name       id        created_at        is_active  system_prompt\n\
         support    <id>      yyyy-mm-dd hh:mm  true       You are Acme's support agent.\n\
         concierge  <id>      yyyy-mm-dd hh:mm  true       You find restaurants.\n"
    );
    let one = octopus_with(&server, &env, &["agents", "get", "support", "--table"]);
    let one = String::from_utf8_lossy(&one.stdout);
    assert!(one.starts_with("name:  "), "{one}");
    assert!(
        one.contains("\nsystem_prompt:  You are Acme's support agent.\n"),
        "{one}"
    );
    // Piped, the answer is JSON; --json says so on a terminal too.
    for args in [&["agents", "list"][..], &["agents", "list", "--json"]] {
        let piped = octopus_with(&server, &env, args);
        let answer: Value = serde_json::from_slice(&piped.stdout).unwrap();
        assert_eq!(answer["items"].as_array().unwrap().len(), 2);
    }
    // A reader that closes the pipe before the answer comes (`| head -0`)
    // took what it wanted: no panic, no error.
    let mut child = Command::new(env!("CARGO_BIN_EXE_octopus"))
        .args(["agents", "list"])
        .env("OCTOPUS_URL", &server.url)
        .env("OCTOPUS_API_KEY", &key)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{said}");
    assert!(
        !said.contains("panicked") && !said.contains("Broken pipe"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_chats_brings_an_export_once_and_refuses_a_file_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let tenant = octopus(&server, ADMIN_KEY, &["tenants", "create", "acme"]);
    let key = octopus(
        &server,
        ADMIN_KEY,
        &["keys", "create", tenant["id"].as_str().unwrap()],
    );
    let key = key["key"].as_str().unwrap();
    octopus(
        &server,
        key,
        &[
            "agents",
            "create",
            "--name",
            "companion",
            "--model",
            "gpt-4o-mini",
        ],
    );
    let fixtures = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../octopus-core/tests/fixtures/chat_exports"
    );
    let chatgpt = format!("{fixtures}/chatgpt.json");
    let import = |file: &str| {
        Command::new(env!("CARGO_BIN_EXE_octopus"))
            .args([
                "import-chats",
                file,
                "--agent",
                "companion",
                "--user",
                "ana",
                "--json",
            ])
            .env("OCTOPUS_URL", &server.url)
            .env("OCTOPUS_API_KEY", key)
            .env_remove("OCTOPUS_AGENT")
            .output()
            .unwrap()
    };
    let answer = |output: std::process::Output| -> Value {
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).unwrap()
    };

    // A file cut short: refused before anything is sent.
    let text = std::fs::read_to_string(&chatgpt).unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &text[..text.len() - 40]).unwrap();
    let refused = import(cut.to_str().unwrap());
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("is not a whole export") && said.contains("line"),
        "{said}"
    );
    let none = octopus(&server, key, &["conversations", "list", "--user", "ana"]);
    assert_eq!(none["items"], json!([]), "a refused file stores nothing");

    // The format is told from the file; the second import finds it all stored.
    let first = answer(import(&chatgpt));
    assert_eq!(
        (&first["imported"], &first["messages"]),
        (&json!(2), &json!(9)),
        "{first}"
    );
    let again = answer(import(&chatgpt));
    assert_eq!(
        (&again["imported"], &again["already_imported"]),
        (&json!(0), &json!(2)),
        "{again}"
    );
    let listed = octopus(&server, key, &["conversations", "list", "--user", "ana"]);
    let mut titles: Vec<_> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["title"].clone())
        .collect();
    titles.sort_by_key(Value::to_string);
    assert_eq!(titles, [json!("Lisbon in May"), json!("Sourdough starter")]);

    // The export's zip is named as such.
    let zip = dir.path().join("export.zip");
    std::fs::write(&zip, b"PK\x03\x04rest of a zip").unwrap();
    let refused = import(zip.to_str().unwrap());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("unzip it"),
        "{refused:?}"
    );
}
