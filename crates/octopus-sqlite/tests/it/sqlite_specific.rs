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

/// The documents and total length each scope token holds, counted from
/// the index itself: its matches of the token and their sizes.
fn counted_in_the_index(search_file: &std::path::Path) -> Vec<(String, i64, i64)> {
    let conn = rusqlite::Connection::open(search_file).unwrap();
    let scopes: Vec<String> = conn
        .prepare("SELECT scope FROM scope_counts ORDER BY scope")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut counted = Vec::new();
    for scope in scopes {
        let sizes: Vec<Vec<u8>> = conn
            .prepare(
                "SELECT d.sz FROM message_fts f JOIN message_fts_docsize d ON d.id = f.rowid
                 WHERE message_fts MATCH ?1",
            )
            .unwrap()
            .query_map([format!("scope : \"{scope}\"")], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        // The text column's size: the first varint of each row's sizes.
        let text_size = |sz: &[u8]| {
            let mut value = 0i64;
            for byte in sz {
                value = (value << 7) | i64::from(byte & 0x7f);
                if byte & 0x80 == 0 {
                    break;
                }
            }
            value
        };
        let total: i64 = sizes.iter().map(|sz| text_size(sz)).sum();
        counted.push((scope, sizes.len() as i64, total));
    }
    counted
}

fn kept_totals(search_file: &std::path::Path) -> Vec<(String, i64, i64)> {
    let conn = rusqlite::Connection::open(search_file).unwrap();
    conn.prepare("SELECT scope, documents, total_length FROM scope_counts ORDER BY scope")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// A search's BM25 takes its scope's documents and total length from what
/// the indexer keeps, not from a count at each search: they must agree
/// with the index as messages are indexed and as a user is forgotten.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_indexers_scope_totals_agree_with_the_index() {
    let backend = TempSqlite::default();
    let store = backend.open().await;
    let acme = World::create(&*store, "acme").await;
    let globex = World::create(&*store, "globex").await;
    acme.say(
        &*store,
        Utc::now(),
        &["the quarterly forecast", "lunch plans at noon"],
    )
    .await;
    globex
        .say(
            &*store,
            Utc::now(),
            &["a forecast of rain", "rain again", "sun"],
        )
        .await;
    let search = octopus_testkit::fixtures::search;
    // A search catches the index up first.
    assert_eq!(
        store
            .search_messages(acme.tenant, &search("forecast"))
            .await
            .unwrap()
            .len(),
        1
    );
    let search_file = backend.dir.path().join("search.sqlite");
    let kept = kept_totals(&search_file);
    // Three tokens per owner (tenant, agent, owner), two owners.
    assert_eq!(kept.len(), 6, "{kept:?}");
    assert_eq!(kept, counted_in_the_index(&search_file));
    assert_eq!(
        kept.iter().map(|(_, documents, _)| documents).sum::<i64>(),
        3 * 5
    );

    let who = octopus_core::forget::ForgetUser {
        user_id: "alice".into(),
        agent_id: None,
    };
    store.forget_user(globex.tenant, &who).await.unwrap();
    let kept = kept_totals(&search_file);
    assert_eq!(kept.len(), 3, "globex's scopes emptied and gone: {kept:?}");
    assert_eq!(kept, counted_in_the_index(&search_file));
    assert!(
        kept.iter()
            .all(|(_, documents, length)| *documents == 2 && *length == 7),
        "{kept:?}"
    );
    let hits = store
        .search_messages(globex.tenant, &search("rain"))
        .await
        .unwrap();
    assert!(hits.is_empty());
}

/// A search reads the rows of its best candidates a few at a time: when
/// the best are all filtered out (here by the time range), it reads on
/// until the limit is filled from the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_fills_its_limit_past_candidates_its_filters_drop() {
    let backend = TempSqlite::default();
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let start = Utc::now() - chrono::Duration::days(1);
    let texts: Vec<String> = (0..30).map(|i| format!("forecast number {i}")).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let said = world.say(&*store, start, &texts).await;
    let mut query = octopus_testkit::fixtures::search("forecast");
    query.limit = 2;
    query.from = Some(said[25].timestamp);
    let hits = store.search_messages(world.tenant, &query).await.unwrap();
    assert_eq!(hits.len(), 2, "{hits:?}");
    let later: Vec<_> = said[25..].iter().map(|m| m.id).collect();
    assert!(
        hits.iter().all(|hit| later.contains(&hit.message.id)),
        "{hits:?}"
    );
    assert!(hits.iter().all(|hit| hit.score > 0.0));
}

