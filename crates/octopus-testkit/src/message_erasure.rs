//! The contract of erasing one message: its words leave every store (the
//! row, the full-text index, its vector), the versions of facts learned from
//! it go (the version each replaced holds again), its episode's summary is
//! dropped and written again, and another tenant's message answers as a
//! missing one; an erasure stopped after its rows' transaction is finished
//! later.

use std::time::Duration;

use octopus_core::fact::FactAction;
use octopus_core::memory_jobs::{JobOutcome, MemoryWork};
use octopus_core::message::{Message, MessageErasure};
use octopus_core::recall::MemoryKind;
use octopus_core::store::Store;
use octopus_core::{Error, MessageId, now};

use crate::Backend;
use crate::facts::{alice_moves, filter, texts, words};
use crate::fixtures::{World, search};
use crate::knowledge::direction;
use crate::lifecycle::watched;

fn erasure(of: MessageId) -> MessageErasure {
    MessageErasure {
        message_id: of,
        changed_by: "privacy-desk".into(),
        reason: Some("she asked".into()),
        at: now(),
    }
}

/// Embeds every message still queued (the summaries' claims left them to
/// their lease), the `n`th along axis `10 + n`.
async fn embed_messages(store: &dyn Store, said: &[&Message]) {
    let later = now() + chrono::Duration::minutes(5);
    let jobs = store
        .claim_memory_jobs(100, later, Duration::from_secs(60))
        .await
        .unwrap();
    for job in &jobs {
        let outcome = match &job.work {
            MemoryWork::EmbedMessage(message) => {
                let n = said.iter().position(|m| m.id == message.id).unwrap();
                JobOutcome::MessageEmbedded {
                    message: message.id,
                    vector: direction(10 + n, 0.0),
                }
            }
            _ => JobOutcome::Skipped,
        };
        store
            .complete_memory_job(job, outcome, "test-model", later)
            .await
            .unwrap();
    }
}

