//! The storage contract, rule by rule. Each function takes a [`Backend`] and
//! panics when the backend breaks the rule; `store_conformance_tests!` turns each
//! into a test.

use octopus_core::DomainCode;
use std::collections::HashSet;

use chrono::{TimeZone, Utc};
use octopus_core::conversation::ConversationFilter;
use octopus_core::episode::{CloseEpisode, EndReason, EpisodeFilter, EpisodeSummary};
use octopus_core::message::{ContentPart, ImageUrl, MessageContent, Role, ToolCallRecord};
use octopus_core::search::MessageSearchQuery;
use octopus_core::store::Page;
use octopus_core::tenant::{ApiKey, KeyHash};
use octopus_core::{ApiKeyId, EpisodeId, Error, MessageId, Timestamp, now};
use serde_json::json;

use crate::Backend;
use crate::fixtures::{self, World, batch, search, text};

fn t(hour: u32, minute: u32) -> Timestamp {
    Utc.with_ymd_and_hms(2026, 3, 14, hour, minute, 0).unwrap()
}

fn assert_not_found<T: std::fmt::Debug>(outcome: octopus_core::Result<T>) {
    match outcome {
        Err(Error::NotFound { .. }) => {}
        other => panic!("expected NotFound, got {other:?}"),
    }
}

pub async fn tenants_and_api_keys(backend: &impl Backend) {
    let store = backend.open().await;
    let tenant = fixtures::tenant("acme");
    store.create_tenant(&tenant).await.unwrap();
    assert_eq!(store.get_tenant(tenant.id).await.unwrap(), tenant);
    assert!(
        store
            .list_tenants(Page::default())
            .await
            .unwrap()
            .contains(&tenant)
    );

    let key = ApiKey {
        id: ApiKeyId::new(),
        tenant_id: tenant.id,
        name: "ci".into(),
        prefix: "oct_abcd".into(),
        hash: KeyHash([7; 32]),
        created_at: now(),
        revoked_at: None,
    };
    store.create_api_key(&key).await.unwrap();
    assert_eq!(
        store.tenant_for_key(&KeyHash([7; 32])).await.unwrap(),
        Some(tenant.id)
    );
    assert_eq!(store.tenant_for_key(&KeyHash([8; 32])).await.unwrap(), None);
    assert_eq!(
        store.list_api_keys(tenant.id).await.unwrap(),
        vec![key.clone()]
    );

    store
        .revoke_api_key(tenant.id, key.id, now())
        .await
        .unwrap();
    assert_eq!(
        store.tenant_for_key(&KeyHash([7; 32])).await.unwrap(),
        None,
        "a revoked key authenticates nothing"
    );

    let orphan = ApiKey {
        id: ApiKeyId::new(),
        tenant_id: fixtures::tenant("ghost").id,
        hash: KeyHash([9; 32]),
        ..key
    };
    assert_not_found(store.create_api_key(&orphan).await);

    assert_eq!(store.admin_key_hash().await.unwrap(), None);
    store.set_admin_key_hash(&KeyHash([1; 32])).await.unwrap();
    store.set_admin_key_hash(&KeyHash([2; 32])).await.unwrap();
    assert_eq!(
        store.admin_key_hash().await.unwrap(),
        Some(KeyHash([2; 32]))
    );
}

pub async fn agents_are_tenant_scoped_and_names_unique(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let mut agent = store.get_agent(world.tenant, world.agent).await.unwrap();
    assert_eq!(agent.name, "support");

    let twin = fixtures::agent(world.tenant, "support");
    match store.create_agent(&twin).await {
        Err(Error::Conflict {
            code: DomainCode::AgentNameTaken,
            ..
        }) => {}
        other => panic!("expected agent_name_taken, got {other:?}"),
    }

    agent.system_prompt = "Be brief.".into();
    agent.memory.knowledge_top_k = 9;
    agent.updated_at = now();
    store.update_agent(&agent).await.unwrap();
    assert_eq!(
        store.get_agent(world.tenant, world.agent).await.unwrap(),
        agent
    );

    // Deactivating frees the name and hides the agent from lists.
    agent.is_active = false;
    store.update_agent(&agent).await.unwrap();
    assert!(
        store
            .list_agents(world.tenant, Page::default())
            .await
            .unwrap()
            .is_empty()
    );
    store.create_agent(&twin).await.unwrap();
    assert_eq!(
        store
            .list_agents(world.tenant, Page::default())
            .await
            .unwrap(),
        vec![twin]
    );

    let other = World::create(&*store, "globex").await;
    assert_not_found(store.get_agent(other.tenant, world.agent).await);
}

