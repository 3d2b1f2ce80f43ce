//! Clients that try to grow the server's memory or hold its connections,
//! against the real binary on loopback: bodies sent without a key are not
//! read; bodies trickled with one cost what has arrived; bodies in flight
//! are capped server-wide; a connection that sends nothing is closed at the
//! header timeout; and health probes answer while the connection cap is full.

use std::net::SocketAddr;
use std::time::Duration;

use reqwest::Method;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::process::Server;

/// How much a hostile load may add to the server's resident memory.
const MEMORY_SLACK: u64 = 50 << 20;
/// Connections of each attack, as in the probe that found the fault.
const ATTACKERS: usize = 50;
/// How long each attack trickles.
const TRICKLE_FOR: Duration = Duration::from_secs(3);

fn start(dir: &std::path::Path, config: &str) -> Server {
    let path = dir.join("octopus.toml");
    std::fs::write(&path, config).unwrap();
    Server::start_with(&dir.join("data"), Some(&path))
}

fn address(url: &str) -> SocketAddr {
    url.trim_start_matches("http://").parse().unwrap()
}

async fn connect_from(source: &str, server: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    let stream = socket.connect(server).await.unwrap();
    // Every byte its own segment, as the attack sends them.
    stream.set_nodelay(true).unwrap();
    stream
}

/// A POST announcing a 16 MB body, with `key` when given.
fn opening(key: Option<&str>) -> String {
    let authorization = key
        .map(|key| format!("Authorization: Bearer {key}\r\n"))
        .unwrap_or_default();
    format!(
        "POST /v1/agents HTTP/1.1\r\nHost: x\r\n{authorization}Content-Type: application/json\r\nContent-Length: 16000000\r\n\r\n"
    )
}

/// What a hostile client saw: the server's answer, and how long after its
/// opening the server closed the connection (`None`: still open when the
/// client stopped).
struct Outcome {
    answer: String,
    closed_after: Option<Duration>,
}

