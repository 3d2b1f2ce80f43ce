//! A Qdrant server of a test's own, to kill and restart: the fault tests'.
//! `OCTOPUS_TEST_QDRANT_BIN` names the server binary (`scripts/test.sh`
//! takes `qdrant` on PATH when it is unset).

#![allow(clippy::unwrap_used, clippy::panic)] // test support: a panic is how a setup fails

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::{QdrantLayout, QdrantOptions};

/// A Qdrant server in a folder of its own, on fixed ports, so that it comes
/// back where the store expects it.
pub struct OwnQdrant {
    binary: PathBuf,
    dir: tempfile::TempDir,
    http: u16,
    grpc: u16,
    process: Option<Child>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl OwnQdrant {
    /// Starts one from the binary `OCTOPUS_TEST_QDRANT_BIN` names.
    ///
    /// # Panics
    /// When the variable is unset or the server does not start.
    pub fn start() -> Self {
        let binary = std::env::var("OCTOPUS_TEST_QDRANT_BIN").unwrap_or_else(|_| {
            panic!(
                "OCTOPUS_TEST_QDRANT_BIN is not set: the Qdrant fault tests start and kill a Qdrant \
                 server of their own; point it at a `qdrant` binary (scripts/test.sh passes on \
                 the one it was given, or `qdrant` on PATH)"
            )
        });
        let mut qdrant = Self {
            binary: binary.into(),
            dir: tempfile::tempdir().unwrap(),
            http: free_port(),
            grpc: free_port(),
            process: None,
        };
        qdrant.resume();
        qdrant
    }

    /// Its gRPC URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.grpc)
    }

    /// Its REST URL, which Octopus does not speak.
    pub fn rest_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.http)
    }

    /// Starts the server over its folder and waits until it answers.
    pub fn resume(&mut self) {
        let storage = |name: &str| self.dir.path().join(name);
        let child = Command::new(&self.binary)
            .current_dir(self.dir.path())
            .env("QDRANT__SERVICE__HOST", "127.0.0.1")
            .env("QDRANT__SERVICE__HTTP_PORT", self.http.to_string())
            .env("QDRANT__SERVICE__GRPC_PORT", self.grpc.to_string())
            .env("QDRANT__STORAGE__STORAGE_PATH", storage("storage"))
            .env("QDRANT__STORAGE__SNAPSHOTS_PATH", storage("snapshots"))
            .env("QDRANT__TELEMETRY_DISABLED", "true")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.process = Some(child);
        wait_for(self.dir.path(), self.grpc, self.http);
    }

    /// `kill -9`: no shutdown of its own.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.process.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    /// Options for it, with short timeouts.
    pub fn options(&self) -> QdrantOptions {
        let mut options = QdrantOptions::new(self.url());
        options.layout = QdrantLayout::Shared;
        options.timeout = Duration::from_secs(2);
        options.connect_timeout = Duration::from_secs(1);
        options
    }
}

impl Drop for OwnQdrant {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Waits until the gRPC port takes connections and the server says it is
/// ready (`/readyz` on its REST port): a port is bound before the service
/// behind it answers, and a server started in between would find none.
fn wait_for(dir: &Path, grpc: u16, http: u16) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", grpc)).is_err() || !ready(http) {
        assert!(
            Instant::now() < deadline,
            "Qdrant in {} did not start",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether `GET /readyz` on `port` answers 200.
fn ready(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let asked = stream.write_all(b"GET /readyz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    let mut answer = [0u8; 12];
    asked.is_ok()
        && stream.read_exact(&mut answer).is_ok()
        && answer.starts_with(b"HTTP/1.")
        && &answer[9..12] == b"200"
}
