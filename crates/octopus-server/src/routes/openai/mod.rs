//! The OpenAI-compatible door: `POST /v1/chat/completions` and
//! `GET /v1/models`, so that any OpenAI client gets memory by pointing its
//! `base_url` at Octopus. `model` names an agent; `user` (or the
//! `x-octopus-user` header) the user; `x-octopus-conversation` a conversation
//! to continue. Of the messages a client sends, only the trailing user
//! message (or the tool results) is new: see
//! [`octopus_engine::Octopus::prepare_completion`].
//!
//! Bodies follow OpenAI's reference
//! (<https://platform.openai.com/docs/api-reference/chat/create>, the chat
//! completion and chunk objects): fields Octopus does not use (`temperature`,
//! `max_tokens`, …) are accepted and ignored, since the agent's settings
//! decide them. What memory a completion used rides along in an `octopus`
//! field that OpenAI clients keep as an extra.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use octopus_core::chat::TurnReply;
use octopus_core::{ConversationId, Error as DomainError};
use octopus_engine::{ClientMessage, ClientRole, CompletionRequest};
use serde::Serialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::auth::TenantCaller;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::extract::Json;

mod request;

use request::{ChatCompletionRequest, ChatContent, ChatRole};
pub use request::{MAX_CONTENT_PARTS, MAX_MESSAGES};

/// The header naming the user when the body's `user` does not.
pub(crate) const USER_HEADER: &str = "x-octopus-user";
/// The header naming the conversation to continue; every answer carries the
/// conversation it used in it.
pub(crate) const CONVERSATION_HEADER: &str = "x-octopus-conversation";

/// Complete a chat as the agent `model` names, with its memory: the new
/// user message (or tool results) stored, the working memory assembled
/// around it, the agent's model called, the reply stored and returned in
/// OpenAI's shape, with what memory was used in `octopus.trace`. The answer's
/// `x-octopus-conversation` header names the conversation used.
#[utoipa::path(post, path = "/v1/chat/completions", tag = "openai", operation_id = "chat_completion",
    security(("bearer" = [])), request_body = ChatCompletionRequest,
    params(
        ("x-octopus-user" = Option<String>, Header, description = "the user, when the body's `user` does not name one"),
        ("x-octopus-conversation" = Option<ConversationId>, Header, description = "the conversation to continue; else the user's newest with the agent, started when there is none")),
    responses(
        (status = 200, description = "a `chat.completion` object; with `stream`, `chat.completion.chunk` events, then `data: [DONE]`",
            content((Object = "application/json"), ("text/event-stream"))),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub(crate) async fn chat_completion(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    headers: HeaderMap,
    Json(body): Json<ChatCompletionRequest>,
) -> ApiResult<Response> {
    let request = completion_request(&headers, &body)?;
    let model = body.model.clone();
    let octopus = state.octopus.clone();
    let (conversation, mut response) = if body.stream {
        let include_usage = body.stream_options.is_some_and(|o| o.include_usage);
        stream(octopus, tenant, request, model, include_usage).await?
    } else {
        let (conversation, reply) = super::turns::run_whole(async move {
            let prepared = octopus.prepare_completion(tenant, request).await?;
            let reply = prepared.turn.run(None).await?;
            Ok((prepared.conversation, reply))
        })
        .await?;
        let response = axum::Json(completion(&reply, &model)).into_response();
        (conversation, response)
    };
    // An id's text is always a valid header value.
    let conversation = HeaderValue::from_str(&conversation.to_string())
        .unwrap_or_else(|_| HeaderValue::from_static(""));
    response
        .headers_mut()
        .insert(CONVERSATION_HEADER, conversation);
    Ok(response)
}

/// The engine's request: the user from the body or the header, the text of
/// each message.
fn completion_request(
    headers: &HeaderMap,
    body: &ChatCompletionRequest,
) -> Result<CompletionRequest, ApiError> {
    let invalid = |field: &str, why: String| ApiError::from(DomainError::invalid(field, why));
    let header = |name: &str| -> Result<Option<String>, ApiError> {
        headers
            .get(name)
            .map(|value| {
                value
                    .to_str()
                    .map(|text| text.trim().to_owned())
                    .map_err(|_| invalid(name, "must be visible ASCII".into()))
            })
            .transpose()
    };
    let user = match (&body.user, header(USER_HEADER)?) {
        (Some(user), _) => user.clone(),
        (None, Some(user)) => user,
        (None, None) => String::new(),
    };
    let conversation = header(CONVERSATION_HEADER)?
        .map(|id| {
            id.parse::<ConversationId>().map_err(|_| {
                invalid(
                    CONVERSATION_HEADER,
                    format!("`{id}` is not a conversation id"),
                )
            })
        })
        .transpose()?;
    let mut messages = Vec::with_capacity(body.messages.end.len());
    for (index, message) in &body.messages.end {
        let index = *index;
        let content = match &message.content {
            None => None,
            Some(ChatContent::Text(text)) => Some(text.clone()),
            Some(ChatContent::Parts(parts)) => {
                let mut texts = Vec::with_capacity(parts.len());
                for part in parts {
                    match (part.kind.as_str(), &part.text) {
                        ("text", Some(text)) => texts.push(text.as_str()),
                        (kind, _) => {
                            return Err(invalid(
                                &format!("messages[{index}].content"),
                                format!("only text parts are understood, not `{kind}`"),
                            ));
                        }
                    }
                }
                Some(texts.join("\n"))
            }
        };
        let role = match message.role {
            ChatRole::System | ChatRole::Developer => ClientRole::System,
            ChatRole::User => ClientRole::User,
            ChatRole::Assistant => ClientRole::Assistant,
            ChatRole::Tool => ClientRole::Tool,
        };
        messages.push(ClientMessage {
            role,
            content,
            tool_call_id: message.tool_call_id.clone(),
        });
    }
    let mut tools = Vec::with_capacity(body.tools.len());
    for (index, tool) in body.tools.iter().enumerate() {
        if tool.kind != "function" {
            return Err(invalid(
                &format!("tools[{index}].type"),
                format!("only `function` tools are understood, not `{}`", tool.kind),
            ));
        }
        tools.push(tool.function.clone());
    }
    Ok(CompletionRequest {
        model: body.model.clone(),
        user,
        conversation,
        messages,
        tools,
    })
}

/// The `chat.completion` object for a turn's reply.
fn completion(reply: &TurnReply, model: &str) -> Value {
    let mut message = json!({
        "role": "assistant",
        "content": reply_text(reply),
        "refusal": null,
    });
    if !reply.tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls(reply, false));
    }
    json!({
        "id": completion_id(reply),
        "object": "chat.completion",
        "created": reply.reply.created_at.timestamp(),
        "model": model,
        "system_fingerprint": null,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason(reply),
        }],
        "usage": usage(reply),
        "octopus": extension(reply),
    })
}

