//! The lifecycle contract: retention's archive, forgetting a user, and
//! moving a tenant by dump.

use std::sync::{Arc, Mutex};
use std::time::Duration as Lease;

use chrono::{Duration, TimeZone, Utc};
use octopus_core::conversation::ConversationFilter;
use octopus_core::dump::{DumpEnd, DumpHeader, DumpRecord, ImportCounts};
use octopus_core::episode::{
    CloseEpisode, EndReason, EpisodeFilter, EpisodeSummary, SummarySource,
};
use octopus_core::forget::{ForgetUser, FullTextCounts, QueueCounts, RelationalCounts};
use octopus_core::memory_jobs::{JobOutcome, MemoryWork, SummarisedEpisode};
use octopus_core::message::Role;
use octopus_core::procedure::Decision;
use octopus_core::store::Store;
use octopus_core::{EpisodeId, Error, ProcedureId, TenantId, Timestamp, now};

use crate::Backend;
use crate::fixtures::{self, World, search};
use crate::knowledge::direction;
use crate::memory::{embed_all, query};

const LEASE: Lease = Lease::from_secs(60);

fn t(day: u32) -> Timestamp {
    Utc.with_ymd_and_hms(2026, 6, day, 10, 0, 0).unwrap()
}

fn closing_at(at: Timestamp) -> CloseEpisode {
    CloseEpisode {
        reason: EndReason::UserClosed,
        ended_at: Some(at),
        summary: None,
    }
}

pub async fn expired_episodes_are_archived_once_and_leave_recall(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let mut agent = store.get_agent(world.tenant, world.agent).await.unwrap();
    agent.memory.retention_days = Some(30);
    store.update_agent(&agent).await.unwrap();
    // Another tenant's agent keeps everything.
    let keeper = World::create(&*store, "globex").await;

    let said = world.say(&*store, t(1), &["the walrus code is 7781"]).await;
    let episode = said[0].episode_id;
    store
        .close_episode(world.tenant, episode, closing_at(t(1)), t(1))
        .await
        .unwrap();
    let kept = keeper
        .say(&*store, t(1), &["the walrus code is 7781"])
        .await[0]
        .episode_id;
    store
        .close_episode(keeper.tenant, kept, closing_at(t(1)), t(1))
        .await
        .unwrap();
    embed_all(&*store, |_| 0).await;

    let recalled = || {
        let store = store.clone();
        let q = query(&world, "alice", direction(0, 0.0));
        async move { store.search_memory(world.tenant, &q).await.unwrap().len() }
    };
    let found = || {
        let store = store.clone();
        async move {
            store
                .search_messages(world.tenant, &search("walrus"))
                .await
                .unwrap()
                .len()
        }
    };
    assert_eq!((recalled().await, found().await), (1, 1));

    let day = Duration::days(1);
    assert!(
        store
            .archive_expired_episodes(t(1) + day * 29, 100)
            .await
            .unwrap()
            .is_empty(),
        "an episode within its retention period stays"
    );
    let (first, second) = tokio::join!(
        store.archive_expired_episodes(t(1) + day * 31, 100),
        store.archive_expired_episodes(t(1) + day * 31, 100)
    );
    let mut archived = first.unwrap();
    archived.extend(second.unwrap());
    assert_eq!(
        archived,
        vec![(world.tenant, episode)],
        "archived once, and only where the agent sets a retention period"
    );

    let read = store.get_episode(world.tenant, episode).await.unwrap();
    assert_eq!(
        read.archived_at,
        Some(t(1) + day * 31),
        "an archive stays readable"
    );
    assert_eq!((recalled().await, found().await), (0, 0));
    assert!(
        store
            .message_windows(world.tenant, &[said[0].id], 0)
            .await
            .unwrap()
            .is_empty()
    );
    let in_use = store
        .list_episodes(world.tenant, &EpisodeFilter::default())
        .await
        .unwrap();
    assert!(in_use.is_empty());
    let archive = EpisodeFilter {
        archived: true,
        ..EpisodeFilter::default()
    };
    let listed: Vec<EpisodeId> = store
        .list_episodes(world.tenant, &archive)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(listed, vec![episode]);
    assert_eq!(
        store
            .search_messages(keeper.tenant, &search("walrus"))
            .await
            .unwrap()
            .len(),
        1,
        "the other agent's episode is untouched"
    );

    // A restore brings it back and restarts its retention clock.
    let restored_at = t(1) + day * 32;
    let restored = store
        .restore_episode(world.tenant, episode, restored_at)
        .await
        .unwrap();
    assert_eq!(restored.archived_at, None);
    assert_eq!((recalled().await, found().await), (1, 1));
    assert!(
        store
            .archive_expired_episodes(restored_at + day * 29, 100)
            .await
            .unwrap()
            .is_empty(),
        "a restored episode gets another retention period"
    );
    assert_eq!(
        store
            .archive_expired_episodes(restored_at + day * 31, 100)
            .await
            .unwrap(),
        vec![(world.tenant, episode)]
    );

    // Purging an archived episode removes it from every store.
    store.purge_episode(world.tenant, episode).await.unwrap();
    assert!(matches!(
        store.get_episode(world.tenant, episode).await,
        Err(Error::NotFound { .. })
    ));
    drop(store);
    let store = backend.open().await;
    let hits = store
        .search_memory(world.tenant, &query(&world, "alice", direction(0, 0.0)))
        .await
        .unwrap();
    assert!(hits.is_empty());
    assert!(
        store
            .list_episodes(world.tenant, &archive)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .restore_episode(world.tenant, episode, now())
            .await
            .is_err()
    );
}

