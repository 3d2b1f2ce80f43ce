//! The fact-store contract, rule by rule: facts stored with a summary job's
//! completion, replaced but kept, found by meaning and by words within
//! their user, gone with their episode or user, carried by dumps.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{TimeZone, Utc};
use octopus_core::dump::{DumpEnd, DumpHeader, DumpRecord};
use octopus_core::episode::{CloseEpisode, EndReason, EpisodeSummary, SummarySource};
use octopus_core::fact::{Fact, FactFilter, FactSearchQuery, NewFact};
use octopus_core::forget::ForgetUser;
use octopus_core::memory_jobs::{JobOutcome, MemoryWork, SummarisedEpisode};
use octopus_core::message::Message;
use octopus_core::recall::MemoryKind;
use octopus_core::store::{Page, Store};
use octopus_core::{EpisodeId, FactId, Timestamp, now};

use crate::Backend;
use crate::fixtures::{self, World};
use crate::knowledge::direction;

const LEASE: Duration = Duration::from_secs(60);
const MODEL: &str = "test-model";

fn t(day: u32) -> Timestamp {
    Utc.with_ymd_and_hms(2026, 3, day, 9, 0, 0).unwrap()
}

/// A fact learned from `from`, along `axis`, replacing `replaces`.
fn new_fact(text: &str, from: &Message, axis: usize, replaces: Option<FactId>) -> NewFact {
    NewFact {
        id: FactId::new(),
        text: text.into(),
        message_ids: vec![from.id],
        valid_from: from.timestamp,
        replaces,
        vector: direction(axis, 0.0),
        category: None,
    }
}

/// Closes the episode of `said` and completes its summary job with `facts`.
async fn close_learning(store: &dyn Store, world: &World, said: &[Message], facts: Vec<NewFact>) {
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
    let job = summary_job(store, episode).await;
    let outcome = JobOutcome::EpisodeSummarised(SummarisedEpisode {
        episode,
        generated: Some(EpisodeSummary {
            summary: "talked".into(),
            key_facts: facts.iter().map(|f| f.text.clone()).collect(),
            embedding: None,
        }),
        source: SummarySource::Llm,
        vector: direction(7, 0.0),
        retry: None,
        facts,
    });
    assert!(
        store
            .complete_memory_job(&job, outcome, MODEL, now())
            .await
            .unwrap()
    );
}

/// Claims jobs until the summary job of `episode` comes; the others are
/// left to their lease.
async fn summary_job(
    store: &dyn Store,
    episode: EpisodeId,
) -> octopus_core::memory_jobs::MemoryJob {
    let jobs = store.claim_memory_jobs(100, now(), LEASE).await.unwrap();
    jobs.into_iter()
        .find(|job| matches!(&job.work, MemoryWork::SummariseEpisode(e) if e.episode.id == episode))
        .expect("closing queues the summary job")
}

pub(crate) fn filter(world: &World, user: &str, include_replaced: bool) -> FactFilter {
    FactFilter {
        agent_id: world.agent,
        user_id: user.into(),
        include_replaced,
        categories: Vec::new(),
        key: None,
        page: Page::default(),
    }
}

pub(crate) fn words(world: &World, user: &str, text: &str) -> FactSearchQuery {
    FactSearchQuery {
        agent_id: world.agent,
        user_id: user.into(),
        text: text.into(),
        limit: 10,
    }
}

pub(crate) fn texts(facts: &[Fact]) -> Vec<&str> {
    facts.iter().map(|f| f.text.as_str()).collect()
}

/// Alice says where she lives on day 1 (episode one), that she moved on
/// day 5 and likes tea (episode two): two closes, the second replacing the
/// first's fact. Returns the two episodes' messages.
pub(crate) async fn alice_moves(store: &dyn Store, world: &World) -> (Vec<Message>, Vec<Message>) {
    let first = world.say(store, t(1), &["I live in Lyon"]).await;
    let lyon = new_fact("Alice lives in Lyon", &first[0], 0, None);
    let lyon_id = lyon.id;
    close_learning(store, world, &first, vec![lyon]).await;
    let second = world
        .say(store, t(5), &["We moved to Paris", "I drink green tea"])
        .await;
    let paris = new_fact("Alice lives in Paris", &second[0], 1, Some(lyon_id));
    let tea = new_fact("Alice likes green tea", &second[1], 2, None);
    close_learning(store, world, &second, vec![paris, tea]).await;
    (first, second)
}