/// The reply's text, or null when the model only called tools.
fn reply_text(reply: &TurnReply) -> Value {
    let text = reply
        .reply
        .content
        .as_ref()
        .map(|c| c.text())
        .unwrap_or_default();
    if text.is_empty() && !reply.tool_calls.is_empty() {
        Value::Null
    } else {
        Value::String(text)
    }
}

/// The model's tool calls, arguments as a JSON string as OpenAI sends them;
/// in a stream each carries its `index`.
fn tool_calls(reply: &TurnReply, indexed: bool) -> Vec<Value> {
    reply
        .tool_calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let mut value = json!({
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments.to_string()},
            });
            if indexed {
                value["index"] = index.into();
            }
            value
        })
        .collect()
}

/// OpenAI's names for why the model stopped; other providers' names mapped.
fn finish_reason(reply: &TurnReply) -> &'static str {
    if !reply.tool_calls.is_empty() {
        return "tool_calls";
    }
    match reply.finish_reason.as_deref() {
        Some("length" | "max_tokens") => "length",
        Some("content_filter") => "content_filter",
        _ => "stop",
    }
}

fn usage(reply: &TurnReply) -> Value {
    json!({
        "prompt_tokens": reply.usage.input_tokens,
        "completion_tokens": reply.usage.output_tokens,
        "total_tokens": reply.usage.input_tokens + reply.usage.output_tokens,
    })
}

/// What OpenAI's shape has no room for: where the reply was stored, who
/// answered, and what memory was used.
fn extension(reply: &TurnReply) -> Value {
    json!({
        "conversation_id": reply.reply.conversation_id,
        "episode_id": reply.episode_id,
        "message_id": reply.reply.id,
        "stored_message_ids": reply.stored_message_ids,
        "provider": reply.provider,
        "model": reply.model,
        "trace": reply.trace,
    })
}

