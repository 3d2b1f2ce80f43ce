//! A search of one user's memory vectors as a store runs it over their rows
//! (`VectorRows::nearest_in_partition`): the filter read in the terms the
//! rows keep (kind, episode, time), so that each row is judged and scored
//! where it is read, with no copy of its fields or its vector.

use std::collections::HashSet;

use crate::memory_vectors::{EPISODE_LABEL, KIND_LABEL};
use crate::recall::MemoryKind;
use crate::vectors::{Nearest, PointFilter, ScoredKey, VectorRows, VectorSet, nearest_by_reading};
use crate::{EpisodeId, Timestamp};

/// A [`PointFilter`] on memory vectors, in their rows' terms. Its partition
/// (the user) is the store's to keep to, by its index.
#[derive(Clone, Debug, Default)]
pub struct MemoryRowFilter {
    required: Vec<Condition>,
    excluded: Vec<Condition>,
    from: Option<Timestamp>,
    to: Option<Timestamp>,
}

#[derive(Clone, Debug)]
enum Condition {
    Kinds(Vec<MemoryKind>),
    Episodes(HashSet<EpisodeId>),
    /// A label memory rows do not have: required, it admits nothing.
    Absent,
}

impl Condition {
    fn read(name: &str, values: &[String]) -> Self {
        match name {
            KIND_LABEL => Self::Kinds(values.iter().filter_map(|v| MemoryKind::parse(v)).collect()),
            EPISODE_LABEL => Self::Episodes(
                values
                    .iter()
                    .filter_map(|v| v.parse().ok().map(EpisodeId))
                    .collect(),
            ),
            _ => Self::Absent,
        }
    }

    fn holds(&self, kind: MemoryKind, episode: EpisodeId) -> bool {
        match self {
            Self::Kinds(kinds) => kinds.contains(&kind),
            Self::Episodes(episodes) => episodes.contains(&episode),
            Self::Absent => false,
        }
    }
}

impl MemoryRowFilter {
    pub fn new(filter: &PointFilter) -> Self {
        let read = |conditions: &[(String, Vec<String>)]| -> Vec<Condition> {
            conditions
                .iter()
                .map(|(name, values)| Condition::read(name, values))
                .collect()
        };
        Self {
            required: read(&filter.any_of),
            excluded: read(&filter.none_of),
            from: filter.from,
            to: filter.to,
        }
    }

    /// [`PointFilter::admits`] for the row of a memory vector of this kind,
    /// episode and time, the partition aside.
    pub fn admits(&self, kind: MemoryKind, episode: EpisodeId, at: Timestamp) -> bool {
        self.required.iter().all(|c| c.holds(kind, episode))
            && !self.excluded.iter().any(|c| c.holds(kind, episode))
            && self.from.is_none_or(|from| at >= from)
            && self.to.is_none_or(|to| at < to)
    }
}

/// The `query.top_k` points of memory `set` nearest the query that its
/// filter admits, best first, read from `rows` with no copy kept: how an
/// index that holds no memory sets answers a search of one. One user's
/// points when the filter keeps to one, scored where the store reads them
/// (`VectorRows::nearest_in_partition`), else every point of the set.
///
/// A recall keeps to one user: hundreds or thousands of vectors, read by an
/// index on the user. A copy of every user's vectors (in this process, or
/// a pgvector table under one HNSW graph) grows with everything ever
/// stored, must follow every change, and a graph over all users answers a
/// search kept to one of them poorly.
pub async fn search_rows(
    set: VectorSet,
    query: &Nearest,
    rows: &dyn VectorRows,
) -> crate::Result<Vec<ScoredKey>> {
    if query.filter.partition.is_some() {
        return rows.nearest_in_partition(set, query).await;
    }
    // No search the engine makes of a memory set comes here (each keeps to
    // a user), but the port allows it.
    nearest_by_reading(rows, set, None, query).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory_vectors::memory_point_fields;

    #[test]
    fn a_row_is_admitted_exactly_when_its_fields_would_be() {
        let (one, two) = (EpisodeId::new(), EpisodeId::new());
        let at = |s| chrono::DateTime::from_timestamp(s, 0).unwrap_or_default();
        let filters = [
            PointFilter::default(),
            PointFilter::default().require(KIND_LABEL, vec!["message".into(), "fact".into()]),
            PointFilter::default().exclude(EPISODE_LABEL, vec![one.to_string()]),
            PointFilter::default().require(EPISODE_LABEL, vec![two.to_string(), "nonsense".into()]),
            PointFilter::default().require("category", vec!["faq".into()]),
            PointFilter::default().exclude("category", vec!["faq".into()]),
            PointFilter {
                from: Some(at(100)),
                to: Some(at(200)),
                ..PointFilter::default()
            },
        ];
        for filter in &filters {
            let rows = MemoryRowFilter::new(filter);
            for kind in [MemoryKind::Message, MemoryKind::Summary, MemoryKind::Fact] {
                for episode in [one, two] {
                    for seconds in [50, 100, 150, 200] {
                        let fields = memory_point_fields("ann", kind, episode, at(seconds));
                        assert_eq!(
                            rows.admits(kind, episode, at(seconds)),
                            filter.admits(&fields),
                            "{filter:?} on {kind:?} at {seconds}"
                        );
                    }
                }
            }
        }
    }
}
