//! The errors each operation declares: what every route shares by its shape
//! (authentication, malformed ids, bodies and queries), and what is its own
//! (conflicts, quotas, providers), from the server's table of error codes.

use serde_json::{Map, Value, json};

use crate::error::ErrorCode;

use ErrorCode as E;

const EMBEDDING: [ErrorCode; 3] = [
    E::EmbeddingUnavailable,
    E::EmbeddingProviderFailed,
    E::EmbeddingProviderBusy,
];

/// The errors particular to each route, by its operation ids; a route
/// declares what every row naming it lists. A test holds
/// every id here to an operation of the document, so that a renamed handler
/// cannot quietly lose its errors.
const ROUTE_ERRORS: &[(&[&str], &[ErrorCode])] = &[
    (&["create_webhook"], &[E::TenantLimitReached]),
    (&["create_agent", "update_agent"], &[E::AgentNameTaken]),
    (&["create_conversation"], &[E::AgentInactive]),
    (
        &["import_conversation"],
        &[E::AgentInactive, E::QuotaExceeded, E::SpeakerNotFound],
    ),
    (&["import_chats"], &[E::AgentInactive, E::QuotaExceeded]),
    (
        &["append_messages"],
        &[
            E::AgentInactive,
            E::AgentDeleted,
            E::ConversationDeleted,
            E::QuotaExceeded,
            E::SpeakerNotFound,
        ],
    ),
    (
        &["build_context"],
        &[
            E::AgentInactive,
            E::AgentDeleted,
            E::EmbeddingUnavailable,
            E::EmbeddingProviderFailed,
            E::EmbeddingProviderBusy,
        ],
    ),
    (
        &["ingest_document"],
        &[
            E::AgentInactive,
            E::QuotaExceeded,
            E::CollectionMismatch,
            E::EmbeddingUnavailable,
            E::EmbeddingProviderFailed,
            E::EmbeddingProviderBusy,
        ],
    ),
    (&["search_knowledge", "recall"], &EMBEDDING),
    (
        &["create_procedure"],
        &[
            E::ProcedureNameTaken,
            E::TenantLimitReached,
            E::EmbeddingUnavailable,
            E::EmbeddingProviderFailed,
            E::EmbeddingProviderBusy,
        ],
    ),
    (
        &["update_procedure"],
        &[
            E::ProcedureNameTaken,
            E::TenantLimitReached,
            E::EmbeddingUnavailable,
            E::EmbeddingProviderFailed,
            E::EmbeddingProviderBusy,
        ],
    ),
    (
        &["approve_procedure"],
        &[
            E::NoPendingVersion,
            E::ProcedureNameTaken,
            E::TenantLimitReached,
        ],
    ),
    (
        &["reject_procedure"],
        &[E::NoPendingVersion, E::ProcedureNameTaken],
    ),
    (
        &["rollback_procedure"],
        &[
            E::ProcedureVersionNotFound,
            E::VersionNotApproved,
            E::ProcedureNameTaken,
            E::TenantLimitReached,
        ],
    ),
    (
        &["propose_procedure"],
        &[
            E::NoToolCalls,
            E::TenantLimitReached,
            E::AgentNotFound,
            E::EmbeddingUnavailable,
            E::EmbeddingProviderFailed,
            E::EmbeddingProviderBusy,
            E::LlmProviderFailed,
            E::LlmProviderBusy,
            E::LlmNotConfigured,
        ],
    ),
    (
        &["take_turn", "chat_completion"],
        &[
            E::AgentInactive,
            E::AgentDeleted,
            E::ConversationDeleted,
            E::QuotaExceeded,
            E::NoPendingToolCalls,
            E::ToolResultsMismatch,
            E::ConversationMoved,
            E::EmbeddingUnavailable,
            E::EmbeddingProviderFailed,
            E::EmbeddingProviderBusy,
            E::LlmProviderFailed,
            E::LlmProviderBusy,
            E::LlmNotConfigured,
        ],
    ),
    // The completion names its agent and conversation in the body, not the path.
    (
        &["chat_completion"],
        &[E::AgentNotFound, E::ConversationNotFound],
    ),
    (
        &["delete_chunk"],
        &[E::ChunkNotFound, E::CollectionNotFound],
    ),
    (&["read_document"], &[E::DocumentNotFound]),
    (&["close_episode"], &[E::EpisodeClosed]),
    (
        &["correct_fact"],
        &[E::FactReplaced, E::CorrectionBeforeFact],
    ),
    (&["add_fact"], &[E::UnknownFactCategory, E::FactKeyTaken]),
    (&["restore_episode"], &[E::EpisodeLive]),
    (&["purge_episode"], &[E::EpisodeNotDeleted]),
    (
        &["import_dump"],
        &[
            E::ImportConflict,
            E::ProcedureNameTaken,
            E::CollectionMismatch,
            E::EmbeddingUnavailable,
            E::EmbeddingProviderFailed,
            E::EmbeddingProviderBusy,
        ],
    ),
    (&["metrics"], &[E::Unavailable]),
];

/// The errors particular to one route, by its operation id.
fn route_errors(operation: &str) -> impl Iterator<Item = ErrorCode> + '_ {
    ROUTE_ERRORS
        .iter()
        .filter(move |(operations, _)| operations.contains(&operation))
        .flat_map(|(_, codes)| codes.iter().copied())
}

