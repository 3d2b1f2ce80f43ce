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
//! A reconcile first swaps the version to [`RECONCILING`] before it changes
//! any point, so that a follow which read the version before it cannot then
//! claim a newer version over points the reconcile changed from older rows.

use qdrant_client::Payload;
use qdrant_client::qdrant::{
    Condition, Filter, GetPointsBuilder, PointStruct, UpdateMode, UpsertPointsBuilder, value::Kind,
};

use octopus_core::vectors::VectorSet;

use crate::error::Error;
use crate::index::Client;
use crate::layout::version_id;

const VERSION: &str = "version";
const STAMP: &str = "stamp";

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
        let version = match point.payload.get(VERSION).and_then(|v| v.kind.as_ref()) {
            Some(Kind::IntegerValue(v)) => *v,
            _ => return Err(Error::Malformed(VERSION)),
        };
        let stamp = match point.payload.get(STAMP).and_then(|v| v.kind.as_ref()) {
            Some(Kind::StringValue(s)) => s.clone(),
            _ => return Err(Error::Malformed(STAMP)),
        };
        Ok(Stamped {
            version,
            stamp: Some(stamp),
        })
    }

    /// Writes `version` for `set` if the last write is still `expected`;
    /// returns the write when it did.
    pub(crate) async fn swap_version(
        &self,
        set: VectorSet,
        expected: &Stamped,
        version: i64,
    ) -> Result<Option<Stamped>, Error> {
        let stamp = uuid::Uuid::now_v7().to_string();
        let mut payload = Payload::new();
        payload.insert(VERSION, version);
        payload.insert(STAMP, stamp.as_str());
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
