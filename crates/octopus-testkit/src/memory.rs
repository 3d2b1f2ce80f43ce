//! The memory-store contract (recall's queue and vectors), rule by rule.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{TimeZone, Utc};
use octopus_core::episode::{CloseEpisode, EndReason, EpisodeSummary};
use octopus_core::memory_jobs::{JobOutcome, MemoryJob, MemoryWork, SummarisedEpisode};
use octopus_core::memory_vectors::{MemoryVectorHit, MemoryVectorQuery};
use octopus_core::message::{Message, Role};
use octopus_core::recall::MemoryKind;
use octopus_core::store::Store;
use octopus_core::vectors::{
    Nearest, ScoredKey, SetState, VectorChange, VectorIndex, VectorRows, VectorSet, read_set,
};
use octopus_core::{Timestamp, now};

use crate::Backend;
use crate::fixtures::{self, World, batch, text};
use crate::knowledge::direction;

const LEASE: Duration = Duration::from_secs(60);
const MODEL: &str = "test-model";

fn t(day: u32) -> Timestamp {
    Utc.with_ymd_and_hms(2026, 5, day, 10, 0, 0).unwrap()
}

/// A recall of `user`'s memories of the world's agent nearest `vector`.
pub fn query(world: &World, user: &str, vector: Vec<f32>) -> MemoryVectorQuery {
    MemoryVectorQuery {
        agent_id: world.agent,
        user_id: user.into(),
        vector,
        top_k: 10,
        kinds: vec![MemoryKind::Message, MemoryKind::Summary],
        from: None,
        to: None,
    }
}

/// Claims every due job and embeds each message along the axis `axis_of` gives
/// it; summaries are skipped.
pub async fn embed_all(store: &dyn Store, axis_of: impl Fn(&Message) -> usize) -> usize {
    let jobs = store.claim_memory_jobs(100, now(), LEASE).await.unwrap();
    for job in &jobs {
        let outcome = match &job.work {
            MemoryWork::EmbedMessage(message) => JobOutcome::MessageEmbedded {
                message: message.id,
                vector: direction(axis_of(message), 0.0),
            },
            MemoryWork::SummariseEpisode(_)
            | MemoryWork::EmbedFact(_)
            | MemoryWork::LearnFacts(_) => JobOutcome::Skipped,
        };
        store
            .complete_memory_job(job, outcome, MODEL, now())
            .await
            .unwrap();
    }
    jobs.len()
}

/// A store with tenant "acme", whose user alice said `texts`, one a second
/// from day 1.
async fn acme_saying(
    backend: &impl Backend,
    texts: &[&str],
) -> (std::sync::Arc<dyn Store>, World, Vec<Message>) {
    let store = backend.open().await;
    let world = World::create(store.as_ref(), "acme").await;
    let said = world.say(store.as_ref(), t(1), texts).await;
    (store, world, said)
}

fn message_targets(jobs: &[MemoryJob]) -> Vec<String> {
    jobs.iter()
        .filter_map(|job| match &job.work {
            MemoryWork::EmbedMessage(m) => m.content.as_ref().map(|c| c.text()),
            MemoryWork::SummariseEpisode(_)
            | MemoryWork::EmbedFact(_)
            | MemoryWork::LearnFacts(_) => None,
        })
        .collect()
}

pub async fn appends_and_closes_queue_work_durably(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(store.as_ref(), "acme").await;
    let records = vec![
        text(Role::User, "My daughter starts school in September", t(1)),
        text(Role::Assistant, "   ", t(1)),
        text(Role::System, "The user prefers short answers, always", t(1)),
        text(Role::Tool, "{\"status\": \"shipped\", \"order\": 42}", t(1)),
        text(
            Role::Assistant,
            "Congratulations to her, that is a big step!",
            t(1),
        ),
    ];
    let stored = store
        .append_messages(world.tenant, batch(world.conversation, records))
        .await
        .unwrap();
    store
        .close_episode(
            world.tenant,
            stored[0].episode_id,
            CloseEpisode {
                reason: EndReason::UserClosed,
                ended_at: None,
                summary: None,
            },
            now(),
        )
        .await
        .unwrap();
    assert_eq!(store.pending_memory_jobs().await.unwrap(), 3);

    // The queue is in the store: a second handle on the same data sees it.
    drop(store);
    let store = backend.open().await;
    let jobs = store.claim_memory_jobs(10, now(), LEASE).await.unwrap();
    assert_eq!(
        message_targets(&jobs),
        vec![
            "My daughter starts school in September",
            "Congratulations to her, that is a big step!"
        ],
        "empty messages, system injections and tool results are not queued"
    );
    let summarise: Vec<_> = jobs
        .iter()
        .filter_map(|job| match &job.work {
            MemoryWork::SummariseEpisode(e) => Some(e),
            MemoryWork::EmbedMessage(_) | MemoryWork::EmbedFact(_) | MemoryWork::LearnFacts(_) => {
                None
            }
        })
        .collect();
    assert_eq!(summarise.len(), 1);
    assert_eq!(summarise[0].episode.id, stored[0].episode_id);
    assert_eq!(summarise[0].messages.len(), 5);
    assert!(
        jobs.iter()
            .all(|job| job.tenant_id == world.tenant && job.agent_id == world.agent)
    );
}

