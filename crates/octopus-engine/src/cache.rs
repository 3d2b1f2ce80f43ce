//! A small read-through cache with expiry, for facts read on every request and
//! rarely changed: which tenant a key belongs to, an agent's configuration, a
//! conversation's agent.
//!
//! Entries expire after a few seconds, so a change made by another server process
//! (a revoked key, an edited agent) is seen within that time; changes made through
//! this process invalidate their entry at once.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::RwLock;
use std::time::{Duration, Instant};

pub(crate) struct TtlCache<K, V> {
    entries: RwLock<HashMap<K, (V, Instant)>>,
    ttl: Duration,
    capacity: usize,
}

impl<K: Eq + Hash + Clone, V: Clone> TtlCache<K, V> {
    pub fn new(ttl: Duration, capacity: usize) -> Self {
        Self {
            entries: RwLock::new(HashMap::new()),
            ttl,
            capacity,
        }
    }

    pub fn get(&self, key: &K) -> Option<V> {
        let entries = self.entries.read().unwrap_or_else(|p| p.into_inner());
        entries
            .get(key)
            .filter(|(_, stored)| stored.elapsed() < self.ttl)
            .map(|(value, _)| value.clone())
    }

    pub fn insert(&self, key: K, value: V) {
        let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= self.capacity {
            // Dropping everything is crude but bounded, and refills at the cost of
            // one read per active key.
            entries.clear();
        }
        entries.insert(key, (value, Instant::now()));
    }

    pub fn remove(&self, key: &K) {
        self.entries
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }

    pub fn clear(&self) {
        self.entries
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expired_entries_are_not_returned() {
        let expired = TtlCache::new(Duration::ZERO, 10);
        expired.insert(1, "a");
        assert_eq!(expired.get(&1), None);
        let fresh = TtlCache::new(Duration::from_secs(3600), 10);
        fresh.insert(1, "a");
        assert_eq!(fresh.get(&1), Some("a"));
        fresh.remove(&1);
        assert_eq!(fresh.get(&1), None);
    }

    #[test]
    fn capacity_is_bounded() {
        let cache = TtlCache::new(Duration::from_secs(3600), 2);
        for key in 0..5 {
            cache.insert(key, key);
            assert!(cache.entries.read().unwrap().len() <= 2);
        }
        assert_eq!(cache.get(&4), Some(4), "the newest entry is kept");
    }
}
