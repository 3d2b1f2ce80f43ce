//! Deleting a tenant: every row under it goes, with every copy the derived
//! stores hold (full-text entries, vectors in the index); another tenant's
//! data is as it was; an interrupted deletion is finished at start.

use octopus_core::episode::{CloseEpisode, EndReason, EpisodeSummary};
use octopus_core::knowledge::{ChunkFilter, KeywordQuery};
use octopus_core::store::{Page, Store};
use octopus_core::tenant::{ApiKey, KeyHash};
use octopus_core::webhook::EventType;
use octopus_core::{ApiKeyId, Error, ProcedureId, now};

use crate::Backend;
use crate::fact_changes::addition;
use crate::fixtures::{self, World, assert_not_found, at, search};
use crate::knowledge::{DIM, chunk, direction};
use crate::lifecycle::{exported, watched, work_off_the_queue};

/// A tenant with something in every store: a key, a deleted agent beside
/// its live one, a conversation whose episode closed with a summary, a
/// procedure, two knowledge chunks, a webhook, and (after the queue is
/// worked off) a fact whose vector is still queued and whose delivery is
/// waiting.
struct Filled {
    world: World,
    key: KeyHash,
}

async fn fill(store: &dyn Store, name: &str) -> Filled {
    let world = World::create(store, name).await;
    let mut hash = [0u8; 32];
    hash[..16].copy_from_slice(world.tenant.0.as_bytes());
    let key = ApiKey {
        id: ApiKeyId::new(),
        tenant_id: world.tenant,
        name: "ops".into(),
        prefix: "oct_abcd".into(),
        hash: KeyHash(hash),
        created_at: now(),
        revoked_at: None,
    };
    store.create_api_key(&key).await.unwrap();
    let retired = fixtures::agent(world.tenant, "retired");
    store.create_agent(&retired).await.unwrap();
    store
        .delete_agent(world.tenant, retired.id, now())
        .await
        .unwrap();
    let said = world
        .say(
            store,
            at(9, 0),
            &["my walrus is called Wendy", "walrus food is fish"],
        )
        .await;
    let close = CloseEpisode {
        reason: EndReason::UserClosed,
        ended_at: Some(at(9, 5)),
        summary: Some(EpisodeSummary {
            summary: "Alice has a walrus named Wendy.".into(),
            key_facts: vec!["walrus: Wendy".into()],
            embedding: None,
        }),
    };
    store
        .close_episode(world.tenant, said[0].episode_id, close, at(9, 5))
        .await
        .unwrap();
    let version = crate::procedures::version("walrus care", "Check the walrus", "ana");
    store
        .create_procedure(
            world.tenant,
            ProcedureId::new(),
            Some(world.agent),
            version,
            now(),
        )
        .await
        .unwrap();
    store
        .create_collection(world.tenant, world.agent, DIM, "test-model")
        .await
        .unwrap();
    let chunks = vec![
        chunk("walrus.md", 0, "Walruses eat clams", direction(0, 0.0)),
        chunk(
            "walrus.md",
            1,
            "Walruses haul out on ice",
            direction(1, 0.0),
        ),
    ];
    store
        .store_chunks(world.tenant, world.agent, chunks)
        .await
        .unwrap();
    crate::webhooks::registered(store, world.tenant, &[EventType::FactAdded]).await;
    Filled {
        world,
        key: KeyHash(hash),
    }
}

/// After the queue is worked off: a fact, its vector queued and its
/// delivery waiting.
async fn add_fact(store: &dyn Store, filled: &Filled) {
    store
        .add_fact(
            filled.world.tenant,
            &addition(&filled.world, "alice", "Alice's walrus is Wendy"),
        )
        .await
        .unwrap();
}

/// What the tenant's data answers to the ports' searches, by count: its
/// messages by word, its memories by vector, its chunks by word and by
/// vector, its facts, its webhooks, its queued work.
async fn found(store: &dyn Store, world: &World) -> [usize; 7] {
    let count = |result: octopus_core::Result<usize>| match result {
        Ok(n) => n,
        // A search in an agent that is gone finds nothing.
        Err(Error::NotFound { .. }) => 0,
        Err(e) => panic!("{e}"),
    };
    let words = KeywordQuery {
        text: "walruses".into(),
        top_k: 10,
        filter: ChunkFilter::default(),
    };
    let facts = crate::facts::filter(world, "alice", true);
    [
        count(
            store
                .search_messages(world.tenant, &search("walrus"))
                .await
                .map(|h| h.len()),
        ),
        count(
            store
                .search_memory(
                    world.tenant,
                    &crate::memory::query(world, "alice", direction(0, 0.0)),
                )
                .await
                .map(|h| h.len()),
        ),
        count(
            store
                .keyword_search_chunks(world.tenant, world.agent, &words)
                .await
                .map(|h| h.len()),
        ),
        count(
            store
                .search_chunks(
                    world.tenant,
                    world.agent,
                    &crate::knowledge::query(direction(0, 0.0)),
                )
                .await
                .map(|h| h.len()),
        ),
        count(
            store
                .list_facts(world.tenant, &facts)
                .await
                .map(|f| f.len()),
        ),
        count(store.list_webhooks(world.tenant).await.map(|w| w.len())),
        count(
            store
                .tenant_memory_jobs(world.tenant)
                .await
                .map(|n| n as usize),
        ),
    ]
}

