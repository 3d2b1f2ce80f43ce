//! The fields kept in memory beside each vector, for filtered searches.
//!
//! A collection can hold hundreds of thousands of points whose fields repeat
//! the same few strings (a memory's user, kind and episode). Held as
//! [`PointFields`] they cost about 800 bytes a point (a `BTreeMap` node and
//! five strings), more than half a vector; here each string is interned once
//! per collection and a point keeps numbers only, about 100 bytes.

use std::collections::HashMap;

use octopus_core::vectors::{PointFields, PointFilter};

/// The strings of one collection's fields, each numbered once.
#[derive(Default)]
pub(crate) struct Symbols {
    ids: HashMap<Box<str>, u32>,
}

impl Symbols {
    fn intern(&mut self, text: &str) -> u32 {
        if let Some(&id) = self.ids.get(text) {
            return id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(text.into(), id);
        id
    }

    pub fn get(&self, text: &str) -> Option<u32> {
        self.ids.get(text).copied()
    }
}

/// A point's [`PointFields`], its strings replaced by their symbols.
pub(crate) struct StoredFields {
    pub partition: Option<u32>,
    /// Microseconds since the epoch.
    at: Option<i64>,
    /// (name, value) pairs.
    labels: Box<[(u32, u32)]>,
}

impl StoredFields {
    pub fn new(fields: &PointFields, symbols: &mut Symbols) -> Self {
        Self {
            partition: fields.partition.as_deref().map(|p| symbols.intern(p)),
            at: fields.at.map(|at| at.timestamp_micros()),
            labels: fields
                .labels
                .iter()
                .map(|(name, value)| (symbols.intern(name), symbols.intern(value)))
                .collect(),
        }
    }

    fn label(&self, name: u32) -> Option<u32> {
        self.labels
            .iter()
            .find_map(|&(n, value)| (n == name).then_some(value))
    }
}

/// A [`PointFilter`] in a collection's symbols. A string the collection has
/// never seen matches no point: a required value that is unknown is dropped
/// from its list, an excluded one needs no check.
pub(crate) struct StoredFilter {
    partition: Option<u32>,
    any_of: Vec<(u32, Vec<u32>)>,
    none_of: Vec<(u32, Vec<u32>)>,
    from: Option<i64>,
    to: Option<i64>,
}

impl StoredFilter {
    /// `None` when the filter admits no point of the collection.
    pub fn new(filter: &PointFilter, symbols: &Symbols) -> Option<Self> {
        let partition = match &filter.partition {
            Some(name) => Some(symbols.get(name)?),
            None => None,
        };
        let known = |values: &[String]| -> Vec<u32> {
            values.iter().filter_map(|v| symbols.get(v)).collect()
        };
        let mut any_of = Vec::with_capacity(filter.any_of.len());
        for (name, values) in &filter.any_of {
            let values = known(values);
            if values.is_empty() {
                return None;
            }
            any_of.push((symbols.get(name)?, values));
        }
        let none_of = filter
            .none_of
            .iter()
            .filter_map(|(name, values)| Some((symbols.get(name)?, known(values))))
            .filter(|(_, values)| !values.is_empty())
            .collect();
        Some(Self {
            partition,
            any_of,
            none_of,
            from: filter.from.map(|at| at.timestamp_micros()),
            to: filter.to.map(|at| at.timestamp_micros()),
        })
    }

    /// [`PointFilter::admits`], in symbols.
    pub fn admits(&self, fields: &StoredFields) -> bool {
        self.partition.is_none_or(|p| fields.partition == Some(p))
            && self.any_of.iter().all(|(name, values)| {
                fields
                    .label(*name)
                    .is_some_and(|value| values.contains(&value))
            })
            && self.none_of.iter().all(|(name, values)| {
                fields
                    .label(*name)
                    .is_none_or(|value| !values.contains(&value))
            })
            && self
                .from
                .is_none_or(|from| fields.at.is_some_and(|at| at >= from))
            && self.to.is_none_or(|to| fields.at.is_some_and(|at| at < to))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn point(user: Option<&str>, kind: Option<&str>, episode: &str, minute: i64) -> PointFields {
        let mut fields = PointFields {
            partition: user.map(str::to_owned),
            at: octopus_core::Timestamp::from_timestamp(minute * 60, 0),
            ..PointFields::default()
        }
        .label("episode", episode);
        if let Some(kind) = kind {
            fields = fields.label("kind", kind);
        }
        fields
    }

    fn filter(
        user: Option<&str>,
        any_kind: Option<Vec<&str>>,
        not_episodes: Vec<&str>,
        minutes: (Option<i64>, Option<i64>),
    ) -> PointFilter {
        let owned = |values: Vec<&str>| values.into_iter().map(str::to_owned).collect();
        let mut filter = PointFilter {
            partition: user.map(str::to_owned),
            from: minutes
                .0
                .and_then(|m| octopus_core::Timestamp::from_timestamp(m * 60, 0)),
            to: minutes
                .1
                .and_then(|m| octopus_core::Timestamp::from_timestamp(m * 60, 0)),
            ..PointFilter::default()
        };
        if let Some(kinds) = any_kind {
            filter = filter.require("kind", owned(kinds));
        }
        filter.exclude("episode", owned(not_episodes))
    }

    const USERS: [Option<&str>; 3] = [None, Some("ann"), Some("bob")];
    const KINDS: [Option<&str>; 3] = [None, Some("message"), Some("summary")];
    const WORDS: [&str; 4] = ["e1", "e2", "message", "zed"];

    proptest! {
        /// Interning changes nothing a filter decides, including for
        /// strings the collection has never seen.
        #[test]
        fn a_stored_filter_admits_exactly_what_the_filter_admits(
            points in proptest::collection::vec((0..3usize, 0..3usize, 0..2usize, 0..10i64), 1..12),
            user in 0..3usize,
            kinds in proptest::option::of(proptest::collection::vec(0..4usize, 0..3)),
            not_episodes in proptest::collection::vec(0..4usize, 0..3),
            from in proptest::option::of(0..10i64),
            to in proptest::option::of(0..10i64),
        ) {
            let points: Vec<PointFields> = points
                .into_iter()
                .map(|(u, k, e, m)| point(USERS[u], KINDS[k], WORDS[e], m))
                .collect();
            let mut symbols = Symbols::default();
            let stored: Vec<StoredFields> =
                points.iter().map(|p| StoredFields::new(p, &mut symbols)).collect();
            // "zed" and "e2" may be strings no point holds.
            let filter = filter(
                [None, Some("ann"), Some("zed")][user],
                kinds.map(|k| k.into_iter().map(|i| WORDS[i]).collect()),
                not_episodes.into_iter().map(|i| WORDS[i]).collect(),
                (from, to),
            );
            let compiled = StoredFilter::new(&filter, &symbols);
            for (point, stored) in points.iter().zip(&stored) {
                let admitted = compiled.as_ref().is_some_and(|c| c.admits(stored));
                prop_assert_eq!(admitted, filter.admits(point));
            }
        }
    }
}
