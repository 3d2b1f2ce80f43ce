//! The Rust client's table of operations (`octopus-client`'s
//! `operations.rs`) is generated from this server's OpenAPI document: the
//! test fails when the file is not what the document gives today, and
//! `OCTOPUS_BLESS=1` writes it anew. So no Rust caller of the API spells a
//! method or a path the server does not serve.

use std::path::Path;

use axum::http::Method;
use serde_json::Value;

use crate::harness::TestServer;

const HEADER: &str = "//! Every operation of Octopus's HTTP API, generated from the server's
//! OpenAPI document by a test of octopus-server (`tests/it/client_operations.rs`);
//! `OCTOPUS_BLESS=1 cargo test -p octopus-server client_operations` writes it
//! again. Do not edit by hand.

use crate::{Method, Operation};
";

/// The file's text for `doc`: a constant per operation, named after its
/// `operationId`, in the order of the paths, and the list of them all.
fn generate(doc: &Value) -> String {
    let mut operations = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            if method.parse::<Method>().is_err() && method.to_uppercase().parse::<Method>().is_err()
            {
                continue;
            }
            let id = operation["operationId"].as_str().unwrap().to_owned();
            let summary = operation["summary"]
                .as_str()
                .or_else(|| operation["description"].as_str())
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            operations.push((id, method.to_uppercase(), path.clone(), summary));
        }
    }
    operations.sort_by(|a, b| (&a.2, &a.1).cmp(&(&b.2, &b.1)));
    let mut out = String::from(HEADER);
    for (id, method, path, summary) in &operations {
        out.push('\n');
        if !summary.is_empty() {
            out.push_str(&format!("/// {summary}\n"));
        }
        out.push_str(&format!(
            "pub const {}: Operation = Operation::new({id:?}, Method::{method}, {path:?});\n",
            id.to_uppercase()
        ));
    }
    out.push_str("\n/// Every operation above.\npub const ALL: &[Operation] = &[\n");
    for (id, ..) in &operations {
        out.push_str(&format!("    {},\n", id.to_uppercase()));
    }
    out.push_str("];\n");
    out
}

#[tokio::test]
async fn client_operations_are_the_openapi_documents() {
    let server = TestServer::start().await;
    let doc = server
        .raw(Method::GET, "/openapi.json", None, None)
        .await
        .body;
    let generated = generate(&doc);
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../octopus-client/src/operations.rs");
    let written = std::fs::read_to_string(&file).unwrap_or_default();
    if written == generated {
        return;
    }
    if std::env::var_os("OCTOPUS_BLESS").is_some() {
        std::fs::write(&file, generated).unwrap();
        return;
    }
    panic!(
        "crates/octopus-client/src/operations.rs is not what /openapi.json gives: run OCTOPUS_BLESS=1 cargo test -p octopus-server client_operations"
    );
}