pub async fn deleted_agents_are_not_found_and_free_their_name(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let stranger = World::create(&*store, "stranger").await;
    assert_not_found(
        store
            .delete_agent(stranger.tenant, world.agent, now())
            .await,
    );
    store.get_agent(world.tenant, world.agent).await.unwrap();

    store
        .delete_agent(world.tenant, world.agent, now())
        .await
        .unwrap();
    assert_not_found(store.get_agent(world.tenant, world.agent).await);
    assert_not_found(store.delete_agent(world.tenant, world.agent, now()).await);
    let mut agent = fixtures::agent(world.tenant, "support");
    agent.id = world.agent;
    assert_not_found(store.update_agent(&agent).await);
    assert!(
        store
            .list_agents(world.tenant, Page::default())
            .await
            .unwrap()
            .iter()
            .all(|listed| listed.id != world.agent)
    );
    // The name is free; the agent's conversation stays readable.
    store
        .create_agent(&fixtures::agent(world.tenant, "support"))
        .await
        .unwrap();
    store
        .get_conversation(world.tenant, world.conversation)
        .await
        .unwrap();
}

pub async fn append_opens_an_episode_and_continues_it(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let first = world
        .say(&*store, t(9, 0), &["hello", "my order is late"])
        .await;
    let mut answer = text(Role::Assistant, "Let me check order 8821.", t(9, 1));
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
        (3, t(9, 0), t(9, 1))
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

pub async fn idle_gap_closes_the_episode_and_opens_another(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    // One batch spanning two sessions, as an import sends it.
    let records = vec![
        text(Role::User, "monday question", t(9, 0)),
        text(Role::Assistant, "monday answer", t(9, 5)),
        text(Role::User, "back after lunch", t(13, 0)),
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
        Some(t(9, 5)),
        "a timed-out episode ends at its last message"
    );
    assert_eq!(first.message_count, 2);
    let second = store
        .get_episode(world.tenant, stored[2].episode_id)
        .await
        .unwrap();
    assert!(second.is_open());
    assert_eq!(second.started_at, t(13, 0));
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
    let quiet = acme.say(&*store, t(9, 0), &["hello", "anyone?"]).await;
    let late = globex.say(&*store, t(9, 30), &["later"]).await;
    // Deleted episodes stay as they are.
    let deleted = World::create(&*store, "initech").await;
    let gone = deleted.say(&*store, t(8, 0), &["bye"]).await[0].episode_id;
    store
        .soft_delete_episode(deleted.tenant, gone, now())
        .await
        .unwrap();

    let before = t(9, 0) + idle - chrono::Duration::seconds(1);
    assert!(
        store
            .close_idle_episodes(before, 100)
            .await
            .unwrap()
            .is_empty()
    );
    let sweep = t(9, 0) + idle + chrono::Duration::seconds(2);
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
        Some(t(9, 0) + chrono::Duration::seconds(1)),
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
        octopus_core::recall::MemoryWork::SummariseEpisode(e) if e.episode.id == quiet[0].episode_id)));
    // The next message opens a new episode.
    let next = acme.say(&*store, t(9, 2), &["back"]).await;
    assert_ne!(next[0].episode_id, quiet[0].episode_id);
}

pub async fn closed_episode_is_followed_by_a_new_one(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let first = world.say(&*store, t(9, 0), &["hi"]).await[0].episode_id;
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
    let next = world.say(&*store, t(9, 1), &["me again"]).await[0].clone();
    assert_ne!(next.episode_id, first);
    assert_eq!(next.ordinal, 0);
}