/// Does every queued job: messages embedded along axis 0, summaries along 1.
pub(crate) async fn work_off_the_queue(store: &dyn Store) {
    let jobs = store.claim_memory_jobs(100, now(), LEASE).await.unwrap();
    for job in &jobs {
        let outcome = match &job.work {
            MemoryWork::EmbedMessage(message) => JobOutcome::MessageEmbedded {
                message: message.id,
                vector: direction(0, 0.0),
            },
            MemoryWork::SummariseEpisode(e) => JobOutcome::EpisodeSummarised(SummarisedEpisode {
                episode: e.episode.id,
                generated: None,
                source: SummarySource::Extractive,
                vector: direction(1, 0.0),
                retry: None,
                facts: Vec::new(),
            }),
            MemoryWork::EmbedFact(fact) => JobOutcome::FactEmbedded {
                fact: fact.id,
                vector: direction(2, 0.0),
            },
            MemoryWork::LearnFacts(_) => JobOutcome::Skipped,
        };
        store
            .complete_memory_job(job, outcome, "test-model", now())
            .await
            .unwrap();
    }
}

/// What a user has in store, as the ports show it.
#[derive(Debug, PartialEq)]
struct Holdings {
    conversations: usize,
    episodes: usize,
    messages: u32,
    found_by_words: usize,
    found_by_vector: usize,
}

async fn holdings(store: &dyn Store, world: &World, user: &str) -> Holdings {
    let conversations = store
        .list_conversations(
            world.tenant,
            &ConversationFilter {
                agent_id: Some(world.agent),
                user_id: Some(user.into()),
                include_deleted: true,
                page: Default::default(),
            },
        )
        .await
        .unwrap();
    let episodes = store
        .list_episodes(
            world.tenant,
            &EpisodeFilter {
                agent_id: Some(world.agent),
                user_id: Some(user.into()),
                ..EpisodeFilter::default()
            },
        )
        .await
        .unwrap();
    let mut words = search("walrus");
    words.user_id = Some(user.into());
    words.agent_id = Some(world.agent);
    Holdings {
        conversations: conversations.len(),
        episodes: episodes.len(),
        messages: episodes.iter().map(|e| e.message_count).sum(),
        found_by_words: store
            .search_messages(world.tenant, &words)
            .await
            .unwrap()
            .len(),
        found_by_vector: store
            .search_memory(world.tenant, &query(world, user, direction(0, 0.0)))
            .await
            .unwrap()
            .len(),
    }
}

