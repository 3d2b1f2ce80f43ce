//! What only the PostgreSQL store promises: clear errors for bad
//! configuration.

use octopus_postgres::{PostgresOptions, PostgresStore, testing};
use sqlx_core::connection::Connection;
use sqlx_core::executor::Executor;

#[tokio::test]
async fn a_wrong_password_names_the_server_and_not_the_password() {
    let url = testing::server_url();
    let (_, rest) = url.split_once('@').unwrap();
    let wrong = format!("postgres://octopus:not-the-password@{rest}");
    let error = PostgresStore::connect(PostgresOptions::new(wrong))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("password authentication failed"), "{error}");
    assert!(error.contains(rest), "{error}");
    assert!(!error.contains("not-the-password"), "{error}");
}

#[tokio::test]
async fn an_unreachable_server_is_named() {
    let error = PostgresStore::connect(PostgresOptions::new(
        "postgres://octopus:pw@127.0.0.1:1/octopus",
    ))
    .await
    .err()
    .unwrap()
    .to_string();
    assert!(error.contains("127.0.0.1:1"), "{error}");
    assert!(error.contains("refused"), "{error}");
}

/// A role that may not create extensions, on a database without pgvector:
/// the error says pgvector is what is missing.
#[tokio::test]
async fn a_database_without_pgvector_says_so() {
    let database = testing::fresh_database().await;
    let (server, name) = database.rsplit_once('/').unwrap();
    let role = format!("plain_{}", &name[name.len() - 8..]);
    let mut admin = sqlx_postgres::PgConnection::connect(&database)
        .await
        .unwrap();
    admin
        .execute(format!("CREATE ROLE {role} LOGIN PASSWORD 'plain-pw'; GRANT ALL ON DATABASE {name} TO {role}; ALTER DATABASE {name} OWNER TO {role}").as_str())
        .await
        .unwrap();
    admin.close().await.unwrap();
    let (_, host) = server.split_once('@').unwrap();
    let as_plain = format!("postgres://{role}:plain-pw@{host}/{name}");
    let error = PostgresStore::connect(PostgresOptions::new(as_plain))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("pgvector"), "{error}");
    assert!(error.contains("CREATE EXTENSION vector"), "{error}");
}

/// Counts the events of sqlx's notice target: the server's NOTICEs.
#[derive(Default)]
struct Notices(std::sync::atomic::AtomicUsize);

