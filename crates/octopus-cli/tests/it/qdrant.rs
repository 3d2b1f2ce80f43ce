//! `octopus serve` with vectors on Qdrant refuses to start, with one line
//! naming Qdrant, when the server does not answer.

use std::process::Command;

#[test]
fn serve_refuses_to_start_when_qdrant_does_not_answer() {
    // A port nothing listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_octopus"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--admin-key",
            "oct_admin_test",
        ])
        .arg("--data-dir")
        .arg(dir.path())
        .env_remove("OCTOPUS_CONFIG")
        .env_remove("OCTOPUS_DATABASE_URL")
        .env("OCTOPUS_QDRANT_URL", format!("http://127.0.0.1:{port}"))
        .output()
        .unwrap();
    assert!(!output.status.success(), "serve started without Qdrant");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("Qdrant") && stderr.contains(&port.to_string()),
        "the refusal names Qdrant and where it was looked for: {stderr}"
    );
}
