//! What only the PostgreSQL store promises: clear errors for bad
//! configuration, and work shared by several processes.

use octopus_postgres::{PostgresOptions, PostgresStore};

use crate::server_url;

#[tokio::test]
async fn a_wrong_password_is_named_with_the_server_but_not_the_password() {
    let url = server_url().unwrap();
    let (_, rest) = url.split_once('@').unwrap();
    let wrong = format!("postgres://octopus:not-the-password@{rest}");
    let error = PostgresStore::connect(PostgresOptions::new(wrong))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains(rest), "{error}");
    assert!(!error.contains("not-the-password"), "{error}");
}
