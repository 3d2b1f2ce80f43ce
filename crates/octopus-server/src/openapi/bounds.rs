//! The limits the server enforces, stated on each field of the document from
//! the same constants and settings the validation reads.

use chrono::{DateTime, Days, Utc};
use octopus_core::agent::{
    MAX_FACT_CATEGORIES, MAX_FACT_CATEGORY_CHARS, MAX_FACT_INSTRUCTIONS_CHARS,
    MAX_IDLE_TIMEOUT_SECS, MAX_SYSTEM_PROMPT_CHARS,
};
use octopus_core::bounds::{
    MAX_CATEGORY_CHARS, MAX_MODEL_NAME_CHARS, MAX_QUERY_CHARS, MAX_SOURCE_CHARS,
    MAX_TOOL_NAME_CHARS, MAX_URL_CHARS, NO_NUL_PATTERN, NOT_BLANK_NO_NUL_PATTERN,
    NOT_BLANK_PATTERN,
};
use octopus_core::conversation::{MAX_IMPORT_SESSIONS, MAX_TITLE_CHARS, MAX_USER_ID_CHARS};
use octopus_core::episode::{MAX_KEY_FACT_CHARS, MAX_KEY_FACTS, MAX_SUMMARY_CHARS};
use octopus_core::fact::{MAX_FACT_CHARS, MAX_KEY_CHARS, MAX_REASON_CHARS};
use octopus_core::knowledge::MAX_TOP_K;
use octopus_core::message::MAX_PARTICIPANT_NAME_CHARS;
use octopus_core::procedure;
use octopus_core::recall::{MAX_NEIGHBOURS, MAX_RECALL_TOP_K};
use octopus_core::search::MAX_SEARCH_LIMIT;
use octopus_core::store::Page;
use octopus_core::tenant::MAX_NAME_CHARS;
use octopus_engine::Limits;
use serde_json::{Value, json};

use super::instants::instant_pattern;

/// Days kept between a timestamp window's edge and the dates the document
/// admits: time zones move a date by up to a day, and a client may hold the
/// document for a while. The server accepts a little more than the document
/// says, never less.
const EDGE_DAYS: u64 = 2;

/// A string bound: length in characters, no NUL, and not blank when
/// required.
fn text(min: usize, max: usize) -> Value {
    let mut bound = json!({"maxLength": max, "pattern": NO_NUL_PATTERN});
    if min > 0 {
        bound["minLength"] = json!(min);
        bound["pattern"] = json!(NOT_BLANK_NO_NUL_PATTERN);
    }
    bound
}

fn range(minimum: f64, maximum: f64) -> Value {
    json!({"minimum": minimum, "maximum": maximum})
}

