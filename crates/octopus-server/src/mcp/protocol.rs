//! JSON-RPC's own errors on `/mcp`, where the MCP library would answer
//! plain text or the wrong code: a body that is not JSON is a parse error
//! (-32700), one that is not a single JSON-RPC message an invalid request
//! (-32600; the protocol versions Octopus speaks have no batches), and the
//! transport's refusals (405, 406, 415) come as JSON-RPC error objects too,
//! with their HTTP status. On both transports, a known method whose params
//! do not fit it is invalid params (-32602), not method not found (-32601).

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ErrorCode, ReadResourceRequestParams,
};
use serde_json::{Value, json};

/// Methods of the protocol whose params the library reads: a request of
/// one of them that it could not read had params that do not fit.
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "tools/call",
    "tools/list",
];

/// The transport's own errors: JSON-RPC reserves -32000 to -32099 for them.
const TRANSPORT_ERROR: ErrorCode = ErrorCode(-32000);

/// Whether a request says its body is JSON (the library refuses others
/// with 415 before reading them).
pub(super) fn is_json(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// Checks a posted body as one JSON-RPC message before the library reads
/// it; the error response when it is not one.
pub(super) fn check(body: &[u8]) -> Result<(), Refusal> {
    let value: Value = serde_json::from_slice(body).map_err(|error| {
        error_response(
            StatusCode::BAD_REQUEST,
            Value::Null,
            ErrorCode::PARSE_ERROR,
            format!("Parse error: {error}"),
        )
    })?;
    let invalid = |id: Value, message: String| {
        error_response(
            StatusCode::BAD_REQUEST,
            id,
            ErrorCode::INVALID_REQUEST,
            message,
        )
    };
    match &value {
        Value::Object(_) => {}
        Value::Array(_) => {
            return Err(invalid(
                Value::Null,
                "Invalid Request: batches are not part of this protocol version; send one message per request".into(),
            ));
        }
        _ => {
            return Err(invalid(
                Value::Null,
                "Invalid Request: a JSON-RPC message is an object".into(),
            ));
        }
    }
    let id = match &value["id"] {
        id @ (Value::String(_) | Value::Number(_)) => id.clone(),
        _ => Value::Null,
    };
    serde_json::from_value::<ClientJsonRpcMessage>(value)
        .map_err(|error| invalid(id, format!("Invalid Request: {error}")))?;
    Ok(())
}

/// The answer to a request the library could not read as any method it
/// knows: invalid params when the method is one of the protocol's (its
/// params did not fit it), method not found otherwise. Both transports
/// answer through it.
pub(super) fn unread_request(method: &str, params: Option<&Value>) -> ErrorData {
    if KNOWN_METHODS.contains(&method) {
        let why = params_error(method, params.unwrap_or(&Value::Null));
        return ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            format!("Invalid params for {method}: {why}"),
            None,
        );
    }
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("Method not found: {method}"),
        None,
    )
}

/// What is wrong with `params` for `method`, in words.
fn params_error(method: &str, params: &Value) -> String {
    let read = |error: Option<serde_json::Error>| {
        error.map_or_else(
            || "they do not fit the method".to_owned(),
            |error| error.to_string(),
        )
    };
    match method {
        "tools/call" => read(serde_json::from_value::<CallToolRequestParams>(params.clone()).err()),
        "resources/read" => {
            read(serde_json::from_value::<ReadResourceRequestParams>(params.clone()).err())
        }
        _ => read(None),
    }
}

/// The library's plain-text refusals (405, 406, 415, …) as JSON-RPC error
/// objects with the same status and headers.
pub(super) async fn as_json_rpc(response: Response) -> Response {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if !response.status().is_client_error() || is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 * 1024)
        .await
        .map(|bytes| String::from_utf8_lossy(&bytes).trim().to_owned())
        .unwrap_or_default();
    let message = match text.is_empty() {
        true => parts
            .status
            .canonical_reason()
            .unwrap_or("refused")
            .to_owned(),
        false => text,
    };
    let body = json!({"jsonrpc": "2.0", "id": null,
                      "error": {"code": TRANSPORT_ERROR.0, "message": message}});
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body.to_string()))
}

/// A JSON-RPC error answered before the library sees the request.
#[derive(Debug)]
pub(super) struct Refusal {
    status: StatusCode,
    body: Value,
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        (self.status, axum::Json(self.body)).into_response()
    }
}

fn error_response(status: StatusCode, id: Value, code: ErrorCode, message: String) -> Refusal {
    let body = json!({"jsonrpc": "2.0", "id": id,
                      "error": {"code": code.0, "message": message}});
    Refusal { status, body }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn refused(body: &str) -> (StatusCode, Value) {
        let refusal = check(body.as_bytes()).expect_err(body);
        (refusal.status, refusal.body)
    }

    #[tokio::test]
    async fn what_is_not_one_json_rpc_message_gets_json_rpcs_error() {
        for (body, code) in [
            ("{not json", -32700),
            ("", -32700),
            ("null", -32600),
            ("42", -32600),
            (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, -32600),
            (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, -32600),
            (r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, -32600),
        ] {
            let (status, answer) = refused(body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
            assert_eq!(answer["error"]["code"], code, "{body}: {answer}");
            assert_eq!(answer["jsonrpc"], "2.0");
        }
    }

    #[test]
    fn a_known_method_whose_params_do_not_fit_is_invalid_params() {
        for (method, params) in [
            ("tools/call", json!({})),
            ("tools/call", json!({"name": "recall", "arguments": [1]})),
            ("tools/call", Value::Null),
            ("resources/read", json!({})),
        ] {
            let error = unread_request(method, Some(&params));
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{method} {params}");
            assert!(error.message.contains(method), "{}", error.message);
        }
        let error = unread_request("no/such/method", None);
        assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
    }

    #[test]
    fn well_formed_messages_pass_and_unknown_methods_are_left_to_the_library() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":{"q":1}}}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"no/such/method"}"#,
        ] {
            assert!(check(body.as_bytes()).is_ok(), "{body}");
        }
    }
}
