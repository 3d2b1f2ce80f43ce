//! A reply far longer than any model writes, in each provider's wire
//! format, whole or streamed: made as it is sent, never held, and counted,
//! so that a test can tell how much of it the client read before it let go.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::{Body, Bytes};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Bytes of reply text in one streamed piece or one chunk of a whole body.
const PIECE: usize = 8 * 1024;

/// The wire format a flood is written in.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wire {
    OpenAi,
    Anthropic,
    Ollama,
}

/// A response of `bytes` of text ('a's), whole or `streamed`, in `wire`'s
/// format; `sent` counts the body's bytes as they are handed to the socket.
pub(crate) fn flood(wire: Wire, streamed: bool, bytes: usize, sent: Arc<AtomicUsize>) -> Response {
    let pieces = bytes.div_ceil(PIECE);
    let text = "a".repeat(PIECE);
    let (head, piece, tail, content_type) = match (wire, streamed) {
        (Wire::OpenAi, false) => (
            r#"{"id":"chatcmpl-flood","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":""#.to_owned(),
            text,
            r#""},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}"#.to_owned(),
            "application/json",
        ),
        (Wire::OpenAi, true) => (
            String::new(),
            format!(
                "data: {}\n\n",
                json!({"id": "chatcmpl-flood", "object": "chat.completion.chunk", "created": 1,
                       "model": "m", "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
            ),
            format!(
                "data: {}\n\ndata: [DONE]\n\n",
                json!({"id": "chatcmpl-flood", "object": "chat.completion.chunk", "created": 1,
                       "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            ),
            "text/event-stream",
        ),
        (Wire::Anthropic, false) => (
            r#"{"id":"msg_flood","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":""#.to_owned(),
            text,
            r#""}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}"#.to_owned(),
            "application/json",
        ),
        (Wire::Anthropic, true) => (
            format!(
                "event: message_start\ndata: {}\n\nevent: content_block_start\ndata: {}\n\n",
                json!({"type": "message_start", "message": {"id": "msg_flood", "type": "message",
                       "role": "assistant", "model": "m", "content": [],
                       "usage": {"input_tokens": 1, "output_tokens": 1}}}),
                json!({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}}),
            ),
            format!(
                "event: content_block_delta\ndata: {}\n\n",
                json!({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "text_delta", "text": text}})
            ),
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".to_owned(),
            "text/event-stream",
        ),
        (Wire::Ollama, false) => (
            r#"{"model":"m","created_at":"2023-12-12T14:13:43Z","message":{"role":"assistant","content":""#.to_owned(),
            text,
            r#""},"done":true,"done_reason":"stop","prompt_eval_count":1,"eval_count":1}"#.to_owned(),
            "application/json",
        ),
        (Wire::Ollama, true) => (
            String::new(),
            format!(
                "{}\n",
                json!({"model": "m", "created_at": "2023-12-12T14:13:43Z",
                       "message": {"role": "assistant", "content": text}, "done": false})
            ),
            format!(
                "{}\n",
                json!({"model": "m", "created_at": "2023-12-12T14:13:43Z",
                       "message": {"role": "assistant", "content": ""}, "done": true,
                       "done_reason": "stop", "prompt_eval_count": 1, "eval_count": 1})
            ),
            "application/x-ndjson",
        ),
    };
    let (head, piece, tail) = (Bytes::from(head), Bytes::from(piece), Bytes::from(tail));
    let chunks = std::iter::once(head)
        .chain(std::iter::repeat_n(piece, pieces))
        .chain(std::iter::once(tail))
        .map(move |chunk| {
            sent.fetch_add(chunk.len(), Ordering::Relaxed);
            Ok::<_, Infallible>(chunk)
        });
    let body = Body::from_stream(futures_util::stream::iter(chunks));
    ([("content-type", content_type)], body).into_response()
}
