//! Vectors of recent query texts. An agent's users repeat themselves
//! ("hi", "thanks", the same question asked twice), and a client that asks
//! for recall and then for the context of the same message embeds it twice;
//! a vector for a text never changes while the model does not, and embedding
//! a query is most of a search's time.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// At most `capacity` texts' vectors; the oldest stored is forgotten first.
pub(crate) struct QueryVectors {
    capacity: usize,
    stored: Mutex<Stored>,
}

#[derive(Default)]
struct Stored {
    vectors: HashMap<Arc<str>, Arc<Vec<f32>>>,
    order: VecDeque<Arc<str>>,
}

impl QueryVectors {
    /// `capacity` 0 keeps nothing.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            stored: Mutex::default(),
        }
    }

    pub fn get(&self, text: &str) -> Option<Arc<Vec<f32>>> {
        let stored = self.stored.lock().unwrap_or_else(|p| p.into_inner());
        stored.vectors.get(text).cloned()
    }

    pub fn put(&self, text: &str, vector: Arc<Vec<f32>>) {
        if self.capacity == 0 {
            return;
        }
        let mut stored = self.stored.lock().unwrap_or_else(|p| p.into_inner());
        let key: Arc<str> = Arc::from(text);
        if stored.vectors.insert(Arc::clone(&key), vector).is_none() {
            stored.order.push_back(key);
        }
        while stored.order.len() > self.capacity {
            if let Some(oldest) = stored.order.pop_front() {
                stored.vectors.remove(&oldest);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_text_is_forgotten_first_and_zero_keeps_nothing() {
        let cache = QueryVectors::new(2);
        cache.put("a", Arc::new(vec![1.0]));
        cache.put("b", Arc::new(vec![2.0]));
        cache.put("a", Arc::new(vec![1.0]));
        cache.put("c", Arc::new(vec![3.0]));
        assert_eq!(cache.get("a"), None);
        assert_eq!(cache.get("b").as_deref(), Some(&vec![2.0]));
        assert_eq!(cache.get("c").as_deref(), Some(&vec![3.0]));
        let off = QueryVectors::new(0);
        off.put("a", Arc::new(vec![1.0]));
        assert_eq!(off.get("a"), None);
    }
}