/// The completion's id: the stored reply's, so that a client can find it.
fn completion_id(reply: &TurnReply) -> String {
    format!("chatcmpl-{}", reply.reply.id)
}

/// A streamed completion: a first chunk with the role, one per piece of
/// text, then the tool calls, the finish reason with usage and the memory
/// used, and `[DONE]`. A failure after the stream began comes as an `error`
/// object, which OpenAI's clients raise.
async fn stream(
    octopus: octopus_engine::Octopus,
    tenant: octopus_core::TenantId,
    request: CompletionRequest,
    model: String,
    include_usage: bool,
) -> ApiResult<(ConversationId, Response)> {
    // The id is not known before the reply is stored; one made now names
    // every chunk of this stream alike.
    let id = format!("chatcmpl-{}", uuid::Uuid::now_v7().simple());
    let created = chrono::Utc::now().timestamp();
    let chunk = {
        let (id, model) = (id.clone(), model.clone());
        move |choices: Value| {
            json!({"id": id, "object": "chat.completion.chunk", "created": created,
                   "model": model, "system_fingerprint": null, "choices": choices})
        }
    };
    let delta = {
        let chunk = chunk.clone();
        move |delta: Value, finish: Option<&str>| {
            chunk(json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]))
        }
    };
    let (conversation_sender, conversation) = tokio::sync::oneshot::channel();
    let (ready, receiver) = super::turns::stream_turn(
        async move {
            let prepared = octopus.prepare_completion(tenant, request).await?;
            let _ = conversation_sender.send(prepared.conversation);
            Ok(prepared.turn)
        },
        move |turn: octopus_engine::PreparedTurn, sender| async move {
            let _ = sender.send(data(&delta(
                json!({"role": "assistant", "content": ""}),
                None,
            )));
            let pieces = sender.clone();
            let piece_delta = delta.clone();
            let sink = move |text: &str| {
                let _ = pieces.send(data(&piece_delta(json!({"content": text}), None)));
            };
            match turn.run(Some(&sink)).await {
                Ok(reply) => {
                    if !reply.tool_calls.is_empty() {
                        let calls = tool_calls(&reply, true);
                        let _ = sender.send(data(&delta(json!({"tool_calls": calls}), None)));
                    }
                    let mut last = delta(json!({}), Some(finish_reason(&reply)));
                    last["octopus"] = extension(&reply);
                    if include_usage {
                        let _ = sender.send(data(&last));
                        let mut usage_chunk = chunk(json!([]));
                        usage_chunk["usage"] = usage(&reply);
                        let _ = sender.send(data(&usage_chunk));
                    } else {
                        last["usage"] = usage(&reply);
                        let _ = sender.send(data(&last));
                    }
                    let _ = sender.send(Event::default().data("[DONE]"));
                }
                Err(error) => {
                    let error = ApiError::from(error);
                    let mut body = serde_json::to_value(error.body()).unwrap_or_default();
                    body["error"]["status"] = error.status.as_u16().into();
                    let _ = sender.send(data(&body));
                }
            }
        },
    );
    ready.await?;
    let conversation = conversation
        .await
        .map_err(|_| ApiError::from_code(crate::error::ErrorCode::Internal, "the turn failed"))?;
    let response = Sse::new(super::turns::Events(receiver))
        .keep_alive(KeepAlive::default())
        .into_response();
    Ok((conversation, response))
}

/// One `data:` event.
fn data(value: &impl Serialize) -> Event {
    Event::default().data(serde_json::to_string(value).unwrap_or_else(|_| "{}".into()))
}

/// The tenant's active agents as models, OpenAI's `list` of `model` objects: each
/// agent's name is a `model` a completion may name.
#[utoipa::path(get, path = "/v1/models", tag = "openai", operation_id = "list_models",
    security(("bearer" = [])),
    responses((status = 200, description = "a `list` of `model` objects, one per agent", body = Object)))]
pub(crate) async fn list_models(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
) -> ApiResult<axum::Json<Value>> {
    let agents = state.octopus.all_agents(tenant).await?;
    let data: Vec<Value> = agents
        .iter()
        .filter(|agent| agent.is_active)
        .map(|agent| {
            json!({"id": agent.name, "object": "model", "created": agent.created_at.timestamp(),
                   "owned_by": "octopus", "octopus": {"agent_id": agent.id}})
        })
        .collect();
    Ok(axum::Json(json!({"object": "list", "data": data})))
}
