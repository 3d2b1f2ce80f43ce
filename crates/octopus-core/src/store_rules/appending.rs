//! The decisions an append and a close make inside a store's transaction:
//! which episode a message joins, how it counts, what is stored, and why an
//! episode ends. Every SQL store reads the rows these need, calls these
//! functions, and writes what they decide, so that the stores differ in SQL
//! alone.
//!
//! # The write path, and what search sees
//!
//! An append is validated and its tokens counted in the engine, which takes the
//! conversation's agent from a cache. The store encodes content (JSON, gzip past
//! 256 bytes) before taking the writer lock, then in one transaction checks the
//! conversation (missing: 404; deleted: 410), places the messages
//! (`appending::Placement`, `OpenEpisode`), writes them with consecutive
//! ordinals, updates the episode's counters, queues their embedding, and
//! commits.
//!
//! SQLite's message index is not maintained in that transaction. It lives in
//! its own file with its own write lock; an indexer thread follows
//! `messages.seq` in batches, woken by each append. Before a search runs, it
//! catches the index up itself.
//!
//! > **Invariant:** a search sees every message whose append returned before
//! > the search began. Under heavy ingest the search pays for the catch-up;
//! > appends never do. The index is derived: deleted, it is rebuilt from the
//! > messages; results are joined to live rows, so leftovers never show.

use crate::chat::Usage;
use crate::conversation::Conversation;
use crate::episode::{CloseEpisode, EndReason, Episode};
use crate::memory_jobs::WorkClass;
use crate::message::Message;
use crate::message::{MessageContent, Role, ToolCallRecord};
use crate::{AgentId, ConversationId, DomainCode, EpisodeId, Error, MessageId, Result, Timestamp};

/// A message ready to store: validated, with its id, token count and timestamp
/// decided.
#[derive(Clone, Debug, PartialEq)]
pub struct MessageRecord {
    pub id: MessageId,
    pub role: Role,
    pub content: Option<MessageContent>,
    pub name: Option<String>,
    pub tool_call_id: Option<String>,
    pub tool_calls: Vec<ToolCallRecord>,
    pub token_count: u32,
    pub timestamp: Timestamp,
    pub agent_id: Option<AgentId>,
    pub contains_pii: bool,
    pub redacted_content: Option<String>,
    /// How the message adds to its episode's token totals.
    pub accounting: TokenAccounting,
}

/// How a stored message adds to its episode's input and output token totals.
/// A turn's messages are counted by the provider's usage, so that an
/// episode's totals are what its model calls were billed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TokenAccounting {
    /// Its token count: as output for an assistant, as input otherwise (the
    /// messages a caller records itself).
    #[default]
    ByRole,
    /// Part of the prompt of a model call that Octopus makes (a turn's user
    /// message, a tool's result): counted in that call's reported usage.
    InModelCall,
    /// A model's reply: adds the usage its provider reported for the call.
    Reported(crate::chat::Usage),
}

/// A batch of messages for one conversation.
#[derive(Clone, Debug)]
pub struct AppendMessages {
    pub conversation_id: ConversationId,
    pub messages: Vec<MessageRecord>,
    /// A message whose timestamp is later than the open episode's last message by
    /// more than this closes that episode (`timeout`, ended at its last message)
    /// and opens a new one.
    pub idle_timeout: chrono::Duration,
    /// The time of the append: `created_at` of rows written.
    pub now: Timestamp,
    /// The class of the memory work the batch queues (embeddings, and the
    /// summary of an episode the batch closes).
    pub work_class: WorkClass,
    /// The state of the conversation the batch was decided from, when it
    /// must follow exactly that state (see [`SeenTail`]).
    pub follows: Option<SeenTail>,
    /// Queue the learning of the open episode's facts each time it has had
    /// this many user messages since the last learning was queued; 0 never.
    pub learn_every: u32,
}

/// Where a batch goes, what its episodes' rules are, and the clock it is
/// stamped with.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    pub conversation_id: ConversationId,
    /// A message later than the open episode's last by more than this
    /// closes that episode and opens another.
    pub idle_timeout: chrono::Duration,
    pub now: Timestamp,
    /// The class of the memory work the batch queues.
    pub work_class: WorkClass,
    /// When set, the batch must follow exactly this state of the
    /// conversation, or it is refused whole.
    pub follows: Option<SeenTail>,
    /// User messages between two learnings of the open episode's facts; 0 never.
    pub learn_every: u32,
}

