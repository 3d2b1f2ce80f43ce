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