impl tracing::Subscriber for Notices {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        if event.metadata().target().contains("notice") {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// A question of stop words made the server send a NOTICE per search, each
/// a log line (51,349 of them in two LoCoMo runs): now none comes back.
#[test]
fn searches_of_stop_words_log_nothing() {
    let notices = std::sync::Arc::new(Notices::default());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    tracing::subscriber::with_default(std::sync::Arc::clone(&notices), || {
        runtime.block_on(async {
            use octopus_core::store::{MessageSearch, TenantStore};
            let store =
                PostgresStore::connect(PostgresOptions::new(testing::fresh_database().await))
                    .await
                    .unwrap();
            let tenant = octopus_testkit::fixtures::tenant("acme");
            store.create_tenant(&tenant).await.unwrap();
            for _ in 0..3 {
                let query = octopus_testkit::fixtures::search("the and of");
                store.search_messages(tenant.id, &query).await.unwrap();
            }
        });
    });
    assert_eq!(notices.0.load(std::sync::atomic::Ordering::SeqCst), 0);
}

/// A store listening for queued work is told when another store (another
/// server) queues some, without polling.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_servers_queued_work_wakes_a_listener() {
    use octopus_core::store::{AgentStore, ConversationStore, MemoryStore, TenantStore};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let database = testing::fresh_database().await;
    let listening = PostgresStore::connect(PostgresOptions::new(database.clone()))
        .await
        .unwrap();
    let writing = PostgresStore::connect(PostgresOptions::new(database))
        .await
        .unwrap();
    let woken = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&woken);
    listening
        .watch_new_memory_jobs(Arc::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        }))
        .await
        .unwrap();
    let tenant = octopus_testkit::fixtures::tenant("acme");
    writing.create_tenant(&tenant).await.unwrap();
    let agent = octopus_testkit::fixtures::agent(tenant.id, "support");
    writing.create_agent(&agent).await.unwrap();
    let conversation = octopus_testkit::fixtures::conversation(tenant.id, agent.id, "dana");
    writing.create_conversation(&conversation).await.unwrap();
    // An append queues an embedding: the listener hears of it.
    let world = octopus_testkit::fixtures::World {
        tenant: tenant.id,
        agent: agent.id,
        conversation: conversation.id,
    };
    world
        .say(
            &writing,
            octopus_core::now(),
            &["a message worth embedding for recall"],
        )
        .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while woken.load(Ordering::SeqCst) == 0 {
        assert!(std::time::Instant::now() < deadline, "never woken");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// A memory worker completing a summary holds its job, then wants the
/// episode; forgetting the user holds the episode, then wants the job.
/// PostgreSQL breaks the deadlock by rolling one back: the erasure still
/// completes.
#[tokio::test]
async fn forgetting_a_user_completes_through_a_deadlock_with_the_memory_worker() {
    use octopus_core::episode::{CloseEpisode, EndReason};
    use octopus_core::forget::ForgetUser;
    use octopus_core::store::{EpisodeStore, Erasure};
    use octopus_testkit::fixtures::World;
    use sqlx_core::query_scalar::query_scalar;

    let url = testing::fresh_database().await;
    let store = PostgresStore::connect(PostgresOptions::new(url.clone()))
        .await
        .unwrap();
    let world = World::create(&store, "acme").await;
    let said = world
        .say(
            &store,
            chrono::Utc::now(),
            &["I live in Lyon", "near the river"],
        )
        .await;
    let episode = said[0].episode_id;
    let close = CloseEpisode {
        reason: EndReason::UserClosed,
        ended_at: None,
        summary: None,
    };
    store
        .close_episode(world.tenant, episode, close, chrono::Utc::now())
        .await
        .unwrap();

    // The worker's side: its summary job taken, as completing one begins.
    let mut worker = sqlx_postgres::PgConnection::connect(&url).await.unwrap();
    worker.execute("BEGIN").await.unwrap();
    let taken: Vec<i64> =
        query_scalar("DELETE FROM memory_jobs WHERE kind = 'summarise_episode' RETURNING seq")
            .fetch_all(&mut worker)
            .await
            .unwrap();
    assert_eq!(taken.len(), 1, "the close queued one summary");

    let forgetting = {
        let store = store.clone();
        let tenant = world.tenant;
        tokio::spawn(async move {
            let alice = ForgetUser {
                user_id: "alice".into(),
                agent_id: None,
            };
            store.forget_user(tenant, &alice).await
        })
    };
    // Until the erasure waits for the worker's job (it holds the episode).
    let mut watcher = sqlx_postgres::PgConnection::connect(&url).await.unwrap();
    loop {
        let waiting: i64 = query_scalar(
            "SELECT count(*) FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock'
               AND query LIKE 'DELETE FROM memory_jobs%'",
        )
        .fetch_one(&mut watcher)
        .await
        .unwrap();
        if waiting > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // The worker goes on to the episode: each now waits for the other.
    let stored =
        sqlx_core::query::query("UPDATE episodes SET summary = 'lives in Lyon' WHERE id = $1")
            .bind(episode.0)
            .execute(&mut worker)
            .await;
    match stored {
        Ok(_) => worker.execute("COMMIT").await.unwrap(),
        // PostgreSQL picked the worker: it lets go, and the erasure goes on.
        Err(_) => worker.execute("ROLLBACK").await.unwrap(),
    };

    let receipt = forgetting.await.unwrap().unwrap();
    assert_eq!(receipt.relational.messages, 2);
    let left: i64 = query_scalar("SELECT count(*) FROM messages")
        .fetch_one(&mut watcher)
        .await
        .unwrap();
    assert_eq!(left, 0, "nothing of alice's is left");
}

/// Agents stored with the three PII settings that became one are read in
/// its terms once the migration has run: each combination as the rules say.
#[tokio::test]
async fn the_migration_reads_the_earlier_pii_settings_as_one() {
    use octopus_core::store::{AgentStore, TenantStore};
    let url = testing::fresh_database().await;
    let store = PostgresStore::connect(PostgresOptions::new(url.clone()))
        .await
        .unwrap();
    let tenant = octopus_testkit::fixtures::tenant("acme");
    store.create_tenant(&tenant).await.unwrap();
    let cases = octopus_testkit::fixtures::earlier_pii_settings();
    let mut conn = sqlx_postgres::PgConnection::connect(&url).await.unwrap();
    let mut agents = Vec::new();
    for (i, (earlier, policy)) in cases.iter().enumerate() {
        let agent = octopus_testkit::fixtures::agent(tenant.id, &format!("agent{i}"));
        store.create_agent(&agent).await.unwrap();
        // As an agent was stored before: the three settings, no `pii`.
        sqlx_core::query::query(
            "UPDATE agents SET memory_config = (memory_config - 'pii') || $1::jsonb WHERE id = $2",
        )
        .bind(*earlier)
        .bind(agent.id.0)
        .execute(&mut conn)
        .await
        .unwrap();
        agents.push((agent.id, *earlier, *policy));
    }
    conn.execute(include_str!("../../migrations/0015_one_pii_setting.sql"))
        .await
        .unwrap();
    for (id, earlier, policy) in agents {
        let agent = store.get_agent(tenant.id, id).await.unwrap();
        assert_eq!(agent.memory.pii, policy, "{earlier}");
    }
}