/// States on each field the limit its validation enforces.
pub(super) fn declare_bounds(doc: &mut Value, limits: &Limits, now: DateTime<Utc>) {
    let live = instant_pattern(
        live_earliest(limits, now).date_naive() + Days::new(EDGE_DAYS),
        now.date_naive() - Days::new(EDGE_DAYS),
    );
    let imported = instant_pattern(
        DateTime::UNIX_EPOCH.date_naive() + Days::new(EDGE_DAYS),
        now.date_naive() - Days::new(EDGE_DAYS),
    );
    // When a fact became true: from 1900 to now (see `octopus_core::fact`).
    let became_true = instant_pattern(
        octopus_core::fact::earliest_valid_from().date_naive() + Days::new(EDGE_DAYS),
        now.date_naive() - Days::new(EDGE_DAYS),
    );
    let name = text(1, MAX_NAME_CHARS);
    let model_name = text(1, MAX_MODEL_NAME_CHARS);
    let fields: Vec<(&str, &str, Value)> = vec![
        ("CreateTenant", "name", name.clone()),
        ("CreateApiKey", "name", name.clone()),
        ("AgentSpec", "name", name),
        (
            "AgentSpec",
            "system_prompt",
            text(0, MAX_SYSTEM_PROMPT_CHARS),
        ),
        ("LlmConfig", "model", model_name.clone()),
        ("LlmConfig", "summary_model", model_name.clone()),
        ("LlmConfig", "deployment", model_name.clone()),
        ("LlmConfig", "api_version", model_name),
        (
            "LlmConfig",
            "base_url",
            json!({"maxLength": MAX_URL_CHARS, "pattern": octopus_core::agent::BASE_URL_PATTERN}),
        ),
        ("LlmConfig", "temperature", range(0.0, 2.0)),
        (
            "LlmConfig",
            "top_p",
            json!({"exclusiveMinimum": 0, "maximum": 1}),
        ),
        ("LlmConfig", "max_output_tokens", json!({"minimum": 1})),
        (
            "LlmConfig",
            "api_key_env",
            json!({"pattern": octopus_core::agent::API_KEY_ENV_PATTERN}),
        ),
        ("TurnRequest", "message", text(1, limits.max_message_bytes)),
        (
            "ProcedureSpec",
            "name",
            text(1, procedure::MAX_PROCEDURE_NAME_CHARS),
        ),
        (
            "ProcedureSpec",
            "description",
            text(0, procedure::MAX_PROCEDURE_DESCRIPTION_CHARS),
        ),
        (
            "ProcedureSpec",
            "trigger_pattern",
            text(1, procedure::MAX_TRIGGER_PATTERN_CHARS),
        ),
        (
            "ProcedureSpec",
            "steps",
            json!({"minItems": 1, "maxItems": procedure::MAX_PROCEDURE_STEPS}),
        ),
        (
            "ProcedureStep",
            "instruction",
            text(1, procedure::MAX_STEP_INSTRUCTION_CHARS),
        ),
        (
            "ProcedureStep",
            "tool",
            text(1, procedure::MAX_STEP_TOOL_CHARS),
        ),
        (
            "TurnRequest",
            "tools",
            json!({"maxItems": octopus_engine::MAX_TOOLS}),
        ),
        (
            "ChatCompletionRequest",
            "tools",
            json!({"maxItems": octopus_engine::MAX_TOOLS}),
        ),
        (
            "ChatCompletionRequest",
            "messages",
            json!({"maxItems": crate::routes::openai::MAX_MESSAGES}),
        ),
        (
            "ToolSpec",
            "name",
            json!({"pattern": "^[A-Za-z0-9_-]{1,64}$"}),
        ),
        (
            "MemoryConfig",
            "max_working_memory_tokens",
            json!({"minimum": 256, "maximum": limits.max_working_memory_tokens}),
        ),
        ("MemoryConfig", "knowledge_top_k", json!({"maximum": 100})),
        ("MemoryConfig", "knowledge_min_score", range(-1.0, 1.0)),
        ("MemoryConfig", "episodic_top_k", json!({"maximum": 100})),
        (
            "MemoryConfig",
            "episodic_neighbours",
            json!({"maximum": octopus_core::recall::MAX_NEIGHBOURS}),
        ),
        ("MemoryConfig", "procedures_top_k", json!({"maximum": 20})),
        ("MemoryConfig", "max_context_facts", json!({"maximum": 100})),
        (
            "MemoryConfig",
            "profile_max_tokens",
            json!({"maximum": octopus_core::agent::MAX_PROFILE_TOKENS}),
        ),
        (
            "MemoryConfig",
            "learn_every_messages",
            json!({"maximum": octopus_core::agent::MAX_LEARN_EVERY_MESSAGES}),
        ),
        ("MemoryConfig", "procedure_min_score", range(-1.0, 1.0)),
        (
            "MemoryConfig",
            "history_max_messages",
            json!({"maximum": limits.max_history_messages.min(10_000)}),
        ),
        (
            "MemoryConfig",
            "episode_idle_timeout_secs",
            json!({"minimum": 1, "maximum": MAX_IDLE_TIMEOUT_SECS}),
        ),
        ("MemoryConfig", "retention_days", json!({"minimum": 1})),
        ("ConversationSpec", "user_id", text(0, MAX_USER_ID_CHARS)),
        ("ConversationSpec", "title", text(0, MAX_TITLE_CHARS)),
        ("ConversationImport", "user_id", text(0, MAX_USER_ID_CHARS)),
        ("ConversationImport", "title", text(0, MAX_TITLE_CHARS)),
        (
            "ConversationImport",
            "sessions",
            json!({"minItems": 1, "maxItems": MAX_IMPORT_SESSIONS}),
        ),
        ("ImportedSession", "messages", json!({"minItems": 1})),
        (
            "AppendMessagesRequest",
            "messages",
            json!({"minItems": 1, "maxItems": limits.max_batch_messages}),
        ),
        ("NewMessage", "timestamp", json!({"pattern": live})),
        ("NewMessage", "name", text(1, MAX_PARTICIPANT_NAME_CHARS)),
        ("NewMessage", "tool_call_id", text(1, MAX_TOOL_NAME_CHARS)),
        (
            "NewMessage",
            "tool_calls",
            json!({"maxItems": limits.max_tool_calls}),
        ),
        ("IngestRequest", "source", text(1, MAX_SOURCE_CHARS)),
        ("IngestRequest", "category", text(1, MAX_CATEGORY_CHARS)),
        ("IngestRequest", "text", text(1, limits.max_document_bytes)),
        ("KnowledgeSearchRequest", "query", text(1, MAX_QUERY_CHARS)),
        (
            "KnowledgeSearchRequest",
            "source",
            text(1, MAX_SOURCE_CHARS),
        ),
        (
            "KnowledgeSearchRequest",
            "category",
            text(1, MAX_CATEGORY_CHARS),
        ),
        (
            "KnowledgeSearchRequest",
            "top_k",
            json!({"minimum": 1, "maximum": MAX_TOP_K}),
        ),
        ("KnowledgeSearchRequest", "min_score", range(-1.0, 1.0)),
        ("RecallQuery", "user_id", text(0, MAX_USER_ID_CHARS)),
        ("RecallQuery", "query", text(1, MAX_QUERY_CHARS)),
        (
            "RecallQuery",
            "top_k",
            json!({"minimum": 1, "maximum": MAX_RECALL_TOP_K}),
        ),
        ("RecallQuery", "min_score", range(-1.0, 1.0)),
        (
            "RecallQuery",
            "neighbours",
            json!({"maximum": MAX_NEIGHBOURS}),
        ),
        (
            "RecallQuery",
            "recency_half_life_days",
            json!({"exclusiveMinimum": 0}),
        ),
        (
            "ContextRequest",
            "message",
            text(1, limits.max_message_bytes),
        ),
        (
            "EpisodeSummaryRequest",
            "summary",
            text(1, MAX_SUMMARY_CHARS),
        ),
        ("CloseEpisodeRequest", "summary", text(1, MAX_SUMMARY_CHARS)),
        (
            "FactEdit",
            "valid_from",
            json!({"pattern": became_true.clone()}),
        ),
        ("NewFactSpec", "valid_from", json!({"pattern": became_true})),
        (
            "CloseEpisodeRequest",
            "ended_at",
            json!({"pattern": imported.clone()}),
        ),
        (
            "MemoryConfig",
            "fact_instructions",
            text(1, MAX_FACT_INSTRUCTIONS_CHARS),
        ),
        (
            "MemoryConfig",
            "fact_categories",
            json!({"maxItems": MAX_FACT_CATEGORIES, "uniqueItems": true, "items": {
                "type": "string",
                "pattern": format!("^[a-z0-9_-]{{1,{MAX_FACT_CATEGORY_CHARS}}}$"),
            }}),
        ),
        (
            "MemoryConfig",
            "context_fact_categories",
            json!({"maxItems": MAX_FACT_CATEGORIES, "uniqueItems": true, "items": {
                "type": "string",
                "pattern": format!("^[a-z0-9_-]{{1,{MAX_FACT_CATEGORY_CHARS}}}$"),
            }}),
        ),
        (
            "RecallQuery",
            "fact_category",
            text(1, MAX_FACT_CATEGORY_CHARS),
        ),
        ("FactEdit", "text", text(1, MAX_FACT_CHARS)),
        ("NewFactSpec", "text", text(1, MAX_FACT_CHARS)),
        ("NewFactSpec", "reason", text(1, MAX_REASON_CHARS)),
        ("NewFactSpec", "key", text(1, MAX_KEY_CHARS)),
        (
            "NewFactSpec",
            "category",
            json!({"pattern": format!("^[a-z0-9_-]{{1,{MAX_FACT_CATEGORY_CHARS}}}$")}),
        ),
        ("FactEdit", "reason", text(1, MAX_REASON_CHARS)),
        (
            "NewWebhook",
            "url",
            json!({"maxLength": MAX_URL_CHARS, "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^\\x00]*$"}),
        ),
        ("NewWebhook", "events", json!({"minItems": 1})),
        (
            "NewWebhook",
            "description",
            text(0, octopus_core::webhook::MAX_DESCRIPTION_CHARS),
        ),
        (
            "MemoryConfig",
            "pii_region",
            json!({"enum": octopus_core::pii::PhoneRegion::codes()}),
        ),
    ];
    let key_facts = json!({"maxItems": MAX_KEY_FACTS, "items": {"type": "string", "maxLength": MAX_KEY_FACT_CHARS}});
    let schemas = &mut doc["components"]["schemas"];
    for (schema, field, bound) in fields {
        merge(&mut schemas[schema]["properties"][field], &bound);
    }
    // Ids and user ids must not be empty where the server checks them so.
    for schema in ["ConversationSpec", "ConversationImport", "RecallQuery"] {
        merge(
            &mut schemas[schema]["properties"]["user_id"],
            &json!({"minLength": 1}),
        );
    }
    for schema in ["EpisodeSummaryRequest", "CloseEpisodeRequest"] {
        merge(&mut schemas[schema]["properties"]["key_facts"], &key_facts);
    }
    // A turn is a new message or the results of its tool calls, not both.
    merge(
        &mut schemas["TurnRequest"],
        &json!({"oneOf": [
            {"required": ["message"], "properties": {
                "message": {"type": "string"}, "tool_results": {"maxItems": 0}}},
            {"required": ["tool_results"], "properties": {
                "tool_results": {"minItems": 1}, "message": {"type": "null"}}},
        ]}),
    );
    // Azure OpenAI serves a deployment of a resource: both are named.
    merge(
        &mut schemas["LlmConfig"],
        &json!({
            "if": {"required": ["provider"], "properties": {"provider": {"const": "azure_openai"}}},
            "then": {"required": ["base_url", "deployment"], "properties": {
                "base_url": {"type": "string"}, "deployment": {"type": "string"}}},
        }),
    );
    // Key facts come with a summary.
    merge(
        &mut schemas["CloseEpisodeRequest"],
        &json!({
            "if": {"required": ["key_facts"], "properties": {"key_facts": {"minItems": 1}}},
            "then": {"required": ["summary"], "properties": {"summary": {"type": "string"}}},
        }),
    );
    // A message's rules across its fields: content, unless it carries tool
    // calls; tool calls only from the assistant or a tool; `tool_call_id`
    // only on a tool's answer. Parts of content: a non-empty list, each part
    // exactly its type's fields.
    merge(
        &mut schemas["NewMessage"],
        &json!({"allOf": [
            {"anyOf": [
                {"required": ["content"], "properties": {"content": {"not": {"type": "null"}}}},
                {"required": ["tool_calls"], "properties": {"tool_calls": {"minItems": 1}}},
            ]},
            {
                "if": {"required": ["tool_calls"], "properties": {"tool_calls": {"minItems": 1}}},
                "then": {"properties": {"role": {"enum": ["assistant", "tool"]}}},
            },
            {
                "if": {"required": ["tool_call_id"], "properties": {"tool_call_id": {"type": "string"}}},
                "then": {"properties": {"role": {"const": "tool"}}},
            },
            {
                "if": {"required": ["role"], "properties": {"role": {"const": "user"}}},
                "then": {"properties": {"content": {"anyOf": [
                    {"type": "null"},
                    {"type": "string", "pattern": NOT_BLANK_PATTERN},
                    {"type": "array", "contains": {"anyOf": [
                        {"required": ["text"], "properties": {"text": {"pattern": NOT_BLANK_PATTERN}}},
                        {"not": {"required": ["text"]}},
                    ]}},
                ]}}},
            },
        ]}),
    );
    merge(
        &mut schemas["MessageContent"]["oneOf"][1],
        &json!({"minItems": 1}),
    );
    // No text holds NUL; a user's message says something (a non-blank
    // text, or a part that is not text).
    merge(
        &mut schemas["MessageContent"]["oneOf"][0],
        &json!({"pattern": NO_NUL_PATTERN}),
    );
    if let Some(parts) = schemas["ContentPart"]["oneOf"].as_array_mut() {
        for part in parts {
            if part.pointer("/properties/text").is_some() {
                merge(
                    &mut part["properties"]["text"],
                    &json!({"pattern": NO_NUL_PATTERN}),
                );
            }
        }
    }
    merge(
        &mut schemas["ChatContent"]["oneOf"][1],
        &json!({"maxItems": crate::routes::openai::MAX_CONTENT_PARTS}),
    );
    if let Some(parts) = schemas["ContentPart"]["oneOf"].as_array_mut() {
        for part in parts {
            merge(part, &json!({"additionalProperties": false}));
        }
    }
    merge(
        &mut schemas["ImageUrl"]["properties"]["url"],
        &json!({"minLength": 1}),
    );
    // An imported message keeps its original time: required, and as old as
    // 1970 but never in the future.
    let mut imported_message = schemas["NewMessage"].clone();
    imported_message["properties"]["timestamp"] =
        json!({"type": "string", "format": "date-time", "pattern": imported});
    imported_message["required"] = json!(["role", "timestamp"]);
    schemas["ImportedMessage"] = imported_message;
    schemas["ImportedSession"]["properties"]["messages"]["items"] =
        json!({"$ref": "#/components/schemas/ImportedMessage"});

    // Tool calls are read in this shape (and a few aliases), nothing else.
    merge(
        &mut schemas["ToolCallRecord"],
        &json!({"additionalProperties": false, "required": ["tool_call_id", "function_name"]}),
    );
    for field in ["tool_call_id", "function_name"] {
        merge(
            &mut schemas["ToolCallRecord"]["properties"][field],
            &json!({"minLength": 1, "maxLength": MAX_TOOL_NAME_CHARS}),
        );
    }
    // `is_error: null` reads as false.
    nullable(&mut schemas["ToolCallRecord"]["properties"]["is_error"]);
    for schema in ["ToolCallRecord", "ToolResultBody"] {
        merge(
            &mut schemas[schema]["properties"]["duration_ms"],
            &json!({"maximum": octopus_core::message::MAX_DURATION_MS}),
        );
    }

    declare_parameter_bounds(doc);
    declare_bodies(doc);
    declare_unsigned_ranges(doc);
    declare_uuid_patterns(doc);
}

