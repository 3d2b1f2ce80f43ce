//! `POST /v1/conversations/{id}/turns`: a turn of the agent — the user's
//! message stored, the working memory assembled and sent to the agent's
//! model, its reply stored and returned with the trace. With `"stream": true`
//! the reply comes as server-sent events.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use octopus_core::ConversationId;
use octopus_core::chat::{ToolSpec, TurnReply};
use octopus_engine::{ToolResult, TurnInput};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use utoipa::ToSchema;

use crate::AppState;
use crate::auth::TenantCaller;
use crate::error::{ApiError, ApiResult, ErrorBody, ErrorCode};
use crate::extract::{Json, Path};

/// A new message, or the results of the tool calls the model made in this
/// turn (exactly one of the two).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TurnRequest {
    /// The user's message.
    pub message: Option<String>,
    /// Results of the model's pending tool calls, one per call.
    #[serde(default)]
    pub tool_results: Vec<ToolResultBody>,
    /// Tools the model may call; send them again when continuing a turn.
    #[serde(default)]
    pub tools: Vec<ToolSpec>,
    /// Answer with server-sent events: `delta` events with the reply's text
    /// as it is generated, then `done` with the whole response (or `error`
    /// with an error body).
    #[serde(default)]
    pub stream: bool,
}

#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolResultBody {
    /// The id of the call answered (from the turn's `tool_calls`).
    pub tool_call_id: String,
    /// The tool's output: a string, or any JSON.
    #[schema(value_type = Object)]
    pub content: Value,
    #[serde(default)]
    pub is_error: bool,
    pub duration_ms: Option<u64>,
}

/// Take a turn: store the user's message, assemble the working memory, call
/// the agent's model with it, store and return the reply with the trace.
/// When the model calls tools, `tool_calls` lists them: run them and post
/// their `tool_results` to continue. A failed model call keeps the user's
/// message and stores nothing else (502 or 503, naming the provider).
#[utoipa::path(post, path = "/v1/conversations/{conversation_id}/turns", tag = "conversations",
    security(("bearer" = [])), params(("conversation_id" = ConversationId, Path)), request_body = TurnRequest,
    responses(
        (status = 200, description = "the reply; with `stream`, server-sent events `delta` ({\"text\"}), then `done` (a TurnReply) or `error` (an error body)",
            content((TurnReply = "application/json"), ("text/event-stream"))),
        (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub(crate) async fn take_turn(
    State(state): State<AppState>,
    TenantCaller(tenant): TenantCaller,
    Path(conversation): Path<ConversationId>,
    Json(body): Json<TurnRequest>,
) -> ApiResult<Response> {
    let input = TurnInput {
        message: body.message,
        tool_results: body
            .tool_results
            .into_iter()
            .map(|r| ToolResult {
                tool_call_id: r.tool_call_id,
                content: r.content,
                is_error: r.is_error,
                duration_ms: r.duration_ms,
            })
            .collect(),
        tools: body.tools,
    };
    let octopus = state.octopus.clone();
    if !body.stream {
        let reply = run_whole(async move {
            octopus
                .prepare_turn(tenant, conversation, input)
                .await?
                .run(None)
                .await
        })
        .await?;
        return Ok(axum::Json(reply).into_response());
    }
    let (ready, receiver) = stream_turn(
        async move { octopus.prepare_turn(tenant, conversation, input).await },
        |prepared, sender| async move {
            let deltas = sender.clone();
            let sink = move |text: &str| {
                let _ = deltas.send(event("delta", &serde_json::json!({"text": text})));
            };
            let last = match prepared.run(Some(&sink)).await {
                Ok(reply) => event("done", &reply),
                Err(error) => {
                    let error = ApiError::from(error);
                    let mut body = serde_json::to_value(error.body()).unwrap_or_default();
                    body["status"] = error.status.as_u16().into();
                    event("error", &body)
                }
            };
            let _ = sender.send(last);
        },
    );
    ready.await?;
    // Comments every 15 s while the model thinks, so that no proxy between
    // here and the client takes the quiet stream for a dead one.
    Ok(Sse::new(Events(receiver))
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// Takes a whole turn in a task of its own. A turn whose request has
/// arrived runs to its end: a caller who leaves while the model thinks
/// does not cancel it, and the reply is stored as when it waits (as a
/// streamed turn's is), so that the conversation never holds a message
/// the model was asked and whose answer was thrown away.
pub(super) async fn run_whole<T: Send + 'static>(
    turn: impl Future<Output = octopus_engine::Result<T>> + Send + 'static,
) -> ApiResult<T> {
    match tokio::spawn(turn).await {
        Ok(outcome) => Ok(outcome?),
        Err(error) => {
            tracing::error!(%error, "turn's task failed");
            Err(ApiError::from_code(ErrorCode::Internal, "the turn failed"))
        }
    }
}

/// Prepares a streamed turn and runs it, in a task of its own like
/// [`run_whole`]: the first value resolves once the turn is prepared (an
/// error then is the response's status), and `run` sends the stream's
/// events on the sender; they go nowhere once the caller has left, and the
/// turn still ends and stores its reply.
pub(super) fn stream_turn<P, R>(
    prepare: impl Future<Output = octopus_engine::Result<P>> + Send + 'static,
    run: impl FnOnce(P, mpsc::UnboundedSender<Event>) -> R + Send + 'static,
) -> (
    impl Future<Output = ApiResult<()>>,
    mpsc::UnboundedReceiver<Event>,
)
where
    P: Send + 'static,
    R: Future<Output = ()> + Send + 'static,
{
    let (sender, receiver) = mpsc::unbounded_channel::<Event>();
    let (ready_sender, ready) = oneshot::channel::<ApiResult<()>>();
    tokio::spawn(async move {
        match prepare.await {
            Ok(prepared) => {
                let _ = ready_sender.send(Ok(()));
                run(prepared, sender).await;
            }
            Err(error) => {
                let _ = ready_sender.send(Err(error.into()));
            }
        }
    });
    let ready = async move {
        ready
            .await
            .unwrap_or_else(|_| Err(ApiError::from_code(ErrorCode::Internal, "the turn failed")))
    };
    (ready, receiver)
}

/// One server-sent event.
fn event(name: &str, data: &impl Serialize) -> Event {
    let data = serde_json::to_string(data).unwrap_or_else(|_| "{}".into());
    Event::default().event(name).data(data)
}

/// The events of a stream, as they are sent.
pub(super) struct Events(pub(super) tokio::sync::mpsc::UnboundedReceiver<Event>);

impl futures_core::Stream for Events {
    type Item = Result<Event, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|event| event.map(Ok))
    }
}
