//! One answer per tool call. The model calls a tool; then many requests
//! answer that call at the same moment: its result through `/turns` or the
//! OpenAI door, or a new user message, which records the call as abandoned.
//! Exactly one of them is stored for the call, decided by the store's own
//! transaction: on SQLite, and on PostgreSQL with the requests spread over
//! two servers sharing the database.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use octopus_testkit::fake_chat::{Answer, ChatProvider};
use serde_json::{Value, json};

use crate::harness::{Reply, TestServer};

/// Trials per test: the losing interleavings are not every run's.
const TRIALS: usize = 10;
/// Requests racing in one trial.
const RACERS: usize = 10;

/// How one racing request answers the call.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Racer {
    /// Its result through `POST /v1/conversations/{id}/turns`.
    TurnResult,
    /// Its result as OpenAI's tool message, through `/v1/chat/completions`.
    CompletionResult,
    /// A new user message: the call is recorded as abandoned.
    NewMessage,
}

struct Place {
    servers: Vec<TestServer>,
    fake: Arc<ChatProvider>,
    key: String,
    /// The agent's id.
    agent: String,
}

impl Place {
    async fn new(servers: Vec<TestServer>, fake: Arc<ChatProvider>, url: String) -> Self {
        let (_, key) = servers[0].tenant("acme").await;
        let (agent, _) = servers[0].chat_agent(&key, &url, json!({})).await;
        Self {
            servers,
            fake,
            key,
            agent,
        }
    }

    /// A conversation whose model has just called the tool, and the call's
    /// id.
    async fn pending_call(&self, trial: usize) -> (String, String) {
        let server = &self.servers[0];
        let conversation = server
            .conversation(&self.key, &self.agent, &format!("dana-{trial}"))
            .await;
        self.fake.then(Answer::tool_call(
            "call_fake_1",
            "get_order_status",
            json!({"order": "8821"}),
        ));
        let first = server
            .ok(
                Method::POST,
                &format!("/v1/conversations/{conversation}/turns"),
                &self.key,
                Some(json!({"message": "Where is order 8821?", "tools": tools()})),
                StatusCode::OK,
            )
            .await;
        let call = first["tool_calls"][0]["id"]
            .as_str()
            .expect("a tool call")
            .to_owned();
        (conversation, call)
    }

    /// One racing request, sent to server `index % servers`.
    fn request(
        &self,
        racer: Racer,
        (conversation, user, call): Trial<'_>,
        index: usize,
    ) -> Request<Body> {
        let (uri, body) = match racer {
            Racer::TurnResult => (
                format!("/v1/conversations/{conversation}/turns"),
                json!({"tool_results": [{"tool_call_id": call, "content": format!("result-{index}")}],
                       "tools": tools()}),
            ),
            Racer::NewMessage => (
                format!("/v1/conversations/{conversation}/turns"),
                json!({"message": format!("never mind, question {index}")}),
            ),
            Racer::CompletionResult => (
                "/v1/chat/completions".to_owned(),
                json!({"model": "support", "user": user,
                    "messages": [
                        {"role": "user", "content": "Where is order 8821?"},
                        {"role": "assistant", "content": null, "tool_calls": [{"id": call,
                            "type": "function", "function": {"name": "get_order_status",
                            "arguments": "{\"order\":\"8821\"}"}}]},
                        {"role": "tool", "tool_call_id": call, "content": format!("result-{index}")},
                    ],
                    "tools": [{"type": "function", "function": tools()[0]}]}),
            ),
        };
        let mut request = Request::builder()
            .method(Method::POST)
            .uri(uri)
            .header(header::AUTHORIZATION, format!("Bearer {}", self.key))
            .header(header::CONTENT_TYPE, "application/json");
        if racer == Racer::CompletionResult {
            request = request.header("x-octopus-conversation", conversation);
        }
        request.body(Body::from(body.to_string())).unwrap()
    }

    /// Sends every racer at once; their answers, in the racers' order.
    async fn race(&self, racers: &[Racer], trial: Trial<'_>) -> Vec<Reply> {
        let sent = racers.iter().enumerate().map(|(index, racer)| {
            let server = &self.servers[index % self.servers.len()];
            server.send(self.request(*racer, trial, index))
        });
        futures_util::future::join_all(sent).await
    }

