//! The console's assets: served without a key (they hold no data), each with
//! its type, and under a policy that lets only the console's own script and
//! style run and the page talk only to this server.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use tower::ServiceExt;

use crate::harness::TestServer;

async fn get(server: &TestServer, path: &str) -> (StatusCode, axum::http::HeaderMap, String) {
    let request = Request::get(path).body(Body::empty()).unwrap();
    let response = server.app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    (status, headers, String::from_utf8(bytes.to_vec()).unwrap())
}

#[tokio::test]
async fn the_console_is_served_without_a_key_under_a_strict_policy() {
    let server = TestServer::start().await;
    let (status, headers, page) = get(&server, "/console").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_TYPE], "text/html; charset=utf-8");
    let policy = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(policy.contains(directive), "{policy}");
    }
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    assert!(page.contains(r#"<script type="module" src="/console/console.js">"#));
    assert!(
        !page.contains("<script>"),
        "no inline script: the policy would refuse it"
    );

    for (path, kind) in [
        ("/console/console.js", "text/javascript; charset=utf-8"),
        ("/console/console.css", "text/css; charset=utf-8"),
    ] {
        let (status, headers, body) = get(&server, path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(headers[header::CONTENT_TYPE], kind, "{path}");
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert!(!body.is_empty());
    }
    let (status, _, body) = get(&server, "/console/secrets.json").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("route_not_found"), "{body}");
    assert_eq!(
        octopus_server::console::EMBEDDED_BYTES,
        page.len()
            + get(&server, "/console/console.js").await.2.len()
            + get(&server, "/console/console.css").await.2.len()
    );
}

#[tokio::test]
async fn a_browser_sent_to_the_servers_address_finds_the_console() {
    let server = TestServer::start().await;
    let (status, headers, _) = get(&server, "/").await;
    assert_eq!(status, StatusCode::TEMPORARY_REDIRECT);
    assert_eq!(headers[header::LOCATION], "/console");
}