pub async fn forgetting_a_user_removes_all_of_theirs_and_nothing_else(backend: &impl Backend) {
    let store = backend.open().await;
    let acme = World::create(&*store, "acme").await;
    let bob = World {
        conversation: {
            let c = fixtures::conversation(acme.tenant, acme.agent, "bob");
            store.create_conversation(&c).await.unwrap();
            c.id
        },
        ..acme
    };
    let sales = {
        let agent = fixtures::agent(acme.tenant, "sales");
        store.create_agent(&agent).await.unwrap();
        let c = fixtures::conversation(acme.tenant, agent.id, "alice");
        store.create_conversation(&c).await.unwrap();
        World {
            tenant: acme.tenant,
            agent: agent.id,
            conversation: c.id,
        }
    };
    let globex = World::create(&*store, "globex").await;

    // Alice, with support: a closed episode with a summary, then an open one.
    let first = acme
        .say(
            &*store,
            t(1),
            &["my walrus is called Wendy", "walrus food is fish"],
        )
        .await[0]
        .episode_id;
    let summary = EpisodeSummary {
        summary: "Alice has a walrus named Wendy.".into(),
        key_facts: vec!["walrus: Wendy".into(), "eats fish".into()],
        embedding: None,
    };
    store
        .close_episode(
            acme.tenant,
            first,
            CloseEpisode {
                summary: Some(summary),
                ..closing_at(t(1) + Duration::seconds(2))
            },
            t(1),
        )
        .await
        .unwrap();
    acme.say(&*store, t(3), &["the walrus has a cold"]).await;
    sales
        .say(&*store, t(3), &["a walrus-sized order please"])
        .await;
    bob.say(&*store, t(3), &["my walrus is shy", "walrus naps a lot"])
        .await;
    globex
        .say(&*store, t(3), &["a walrus in another tenant"])
        .await;
    work_off_the_queue(&*store).await;
    // One message whose embedding is still queued.
    acme.say(
        &*store,
        t(3) + Duration::minutes(1),
        &["the walrus got better"],
    )
    .await;
    bob.say(&*store, t(3) + Duration::minutes(1), &["walrus again"])
        .await;

    let bob_before = holdings(&*store, &bob, "bob").await;
    assert_eq!(bob_before.found_by_words, 3);
    let alice_before = holdings(&*store, &acme, "alice").await;
    assert_eq!(
        (
            alice_before.episodes,
            alice_before.messages,
            alice_before.found_by_words
        ),
        (2, 4, 4)
    );
    let globex_before = holdings(&*store, &globex, "alice").await;

    let receipt = store
        .forget_user(
            acme.tenant,
            &ForgetUser {
                user_id: "alice".into(),
                agent_id: Some(acme.agent),
            },
        )
        .await
        .unwrap();
    assert_eq!(
        (
            receipt.relational.clone(),
            receipt.full_text.clone(),
            receipt.queue.clone(),
            receipt.vectors.message_vectors,
            receipt.vectors.summary_vectors,
        ),
        (
            RelationalCounts {
                conversations: 1,
                episodes: 2,
                messages: 4,
                summaries: 1,
                key_facts: 2,
                facts: 0,
                fact_history: 0,
                learned_procedures: 0,
            },
            FullTextCounts { entries: 4 },
            QueueCounts { jobs: 1 },
            3,
            1
        ),
        "{receipt:?}"
    );
    assert!(receipt.compacted);
    assert_eq!(receipt.conversation_ids, vec![acme.conversation]);
    assert_eq!(
        holdings(&*store, &acme, "alice").await,
        Holdings {
            conversations: 0,
            episodes: 0,
            messages: 0,
            found_by_words: 0,
            found_by_vector: 0
        }
    );
    assert!(matches!(
        store.get_conversation(acme.tenant, acme.conversation).await,
        Err(Error::NotFound { .. })
    ));
    assert_eq!(holdings(&*store, &bob, "bob").await, bob_before);
    assert_eq!(holdings(&*store, &globex, "alice").await, globex_before);
    assert_eq!(
        holdings(&*store, &sales, "alice").await.messages,
        1,
        "forgetting with one agent keeps what the user said to another"
    );

    // Without an agent, everything of the user's goes; a second time, nothing.
    let all = ForgetUser {
        user_id: "alice".into(),
        agent_id: None,
    };
    let receipt = store.forget_user(acme.tenant, &all).await.unwrap();
    assert_eq!(
        (
            receipt.relational.conversations,
            receipt.relational.messages
        ),
        (1, 1)
    );
    assert_eq!(holdings(&*store, &sales, "alice").await.conversations, 0);
    let again = store.forget_user(acme.tenant, &all).await.unwrap();
    assert_eq!(again.relational, RelationalCounts::default());
    assert_eq!(holdings(&*store, &bob, "bob").await, bob_before);

    // Bob's queued work is still there and still done.
    assert_eq!(store.tenant_memory_jobs(acme.tenant).await.unwrap(), 1);
}

