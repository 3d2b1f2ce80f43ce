//! Appends: how messages open, continue and close episodes, all or nothing,
//! in order, and only where the conversation still stands as it was read.

use octopus_core::DomainCode;
use std::collections::HashSet;

use octopus_core::conversation::ConversationFilter;
use octopus_core::episode::{CloseEpisode, EndReason, EpisodeFilter};
use octopus_core::message::Role;
use octopus_core::{Error, MessageId, now};

use crate::Backend;
use crate::fixtures::{self, World, batch, search, text};

pub async fn append_opens_an_episode_and_continues_it(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let first = world
        .say(&*store, fixtures::at(9, 0), &["hello", "my order is late"])
        .await;
    let mut answer = text(
        Role::Assistant,
        "Let me check order 8821.",
        fixtures::at(9, 1),
    );
    answer.token_count = 10;
    let second = store
        .append_messages(world.tenant, batch(world.conversation, vec![answer]))
        .await
        .unwrap();

    let episode = first[0].episode_id;
    assert!(
        first.iter().chain(&second).all(|m| m.episode_id == episode),
        "one open episode takes every message"
    );
    assert_eq!(
        first
            .iter()
            .chain(&second)
            .map(|m| m.ordinal)
            .collect::<Vec<_>>(),
        vec![0, 1, 2]
    );

    let stored = store
        .get_episode_with_messages(world.tenant, episode)
        .await
        .unwrap();
    assert_eq!(stored.messages, [first, second].concat());
    let e = stored.episode;
    assert!(e.is_open());
    assert_eq!(
        (e.message_count, e.started_at, e.last_message_at),
        (3, fixtures::at(9, 0), fixtures::at(9, 1))
    );
    assert_eq!(e.total_output_tokens, 10);
    assert_eq!(
        e.total_input_tokens,
        u64::from(stored.messages[0].token_count + stored.messages[1].token_count)
    );
    assert_eq!(
        (e.agent_id, e.user_id.as_str(), e.conversation_id),
        (world.agent, "alice", world.conversation)
    );
}

/// An episode's messages read backwards a page at a time come out as the
/// whole read at once does; another tenant's episode is not found.
pub async fn an_episodes_messages_are_read_backwards_a_page_at_a_time(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let said: Vec<String> = (0..7).map(|n| format!("message {n}")).collect();
    let texts: Vec<&str> = said.iter().map(String::as_str).collect();
    let appended = world.say(&*store, fixtures::at(9, 0), &texts).await;
    let episode = appended[0].episode_id;
    let whole = store
        .get_episode_with_messages(world.tenant, episode)
        .await
        .unwrap()
        .messages;

    let mut pages = Vec::new();
    let mut before = None;
    loop {
        let read = store
            .episode_messages_before(world.tenant, episode, before, 3)
            .await
            .unwrap();
        assert_eq!(
            read.episode.message_count, 7,
            "the episode comes with each page"
        );
        let page = read.messages;
        let Some(oldest) = page.first() else { break };
        before = Some(oldest.ordinal);
        pages.push(page);
    }
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(
        sizes,
        [3, 3, 1],
        "the newest three first, each page oldest first"
    );
    let read: Vec<_> = pages.into_iter().rev().flatten().collect();
    assert_eq!(read, whole);

    let other = World::create(&*store, "globex").await;
    let theirs = store
        .episode_messages_before(other.tenant, episode, None, 3)
        .await
        .unwrap_err();
    assert!(matches!(theirs, Error::NotFound { .. }), "{theirs:?}");
}

pub async fn idle_gap_closes_the_episode_and_opens_another(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    // One batch spanning two sessions, as an import sends it.
    let records = vec![
        text(Role::User, "monday question", fixtures::at(9, 0)),
        text(Role::Assistant, "monday answer", fixtures::at(9, 5)),
        text(Role::User, "back after lunch", fixtures::at(13, 0)),
    ];
    let stored = store
        .append_messages(world.tenant, batch(world.conversation, records))
        .await
        .unwrap();
    assert_eq!(stored[0].episode_id, stored[1].episode_id);
    assert_ne!(stored[1].episode_id, stored[2].episode_id);
    assert_eq!(stored[2].ordinal, 0);

    let first = store
        .get_episode(world.tenant, stored[0].episode_id)
        .await
        .unwrap();
    assert_eq!(first.end_reason, Some(EndReason::Timeout));
    assert_eq!(
        first.ended_at,
        Some(fixtures::at(9, 5)),
        "a timed-out episode ends at its last message"
    );
    assert_eq!(first.message_count, 2);
    let second = store
        .get_episode(world.tenant, stored[2].episode_id)
        .await
        .unwrap();
    assert!(second.is_open());
    assert_eq!(second.started_at, fixtures::at(13, 0));
}

