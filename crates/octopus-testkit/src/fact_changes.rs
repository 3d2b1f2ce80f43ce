//! The contract of a person's changes to one fact, rule by rule: a
//! correction is a new version that keeps the old one; a deletion takes
//! every version out of every store, resumably, and leaves a history with
//! no word of the fact; histories go with their episode and their user;
//! another tenant's fact answers as a missing one.

use octopus_core::fact::{Fact, FactAction, FactCorrection, FactDeletion, FactSource};
use octopus_core::forget::ForgetUser;
use octopus_core::memory_jobs::MemoryWork;
use octopus_core::recall::MemoryKind;
use octopus_core::store::Store;
use octopus_core::{DomainCode, Error, FactId, now};

use crate::Backend;
use crate::facts::{alice_moves, filter, texts, words};
use crate::fixtures::World;
use crate::knowledge::direction;
use crate::lifecycle::watched;

const LEASE: std::time::Duration = std::time::Duration::from_secs(60);

pub(crate) fn correction(of: FactId, text: &str) -> FactCorrection {
    let at = now();
    FactCorrection {
        fact_id: of,
        new_id: FactId::new(),
        text: text.into(),
        valid_from: at,
        changed_by: "support-desk".into(),
        reason: Some("she told us".into()),
        at,
    }
}

pub(crate) fn deletion(of: FactId) -> FactDeletion {
    FactDeletion {
        fact_id: of,
        changed_by: "support-desk".into(),
        reason: Some("asked to be left out".into()),
        at: now(),
    }
}

async fn current(store: &dyn Store, world: &World) -> Vec<Fact> {
    store
        .list_facts(world.tenant, &filter(world, "alice", false))
        .await
        .unwrap()
}

async fn every_version(store: &dyn Store, world: &World) -> Vec<Fact> {
    store
        .list_facts(world.tenant, &filter(world, "alice", true))
        .await
        .unwrap()
}

fn find<'a>(facts: &'a [Fact], text: &str) -> &'a Fact {
    facts
        .iter()
        .find(|f| f.text == text)
        .unwrap_or_else(|| panic!("no fact {text:?} among {:?}", texts(facts)))
}

fn is_not_found(error: &Error) -> bool {
    matches!(
        error,
        Error::NotFound {
            kind: octopus_core::ObjectKind::Fact,
            ..
        }
    )
}