/// What a caller saw of a conversation when it decided what to append: the
/// open episode and how many messages it held. A batch decided from that
/// state (the answer to a pending tool call, or the call recorded as
/// abandoned) is refused when anything was appended, closed or opened since,
/// so that two requests deciding from one state cannot both be stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeenTail {
    pub episode_id: EpisodeId,
    pub message_count: u32,
}

impl SeenTail {
    /// Whether the open episode found in the append's transaction is still
    /// the one `expected` saw; `conversation_moved` when it is not.
    pub fn check(expected: Option<SeenTail>, open: Option<&OpenEpisode>) -> Result<()> {
        let Some(expected) = expected else {
            return Ok(());
        };
        match open {
            Some(open)
                if open.id == expected.episode_id
                    && open.message_count == expected.message_count =>
            {
                Ok(())
            }
            _ => Err(Error::conflict(
                DomainCode::ConversationMoved,
                "the conversation changed while this request was decided; send it again",
            )),
        }
    }
}

impl Placement {
    /// Where `batch` goes.
    pub fn of(batch: &AppendMessages) -> Self {
        Self {
            conversation_id: batch.conversation_id,
            idle_timeout: batch.idle_timeout,
            now: batch.now,
            work_class: batch.work_class,
            follows: batch.follows,
            learn_every: batch.learn_every,
        }
    }

    /// An imported session: one episode however long its pauses, its work
    /// queued behind live conversations'.
    pub fn import(conversation_id: ConversationId, now: Timestamp) -> Self {
        Self {
            conversation_id,
            idle_timeout: chrono::Duration::MAX,
            now,
            work_class: WorkClass::Bulk,
            follows: None,
            learn_every: 0,
        }
    }
}

/// A deleted conversation takes no messages.
pub fn refuse_deleted(conversation: &Conversation) -> Result<()> {
    match conversation.deleted_at {
        Some(_) => Err(Error::gone(
            DomainCode::ConversationDeleted,
            format!(
                "conversation {} was deleted and takes no new messages",
                conversation.id
            ),
        )),
        None => Ok(()),
    }
}

/// The open episode of a conversation, as an append counts into it.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenEpisode {
    pub id: EpisodeId,
    pub message_count: u32,
    pub last_message_at: Timestamp,
    pub input_tokens: i64,
    pub output_tokens: i64,
    /// User messages since the last learning of its facts was queued.
    pub unlearned_user_messages: u32,
}

impl OpenEpisode {
    /// A new episode whose first message is at `at`.
    pub fn started(id: EpisodeId, at: Timestamp) -> Self {
        Self {
            id,
            message_count: 0,
            last_message_at: at,
            input_tokens: 0,
            output_tokens: 0,
            unlearned_user_messages: 0,
        }
    }

    /// Whether the batch just counted in calls for learning this episode's
    /// facts (`learn_every` user messages since the last learning was
    /// queued); the count starts again when it does. The store queues the
    /// learning in the append's transaction, so it is queued once.
    pub fn learning_due(&mut self, batch: &Placement) -> bool {
        let due = batch.learn_every > 0 && self.unlearned_user_messages >= batch.learn_every;
        if due {
            self.unlearned_user_messages = 0;
        }
        due
    }

    /// Whether a message at `at` still belongs to this episode: it came no
    /// later than the idle timeout after the last one.
    pub fn takes(&self, at: Timestamp, idle_timeout: chrono::Duration) -> bool {
        at - self.last_message_at <= idle_timeout
    }

    /// How this episode ends when a message came too late for it: by
    /// timeout, at its last message.
    pub fn timed_out(&self, batch: &Placement) -> Closing {
        Closing {
            reason: EndReason::Timeout,
            ended_at: self.last_message_at,
            now: batch.now,
            class: batch.work_class,
        }
    }

