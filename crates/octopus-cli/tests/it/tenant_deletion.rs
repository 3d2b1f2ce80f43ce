//! Deleting a tenant through the real binary: afterwards no file of the
//! data directory (on PostgreSQL, no row of any table; on Qdrant, no point)
//! holds a word of the tenant's, its keys open nothing, another tenant's
//! data is as it was; a deletion killed (`kill -9`) at any point is
//! finished at restart or by a retry.

use std::path::Path;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::client_commands::octopus;
use crate::forget::{files_containing, import_marked, memory_work_done};
use crate::process::{ADMIN_KEY, Server};

/// In every store of the deleted tenant: its messages, a fact, a knowledge
/// document, a procedure, a webhook. Lower case, as full-text indexes keep it.
const MARKER: &str = "narwhalsaffron62t";
/// The deleted tenant's name.
const NAME: &str = "doomedcorp81z";
/// Said only in the tenant that stays.
const KEPT: &str = "otterjuniper17m";

/// Where a test's server keeps its data: the data directory, and the
/// PostgreSQL database or the Qdrant collections when the test uses them.
struct Place {
    data: std::path::PathBuf,
    config: std::path::PathBuf,
    database: Option<String>,
    qdrant: Option<octopus_qdrant::QdrantOptions>,
}

impl Place {
    fn new(
        dir: &Path,
        database: Option<String>,
        qdrant: Option<octopus_qdrant::QdrantOptions>,
    ) -> Self {
        let config = dir.join("octopus.toml");
        let mut text =
            "[llm]\nsummarise_episodes = false\n[webhooks]\ndestinations = \"any\"\n".to_owned();
        if let Some(options) = &qdrant {
            text.push_str(&format!(
                "[vectors]\nbackend = \"qdrant\"\n[vectors.qdrant]\nurl = \"{}\"\ncollection_prefix = \"{}\"\n",
                options.url, options.prefix
            ));
        }
        std::fs::write(&config, text).unwrap();
        Self {
            data: dir.join("data"),
            config,
            database,
            qdrant,
        }
    }

    fn start(&self) -> Server {
        Server::start_on(&self.data, Some(&self.config), self.database.as_deref())
    }

    /// Where `word` is still held: files, tables, Qdrant points.
    async fn holding(&self, word: &str) -> Vec<String> {
        // On PostgreSQL the server keeps no data directory.
        let mut found = if self.data.exists() {
            files_containing(&self.data, word)
        } else {
            Vec::new()
        };
        if let Some(url) = &self.database {
            found.extend(
                octopus_postgres::testing::tables_containing(url, word)
                    .await
                    .into_iter()
                    .map(|t| format!("table {t}")),
            );
        }
        if let Some(options) = &self.qdrant {
            found.extend(qdrant_points_containing(options, word).await);
        }
        found
    }
}