/// What a parameter or body field naming an object can answer when there is
/// no such object (for this tenant).
fn not_found_by_name(name: &str) -> Option<ErrorCode> {
    Some(match name {
        "agent_id" => ErrorCode::AgentNotFound,
        "conversation_id" => ErrorCode::ConversationNotFound,
        "episode_id" => ErrorCode::EpisodeNotFound,
        "tenant_id" => ErrorCode::TenantNotFound,
        "key_id" => ErrorCode::ApiKeyNotFound,
        "procedure_id" => ErrorCode::ProcedureNotFound,
        "fact_id" => ErrorCode::FactNotFound,
        "message_id" => ErrorCode::MessageNotFound,
        "webhook_id" => ErrorCode::WebhookNotFound,
        _ => return None,
    })
}

/// Declares, on every operation, each error status it can answer, with the
/// codes behind it.
pub(super) fn declare_errors(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for operations in paths.values_mut() {
        let Some(operations) = operations.as_object_mut() else {
            continue;
        };
        for operation in operations.values_mut() {
            let codes = operation_errors(operation);
            let responses = operation
                .as_object_mut()
                .and_then(|o| o.get_mut("responses"))
                .and_then(Value::as_object_mut);
            if let Some(responses) = responses {
                declare_responses(responses, &codes);
            }
        }
    }
}

fn operation_errors(operation: &Value) -> Vec<ErrorCode> {
    use ErrorCode as E;
    let mut codes = Vec::new();
    let secured = operation.get("security").is_some();
    if secured {
        let admin = operation["tags"]
            .as_array()
            .is_some_and(|tags| tags.iter().any(|tag| tag == "admin"));
        codes.extend([
            E::Unauthenticated,
            if admin {
                E::AdminOnly
            } else {
                E::TenantKeyRequired
            },
            E::Internal,
            // The database (or another server the store needs) out of reach.
            E::Unavailable,
        ]);
    }
    let parameters = operation["parameters"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for parameter in &parameters {
        let name = parameter["name"].as_str().unwrap_or_default();
        match parameter["in"].as_str() {
            Some("path") => codes.push(E::InvalidId),
            Some("query") => codes.extend([E::InvalidQuery, E::InvalidRequest]),
            _ => {}
        }
        codes.extend(not_found_by_name(name));
    }
    if operation.get("requestBody").is_some() {
        codes.extend([
            E::MalformedJson,
            E::UnreadableBody,
            E::BodyTooLarge,
            E::UnsupportedMediaType,
            E::InvalidRequest,
            E::RequestTimeout,
            E::ServerBusy,
        ]);
        // Bodies name agents (a conversation's, a message's speaker).
        codes.push(E::AgentNotFound);
    }
    let id = operation["operationId"].as_str().unwrap_or_default();
    codes.extend(route_errors(id));
    codes.sort_by_key(|code| (code.status().as_u16(), code.as_str()));
    codes.dedup();
    codes
}

fn declare_responses(responses: &mut Map<String, Value>, codes: &[ErrorCode]) {
    let mut by_status: Vec<(u16, Vec<ErrorCode>)> = Vec::new();
    for &code in codes {
        let status = code.status().as_u16();
        match by_status.last_mut() {
            Some((last, group)) if *last == status => group.push(code),
            _ => by_status.push((status, vec![code])),
        }
    }
    for (status, group) in by_status {
        let description = group
            .iter()
            .map(|code| format!("`{}`: {}", code.as_str(), code.meaning()))
            .collect::<Vec<_>>()
            .join("; ");
        let mut response = json!({
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
        });
        if group.iter().any(|code| {
            matches!(
                code,
                ErrorCode::QuotaExceeded | ErrorCode::EmbeddingProviderBusy | ErrorCode::ServerBusy
            )
        }) {
            response["headers"] = json!({"retry-after": {
                "description": "Seconds to wait before trying again.",
                "schema": {"type": "integer", "minimum": 1},
            }});
        }
        responses.insert(status.to_string(), response);
    }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use octopus_engine::Limits;

    use super::*;

    #[test]
    fn every_secured_route_declares_401_and_bodies_declare_400_413_415_422() {
        let doc = super::super::document(&Limits::default(), Utc::now());
        for (path, operations) in doc["paths"].as_object().unwrap() {
            for (method, operation) in operations.as_object().unwrap() {
                let responses = &operation["responses"];
                if operation.get("security").is_some() {
                    assert!(responses.get("401").is_some(), "{method} {path}");
                    assert!(responses.get("500").is_some(), "{method} {path}");
                }
                if operation.get("requestBody").is_some() {
                    for status in ["400", "408", "413", "415", "422"] {
                        assert!(responses.get(status).is_some(), "{method} {path} {status}");
                    }
                }
            }
        }
        let append =
            &doc["paths"]["/v1/conversations/{conversation_id}/messages"]["post"]["responses"];
        assert!(append["429"]["headers"]["retry-after"].is_object());
        assert!(
            append["410"]["description"]
                .as_str()
                .unwrap()
                .contains("conversation_deleted")
        );
    }

    #[test]
    fn every_operation_with_errors_of_its_own_exists() {
        let doc = super::super::document(&Limits::default(), Utc::now());
        let operations: Vec<&str> = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|methods| methods.as_object().unwrap().values())
            .filter_map(|operation| operation["operationId"].as_str())
            .collect();
        for (ids, _) in ROUTE_ERRORS {
            for id in *ids {
                assert!(
                    operations.contains(id),
                    "no operation `{id}`: was its handler renamed?"
                );
            }
        }
    }
}