/// What the server reads as a UUID (the `uuid` crate's four spellings):
/// hyphenated, plain, braced, or as a URN.
const UUID_PATTERN: &str = concat!(
    "^([0-9a-fA-F]{32}",
    "|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "|\\{[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\\}",
    "|urn:uuid:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$"
);

/// Ids are strings of `format: uuid`, a format JSON Schema validators need
/// not check: the pattern makes `None` or `abc` plainly invalid, as the
/// server finds them (`400 invalid_id`, or 422 in a body).
fn declare_uuid_patterns(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if object.get("format").and_then(Value::as_str) == Some("uuid")
                && object.get("type").and_then(Value::as_str) == Some("string")
            {
                object
                    .entry("pattern")
                    .or_insert_with(|| json!(UUID_PATTERN));
            }
            object.values_mut().for_each(declare_uuid_patterns);
        }
        Value::Array(items) => items.iter_mut().for_each(declare_uuid_patterns),
        _ => {}
    }
}

/// Unsigned integers are read as Rust's `u32` and `u64`, which take every
/// value up to their maximum: the `int32`/`int64` formats would say half.
fn declare_unsigned_ranges(value: &mut Value) {
    match value {
        Value::Object(object) => {
            // `minimum` 0 is how utoipa marks an unsigned type; a bound
            // declared above may have raised it.
            let unsigned = object
                .get("minimum")
                .and_then(Value::as_f64)
                .is_some_and(|m| m >= 0.0);
            let maximum = match object.get("format").and_then(Value::as_str) {
                Some("int32") if unsigned => Some(u64::from(u32::MAX)),
                Some("int64") if unsigned => Some(u64::MAX),
                _ => None,
            };
            if let Some(maximum) = maximum {
                object.remove("format");
                object.entry("maximum").or_insert(json!(maximum));
            }
            object.values_mut().for_each(declare_unsigned_ranges);
        }
        Value::Array(items) => items.iter_mut().for_each(declare_unsigned_ranges),
        _ => {}
    }
}