    async fn messages(&self, conversation: &str) -> Vec<Value> {
        self.servers[0]
            .conversation_messages(&self.key, conversation)
            .await
    }

    /// Races `racers` in fresh conversations, trial after trial, and checks
    /// each trial's outcome.
    async fn trials(&self, racers: &[Racer]) {
        for trial in 0..TRIALS {
            let (conversation, call) = self.pending_call(trial).await;
            let user = format!("dana-{trial}");
            let replies = self.race(racers, (&conversation, &user, &call)).await;
            let results_won: Vec<usize> = (0..racers.len())
                .filter(|&i| racers[i] != Racer::NewMessage && replies[i].status == StatusCode::OK)
                .collect();
            for (index, reply) in replies.iter().enumerate() {
                match racers[index] {
                    Racer::NewMessage => assert_eq!(
                        reply.status,
                        StatusCode::OK,
                        "trial {trial}: a new message always goes through: {}",
                        reply.body
                    ),
                    _ if reply.status == StatusCode::OK => {}
                    _ => {
                        assert_eq!(
                            reply.status,
                            StatusCode::CONFLICT,
                            "trial {trial}: {}",
                            reply.body
                        );
                        assert_eq!(reply.code(), "no_pending_tool_calls", "trial {trial}");
                    }
                }
            }
            assert!(
                results_won.len() <= 1,
                "trial {trial}: {} results were taken for one call",
                results_won.len()
            );
            let messages = self.messages(&conversation).await;
            let answers: Vec<&Value> = messages
                .iter()
                .filter(|m| m["role"] == "tool" && m["tool_call_id"] == call)
                .collect();
            assert_eq!(
                answers.len(),
                1,
                "trial {trial}: the call is answered once, by a result or an abandonment: {answers:?}"
            );
            let abandoned = answers[0]["tool_calls"][0]["result"]["abandoned"] == true;
            assert_eq!(
                abandoned,
                results_won.is_empty(),
                "trial {trial}: the call was abandoned exactly when no result won"
            );
            if !racers.contains(&Racer::NewMessage) {
                assert_eq!(results_won.len(), 1, "trial {trial}: one result wins");
            }
            // What the model was sent last pairs the call with one answer.
            let sent = self.fake.last_body();
            let sent_answers = sent["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "tool")
                .count();
            assert!(
                sent_answers <= 1,
                "trial {trial}: the model saw {sent_answers} answers"
            );
        }
    }
}

/// A trial's conversation, its user and the pending call's id.
type Trial<'a> = (&'a str, &'a str, &'a str);

fn tools() -> Value {
    json!([{"name": "get_order_status", "parameters": {"type": "object"}}])
}

fn all_results() -> Vec<Racer> {
    (0..RACERS)
        .map(|i| match i % 2 {
            0 => Racer::TurnResult,
            _ => Racer::CompletionResult,
        })
        .collect()
}

fn results_and_messages() -> Vec<Racer> {
    (0..RACERS)
        .map(|i| match i % 2 {
            0 => Racer::CompletionResult,
            _ => Racer::NewMessage,
        })
        .chain([Racer::TurnResult])
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_sqlite_one_of_many_results_sent_at_once_is_taken() {
    let (server, fake, url) = TestServer::with_fake_chat().await;
    let place = Place::new(vec![server], fake, url).await;
    place.trials(&all_results()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_sqlite_a_call_is_answered_or_abandoned_once_when_results_and_messages_race() {
    let (server, fake, url) = TestServer::with_fake_chat().await;
    let place = Place::new(vec![server], fake, url).await;
    place.trials(&results_and_messages()).await;
}

#[cfg(feature = "postgres-tests")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_postgres_two_servers_take_one_of_many_results_sent_at_once() {
    let (servers, fake, url) = TestServer::pair_on_postgres_with_fake_chat().await;
    let place = Place::new(servers.into(), fake, url).await;
    place.trials(&all_results()).await;
    place.trials(&results_and_messages()).await;
}
