//! The API while PostgreSQL is out of reach: the server's connections go
//! through a loopback relay the test cuts, as a database outage would. A
//! request then answers `503 unavailable` naming the database within the
//! connect timeout, and once the relay is back, everything stored is there.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::http::{Method, StatusCode};
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};

use crate::harness::TestServer;

/// Relays connections to `target` while it is open; closed, it drops the
/// ones it holds and refuses new ones.
struct Relay {
    port: u16,
    open: Arc<AtomicBool>,
    cut: Arc<tokio::sync::Notify>,
}

impl Relay {
    async fn start(target: String) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let open = Arc::new(AtomicBool::new(true));
        let cut = Arc::new(tokio::sync::Notify::new());
        let (accepting, cutting) = (Arc::clone(&open), Arc::clone(&cut));
        tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    return;
                };
                if !accepting.load(Ordering::SeqCst) {
                    drop(client); // refused: closed at once
                    continue;
                }
                let target = target.clone();
                let cutting = Arc::clone(&cutting);
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(&target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        () = cutting.notified() => {}
                    }
                });
            }
        });
        Relay { port, open, cut }
    }

    fn cut(&self) {
        self.open.store(false, Ordering::SeqCst);
        self.cut.notify_waiters();
    }

    fn restore(&self) {
        self.open.store(true, Ordering::SeqCst);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_is_a_503_naming_it_within_the_connect_timeout() {
    let url = octopus_postgres::testing::fresh_database().await;
    let (head, rest) = url.rsplit_once('@').unwrap();
    let (address, database) = rest.split_once('/').unwrap();
    let relay = Relay::start(address.to_owned()).await;
    let relayed = format!("{head}@127.0.0.1:{}/{database}", relay.port);
    let server = TestServer::with_backends(Default::default(), |app| {
        app.storage.backend = octopus_app::settings::StorageBackend::Postgres;
        app.storage.postgres.url = relayed;
        app.storage.postgres.connect_timeout_secs = 2;
    })
    .await;
    let (_, key) = server.tenant("acme").await;
    let agent = server.agent(&key, "support").await;

    relay.cut();
    for attempt in 0..3 {
        let started = Instant::now();
        let reply = server
            .call(Method::GET, &format!("/v1/agents/{agent}"), &key, None)
            .await;
        assert!(
            started.elapsed() < Duration::from_secs(2) + Duration::from_secs(3),
            "attempt {attempt} took {:?}",
            started.elapsed()
        );
        // The key and the agent may come from the server's few-second cache.
        if reply.status == StatusCode::OK {
            continue;
        }
        assert_eq!(
            reply.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{}",
            reply.body
        );
        assert_eq!(reply.code(), "unavailable");
        assert!(
            reply.body.to_string().contains("postgresql"),
            "{}",
            reply.body
        );
    }
    let created = server
        .call(
            Method::POST,
            "/v1/conversations",
            &key,
            Some(json!({"agent_id": agent, "user_id": "dana"})),
        )
        .await;
    assert_eq!(
        created.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        created.body
    );

    relay.restore();
    let read = server
        .call(Method::GET, &format!("/v1/agents/{agent}"), &key, None)
        .await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
}