/// Parameters: page sizes, the search text, and user ids where one is
/// required or, given, must not be empty.
fn declare_parameter_bounds(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for (path, operations) in paths.iter_mut() {
        let search = path == "/v1/messages/search";
        let export = path.ends_with("/export");
        let Some(operations) = operations.as_object_mut() else {
            continue;
        };
        for operation in operations.values_mut() {
            let Some(parameters) = operation
                .get_mut("parameters")
                .and_then(Value::as_array_mut)
            else {
                continue;
            };
            for parameter in parameters {
                let bound = match parameter["name"].as_str() {
                    Some("limit") if search => json!({"minimum": 1, "maximum": MAX_SEARCH_LIMIT}),
                    Some("limit") => json!({"minimum": 1, "maximum": Page::MAX_LIMIT}),
                    Some("q") => text(1, octopus_core::search::MAX_SEARCH_QUERY_CHARS),
                    Some("reason") => text(1, MAX_REASON_CHARS),
                    Some("category") if path.ends_with("/facts") => {
                        text(1, MAX_FACT_CATEGORY_CHARS)
                    }
                    Some("key") if path.ends_with("/facts") => text(1, MAX_KEY_CHARS),
                    // A user id may be blank, as where conversations name it.
                    Some("user_id") if parameter["in"] == "path" || export => {
                        json!({"minLength": 1, "maxLength": MAX_USER_ID_CHARS,
                               "pattern": NO_NUL_PATTERN})
                    }
                    _ => continue,
                };
                merge(&mut parameter["schema"], &bound);
            }
        }
    }
}

