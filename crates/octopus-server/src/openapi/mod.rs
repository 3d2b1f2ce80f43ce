//! The OpenAPI document, made from the code so that it cannot promise what the
//! server does not do:
//!
//! - the routes, their parameters and bodies come from the handlers
//!   (`utoipa_axum::routes!`);
//! - every error a route can answer is declared from the table of error codes
//!   ([`ErrorCode`]): what every route shares (authentication, malformed ids,
//!   bodies and queries) by the route's shape, and its own (conflicts, quotas,
//!   the embedder) from [`errors`];
//! - every limit the server enforces is stated on its field, from the same
//!   constants and settings the validation reads ([`bounds`]).
//!
//! Timestamps are bounded relative to now, so the document is made per
//! request; it takes well under a millisecond.

mod bounds;
mod errors;
mod instants;

use chrono::{DateTime, Utc};
use octopus_engine::Limits;
use serde_json::{Value, json};

/// The whole document, as of `now`.
pub(crate) fn document(limits: &Limits, now: DateTime<Utc>) -> Value {
    let mut doc =
        serde_json::to_value(crate::routes::router().into_openapi()).unwrap_or_else(|_| json!({}));
    share_list_items(&mut doc);
    bounds::declare_bounds(&mut doc, limits, now);
    errors::declare_errors(&mut doc);
    doc
}

/// Points each list (`Items_Agent`, ...) at its item's own schema: utoipa
/// writes a copy of the item into every list, and a generated client would
/// then have two types for one thing (an `Agent`, and the anonymous item of
/// a list of agents).
fn share_list_items(doc: &mut Value) {
    let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let lists: Vec<String> = schemas
        .keys()
        .filter(|name| name.starts_with("Items_"))
        .cloned()
        .collect();
    for list in lists {
        let item = list["Items_".len()..].to_owned();
        let reference = json!({ "$ref": format!("#/components/schemas/{item}") });
        let Some(inline) = schemas[&list].pointer_mut("/properties/items/items") else {
            continue;
        };
        let copy = std::mem::replace(inline, reference);
        // An item no route names by itself is known only from its lists.
        schemas.entry(item).or_insert(copy);
    }
}