pub async fn claimed_jobs_are_leased_and_retried(backend: &impl Backend) {
    let (store, _, _) =
        acme_saying(backend, &["Please remember that I am allergic to peanuts"]).await;
    let start = now();
    let jobs = store.claim_memory_jobs(10, start, LEASE).await.unwrap();
    assert_eq!(jobs.len(), 1);
    assert!(
        store
            .claim_memory_jobs(10, start, LEASE)
            .await
            .unwrap()
            .is_empty()
    );
    let after_lease = start + chrono::Duration::seconds(61);
    let again = store
        .claim_memory_jobs(10, after_lease, LEASE)
        .await
        .unwrap();
    assert_eq!(again.len(), 1, "a lease that ran out frees the job");

    store
        .retry_memory_job(
            &again[0],
            "provider busy",
            after_lease + chrono::Duration::seconds(30),
        )
        .await
        .unwrap();
    assert!(
        store
            .claim_memory_jobs(10, after_lease + chrono::Duration::seconds(29), LEASE)
            .await
            .unwrap()
            .is_empty()
    );
    let retried = store
        .claim_memory_jobs(10, after_lease + chrono::Duration::seconds(30), LEASE)
        .await
        .unwrap();
    assert_eq!(retried.len(), 1);
    assert_eq!(retried[0].attempts, 1);
    assert_eq!(store.pending_memory_jobs().await.unwrap(), 1);

    // Two workers held the job, one after the other's lease ran out: the
    // first to complete it stores its outcome, the other stores nothing.
    let done_at = after_lease + chrono::Duration::seconds(31);
    let first = store
        .complete_memory_job(&retried[0], JobOutcome::Skipped, MODEL, done_at)
        .await
        .unwrap();
    assert!(first, "the first completion stores its outcome");
    let second = store
        .complete_memory_job(&jobs[0], JobOutcome::Skipped, MODEL, done_at)
        .await
        .unwrap();
    assert!(!second, "the job was done already: nothing is stored twice");
    assert_eq!(store.pending_memory_jobs().await.unwrap(), 0);
}

pub async fn embedded_messages_are_found_by_vector(backend: &impl Backend) {
    let (store, world, said) = acme_saying(
        backend,
        &[
            "I adopted a greyhound called Pixel",
            "We are moving to Lisbon next spring",
            "My favourite band is Radiohead",
        ],
    )
    .await;
    let axis = |m: &Message| said.iter().position(|s| s.id == m.id).unwrap();
    assert_eq!(embed_all(store.as_ref(), axis).await, 3);
    assert_eq!(store.pending_memory_jobs().await.unwrap(), 0);

    let hits = store
        .search_memory(world.tenant, &query(&world, "alice", direction(1, 0.2)))
        .await
        .unwrap();
    assert_eq!(hits[0].message_id, Some(said[1].id));
    assert_eq!(hits[0].kind, MemoryKind::Message);
    assert_eq!(hits[0].episode_id, said[1].episode_id);
    assert_eq!(hits[0].at, said[1].timestamp);
    assert!(hits[0].score > 0.95);
    assert_eq!(hits.len(), 3);

    // Handing back memory after a burst (caches emptied, capacity released)
    // loses nothing: the same search finds the same memories, and a read
    // that needs a fresh connection still works.
    store.release_spare_memory().await.unwrap();
    let again = store
        .search_memory(world.tenant, &query(&world, "alice", direction(1, 0.2)))
        .await
        .unwrap();
    let keys = |hits: &[MemoryVectorHit]| hits.iter().map(|h| h.message_id).collect::<Vec<_>>();
    assert_eq!(keys(&again), keys(&hits));
    assert_eq!(store.pending_memory_jobs().await.unwrap(), 0);

    let episode = store
        .get_episode_with_messages(world.tenant, said[0].episode_id)
        .await
        .unwrap();
    assert!(
        episode.messages.iter().all(|m| m.embedding_ref.is_some()),
        "every embedded message carries its reference"
    );

    let mut bounded = query(&world, "alice", direction(1, 0.2));
    bounded.from = Some(said[2].timestamp);
    let hits = store.search_memory(world.tenant, &bounded).await.unwrap();
    assert_eq!(
        hits.iter().map(|h| h.message_id).collect::<Vec<_>>(),
        vec![Some(said[2].id)]
    );

    // A second handle rebuilds the same index from the rows.
    drop(store);
    let store = backend.open().await;
    let hits = store
        .search_memory(world.tenant, &query(&world, "alice", direction(2, 0.0)))
        .await
        .unwrap();
    assert_eq!(hits[0].message_id, Some(said[2].id));
}