/// A body the handler reads more loosely than its type says: the agent
/// merge patch.
fn declare_bodies(doc: &mut Value) {
    // In a merge patch, `null` removes a field: the optional ones (and every
    // memory setting, which has a default) may be null; required ones not.
    let schemas = &doc["components"]["schemas"];
    // What a provider needs may be in the stored agent already: a patch's
    // `llm` is checked once merged (a 422 naming the field), not here.
    let mut llm = schemas["LlmConfig"].clone();
    if let Some(object) = llm.as_object_mut() {
        object.remove("required");
        object.remove("if");
        object.remove("then");
    }
    let mut memory = schemas["MemoryConfig"].clone();
    if let Some(properties) = memory["properties"].as_object_mut() {
        for property in properties.values_mut() {
            nullable(property);
        }
    }
    nullable(&mut memory);
    let patch = json!({
        "type": "object",
        "description": "A JSON merge patch (RFC 7396) of the agent: the fields given replace the agent's; `llm` and `memory` merge field by field, and `null` resets an optional field.",
        "additionalProperties": false,
        "properties": {
            "name": schemas["AgentSpec"]["properties"]["name"].clone(),
            "system_prompt": {"type": ["string", "null"], "maxLength": MAX_SYSTEM_PROMPT_CHARS},
            "llm": llm,
            "memory": memory,
            "is_active": {"type": "boolean"},
        },
    });
    let update = &mut doc["paths"]["/v1/agents/{agent_id}"]["patch"]["requestBody"]["content"];
    *update = json!({
        "application/json": {"schema": patch.clone()},
        "application/merge-patch+json": {"schema": patch},
    });

    // A procedure's patch: its content (a new version) and `is_active`.
    let schemas = &doc["components"]["schemas"];
    let spec = &schemas["ProcedureSpec"]["properties"];
    let optional = |name: &str| {
        let mut property = spec[name].clone();
        nullable(&mut property);
        property
    };
    let patch = json!({
        "type": "object",
        "description": "A JSON merge patch (RFC 7396) of the procedure. New `name`, `description`, `trigger_pattern` or `steps` make the next version, pending approval; `null` removes the description or the trigger pattern. `is_active` alone makes no version.",
        "additionalProperties": false,
        "properties": {
            "name": spec["name"].clone(),
            "description": optional("description"),
            "trigger_pattern": optional("trigger_pattern"),
            "steps": spec["steps"].clone(),
            "is_active": {"type": "boolean"},
        },
    });
    let update =
        &mut doc["paths"]["/v1/procedures/{procedure_id}"]["patch"]["requestBody"]["content"];
    *update = json!({
        "application/json": {"schema": patch.clone()},
        "application/merge-patch+json": {"schema": patch},
    });
}

