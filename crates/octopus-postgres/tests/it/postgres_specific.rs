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