pub async fn a_correction_is_a_new_version_that_keeps_the_old_one(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    alice_moves(&*store, &world).await;
    let paris = find(&current(&*store, &world).await, "Alice lives in Paris").clone();

    let fixed = correction(paris.id, "Alice lives in Marseille");
    let marseille = store.correct_fact(world.tenant, &fixed).await.unwrap();
    assert_eq!(marseille.id, fixed.new_id);
    assert_eq!(
        (marseille.source, marseille.changed_by.as_str()),
        (FactSource::Manual, "support-desk")
    );
    assert_eq!(
        (marseille.agent_id, marseille.user_id.as_str()),
        (world.agent, "alice")
    );
    assert_eq!(
        marseille.episode_id, paris.episode_id,
        "it lives and goes with the corrected version's episode"
    );
    assert!(marseille.message_ids.is_empty(), "no message said it");
    assert_eq!(
        texts(&current(&*store, &world).await),
        ["Alice lives in Marseille", "Alice likes green tea"]
    );
    let all = every_version(&*store, &world).await;
    let old = find(&all, "Alice lives in Paris");
    assert_eq!(old.superseded_by, Some(marseille.id), "kept, replaced");
    assert_eq!(old.valid_to, Some(fixed.valid_from));
    assert_eq!(
        (old.source, old.changed_by.as_str()),
        (FactSource::Learned, "model")
    );

    // Found by its words at once; its vector is the memory worker's job.
    let hits = store
        .search_facts(world.tenant, &words(&world, "alice", "Marseille"))
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].fact.id, marseille.id);
    let jobs = store.claim_memory_jobs(100, now(), LEASE).await.unwrap();
    assert!(
        jobs.iter()
            .any(|job| matches!(&job.work, MemoryWork::EmbedFact(f) if f.id == marseille.id)),
        "the new version's embedding is queued"
    );

    // Only the version that holds can be corrected.
    let again = store
        .correct_fact(world.tenant, &correction(paris.id, "Alice lives in Nice"))
        .await
        .unwrap_err();
    assert!(
        matches!(
            again,
            Error::Conflict {
                code: DomainCode::FactReplaced,
                ..
            }
        ),
        "{again:?}"
    );

    // The history, by any version's id: the model's two, the person's one.
    let history = store.fact_history(world.tenant, paris.id).await.unwrap();
    let seen: Vec<(FactAction, Option<&str>, &str)> = history
        .iter()
        .map(|e| (e.action, e.text.as_deref(), e.changed_by.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (FactAction::Learned, Some("Alice lives in Lyon"), "model"),
            (FactAction::Learned, Some("Alice lives in Paris"), "model"),
            (
                FactAction::Corrected,
                Some("Alice lives in Marseille"),
                "support-desk"
            ),
        ]
    );
    assert_eq!(history[2].reason.as_deref(), Some("she told us"));
    assert_eq!(
        store
            .fact_history(world.tenant, marseille.id)
            .await
            .unwrap(),
        history
    );

    // Text a person writes is held to its bounds; nothing changes.
    let blank = store
        .correct_fact(world.tenant, &correction(marseille.id, "  "))
        .await
        .unwrap_err();
    assert!(
        matches!(&blank, Error::Invalid { field, .. } if field == "text"),
        "{blank:?}"
    );
    assert_eq!(every_version(&*store, &world).await.len(), 4);

    // So is its date: not in the future, not before 1900; and a correction
    // starting before the version it corrects became true (that version
    // would hold for no time) conflicts with it.
    let day = chrono::Duration::days(1);
    let early = FactCorrection {
        valid_from: marseille.valid_from - day,
        ..correction(marseille.id, "Alice lives in Nice")
    };
    let refused = store.correct_fact(world.tenant, &early).await.unwrap_err();
    assert!(
        matches!(
            refused,
            Error::Conflict {
                code: DomainCode::CorrectionBeforeFact,
                ..
            }
        ),
        "{refused:?}"
    );
    for valid_from in [now() + day, "1899-12-31T00:00:00Z".parse().unwrap()] {
        let dated = FactCorrection {
            valid_from,
            ..correction(marseille.id, "Alice lives in Nice")
        };
        let refused = store.correct_fact(world.tenant, &dated).await.unwrap_err();
        assert!(
            matches!(&refused, Error::Invalid { field, .. } if field == "valid_from"),
            "{valid_from}: {refused:?}"
        );
    }
    assert_eq!(every_version(&*store, &world).await.len(), 4);
    assert_eq!(
        texts(&current(&*store, &world).await),
        ["Alice lives in Marseille", "Alice likes green tea"]
    );
}

pub async fn another_tenants_fact_is_not_found_for_any_change(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    alice_moves(&*store, &world).await;
    let paris = find(&current(&*store, &world).await, "Alice lives in Paris").clone();
    let other = World::create(&*store, "globex").await;
    for error in [
        store
            .correct_fact(other.tenant, &correction(paris.id, "Alice lives in Oslo"))
            .await
            .unwrap_err(),
        store
            .delete_fact(other.tenant, &deletion(paris.id))
            .await
            .unwrap_err(),
        store
            .fact_history(other.tenant, paris.id)
            .await
            .unwrap_err(),
        store
            .fact_history(world.tenant, FactId::new())
            .await
            .unwrap_err(),
        store
            .delete_fact(world.tenant, &deletion(FactId::new()))
            .await
            .unwrap_err(),
    ] {
        assert!(is_not_found(&error), "{error:?}");
    }
    assert_eq!(
        every_version(&*store, &world).await.len(),
        3,
        "nothing changed"
    );
}

