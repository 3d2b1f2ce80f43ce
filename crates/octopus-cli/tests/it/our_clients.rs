//! Octopus's own clients, each run by its own test suite against a real
//! `octopus serve`: `clients/python` with pytest, installed as a user
//! installs it; `clients/typescript` with Node's test runner. The server's
//! chat model is the loopback fake on OpenAI's wire format, answering
//! `echo: <the user's last message>`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use octopus_testkit::fake_chat::{self, ChatProvider};

use crate::clients::{python, required, run};
use crate::process::{ADMIN_KEY, Server};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A server whose operator trusts the loopback chat model and holds the
/// OpenAI key it asks for; and the model's base URL for an agent.
async fn server_with_chat(dir: &Path) -> (Server, String) {
    let fake = Arc::new(ChatProvider::default());
    let fake_url = fake_chat::serve(fake).await;
    let config = dir.join("octopus.toml");
    std::fs::write(
        &config,
        format!("[llm]\nmax_retries = 0\nallowed_base_urls = [\"{fake_url}\"]\n"),
    )
    .unwrap();
    let server = Server::start_with_env(
        &dir.join("data"),
        Some(&config),
        None,
        &[("OPENAI_API_KEY", "sk-test")],
    );
    (server, format!("{fake_url}/v1"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_passes_its_suite() {
    let dir = tempfile::tempdir().unwrap();
    let (server, chat_url) = server_with_chat(dir.path()).await;
    // Installed from a copy of its folder, as `pip install ./clients/python`
    // would (a build writes beside the sources, which are not ours to dirty).
    let sources = dir.path().join("octopus-client");
    let copied = Command::new("cp")
        .arg("-r")
        .arg(repository().join("clients/python"))
        .arg(&sources)
        .status()
        .unwrap();
    assert!(copied.success());
    let site = dir.path().join("site");
    run(
        &python(),
        &[
            Path::new("-m"),
            Path::new("pip"),
            Path::new("install"),
            Path::new("--quiet"),
            Path::new("--disable-pip-version-check"),
            Path::new("--no-deps"),
            Path::new("--no-build-isolation"),
            Path::new("--target"),
            &site,
            &sources,
        ],
        &[],
    );
    let printed = run(
        &python(),
        &[
            Path::new("-m"),
            Path::new("pytest"),
            Path::new("-q"),
            Path::new("-p"),
            Path::new("no:cacheprovider"),
            &repository().join("clients/python/tests"),
        ],
        &[
            ("PYTHONPATH", site.to_str().unwrap()),
            ("PYTHONDONTWRITEBYTECODE", "1"),
            ("OCTOPUS_URL", &server.url),
            ("OCTOPUS_ADMIN_KEY", ADMIN_KEY),
            ("OCTOPUS_TEST_CHAT_URL", &chat_url),
        ],
    );
    assert!(printed.contains(" passed"), "{printed}");
}