/// Every record of the tenant (or user), in dump order.
pub(crate) async fn exported(
    store: &dyn Store,
    tenant: TenantId,
    user: Option<&str>,
) -> Vec<DumpRecord> {
    let records = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&records);
    let sink = Box::new(move |record| {
        into.lock().unwrap().push(record);
        true
    });
    let count = store
        .export_records(tenant, user.map(str::to_owned), sink)
        .await
        .unwrap();
    let records = std::mem::take(&mut *records.lock().unwrap());
    assert_eq!(count, records.len() as u64);
    records
}

/// The records as a whole dump: header, records, end.
fn whole(tenant: TenantId, records: &[DumpRecord]) -> Vec<octopus_core::Result<DumpRecord>> {
    let mut dump = vec![Ok(DumpRecord::Header(DumpHeader::new(tenant, None, now())))];
    dump.extend(records.iter().cloned().map(Ok));
    dump.push(Ok(DumpRecord::End(DumpEnd {
        records: records.len() as u64 + 1,
    })));
    dump
}

async fn import(
    store: &dyn Store,
    tenant: TenantId,
    dump: Vec<octopus_core::Result<DumpRecord>>,
) -> octopus_core::Result<ImportCounts> {
    store
        .import_records(tenant, Box::new(dump.into_iter()), now())
        .await
}