    /// Counts `record` into this episode (its ordinal, its tokens, its time)
    /// and returns the message as stored.
    pub fn add(&mut self, record: MessageRecord, batch: &Placement) -> Message {
        let usage = match record.accounting {
            TokenAccounting::Reported(usage) => Some(usage),
            _ => None,
        };
        match record.accounting {
            TokenAccounting::ByRole if record.role.is_model_output() => {
                self.output_tokens += i64::from(record.token_count);
            }
            TokenAccounting::ByRole => self.input_tokens += i64::from(record.token_count),
            TokenAccounting::InModelCall => {}
            TokenAccounting::Reported(Usage {
                input_tokens,
                output_tokens,
            }) => {
                self.input_tokens += clamp_tokens(input_tokens);
                self.output_tokens += clamp_tokens(output_tokens);
            }
        }
        self.last_message_at = self.last_message_at.max(record.timestamp);
        if record.role == Role::User {
            self.unlearned_user_messages += 1;
        }
        let ordinal = self.message_count;
        self.message_count += 1;
        Message {
            id: record.id,
            episode_id: self.id,
            conversation_id: batch.conversation_id,
            ordinal,
            role: record.role,
            content: record.content,
            name: record.name,
            tool_call_id: record.tool_call_id,
            tool_calls: record.tool_calls,
            token_count: record.token_count,
            timestamp: record.timestamp,
            agent_id: record.agent_id,
            contains_pii: record.contains_pii,
            redacted_content: record.redacted_content,
            embedding_ref: None,
            usage,
            created_at: batch.now,
        }
    }
}

/// Token counts as the stores keep them (signed 64-bit), saturating.
pub fn clamp_tokens(tokens: u64) -> i64 {
    i64::try_from(tokens).unwrap_or(i64::MAX)
}

/// How an episode ends: why, when, and the class of its summary's work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Closing {
    pub reason: EndReason,
    pub ended_at: Timestamp,
    pub now: Timestamp,
    pub class: WorkClass,
}

impl Closing {
    /// An episode found idle by the sweep: by timeout, at its last message.
    pub fn idle(last_message_at: Timestamp, now: Timestamp) -> Self {
        Self {
            reason: EndReason::Timeout,
            ended_at: last_message_at,
            now,
            class: WorkClass::Live,
        }
    }

    /// An open episode being deleted, alone or with its conversation: a
    /// deleted episode must not stay its conversation's open one, so it
    /// closes as its user would have closed it, at the deletion.
    pub fn deleted(at: Timestamp) -> Self {
        Self {
            reason: EndReason::UserClosed,
            ended_at: at,
            now: at,
            class: WorkClass::Live,
        }
    }

    /// An imported session, closed at its last message once stored; its
    /// summary waits behind live conversations'.
    pub fn imported(last_message_at: Timestamp, now: Timestamp) -> Self {
        Self {
            reason: EndReason::Imported,
            ended_at: last_message_at,
            now,
            class: WorkClass::Bulk,
        }
    }