pub async fn deleting_a_tenant_removes_all_of_it_and_nothing_else(backend: &impl Backend) {
    let (store, watch) = watched(backend, false).await;
    let acme = fill(&*store, "acme").await;
    let globex = fill(&*store, "globex").await;
    work_off_the_queue(&*store).await;
    add_fact(&*store, &acme).await;
    add_fact(&*store, &globex).await;
    let acme_found = found(&*store, &acme.world).await;
    assert_eq!(
        acme_found,
        [2, 3, 2, 2, 1, 1, 1],
        "messages by word, memories, chunks by word and by vector, facts, webhooks, jobs"
    );
    let globex_found = found(&*store, &globex.world).await;
    let globex_records = exported(&*store, globex.world.tenant, None).await;

    let receipt = store.delete_tenant(acme.world.tenant).await.unwrap();
    let counts = &receipt.relational;
    assert_eq!(
        (
            counts.api_keys,
            counts.agents,
            counts.conversations,
            counts.episodes,
            counts.messages,
            counts.facts,
            counts.fact_history,
            counts.procedures,
            counts.knowledge_chunks,
            counts.webhooks,
            counts.webhook_deliveries,
        ),
        (1, 2, 1, 1, 2, 1, 1, 1, 2, 1, 1),
        "{receipt:?}"
    );
    assert_eq!(receipt.full_text.entries, 2, "{receipt:?}");
    assert_eq!(
        (
            receipt.vectors.memory_vectors,
            receipt.vectors.knowledge_vectors,
            receipt.vectors.sets
        ),
        (3, 2, 2),
        "{receipt:?}"
    );
    assert_eq!(receipt.queue.jobs, 1, "{receipt:?}");
    assert!(receipt.compacted);
    assert_eq!(receipt.conversation_ids, vec![acme.world.conversation]);
    assert_eq!(
        watch.erased.lock().unwrap().len(),
        5,
        "the index is told to erase every vector of the tenant's sets"
    );

    assert_not_found(store.get_tenant(acme.world.tenant).await);
    assert_eq!(store.tenant_for_key(&acme.key).await.unwrap(), None);
    assert!(
        !store
            .list_tenants(Page::default())
            .await
            .unwrap()
            .iter()
            .any(|t| t.id == acme.world.tenant)
    );
    assert_eq!(found(&*store, &acme.world).await, [0; 7]);
    assert!(
        store
            .list_agents(acme.world.tenant, Page::default())
            .await
            .unwrap_or_default()
            .is_empty()
    );
    assert!(
        store
            .list_api_keys(acme.world.tenant)
            .await
            .unwrap_or_default()
            .is_empty()
    );

    // The other tenant is as it was, its key still its own.
    assert_eq!(found(&*store, &globex.world).await, globex_found);
    assert_eq!(
        exported(&*store, globex.world.tenant, None).await,
        globex_records
    );
    assert_eq!(
        store.tenant_for_key(&globex.key).await.unwrap(),
        Some(globex.world.tenant)
    );

    // A second time: not found, and no erasure left.
    assert_not_found(store.delete_tenant(acme.world.tenant).await);
    assert_eq!(store.finish_erasures().await.unwrap(), 0);
}

/// A deletion whose rows' transaction committed but whose erasure of the
/// derived copies failed (as a crash there would leave it) is finished at
/// start: the index is then told of every vector.
pub async fn an_interrupted_tenant_deletion_is_finished_at_start(backend: &impl Backend) {
    let (store, _) = watched(backend, true).await;
    let acme = fill(&*store, "acme").await;
    work_off_the_queue(&*store).await;
    assert!(
        store.delete_tenant(acme.world.tenant).await.is_err(),
        "the erasure failed after the rows' transaction"
    );
    assert_not_found(store.get_tenant(acme.world.tenant).await);
    // As at a restart: one store on the files at a time.
    drop(store);
    let (store, watch) = watched(backend, false).await;
    assert_eq!(store.finish_erasures().await.unwrap(), 1);
    assert_eq!(
        watch.erased.lock().unwrap().len(),
        5,
        "three memories and two chunks erased"
    );
    assert_eq!(store.finish_erasures().await.unwrap(), 0);
    assert_eq!(found(&*store, &acme.world).await, [0; 7]);
}