pub async fn a_dump_moves_a_tenant_into_an_empty_store_whole_or_not_at_all(backend: &impl Backend) {
    let source = backend.open().await;
    let acme = World::create(&*source, "acme").await;
    let first = acme
        .say(
            &*source,
            t(1),
            &["the walrus code is 7781", "noted, the code"],
        )
        .await[0]
        .episode_id;
    let summary = EpisodeSummary {
        summary: "The walrus code.".into(),
        key_facts: vec!["code 7781".into()],
        embedding: Some(direction(2, 0.0)),
    };
    source
        .close_episode(
            acme.tenant,
            first,
            CloseEpisode {
                summary: Some(summary),
                ..closing_at(t(1) + Duration::seconds(2))
            },
            t(1),
        )
        .await
        .unwrap();
    let deleted = acme.say(&*source, t(2), &["forget this one"]).await[0].episode_id;
    source
        .soft_delete_episode(acme.tenant, deleted, t(2))
        .await
        .unwrap();
    acme.say(&*source, t(3), &["still talking"]).await;
    let bob = fixtures::conversation(acme.tenant, acme.agent, "bob");
    source.create_conversation(&bob).await.unwrap();
    source
        .append_messages(
            acme.tenant,
            fixtures::batch(
                bob.id,
                vec![fixtures::text(Role::User, "bob was here", t(3))],
            ),
        )
        .await
        .unwrap();
    source
        .create_collection(acme.tenant, acme.agent, crate::knowledge::DIM, "test-model")
        .await
        .unwrap();
    source
        .store_chunks(
            acme.tenant,
            acme.agent,
            vec![crate::knowledge::chunk(
                "faq.md",
                0,
                "Refunds take five days",
                direction(3, 0.0),
            )],
        )
        .await
        .unwrap();
    let procedure = ProcedureId::new();
    source
        .create_procedure(
            acme.tenant,
            procedure,
            Some(acme.agent),
            crate::procedures::version("refund", "check the order", "alice"),
            t(3),
        )
        .await
        .unwrap();
    source
        .decide_procedure(
            acme.tenant,
            procedure,
            Decision::Approve,
            Some("boss".into()),
            t(3),
        )
        .await
        .unwrap();
    let records = exported(&*source, acme.tenant, None).await;
    let kinds: Vec<&str> = records.iter().map(DumpRecord::kind).collect();
    assert_eq!(
        kinds,
        [
            "tenant",
            "agent",
            "procedure",
            "knowledge_chunk",
            "conversation",
            "episode",
            "message",
            "message",
            "episode",
            "message",
            "episode",
            "message",
            "conversation",
            "episode",
            "message"
        ]
    );
    let bobs = exported(&*source, acme.tenant, Some("bob")).await;
    assert_eq!(
        bobs.iter().map(DumpRecord::kind).collect::<Vec<_>>(),
        ["tenant", "agent", "conversation", "episode", "message"],
        "one user's dump holds their conversations and the agents they talk to"
    );

    let target = backend.open_empty().await;
    // A message of an episode no record brings, midway: nothing stays.
    let mut broken = records.clone();
    if let Some(DumpRecord::Message(message)) = broken
        .iter_mut()
        .find(|r| matches!(r, DumpRecord::Message(_)))
    {
        message.episode_id = EpisodeId::new();
    }
    import(&*target, acme.tenant, whole(acme.tenant, &broken))
        .await
        .unwrap_err();
    assert_not_there(&*target, &acme).await;
    // A store error midway (the same id twice) leaves nothing either.
    let mut twice = records.clone();
    let agent = twice
        .iter()
        .position(|r| matches!(r, DumpRecord::Agent(_)))
        .unwrap();
    twice.insert(agent + 1, twice[agent].clone());
    import(&*target, acme.tenant, whole(acme.tenant, &twice))
        .await
        .unwrap_err();
    assert_not_there(&*target, &acme).await;
    // Cut before its end, or by an error from the reader.
    let mut cut = whole(acme.tenant, &records);
    cut.pop();
    import(&*target, acme.tenant, cut).await.unwrap_err();
    let mut failing = whole(acme.tenant, &records);
    failing.insert(5, Err(Error::invalid("dump", "line 6: not JSON")));
    import(&*target, acme.tenant, failing).await.unwrap_err();
    assert_not_there(&*target, &acme).await;

    let counts = import(&*target, acme.tenant, whole(acme.tenant, &records))
        .await
        .unwrap();
    assert_eq!(
        (
            counts.agents,
            counts.procedures,
            counts.knowledge_chunks,
            counts.conversations,
            counts.episodes,
            counts.messages
        ),
        (1, 1, 1, 2, 4, 5)
    );
    // As a dump holds them (memory vectors, which it does not carry, apart).
    let json = |records: &[DumpRecord]| serde_json::to_value(records).unwrap();
    assert_eq!(
        json(&exported(&*target, acme.tenant, None).await),
        json(&records)
    );
    // Memory vectors are made again: each message worth embedding, and each
    // closed episode's summary.
    assert_eq!(target.tenant_memory_jobs(acme.tenant).await.unwrap(), 5 + 2);
    let hits = target
        .search_chunks(
            acme.tenant,
            acme.agent,
            &octopus_core::knowledge::VectorQuery {
                vector: direction(3, 0.0),
                top_k: 1,
                min_score: -1.0,
                filter: Default::default(),
            },
        )
        .await
        .unwrap();
    assert_eq!(hits.len(), 1, "the chunk's vector came with it");
    assert_eq!(
        target
            .search_messages(acme.tenant, &search("walrus"))
            .await
            .unwrap()
            .len(),
        1
    );
    // Into a store that holds it already: a conflict, and nothing doubled.
    import(&*target, acme.tenant, whole(acme.tenant, &records))
        .await
        .unwrap_err();
    assert_eq!(
        json(&exported(&*target, acme.tenant, None).await),
        json(&records)
    );
}