pub async fn summaries_are_generated_once_and_embedded(backend: &impl Backend) {
    let (store, world, said) =
        acme_saying(backend, &["We talked about the trip to Kyoto in April"]).await;
    let episode = said[0].episode_id;
    store
        .close_episode(
            world.tenant,
            episode,
            CloseEpisode {
                reason: EndReason::AgentClosed,
                ended_at: None,
                summary: None,
            },
            now(),
        )
        .await
        .unwrap();
    let jobs = store.claim_memory_jobs(10, now(), LEASE).await.unwrap();
    let summary_job = jobs
        .iter()
        .find(|job| matches!(job.work, MemoryWork::SummariseEpisode(_)))
        .unwrap();
    // Meanwhile the caller sets a summary of its own; it wins over ours.
    store
        .set_episode_summary(
            world.tenant,
            episode,
            EpisodeSummary {
                summary: "Kyoto trip planning".into(),
                key_facts: vec![],
                embedding: None,
            },
            now(),
        )
        .await
        .unwrap();
    store
        .complete_memory_job(
            summary_job,
            JobOutcome::EpisodeSummarised(SummarisedEpisode {
                episode,
                generated: Some(EpisodeSummary {
                    summary: "generated".into(),
                    key_facts: vec![],
                    embedding: None,
                }),
                source: octopus_core::episode::SummarySource::Extractive,
                retry: None,
                vector: direction(5, 0.0),
                facts: Vec::new(),
            }),
            MODEL,
            now(),
        )
        .await
        .unwrap();
    let stored = store.get_episode(world.tenant, episode).await.unwrap();
    assert_eq!(stored.summary.as_deref(), Some("Kyoto trip planning"));
    assert_eq!(stored.summary_embedding, Some(direction(5, 0.0)));

    let mut summaries = query(&world, "alice", direction(5, 0.0));
    summaries.kinds = vec![MemoryKind::Summary];
    let hits = store.search_memory(world.tenant, &summaries).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (hits[0].kind, hits[0].episode_id, hits[0].message_id),
        (MemoryKind::Summary, episode, None)
    );

    // Setting the summary queued its embedding again; the new vector replaces
    // the old one rather than adding a second.
    let jobs = store.claim_memory_jobs(10, now(), LEASE).await.unwrap();
    let again = jobs
        .iter()
        .find(|job| matches!(job.work, MemoryWork::SummariseEpisode(_)))
        .expect("set_episode_summary queues the summary's embedding");
    store
        .complete_memory_job(
            again,
            JobOutcome::EpisodeSummarised(SummarisedEpisode {
                episode,
                generated: None,
                source: octopus_core::episode::SummarySource::Extractive,
                retry: None,
                facts: Vec::new(),
                vector: direction(6, 0.0),
            }),
            MODEL,
            now(),
        )
        .await
        .unwrap();
    let hits = store.search_memory(world.tenant, &summaries).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert!(hits[0].score < 0.01, "the old vector is gone: {hits:?}");
}

pub async fn memory_never_crosses_user_agent_or_tenant(backend: &impl Backend) {
    let store = backend.open().await;
    let acme = World::create(store.as_ref(), "acme").await;
    let globex = World::create(store.as_ref(), "globex").await;
    let other_agent = fixtures::agent(acme.tenant, "sales");
    store.create_agent(&other_agent).await.unwrap();
    let bob = fixtures::conversation(acme.tenant, acme.agent, "bob");
    store.create_conversation(&bob).await.unwrap();
    let alice_sales = fixtures::conversation(acme.tenant, other_agent.id, "alice");
    store.create_conversation(&alice_sales).await.unwrap();

    let secret = "My locker code is 4471, keep it safe";
    acme.say(store.as_ref(), t(1), &[secret]).await;
    for (tenant, conversation) in [
        (acme.tenant, bob.id),
        (acme.tenant, alice_sales.id),
        (globex.tenant, globex.conversation),
    ] {
        store
            .append_messages(
                tenant,
                batch(conversation, vec![text(Role::User, secret, t(2))]),
            )
            .await
            .unwrap();
    }
    assert_eq!(embed_all(store.as_ref(), |_| 3).await, 4);

    let count = |tenant, world: &World, agent, user: &str| {
        let store = store.clone();
        let mut q = query(world, user, direction(3, 0.0));
        q.agent_id = agent;
        async move { store.search_memory(tenant, &q).await.unwrap().len() }
    };
    assert_eq!(count(acme.tenant, &acme, acme.agent, "alice").await, 1);
    assert_eq!(count(acme.tenant, &acme, acme.agent, "bob").await, 1);
    assert_eq!(count(acme.tenant, &acme, other_agent.id, "alice").await, 1);
    assert_eq!(count(acme.tenant, &acme, acme.agent, "carol").await, 0);
    assert_eq!(
        count(globex.tenant, &globex, globex.agent, "alice").await,
        1
    );
    // Globex's key cannot reach Acme's agent, even naming it.
    assert_eq!(count(globex.tenant, &acme, acme.agent, "alice").await, 0);
    let hits = store
        .search_memory(acme.tenant, &query(&acme, "alice", direction(3, 0.0)))
        .await
        .unwrap();
    let windows = store
        .message_windows(globex.tenant, &[hits[0].message_id.unwrap()], 2)
        .await
        .unwrap();
    assert!(
        windows.is_empty(),
        "another tenant's message is not read by id"
    );
}

