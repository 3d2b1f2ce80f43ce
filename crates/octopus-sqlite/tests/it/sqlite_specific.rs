//! Behaviour particular to the SQLite layout: the derived full-text index file.

use chrono::Utc;
use octopus_core::search::MessageSearchQuery;
use octopus_testkit::Backend;
use octopus_testkit::fixtures::World;

use crate::TempSqlite;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleted_search_index_is_rebuilt_from_messages() {
    let backend = TempSqlite::default();
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    world
        .say(
            &*store,
            Utc::now(),
            &["the quarterly forecast", "lunch plans"],
        )
        .await;
    drop(store);

    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(backend.dir.path().join(format!("search.sqlite{suffix}")));
    }
    let store = backend.open().await;
    let query = MessageSearchQuery {
        text: "forecast".into(),
        agent_id: None,
        user_id: None,
        conversation_id: None,
        from: None,
        to: None,
        limit: 10,
    };
    let hits = store.search_messages(world.tenant, &query).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].message.search_text(), "the quarterly forecast");
}