async fn assert_not_there(store: &dyn Store, world: &World) {
    assert!(matches!(
        store.get_tenant(world.tenant).await,
        Err(Error::NotFound { .. })
    ));
    assert!(
        store
            .list_episodes(world.tenant, &EpisodeFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.pending_memory_jobs().await.unwrap(), 0);
    assert!(
        store
            .collection(world.tenant, world.agent)
            .await
            .unwrap()
            .is_none()
    );
}

/// A vector index that records each erasure and can fail the next ones, as
/// a crash between a forget's transaction and its erasure would leave it.
pub(crate) struct ErasureWatch {
    inner: Arc<dyn octopus_core::vectors::VectorIndex>,
    fail: std::sync::atomic::AtomicBool,
    pub(crate) erased: Mutex<Vec<u64>>,
}

#[async_trait::async_trait]
impl octopus_core::vectors::VectorIndex for ErasureWatch {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    async fn catch_up(
        &self,
        rows: &dyn octopus_core::vectors::VectorRows,
    ) -> octopus_core::Result<usize> {
        self.inner.catch_up(rows).await
    }

    async fn copy_versions(
        &self,
        sets: &[octopus_core::vectors::VectorSet],
    ) -> octopus_core::Result<Vec<Option<i64>>> {
        self.inner.copy_versions(sets).await
    }

    async fn reconcile(
        &self,
        set: octopus_core::vectors::VectorSet,
        state: octopus_core::vectors::SetState,
        rows: &dyn octopus_core::vectors::VectorRows,
    ) -> octopus_core::Result<bool> {
        self.inner.reconcile(set, state, rows).await
    }

    async fn follow(
        &self,
        set: octopus_core::vectors::VectorSet,
        before: octopus_core::vectors::SetState,
        after: i64,
        change: octopus_core::vectors::VectorChange,
    ) -> octopus_core::Result<()> {
        self.inner.follow(set, before, after, change).await
    }

    async fn search(
        &self,
        set: octopus_core::vectors::VectorSet,
        state: octopus_core::vectors::SetState,
        query: &octopus_core::vectors::Nearest,
        rows: &dyn octopus_core::vectors::VectorRows,
    ) -> octopus_core::Result<Vec<octopus_core::vectors::ScoredKey>> {
        self.inner.search(set, state, query, rows).await
    }

    async fn erase(
        &self,
        set: octopus_core::vectors::VectorSet,
        before: octopus_core::vectors::SetState,
        after: i64,
        change: octopus_core::vectors::VectorChange,
    ) -> octopus_core::Result<bool> {
        if self.fail.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(Error::unavailable(
                "vector index",
                std::io::Error::other("a fault of the test's"),
            ));
        }
        self.erased.lock().unwrap().extend(&change.removed);
        self.inner.erase(set, before, after, change).await
    }
}