pub async fn deleted_episodes_are_never_recalled(backend: &impl Backend) {
    let (store, world, said) = acme_saying(backend, &["The wifi password is correct-horse"]).await;
    embed_all(store.as_ref(), |_| 0).await;
    let recall = || {
        let store = store.clone();
        let q = query(&world, "alice", direction(0, 0.0));
        async move { store.search_memory(world.tenant, &q).await.unwrap().len() }
    };
    assert_eq!(recall().await, 1);

    let episode = said[0].episode_id;
    store
        .soft_delete_episode(world.tenant, episode, now())
        .await
        .unwrap();
    assert_eq!(recall().await, 0);
    assert!(
        store
            .message_windows(world.tenant, &[said[0].id], 0)
            .await
            .unwrap()
            .is_empty()
    );
    store
        .restore_episode(world.tenant, episode, now())
        .await
        .unwrap();
    assert_eq!(
        recall().await,
        1,
        "restoring brings the memory back, without re-embedding"
    );

    store
        .soft_delete_episode(world.tenant, episode, now())
        .await
        .unwrap();
    store.purge_episode(world.tenant, episode).await.unwrap();
    drop(store);
    let store = backend.open().await;
    let hits = store
        .search_memory(world.tenant, &query(&world, "alice", direction(0, 0.0)))
        .await
        .unwrap();
    assert!(hits.is_empty());
}

pub async fn message_windows_carry_neighbouring_turns(backend: &impl Backend) {
    let (store, world, said) = acme_saying(backend, &["one", "two", "three", "four", "five"]).await;
    let windows = store
        .message_windows(world.tenant, &[said[3].id, said[0].id], 2)
        .await
        .unwrap();
    let texts = |messages: &[Message]| {
        messages
            .iter()
            .map(|m| m.content.as_ref().unwrap().text())
            .collect::<Vec<_>>()
    };
    assert_eq!(windows.len(), 2);
    assert_eq!(windows[0].message.id, said[3].id);
    assert_eq!(texts(&windows[0].before), vec!["two", "three"]);
    assert_eq!(texts(&windows[0].after), vec!["five"]);
    assert_eq!(windows[1].message.id, said[0].id);
    assert!(windows[1].before.is_empty());
    assert_eq!(texts(&windows[1].after), vec!["two", "three"]);
}

pub async fn message_positions_name_the_turns_next_to_each_message(backend: &impl Backend) {
    let (store, world, said) = acme_saying(backend, &["one", "two", "three"]).await;
    let other = World::create(store.as_ref(), "globex").await;
    let elsewhere = other.say(store.as_ref(), t(1), &["four"]).await;

    let ids = [said[1].id, said[0].id, elsewhere[0].id, said[2].id];
    let positions = store.message_positions(world.tenant, &ids).await.unwrap();
    let found: Vec<_> = positions.iter().map(|p| p.id).collect();
    assert_eq!(
        found,
        vec![said[1].id, said[0].id, said[2].id],
        "in the order asked, without another tenant's message"
    );
    let middle = &positions[0];
    assert_eq!(middle.episode_id, said[1].episode_id);
    assert_eq!(middle.before.map(|a| a.id), Some(said[0].id));
    assert_eq!(middle.after.map(|a| a.id), Some(said[2].id));
    assert_eq!(middle.after.map(|a| a.at), Some(said[2].timestamp));
    assert_eq!(positions[1].before, None);
    assert_eq!(positions[2].after, None);

    store
        .soft_delete_episode(world.tenant, said[0].episode_id, now())
        .await
        .unwrap();
    let positions = store.message_positions(world.tenant, &ids).await.unwrap();
    assert!(
        positions.is_empty(),
        "a deleted episode's messages have no place"
    );
}

