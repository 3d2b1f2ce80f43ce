//! Tenants, API keys and agents: each tenant sees only its own, and names
//! are unique where they must be.

use octopus_core::DomainCode;

use octopus_core::conversation::ConversationFilter;
use octopus_core::episode::{CloseEpisode, EndReason, EpisodeFilter, EpisodeSummary};
use octopus_core::message::Role;
use octopus_core::store::Page;
use octopus_core::tenant::{ApiKey, KeyHash};
use octopus_core::{ApiKeyId, EpisodeId, Error, now};

use crate::Backend;
use crate::fixtures::{self, World, batch, search, text};

/// A store answers that it is ready and names what it is made of, for a
/// server's status.
pub async fn a_store_is_ready_and_names_its_backends(backend: &impl Backend) {
    let store = backend.open().await;
    store.ready().await.unwrap();
    let backends = store.backends();
    assert!(
        ["sqlite", "postgres"].contains(&backends.database),
        "{backends:?}"
    );
    assert!(
        ["embedded", "pgvector", "qdrant"].contains(&backends.vectors),
        "{backends:?}"
    );
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
    fixtures::assert_not_found(store.create_api_key(&orphan).await);

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
    fixtures::assert_not_found(store.get_agent(other.tenant, world.agent).await);
}

pub async fn deleted_agents_are_not_found_and_free_their_name(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let stranger = World::create(&*store, "stranger").await;
    fixtures::assert_not_found(
        store
            .delete_agent(stranger.tenant, world.agent, now())
            .await,
    );
    store.get_agent(world.tenant, world.agent).await.unwrap();

    store
        .delete_agent(world.tenant, world.agent, now())
        .await
        .unwrap();
    fixtures::assert_not_found(store.get_agent(world.tenant, world.agent).await);
    fixtures::assert_not_found(store.delete_agent(world.tenant, world.agent, now()).await);
    let mut agent = fixtures::agent(world.tenant, "support");
    agent.id = world.agent;
    fixtures::assert_not_found(store.update_agent(&agent).await);
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

pub async fn foreign_tenant_sees_nothing(backend: &impl Backend) {
    let store = backend.open().await;
    let owner = World::create(&*store, "acme").await;
    let episode: EpisodeId = owner
        .say(&*store, fixtures::at(9, 0), &["secret plans"])
        .await[0]
        .episode_id;
    let stranger = World::create(&*store, "globex").await;
    let foreign = stranger.tenant;

    fixtures::assert_not_found(store.get_agent(foreign, owner.agent).await);
    fixtures::assert_not_found(store.get_conversation(foreign, owner.conversation).await);
    fixtures::assert_not_found(
        store
            .delete_conversation(foreign, owner.conversation, now())
            .await,
    );
    fixtures::assert_not_found(store.get_episode(foreign, episode).await);
    fixtures::assert_not_found(store.get_episode_with_messages(foreign, episode).await);
    let close = CloseEpisode {
        reason: EndReason::UserClosed,
        ended_at: None,
        summary: None,
    };
    fixtures::assert_not_found(store.close_episode(foreign, episode, close, now()).await);
    fixtures::assert_not_found(store.soft_delete_episode(foreign, episode, now()).await);
    fixtures::assert_not_found(store.restore_episode(foreign, episode, now()).await);
    fixtures::assert_not_found(store.purge_episode(foreign, episode).await);
    let summary = EpisodeSummary {
        summary: "x".into(),
        key_facts: vec![],
        embedding: None,
    };
    fixtures::assert_not_found(
        store
            .set_episode_summary(foreign, episode, summary, now())
            .await,
    );
    let records = vec![text(Role::User, "intrusion", fixtures::at(9, 1))];
    fixtures::assert_not_found(
        store
            .append_messages(foreign, batch(owner.conversation, records))
            .await,
    );
    let mut hijacked = store.get_agent(owner.tenant, owner.agent).await.unwrap();
    hijacked.tenant_id = foreign;
    fixtures::assert_not_found(store.update_agent(&hijacked).await);

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

/// A user's activity with an agent counts their live conversations, the
/// live episodes and messages of those, and nothing of a deleted
/// conversation, another user, another agent or another tenant; a user
/// with no live conversation has none.
pub async fn a_users_activity_counts_their_live_conversations_only(backend: &impl Backend) {
    let store = backend.open().await;
    let world = World::create(&*store, "acme").await;
    let other = World::create(&*store, "globex").await;
    let sales = fixtures::agent(world.tenant, "sales");
    store.create_agent(&sales).await.unwrap();
    let talk = |conversation, hour, texts: &[&str]| {
        let records = texts
            .iter()
            .enumerate()
            .map(|(i, t)| text(Role::User, t, fixtures::at(hour, i as u32)))
            .collect();
        batch(conversation, records)
    };
    // alice: two messages in the world's conversation; three in another,
    // over two episodes (one closed); one in a conversation she deleted;
    // one with the other agent. bob: one. globex's alice: one.
    store
        .append_messages(world.tenant, talk(world.conversation, 9, &["a", "b"]))
        .await
        .unwrap();
    let second = fixtures::conversation(world.tenant, world.agent, "alice");
    store.create_conversation(&second).await.unwrap();
    let first_episode = store
        .append_messages(world.tenant, talk(second.id, 10, &["c"]))
        .await
        .unwrap()[0]
        .episode_id;
    store
        .close_episode(
            world.tenant,
            first_episode,
            CloseEpisode {
                reason: EndReason::UserClosed,
                ended_at: None,
                summary: None,
            },
            fixtures::at(10, 30),
        )
        .await
        .unwrap();
    store
        .append_messages(world.tenant, talk(second.id, 11, &["d", "e"]))
        .await
        .unwrap();
    let deleted = fixtures::conversation(world.tenant, world.agent, "alice");
    store.create_conversation(&deleted).await.unwrap();
    store
        .append_messages(world.tenant, talk(deleted.id, 12, &["gone"]))
        .await
        .unwrap();
    store
        .delete_conversation(world.tenant, deleted.id, now())
        .await
        .unwrap();
    for (tenant, agent, user) in [
        (world.tenant, sales.id, "alice"),
        (world.tenant, world.agent, "bob"),
        (other.tenant, other.agent, "alice"),
    ] {
        let conversation = fixtures::conversation(tenant, agent, user);
        store.create_conversation(&conversation).await.unwrap();
        store
            .append_messages(tenant, talk(conversation.id, 13, &["elsewhere"]))
            .await
            .unwrap();
    }

    let activity = store
        .user_activity(world.tenant, world.agent, "alice")
        .await
        .unwrap()
        .expect("alice has talked to the agent");
    assert_eq!(
        (activity.conversations, activity.episodes, activity.messages),
        (2, 3, 5)
    );
    let live = [
        store
            .get_conversation(world.tenant, world.conversation)
            .await
            .unwrap(),
        store
            .get_conversation(world.tenant, second.id)
            .await
            .unwrap(),
    ];
    assert_eq!(
        activity.first_seen_at,
        live.iter().map(|c| c.created_at).min().unwrap()
    );
    assert_eq!(
        activity.last_active_at,
        live.iter().map(|c| c.updated_at).max().unwrap()
    );
    let bob = store
        .user_activity(world.tenant, world.agent, "bob")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((bob.conversations, bob.episodes, bob.messages), (1, 1, 1));
    for (tenant, agent, user) in [
        (world.tenant, world.agent, "carol"),
        (other.tenant, world.agent, "alice"),
        (world.tenant, other.agent, "alice"),
    ] {
        assert_eq!(
            store.user_activity(tenant, agent, user).await.unwrap(),
            None,
            "{user} of {agent} in {tenant}"
        );
    }
    // A user whose every conversation is deleted has none.
    store
        .delete_conversation(world.tenant, world.conversation, now())
        .await
        .unwrap();
    store
        .delete_conversation(world.tenant, second.id, now())
        .await
        .unwrap();
    assert_eq!(
        store
            .user_activity(world.tenant, world.agent, "alice")
            .await
            .unwrap(),
        None
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
    world.say(&*store, fixtures::at(9, 0), &["hello"]).await;
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
