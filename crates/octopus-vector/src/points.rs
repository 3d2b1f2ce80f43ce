//! One collection's vectors and the fields of each.
//!
//! The fields map is the record of what is held: a key is in it exactly
//! when its vector is in the index. A search filters on the fields as it
//! walks (a partition, labels, a time window); sets whose searches keep to
//! one partition are not held here at all
//! (`octopus_core::memory_rows::search_rows`).

use std::collections::HashMap;

use octopus_core::vectors::{PointFields, PointFilter};

use crate::fields::{StoredFields, StoredFilter, Symbols};
use crate::{HnswError, Neighbour, VectorIndex};

pub(crate) struct Points {
    index: VectorIndex,
    fields: HashMap<u64, StoredFields>,
    /// Kept for the collection's lifetime in this process; erasing drops
    /// the whole collection.
    symbols: Symbols,
}

impl Points {
    pub fn new(dimension: usize) -> Self {
        Self {
            index: VectorIndex::exact(dimension),
            fields: HashMap::new(),
            symbols: Symbols::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.fields.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    pub fn holds(&self, key: u64) -> bool {
        self.fields.contains_key(&key)
    }

    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.fields.keys().copied()
    }

    /// Lets go of capacity grown while points were added: after a burst of
    /// inserts, vectors held in doubled arrays take up to twice their size.
    pub fn shrink_to_fit(&mut self) {
        self.index.shrink_to_fit();
        self.fields.shrink_to_fit();
    }

    pub fn index(&self) -> &VectorIndex {
        &self.index
    }

    pub fn index_mut(&mut self) -> &mut VectorIndex {
        &mut self.index
    }

    /// Makes `graph`, loaded from a save, the index of an empty collection:
    /// the keys `truth` still holds keep their place in it; every other key
    /// is removed from it.
    pub fn adopt(
        &mut self,
        mut graph: VectorIndex,
        truth: &HashMap<u64, PointFields>,
    ) -> Result<(), HnswError> {
        debug_assert!(self.is_empty());
        for key in graph.keys() {
            match truth.get(&key) {
                Some(fields) => {
                    let stored = StoredFields::new(fields, &mut self.symbols);
                    self.fields.insert(key, stored);
                }
                None => {
                    graph.remove(key)?;
                }
            }
        }
        self.index = graph;
        Ok(())
    }

    /// Adds the points not held yet; a key already held keeps its vector.
    pub fn insert(&mut self, items: &[(u64, &[f32], &PointFields)]) -> Result<(), HnswError> {
        let new: Vec<_> = items
            .iter()
            .filter(|(key, _, _)| !self.holds(*key))
            .collect();
        let vectors: Vec<(u64, &[f32])> = new.iter().map(|&&(k, v, _)| (k, v)).collect();
        // Fields only once the index took the vectors, so that a failure
        // leaves the keys missing, to be added again by a reconcile.
        self.index.insert_many(&vectors)?;
        for &&(key, _, fields) in &new {
            let stored = StoredFields::new(fields, &mut self.symbols);
            self.fields.insert(key, stored);
        }
        Ok(())
    }

    /// Removes `key`; false when it was not held.
    pub fn remove(&mut self, key: u64) -> Result<bool, HnswError> {
        if self.fields.remove(&key).is_none() {
            return Ok(false);
        }
        self.index.remove(key)?;
        Ok(true)
    }

    /// The `top_k` nearest points that `filter` admits, best first.
    pub fn search(
        &self,
        query: &[f32],
        top_k: usize,
        filter: &PointFilter,
    ) -> Result<Vec<Neighbour>, HnswError> {
        let Some(filter) = StoredFilter::new(filter, &self.symbols) else {
            return Ok(Vec::new());
        };
        let admitted = |key: u64| {
            self.fields
                .get(&key)
                .is_some_and(|fields| filter.admits(fields))
        };
        self.index.search(query, top_k, admitted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(name: Option<&str>) -> PointFields {
        PointFields {
            partition: name.map(str::to_owned),
            ..PointFields::default()
        }
    }

    /// A fifth of a radian apart, under a turn in all: no near ties.
    fn around(angle: f32) -> Vec<f32> {
        vec![angle.cos(), angle.sin()]
    }

    #[test]
    fn a_search_keeps_to_its_partition_and_without_one_sees_all() {
        let mut points = Points::new(2);
        let people = [Some("ann"), Some("bob"), None];
        let vectors: Vec<Vec<f32>> = (0..30).map(|k| around(k as f32 * 0.2)).collect();
        let fields: Vec<PointFields> = (0..30).map(|k| user(people[k % 3])).collect();
        let items: Vec<(u64, &[f32], &PointFields)> = (0..30)
            .map(|k| (k as u64, vectors[k].as_slice(), &fields[k]))
            .collect();
        points.insert(&items).unwrap();
        assert_eq!(points.len(), 30);
        // Nearest to 10, then 11, then 9.
        let query = around(10.0 * 0.2 + 0.05);
        let nearest = |points: &Points, filter: PointFilter| -> Vec<u64> {
            let found = points.search(&query, 3, &filter).unwrap();
            found.into_iter().map(|n| n.key).collect()
        };
        let within = |name: &str| PointFilter {
            partition: Some(name.to_owned()),
            ..PointFilter::default()
        };
        assert_eq!(nearest(&points, PointFilter::default()), vec![10, 11, 9]);
        assert_eq!(nearest(&points, within("ann")), vec![9, 12, 6]);
        assert_eq!(nearest(&points, within("bob")), vec![10, 13, 7]);
        assert!(nearest(&points, within("cyd")).is_empty());

        assert!(points.remove(10).unwrap() && !points.remove(10).unwrap());
        assert!(points.remove(11).unwrap(), "a point without a partition");
        assert_eq!(nearest(&points, within("bob")), vec![13, 7, 16]);
        assert_eq!(nearest(&points, PointFilter::default()), vec![9, 12, 8]);
        assert_eq!(points.len(), 28);
        assert!(!points.holds(10) && points.holds(13));
    }
}