pub async fn claims_put_live_work_first_and_take_tenants_in_turn(backend: &impl Backend) {
    use octopus_core::memory_jobs::WorkClass;
    let store = backend.open().await;
    let bulky = World::create(store.as_ref(), "bulky").await;
    let quiet = World::create(store.as_ref(), "quiet").await;
    let other = World::create(store.as_ref(), "other").await;
    let said = |n: usize, who: &str| -> Vec<_> {
        (0..n)
            .map(|i| text(Role::User, &format!("{who} says thing number {i}"), t(1)))
            .collect()
    };
    // An import of six, queued first; then two live tenants' work.
    let mut import = batch(bulky.conversation, said(6, "bulky"));
    import.work_class = WorkClass::Bulk;
    store.append_messages(bulky.tenant, import).await.unwrap();
    store
        .append_messages(quiet.tenant, batch(quiet.conversation, said(3, "quiet")))
        .await
        .unwrap();
    store
        .append_messages(other.tenant, batch(other.conversation, said(1, "other")))
        .await
        .unwrap();

    let queues = store.memory_queues().await.unwrap();
    let of = |tenant| queues.iter().find(|q| q.tenant_id == tenant).unwrap();
    assert_eq!((of(bulky.tenant).live, of(bulky.tenant).bulk), (0, 6));
    assert_eq!((of(quiet.tenant).live, of(quiet.tenant).bulk), (3, 0));
    assert_eq!(
        queues.len(),
        3,
        "a tenant with nothing queued is not listed"
    );
    assert!(
        of(bulky.tenant)
            .oldest_queued_at
            .is_some_and(|oldest| oldest <= now())
    );
    assert_eq!(store.tenant_memory_jobs(bulky.tenant).await.unwrap(), 6);
    assert_eq!(store.tenant_memory_jobs(other.tenant).await.unwrap(), 1);

    // Two at a time: one from each live tenant first, though the import is older.
    let first = store.claim_memory_jobs(2, now(), LEASE).await.unwrap();
    let mut tenants: Vec<_> = first.iter().map(|job| job.tenant_id).collect();
    tenants.sort();
    let mut expected = vec![quiet.tenant, other.tenant];
    expected.sort();
    assert_eq!(tenants, expected, "each live tenant's oldest job, in turn");
    // Live work is claimed while any is due, even a batch short of the limit.
    let second = store.claim_memory_jobs(10, now(), LEASE).await.unwrap();
    assert_eq!(
        message_targets(&second),
        vec!["quiet says thing number 1", "quiet says thing number 2"]
    );
    let bulk = store.claim_memory_jobs(10, now(), LEASE).await.unwrap();
    assert_eq!(bulk.len(), 6, "then the import");
    assert!(bulk.iter().all(|job| job.tenant_id == bulky.tenant));
}

/// With more tenants waiting than a claim takes jobs, successive claims go
/// round them all: none waits while another is served twice, whoever queued
/// first or most.
pub async fn successive_claims_go_round_every_tenant(backend: &impl Backend) {
    let store = backend.open().await;
    let mut worlds = Vec::new();
    for name in ["first", "second", "third"] {
        let world = World::create(store.as_ref(), name).await;
        let said: Vec<_> = (0..2)
            .map(|i| text(Role::User, &format!("{name} says thing number {i}"), t(1)))
            .collect();
        store
            .append_messages(world.tenant, batch(world.conversation, said))
            .await
            .unwrap();
        worlds.push(world.tenant);
    }
    let mut served = Vec::new();
    for _ in 0..6 {
        let claimed = store.claim_memory_jobs(1, now(), LEASE).await.unwrap();
        assert_eq!(claimed.len(), 1);
        served.push(claimed[0].tenant_id);
    }
    for round in served.chunks(3) {
        let mut round = round.to_vec();
        round.sort();
        let mut all = worlds.clone();
        all.sort();
        assert_eq!(round, all, "every tenant once a round: {served:?}");
    }
    assert!(
        store
            .claim_memory_jobs(1, now(), LEASE)
            .await
            .unwrap()
            .is_empty()
    );
}

