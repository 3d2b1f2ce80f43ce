//! Vector copies catch up with their rows after a fault with no search made:
//! `octopus serve` killed (`kill -9`) mid-ingest on PostgreSQL with pgvector
//! (which copies knowledge sets only) and mid-import with Qdrant, and Qdrant
//! killed under writers on two servers and started again. Each test compares the copy with the rows key by key.
//!
//! A server killed between committing a change and telling the index
//! leaves the copy behind, every later follow skipped. Rather than hope a
//! kill lands there, the tests freeze a worker (SIGSTOP) and kill it only
//! when the copy is seen stuck behind the rows while it is frozen. Writes go
//! through a server that runs no worker (so no catch-up of its own), and no
//! test searches: the other worker must notice by itself.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use octopus_core::vectors::{VectorKind, VectorSet};
use reqwest::Method;
use serde_json::{Value, json};

use crate::process::Server;

/// Extractive summaries, and a lease short enough that a killed server's
/// jobs come back within the test.
const CONFIG: &str = "[llm]\nsummarise_episodes = false\n[worker]\njob_lease_secs = 3\n";
/// The same, for the server that only serves the API.
const API_ONLY: &str =
    "[llm]\nsummarise_episodes = false\n[worker]\njob_lease_secs = 3\nmemory_worker = false\n";
/// How long a copy may take to catch up once the rows stop changing.
const CATCH_UP_WITHIN: Duration = Duration::from_secs(60);

fn start(dir: &Path, name: &str, database: &str, config_text: &str) -> Server {
    let config = dir.join(format!("{name}.toml"));
    std::fs::write(&config, config_text).unwrap();
    Server::start_on(&dir.join(name), Some(&config), Some(database))
}

/// Imports six sessions of twenty turns about `topic` for `user`.
async fn import(server: &Server, key: &str, agent: &str, user: &str, topic: &str) {
    let sessions: Vec<Value> = (0..6)
        .map(|s| {
            let messages: Vec<Value> = (0..20)
                .map(|t| {
                    json!({
                        "role": if t % 2 == 0 { "user" } else { "assistant" },
                        "content": format!("Session {s}, turn {t}: {user} on {topic}, part {}", s * 20 + t),
                        "timestamp": format!("2026-03-{:02}T10:{:02}:00Z", 1 + s, t),
                    })
                })
                .collect();
            json!({"messages": messages})
        })
        .collect();
    server
        .call(
            key,
            Method::POST,
            "/v1/conversations/import",
            Some(json!({"agent_id": agent, "user_id": user, "sessions": sessions})),
        )
        .await;
}

async fn ingest(server: &Server, key: &str, agent: &str, source: &str, topic: &str) {
    let sections: Vec<String> = (0..6)
        .map(|i| format!("## {topic} {i}\n\nHow the {topic} works, step {i}, in some detail."))
        .collect();
    server
        .call(
            key,
            Method::POST,
            &format!("/v1/agents/{agent}/knowledge/documents"),
            Some(json!({"source": source, "text": format!("# {topic}\n\n{}", sections.join("\n\n"))})),
        )
        .await;
}

