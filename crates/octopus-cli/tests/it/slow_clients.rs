//! No slow client can take the server down: connections that never finish a
//! request are closed within the configured times, the caps refuse what is
//! over them, and `/healthz` answers throughout. Against the real binary.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::process::Server;

/// The timeouts the server is started with, in seconds.
const TIMEOUT_SECS: u64 = 1;
/// Connections one address may hold.
const PER_ADDRESS: usize = 12;
/// How late after its timeout a connection may still be closed: the server's
/// timers, and a loaded CI machine.
const SLACK: Duration = Duration::from_secs(3);

fn config(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("octopus.toml");
    std::fs::write(
        &path,
        format!(
            "[server]\nheader_read_timeout_secs = {TIMEOUT_SECS}\nbody_read_timeout_secs = {TIMEOUT_SECS}\n\
             keep_alive_timeout_secs = {TIMEOUT_SECS}\nmax_connections_per_address = {PER_ADDRESS}\n"
        ),
    )
    .unwrap();
    path
}

fn address(url: &str) -> SocketAddr {
    url.trim_start_matches("http://").parse().unwrap()
}

/// A connection from `source` (another loopback address than the one the
/// health checks come from, so the per-address cap is the slow clients' own).
async fn connect_from(source: &str, server: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(server).await.unwrap()
}

/// Reads until the server closes the connection; returns what it sent, or
/// panics if it is still open `within` from now.
async fn read_until_closed(stream: &mut TcpStream, within: Duration) -> String {
    let mut received = Vec::new();
    let mut buffer = [0u8; 1024];
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buffer)).await {
            Err(_) => panic!(
                "still open after {within:?}; received {:?}",
                String::from_utf8_lossy(&received)
            ),
            Ok(Ok(0)) | Ok(Err(_)) => return String::from_utf8_lossy(&received).into_owned(),
            Ok(Ok(n)) => received.extend_from_slice(&buffer[..n]),
        }
    }
}

async fn healthz(server: &Server) -> reqwest::StatusCode {
    server
        .client()
        .get(format!("{}/healthz", server.url))
        .timeout(Duration::from_secs(2))
        .send()
        .await
        .expect("/healthz answers while slow clients hold connections")
        .status()
}

/// What each slow client sends before it stalls, and what it then trickles.
enum Stall {
    ConnectOnly,
    UnfinishedHeaders,
    PartialBody,
    TrickledHeaders,
    TrickledBody,
}

impl Stall {
    const ALL: [Stall; 5] = [
        Stall::ConnectOnly,
        Stall::UnfinishedHeaders,
        Stall::PartialBody,
        Stall::TrickledHeaders,
        Stall::TrickledBody,
    ];