/// A summary job that cannot succeed as the server is configured is parked:
/// its stand-in summary stored, the job neither claimed nor counted as
/// waiting (the queue drains), counted apart; released, with its attempts
/// afresh, when the agent's settings change or a server configured
/// otherwise starts, and not by a server configured the same.
pub async fn parked_jobs_wait_aside_until_released(backend: &impl Backend) {
    use octopus_core::memory_jobs::{Followup, Unpark};
    let (store, world, said) =
        acme_saying(backend, &["We talked about the trip to Kyoto in April"]).await;
    let episode = said[0].episode_id;
    let closing = CloseEpisode {
        reason: EndReason::AgentClosed,
        ended_at: None,
        summary: None,
    };
    store
        .close_episode(world.tenant, episode, closing, now())
        .await
        .unwrap();
    let park = |store: std::sync::Arc<dyn Store>, configuration: &'static str| async move {
        let jobs = store.claim_memory_jobs(10, now(), LEASE).await.unwrap();
        let mut parked = None;
        for job in &jobs {
            let outcome = match &job.work {
                MemoryWork::SummariseEpisode(e) => {
                    parked = Some(job.attempts);
                    JobOutcome::EpisodeSummarised(SummarisedEpisode {
                        episode: e.episode.id,
                        generated: Some(EpisodeSummary {
                            summary: "Kyoto trip (extractive)".into(),
                            key_facts: vec![],
                            embedding: None,
                        }),
                        source: octopus_core::episode::SummarySource::Extractive,
                        vector: direction(5, 0.0),
                        retry: Some(Followup::Park {
                            reason: "no API key".into(),
                            configuration: configuration.into(),
                        }),
                        facts: Vec::new(),
                    })
                }
                MemoryWork::EmbedMessage(_)
                | MemoryWork::EmbedFact(_)
                | MemoryWork::LearnFacts(_) => JobOutcome::Skipped,
            };
            assert!(
                store
                    .complete_memory_job(job, outcome, MODEL, now())
                    .await
                    .unwrap()
            );
        }
        parked
    };
    assert_eq!(park(store.clone(), "config-a").await, Some(0));
    let stored = store.get_episode(world.tenant, episode).await.unwrap();
    assert_eq!(stored.summary.as_deref(), Some("Kyoto trip (extractive)"));
    assert_eq!(stored.summary_embedding, Some(direction(5, 0.0)));

    // Aside: not claimed, not waiting, counted as parked.
    assert!(
        store
            .claim_memory_jobs(10, now(), LEASE)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.pending_memory_jobs().await.unwrap(), 0);
    assert_eq!(store.tenant_memory_jobs(world.tenant).await.unwrap(), 0);
    let queues = store.memory_queues().await.unwrap();
    let queue = queues.iter().find(|q| q.tenant_id == world.tenant).unwrap();
    assert_eq!((queue.live, queue.bulk, queue.parked), (0, 0, 1));
    assert_eq!(queue.oldest_queued_at, None, "nothing waits");

    // A server configured the same releases nothing; one configured otherwise does.
    let unpark = |which: Unpark| {
        let store = store.clone();
        async move { store.unpark_memory_jobs(&which, now()).await.unwrap() }
    };
    assert_eq!(unpark(Unpark::NotUnder("config-a".into())).await, 0);
    assert_eq!(unpark(Unpark::NotUnder("config-b".into())).await, 1);
    // Released, it is claimed again, its attempts counted afresh.
    assert_eq!(park(store.clone(), "config-b").await, Some(0));

    // Another agent's change releases nothing; this agent's does.
    assert_eq!(
        unpark(Unpark::Agent(world.tenant, octopus_core::AgentId::new())).await,
        0
    );
    let foreign = octopus_core::TenantId(uuid::Uuid::now_v7());
    assert_eq!(unpark(Unpark::Agent(foreign, world.agent)).await, 0);
    assert_eq!(unpark(Unpark::Agent(world.tenant, world.agent)).await, 1);
    assert_eq!(store.pending_memory_jobs().await.unwrap(), 1);
    assert_eq!(
        store
            .claim_memory_jobs(10, now(), LEASE)
            .await
            .unwrap()
            .len(),
        1
    );
}

/// A store's vector index, watched: it loses follows while told to, as a
/// process killed between committing a change and telling the index would;
/// it notes at each search whether its copy was already level with the
/// rows; and at each search that keeps to a partition it reads the
/// partition's nearest points twice from the rows it is handed: by the
/// store's own partition search, and by brute force over the set read
/// whole (every key's fields, then the vectors of the partition's keys).
struct Watched {
    inner: Arc<dyn VectorIndex>,
    losing: AtomicBool,
    /// Per search: the rows' version the store searched at, and the copy's
    /// version when the search began.
    searched: Mutex<Vec<(i64, Option<i64>)>>,
    partition_reads: Mutex<Vec<PartitionRead>>,
}

/// One search's partition, then its points read both ways, by key.
type PartitionRead = (String, Vec<ScoredKey>, Vec<ScoredKey>);

/// The store `backend` opens, with its vector index watched.
async fn watched_store(backend: &impl Backend) -> (Arc<dyn Store>, Arc<Watched>) {
    let cell: Arc<Mutex<Option<Arc<Watched>>>> = Arc::default();
    let keep = Arc::clone(&cell);
    let store = backend
        .open_wrapping(Box::new(move |inner| {
            let watch = Arc::new(Watched {
                inner,
                losing: AtomicBool::new(false),
                searched: Mutex::default(),
                partition_reads: Mutex::default(),
            });
            *keep.lock().unwrap() = Some(Arc::clone(&watch));
            watch as Arc<dyn VectorIndex>
        }))
        .await;
    let index = cell.lock().unwrap().take().expect("the index was wrapped");
    (store, index)
}

#[async_trait::async_trait]
impl VectorIndex for Watched {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    async fn copy_versions(&self, sets: &[VectorSet]) -> octopus_core::Result<Vec<Option<i64>>> {
        self.inner.copy_versions(sets).await
    }

    async fn reconcile(
        &self,
        set: VectorSet,
        state: SetState,
        rows: &dyn VectorRows,
    ) -> octopus_core::Result<bool> {
        self.inner.reconcile(set, state, rows).await
    }

    async fn follow(
        &self,
        set: VectorSet,
        before: SetState,
        after: i64,
        change: VectorChange,
    ) -> octopus_core::Result<()> {
        if self.losing.load(Ordering::SeqCst) {
            return Ok(());
        }
        self.inner.follow(set, before, after, change).await
    }

