//! A search's words travel in its URL, which the server reads up to 64 KiB:
//! the longest `q` the API declares arrives over a real connection, however
//! many bytes its characters take, and a longer one is a 422 naming `q`.

use reqwest::{Method, StatusCode};

use crate::process::Server;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_longest_declared_search_reaches_the_server_in_four_byte_characters() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("data"));
    let (key, _, _) = server.seed(1).await;
    let max = octopus_core::search::MAX_SEARCH_QUERY_CHARS;
    let search = |chars: usize| {
        let q = "𝄞".repeat(chars);
        server
            .client()
            .request(Method::GET, format!("{}/v1/messages/search", server.url))
            .query(&[("q", q.as_str()), ("limit", "5")])
            .bearer_auth(&key)
            .send()
    };
    let longest = search(max).await.unwrap();
    assert_eq!(longest.status(), StatusCode::OK);
    let longer = search(max + 1).await.unwrap();
    assert_eq!(longer.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: serde_json::Value = longer.json().await.unwrap();
    assert_eq!(body["error"]["field"], "q", "{body}");
}
