//! The web console, for people: a page and its script and style, embedded in
//! the binary and served at `/console`. The assets hold no data and need no
//! key; the page signs in with a key the person types, keeps it in the tab's
//! session storage, and reads everything through the API, where every
//! request is checked like any other client's.

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

const PAGE: &str = include_str!("../console/index.html");
const SCRIPT: &str = include_str!("../console/console.js");
const STYLE: &str = include_str!("../console/console.css");

/// Bytes the console adds to the binary.
pub const EMBEDDED_BYTES: usize = PAGE.len() + SCRIPT.len() + STYLE.len();

/// Only the console's own script and style run, and the page talks to this
/// server alone; no other site may frame it.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     connect-src 'self'; img-src 'self' data: blob:; form-action 'none'; \
     frame-ancestors 'none'; base-uri 'none'";

pub(crate) fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        // A browser sent to the server's address finds the console.
        .route("/", get(|| async { Redirect::temporary("/console") }))
        .route(
            "/console",
            get(|| async { asset(PAGE, "text/html; charset=utf-8") }),
        )
        .route(
            "/console/",
            get(|| async { Redirect::permanent("/console") }),
        )
        .route(
            "/console/console.js",
            get(|| async { asset(SCRIPT, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/console/console.css",
            get(|| async { asset(STYLE, "text/css; charset=utf-8") }),
        )
}

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    // The assets change with the binary; a browser asks again each time.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