    async fn search(
        &self,
        set: VectorSet,
        state: SetState,
        query: &Nearest,
        rows: &dyn VectorRows,
    ) -> octopus_core::Result<Vec<ScoredKey>> {
        let copy = self.inner.copy_versions(&[set]).await?[0];
        self.searched.lock().unwrap().push((state.version, copy));
        if let Some(partition) = &query.filter.partition {
            let direct = rows.nearest_in_partition(set, query).await?;
            let scored = read_set(rows, set, Some(partition))
                .await?
                .into_iter()
                .filter(|p| query.filter.admits(&p.fields))
                .map(|p| ScoredKey {
                    key: p.key,
                    score: octopus_core::vectors::dot(&p.vector, &query.vector),
                })
                .collect();
            let generic = octopus_core::vectors::best(scored, query.top_k);
            let read = (partition.clone(), direct, generic);
            self.partition_reads.lock().unwrap().push(read);
        }
        self.inner.search(set, state, query, rows).await
    }

    async fn erase(
        &self,
        set: VectorSet,
        before: SetState,
        after: i64,
        change: VectorChange,
    ) -> octopus_core::Result<bool> {
        self.inner.erase(set, before, after, change).await
    }
}

/// A follow lost leaves the copy behind for good: every later follow finds
/// it at the wrong version and is skipped. The memory worker's catch-up
/// reconciles such a copy without anyone searching, once it has stayed
/// behind at one version for the settle time (not at the first sighting,
/// when a follow may still be on its way). An index that keeps no copy of
/// memory sets (the embedded one scans a user's rows at each search) has
/// nothing to leave behind: every message is found at once.
pub async fn a_copy_left_behind_catches_up_without_a_search(backend: &impl Backend) {
    let (store, index) = watched_store(backend).await;
    let world = World::create(store.as_ref(), "acme").await;
    let said = world
        .say(
            store.as_ref(),
            t(1),
            &[
                "I adopted a greyhound called Pixel",
                "We are moving to Lisbon next spring",
                "My favourite band is Radiohead",
            ],
        )
        .await;
    let jobs = store.claim_memory_jobs(10, now(), LEASE).await.unwrap();
    assert_eq!(jobs.len(), 3);
    for (i, job) in jobs.iter().enumerate() {
        let MemoryWork::EmbedMessage(message) = &job.work else {
            panic!("a message's embedding was queued");
        };
        let axis = said.iter().position(|s| s.id == message.id).unwrap();
        let outcome = JobOutcome::MessageEmbedded {
            message: message.id,
            vector: direction(axis, 0.0),
        };
        store
            .complete_memory_job(job, outcome, MODEL, now())
            .await
            .unwrap();
        if i == 0 {
            // Searched once, so that every index holds a copy of the set.
            let hits = store
                .search_memory(world.tenant, &query(&world, "alice", direction(0, 0.0)))
                .await
                .unwrap();
            assert_eq!(hits.len(), 1);
            index.losing.store(true, Ordering::SeqCst);
        }
    }
    index.losing.store(false, Ordering::SeqCst);
    let set = VectorSet::memory(world.tenant, world.agent);
    let behind = index.copy_versions(&[set]).await.unwrap()[0];
    let recall_latest = || {
        let q = query(&world, "alice", direction(2, 0.0));
        let store = Arc::clone(&store);
        async move { store.search_memory(world.tenant, &q).await.unwrap() }
    };
    if behind.is_none() {
        let hits = recall_latest().await;
        assert_eq!(hits.len(), 3, "no copy: every embedded message is found");
        assert_eq!(hits[0].message_id, Some(said[2].id));
        assert_eq!(store.catch_up_vectors(now()).await.unwrap(), 0);
        return;
    }

    let clock = now();
    assert_eq!(
        store.catch_up_vectors(clock).await.unwrap(),
        0,
        "not at the first sighting"
    );
    assert_eq!(index.copy_versions(&[set]).await.unwrap()[0], behind);
    assert_eq!(
        store
            .catch_up_vectors(clock + octopus_core::vector_lag::SETTLE)
            .await
            .unwrap(),
        1,
        "still behind at the same version a settle time later: reconciled"
    );

    let hits = recall_latest().await;
    assert_eq!(hits.len(), 3, "every embedded message is found");
    assert_eq!(hits[0].message_id, Some(said[2].id));
    let (rows_version, copy_version) = *index.searched.lock().unwrap().last().unwrap();
    assert_eq!(
        copy_version,
        Some(rows_version),
        "the copy was level with the rows before the search began"
    );
    assert_ne!(behind, Some(rows_version), "it had been behind");
}

