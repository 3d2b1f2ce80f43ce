//! Where a vector set's points live in Qdrant, what each point carries, and
//! how a search's filter reads in Qdrant's terms.
//!
//! Every point's payload:
//! - `set`: `{tenant}/{agent}` (the shared layout only), a keyword index
//!   marked as Qdrant's tenant key;
//! - `key`: the point's key in its set (its Qdrant id is derived from the
//!   set and the key, so that two sets' keys never collide);
//! - `partition`: the user a memory belongs to, when it has one;
//! - `labels`: an object of exact-match values (`labels.source`, …);
//! - `at`: microseconds since the Unix epoch, an integer index for ranges.

use std::collections::HashMap;

use octopus_core::vectors::{Point, PointFields, PointFilter, VectorKind, VectorSet};
use qdrant_client::Payload;
use qdrant_client::qdrant::{
    Condition, FieldCondition, Filter, Match, PointId, PointStruct, Range, Value, r#match,
    value::Kind,
};
use sha2::{Digest, Sha256};

use crate::error::Error;
use crate::options::QdrantLayout;

/// The payload fields every point carries.
pub(crate) const SET: &str = "set";
pub(crate) const KEY: &str = "key";
pub(crate) const PARTITION: &str = "partition";
pub(crate) const LABELS: &str = "labels";
pub(crate) const AT: &str = "at";

/// Names and ids for one deployment's collections.
#[derive(Clone, Debug)]
pub(crate) struct Naming {
    pub layout: QdrantLayout,
    pub prefix: String,
}

impl Naming {
    /// The Qdrant collection holding `set`'s points, of `dimension`.
    pub fn collection(&self, set: VectorSet, dimension: u32) -> String {
        let prefix = &self.prefix;
        match self.layout {
            QdrantLayout::Shared => format!("{prefix}octopus_{}_{dimension}", set.kind.as_str()),
            QdrantLayout::PerSet => match set.kind {
                VectorKind::Knowledge => format!("{prefix}agent_{}_{}", set.agent, set.tenant),
                VectorKind::Memory => format!("{prefix}agent_{}_{}_memory", set.agent, set.tenant),
            },
        }
    }

    /// The collection of every set's version.
    pub fn versions(&self) -> String {
        format!("{}octopus_vector_versions", self.prefix)
    }

    /// The condition that keeps to `set` within its collection, where the
    /// collection is shared.
    pub fn set_condition(&self, set: VectorSet) -> Option<Condition> {
        match self.layout {
            QdrantLayout::Shared => Some(keyword(SET, set_value(set))),
            QdrantLayout::PerSet => None,
        }
    }

    /// A point as stored in Qdrant.
    pub fn point(&self, set: VectorSet, point: &Point) -> PointStruct {
        let mut payload = Payload::new();
        if self.layout == QdrantLayout::Shared {
            payload.insert(SET, set_value(set));
        }
        payload.insert(KEY, i64::from_ne_bytes(point.key.to_ne_bytes()));
        fields_into(&point.fields, &mut payload);
        PointStruct::new(point_id(set, point.key), point.vector.clone(), payload)
    }
}

fn set_value(set: VectorSet) -> String {
    format!("{}/{}", set.tenant, set.agent)
}

/// A point's Qdrant id: a UUID made from its set and key, since Qdrant ids
/// are unique per collection and keys only per set.
pub(crate) fn point_id(set: VectorSet, key: u64) -> PointId {
    let mut hash = Sha256::new();
    hash.update(set.tenant.0.as_bytes());
    hash.update(set.agent.0.as_bytes());
    hash.update(set.kind.as_str().as_bytes());
    hash.update(key.to_be_bytes());
    let digest = hash.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    PointId::from(uuid::Uuid::from_bytes(bytes).to_string())
}

/// The id of the point that records `set`'s version.
pub(crate) fn version_id(set: VectorSet) -> PointId {
    point_id(set, u64::MAX)
}

fn fields_into(fields: &PointFields, payload: &mut Payload) {
    if let Some(partition) = &fields.partition {
        payload.insert(PARTITION, partition.as_str());
    }
    if !fields.labels.is_empty() {
        let mut labels = Payload::new();
        for (name, value) in &fields.labels {
            labels.insert(name, value.as_str());
        }
        payload.insert(LABELS, Value::from(labels));
    }
    if let Some(at) = fields.at {
        payload.insert(AT, at.timestamp_micros());
    }
}

/// The label fields a filter reads, as payload paths to index.
pub(crate) fn label_path(name: &str) -> String {
    format!("{LABELS}.{name}")
}

/// The key a point stored in its payload.
pub(crate) fn key_of(payload: &HashMap<String, Value>) -> Result<u64, Error> {
    let key = integer(payload, KEY).ok_or(Error::Malformed("key"))?;
    Ok(u64::from_ne_bytes(key.to_ne_bytes()))
}