/// The Qdrant collections under the test's prefix whose points carry
/// `word` in their payload (a user id, a source, a tenant's set).
async fn qdrant_points_containing(
    options: &octopus_qdrant::QdrantOptions,
    word: &str,
) -> Vec<String> {
    // The REST port is the gRPC port's neighbour below.
    let (host, port) = options.url.rsplit_once(':').unwrap();
    let rest = format!("{host}:{}", port.parse::<u16>().unwrap() - 1);
    let client = reqwest::Client::new();
    let listed: Value = client
        .get(format!("{rest}/collections"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut found = Vec::new();
    for collection in listed["result"]["collections"].as_array().unwrap() {
        let name = collection["name"].as_str().unwrap();
        if !name.starts_with(&options.prefix) {
            continue;
        }
        let points: Value = client
            .post(format!("{rest}/collections/{name}/points/scroll"))
            .json(&json!({"limit": 10_000, "with_payload": true, "with_vector": false}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if points["result"].to_string().to_lowercase().contains(word) {
            found.push(format!("qdrant collection {name}"));
        }
    }
    found
}

/// A tenant named `name` with `word` in every store: (tenant, key, agent).
async fn filled(server: &Server, name: &str, word: &str) -> (String, String, String) {
    let (tenant, key, agent) = server.tenant_with_agent(name).await;
    let conversation = server
        .call(
            &key,
            Method::POST,
            "/v1/conversations",
            Some(json!({"agent_id": agent, "user_id": format!("user{word}")})),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    server
        .call(
            &key,
            Method::POST,
            &format!("/v1/conversations/{conversation}/messages"),
            Some(json!({"messages": [
                {"role": "user", "content": format!("The harbour password is {word}")},
                {"role": "assistant", "content": format!("Noted: {word}.")}
            ]})),
        )
        .await;
    server
        .call(
            &key,
            Method::POST,
            "/v1/webhooks",
            Some(
                json!({"url": format!("http://127.0.0.1:9/{word}"), "events": ["fact.added"],
                        "description": format!("audit {word}")}),
            ),
        )
        .await;
    server
        .call(
            &key,
            Method::POST,
            &format!("/v1/agents/{agent}/users/user{word}/facts"),
            Some(json!({"text": format!("The harbour password is {word}")})),
        )
        .await;
    server
        .call(
            &key,
            Method::POST,
            &format!("/v1/agents/{agent}/knowledge/documents"),
            Some(json!({"source": format!("{word}.md"),
                        "text": format!("# Harbour\n\nThe harbour gate opens with {word}.")})),
        )
        .await;
    server
        .call(
            &key,
            Method::POST,
            "/v1/procedures",
            Some(json!({"agent_id": agent, "name": format!("open {word}"),
                        "steps": [{"instruction": format!("Say {word} at the gate")}]})),
        )
        .await;
    memory_work_done(server, &tenant).await;
    // The full-text index holds them too (a search catches it up).
    server
        .call(
            &key,
            Method::GET,
            &format!("/v1/messages/search?q={word}"),
            None,
        )
        .await;
    (tenant, key, agent)
}

/// Recall of the kept tenant's word, as its key sees it.
async fn kept_recall(server: &Server, key: &str, agent: &str) -> Value {
    let mut recall = server
        .call(
            key,
            Method::POST,
            &format!("/v1/agents/{agent}/recall"),
            Some(json!({"user_id": format!("user{KEPT}"), "query": KEPT, "mode": "keyword"})),
        )
        .await;
    recall["items"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .for_each(|hit| {
            // BM25 moves with every other tenant's words.
            hit.as_object_mut()
                .unwrap()
                .retain(|name, _| !name.ends_with("score"));
        });
    recall["items"].clone()
}

async fn status(server: &Server, key: &str, path: &str) -> StatusCode {
    server
        .client()
        .get(format!("{}{path}", server.url))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .status()
}

async fn deleted_tenant_leaves_no_word(place: Place) {
    let server = place.start();
    let (tenant, key, _) = filled(&server, NAME, MARKER).await;
    let (_, kept_key, kept_agent) = filled(&server, "kept", KEPT).await;
    let kept_before = kept_recall(&server, &kept_key, &kept_agent).await;
    // Its fact and its two messages.
    assert_eq!(kept_before.as_array().unwrap().len(), 3, "{kept_before}");
    for word in [MARKER, NAME] {
        assert!(
            !place.holding(word).await.is_empty(),
            "the scan must see {word} before, or its silence after means nothing"
        );
    }

    if let Some(options) = &place.qdrant {
        assert!(
            !qdrant_points_containing(options, MARKER).await.is_empty(),
            "the user's memories are on Qdrant before"
        );
    }

    // By name, from the command line.
    let receipt = octopus(&server, ADMIN_KEY, &["tenants", "delete", NAME, "--yes"]);
    assert_eq!(receipt["tenant_id"], tenant.as_str(), "{receipt}");
    let rows = &receipt["relational"];
    assert_eq!(
        [
            &rows["api_keys"],
            &rows["agents"],
            &rows["conversations"],
            &rows["messages"],
            &rows["facts"],
            &rows["procedures"],
            &rows["knowledge_chunks"],
            &rows["webhooks"],
        ],
        [
            &json!(1),
            &json!(1),
            &json!(1),
            &json!(2),
            &json!(1),
            &json!(1),
            &json!(1),
            &json!(1)
        ],
        "{receipt}"
    );
    assert_eq!(receipt["compacted"], true, "{receipt}");

    for word in [MARKER, NAME] {
        assert_eq!(place.holding(word).await, Vec::<String>::new(), "{word}");
    }
    assert_eq!(
        status(&server, &key, "/v1/agents").await,
        StatusCode::UNAUTHORIZED,
        "its key opens nothing"
    );
    assert_eq!(
        status(&server, ADMIN_KEY, &format!("/v1/tenants/{tenant}")).await,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        kept_recall(&server, &kept_key, &kept_agent).await,
        kept_before
    );

    // After a restart too: nothing comes back from a log or a saved index.
    drop(server);
    let server = place.start();
    assert_eq!(
        kept_recall(&server, &kept_key, &kept_agent).await,
        kept_before
    );
    assert_eq!(place.holding(MARKER).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_tenant_leaves_no_word_in_the_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    deleted_tenant_leaves_no_word(Place::new(dir.path(), None, None)).await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_deleted_tenant_leaves_no_word_in_any_table() {
    let dir = tempfile::tempdir().unwrap();
    let database = octopus_postgres::testing::fresh_database().await;
    deleted_tenant_leaves_no_word(Place::new(dir.path(), Some(database), None)).await;
}

#[cfg(feature = "qdrant-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_qdrant_a_deleted_tenant_leaves_no_point() {
    let dir = tempfile::tempdir().unwrap();
    let options = octopus_qdrant::testing::fresh_options(octopus_qdrant::QdrantLayout::Shared);
    deleted_tenant_leaves_no_word(Place::new(dir.path(), None, Some(options))).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_tenant_without_yes_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let (tenant, _, _) = server.tenant_with_agent("careful").await;
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_octopus"))
        .args(["tenants", "delete", "careful"])
        .env("OCTOPUS_URL", &server.url)
        .env("OCTOPUS_ADMIN_KEY", ADMIN_KEY)
        .env_remove("OCTOPUS_API_KEY")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--yes"), "{stderr}");
    assert_eq!(
        status(&server, ADMIN_KEY, &format!("/v1/tenants/{tenant}")).await,
        StatusCode::OK
    );
}

/// A deletion killed at `kill_after` into it, then a restart and a retry:
/// returns where the kill landed.
async fn killed_deletion(place: &Place, kill_after: Duration) -> &'static str {
    let server = place.start();
    let (tenant, key, agent) = server.tenant_with_agent(NAME).await;
    import_marked(&server, &key, &agent, "victim", MARKER).await;
    server
        .call(
            &key,
            Method::GET,
            &format!("/v1/messages/search?q={MARKER}&limit=5"),
            None,
        )
        .await;
    assert!(!place.holding(MARKER).await.is_empty());

    let deleting = tokio::spawn(
        server
            .client()
            .delete(format!("{}/v1/tenants/{tenant}", server.url))
            .bearer_auth(ADMIN_KEY)
            .send(),
    );
    tokio::time::sleep(kill_after).await;
    server.kill_hard();
    let _ = deleting.await;

    // At restart, a deletion whose rows were gone is finished before the
    // server listens.
    let server = place.start();
    let phase = if status(&server, ADMIN_KEY, &format!("/v1/tenants/{tenant}")).await
        == StatusCode::NOT_FOUND
    {
        let left = place.holding(MARKER).await;
        assert!(
            left.is_empty(),
            "killed after {kill_after:?}, the rows gone: still in {left:?} after the restart"
        );
        "rows removed"
    } else {
        let receipt = server
            .call(
                ADMIN_KEY,
                Method::DELETE,
                &format!("/v1/tenants/{tenant}"),
                None,
            )
            .await;
        assert_eq!(receipt["relational"]["messages"], 1000, "{receipt}");
        "rows kept"
    };
    let left = place.holding(MARKER).await;
    assert!(
        left.is_empty(),
        "killed after {kill_after:?}: still in {left:?}"
    );
    phase
}

/// Which backend a kill test's servers use.
#[derive(Clone, Copy)]
enum Backend {
    Sqlite,
    #[cfg(feature = "postgres-tests")]
    Postgres,
    #[cfg(feature = "qdrant-tests")]
    Qdrant,
}

async fn deletions_killed_at_many_points(backend: Backend, points: &[u64]) {
    let mut phases = Vec::new();
    for &ms in points {
        let dir = tempfile::tempdir().unwrap();
        // A database, or collections, of its own for each kill.
        let place = match backend {
            Backend::Sqlite => Place::new(dir.path(), None, None),
            #[cfg(feature = "postgres-tests")]
            Backend::Postgres => Place::new(
                dir.path(),
                Some(octopus_postgres::testing::fresh_database().await),
                None,
            ),
            #[cfg(feature = "qdrant-tests")]
            Backend::Qdrant => Place::new(
                dir.path(),
                None,
                Some(octopus_qdrant::testing::fresh_options(
                    octopus_qdrant::QdrantLayout::Shared,
                )),
            ),
        };
        phases.push((ms, killed_deletion(&place, Duration::from_millis(ms)).await));
    }
    eprintln!("where each kill landed: {phases:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_deletion_killed_at_any_point_is_finished_at_restart_or_by_a_retry() {
    deletions_killed_at_many_points(Backend::Sqlite, &[0, 4, 8, 12, 16, 20, 30, 40, 60, 90, 150])
        .await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_tenant_deletion_killed_at_any_point_is_finished_at_restart_or_by_a_retry() {
    deletions_killed_at_many_points(Backend::Postgres, &[0, 10, 20, 40, 80, 150, 300]).await;
}

#[cfg(feature = "qdrant-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_qdrant_a_tenant_deletion_killed_at_any_point_is_finished_at_restart_or_by_a_retry() {
    deletions_killed_at_many_points(Backend::Qdrant, &[0, 10, 20, 40, 80, 150, 300]).await;
}