pub async fn a_deleted_fact_leaves_every_store_and_its_history_keeps_no_word(
    backend: &impl Backend,
) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let (_, second) = alice_moves(&*store, &world).await;
    let all = every_version(&*store, &world).await;
    let lyon = find(&all, "Alice lives in Lyon").clone();
    let paris = find(&all, "Alice lives in Paris").clone();

    // Any version names the fact: Lyon's deletes Paris too.
    let receipt = store
        .delete_fact(world.tenant, &deletion(lyon.id))
        .await
        .unwrap();
    assert_eq!(receipt.fact_id, lyon.id, "named by its first version");
    assert_eq!((receipt.versions, receipt.vectors), (2, 2));
    assert!(receipt.compacted);
    assert_eq!(
        texts(&every_version(&*store, &world).await),
        ["Alice likes green tea"]
    );
    for word in ["Lyon", "Paris"] {
        let hits = store
            .search_facts(world.tenant, &words(&world, "alice", word))
            .await
            .unwrap();
        assert!(hits.is_empty(), "{word}: {hits:?}");
    }
    let mut by_meaning = crate::memory::query(&world, "alice", direction(0, 0.0));
    by_meaning.kinds = vec![MemoryKind::Fact];
    let left: Vec<Option<FactId>> = store
        .search_memory(world.tenant, &by_meaning)
        .await
        .unwrap()
        .into_iter()
        .map(|hit| hit.fact_id)
        .collect();
    assert_eq!(left.len(), 1, "only the tea's vector is left: {left:?}");
    assert!(!left.contains(&Some(lyon.id)) && !left.contains(&Some(paris.id)));
    let episode = store
        .get_episode(world.tenant, second[0].episode_id)
        .await
        .unwrap();
    assert_eq!(
        episode.key_facts,
        ["Alice likes green tea"],
        "the model's words for it leave the episode's key facts"
    );

    // The history keeps who deleted it and when, and none of its words.
    let history = store.fact_history(world.tenant, paris.id).await.unwrap();
    let actions: Vec<FactAction> = history.iter().map(|e| e.action).collect();
    assert_eq!(
        actions,
        [
            FactAction::Learned,
            FactAction::Learned,
            FactAction::Deleted
        ]
    );
    assert!(history.iter().all(|e| e.text.is_none()), "{history:?}");
    let deleted = &history[2];
    assert_eq!(
        (deleted.fact_id, deleted.changed_by.as_str()),
        (paris.id, "support-desk"),
        "the version that held, and the key's name"
    );

    // Gone is gone: a second deletion, or a correction, finds nothing.
    let again = store
        .delete_fact(world.tenant, &deletion(paris.id))
        .await
        .unwrap_err();
    assert!(is_not_found(&again), "{again:?}");
    let fix = store
        .correct_fact(world.tenant, &correction(paris.id, "Alice lives in Nice"))
        .await
        .unwrap_err();
    assert!(is_not_found(&fix), "{fix:?}");
}

/// A deletion whose rows' transaction committed but whose vector erasure
/// failed (as a crash there would leave it) is finished by the next
/// deletion, or at start, as an interrupted forget is.
pub async fn an_interrupted_fact_deletion_is_finished_later(backend: &impl Backend) {
    let (store, failing) = watched(backend, true).await;
    let world = World::create(&*store, "acme").await;
    alice_moves(&*store, &world).await;
    let tea = find(&current(&*store, &world).await, "Alice likes green tea").clone();
    assert!(
        store
            .delete_fact(world.tenant, &deletion(tea.id))
            .await
            .is_err(),
        "the erasure failed after the rows' transaction"
    );
    assert!(failing.erased.lock().unwrap().is_empty());
    assert_eq!(
        texts(&every_version(&*store, &world).await),
        ["Alice lives in Paris", "Alice lives in Lyon"],
        "the rows are gone"
    );
    // As at a restart: one store on the files at a time, as a data
    // directory's lock keeps it for servers (the first one's background
    // checkpoints would otherwise contend with the second's writes).
    drop(store);
    let (store, watch) = watched(backend, false).await;
    assert_eq!(store.finish_erasures().await.unwrap(), 1);
    assert_eq!(watch.erased.lock().unwrap().len(), 1, "the tea's vector");
    assert_eq!(store.finish_erasures().await.unwrap(), 0, "none left");
}

pub async fn a_facts_history_goes_with_its_episode_and_its_user(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let (first, _) = alice_moves(&*store, &world).await;
    let all = every_version(&*store, &world).await;
    let tea = find(&all, "Alice likes green tea").clone();
    let lyon = find(&all, "Alice lives in Lyon").clone();
    store
        .delete_fact(world.tenant, &deletion(tea.id))
        .await
        .unwrap();
    assert!(store.fact_history(world.tenant, tea.id).await.is_ok());

    // Purging the first episode takes Lyon's history entry with it.
    store
        .soft_delete_episode(world.tenant, first[0].episode_id, now())
        .await
        .unwrap();
    store
        .purge_episode(world.tenant, first[0].episode_id)
        .await
        .unwrap();
    let lyon_history = store
        .fact_history(world.tenant, lyon.id)
        .await
        .map(|h| h.len());
    assert!(
        matches!(lyon_history, Err(ref e) if is_not_found(e)),
        "Lyon's version was the episode's: {lyon_history:?}"
    );

    // Forgetting the user takes every history of theirs, deleted facts' too.
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
    assert!(receipt.relational.fact_history >= 2, "{receipt:?}");
    let error = store.fact_history(world.tenant, tea.id).await.unwrap_err();
    assert!(is_not_found(&error), "{error:?}");
}