/// A payload's integer field, if it has one of that name.
pub(crate) fn integer(payload: &HashMap<String, Value>, name: &str) -> Option<i64> {
    match payload.get(name)?.kind.as_ref()? {
        Kind::IntegerValue(v) => Some(*v),
        _ => None,
    }
}

/// A payload's string field, if it has one of that name.
pub(crate) fn text<'a>(payload: &'a HashMap<String, Value>, name: &str) -> Option<&'a str> {
    match payload.get(name)?.kind.as_ref()? {
        Kind::StringValue(s) => Some(s),
        _ => None,
    }
}

fn keyword(field: &str, value: impl Into<String>) -> Condition {
    field_match(field, r#match::MatchValue::Keyword(value.into()))
}

fn field_match(field: &str, value: r#match::MatchValue) -> Condition {
    Condition::from(FieldCondition {
        key: field.to_owned(),
        r#match: Some(Match {
            match_value: Some(value),
        }),
        ..FieldCondition::default()
    })
}

/// The Qdrant filter of a search in `set`: every condition of `filter`, on
/// indexed payload fields.
pub(crate) fn search_filter(naming: &Naming, set: VectorSet, filter: &PointFilter) -> Filter {
    let mut must: Vec<Condition> = naming.set_condition(set).into_iter().collect();
    let mut must_not = Vec::new();
    if let Some(partition) = &filter.partition {
        must.push(keyword(PARTITION, partition.as_str()));
    }
    for (name, values) in &filter.any_of {
        must.push(field_match(
            &label_path(name),
            r#match::MatchValue::Keywords(qdrant_client::qdrant::RepeatedStrings {
                strings: values.clone(),
            }),
        ));
    }
    // "None of these values, or absent": a must_not of "one of these".
    for (name, values) in &filter.none_of {
        must_not.push(field_match(
            &label_path(name),
            r#match::MatchValue::Keywords(qdrant_client::qdrant::RepeatedStrings {
                strings: values.clone(),
            }),
        ));
    }
    if filter.from.is_some() || filter.to.is_some() {
        // Microseconds stay exact in an f64 until the year 2255.
        must.push(Condition::range(
            AT,
            Range {
                gte: filter.from.map(|at| at.timestamp_micros() as f64),
                lt: filter.to.map(|at| at.timestamp_micros() as f64),
                ..Range::default()
            },
        ));
    }
    Filter {
        must,
        must_not,
        ..Filter::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use octopus_core::{AgentId, TenantId};
    use qdrant_client::qdrant::point_id::PointIdOptions;

    #[test]
    fn point_ids_differ_between_sets_and_keys_and_are_stable() {
        let tenant = TenantId::new();
        let agent = AgentId::new();
        let knowledge = VectorSet::knowledge(tenant, agent);
        let memory = VectorSet::memory(tenant, agent);
        let other = VectorSet::knowledge(TenantId::new(), agent);
        assert_eq!(point_id(knowledge, 7), point_id(knowledge, 7));
        assert_ne!(point_id(knowledge, 7), point_id(knowledge, 8));
        assert_ne!(point_id(knowledge, 7), point_id(memory, 7));
        assert_ne!(point_id(knowledge, 7), point_id(other, 7));
        assert_ne!(version_id(knowledge), point_id(knowledge, 7));
        assert!(matches!(
            point_id(knowledge, 7).point_id_options,
            Some(PointIdOptions::Uuid(_))
        ));
    }

    #[test]
    fn a_key_survives_the_payload_round_trip_even_above_i64_max() {
        let set = VectorSet::memory(TenantId::new(), AgentId::new());
        let naming = Naming {
            layout: QdrantLayout::Shared,
            prefix: String::new(),
        };
        for key in [1, u64::MAX - 1] {
            let point = Point {
                key,
                vector: vec![1.0, 0.0],
                fields: PointFields::default(),
            };
            let stored = naming.point(set, &point);
            assert_eq!(key_of(&stored.payload).unwrap(), key);
        }
    }

    #[test]
    fn collections_are_named_by_layout() {
        let set = VectorSet::memory(TenantId::new(), AgentId::new());
        let shared = Naming {
            layout: QdrantLayout::Shared,
            prefix: "t1_".into(),
        };
        assert_eq!(shared.collection(set, 384), "t1_octopus_memory_384");
        let per_set = Naming {
            layout: QdrantLayout::PerSet,
            prefix: String::new(),
        };
        assert_eq!(
            per_set.collection(set, 384),
            format!("agent_{}_{}_memory", set.agent, set.tenant)
        );
        assert!(per_set.set_condition(set).is_none());
        assert!(shared.set_condition(set).is_some());
    }
}