pub async fn failed_batch_writes_nothing(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let before = world.say(&*store, t(9, 0), &["first"]).await;

    // The second message reuses the first's id: the store must refuse the batch
    // whole, after having written the first message of it.
    let good = text(Role::User, "second", t(9, 1));
    let mut clash = text(Role::User, "third", t(9, 2));
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
    assert_eq!(episode.episode.last_message_at, t(9, 0));
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
        .say(&*store, t(9, 0), &["hello", "my order is late"])
        .await;
    let read = SeenTail {
        episode_id: first[0].episode_id,
        message_count: 2,
    };
    let following = |text_: &str| {
        let mut batch = batch(world.conversation, vec![text(Role::Tool, text_, t(9, 1))]);
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
        vec![text(Role::User, "still there?", t(9, 2))],
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
    let next = world.say(&*store, t(9, 3), &["me again"]).await;
    assert_ne!(next[0].episode_id, read.episode_id);
}

pub async fn deleted_conversation_takes_no_messages(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let closed = world
        .say(&*store, t(8, 0), &["the zebra code is 1234"])
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
    let open = world.say(&*store, t(9, 0), &["hi zebra"]).await[0].episode_id;
    store
        .delete_conversation(world.tenant, world.conversation, now())
        .await
        .unwrap();

    let outcome = store
        .append_messages(
            world.tenant,
            batch(world.conversation, vec![text(Role::User, "x", t(9, 1))]),
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
        assert_not_found(store.get_episode(world.tenant, episode).await);
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
    let episode = world.say(&*store, t(9, 0), &["first", "second"]).await[0].episode_id;
    let close = |ended_at| CloseEpisode {
        reason: EndReason::UserClosed,
        ended_at: Some(ended_at),
        summary: None,
    };
    match store
        .close_episode(world.tenant, episode, close(t(8, 0)), now())
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
        .close_episode(world.tenant, episode, close(t(10, 0)), now())
        .await
        .unwrap();
    assert_eq!(closed.ended_at, Some(t(10, 0)));
    assert!(closed.started_at <= closed.last_message_at);
}

pub async fn restoring_a_live_episode_is_a_conflict(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let episode = world.say(&*store, t(9, 0), &["still here"]).await[0].episode_id;
    match store.restore_episode(world.tenant, episode, now()).await {
        Err(Error::Conflict {
            code: DomainCode::EpisodeLive,
            ..
        }) => {}
        other => panic!("expected episode_live, got {other:?}"),
    }
    let stranger = World::create(&*store, "stranger").await;
    assert_not_found(store.restore_episode(stranger.tenant, episode, now()).await);
}

pub async fn every_field_survives_reopening(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let helper = fixtures::agent(world.tenant, "billing");
    store.create_agent(&helper).await.unwrap();

    let mut multipart = text(Role::User, "", t(9, 0));
    multipart.content = Some(MessageContent::Parts(vec![
        ContentPart::Text {
            text: "Analyze this chart:".into(),
        },
        ContentPart::ImageUrl {
            image_url: ImageUrl {
                url: "data:image/png;base64,iVBORw0KGgo=".into(),
                detail: Some("high".into()),
            },
        },
    ]));
    multipart.name = Some("alice_w".into());
    multipart.contains_pii = true;
    multipart.redacted_content = Some("Analyze this chart of [EMAIL]:".into());

    let mut call = text(Role::Assistant, "", t(9, 1));
    call.content = None;
    call.agent_id = Some(helper.id);
    call.tool_calls = vec![ToolCallRecord {
        tool_call_id: "call_abc123".into(),
        function_name: "get_order_status".into(),
        arguments: json!({"orderId": "ORD-8821"}),
        result: None,
        duration_ms: None,
        is_error: false,
    }];
    let mut result = text(Role::Tool, "shipped", t(9, 2));
    result.tool_call_id = Some("call_abc123".into());
    result.tool_calls = vec![ToolCallRecord {
        result: Some(
            json!({"status": "shipped", "carrier": "FedEx", "estimatedDelivery": "2026-05-27"}),
        ),
        duration_ms: Some(142),
        is_error: false,
        ..call.tool_calls[0].clone()
    }];
    let long = text(
        Role::Assistant,
        &"Your parcel is on its way with FedEx. ".repeat(50),
        t(9, 3),
    );
    let written = store
        .append_messages(
            world.tenant,
            batch(world.conversation, vec![multipart, call, result, long]),
        )
        .await
        .unwrap();
    let episode_id = written[0].episode_id;
    let summary = EpisodeSummary {
        summary: "Alice asked about order ORD-8821; it shipped with FedEx.".into(),
        key_facts: vec!["order ORD-8821 shipped".into(), "carrier: FedEx".into()],
        embedding: Some(vec![0.125, -0.5, 0.75]),
    };
    let close = CloseEpisode {
        reason: EndReason::AgentClosed,
        ended_at: Some(t(9, 4)),
        summary: Some(summary.clone()),
    };
    store
        .close_episode(world.tenant, episode_id, close, now())
        .await
        .unwrap();
    let before = store
        .get_episode_with_messages(world.tenant, episode_id)
        .await
        .unwrap();
    let agent_before = store.get_agent(world.tenant, helper.id).await.unwrap();
    let conversation_before = store
        .get_conversation(world.tenant, world.conversation)
        .await
        .unwrap();
    drop(store);

    let store = backend.open().await;
    let after = store
        .get_episode_with_messages(world.tenant, episode_id)
        .await
        .unwrap();
    assert_eq!(after, before);
    assert_eq!(after.messages, written);
    assert_eq!(
        after.episode.summary.as_deref(),
        Some(summary.summary.as_str())
    );
    assert_eq!(after.episode.key_facts, summary.key_facts);
    assert_eq!(after.episode.summary_embedding, summary.embedding);
    assert_eq!(after.episode.ended_at, Some(t(9, 4)));
    assert_eq!(
        store.get_agent(world.tenant, helper.id).await.unwrap(),
        agent_before
    );
    assert_eq!(
        store
            .get_conversation(world.tenant, world.conversation)
            .await
            .unwrap(),
        conversation_before
    );
}

pub async fn soft_delete_restore_and_purge(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let episode = world
        .say(&*store, t(9, 0), &["my zebra password leaked"])
        .await[0]
        .episode_id;
    let live = EpisodeFilter::default();
    let deleted = EpisodeFilter {
        deleted: true,
        ..EpisodeFilter::default()
    };

    store
        .soft_delete_episode(world.tenant, episode, now())
        .await
        .unwrap();
    assert_not_found(store.get_episode(world.tenant, episode).await);
    assert!(
        store
            .list_episodes(world.tenant, &live)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .list_episodes(world.tenant, &deleted)
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        store
            .search_messages(world.tenant, &search("zebra"))
            .await
            .unwrap()
            .is_empty()
    );
    // The deleted episode was the open one: the next message opens a new episode.
    let next = world.say(&*store, t(9, 1), &["hello again"]).await[0].episode_id;
    assert_ne!(next, episode);

    let restored = store
        .restore_episode(world.tenant, episode, now())
        .await
        .unwrap();
    assert!(restored.deleted_at.is_none());
    assert_eq!(
        store
            .search_messages(world.tenant, &search("zebra"))
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        matches!(
            store.restore_episode(world.tenant, episode, now()).await,
            Err(Error::Conflict {
                code: DomainCode::EpisodeLive,
                ..
            })
        ),
        "a restored episode is live: nothing more to restore"
    );

    store
        .soft_delete_episode(world.tenant, episode, now())
        .await
        .unwrap();
    store.purge_episode(world.tenant, episode).await.unwrap();
    assert!(
        store
            .list_episodes(world.tenant, &deleted)
            .await
            .unwrap()
            .is_empty()
    );
    assert_not_found(store.restore_episode(world.tenant, episode, now()).await);
    assert_not_found(store.purge_episode(world.tenant, episode).await);
    assert!(
        store
            .search_messages(world.tenant, &search("zebra"))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .get_episode(world.tenant, next)
            .await
            .unwrap()
            .message_count,
        1,
        "other episodes untouched"
    );
}

pub async fn purge_requires_soft_delete(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let episode = world.say(&*store, t(9, 0), &["keep me"]).await[0].episode_id;
    match store.purge_episode(world.tenant, episode).await {
        Err(Error::Conflict {
            code: DomainCode::EpisodeNotDeleted,
            ..
        }) => {}
        other => panic!("expected episode_not_deleted, got {other:?}"),
    }
    assert_eq!(
        store
            .get_episode_with_messages(world.tenant, episode)
            .await
            .unwrap()
            .messages
            .len(),
        1
    );
}

pub async fn search_ranks_by_bm25_and_filters(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    world
        .say(
            &*store,
            t(9, 0),
            &[
                "The invoice for March is attached.",
                "Invoice, invoice, invoice: the invoice total changed.",
                "Nothing to see here.",
            ],
        )
        .await;
    let hits = store
        .search_messages(world.tenant, &search("invoice"))
        .await
        .unwrap();
    assert_eq!(hits.len(), 2);
    assert!(
        hits[0]
            .message
            .search_text()
            .starts_with("Invoice, invoice"),
        "denser match ranks first"
    );
    assert!(hits[0].score > hits[1].score, "scores fall with rank");
    assert_eq!(
        (hits[0].agent_id, hits[0].user_id.as_str()),
        (world.agent, "alice")
    );

    // Stemming: "invoices" finds "invoice"; punctuation in the query is not syntax.
    assert_eq!(
        store
            .search_messages(world.tenant, &search("\"invoices\" OR ("))
            .await
            .unwrap()
            .len(),
        2
    );

    // Filters: another user of the same agent, and time bounds.
    let bob = fixtures::conversation(world.tenant, world.agent, "bob");
    store.create_conversation(&bob).await.unwrap();
    let records = vec![text(Role::User, "bob's invoice question", t(15, 0))];
    store
        .append_messages(world.tenant, batch(bob.id, records))
        .await
        .unwrap();
    let only_bob = MessageSearchQuery {
        user_id: Some("bob".into()),
        ..search("invoice")
    };
    let hits = store
        .search_messages(world.tenant, &only_bob)
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].user_id, "bob");
    let by_conversation = MessageSearchQuery {
        conversation_id: Some(world.conversation),
        ..search("invoice")
    };
    assert_eq!(
        store
            .search_messages(world.tenant, &by_conversation)
            .await
            .unwrap()
            .len(),
        2
    );
    let afternoon = MessageSearchQuery {
        from: Some(t(12, 0)),
        to: Some(t(18, 0)),
        ..search("invoice")
    };
    assert_eq!(
        store
            .search_messages(world.tenant, &afternoon)
            .await
            .unwrap()
            .len(),
        1
    );
    let other_agent = MessageSearchQuery {
        agent_id: Some(fixtures::agent(world.tenant, "x").id),
        ..search("invoice")
    };
    assert!(
        store
            .search_messages(world.tenant, &other_agent)
            .await
            .unwrap()
            .is_empty()
    );
    let top_one = MessageSearchQuery {
        limit: 1,
        ..search("invoice")
    };
    assert_eq!(
        store
            .search_messages(world.tenant, &top_one)
            .await
            .unwrap()
            .len(),
        1
    );
}