pub async fn an_erased_message_leaves_every_store_with_the_facts_learned_from_it(
    backend: &impl Backend,
) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let (first, second) = alice_moves(&*store, &world).await;
    let said = [&first[0], &second[0], &second[1]];
    embed_messages(&*store, &said).await;
    let paris = &second[0];
    let episode = paris.episode_id;
    let before = store.get_episode(world.tenant, episode).await.unwrap();
    let every = store
        .list_facts(world.tenant, &filter(&world, "alice", true))
        .await
        .unwrap();
    let paris_fact = every
        .iter()
        .find(|f| f.text == "Alice lives in Paris")
        .unwrap()
        .id;
    assert!(before.summary.is_some() && before.facts_learned_through > 0);

    // Another tenant's key finds nothing, and nothing changes.
    let other = World::create(&*store, "globex").await;
    let refused = store
        .erase_message(other.tenant, &erasure(paris.id))
        .await
        .unwrap_err();
    assert!(matches!(refused, Error::NotFound { .. }), "{refused:?}");

    let receipt = store
        .erase_message(world.tenant, &erasure(paris.id))
        .await
        .unwrap();
    assert_eq!(
        (receipt.message_id, receipt.episode_id),
        (paris.id, episode)
    );
    assert_eq!(receipt.facts_deleted, 1, "Paris, learned from it");
    assert!(receipt.summary_dropped && receipt.compacted);
    // Paris's fact, the message's own, the episode's summary.
    assert_eq!(receipt.vectors, 3);

    // The row and its full-text entry.
    let left = store
        .get_episode_with_messages(world.tenant, episode)
        .await
        .unwrap();
    let ids: Vec<MessageId> = left.messages.iter().map(|m| m.id).collect();
    assert_eq!(ids, [second[1].id]);
    let mut found = search("Paris");
    found.agent_id = Some(world.agent);
    assert!(
        store
            .search_messages(world.tenant, &found)
            .await
            .unwrap()
            .is_empty()
    );
    // Its vector, and its facts' with theirs.
    let mut near = crate::memory::query(&world, "alice", direction(11, 0.0));
    near.kinds = vec![MemoryKind::Message];
    let hits = store.search_memory(world.tenant, &near).await.unwrap();
    assert!(
        hits.iter().all(|hit| hit.message_id != Some(paris.id)),
        "{hits:?}"
    );
    // Lyon, which Paris replaced, holds again: as if Paris was never said.
    let facts = store
        .list_facts(world.tenant, &filter(&world, "alice", true))
        .await
        .unwrap();
    assert_eq!(
        texts(&facts),
        ["Alice likes green tea", "Alice lives in Lyon"]
    );
    assert!(facts.iter().all(|f| f.is_current() && f.valid_to.is_none()));
    let paris_words = store
        .search_facts(world.tenant, &words(&world, "alice", "Paris"))
        .await
        .unwrap();
    assert!(paris_words.is_empty(), "{paris_words:?}");
    let lyon_words = store
        .search_facts(world.tenant, &words(&world, "alice", "Lyon"))
        .await
        .unwrap();
    assert_eq!(lyon_words.len(), 1);

    // The summary may have held its words: dropped, and asked for again;
    // the facts are learned again from the messages left.
    let after = store.get_episode(world.tenant, episode).await.unwrap();
    assert_eq!(after.summary, None);
    assert!(after.key_facts.is_empty());
    assert_eq!(after.facts_learned_through, 0);
    let jobs = store
        .claim_memory_jobs(100, now(), Duration::from_secs(60))
        .await
        .unwrap();
    assert!(
        jobs.iter().any(
            |job| matches!(&job.work, MemoryWork::SummariseEpisode(e) if e.episode.id == episode
                && e.messages.len() == 1)
        ),
        "{jobs:?}"
    );

    // The fact's history says who erased what it came from, and keeps no
    // word of the version erased.
    let deleted = store.fact_history(world.tenant, paris_fact).await.unwrap();
    let last = deleted.last().unwrap();
    assert_eq!(last.action, FactAction::Deleted);
    assert_eq!(last.changed_by, "privacy-desk");
    assert!(last.text.is_none());
    assert!(
        last.reason
            .as_deref()
            .unwrap()
            .ends_with("erased: she asked")
    );
    let texts: Vec<Option<&str>> = deleted.iter().map(|e| e.text.as_deref()).collect();
    assert_eq!(
        texts,
        [Some("Alice lives in Lyon"), None, None],
        "Lyon's learning, Paris's (no word left), Paris's deletion"
    );

    // Gone is gone.
    let again = store
        .erase_message(world.tenant, &erasure(paris.id))
        .await
        .unwrap_err();
    assert!(matches!(again, Error::NotFound { .. }), "{again:?}");
}

/// An erasure whose rows' transaction committed but whose vector erasure
/// failed (as a crash there would leave it) is finished later, as an
/// interrupted forget is.
pub async fn an_interrupted_message_erasure_is_finished_later(backend: &impl Backend) {
    let (store, failing) = watched(backend, true).await;
    let world = World::create(&*store, "acme").await;
    let (first, second) = alice_moves(&*store, &world).await;
    embed_messages(&*store, &[&first[0], &second[0], &second[1]]).await;
    assert!(
        store
            .erase_message(world.tenant, &erasure(second[1].id))
            .await
            .is_err(),
        "the erasure failed after the rows' transaction"
    );
    assert!(failing.erased.lock().unwrap().is_empty());
    let left = store
        .get_episode_with_messages(world.tenant, second[1].episode_id)
        .await
        .unwrap();
    assert_eq!(left.messages.len(), 1, "the row is gone");
    // As at a restart: one store on the files at a time, as a data
    // directory's lock keeps it for servers (the first one's background
    // checkpoints would otherwise contend with the second's writes).
    drop(store);
    let (store, watch) = watched(backend, false).await;
    assert_eq!(store.finish_erasures().await.unwrap(), 1);
    assert_eq!(
        watch.erased.lock().unwrap().len(),
        3,
        "the message's, its fact's and the summary's vectors"
    );
    let facts = store
        .list_facts(world.tenant, &filter(&world, "alice", true))
        .await
        .unwrap();
    assert_eq!(
        texts(&facts),
        ["Alice lives in Paris", "Alice lives in Lyon"]
    );
    assert_eq!(store.finish_erasures().await.unwrap(), 0, "none left");
}