/// A fact a person added about `user`, with `text`.
pub(crate) fn addition(world: &World, user: &str, text: &str) -> octopus_core::fact::FactAddition {
    let at = now();
    octopus_core::fact::FactAddition {
        fact: Fact {
            id: FactId::new(),
            tenant_id: world.tenant,
            agent_id: world.agent,
            user_id: user.into(),
            episode_id: None,
            message_ids: Vec::new(),
            text: text.into(),
            valid_from: at,
            valid_to: None,
            superseded_by: None,
            created_at: at,
            source: FactSource::Manual,
            changed_by: "support-desk".into(),
            category: None,
            key: None,
        },
        reason: Some("she told us on the phone".into()),
    }
}

pub async fn a_fact_added_by_hand_lives_as_a_learned_one_and_leaves_with_its_user(
    backend: &impl Backend,
) {
    use octopus_core::memory_jobs::JobOutcome;
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let added = store
        .add_fact(
            world.tenant,
            &addition(&world, "alice", "Alice is allergic to peanuts"),
        )
        .await
        .unwrap();
    assert_eq!(added.episode_id, None);
    assert_eq!(
        texts(&current(&*store, &world).await),
        ["Alice is allergic to peanuts"]
    );
    let hits = store
        .search_facts(world.tenant, &words(&world, "alice", "peanuts"))
        .await
        .unwrap();
    assert_eq!(hits.len(), 1, "found by its words at once");
    let history = store.fact_history(world.tenant, added.id).await.unwrap();
    assert_eq!(
        history
            .iter()
            .map(|e| (e.action, e.changed_by.as_str(), e.reason.as_deref()))
            .collect::<Vec<_>>(),
        [(
            FactAction::Added,
            "support-desk",
            Some("she told us on the phone")
        )]
    );
    // Found by meaning once the memory worker embedded it.
    let jobs = store.claim_memory_jobs(100, now(), LEASE).await.unwrap();
    let job = jobs
        .iter()
        .find(|job| matches!(&job.work, MemoryWork::EmbedFact(f) if f.id == added.id))
        .expect("its embedding is queued");
    let embedded = JobOutcome::FactEmbedded {
        fact: added.id,
        vector: direction(3, 0.0),
    };
    store
        .complete_memory_job(job, embedded, "test-model", now())
        .await
        .unwrap();
    let mut near = crate::memory::query(&world, "alice", direction(3, 0.0));
    near.kinds = vec![MemoryKind::Fact];
    let found = store.search_memory(world.tenant, &near).await.unwrap();
    assert_eq!(
        found.iter().map(|hit| hit.fact_id).collect::<Vec<_>>(),
        [Some(added.id)]
    );
    // Corrected: the new version has no episode either.
    let fixed = store
        .correct_fact(
            world.tenant,
            &correction(added.id, "Alice is allergic to peanuts and cashews"),
        )
        .await
        .unwrap();
    assert_eq!(fixed.episode_id, None);

    // Forgotten with its user: rows, words and vector.
    store
        .add_fact(world.tenant, &addition(&world, "bob", "Bob is left-handed"))
        .await
        .unwrap();
    store
        .forget_user(
            world.tenant,
            &ForgetUser {
                user_id: "alice".into(),
                agent_id: None,
            },
        )
        .await
        .unwrap();
    assert!(every_version(&*store, &world).await.is_empty());
    assert!(
        store
            .search_memory(world.tenant, &near)
            .await
            .unwrap()
            .is_empty()
    );
    let gone = store
        .fact_history(world.tenant, added.id)
        .await
        .unwrap_err();
    assert!(is_not_found(&gone), "{gone:?}");
    let bob = store
        .list_facts(world.tenant, &filter(&world, "bob", false))
        .await
        .unwrap();
    assert_eq!(texts(&bob), ["Bob is left-handed"], "another user's stays");
}