/// The files of `dir` whose bytes hold `needle` (lower-cased, as the
/// full-text index keeps its terms).
fn files_containing(dir: &std::path::Path, needle: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            std::fs::read(path).is_ok_and(|bytes| {
                bytes
                    .to_ascii_lowercase()
                    .windows(needle.len())
                    .any(|window| window == needle.as_bytes())
            })
        })
        .map(|path| path.display().to_string())
        .collect()
}

/// A reader that keeps a snapshot open (a backup tool, a long report: here
/// another connection to each file) holds back the checkpoint that takes
/// erased words out of the write-ahead logs. The erasure answers without
/// waiting for it, another tenant's writes go on, and the words leave every
/// file once the reader ends. The time bounds only keep a hang from lasting
/// forever: before, the erasure waited on the writer's connection for as
/// long as the reader lasted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_held_open_delays_neither_an_erasure_nor_anyone_s_writes() {
    use octopus_core::forget::ForgetUser;
    use std::time::Duration;

    const MARKER: &str = "quokkaberry47xz";
    let backend = TempSqlite::default();
    let store = backend.open().await;
    let acme = World::create(&*store, "acme").await;
    let other = World::create(&*store, "globex").await;
    acme.say(&*store, Utc::now(), &[&format!("my word is {MARKER}")])
        .await;
    let query = MessageSearchQuery {
        text: MARKER.into(),
        agent_id: None,
        user_id: None,
        conversation_id: None,
        from: None,
        to: None,
        limit: 10,
    };
    assert_eq!(
        store
            .search_messages(acme.tenant, &query)
            .await
            .unwrap()
            .len(),
        1
    );

    // An outside reader holds a snapshot of both files, open until dropped.
    let mut readers = Vec::new();
    for file in ["octopus.sqlite", "search.sqlite"] {
        let reader = rusqlite::Connection::open(backend.dir.path().join(file)).unwrap();
        reader.execute_batch("BEGIN").unwrap();
        let _: i64 = reader
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .unwrap();
        readers.push(reader);
    }

    let forget = ForgetUser {
        user_id: "alice".into(),
        agent_id: None,
    };
    let receipt = tokio::time::timeout(
        Duration::from_secs(60),
        store.forget_user(acme.tenant, &forget),
    )
    .await
    .expect("the erasure answers while the reader is open")
    .unwrap();
    assert_eq!(receipt.relational.messages, 1);
    assert!(!receipt.compacted, "the reader holds the logs");
    assert!(store.erased_words_waiting().is_some());
    tokio::time::timeout(
        Duration::from_secs(60),
        other.say(&*store, Utc::now(), &["another tenant writes on"]),
    )
    .await
    .expect("another tenant's append goes on while the reader is open");
    assert!(
        store
            .search_messages(acme.tenant, &query)
            .await
            .unwrap()
            .is_empty()
    );

    drop(readers);
    let mut waited = Duration::ZERO;
    while store.erased_words_waiting().is_some() {
        assert!(
            waited < Duration::from_secs(60),
            "the owed checkpoint never completed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += Duration::from_millis(100);
    }
    assert_eq!(
        files_containing(backend.dir.path(), MARKER),
        Vec::<String>::new()
    );
}

/// Agents stored with the three PII settings that became one are read in
/// its terms once the migration has run: each combination as the rules say.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_migration_reads_the_earlier_pii_settings_as_one() {
    use octopus_core::store::Page;
    let backend = TempSqlite::default();
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let cases = octopus_testkit::fixtures::earlier_pii_settings();
    let mut agents = Vec::new();
    for (i, (earlier, policy)) in cases.iter().enumerate() {
        let agent = octopus_testkit::fixtures::agent(world.tenant, &format!("agent{i}"));
        store.create_agent(&agent).await.unwrap();
        agents.push((agent.id, *earlier, *policy));
    }
    drop(store);
    let conn = rusqlite::Connection::open(backend.dir.path().join("octopus.sqlite")).unwrap();
    for (id, earlier, _) in &agents {
        // As an agent was stored before: the three settings, no `pii`.
        conn.execute(
            "UPDATE agents SET memory_config = json_patch(json_remove(memory_config, '$.pii'), ?1)
             WHERE id = ?2",
            rusqlite::params![earlier, id.0.as_bytes()],
        )
        .unwrap();
    }
    conn.execute_batch(include_str!(
        "../../migrations/main/0023_one_pii_setting.sql"
    ))
    .unwrap();
    drop(conn);
    let store = backend.open().await;
    for (id, earlier, policy) in agents {
        let agent = store.get_agent(world.tenant, id).await.unwrap();
        assert_eq!(agent.memory.pii, policy, "{earlier}");
    }
    assert_eq!(
        store
            .list_agents(world.tenant, Page::default())
            .await
            .unwrap()
            .len(),
        6
    );
}
