//! One process holds a data directory at a time: a second `octopus` that
//! would open it (to serve MCP over it, to migrate it) refuses with one line
//! naming the holder's pid and writes nothing; a holder killed outright
//! leaves no lock behind.

use std::process::{Command, Output, Stdio};

use reqwest::Method;

use crate::process::Server;

fn octopus(args: &[&str], data: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_octopus"))
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .args(["--log", "warn"])
        .env("OCTOPUS_API_KEY", "oct_not_a_key_that_is_ever_checked")
        .env_remove("OCTOPUS_CONFIG")
        .env_remove("OCTOPUS_DATABASE_URL")
        .env_remove("OCTOPUS_QDRANT_URL")
        .stdin(Stdio::null())
        .output()
        .expect("run octopus")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_process_on_a_held_data_directory_names_the_holder_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = Server::start(&data);
    let (key, _, conversations) = server.seed(1).await;
    let conversation = &conversations[0];
    server
        .call(
            &key,
            Method::POST,
            &format!("/v1/conversations/{conversation}/messages"),
            Some(serde_json::json!({"role": "user", "content": "hello"})),
        )
        .await;
    let before = server.conversation_messages(&key, conversation).await.len();
    assert_eq!(before, 1);

    for args in [&["mcp"][..], &["migrate"][..]] {
        let output = octopus(args, &data);
        assert!(!output.status.success(), "{args:?} ran beside the server");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: one line, got {stderr}");
        assert!(
            lines[0].contains(&format!("(pid {})", server.pid())),
            "{args:?}: {stderr}"
        );
        assert!(
            lines[0].contains("in use by another Octopus process"),
            "{stderr}"
        );
        assert!(output.stdout.is_empty(), "{args:?} wrote to stdout");
    }
    assert_eq!(
        server.conversation_messages(&key, conversation).await.len(),
        before
    );
    let health = server
        .client()
        .request(Method::GET, format!("{}/healthz", server.url))
        .send()
        .await
        .unwrap();
    assert!(health.status().is_success(), "the holder serves on");

    // Killed outright, the holder leaves the directory free.
    server.kill_hard();
    let output = octopus(&["migrate"], &data);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