    /// The close a caller asked for, or why it cannot be: the episode is
    /// closed already, or the end asked for lies before its last message.
    /// Episode times only move forward: started, last message, ended.
    pub fn requested(episode: &Episode, close: &CloseEpisode, now: Timestamp) -> Result<Self> {
        if !episode.is_open() {
            return Err(Error::conflict(
                DomainCode::EpisodeClosed,
                format!("episode {} is closed already", episode.id),
            ));
        }
        if close
            .ended_at
            .is_some_and(|end| end < episode.last_message_at)
        {
            return Err(Error::invalid(
                "ended_at",
                format!(
                    "must not be before the episode's last message ({})",
                    episode.last_message_at
                ),
            ));
        }
        Ok(Self {
            reason: close.reason,
            ended_at: close.ended_at.unwrap_or(now).max(episode.last_message_at),
            now,
            // An imported session's summary waits behind live conversations.
            class: match close.reason {
                EndReason::Imported => WorkClass::Bulk,
                _ => WorkClass::Live,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Role;
    use crate::{MessageId, now};

    fn record(
        role: Role,
        tokens: u32,
        at: Timestamp,
        accounting: TokenAccounting,
    ) -> MessageRecord {
        MessageRecord {
            id: MessageId::new(),
            role,
            content: None,
            name: None,
            tool_call_id: None,
            tool_calls: Vec::new(),
            token_count: tokens,
            timestamp: at,
            agent_id: None,
            contains_pii: false,
            redacted_content: None,
            accounting,
        }
    }

    fn batch(at: Timestamp) -> Placement {
        Placement {
            conversation_id: ConversationId::new(),
            idle_timeout: chrono::Duration::minutes(30),
            now: at,
            work_class: WorkClass::Live,
            follows: None,
            learn_every: 0,
        }
    }

    #[test]
    fn learning_is_due_every_so_many_user_messages_and_counts_again_from_there() {
        let placement = Placement {
            learn_every: 2,
            ..batch(now())
        };
        let mut episode = OpenEpisode::started(EpisodeId::new(), now());
        for role in [Role::User, Role::Assistant, Role::Tool] {
            episode.add(record(role, 3, now(), TokenAccounting::ByRole), &placement);
        }
        assert!(!episode.learning_due(&placement), "one user message of two");
        episode.add(
            record(Role::User, 3, now(), TokenAccounting::ByRole),
            &placement,
        );
        assert!(episode.learning_due(&placement));
        assert_eq!(episode.unlearned_user_messages, 0, "counted again");
        assert!(!episode.learning_due(&placement), "queued once");
        episode.add(
            record(Role::User, 3, now(), TokenAccounting::ByRole),
            &placement,
        );
        episode.add(
            record(Role::User, 3, now(), TokenAccounting::ByRole),
            &placement,
        );
        let off = Placement {
            learn_every: 0,
            ..placement
        };
        assert!(!episode.learning_due(&off), "0 learns at close only");
        assert!(episode.learning_due(&placement));
    }

    #[test]
    fn a_batch_that_must_follow_a_state_is_refused_once_anything_moved() {
        let open = OpenEpisode {
            message_count: 3,
            ..OpenEpisode::started(EpisodeId::new(), now())
        };
        let seen = SeenTail {
            episode_id: open.id,
            message_count: 3,
        };
        assert!(
            SeenTail::check(None, None).is_ok(),
            "no expectation, no check"
        );
        assert!(SeenTail::check(Some(seen), Some(&open)).is_ok());
        let moved = |open: Option<&OpenEpisode>| {
            matches!(
                SeenTail::check(Some(seen), open),
                Err(Error::Conflict {
                    code: DomainCode::ConversationMoved,
                    ..
                })
            )
        };
        let appended = OpenEpisode {
            message_count: 4,
            ..open.clone()
        };
        let another = OpenEpisode::started(EpisodeId::new(), now());
        assert!(moved(Some(&appended)), "a message was appended since");
        assert!(moved(Some(&another)), "another episode opened since");
        assert!(moved(None), "the episode closed since");
    }

    #[test]
    fn a_message_joins_up_to_the_idle_timeout_and_not_a_microsecond_after() {
        let start = now();
        let episode = OpenEpisode::started(EpisodeId::new(), start);
        let idle = chrono::Duration::minutes(30);
        assert!(episode.takes(start + idle, idle));
        assert!(!episode.takes(start + idle + chrono::Duration::microseconds(1), idle));
        let closing = episode.timed_out(&batch(start + idle * 2));
        assert_eq!(closing.reason, EndReason::Timeout);
        assert_eq!(closing.ended_at, start, "ended at its last message");
    }

    #[test]
    fn tokens_count_by_role_by_reported_usage_or_not_at_all() {
        let at = now();
        let batch = batch(at);
        let mut episode = OpenEpisode::started(EpisodeId::new(), at);
        let user = episode.add(record(Role::User, 10, at, TokenAccounting::ByRole), &batch);
        episode.add(
            record(Role::Assistant, 7, at, TokenAccounting::ByRole),
            &batch,
        );
        episode.add(
            record(Role::User, 99, at, TokenAccounting::InModelCall),
            &batch,
        );
        let usage = Usage {
            input_tokens: 120,
            output_tokens: 30,
        };
        let reply = episode.add(
            record(Role::Assistant, 30, at, TokenAccounting::Reported(usage)),
            &batch,
        );
        assert_eq!((episode.input_tokens, episode.output_tokens), (130, 37));
        assert_eq!(
            (user.ordinal, reply.ordinal, episode.message_count),
            (0, 3, 4)
        );
        assert_eq!((user.usage, reply.usage), (None, Some(usage)));
        assert_eq!(reply.episode_id, episode.id);
    }

    #[test]
    fn an_earlier_message_does_not_move_the_last_message_back() {
        let at = now();
        let mut episode = OpenEpisode::started(EpisodeId::new(), at);
        let earlier = at - chrono::Duration::seconds(5);
        episode.add(
            record(Role::User, 1, earlier, TokenAccounting::ByRole),
            &batch(at),
        );
        assert_eq!(episode.last_message_at, at);
    }
}