/// A store finds the nearest of one user's memory vectors of an agent (what
/// an index keeping no copy asks at each recall) exactly as brute force over
/// the whole set does: among hers alone, whichever other users, agents and
/// tenants hold memories, with the filter's kinds and time window.
pub async fn a_users_memory_vectors_are_read_apart_from_everyone_elses(backend: &impl Backend) {
    let (store, index) = watched_store(backend).await;
    let acme = World::create(store.as_ref(), "acme").await;
    let globex = World::create(store.as_ref(), "globex").await;
    let sales = fixtures::agent(acme.tenant, "sales");
    store.create_agent(&sales).await.unwrap();
    let bob = fixtures::conversation(acme.tenant, acme.agent, "bob");
    store.create_conversation(&bob).await.unwrap();
    let alice_sales = fixtures::conversation(acme.tenant, sales.id, "alice");
    store.create_conversation(&alice_sales).await.unwrap();
    acme.say(
        store.as_ref(),
        t(1),
        &["I adopted a greyhound", "We move in spring", "I like jazz"],
    )
    .await;
    for (tenant, conversation, said) in [
        (acme.tenant, bob.id, "My sister lives in Porto"),
        (acme.tenant, bob.id, "I am learning the cello"),
        (acme.tenant, alice_sales.id, "Send me the invoice"),
        (globex.tenant, globex.conversation, "I adopted a cat"),
    ] {
        let record = text(Role::User, said, t(2));
        store
            .append_messages(tenant, batch(conversation, vec![record]))
            .await
            .unwrap();
    }
    // Each message along its own axis, so every vector differs.
    let axes: Mutex<Vec<octopus_core::MessageId>> = Mutex::default();
    let axis = |m: &Message| {
        let mut seen = axes.lock().unwrap();
        seen.push(m.id);
        seen.len() - 1
    };
    assert_eq!(embed_all(store.as_ref(), axis).await, 7);

    // Alice said hers on day 1, Bob his on day 2: a window, then a kind.
    let searches = [
        ("alice", None, None, 3),
        ("bob", None, None, 2),
        ("carol", None, None, 0),
        ("alice", None, Some(t(2)), 3),
        ("bob", None, Some(t(2)), 0),
        ("bob", Some(t(2)), None, 2),
    ];
    for (user, from, to, expected) in searches {
        let mut recall = query(&acme, user, direction(0, 0.0));
        (recall.from, recall.to) = (from, to);
        store.search_memory(acme.tenant, &recall).await.unwrap();
        let (partition, direct, generic) = index.partition_reads.lock().unwrap().pop().unwrap();
        assert_eq!(partition, user);
        assert_eq!(
            direct.len(),
            expected,
            "{user}'s memories of this agent, {from:?}..{to:?}"
        );
        let keys = |scored: &[ScoredKey]| scored.iter().map(|s| s.key).collect::<Vec<_>>();
        assert_eq!(
            keys(&direct),
            keys(&generic),
            "{user}'s nearest, found both ways"
        );
        for (d, g) in direct.iter().zip(&generic) {
            assert!((d.score - g.score).abs() < 1e-4, "{d:?} scored as {g:?}");
        }
    }
    let mut summaries = query(&acme, "alice", direction(0, 0.0));
    summaries.kinds = vec![MemoryKind::Summary];
    store.search_memory(acme.tenant, &summaries).await.unwrap();
    let (_, direct, generic) = index.partition_reads.lock().unwrap().pop().unwrap();
    assert!(
        direct.is_empty() && generic.is_empty(),
        "she has no summary"
    );
}

/// Recall compares its best turns with each other by their stored vectors:
/// each embedded message asked for is read back with the vector it was
/// embedded with, whatever the order asked, and no other; one named with
/// the wrong episode, and another tenant's, are left out.
pub async fn recalled_turns_are_read_back_with_their_vectors(backend: &impl Backend) {
    let (store, world, said) = acme_saying(
        backend,
        &[
            "I live in Lyon, near the river",
            "We moved to Paris in January",
            "The museum opens at nine",
        ],
    )
    .await;
    let axis = |m: &Message| said.iter().position(|s| s.id == m.id).unwrap();
    assert_eq!(embed_all(store.as_ref(), axis).await, 3);
    let asked: Vec<_> = said[..2]
        .iter()
        .rev()
        .map(|m| (m.episode_id, m.id))
        .collect();
    let mut found = store.message_vectors(world.tenant, &asked).await.unwrap();
    found.sort_by_key(|(id, _)| said.iter().position(|m| m.id == *id));
    assert_eq!(
        found.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
        vec![said[0].id, said[1].id]
    );
    for ((_, vector), axis) in found.iter().zip([0, 1]) {
        let expected = direction(axis, 0.0);
        assert_eq!(vector.len(), expected.len());
        let cosine: f32 = vector.iter().zip(&expected).map(|(a, b)| a * b).sum();
        assert!(cosine > 0.999, "the vector it was embedded with: {cosine}");
    }
    let globex = World::create(store.as_ref(), "globex").await;
    assert!(
        store
            .message_vectors(globex.tenant, &asked)
            .await
            .unwrap()
            .is_empty(),
        "another tenant's messages are not read"
    );
    let elsewhere = octopus_core::EpisodeId::new();
    assert!(
        store
            .message_vectors(world.tenant, &[(elsewhere, said[0].id)])
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .message_vectors(world.tenant, &[])
            .await
            .unwrap()
            .is_empty()
    );
}
