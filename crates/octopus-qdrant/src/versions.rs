//! The version of the rows each set's copy in Qdrant reflects.
//!
//! Qdrant has no transactions, and several Octopus servers may write to one
//! Qdrant. So a set's version is a point of its own (in one small collection
//! for all sets), holding the version and a *stamp*, a random token that
//! every write replaces. A write of the version is a compare-and-swap: an
//! upsert conditioned on the stamp the writer read, then read back. A writer
//! whose swap failed knows that someone else wrote in between, and leaves
//! the version where it is: behind the rows at worst, which the next search
//! reconciles.
//!
//! The version point also names its set and dimension, so that a server
//! started after Qdrant missed changes (while the server that saw them was
//! down too) can find the sets whose copy lags the rows: [`Client::recorded_sets`].
//!
//! A reconcile first swaps the version to [`RECONCILING`] before it changes
//! any point, so that a follow which read the version before it cannot then
//! claim a newer version over points the reconcile changed from older rows.

use qdrant_client::Payload;
use qdrant_client::qdrant::{
    Condition, Filter, GetPointsBuilder, PointStruct, ScrollPointsBuilder, UpdateMode,
    UpsertPointsBuilder, Value,
};

use octopus_core::vectors::{VectorKind, VectorSet};

use crate::client::Client;
use crate::error::Error;
use crate::layout::{integer, text, version_id};

const VERSION: &str = "version";
const STAMP: &str = "stamp";
const TENANT: &str = "tenant";
const AGENT: &str = "agent";
const KIND: &str = "kind";
const DIMENSION: &str = "dimension";

/// A version no rows ever have: a reconcile is under way (or died midway,
/// which the next search sees as a copy behind the rows).
pub(crate) const RECONCILING: i64 = -1;

/// A set's version as last written, with the stamp of that write; version 0
/// with no stamp when nothing was ever written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stamped {
    pub version: i64,
    pub stamp: Option<String>,
}

/// A set as its version point records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Recorded {
    pub set: VectorSet,
    pub dimension: u32,
    pub version: i64,
}

impl Client {
    pub(crate) async fn read_version(&self, set: VectorSet) -> Result<Stamped, Error> {
        let found = self
            .call(
                self.qdrant.get_points(
                    GetPointsBuilder::new(self.naming.versions(), vec![version_id(set)])
                        .with_payload(true)
                        .with_vectors(false),
                ),
            )
            .await?;
        let Some(point) = found.result.first() else {
            return Ok(Stamped {
                version: 0,
                stamp: None,
            });
        };
        Ok(Stamped {
            version: integer(&point.payload, VERSION).ok_or(Error::Malformed(VERSION))?,
            stamp: Some(
                text(&point.payload, STAMP)
                    .ok_or(Error::Malformed(STAMP))?
                    .to_owned(),
            ),
        })
    }

    /// Every set with a version point: a scroll of one small collection.
    /// Points that do not name their set (written by an older build) are
    /// left out.
    pub(crate) async fn recorded_sets(&self) -> Result<Vec<Recorded>, Error> {
        let mut sets = Vec::new();
        let scroll = ScrollPointsBuilder::new(self.naming.versions()).with_payload(true);
        self.scroll_all(scroll, |point| {
            sets.extend(recorded(&point.payload));
            Ok(())
        })
        .await?;
        Ok(sets)
    }

    /// Writes `version` for `set` if the last write is still `expected`;
    /// returns the write when it did.
    pub(crate) async fn swap_version(
        &self,
        set: VectorSet,
        dimension: u32,
        expected: &Stamped,
        version: i64,
    ) -> Result<Option<Stamped>, Error> {
        let stamp = uuid::Uuid::now_v7().to_string();
        let mut payload = Payload::new();
        payload.insert(VERSION, version);
        payload.insert(STAMP, stamp.as_str());
        payload.insert(TENANT, set.tenant.to_string());
        payload.insert(AGENT, set.agent.to_string());
        payload.insert(KIND, set.kind.as_str());
        payload.insert(DIMENSION, i64::from(dimension));
        let point = PointStruct::new(version_id(set), vec![1.0_f32], payload);
        let upsert = UpsertPointsBuilder::new(self.naming.versions(), vec![point]).wait(true);
        let upsert = match &expected.stamp {
            // Nothing written yet: insert only, so two first writers cannot
            // both succeed.
            None => upsert.update_mode(UpdateMode::InsertOnly),
            Some(previous) => upsert.update_filter(Filter::must([Condition::matches(
                STAMP,
                qdrant_client::qdrant::r#match::MatchValue::Keyword(previous.clone()),
            )])),
        };
        self.call(self.qdrant.upsert_points(upsert)).await?;
        let now = self.read_version(set).await?;
        Ok((now.stamp.as_deref() == Some(stamp.as_str())).then_some(now))
    }
}

type Fields = std::collections::HashMap<String, Value>;

fn recorded(payload: &Fields) -> Option<Recorded> {
    let kind = text(payload, KIND)?;
    let kind = [VectorKind::Knowledge, VectorKind::Memory]
        .into_iter()
        .find(|k| k.as_str() == kind)?;
    Some(Recorded {
        set: VectorSet {
            kind,
            tenant: text(payload, TENANT)?.parse().ok()?,
            agent: text(payload, AGENT)?.parse().ok()?,
        },
        dimension: u32::try_from(integer(payload, DIMENSION)?).ok()?,
        version: integer(payload, VERSION)?,
    })
}