pub async fn idle_episodes_are_swept_closed_once(backend: &impl Backend) {
    let store = backend.open().await;
    let acme = World::create(&*store, "acme").await;
    let globex = World::create(&*store, "globex").await;
    let idle = chrono::Duration::seconds(
        i64::try_from(
            fixtures::agent(acme.tenant, "x")
                .memory
                .episode_idle_timeout_secs,
        )
        .unwrap(),
    );
    let quiet = acme
        .say(&*store, fixtures::at(9, 0), &["hello", "anyone?"])
        .await;
    let late = globex.say(&*store, fixtures::at(9, 30), &["later"]).await;
    // Deleted episodes stay as they are.
    let deleted = World::create(&*store, "initech").await;
    let gone = deleted.say(&*store, fixtures::at(8, 0), &["bye"]).await[0].episode_id;
    store
        .soft_delete_episode(deleted.tenant, gone, now())
        .await
        .unwrap();

    let before = fixtures::at(9, 0) + idle - chrono::Duration::seconds(1);
    assert!(
        store
            .close_idle_episodes(before, 100)
            .await
            .unwrap()
            .is_empty()
    );
    let sweep = fixtures::at(9, 0) + idle + chrono::Duration::seconds(2);
    // Two sweepers at once: each idle episode is closed by exactly one.
    let (a, b) = tokio::join!(
        store.close_idle_episodes(sweep, 100),
        store.close_idle_episodes(sweep, 100)
    );
    let mut closed = a.unwrap();
    closed.extend(b.unwrap());
    assert_eq!(
        closed,
        [(acme.tenant, quiet[0].episode_id)],
        "only the idle one, once"
    );
    let episode = store
        .get_episode(acme.tenant, quiet[0].episode_id)
        .await
        .unwrap();
    assert_eq!(episode.end_reason, Some(EndReason::Timeout));
    assert_eq!(
        episode.ended_at,
        Some(fixtures::at(9, 0) + chrono::Duration::seconds(1)),
        "ended at its last message"
    );
    let open = store
        .get_episode(globex.tenant, late[0].episode_id)
        .await
        .unwrap();
    assert!(open.is_open(), "its idle timeout has not passed");
    assert!(
        store
            .close_idle_episodes(sweep, 100)
            .await
            .unwrap()
            .is_empty()
    );
    // Its summary was queued with the close.
    let jobs = store
        .claim_memory_jobs(100, now(), std::time::Duration::from_secs(60))
        .await
        .unwrap();
    assert!(jobs.iter().any(|job| matches!(&job.work,
        octopus_core::memory_jobs::MemoryWork::SummariseEpisode(e) if e.episode.id == quiet[0].episode_id)));
    // The next message opens a new episode.
    let next = acme.say(&*store, fixtures::at(9, 2), &["back"]).await;
    assert_ne!(next[0].episode_id, quiet[0].episode_id);
}

pub async fn closed_episode_is_followed_by_a_new_one(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let first = world.say(&*store, fixtures::at(9, 0), &["hi"]).await[0].episode_id;
    let close = CloseEpisode {
        reason: EndReason::UserClosed,
        ended_at: None,
        summary: None,
    };
    let closed = store
        .close_episode(world.tenant, first, close.clone(), now())
        .await
        .unwrap();
    assert_eq!(closed.end_reason, Some(EndReason::UserClosed));
    assert!(closed.ended_at.is_some());
    match store.close_episode(world.tenant, first, close, now()).await {
        Err(Error::Conflict {
            code: DomainCode::EpisodeClosed,
            ..
        }) => {}
        other => panic!("expected episode_closed, got {other:?}"),
    }
    let next = world.say(&*store, fixtures::at(9, 1), &["me again"]).await[0].clone();
    assert_ne!(next.episode_id, first);
    assert_eq!(next.ordinal, 0);
}

