//! A small read-through cache with expiry, for facts read on every request and
//! rarely changed: which tenant a key belongs to, an agent's configuration, a
//! conversation's agent, a query's vector.
//!
//! Entries expire after a few seconds, so a change made by another server process
//! (a revoked key, an edited agent) is seen within that time; changes made through
//! this process invalidate their entry at once. When full, the cache keeps
//! what is read often and lets the rest go (moka's TinyLFU), so one client
//! cycling through many keys cannot empty it for everyone else.

use std::hash::Hash;
use std::time::Duration;

pub(crate) struct TtlCache<K, V> {
    entries: moka::sync::Cache<K, V>,
}

impl<K, V> TtlCache<K, V>
where
    K: Eq + Hash + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    pub fn new(ttl: Duration, capacity: usize) -> Self {
        Self {
            entries: moka::sync::Cache::builder()
                .max_capacity(capacity as u64)
                .time_to_live(ttl)
                .build(),
        }
    }

    pub fn get(&self, key: &K) -> Option<V> {
        self.entries.get(key)
    }

    pub fn insert(&self, key: K, value: V) {
        self.entries.insert(key, value);
    }

    pub fn remove(&self, key: &K) {
        self.entries.invalidate(key);
    }

    pub fn clear(&self) {
        self.entries.invalidate_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expired_and_removed_entries_are_not_returned() {
        let expired = TtlCache::new(Duration::from_millis(1), 10);
        expired.insert(1, "a");
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(expired.get(&1), None);
        let fresh = TtlCache::new(Duration::from_secs(3600), 10);
        fresh.insert(1, "a");
        assert_eq!(fresh.get(&1), Some("a"));
        fresh.remove(&1);
        assert_eq!(fresh.get(&1), None);
        fresh.insert(2, "b");
        fresh.clear();
        assert_eq!(fresh.get(&2), None);
    }

    #[test]
    fn a_full_cache_keeps_what_is_read_often() {
        let cache = TtlCache::new(Duration::from_secs(3600), 16);
        for _ in 0..8 {
            cache.insert(0, 0);
            assert_eq!(cache.get(&0), Some(0));
        }
        for key in 1..1_000 {
            cache.insert(key, key);
        }
        cache.entries.run_pending_tasks();
        assert!(
            cache.entries.entry_count() <= 16,
            "{}",
            cache.entries.entry_count()
        );
        assert_eq!(
            cache.get(&0),
            Some(0),
            "a hot entry survives a sweep of cold ones"
        );
    }
}