pub async fn a_replaced_fact_is_kept_with_the_period_it_held(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let (first, second) = alice_moves(&*store, &world).await;

    let current = store
        .list_facts(world.tenant, &filter(&world, "alice", false))
        .await
        .unwrap();
    assert_eq!(
        texts(&current),
        ["Alice likes green tea", "Alice lives in Paris"],
        "the newest first, the replaced one left out"
    );
    let all = store
        .list_facts(world.tenant, &filter(&world, "alice", true))
        .await
        .unwrap();
    assert_eq!(all.len(), 3);
    let lyon = all
        .iter()
        .find(|f| f.text == "Alice lives in Lyon")
        .unwrap();
    let paris = all
        .iter()
        .find(|f| f.text == "Alice lives in Paris")
        .unwrap();
    assert_eq!(
        lyon.valid_from, first[0].timestamp,
        "true from when it was said"
    );
    assert_eq!(lyon.valid_to, Some(second[0].timestamp));
    assert_eq!(lyon.superseded_by, Some(paris.id));
    assert!(!lyon.is_current());
    assert_eq!(
        (
            paris.episode_id,
            paris.message_ids.clone(),
            paris.user_id.as_str()
        ),
        (Some(second[0].episode_id), vec![second[0].id], "alice")
    );
    assert_eq!((paris.valid_to, paris.superseded_by), (None, None));

    // Read back by id, in the order asked, unknown ids left out.
    let by_id = store
        .get_facts(world.tenant, &[paris.id, FactId::new(), lyon.id])
        .await
        .unwrap();
    assert_eq!(
        texts(&by_id),
        ["Alice lives in Paris", "Alice lives in Lyon"]
    );

    // Each is found by meaning, as a fact of its episode.
    let mut by_meaning = crate::memory::query(&world, "alice", direction(0, 0.0));
    by_meaning.kinds = vec![MemoryKind::Fact];
    let hits = store
        .search_memory(world.tenant, &by_meaning)
        .await
        .unwrap();
    assert_eq!(hits.len(), 3, "every fact has its vector: {hits:?}");
    assert_eq!(hits[0].fact_id, Some(lyon.id));
    assert_eq!(hits[0].kind, MemoryKind::Fact);
    assert_eq!(hits[0].episode_id, first[0].episode_id);
    assert_eq!(hits[0].at, first[0].timestamp);
    assert_eq!(hits[0].message_id, None);

    // Another tenant's key reaches none of them.
    let other = World::create(&*store, "globex").await;
    assert!(
        store
            .get_facts(other.tenant, &[lyon.id])
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .list_facts(other.tenant, &filter(&world, "alice", true))
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn an_episodes_facts_are_learned_once(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let said = world.say(&*store, t(1), &["I live in Lyon"]).await;
    let episode = said[0].episode_id;
    close_learning(
        &*store,
        &world,
        &said,
        vec![new_fact("Alice lives in Lyon", &said[0], 0, None)],
    )
    .await;
    // Setting the summary queues its embedding again: that job's facts
    // (a worker asked the model a second time) add nothing.
    store
        .set_episode_summary(
            world.tenant,
            episode,
            EpisodeSummary {
                summary: "Lyon".into(),
                key_facts: vec![],
                embedding: None,
            },
            now(),
        )
        .await
        .unwrap();
    let job = summary_job(&*store, episode).await;
    let outcome = JobOutcome::EpisodeSummarised(SummarisedEpisode {
        episode,
        generated: None,
        source: SummarySource::Llm,
        vector: direction(7, 0.0),
        retry: None,
        facts: vec![new_fact("Alice lives in Lyon", &said[0], 0, None)],
    });
    store
        .complete_memory_job(&job, outcome, MODEL, now())
        .await
        .unwrap();
    let all = store
        .list_facts(world.tenant, &filter(&world, "alice", true))
        .await
        .unwrap();
    assert_eq!(texts(&all), ["Alice lives in Lyon"]);
}

pub async fn facts_are_found_by_their_words_within_their_user(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    alice_moves(&*store, &world).await;

    let hits = store
        .search_facts(
            world.tenant,
            &words(&world, "alice", "where does she live, Lyon?"),
        )
        .await
        .unwrap();
    assert_eq!(
        hits.first().map(|h| h.fact.text.as_str()),
        Some("Alice lives in Lyon"),
        "the rarer word ranks first: {hits:?}"
    );
    assert!(hits.iter().all(|h| h.score > 0.0));
    assert!(
        !hits.iter().any(|h| h.fact.text.contains("tea")),
        "only facts with a word of the query"
    );
    let before: Vec<(String, f64)> = hits
        .iter()
        .map(|h| (h.fact.text.clone(), h.score))
        .collect();

    // Bob's facts, and another tenant's, with the same words: never found
    // for alice, and her scores do not move.
    let bob = fixtures::conversation(world.tenant, world.agent, "bob");
    store.create_conversation(&bob).await.unwrap();
    let bob_said = store
        .append_messages(
            world.tenant,
            fixtures::batch(
                bob.id,
                vec![fixtures::text(
                    octopus_core::message::Role::User,
                    "I live in Lyon too",
                    t(6),
                )],
            ),
        )
        .await
        .unwrap();
    let bob_world = World {
        tenant: world.tenant,
        agent: world.agent,
        conversation: bob.id,
    };
    close_learning(
        &*store,
        &bob_world,
        &bob_said,
        vec![
            new_fact("Bob lives in Lyon", &bob_said[0], 3, None),
            new_fact("Bob lives near Lyon, live music fan", &bob_said[0], 4, None),
        ],
    )
    .await;
    let globex = World::create(&*store, "globex").await;
    let globex_said = globex.say(&*store, t(6), &["Lyon Lyon live"]).await;
    close_learning(
        &*store,
        &globex,
        &globex_said,
        vec![new_fact(
            "Alice lives in Lyon, Lyon",
            &globex_said[0],
            3,
            None,
        )],
    )
    .await;
    let after = store
        .search_facts(
            world.tenant,
            &words(&world, "alice", "where does she live, Lyon?"),
        )
        .await
        .unwrap();
    let after: Vec<(String, f64)> = after
        .iter()
        .map(|h| (h.fact.text.clone(), h.score))
        .collect();
    assert_eq!(
        after, before,
        "other users' facts change nothing of alice's"
    );
    let bobs = store
        .search_facts(world.tenant, &words(&world, "bob", "Lyon"))
        .await
        .unwrap();
    assert_eq!(bobs.len(), 2);
    assert!(bobs.iter().all(|h| h.fact.user_id == "bob"));
}

pub async fn facts_leave_with_their_episode_and_their_user(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let (first, second) = alice_moves(&*store, &world).await;
    let everything = |store: Arc<dyn Store>| {
        let world = World {
            tenant: world.tenant,
            agent: world.agent,
            conversation: world.conversation,
        };
        async move {
            let listed = store
                .list_facts(world.tenant, &filter(&world, "alice", true))
                .await
                .unwrap();
            let found = store
                .search_facts(world.tenant, &words(&world, "alice", "Alice lives tea"))
                .await
                .unwrap();
            let mut by_meaning = crate::memory::query(&world, "alice", direction(1, 0.0));
            by_meaning.kinds = vec![MemoryKind::Fact];
            let vectors = store
                .search_memory(world.tenant, &by_meaning)
                .await
                .unwrap();
            (listed.len(), found.len(), vectors.len())
        }
    };
    assert_eq!(everything(Arc::clone(&store)).await, (3, 3, 3));

    // A deleted episode's facts leave every read, and come back with it.
    let episode = second[0].episode_id;
    store
        .soft_delete_episode(world.tenant, episode, now())
        .await
        .unwrap();
    assert_eq!(everything(Arc::clone(&store)).await, (1, 1, 1));
    store
        .restore_episode(world.tenant, episode, now())
        .await
        .unwrap();
    assert_eq!(everything(Arc::clone(&store)).await, (3, 3, 3));

    // Purged, they are gone, and the fact one of them replaced holds again.
    store
        .soft_delete_episode(world.tenant, episode, now())
        .await
        .unwrap();
    store.purge_episode(world.tenant, episode).await.unwrap();
    let left = store
        .list_facts(world.tenant, &filter(&world, "alice", true))
        .await
        .unwrap();
    assert_eq!(texts(&left), ["Alice lives in Lyon"]);
    assert!(left[0].is_current() && left[0].valid_to.is_none());
    assert_eq!(everything(Arc::clone(&store)).await, (1, 1, 1));

    // Forgetting the user erases the rest, counted.
    let receipt = store
        .forget_user(
            world.tenant,
            &ForgetUser {
                user_id: "alice".into(),
                agent_id: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(receipt.relational.facts, 1);
    assert_eq!(receipt.vectors.fact_vectors, 1);
    assert_eq!(everything(Arc::clone(&store)).await, (0, 0, 0));
    assert!(store.get_facts(world.tenant, &[]).await.unwrap().is_empty());
    let _ = first;
}

pub async fn a_dump_carries_facts_and_their_vectors_are_made_again(backend: &impl Backend) {
    let source = backend.open().await;
    let world = World::create(&*source, "acme").await;
    alice_moves(&*source, &world).await;
    let before = source
        .list_facts(world.tenant, &filter(&world, "alice", true))
        .await
        .unwrap();

    let records = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&records);
    source
        .export_records(
            world.tenant,
            None,
            Box::new(move |record| {
                into.lock().unwrap().push(record);
                true
            }),
        )
        .await
        .unwrap();
    let records = std::mem::take(&mut *records.lock().unwrap());
    let facts: Vec<&Fact> = records
        .iter()
        .filter_map(|r| match r {
            DumpRecord::Fact(f) => Some(f),
            _ => None,
        })
        .collect();
    assert_eq!(facts.len(), 3, "the replaced fact too");
    // Each fact comes after its episode.
    for fact in &facts {
        let episode_at = records
            .iter()
            .position(|r| matches!(r, DumpRecord::Episode(e) if Some(e.id) == fact.episode_id))
            .unwrap();
        let fact_at = records
            .iter()
            .position(|r| matches!(r, DumpRecord::Fact(f) if f.id == fact.id))
            .unwrap();
        assert!(episode_at < fact_at);
    }

    let target = backend.open_empty().await;
    let mut dump = vec![Ok(DumpRecord::Header(DumpHeader::new(
        world.tenant,
        None,
        now(),
    )))];
    dump.extend(records.iter().cloned().map(Ok));
    dump.push(Ok(DumpRecord::End(DumpEnd {
        records: records.len() as u64 + 1,
    })));
    let counts = target
        .import_records(world.tenant, Box::new(dump.into_iter()), now())
        .await
        .unwrap();
    assert_eq!(counts.facts, 3);
    let after = target
        .list_facts(world.tenant, &filter(&world, "alice", true))
        .await
        .unwrap();
    assert_eq!(
        after, before,
        "every field, the periods and replacements kept"
    );

    // Their vectors are queued as work and made again.
    let jobs = target.claim_memory_jobs(100, now(), LEASE).await.unwrap();
    let mut embedded = 0;
    for job in &jobs {
        let outcome = match &job.work {
            MemoryWork::EmbedFact(fact) => {
                embedded += 1;
                let axis = before.iter().position(|f| f.id == fact.id).unwrap();
                JobOutcome::FactEmbedded {
                    fact: fact.id,
                    vector: direction(axis, 0.0),
                }
            }
            _ => JobOutcome::Skipped,
        };
        target
            .complete_memory_job(job, outcome, MODEL, now())
            .await
            .unwrap();
    }
    assert_eq!(embedded, 3);
    let mut by_meaning = crate::memory::query(&world, "alice", direction(1, 0.0));
    by_meaning.kinds = vec![MemoryKind::Fact];
    let hits = target
        .search_memory(world.tenant, &by_meaning)
        .await
        .unwrap();
    assert_eq!(hits.len(), 3);
    assert_eq!(hits[0].fact_id, Some(before[1].id));
}

pub async fn facts_carry_their_category_and_are_listed_by_it(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let said = world
        .say(&*store, t(1), &["I eat no meat", "I fly to Oslo in May"])
        .await;
    let filed = |text: &str, from: &Message, axis: usize, category: Option<&str>| NewFact {
        category: category.map(str::to_owned),
        ..new_fact(text, from, axis, None)
    };
    close_learning(
        &*store,
        &world,
        &said,
        vec![
            filed("Alice is vegetarian", &said[0], 0, Some("diet")),
            filed("Alice flies to Oslo in May", &said[1], 1, Some("travel")),
            filed("Alice speaks quickly", &said[1], 2, None),
        ],
    )
    .await;
    let mut by_category = filter(&world, "alice", false);
    by_category.categories = vec!["diet".into()];
    let diet = store.list_facts(world.tenant, &by_category).await.unwrap();
    assert_eq!(texts(&diet), ["Alice is vegetarian"]);
    assert_eq!(diet[0].category.as_deref(), Some("diet"));
    by_category.categories = vec!["travel".into(), "diet".into()];
    assert_eq!(
        store
            .list_facts(world.tenant, &by_category)
            .await
            .unwrap()
            .len(),
        2
    );
    by_category.categories = vec!["work".into()];
    assert!(
        store
            .list_facts(world.tenant, &by_category)
            .await
            .unwrap()
            .is_empty()
    );
    let all = store
        .list_facts(world.tenant, &filter(&world, "alice", false))
        .await
        .unwrap();
    let mut categories: Vec<Option<&str>> = all.iter().map(|f| f.category.as_deref()).collect();
    categories.sort();
    assert_eq!(categories, [None, Some("diet"), Some("travel")]);
}

/// The learning jobs claimed now, of `episode`.
async fn learning_jobs(
    store: &dyn Store,
    episode: EpisodeId,
) -> Vec<octopus_core::memory_jobs::MemoryJob> {
    let jobs = store.claim_memory_jobs(100, now(), LEASE).await.unwrap();
    jobs.into_iter()
        .filter(|job| matches!(&job.work, MemoryWork::LearnFacts(e) if e.episode.id == episode))
        .collect()
}

/// Alice's facts, and how many messages of `episode` they were learned from.
async fn learned_so_far(
    store: &dyn Store,
    world: &World,
    episode: EpisodeId,
) -> (Vec<String>, u32) {
    let facts = store
        .list_facts(world.tenant, &filter(world, "alice", true))
        .await
        .unwrap();
    let episode = store.get_episode(world.tenant, episode).await.unwrap();
    (
        facts.into_iter().map(|f| f.text).collect(),
        episode.facts_learned_through,
    )
}

/// Appends `records` with a learning due every two user messages.
async fn say_learning(
    store: &dyn Store,
    world: &World,
    records: Vec<octopus_core::appending::MessageRecord>,
) -> Vec<Message> {
    let mut batch = fixtures::batch(world.conversation, records);
    batch.learn_every = 2;
    store.append_messages(world.tenant, batch).await.unwrap()
}

pub async fn facts_are_learned_during_a_session_once_per_window(backend: &impl Backend) {
    use octopus_core::memory_jobs::LearnedFacts;
    use octopus_core::message::Role;
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let user = |text: &str| fixtures::text(Role::User, text, t(1));
    let first = say_learning(
        &*store,
        &world,
        vec![
            user("I am vegetarian"),
            fixtures::text(Role::Assistant, "Noted, no meat.", t(1)),
        ],
    )
    .await;
    let episode = first[0].episode_id;
    assert!(
        learning_jobs(&*store, episode).await.is_empty(),
        "one user message of two"
    );
    let second = say_learning(&*store, &world, vec![user("I live in Lyon")]).await;
    let jobs = learning_jobs(&*store, episode).await;
    assert_eq!(jobs.len(), 1, "the second user message queues one learning");
    let MemoryWork::LearnFacts(window) = &jobs[0].work else {
        unreachable!()
    };
    assert_eq!(window.episode.facts_learned_through, 0);
    assert_eq!(window.messages.len(), 3);
    let learned = |from, through, facts| {
        JobOutcome::FactsLearned(LearnedFacts {
            episode,
            from,
            through,
            facts,
        })
    };
    let vegetarian = || vec![new_fact("Alice is vegetarian", &first[0], 0, None)];
    assert!(
        store
            .complete_memory_job(&jobs[0], learned(0, 3, vegetarian()), MODEL, now())
            .await
            .unwrap()
    );
    assert_eq!(
        learned_so_far(&*store, &world, episode).await,
        (vec!["Alice is vegetarian".to_owned()], 3)
    );
    // Searchable at once: a related fact for the next decision.
    let hits = store
        .search_facts(world.tenant, &words(&world, "alice", "vegetarian"))
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);

    // Two more user messages queue the next window. A job that read the
    // old window (from 0) is refused whole, and nothing is stored twice;
    // from where the last learning ended, it is stored.
    say_learning(
        &*store,
        &world,
        vec![user("My sister is Eve"), user("She lives in Oslo")],
    )
    .await;
    let jobs = learning_jobs(&*store, episode).await;
    assert_eq!(jobs.len(), 1);
    let stale = store
        .complete_memory_job(&jobs[0], learned(0, 5, vegetarian()), MODEL, now())
        .await;
    assert!(
        matches!(stale, Err(octopus_core::Error::Conflict { .. })),
        "{stale:?}"
    );
    assert_eq!(
        learned_so_far(&*store, &world, episode).await,
        (vec!["Alice is vegetarian".to_owned()], 3)
    );
    let eve = vec![new_fact(
        "Alice's sister Eve lives in Oslo",
        &second[0],
        1,
        None,
    )];
    assert!(
        store
            .complete_memory_job(&jobs[0], learned(3, 5, eve), MODEL, now())
            .await
            .unwrap()
    );
    let (texts, through) = learned_so_far(&*store, &world, episode).await;
    assert_eq!(through, 5);
    assert_eq!(texts.len(), 2, "{texts:?}");

    // Every message was learned from: the close's key facts add nothing.
    close_learning(&*store, &world, &first, vegetarian()).await;
    let (texts, through) = learned_so_far(&*store, &world, episode).await;
    assert_eq!((texts.len(), through), (2, 5), "{texts:?}");
    let closed = store.get_episode(world.tenant, episode).await.unwrap();
    assert_eq!(
        closed.summary.as_deref(),
        Some("talked"),
        "the summary is stored"
    );
}

pub async fn a_close_learns_from_what_came_after_the_last_learning(backend: &impl Backend) {
    use octopus_core::message::Role;
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let user = |text: &str| fixtures::text(Role::User, text, t(1));
    let said = say_learning(
        &*store,
        &world,
        vec![user("I am vegetarian"), user("I live in Lyon")],
    )
    .await;
    let episode = said[0].episode_id;
    let jobs = learning_jobs(&*store, episode).await;
    let outcome = JobOutcome::FactsLearned(octopus_core::memory_jobs::LearnedFacts {
        episode,
        from: 0,
        through: 2,
        facts: vec![new_fact("Alice is vegetarian", &said[0], 0, None)],
    });
    store
        .complete_memory_job(&jobs[0], outcome, MODEL, now())
        .await
        .unwrap();
    let more = say_learning(&*store, &world, vec![user("I drink green tea")]).await;
    close_learning(
        &*store,
        &world,
        &said,
        vec![new_fact("Alice likes green tea", &more[0], 2, None)],
    )
    .await;
    let all = store
        .list_facts(world.tenant, &filter(&world, "alice", true))
        .await
        .unwrap();
    assert_eq!(
        texts(&all),
        ["Alice likes green tea", "Alice is vegetarian"]
    );
    let closed = store.get_episode(world.tenant, episode).await.unwrap();
    assert_eq!(closed.facts_learned_through, 3);
}