pub async fn failed_batch_writes_nothing(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let before = world.say(&*store, fixtures::at(9, 0), &["first"]).await;

    // The second message reuses the first's id: the store must refuse the batch
    // whole, after having written the first message of it.
    let good = text(Role::User, "second", fixtures::at(9, 1));
    let mut clash = text(Role::User, "third", fixtures::at(9, 2));
    clash.id = good.id;
    assert!(
        store
            .append_messages(world.tenant, batch(world.conversation, vec![good, clash]))
            .await
            .is_err()
    );

    let episode = store
        .get_episode_with_messages(world.tenant, before[0].episode_id)
        .await
        .unwrap();
    assert_eq!(episode.messages, before);
    assert_eq!(episode.episode.message_count, 1);
    assert_eq!(episode.episode.last_message_at, fixtures::at(9, 0));
    assert!(
        store
            .search_messages(world.tenant, &search("second"))
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn a_batch_that_must_follow_what_was_read_is_refused_once_the_conversation_moved(
    backend: &impl Backend,
) {
    use octopus_core::appending::SeenTail;
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let first = world
        .say(&*store, fixtures::at(9, 0), &["hello", "my order is late"])
        .await;
    let read = SeenTail {
        episode_id: first[0].episode_id,
        message_count: 2,
    };
    let following = |text_: &str| {
        let mut batch = batch(
            world.conversation,
            vec![text(Role::Tool, text_, fixtures::at(9, 1))],
        );
        batch.follows = Some(read);
        batch
    };
    // Two batches decided from the same read: the first is stored, the
    // second refused whole, in the append's own transaction.
    let stored = store
        .append_messages(world.tenant, following("the first answer"))
        .await
        .unwrap();
    assert_eq!(stored[0].ordinal, 2);
    match store
        .append_messages(world.tenant, following("a second answer"))
        .await
    {
        Err(Error::Conflict { code, .. }) => assert_eq!(code, DomainCode::ConversationMoved),
        other => panic!("expected conversation_moved, got {other:?}"),
    }
    let episode = store
        .get_episode_with_messages(world.tenant, read.episode_id)
        .await
        .unwrap();
    assert_eq!(episode.messages.len(), 3, "nothing of the refused batch");
    assert_eq!(episode.episode.message_count, 3);

    // Once the episode is closed, a batch that followed it is refused too.
    store
        .close_episode(
            world.tenant,
            read.episode_id,
            CloseEpisode {
                reason: EndReason::UserClosed,
                ended_at: None,
                summary: None,
            },
            now(),
        )
        .await
        .unwrap();
    let after_close = SeenTail {
        message_count: 3,
        ..read
    };
    let mut late = batch(
        world.conversation,
        vec![text(Role::User, "still there?", fixtures::at(9, 2))],
    );
    late.follows = Some(after_close);
    assert!(matches!(
        store.append_messages(world.tenant, late).await,
        Err(Error::Conflict {
            code: DomainCode::ConversationMoved,
            ..
        })
    ));
    // Without an expectation the append goes on as ever.
    let next = world.say(&*store, fixtures::at(9, 3), &["me again"]).await;
    assert_ne!(next[0].episode_id, read.episode_id);
}

pub async fn deleted_conversation_takes_no_messages(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let closed = world
        .say(&*store, fixtures::at(8, 0), &["the zebra code is 1234"])
        .await[0]
        .episode_id;
    store
        .close_episode(
            world.tenant,
            closed,
            CloseEpisode {
                reason: EndReason::UserClosed,
                ended_at: None,
                summary: None,
            },
            now(),
        )
        .await
        .unwrap();
    let open = world.say(&*store, fixtures::at(9, 0), &["hi zebra"]).await[0].episode_id;
    store
        .delete_conversation(world.tenant, world.conversation, now())
        .await
        .unwrap();

    let outcome = store
        .append_messages(
            world.tenant,
            batch(
                world.conversation,
                vec![text(Role::User, "x", fixtures::at(9, 1))],
            ),
        )
        .await;
    match outcome {
        Err(Error::Gone {
            code: DomainCode::ConversationDeleted,
            ..
        }) => {}
        other => panic!("expected conversation_deleted, got {other:?}"),
    }
    // Its episodes are soft-deleted with it: gone from reads and search,
    // listed among the deleted, restorable.
    for episode in [closed, open] {
        fixtures::assert_not_found(store.get_episode(world.tenant, episode).await);
    }
    assert!(
        store
            .search_messages(world.tenant, &search("zebra"))
            .await
            .unwrap()
            .is_empty()
    );
    let deleted = EpisodeFilter {
        deleted: true,
        ..EpisodeFilter::default()
    };
    assert_eq!(
        store
            .list_episodes(world.tenant, &deleted)
            .await
            .unwrap()
            .len(),
        2
    );
    let restored = store
        .restore_episode(world.tenant, open, now())
        .await
        .unwrap();
    assert_eq!(
        restored.end_reason,
        Some(EndReason::UserClosed),
        "deleting a conversation closes its open episode"
    );
    assert_eq!(
        store
            .get_episode_with_messages(world.tenant, open)
            .await
            .unwrap()
            .messages
            .len(),
        1
    );

    let conversation = store
        .get_conversation(world.tenant, world.conversation)
        .await
        .unwrap();
    assert!(conversation.deleted_at.is_some());
    let listed = store
        .list_conversations(world.tenant, &ConversationFilter::default())
        .await
        .unwrap();
    assert!(listed.is_empty());
}

pub async fn an_episode_cannot_end_before_its_last_message(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let episode = world
        .say(&*store, fixtures::at(9, 0), &["first", "second"])
        .await[0]
        .episode_id;
    let close = |ended_at| CloseEpisode {
        reason: EndReason::UserClosed,
        ended_at: Some(ended_at),
        summary: None,
    };
    match store
        .close_episode(world.tenant, episode, close(fixtures::at(8, 0)), now())
        .await
    {
        Err(Error::Invalid { field, .. }) => assert_eq!(field, "ended_at"),
        other => panic!("expected an invalid ended_at, got {other:?}"),
    }
    assert!(
        store
            .get_episode(world.tenant, episode)
            .await
            .unwrap()
            .is_open(),
        "a refused close changes nothing"
    );
    let closed = store
        .close_episode(world.tenant, episode, close(fixtures::at(10, 0)), now())
        .await
        .unwrap();
    assert_eq!(closed.ended_at, Some(fixtures::at(10, 0)));
    assert!(closed.started_at <= closed.last_message_at);
}

pub async fn concurrent_appends_keep_ordinals_dense(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let base = now();
    let mut tasks = Vec::new();
    for writer in 0..8 {
        let store = store.clone();
        let conversation = world.conversation;
        let tenant = world.tenant;
        tasks.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for i in 0..20 {
                let record = text(Role::User, &format!("writer {writer} message {i}"), base);
                ids.push(record.id);
                store
                    .append_messages(tenant, batch(conversation, vec![record]))
                    .await
                    .unwrap();
            }
            ids
        }));
    }
    let mut sent: HashSet<MessageId> = HashSet::new();
    for task in tasks {
        sent.extend(task.await.unwrap());
    }
    let episodes = store
        .list_episodes(world.tenant, &EpisodeFilter::default())
        .await
        .unwrap();
    assert_eq!(episodes.len(), 1);
    let stored = store
        .get_episode_with_messages(world.tenant, episodes[0].id)
        .await
        .unwrap();
    assert_eq!(
        stored
            .messages
            .iter()
            .map(|m| m.ordinal)
            .collect::<Vec<_>>(),
        (0..160).collect::<Vec<_>>()
    );
    assert_eq!(
        stored.messages.iter().map(|m| m.id).collect::<HashSet<_>>(),
        sent
    );
    assert_eq!(stored.episode.message_count, 160);
}

