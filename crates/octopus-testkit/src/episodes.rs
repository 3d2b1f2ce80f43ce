//! Episodes once stored: read back whole after reopening, listed with
//! filters, soft-deleted, restored and purged.

use octopus_core::DomainCode;

use octopus_core::episode::{CloseEpisode, EndReason, EpisodeFilter, EpisodeSummary};
use octopus_core::message::{ContentPart, ImageUrl, MessageContent, Role, ToolCallRecord};
use octopus_core::store::Page;
use octopus_core::{Error, now};
use serde_json::json;

use crate::Backend;
use crate::fixtures::{self, World, batch, search, text};

pub async fn restoring_a_live_episode_is_a_conflict(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let episode = world
        .say(&*store, fixtures::at(9, 0), &["still here"])
        .await[0]
        .episode_id;
    match store.restore_episode(world.tenant, episode, now()).await {
        Err(Error::Conflict {
            code: DomainCode::EpisodeLive,
            ..
        }) => {}
        other => panic!("expected episode_live, got {other:?}"),
    }
    let stranger = World::create(&*store, "stranger").await;
    fixtures::assert_not_found(store.restore_episode(stranger.tenant, episode, now()).await);
}

pub async fn every_field_survives_reopening(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let helper = fixtures::agent(world.tenant, "billing");
    store.create_agent(&helper).await.unwrap();

    let mut multipart = text(Role::User, "", fixtures::at(9, 0));
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

    let mut call = text(Role::Assistant, "", fixtures::at(9, 1));
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
    let mut result = text(Role::Tool, "shipped", fixtures::at(9, 2));
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
        fixtures::at(9, 3),
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
        ended_at: Some(fixtures::at(9, 4)),
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
    assert_eq!(after.episode.ended_at, Some(fixtures::at(9, 4)));
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
        .say(&*store, fixtures::at(9, 0), &["my zebra password leaked"])
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
    fixtures::assert_not_found(store.get_episode(world.tenant, episode).await);
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
    let next = world
        .say(&*store, fixtures::at(9, 1), &["hello again"])
        .await[0]
        .episode_id;
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
    fixtures::assert_not_found(store.restore_episode(world.tenant, episode, now()).await);
    fixtures::assert_not_found(store.purge_episode(world.tenant, episode).await);
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

/// Episodes read together: the tenant's live ones among the ids, in the
/// order asked, each once; another tenant's, a deleted one and an unknown
/// id left out.
pub async fn live_episodes_are_read_together_in_the_order_asked(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let first = world.say(&*store, fixtures::at(9, 0), &["hello"]).await[0].episode_id;
    store
        .close_episode(world.tenant, first, closed(), now())
        .await
        .unwrap();
    let second = world.say(&*store, fixtures::at(10, 0), &["again"]).await[0].episode_id;
    store
        .close_episode(world.tenant, second, closed(), now())
        .await
        .unwrap();
    let deleted = world.say(&*store, fixtures::at(11, 0), &["gone"]).await[0].episode_id;
    store
        .soft_delete_episode(world.tenant, deleted, now())
        .await
        .unwrap();
    let other = World::create(&*store, "globex").await;
    let foreign = other.say(&*store, fixtures::at(9, 0), &["theirs"]).await[0].episode_id;
    let unknown = octopus_core::EpisodeId::new();

    let asked = [second, foreign, first, deleted, unknown, second];
    let found: Vec<_> = store
        .get_episodes(world.tenant, &asked)
        .await
        .unwrap()
        .into_iter()
        .map(|episode| (episode.id, episode.tenant_id))
        .collect();
    assert_eq!(
        found,
        [(second, world.tenant), (first, world.tenant)],
        "live episodes of the tenant, in the order asked, each once"
    );
    assert!(
        store
            .get_episodes(world.tenant, &[])
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .get_episodes(other.tenant, &asked)
            .await
            .unwrap()
            .iter()
            .map(|episode| episode.id)
            .collect::<Vec<_>>(),
        [foreign]
    );
}

fn closed() -> CloseEpisode {
    CloseEpisode {
        reason: EndReason::UserClosed,
        ended_at: None,
        summary: None,
    }
}

pub async fn purge_requires_soft_delete(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let episode = world.say(&*store, fixtures::at(9, 0), &["keep me"]).await[0].episode_id;
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

pub async fn episodes_list_with_filters(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let morning = world.say(&*store, fixtures::at(9, 0), &["a"]).await[0].episode_id;
    let afternoon = world.say(&*store, fixtures::at(14, 0), &["b"]).await[0].episode_id; // past the idle timeout
    let bob = fixtures::conversation(world.tenant, world.agent, "bob");
    store.create_conversation(&bob).await.unwrap();
    let bobs = store
        .append_messages(
            world.tenant,
            batch(bob.id, vec![text(Role::User, "c", fixtures::at(11, 0))]),
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
        from: Some(fixtures::at(10, 0)),
        to: Some(fixtures::at(14, 0)),
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
