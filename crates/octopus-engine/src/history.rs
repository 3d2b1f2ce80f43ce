//! The in-process cache of recent conversations' history, so that a turn
//! does not read its history from the store each time; bounded in memory.
//!
//! It is an optimisation only. Every turn reads the conversation's open
//! episode (one indexed row) and uses the cached messages only when the
//! episode and its message count are those cached; otherwise the history is
//! read again from the messages table. So a restart, or a second server on the
//! same data, gives the same history, and a message appended through another
//! process is never missed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use octopus_core::appending::SeenTail;
use octopus_core::chat_history::History;
use octopus_core::{ConversationId, EpisodeId, TenantId};

type Key = (TenantId, ConversationId);

/// Where a conversation's history stood when it was cached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HistoryVersion {
    pub episode: EpisodeId,
    pub message_count: u32,
    /// The episode's `updated_at`: an erased message changes it, and not
    /// the count.
    pub updated_at: octopus_core::Timestamp,
    /// Built from redacted text (the agent's `pii` policy redacting outgoing text).
    pub redacted: bool,
}

impl HistoryVersion {
    /// The state of the conversation this history was read from.
    pub fn seen(self) -> SeenTail {
        SeenTail {
            episode_id: self.episode,
            message_count: self.message_count,
        }
    }
}

struct Entry {
    version: HistoryVersion,
    history: Arc<History>,
    bytes: usize,
    last_used: u64,
}

pub(crate) struct HistoryCache {
    state: Mutex<State>,
    max_bytes: usize,
}

#[derive(Default)]
struct State {
    entries: HashMap<Key, Entry>,
    bytes: usize,
    clock: u64,
}

/// Bytes an entry holds, near enough for a bound.
fn size(history: &History) -> usize {
    let calls = |calls: &[octopus_core::chat::ToolCall]| -> usize {
        calls
            .iter()
            .map(|c| c.id.len() + c.name.len() + c.arguments.to_string().len() + 64)
            .sum()
    };
    history
        .messages
        .iter()
        .map(|m| {
            m.content.len() + m.name.as_ref().map_or(0, String::len) + calls(&m.tool_calls) + 64
        })
        .sum::<usize>()
        + history.pending.len() * 256
        + 128
}

impl HistoryCache {
    pub(crate) fn new(max_bytes: usize) -> Self {
        Self {
            state: Mutex::default(),
            max_bytes,
        }
    }

    /// The cached history, if it is still at `version`.
    pub(crate) fn get(&self, key: Key, version: HistoryVersion) -> Option<Arc<History>> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.clock += 1;
        let clock = state.clock;
        let entry = state.entries.get_mut(&key)?;
        if entry.version != version {
            return None;
        }
        entry.last_used = clock;
        Some(Arc::clone(&entry.history))
    }

    /// Drops a conversation's history; returns whether one was cached.
    pub(crate) fn remove(&self, key: Key) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match state.entries.remove(&key) {
            Some(entry) => {
                state.bytes -= entry.bytes;
                true
            }
            None => false,
        }
    }

    /// Caches a history, evicting the least recently used ones beyond the bound.
    pub(crate) fn put(&self, key: Key, version: HistoryVersion, history: Arc<History>) {
        let bytes = size(&history);
        if bytes > self.max_bytes {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.clock += 1;
        let last_used = state.clock;
        if let Some(old) = state.entries.insert(
            key,
            Entry {
                version,
                history,
                bytes,
                last_used,
            },
        ) {
            state.bytes -= old.bytes;
        }
        state.bytes += bytes;
        while state.bytes > self.max_bytes {
            let Some(oldest) = state
                .entries
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(k, _)| *k)
            else {
                break;
            };
            if let Some(evicted) = state.entries.remove(&oldest) {
                state.bytes -= evicted.bytes;
            }
        }
    }

    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use octopus_core::message::Role;
    use octopus_core::working_memory::ChatMessage;

    fn history(n: usize, len: usize) -> Arc<History> {
        Arc::new(History {
            messages: (0..n)
                .map(|_| ChatMessage::new(Role::User, "x".repeat(len)))
                .collect(),
            pending: Vec::new(),
        })
    }

    #[test]
    fn stays_within_its_bound_and_evicts_the_least_recently_used() {
        let cache = HistoryCache::new(10_000);
        let version = HistoryVersion {
            episode: EpisodeId::new(),
            message_count: 3,
            updated_at: octopus_core::now(),
            redacted: false,
        };
        let keys: Vec<Key> = (0..5)
            .map(|_| (TenantId::new(), ConversationId::new()))
            .collect();
        for key in &keys[..3] {
            cache.put(*key, version, history(3, 1000)); // ~3.3 kB each
        }
        assert!(cache.get(keys[0], version).is_some()); // 0 is now the most recent
        cache.put(keys[3], version, history(3, 1000));
        assert!(cache.bytes() <= 10_000);
        assert!(
            cache.get(keys[1], version).is_none(),
            "the least recently used went"
        );
        assert!(cache.get(keys[0], version).is_some());
        // A newer version of the conversation is a miss, never stale data.
        let newer = HistoryVersion {
            message_count: 4,
            ..version
        };
        assert!(cache.get(keys[0], newer).is_none());
        // Too big to cache at all.
        cache.put(keys[4], version, history(20, 1000));
        assert!(cache.get(keys[4], version).is_none());
        assert!(cache.bytes() <= 10_000);
    }
}