pub async fn an_import_is_all_or_nothing(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let conversation = |user: &str| fixtures::conversation(world.tenant, world.agent, user);
    let sessions = vec![
        vec![
            text(Role::User, "monday question", fixtures::at(9, 0)),
            text(Role::Assistant, "monday answer", fixtures::at(9, 5)),
        ],
        vec![text(Role::User, "back a week later", fixtures::at(10, 0))],
    ];
    let imported = conversation("bob");
    let (episodes, count) = store
        .import_conversation(world.tenant, &imported, sessions.clone(), now())
        .await
        .unwrap();
    assert_eq!((episodes.len(), count), (2, 3));
    let first = store.get_episode(world.tenant, episodes[0]).await.unwrap();
    assert_eq!(first.end_reason, Some(EndReason::Imported));
    assert_eq!(
        first.ended_at,
        Some(fixtures::at(9, 5)),
        "closed at its last message"
    );
    assert_eq!(first.message_count, 2);

    // The second session fails in the store (a message id already taken):
    // nothing of the import is left, not even its first session.
    let mut broken = sessions;
    broken[1][0].id = broken[0][0].id;
    let failed = conversation("carol");
    assert!(
        store
            .import_conversation(world.tenant, &failed, broken, now())
            .await
            .is_err()
    );
    assert!(matches!(
        store.get_conversation(world.tenant, failed.id).await,
        Err(Error::NotFound { .. })
    ));
    let filter = EpisodeFilter {
        user_id: Some("carol".into()),
        ..EpisodeFilter::default()
    };
    assert!(
        store
            .list_episodes(world.tenant, &filter)
            .await
            .unwrap()
            .is_empty()
    );
    let hits = store
        .search_messages(world.tenant, &search("monday"))
        .await
        .unwrap();
    assert_eq!(hits.len(), 2, "the first import's two messages only");
    assert!(
        hits.iter()
            .all(|hit| hit.message.conversation_id == imported.id)
    );
}