/// Waits until the database's memory queue is empty, leased jobs included.
async fn wait_until_drained(database: &str) {
    let deadline = Instant::now() + Duration::from_secs(240);
    while !octopus_postgres::testing::memory_jobs(database, false)
        .await
        .is_empty()
    {
        assert!(Instant::now() < deadline, "the memory queue never drained");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Polls until `copy` (read afresh each time) holds exactly the rows' keys
/// of the sets of `kinds`, set by set; panics with the difference after
/// [`CATCH_UP_WITHIN`].
async fn wait_until_copy_equals_rows<F, Fut>(
    database: &str,
    kinds: &[VectorKind],
    copy: F,
) -> Duration
where
    F: Fn(Vec<VectorSet>) -> Fut,
    Fut: std::future::Future<Output = BTreeMap<VectorSet, Vec<u64>>>,
{
    let started = Instant::now();
    loop {
        let mut rows = octopus_postgres::testing::vector_row_keys(database).await;
        rows.retain(|set, _| kinds.contains(&set.kind));
        let held = copy(rows.keys().copied().collect()).await;
        if held == rows {
            return started.elapsed();
        }
        if started.elapsed() > CATCH_UP_WITHIN {
            let summary: Vec<String> = rows
                .iter()
                .map(|(set, keys)| {
                    let in_copy = held.get(set).map_or(0, Vec::len);
                    format!("{:?}: rows {}, copy {in_copy}", set.kind, keys.len())
                })
                .collect();
            panic!(
                "the copy did not catch up within {CATCH_UP_WITHIN:?}: {summary:?}; sets only in the copy: {:?}",
                held.keys().filter(|s| !rows.contains_key(s)).count()
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Freezes `worker` until it is caught with the memory set's copy stuck
/// behind its rows (the same copy version on two looks 300 ms apart while
/// it is frozen: a follow it has yet to make, which no later follow can
/// make up for), then kills it (`kill -9`). `copy_version` reads the copy's
/// version; `more_work` queues more when the queue runs dry.
async fn kill_between_commit_and_follow<C, CF, W, WF>(
    worker: Server,
    database: &str,
    set: VectorSet,
    copy_version: C,
    more_work: W,
) where
    C: Fn() -> CF,
    CF: std::future::Future<Output = i64>,
    W: Fn(usize) -> WF,
    WF: std::future::Future<Output = ()>,
{
    use octopus_postgres::testing::{memory_jobs, vector_versions};
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut imports = 0;
    loop {
        assert!(
            Instant::now() < deadline,
            "the worker was never caught between a commit and its follow"
        );
        if memory_jobs(database, false).await.len() < 32 {
            more_work(imports).await;
            imports += 1;
        }
        worker.signal("STOP");
        let (rows, _) = vector_versions(database, set).await;
        let copy = copy_version().await;
        if rows != copy {
            tokio::time::sleep(Duration::from_millis(300)).await;
            if copy_version().await == copy {
                worker.kill_hard();
                return;
            }
        }
        worker.signal("CONT");
        tokio::time::sleep(Duration::from_millis(7)).await;
    }
}

/// The knowledge chunk a keyword search (no vectors involved) finds first.
async fn first_chunk(server: &Server, key: &str, agent: &str, words: &str) -> String {
    let hits = server
        .call(
            key,
            Method::POST,
            &format!("/v1/agents/{agent}/knowledge/search"),
            Some(json!({"query": words, "mode": "keyword", "top_k": 1})),
        )
        .await;
    hits["items"][0]["chunk"]["id"].as_str().unwrap().to_owned()
}

/// Deletes a chunk and forgets a user through `server`: both must answer
/// success whatever the vector index's state.
async fn delete_and_forget(server: &Server, key: &str, agent: &str, chunk: &str, user: &str) {
    let deleted = server
        .client()
        .delete(format!(
            "{}/v1/agents/{agent}/knowledge/chunks/{chunk}",
            server.url
        ))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), reqwest::StatusCode::NO_CONTENT);
    server
        .call(key, Method::DELETE, &format!("/v1/users/{user}"), None)
        .await;
}

fn ids(tenant: &str, agent: &str) -> (octopus_core::TenantId, octopus_core::AgentId) {
    (
        octopus_core::TenantId(tenant.parse().unwrap()),
        octopus_core::AgentId(agent.parse().unwrap()),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pgvector_copy_catches_up_with_no_search_after_a_server_is_killed_mid_ingest() {
    let database = octopus_postgres::testing::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let killed = start(dir.path(), "killed", &database, API_ONLY);
    let survivor = start(dir.path(), "survivor", &database, CONFIG);
    let api = start(dir.path(), "api", &database, API_ONLY);
    let (tenant, key, agent) = api.tenant_with_agent("acme").await;
    let (tenant_id, agent_id) = ids(&tenant, &agent);
    ingest(&api, &key, &agent, "boat.md", "boat engine").await;
    import(&api, &key, &agent, "dana", "the lighthouse restoration").await;

    // pgvector keeps knowledge only (a memory set is searched from its
    // rows): the server killed is one ingesting documents, each a commit
    // and then its follow, two at a time so that one is often between.
    let knowledge = VectorSet::knowledge(tenant_id, agent_id);
    let ingesting: Vec<_> = (0..2)
        .map(|writer| {
            let (client, url) = (killed.client(), killed.url.clone());
            let (key, agent) = (key.clone(), agent.clone());
            tokio::spawn(async move {
                for n in 0.. {
                    let text = format!(
                        "# Manual {writer}-{n}\n\n## Part one\n\nHow part one of manual {n} works.\n\n## Part two\n\nHow part two fits."
                    );
                    let sent = client
                        .post(format!("{url}/v1/agents/{agent}/knowledge/documents"))
                        .bearer_auth(&key)
                        .json(&json!({"source": format!("manual-{writer}-{n}.md"), "text": text}))
                        .send()
                        .await;
                    if sent.is_err() {
                        return; // killed
                    }
                }
            })
        })
        .collect();
    let database_ = database.clone();
    kill_between_commit_and_follow(
        killed,
        &database,
        knowledge,
        || async {
            octopus_postgres::testing::vector_versions(&database_, knowledge)
                .await
                .1
        },
        |_| async {},
    )
    .await;
    for writer in ingesting {
        writer.await.unwrap();
    }

    // More writes through the server without a worker; none searches.
    import(&api, &key, &agent, "fay", "the choir rehearsal").await;
    ingest(&api, &key, &agent, "garden.md", "garden irrigation").await;
    let chunk = first_chunk(&api, &key, &agent, "boat engine").await;
    delete_and_forget(&api, &key, &agent, &chunk, "dana").await;

    wait_until_drained(&database).await;
    let database_ = database.clone();
    let took = wait_until_copy_equals_rows(&database, &[VectorKind::Knowledge], move |_| {
        let database = database_.clone();
        async move { octopus_postgres::testing::pgvector_copy_keys(&database).await }
    })
    .await;
    eprintln!("pgvector's copy equalled the rows {took:?} after the queue drained");
    let copied = octopus_postgres::testing::pgvector_copy_keys(&database).await;
    assert!(
        copied.keys().all(|set| set.kind == VectorKind::Knowledge),
        "pgvector holds no copy of a memory set"
    );
    let rows = octopus_postgres::testing::vector_row_keys(&database).await;
    assert!(
        rows.keys().any(|set| set.kind == VectorKind::Memory),
        "the memory rows the copy leaves out exist"
    );
    drop(survivor);
}

#[cfg(feature = "qdrant-fault-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn qdrant_copies_catch_up_with_no_search_after_a_server_and_then_qdrant_are_killed() {
    use octopus_core::vectors::VectorIndex;
    use octopus_qdrant::QdrantVectors;
    use octopus_qdrant::testing::OwnQdrant;

    let mut qdrant = OwnQdrant::start();
    let vectors_config = format!(
        "[vectors]\nbackend = \"qdrant\"\n[vectors.qdrant]\nurl = \"{}\"\ntimeout_secs = 2\nconnect_timeout_secs = 1\n",
        qdrant.url()
    );
    let database = octopus_postgres::testing::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let killed = start(
        dir.path(),
        "killed",
        &database,
        &format!("{CONFIG}{vectors_config}"),
    );
    let survivor = start(
        dir.path(),
        "survivor",
        &database,
        &format!("{CONFIG}{vectors_config}"),
    );
    let api = start(
        dir.path(),
        "api",
        &database,
        &format!("{API_ONLY}{vectors_config}"),
    );
    let (tenant, key, agent) = api.tenant_with_agent("acme").await;
    let (tenant_id, agent_id) = ids(&tenant, &agent);
    ingest(&api, &key, &agent, "boat.md", "boat engine").await;

    // A server killed mid-import, between a commit and its follow.
    let memory = VectorSet::memory(tenant_id, agent_id);
    let options = qdrant.options();
    let looking = QdrantVectors::connect(&options).await.unwrap();
    kill_between_commit_and_follow(
        killed,
        &database,
        memory,
        || async { looking.copy_versions(&[memory]).await.unwrap()[0].unwrap() },
        |n| {
            import(
                &api,
                &key,
                &agent,
                if n == 0 { "dana" } else { "erin" },
                "the lighthouse restoration",
            )
        },
    )
    .await;
    drop(looking);

    // Qdrant killed while the survivor embeds and the API server writes:
    // knowledge the API server alone changes, so only it knows Qdrant
    // missed those changes, and it runs no catch-up.
    import(&api, &key, &agent, "fay", "the choir rehearsal").await;
    qdrant.kill();
    ingest(&api, &key, &agent, "garden.md", "garden irrigation").await;
    let chunk = first_chunk(&api, &key, &agent, "boat engine").await;
    delete_and_forget(&api, &key, &agent, &chunk, "dana").await;
    import(&api, &key, &agent, "gus", "the bakery opening").await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    qdrant.resume();

    wait_until_drained(&database).await;
    let took = wait_until_copy_equals_rows(
        &database,
        &[VectorKind::Memory, VectorKind::Knowledge],
        move |sets| {
            let options = options.clone();
            async move {
                let vectors = QdrantVectors::connect(&options).await.unwrap();
                let mut held = BTreeMap::new();
                for set in sets {
                    let keys = vectors.stored_keys(set, 384).await.unwrap();
                    if !keys.is_empty() {
                        held.insert(set, keys);
                    }
                }
                held
            }
        },
    )
    .await;
    eprintln!("Qdrant's copy equalled the rows {took:?} after the queue drained");
    drop(survivor);
}