/// Opens `backend` with its index watched; failing erasures when `fail`.
pub(crate) async fn watched(
    backend: &impl Backend,
    fail: bool,
) -> (Arc<dyn Store>, Arc<ErasureWatch>) {
    let cell: Arc<Mutex<Option<Arc<ErasureWatch>>>> = Arc::default();
    let keep = Arc::clone(&cell);
    let store = backend
        .open_wrapping(Box::new(move |inner| {
            let watch = Arc::new(ErasureWatch {
                inner,
                fail: std::sync::atomic::AtomicBool::new(fail),
                erased: Mutex::default(),
            });
            *keep.lock().unwrap() = Some(Arc::clone(&watch));
            watch as Arc<dyn octopus_core::vectors::VectorIndex>
        }))
        .await;
    let watch = cell
        .lock()
        .unwrap()
        .take()
        .expect("the backend wrapped its index");
    (store, watch)
}

/// A forget whose transaction committed but whose erasure of derived copies
/// did not happen (here the index fails it, as a crash there would) leaves
/// the user's rows gone and the erasure pending: the next forget finishes
/// it first, `finish_erasures` (at start) likewise, and then none is left.
/// The index is told to erase exactly the removed vectors' keys.
pub async fn an_interrupted_forget_is_finished_by_the_next_and_at_start(backend: &impl Backend) {
    let (store, failing) = watched(backend, true).await;
    let acme = World::create(&*store, "acme").await;
    acme.say(
        &*store,
        t(1),
        &["my walrus is called Wendy", "walrus food is fish"],
    )
    .await;
    work_off_the_queue(&*store).await;
    let keys = store
        .search_memory(acme.tenant, &query(&acme, "alice", direction(0, 0.0)))
        .await
        .unwrap()
        .len();
    assert_eq!(keys, 2, "both messages embedded");
    let alice = ForgetUser {
        user_id: "alice".into(),
        agent_id: None,
    };
    assert!(
        store.forget_user(acme.tenant, &alice).await.is_err(),
        "the erasure failed after the rows' transaction"
    );
    assert_eq!(
        holdings(&*store, &acme, "alice").await.messages,
        0,
        "the rows are gone"
    );
    assert!(failing.erased.lock().unwrap().is_empty());

    // A retry: the next forget (of anyone) finishes what was left first.
    // As at a restart: one store on the files at a time, as a data
    // directory's lock keeps it for servers (the first one's background
    // checkpoints would otherwise contend with the second's writes).
    drop(store);
    let (store, watch) = watched(backend, false).await;
    let nobody = ForgetUser {
        user_id: "nobody".into(),
        agent_id: None,
    };
    store.forget_user(acme.tenant, &nobody).await.unwrap();
    assert_eq!(
        watch.erased.lock().unwrap().len(),
        2,
        "alice's two vectors erased"
    );
    assert_eq!(store.finish_erasures().await.unwrap(), 0, "none left");

    // At start: the same, with no forget to come.
    let bob = World {
        conversation: {
            let c = fixtures::conversation(acme.tenant, acme.agent, "bob");
            store.create_conversation(&c).await.unwrap();
            c.id
        },
        ..acme
    };
    bob.say(&*store, t(2), &["my walrus is shy"]).await;
    work_off_the_queue(&*store).await;
    // As at a restart: one store on the files at a time, as a data
    // directory's lock keeps it for servers (the first one's background
    // checkpoints would otherwise contend with the second's writes).
    drop(store);
    let (store, _) = watched(backend, true).await;
    let bob_who = ForgetUser {
        user_id: "bob".into(),
        agent_id: None,
    };
    assert!(store.forget_user(acme.tenant, &bob_who).await.is_err());
    // As at a restart: one store on the files at a time, as a data
    // directory's lock keeps it for servers (the first one's background
    // checkpoints would otherwise contend with the second's writes).
    drop(store);
    let (store, watch) = watched(backend, false).await;
    assert_eq!(store.finish_erasures().await.unwrap(), 1);
    assert_eq!(watch.erased.lock().unwrap().len(), 1, "bob's vector erased");
    assert_eq!(store.finish_erasures().await.unwrap(), 0);
    assert_eq!(
        store
            .search_memory(acme.tenant, &query(&bob, "bob", direction(0, 0.0)))
            .await
            .unwrap()
            .len(),
        0
    );
}