/// Lets a property also be `null`.
fn nullable(property: &mut Value) {
    // A list of the values it may take must name null too.
    if let Some(values) = property.get_mut("enum").and_then(Value::as_array_mut)
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    match property.get_mut("type") {
        Some(Value::String(kind)) => {
            let kind = kind.clone();
            property["type"] = json!([kind, "null"]);
        }
        Some(Value::Array(kinds)) if !kinds.iter().any(|k| k == "null") => {
            kinds.push(json!("null"));
        }
        Some(_) => {}
        // A reference (an enum's schema): it, or null.
        None => {
            let inner = property.clone();
            *property = json!({"oneOf": [inner, {"type": "null"}]});
        }
    }
}

/// Copies `bound`'s keys into `target` (an object; created when absent).
fn merge(target: &mut Value, bound: &Value) {
    if !target.is_object() {
        *target = json!({});
    }
    if let (Some(target), Some(bound)) = (target.as_object_mut(), bound.as_object()) {
        for (key, value) in bound {
            target.insert(key.clone(), value.clone());
        }
    }
}

fn live_earliest(limits: &Limits, now: DateTime<Utc>) -> DateTime<Utc> {
    chrono::Duration::try_seconds(
        i64::try_from(limits.max_live_message_age_secs).unwrap_or(i64::MAX),
    )
    .and_then(|age| now.checked_sub_signed(age))
    .unwrap_or(DateTime::UNIX_EPOCH)
    .max(DateTime::UNIX_EPOCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `schema` admits JSON null by its `type`, `enum` and `oneOf`.
    fn admits_null(schema: &Value) -> bool {
        let by_type = match &schema["type"] {
            Value::String(kind) => kind == "null",
            Value::Array(kinds) => kinds.iter().any(|k| k == "null"),
            _ => true,
        };
        let by_enum = schema["enum"]
            .as_array()
            .is_none_or(|values| values.contains(&Value::Null));
        let by_one_of = schema["oneOf"]
            .as_array()
            .is_none_or(|choices| choices.iter().any(admits_null));
        by_type && by_enum && by_one_of
    }

    #[test]
    fn an_agent_patch_may_reset_every_memory_setting_with_null() {
        let mut doc = json!({"components": {"schemas": {
            "LlmConfig": {"type": "object"},
            "AgentSpec": {"properties": {"name": {"type": "string"}}},
            "ProcedureSpec": {"properties": {}},
            "MemoryConfig": {"type": "object", "properties": {
                "pii_region": {"type": "string", "enum": ["US", "GB"]},
                "knowledge_top_k": {"type": "integer"},
                "pii": {"$ref": "#/components/schemas/PiiPolicy"},
            }},
        }}});
        declare_bodies(&mut doc);
        let memory = &doc["paths"]["/v1/agents/{agent_id}"]["patch"]["requestBody"]["content"]["application/json"]
            ["schema"]["properties"]["memory"]["properties"];
        for (name, schema) in memory.as_object().unwrap() {
            assert!(admits_null(schema), "{name}: {schema}");
        }
        assert_eq!(memory["pii_region"]["enum"], json!(["US", "GB", null]));
    }

    #[test]
    fn the_not_blank_pattern_agrees_with_the_server() {
        let pattern = regex::Regex::new(NOT_BLANK_PATTERN).unwrap();
        for text in [
            " ",
            "\t\u{feff}",
            "\u{3000}",
            "a",
            "\u{85}",
            " x ",
            "\u{1c}",
        ] {
            assert_eq!(
                pattern.is_match(text),
                !octopus_core::bounds::is_blank(text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn the_nul_patterns_agree_with_the_server() {
        use octopus_core::bounds::{check_chars, check_no_nul};
        let no_nul = regex::Regex::new(NO_NUL_PATTERN).unwrap();
        let not_blank = regex::Regex::new(NOT_BLANK_NO_NUL_PATTERN).unwrap();
        for text in [
            "",
            " ",
            "a",
            "a\0",
            "\0",
            "\0 x",
            " x\n",
            "\u{3000}",
            "é\u{feff}b",
            "\n\n",
        ] {
            assert_eq!(
                no_nul.is_match(text),
                check_no_nul("f", text).is_ok(),
                "{text:?}"
            );
            assert_eq!(
                not_blank.is_match(text),
                check_chars("f", text, 1, 100).is_ok(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn every_bound_names_a_field_that_exists() {
        let mut plain = serde_json::to_value(crate::routes::router().into_openapi()).unwrap();
        let before = plain["components"]["schemas"].clone();
        declare_bounds(&mut plain, &Limits::default(), Utc::now());
        // Bounds only add keys to existing properties: no schema or property
        // was made up by a misspelt name.
        for (name, schema) in plain["components"]["schemas"].as_object().unwrap() {
            if name == "ImportedMessage" {
                continue;
            }
            let old = &before[name];
            assert!(!old.is_null(), "schema {name} does not exist");
            for property in schema["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|p| p.0)
            {
                assert!(
                    !old["properties"][property].is_null(),
                    "{name}.{property} does not exist"
                );
            }
        }
    }
}