/// Sends `opening`, then one byte every 5 ms for `TRICKLE_FOR` or until the
/// server closes.
async fn trickle(mut stream: TcpStream, opening: String) -> Outcome {
    let started = tokio::time::Instant::now();
    stream.write_all(opening.as_bytes()).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    // The write half is handed back, not dropped: closing it would end the
    // body early, and the server would rightly answer that.
    let writing = tokio::spawn(async move {
        let until = tokio::time::Instant::now() + TRICKLE_FOR;
        while tokio::time::Instant::now() < until {
            if writer.write_all(b"a").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        writer
    });
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    let deadline = started + TRICKLE_FOR + Duration::from_secs(1);
    let closed_after = loop {
        match tokio::time::timeout_at(deadline, reader.read(&mut buffer)).await {
            Err(_) => break None,
            Ok(Ok(0)) | Ok(Err(_)) => break Some(started.elapsed()),
            Ok(Ok(n)) => received.extend_from_slice(&buffer[..n]),
        }
    };
    let writer = writing.await.unwrap();
    drop(writer);
    Outcome {
        answer: String::from_utf8_lossy(&received).into_owned(),
        closed_after,
    }
}

/// A legitimate client's work while an attack goes on: a health check and
/// an agent created with a small body.
async fn legitimate_work(server: &Server, key: &str, name: &str) {
    let health = server
        .client()
        .get(format!("{}/healthz", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), reqwest::StatusCode::OK);
    server
        .call(
            key,
            Method::POST,
            "/v1/agents",
            Some(json!({"name": name, "llm": {"provider": "ollama", "model": "m"}})),
        )
        .await;
}

/// A server with a tenant, after a first request: its key and resident
/// memory then.
async fn warmed_up(dir: &std::path::Path) -> (Server, String, u64) {
    let server = start(dir, "");
    let (_, key, _) = server.tenant_with_agent("acme").await;
    legitimate_work(&server, &key, "warm-up").await;
    let idle = server.resident_bytes();
    (server, key, idle)
}

/// `ATTACKERS` connections trickling into a 16 MB POST, with `key` or none.
fn attack(server: &Server, key: Option<&str>) -> Vec<tokio::task::JoinHandle<Outcome>> {
    let target = address(&server.url);
    (0..ATTACKERS)
        .map(|_| {
            let opening = opening(key);
            tokio::spawn(async move {
                let stream = connect_from("127.0.0.2", target).await;
                trickle(stream, opening).await
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bodies_without_a_key_are_refused_unread_and_cost_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (server, key, idle) = warmed_up(dir.path()).await;
    let attackers = attack(&server, None);
    tokio::time::sleep(TRICKLE_FOR / 2).await;
    legitimate_work(&server, &key, "during").await;
    let during = server.resident_bytes();
    let mut answered = 0;
    for attacker in attackers {
        let Outcome {
            answer,
            closed_after,
        } = attacker.await.unwrap();
        // Refused at once: closed long before its trickle would end. (A
        // close with the client's bytes unread is a reset, which may come
        // before the answer is read: hence counting the answers.)
        assert!(
            closed_after.is_some_and(|after| after < TRICKLE_FOR / 2),
            "held for {closed_after:?}: {answer:?}"
        );
        if !answer.is_empty() {
            assert!(answer.starts_with("HTTP/1.1 401"), "{answer:?}");
            assert!(answer.contains("unauthenticated"), "{answer:?}");
            assert!(answer.contains("connection: close"), "{answer:?}");
            answered += 1;
        }
    }
    assert!(answered > 0, "no attacker read the 401");
    assert!(
        during < idle + MEMORY_SLACK,
        "resident memory went from {} MB to {} MB",
        idle >> 20,
        during >> 20
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_trickled_body_costs_what_has_arrived_not_a_page_per_segment() {
    let dir = tempfile::tempdir().unwrap();
    let (server, key, idle) = warmed_up(dir.path()).await;
    let attackers = attack(&server, Some(&key));
    // Near the trickles' end, when they have sent the most.
    tokio::time::sleep(TRICKLE_FOR - Duration::from_millis(300)).await;
    let during = server.resident_bytes();
    legitimate_work(&server, &key, "during").await;
    for attacker in attackers {
        let outcome = attacker.await.unwrap();
        assert!(
            outcome.closed_after.is_none() && outcome.answer.is_empty(),
            "still reading its body, not refused: {:?}",
            outcome.answer
        );
    }
    assert!(
        during < idle + MEMORY_SLACK,
        "resident memory went from {} MB to {} MB",
        idle >> 20,
        during >> 20
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bodies_in_flight_are_capped_for_the_whole_server() {
    const CAP: usize = 8 << 20;
    let dir = tempfile::tempdir().unwrap();
    let server = start(
        dir.path(),
        &format!(
            "[server]\nmax_body_bytes = {}\nmax_body_bytes_in_flight = {CAP}\n",
            4 << 20
        ),
    );
    let target = address(&server.url);
    let (_, key, _) = server.tenant_with_agent("acme").await;
    legitimate_work(&server, &key, "warm-up").await;
    let idle = server.resident_bytes();

    // Six bodies of 3 MB each arrive and stall: 18 MB, past the 8 MB cap.
    let mut held = Vec::new();
    for _ in 0..6 {
        let mut stream = connect_from("127.0.0.2", target).await;
        let head = format!(
            "POST /v1/agents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: 4000000\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        held.push(tokio::spawn(async move {
            // The server may refuse and close before all is written.
            let _ = stream.write_all(&vec![b' '; 3 << 20]).await;
            let mut answer = Vec::new();
            let mut buffer = [0u8; 4096];
            let closed = loop {
                match tokio::time::timeout(Duration::from_secs(3), stream.read(&mut buffer)).await {
                    Err(_) => break false,
                    Ok(Ok(0)) | Ok(Err(_)) => break true,
                    Ok(Ok(n)) => answer.extend_from_slice(&buffer[..n]),
                }
            };
            (
                String::from_utf8_lossy(&answer).into_owned(),
                closed,
                stream,
            )
        }));
    }
    // Those still open after their 3 MB are held by the server, the rest
    // refused; whatever arrived first, at most two fit under the cap.
    let mut refused = 0;
    let mut streams = Vec::new();
    for client in held {
        let (answer, closed, stream) = client.await.unwrap();
        if closed {
            refused += 1;
        }
        if !answer.is_empty() {
            assert!(answer.starts_with("HTTP/1.1 503"), "{answer:?}");
            assert!(answer.contains("server_busy"), "{answer:?}");
            assert!(answer.contains("retry-after: 1"), "{answer:?}");
        }
        streams.push(stream);
    }
    assert!(
        refused >= 4,
        "{refused} of 6 refused: at most 2 fit under 8 MB"
    );
    let during = server.resident_bytes();
    assert!(
        during < idle + CAP as u64 + MEMORY_SLACK,
        "resident memory went from {} MB to {} MB",
        idle >> 20,
        during >> 20
    );
    // Once the stalled bodies' connections close, their share comes back.
    drop(streams);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let big = format!(
        "{{\"name\": \"big\", \"system_prompt\": \"{}\", \"llm\": {{\"provider\": \"ollama\", \"model\": \"m\"}}}}",
        "a".repeat(200_000)
    );
    let response = server
        .client()
        .post(format!("{}/v1/agents", server.url))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::CREATED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_sends_nothing_is_closed_at_the_header_timeout() {
    let dir = tempfile::tempdir().unwrap();
    // A keep-alive far longer than the header timeout: the idle newcomer
    // must be held to the shorter one.
    let server = start(
        dir.path(),
        "[server]\nheader_read_timeout_secs = 1\nkeep_alive_timeout_secs = 60\n",
    );
    let mut silent = connect_from("127.0.0.2", address(&server.url)).await;
    let started = std::time::Instant::now();
    let mut buffer = [0u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(20), silent.read(&mut buffer)).await;
    assert!(
        matches!(read, Ok(Ok(0)) | Ok(Err(_))),
        "still open after 20 s: {read:?}"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "closed before its time"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_probes_answer_while_the_connection_cap_is_full() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(
        dir.path(),
        "[server]\nmax_connections = 8\nmax_connections_per_address = 0\nprobe_connections = 2\nheader_read_timeout_secs = 30\n",
    );
    let target = address(&server.url);
    let (_, key, _) = server.tenant_with_agent("acme").await;
    // The whole cap held by silent connections from four addresses, and
    // more from them refused.
    let mut held = Vec::new();
    for i in 0..12 {
        held.push(connect_from(&format!("127.0.0.{}", 10 + i % 4), target).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Each from an address of its own: the reserve admits only an address
    // holding no other connection, and the server may let go of a closed
    // one a moment after the client saw it close.
    let ask = |from: &'static str, path: &'static str, key: Option<String>| async move {
        let mut stream = connect_from(from, target).await;
        let authorization = key
            .map(|key| format!("Authorization: Bearer {key}\r\n"))
            .unwrap_or_default();
        stream
            .write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\n{authorization}\r\n").as_bytes())
            .await
            .unwrap();
        let mut answer = Vec::new();
        let mut buffer = [0u8; 4096];
        loop {
            match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buffer)).await {
                Err(_) | Ok(Ok(0)) | Ok(Err(_)) => break,
                Ok(Ok(n)) => answer.extend_from_slice(&buffer[..n]),
            }
        }
        String::from_utf8_lossy(&answer).into_owned()
    };
    // Two probes, one reserved connection each (however soon the server
    // lets go of the first).
    let healthz = ask("127.0.0.50", "/healthz", None).await;
    assert!(healthz.starts_with("HTTP/1.1 200"), "{healthz:?}");
    let readyz = ask("127.0.0.51", "/readyz", None).await;
    assert!(readyz.starts_with("HTTP/1.1 200"), "{readyz:?}");
    // Anything else is refused, from the reserve or at the door.
    let other = ask("127.0.0.52", "/v1/agents", Some(key)).await;
    assert!(other.starts_with("HTTP/1.1 503"), "{other:?}");
    assert!(other.contains("too_many_connections"), "{other:?}");
    drop(held);
}
