//! Qdrant going away and coming back, under the SQLite store: writes go on,
//! searches say Qdrant is unavailable, and once it is back every
//! acknowledged write is found and nothing deleted is left in it (checked by
//! scrolling its collections).
//!
//! These tests run a Qdrant server of their own, to kill and restart it:
//! `OCTOPUS_TEST_QDRANT_BIN` names the server binary (`scripts/test.sh`
//! takes `qdrant` on PATH when it is unset).

#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use octopus_core::Error;
use octopus_core::store::Store;
use octopus_core::vectors::VectorSet;
use octopus_qdrant::QdrantVectors;
use octopus_qdrant::testing::OwnQdrant;
use octopus_sqlite::{SqliteOptions, SqliteStore};
use octopus_testkit::fixtures::World;
use octopus_testkit::knowledge::{DIM, chunk, direction, query as near};
use octopus_testkit::memory::{embed_all, query as recall};

/// A SQLite store with its vectors on `qdrant`, and the index itself, to
/// look inside Qdrant.
async fn store_on(qdrant: &OwnQdrant, dir: &Path) -> (Arc<dyn Store>, Arc<QdrantVectors>) {
    // Qdrant answers on its port a moment before it serves requests.
    let deadline = Instant::now() + Duration::from_secs(30);
    let vectors = loop {
        match QdrantVectors::connect(&qdrant.options()).await {
            Ok(vectors) => break Arc::new(vectors),
            Err(error) if Instant::now() < deadline => {
                eprintln!("waiting for Qdrant: {error}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(error) => panic!("Qdrant did not come up: {error}"),
        }
    };
    let store = SqliteStore::open(SqliteOptions::new(dir), vectors.clone()).unwrap();
    (Arc::new(store), vectors)
}

/// A store on `qdrant` with one tenant, agent and user, and the agent's
/// knowledge collection.
async fn with_knowledge(
    qdrant: &OwnQdrant,
    dir: &Path,
) -> (Arc<dyn Store>, Arc<QdrantVectors>, World) {
    let (store, vectors) = store_on(qdrant, dir).await;
    let world = World::create(&*store, "acme").await;
    store
        .create_collection(world.tenant, world.agent, DIM, "test-model")
        .await
        .unwrap();
    (store, vectors, world)
}

/// Catches Qdrant up as the memory worker does every few seconds, until
/// `sets` sets have been reconciled. Each call is dated a settle time after
/// the last, as the worker's would be by the time a copy counts as behind.
async fn catch_up(store: &dyn Store, sets: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut caught_up = 0;
    let mut clock = octopus_core::now();
    while caught_up < sets {
        assert!(
            Instant::now() < deadline,
            "only {caught_up} of {sets} sets caught up"
        );
        clock += octopus_core::vector_lag::SETTLE;
        match store.catch_up_vectors(clock).await {
            Ok(n) => caught_up += n,
            Err(error) => eprintln!("waiting for Qdrant: {error}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn day(n: u32) -> octopus_core::Timestamp {
    Utc.with_ymd_and_hms(2026, 5, n, 10, 0, 0).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_embedded_while_qdrant_is_down_are_recalled_once_it_is_back() {
    let mut qdrant = OwnQdrant::start();
    let data = tempfile::tempdir().unwrap();
    let (store, _) = store_on(&qdrant, data.path()).await;
    let world = World::create(&*store, "acme").await;
    let texts = [
        "I adopted a greyhound called Pixel",
        "We are moving to Lisbon next spring",
        "My favourite band is Radiohead",
        "I am allergic to peanuts",
        "My sister lives in Osaka",
        "I run a marathon every autumn",
    ];
    let before = world.say(&*store, day(1), &texts[..3]).await;
    let axis_of = |all: Vec<octopus_core::message::Message>| {
        move |m: &octopus_core::message::Message| all.iter().position(|s| s.id == m.id).unwrap()
    };
    assert_eq!(embed_all(&*store, axis_of(before.clone())).await, 3);

    qdrant.kill();
    // Messages keep arriving and the worker keeps embedding them: each
    // write is acknowledged, though Qdrant cannot follow.
    let during = world
        .say(&*store, day(1) + chrono::Duration::minutes(1), &texts[3..])
        .await;
    let mut said = before.clone();
    said.extend(during);
    assert_eq!(embed_all(&*store, axis_of(said.clone())).await, 3);
    assert_eq!(store.pending_memory_jobs().await.unwrap(), 0);
    // A recall cannot be answered meanwhile, and says why.
    let refused = store
        .search_memory(world.tenant, &recall(&world, "alice", direction(0, 0.0)))
        .await;
    assert!(
        matches!(
            refused,
            Err(Error::Unavailable {
                service: "qdrant",
                ..
            })
        ),
        "{refused:?}"
    );

    qdrant.resume();
    let (store, _) = store_on(&qdrant, data.path()).await;
    for (axis, message) in said.iter().enumerate() {
        let hits = store
            .search_memory(world.tenant, &recall(&world, "alice", direction(axis, 0.0)))
            .await
            .unwrap();
        assert_eq!(
            hits.first().and_then(|h| h.message_id),
            Some(message.id),
            "message {axis} is recalled by meaning"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunks_deleted_and_users_forgotten_while_qdrant_is_down_leave_nothing_in_it() {
    let mut qdrant = OwnQdrant::start();
    let data = tempfile::tempdir().unwrap();
    let (store, vectors, world) = with_knowledge(&qdrant, data.path()).await;
    let kept = chunk("a.md", 0, "keep me", direction(1, 0.0));
    let doomed = chunk("a.md", 1, "delete me", direction(2, 0.0));
    let doomed_id = doomed.id;
    store
        .store_chunks(world.tenant, world.agent, vec![kept, doomed])
        .await
        .unwrap();
    let said = world
        .say(&*store, day(1), &["My locker code is 4412"])
        .await;
    assert_eq!(embed_all(&*store, |_| 3).await, 1);
    let knowledge = VectorSet::knowledge(world.tenant, world.agent);
    let memory = VectorSet::memory(world.tenant, world.agent);
    assert_eq!(vectors.stored_keys(knowledge, DIM).await.unwrap().len(), 2);
    assert_eq!(vectors.stored_keys(memory, DIM).await.unwrap().len(), 1);

    // Killed in the middle of the work: a chunk deleted, a chunk added, and
    // alice forgotten while it is down. Each is acknowledged.
    qdrant.kill();
    store
        .delete_chunk(world.tenant, world.agent, doomed_id)
        .await
        .unwrap();
    let late = chunk("b.md", 0, "added while down", direction(4, 0.0));
    let late_id = late.id;
    store
        .store_chunks(world.tenant, world.agent, vec![late])
        .await
        .unwrap();
    let receipt = store
        .forget_user(
            world.tenant,
            &octopus_core::forget::ForgetUser {
                user_id: "alice".into(),
                agent_id: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(receipt.relational.messages, said.len() as u64);

    // Back up: the same store catches Qdrant up (as the memory worker does
    // between jobs), with no search asking for it.
    qdrant.resume();
    catch_up(&*store, 2).await;
    assert!(
        vectors.stored_keys(memory, DIM).await.unwrap().is_empty(),
        "no vector of a forgotten user is left in Qdrant"
    );
    assert_eq!(
        vectors.stored_keys(knowledge, DIM).await.unwrap().len(),
        2,
        "Qdrant holds exactly the chunks SQLite does: the deleted one is gone"
    );
    let hits = store
        .search_chunks(world.tenant, world.agent, &near(direction(4, 0.0)))
        .await
        .unwrap();
    assert_eq!(hits[0].chunk.id, late_id, "the chunk added while down");
    let contents: Vec<&str> = hits.iter().map(|h| h.chunk.content.as_str()).collect();
    assert_eq!(contents.len(), 2);
    assert!(!contents.contains(&"delete me"), "{contents:?}");
}

/// What the writer below had acknowledged when it stopped.
#[derive(Default)]
struct Acknowledged {
    stored: Vec<uuid::Uuid>,
    deleted: Vec<uuid::Uuid>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qdrant_killed_mid_ingest_and_restarted_holds_exactly_the_acknowledged_chunks() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut qdrant = OwnQdrant::start();
    let data = tempfile::tempdir().unwrap();
    let (store, vectors, world) = with_knowledge(&qdrant, data.path()).await;

    // A writer stores chunks one by one and deletes every fourth it stored,
    // with no pause, while Qdrant is killed under it and restarted.
    let stop = Arc::new(AtomicBool::new(false));
    let acknowledged = Arc::new(std::sync::Mutex::new(Acknowledged::default()));
    let writer = tokio::spawn({
        let (store, stop, acknowledged) = (store.clone(), stop.clone(), acknowledged.clone());
        let (tenant, agent) = (world.tenant, world.agent);
        async move {
            let mut n = 0u32;
            while !stop.load(Ordering::SeqCst) {
                let tilt = (n % 13) as f32 / 13.0;
                let new = chunk(
                    &format!("doc-{n}.md"),
                    0,
                    "text",
                    direction(n as usize, tilt),
                );
                let id = new.id;
                store.store_chunks(tenant, agent, vec![new]).await.unwrap();
                acknowledged.lock().unwrap().stored.push(id);
                if n % 4 == 3 {
                    store.delete_chunk(tenant, agent, id).await.unwrap();
                    acknowledged.lock().unwrap().deleted.push(id);
                }
                n += 1;
            }
        }
    });
    let stored = || acknowledged.lock().unwrap().stored.len();
    let wait_for_stored = |at_least: usize| async move {
        let deadline = Instant::now() + Duration::from_secs(60);
        while stored() < at_least {
            assert!(
                Instant::now() < deadline,
                "the writer stalled at {}",
                stored()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    wait_for_stored(40).await;
    qdrant.kill();
    let at_kill = stored();
    wait_for_stored(at_kill + 8).await;
    qdrant.resume();
    let at_resume = stored();
    wait_for_stored(at_resume + 40).await;
    stop.store(true, Ordering::SeqCst);
    writer.await.unwrap();

    // The one set Qdrant fell behind on catches up.
    catch_up(&*store, 1).await;
    let acknowledged = std::mem::take(&mut *acknowledged.lock().unwrap());
    let live: std::collections::HashSet<uuid::Uuid> = acknowledged
        .stored
        .iter()
        .filter(|id| !acknowledged.deleted.contains(id))
        .copied()
        .collect();
    eprintln!(
        "{} chunks stored, {} deleted; Qdrant killed after {at_kill}, back after {at_resume}",
        acknowledged.stored.len(),
        acknowledged.deleted.len()
    );
    let knowledge = VectorSet::knowledge(world.tenant, world.agent);
    assert_eq!(
        vectors.stored_keys(knowledge, DIM).await.unwrap().len(),
        live.len(),
        "Qdrant holds one vector per live chunk ({} stored, {} deleted, killed at {at_kill}, back at {at_resume})",
        acknowledged.stored.len(),
        acknowledged.deleted.len(),
    );
    let mut everything = near(direction(0, 0.0));
    everything.top_k = u32::try_from(acknowledged.stored.len()).unwrap();
    let found: std::collections::HashSet<uuid::Uuid> = store
        .search_chunks(world.tenant, world.agent, &everything)
        .await
        .unwrap()
        .into_iter()
        .map(|hit| hit.chunk.id)
        .collect();
    assert_eq!(
        found, live,
        "every acknowledged chunk, and no deleted one, is found"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restarted_while_qdrant_was_down_still_clears_what_was_forgotten() {
    let mut qdrant = OwnQdrant::start();
    let data = tempfile::tempdir().unwrap();
    let (store, vectors, world) = with_knowledge(&qdrant, data.path()).await;
    let doomed = chunk("a.md", 0, "delete me", direction(1, 0.0));
    let doomed_id = doomed.id;
    let kept = chunk("a.md", 1, "keep me", direction(2, 0.0));
    store
        .store_chunks(world.tenant, world.agent, vec![doomed, kept])
        .await
        .unwrap();
    world.say(&*store, day(1), &["My PIN is 1234"]).await;
    assert_eq!(embed_all(&*store, |_| 3).await, 1);

    // Qdrant goes down, a chunk is deleted and alice forgotten, and the
    // server itself restarts before Qdrant is back: the process that saw
    // Qdrant miss those changes is gone.
    qdrant.kill();
    store
        .delete_chunk(world.tenant, world.agent, doomed_id)
        .await
        .unwrap();
    let forget = octopus_core::forget::ForgetUser {
        user_id: "alice".into(),
        agent_id: None,
    };
    store.forget_user(world.tenant, &forget).await.unwrap();
    drop((store, vectors));

    qdrant.resume();
    let (store, vectors) = store_on(&qdrant, data.path()).await;
    catch_up(&*store, 2).await;
    let memory = VectorSet::memory(world.tenant, world.agent);
    let knowledge = VectorSet::knowledge(world.tenant, world.agent);
    assert!(
        vectors.stored_keys(memory, DIM).await.unwrap().is_empty(),
        "no vector of the forgotten user is left in Qdrant"
    );
    assert_eq!(
        vectors.stored_keys(knowledge, DIM).await.unwrap().len(),
        1,
        "the chunk deleted while Qdrant was down is gone from it"
    );
}

/// Pointed at Qdrant's REST port by mistake, Octopus says which port it
/// wants, not that Qdrant is out of reach.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rest_port_is_named_as_the_wrong_one() {
    let qdrant = OwnQdrant::start();
    let mut options = octopus_qdrant::QdrantOptions::new(qdrant.rest_url());
    options.prefix = format!("t{}_", uuid::Uuid::now_v7().simple());
    let error = QdrantVectors::connect(&options).await.err().unwrap();
    assert!(!error.is_unreachable(), "{error}");
    let message = error.to_string();
    assert!(message.contains("gRPC port"), "{message}");
    options.url = qdrant.url();
    assert!(QdrantVectors::connect(&options).await.is_ok());
}
