//! The lifecycle contract: retention's archive, and forgetting a user.

use chrono::{Duration, TimeZone, Utc};
use octopus_core::episode::{CloseEpisode, EndReason, EpisodeFilter};
use octopus_core::search::MessageSearchQuery;
use octopus_core::{EpisodeId, Error, Timestamp, now};

use crate::Backend;
use crate::fixtures::World;
use crate::knowledge::direction;
use crate::memory::{embed_all, query};

fn t(day: u32) -> Timestamp {
    Utc.with_ymd_and_hms(2026, 6, day, 10, 0, 0).unwrap()
}

fn search(text: &str) -> MessageSearchQuery {
    MessageSearchQuery {
        text: text.into(),
        agent_id: None,
        user_id: None,
        conversation_id: None,
        from: None,
        to: None,
        limit: 20,
    }
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