    /// Sends the opening, then trickles one byte every 300 ms until the
    /// server closes the connection; returns what the server answered. The
    /// bodies come with a valid key: without one, a body is not read at all
    /// (`hostile_clients`).
    async fn run(&self, mut stream: TcpStream, key: &str) -> (String, Duration) {
        let started = Instant::now();
        let body_opening = format!(
            "POST /v1/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
        );
        let (opening, trickle): (String, &str) = match self {
            Stall::ConnectOnly => (String::new(), ""),
            Stall::UnfinishedHeaders => ("GET /v1/agents HTTP/1.1\r\nHost: x\r\n".into(), ""),
            Stall::PartialBody => (format!("{body_opening}{{\"na"), ""),
            Stall::TrickledHeaders => (
                "GET /v1/agents HTTP/1.1\r\n".into(),
                "X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            ),
            Stall::TrickledBody => (
                body_opening,
                "{\"name\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            ),
        };
        stream.write_all(opening.as_bytes()).await.unwrap();
        let (mut reader, mut writer) = stream.into_split();
        let trickler = tokio::spawn(async move {
            for byte in trickle.bytes() {
                tokio::time::sleep(Duration::from_millis(300)).await;
                if writer.write_all(&[byte]).await.is_err() {
                    return;
                }
            }
            // Then silence, holding the connection open.
            tokio::time::sleep(Duration::from_secs(60)).await;
        });
        let mut received = Vec::new();
        let mut buffer = [0u8; 1024];
        let limit = Duration::from_secs(TIMEOUT_SECS) + SLACK;
        let answer = loop {
            match tokio::time::timeout(limit, reader.read(&mut buffer)).await {
                Err(_) => break None,
                Ok(Ok(0)) | Ok(Err(_)) => {
                    break Some(String::from_utf8_lossy(&received).into_owned());
                }
                Ok(Ok(n)) => received.extend_from_slice(&buffer[..n]),
            }
        };
        trickler.abort();
        let answer =
            answer.unwrap_or_else(|| panic!("a slow client was not cut off within {limit:?}"));
        (answer, started.elapsed())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn slow_clients_are_cut_off_in_time_and_never_starve_the_health_check() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let server = Server::start_with(&dir.path().join("data"), Some(&config));
    let target = address(&server.url);
    let (_, key, _) = server.tenant_with_agent("acme").await;

    // Two of each kind of slow client, all from 127.0.0.2.
    let mut clients = Vec::new();
    for _ in 0..2 {
        for stall in Stall::ALL {
            let stream = connect_from("127.0.0.2", target).await;
            let key = key.clone();
            clients.push(tokio::spawn(async move {
                let outcome = stall.run(stream, &key).await;
                (stall_name(&stall), outcome)
            }));
        }
    }
    // While they stall, the server answers everyone else.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(healthz(&server).await, reqwest::StatusCode::OK);

    for client in clients {
        let (name, (answer, took)) = client.await.unwrap();
        assert!(
            took <= Duration::from_secs(TIMEOUT_SECS) + SLACK,
            "{name}: closed after {took:?}"
        );
        if name.ends_with("body") {
            assert!(
                answer.starts_with("HTTP/1.1 408"),
                "{name}: a body that does not arrive in time is answered 408, got {answer:?}"
            );
            assert!(answer.contains("request_timeout"), "{answer}");
        }
    }
    assert_eq!(healthz(&server).await, reqwest::StatusCode::OK);
}

fn stall_name(stall: &Stall) -> &'static str {
    match stall {
        Stall::ConnectOnly => "connect only",
        Stall::UnfinishedHeaders => "unfinished headers",
        Stall::PartialBody => "partial body",
        Stall::TrickledHeaders => "trickled headers",
        Stall::TrickledBody => "trickled body",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn connections_over_the_per_address_cap_are_refused_and_others_served() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let server = Server::start_with(dir.path(), Some(&config));
    let target = address(&server.url);

    let mut held = Vec::new();
    for _ in 0..PER_ADDRESS {
        held.push(connect_from("127.0.0.3", target).await);
    }
    // The cap's worth is open; one more from the same address is told why and closed.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut over = connect_from("127.0.0.3", target).await;
    let refused = read_until_closed(&mut over, Duration::from_secs(2)).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused:?}");
    assert!(refused.contains("retry-after: 1"), "{refused:?}");
    assert!(refused.contains("too_many_connections"), "{refused:?}");
    // Another address is not held to 127.0.0.3's cap.
    assert_eq!(healthz(&server).await, reqwest::StatusCode::OK);

    // The held connections are idle: closed after the keep-alive timeout, and
    // their places given back.
    for stream in &mut held {
        read_until_closed(stream, Duration::from_secs(TIMEOUT_SECS) + SLACK).await;
    }
    drop(held);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut again = connect_from("127.0.0.3", target).await;
    again
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let answer = read_until_closed(&mut again, Duration::from_secs(5)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_alive_connection_serves_requests_then_closes_when_idle() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let server = Server::start_with(dir.path(), Some(&config));
    let mut stream = TcpStream::connect(address(&server.url)).await.unwrap();
    for _ in 0..3 {
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut buffer = [0u8; 512];
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer))
            .await
            .expect("answered")
            .unwrap();
        assert!(buffer[..n].starts_with(b"HTTP/1.1 200"));
        // Pauses shorter than the keep-alive timeout keep the connection.
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let started = Instant::now();
    let rest = read_until_closed(&mut stream, Duration::from_secs(TIMEOUT_SECS) + SLACK).await;
    assert!(rest.is_empty(), "{rest:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "not closed early"
    );
}