/// What names a conversation in a list: the first user message of its
/// first episode, past a system prompt and before the assistant's turn and
/// any later episode; none for a conversation where the user said nothing,
/// or another tenant's.
pub async fn a_conversation_opens_with_its_users_first_message(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let opening = |at: u32| {
        vec![
            text(
                Role::System,
                "You are a parcel assistant",
                fixtures::at(9, at),
            ),
            text(
                Role::Assistant,
                "Hello! How can I help?",
                fixtures::at(9, at + 1),
            ),
            text(
                Role::User,
                "Where is my parcel from Lyon?",
                fixtures::at(9, at + 2),
            ),
            text(Role::User, "It was due on Monday", fixtures::at(9, at + 3)),
        ]
    };
    let first = store
        .append_messages(world.tenant, batch(world.conversation, opening(0)))
        .await
        .unwrap();
    store
        .close_episode(
            world.tenant,
            first[0].episode_id,
            CloseEpisode {
                reason: EndReason::UserClosed,
                ended_at: None,
                summary: None,
            },
            fixtures::at(9, 10),
        )
        .await
        .unwrap();
    store
        .append_messages(
            world.tenant,
            batch(
                world.conversation,
                vec![text(Role::User, "Any news?", fixtures::at(10, 0))],
            ),
        )
        .await
        .unwrap();
    let quiet = fixtures::conversation(world.tenant, world.agent, "bob");
    store.create_conversation(&quiet).await.unwrap();
    store
        .append_messages(
            world.tenant,
            batch(
                quiet.id,
                vec![text(Role::Assistant, "Hello?", fixtures::at(9, 0))],
            ),
        )
        .await
        .unwrap();
    let empty = fixtures::conversation(world.tenant, world.agent, "carol");
    store.create_conversation(&empty).await.unwrap();
    let other = World::create(&*store, "globex").await;
    other
        .say(&*store, fixtures::at(9, 0), &["Globex's own question"])
        .await;

    let ids = [world.conversation, quiet.id, empty.id, other.conversation];
    let openings: Vec<_> = store
        .opening_messages(world.tenant, &ids)
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.conversation_id, m.search_text()))
        .collect();
    assert_eq!(
        openings,
        vec![(
            world.conversation,
            "Where is my parcel from Lyon?".to_owned()
        )]
    );
    assert_eq!(
        store
            .opening_messages(other.tenant, &ids)
            .await
            .unwrap()
            .len(),
        1,
        "globex's own conversation opens with its question"
    );
}