pub async fn a_fact_added_by_hand_is_deleted_from_every_store(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let added = store
        .add_fact(
            world.tenant,
            &addition(&world, "alice", "Alice speaks Basque"),
        )
        .await
        .unwrap();
    let other = World::create(&*store, "globex").await;
    let refused = store
        .delete_fact(other.tenant, &deletion(added.id))
        .await
        .unwrap_err();
    assert!(is_not_found(&refused), "{refused:?}");
    let receipt = store
        .delete_fact(world.tenant, &deletion(added.id))
        .await
        .unwrap();
    assert_eq!(receipt.versions, 1);
    assert!(every_version(&*store, &world).await.is_empty());
    let hits = store
        .search_facts(world.tenant, &words(&world, "alice", "Basque"))
        .await
        .unwrap();
    assert!(hits.is_empty());
    let jobs = store.claim_memory_jobs(100, now(), LEASE).await.unwrap();
    assert!(
        !jobs
            .iter()
            .any(|job| matches!(&job.work, MemoryWork::EmbedFact(f) if f.id == added.id)),
        "its queued embedding went with it"
    );
}

pub async fn a_keyed_fact_is_read_by_its_key_and_holds_it_alone(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let keyed = |user: &str, text: &str, category: Option<&str>| {
        let mut added = addition(&world, user, text);
        added.fact.key = Some("diet".into());
        added.fact.category = category.map(str::to_owned);
        added
    };
    let by_key = |include_replaced: bool| {
        let mut wanted = filter(&world, "alice", include_replaced);
        wanted.key = Some("diet".into());
        wanted
    };
    let added = store
        .add_fact(world.tenant, &keyed("alice", "Alice is vegetarian", None))
        .await
        .unwrap();
    assert_eq!(added.key.as_deref(), Some("diet"));
    store
        .add_fact(world.tenant, &addition(&world, "alice", "Alice has a cat"))
        .await
        .unwrap();
    let found = store
        .list_facts(world.tenant, &by_key(false))
        .await
        .unwrap();
    assert_eq!(texts(&found), ["Alice is vegetarian"]);
    assert_eq!(found[0].key.as_deref(), Some("diet"));

    // One fact that holds per user, category and key: a second is refused,
    // and nothing of it is stored.
    let taken = store
        .add_fact(world.tenant, &keyed("alice", "Alice is vegan", None))
        .await
        .unwrap_err();
    assert!(
        matches!(
            taken,
            Error::Conflict {
                code: DomainCode::FactKeyTaken,
                ..
            }
        ),
        "{taken:?}"
    );
    assert_eq!(current(&*store, &world).await.len(), 2);
    // Another category, another user: the key is theirs to use.
    store
        .add_fact(
            world.tenant,
            &keyed("alice", "Alice eats at noon", Some("habits")),
        )
        .await
        .unwrap();
    store
        .add_fact(world.tenant, &keyed("bob", "Bob is vegan", None))
        .await
        .unwrap();

    // A correction keeps the key: the new version is the one read by it,
    // the replaced one with it when asked, and the key stays taken.
    let fixed = store
        .correct_fact(world.tenant, &correction(added.id, "Alice is pescatarian"))
        .await
        .unwrap();
    assert_eq!(fixed.key.as_deref(), Some("diet"));
    let now_held = store
        .list_facts(world.tenant, &by_key(false))
        .await
        .unwrap();
    let mut held = texts(&now_held);
    held.sort();
    assert_eq!(held, ["Alice eats at noon", "Alice is pescatarian"]);
    let every = store.list_facts(world.tenant, &by_key(true)).await.unwrap();
    assert_eq!(every.len(), 3);
    assert!(
        store
            .add_fact(world.tenant, &keyed("alice", "Alice is vegan", None))
            .await
            .is_err()
    );

    // Deleted, the key is free again; another tenant never reads it.
    store
        .delete_fact(world.tenant, &deletion(fixed.id))
        .await
        .unwrap();
    store
        .add_fact(world.tenant, &keyed("alice", "Alice is vegan", None))
        .await
        .unwrap();
    let other = World::create(&*store, "globex").await;
    let mut theirs = by_key(true);
    theirs.agent_id = other.agent;
    assert!(
        store
            .list_facts(other.tenant, &theirs)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .list_facts(other.tenant, &by_key(true))
            .await
            .unwrap()
            .is_empty()
    );
}