/// A word few messages contain says more about a message than one most
/// contain: BM25's inverse document frequency.
pub async fn search_weighs_rare_words_above_common_ones(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    world
        .say(
            &*store,
            t(9, 0),
            &[
                "Our order shipped today.",
                "The order is late, order status unknown, order again?",
                "Another order question.",
                "A refund was requested for the blender.",
                "Where is my order now?",
            ],
        )
        .await;
    let hits = store
        .search_messages(world.tenant, &search("order refund"))
        .await
        .unwrap();
    assert_eq!(hits.len(), 5, "every message with either word");
    assert!(
        hits[0].message.search_text().starts_with("A refund"),
        "the one message with the rare word first, whatever the common word's count: {:?}",
        hits.iter()
            .map(|h| h.message.search_text())
            .collect::<Vec<_>>()
    );
}

pub async fn search_sees_every_acknowledged_message(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    for round in 0..5 {
        let word = format!("needle{round}");
        world.say(&*store, t(9, round), &[word.as_str()]).await;
        // No pause: the search must catch the index up itself.
        let hits = store
            .search_messages(world.tenant, &search(&word))
            .await
            .unwrap();
        assert_eq!(
            hits.len(),
            1,
            "message `{word}` was acknowledged but not found"
        );
    }
}

pub async fn episodes_list_with_filters(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let morning = world.say(&*store, t(9, 0), &["a"]).await[0].episode_id;
    let afternoon = world.say(&*store, t(14, 0), &["b"]).await[0].episode_id; // past the idle timeout
    let bob = fixtures::conversation(world.tenant, world.agent, "bob");
    store.create_conversation(&bob).await.unwrap();
    let bobs = store
        .append_messages(
            world.tenant,
            batch(bob.id, vec![text(Role::User, "c", t(11, 0))]),
        )
        .await
        .unwrap()[0]
        .episode_id;

    let ids = |episodes: Vec<octopus_core::episode::Episode>| {
        episodes.into_iter().map(|e| e.id).collect::<Vec<_>>()
    };
    let all = store
        .list_episodes(world.tenant, &EpisodeFilter::default())
        .await
        .unwrap();
    assert_eq!(
        ids(all),
        vec![afternoon, bobs, morning],
        "newest started first"
    );
    let alice = EpisodeFilter {
        user_id: Some("alice".into()),
        ..EpisodeFilter::default()
    };
    assert_eq!(
        ids(store.list_episodes(world.tenant, &alice).await.unwrap()),
        vec![afternoon, morning]
    );
    let window = EpisodeFilter {
        from: Some(t(10, 0)),
        to: Some(t(14, 0)),
        ..EpisodeFilter::default()
    };
    assert_eq!(
        ids(store.list_episodes(world.tenant, &window).await.unwrap()),
        vec![bobs]
    );
    let by_conversation = EpisodeFilter {
        conversation_id: Some(bob.id),
        ..EpisodeFilter::default()
    };
    assert_eq!(
        ids(store
            .list_episodes(world.tenant, &by_conversation)
            .await
            .unwrap()),
        vec![bobs]
    );
    let second_page = EpisodeFilter {
        page: Page {
            limit: 1,
            offset: 1,
        },
        ..EpisodeFilter::default()
    };
    assert_eq!(
        ids(store
            .list_episodes(world.tenant, &second_page)
            .await
            .unwrap()),
        vec![bobs]
    );
    let by_agent = EpisodeFilter {
        agent_id: Some(world.agent),
        ..EpisodeFilter::default()
    };
    assert_eq!(
        store
            .list_episodes(world.tenant, &by_agent)
            .await
            .unwrap()
            .len(),
        3
    );
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

pub async fn foreign_tenant_sees_nothing(backend: &impl Backend) {
    let store = backend.open().await;
    let owner = World::create(&*store, "acme").await;
    let episode: EpisodeId = owner.say(&*store, t(9, 0), &["secret plans"]).await[0].episode_id;
    let stranger = World::create(&*store, "globex").await;
    let foreign = stranger.tenant;

    assert_not_found(store.get_agent(foreign, owner.agent).await);
    assert_not_found(store.get_conversation(foreign, owner.conversation).await);
    assert_not_found(
        store
            .delete_conversation(foreign, owner.conversation, now())
            .await,
    );
    assert_not_found(store.get_episode(foreign, episode).await);
    assert_not_found(store.get_episode_with_messages(foreign, episode).await);
    let close = CloseEpisode {
        reason: EndReason::UserClosed,
        ended_at: None,
        summary: None,
    };
    assert_not_found(store.close_episode(foreign, episode, close, now()).await);
    assert_not_found(store.soft_delete_episode(foreign, episode, now()).await);
    assert_not_found(store.restore_episode(foreign, episode, now()).await);
    assert_not_found(store.purge_episode(foreign, episode).await);
    let summary = EpisodeSummary {
        summary: "x".into(),
        key_facts: vec![],
        embedding: None,
    };
    assert_not_found(
        store
            .set_episode_summary(foreign, episode, summary, now())
            .await,
    );
    let records = vec![text(Role::User, "intrusion", t(9, 1))];
    assert_not_found(
        store
            .append_messages(foreign, batch(owner.conversation, records))
            .await,
    );
    let mut hijacked = store.get_agent(owner.tenant, owner.agent).await.unwrap();
    hijacked.tenant_id = foreign;
    assert_not_found(store.update_agent(&hijacked).await);

    assert!(
        store
            .search_messages(foreign, &search("secret plans"))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .list_episodes(foreign, &EpisodeFilter::default())
            .await
            .unwrap()
            .is_empty()
    );
    let agents = store.list_agents(foreign, Page::default()).await.unwrap();
    assert!(agents.iter().all(|a| a.id != owner.agent));
    let conversations = store
        .list_conversations(foreign, &ConversationFilter::default())
        .await
        .unwrap();
    assert!(conversations.iter().all(|c| c.id != owner.conversation));

    // And the owner's data is intact after every attempt.
    let intact = store
        .get_episode_with_messages(owner.tenant, episode)
        .await
        .unwrap();
    assert!(intact.episode.is_open() && intact.episode.deleted_at.is_none());
    assert_eq!(intact.messages.len(), 1);
    assert_eq!(
        store
            .get_agent(owner.tenant, owner.agent)
            .await
            .unwrap()
            .tenant_id,
        owner.tenant
    );
}

pub async fn an_import_is_all_or_nothing(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let conversation = |user: &str| fixtures::conversation(world.tenant, world.agent, user);
    let sessions = vec![
        vec![
            text(Role::User, "monday question", t(9, 0)),
            text(Role::Assistant, "monday answer", t(9, 5)),
        ],
        vec![text(Role::User, "back a week later", t(10, 0))],
    ];
    let imported = conversation("bob");
    let (episodes, count) = store
        .import_conversation(world.tenant, &imported, sessions.clone(), now())
        .await
        .unwrap();
    assert_eq!((episodes.len(), count), (2, 3));
    let first = store.get_episode(world.tenant, episodes[0]).await.unwrap();
    assert_eq!(first.end_reason, Some(EndReason::Imported));
    assert_eq!(first.ended_at, Some(t(9, 5)), "closed at its last message");
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

pub async fn users_are_listed_per_agent_with_their_live_conversations(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let other = World::create(&*store, "globex").await;
    let second_agent = fixtures::agent(world.tenant, "sales");
    store.create_agent(&second_agent).await.unwrap();
    // alice has the world's conversation and one more; bob has one, and a
    // deleted one; carol talks to another agent only.
    let mut conversations = Vec::new();
    for (agent, user) in [
        (world.agent, "alice"),
        (world.agent, "bob"),
        (world.agent, "bob"),
        (second_agent.id, "carol"),
    ] {
        let conversation = fixtures::conversation(world.tenant, agent, user);
        store.create_conversation(&conversation).await.unwrap();
        conversations.push(conversation.id);
    }
    store
        .delete_conversation(world.tenant, conversations[2], now())
        .await
        .unwrap();
    // A later message makes alice's newest conversation her last activity.
    world.say(&*store, t(9, 0), &["hello"]).await;
    let spoken = store
        .get_conversation(world.tenant, world.conversation)
        .await
        .unwrap();

    let page = |limit, offset| Page { limit, offset };
    let users = store
        .list_users(world.tenant, world.agent, page(10, 0))
        .await
        .unwrap();
    let listed: Vec<(&str, u32)> = users
        .iter()
        .map(|u| (u.user_id.as_str(), u.conversation_count))
        .collect();
    assert_eq!(listed, [("alice", 2), ("bob", 1)]);
    assert!(users[0].last_active_at >= spoken.updated_at);
    let second_page = store
        .list_users(world.tenant, world.agent, page(1, 1))
        .await
        .unwrap();
    assert_eq!(second_page.len(), 1);
    assert_eq!(second_page[0].user_id, "bob");
    let sales = store
        .list_users(world.tenant, second_agent.id, page(10, 0))
        .await
        .unwrap();
    assert_eq!(sales.len(), 1);
    assert_eq!(sales[0].user_id, "carol");
    // Another tenant's key, with this tenant's agent or its own, sees only its own.
    assert_eq!(
        store
            .list_users(other.tenant, world.agent, page(10, 0))
            .await
            .unwrap(),
        []
    );
    let own = store
        .list_users(other.tenant, other.agent, page(10, 0))
        .await
        .unwrap();
    assert_eq!(own.len(), 1);
    assert_eq!(own[0].conversation_count, 1);
}
