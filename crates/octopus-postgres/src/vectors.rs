//! Vectors in pgvector: the `vector` type in its binary wire format, and the
//! HNSW indexes of `vector_points` that searches use (see `pgvector.rs`).
//!
//! A column of type `vector` holds vectors of any dimension, but an HNSW index
//! needs one. Collections choose their own dimension, so each dimension in use
//! gets a partial expression index (`embedding::vector(d)` where
//! `dimension = d`), created when the first vector of that dimension is followed,
//! and searches cast the same way so that the planner can use it.

use std::collections::HashSet;
use std::sync::Mutex;

use sqlx_core::decode::Decode;
use sqlx_core::encode::{Encode, IsNull};
use sqlx_core::error::BoxDynError;
use sqlx_core::executor::Executor;
use sqlx_core::types::Type;
use sqlx_postgres::{PgArgumentBuffer, PgPool, PgTypeInfo, PgValueRef, Postgres};

use crate::error::Result;

/// A vector as pgvector's `vector` sends it: the dimension as i16, an unused
/// i16, then big-endian f32s.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PgVector(pub Vec<f32>);

impl Type<Postgres> for PgVector {
    fn type_info() -> PgTypeInfo {
        PgTypeInfo::with_name("vector")
    }
}

impl Encode<'_, Postgres> for PgVector {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        let dimension = i16::try_from(self.0.len())?;
        buf.extend_from_slice(&dimension.to_be_bytes());
        buf.extend_from_slice(&0_i16.to_be_bytes());
        for x in &self.0 {
            buf.extend_from_slice(&x.to_be_bytes());
        }
        Ok(IsNull::No)
    }
}

impl<'r> Decode<'r, Postgres> for PgVector {
    fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
        let bytes = value.as_bytes()?;
        let (header, floats) = bytes
            .split_at_checked(4)
            .ok_or("vector shorter than its header")?;
        let dimension = i16::from_be_bytes([header[0], header[1]]);
        if floats.len() != usize::try_from(dimension)? * 4 {
            return Err("vector length does not match its dimension".into());
        }
        Ok(Self(
            floats
                .chunks_exact(4)
                .map(|b| f32::from_be_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        ))
    }
}

/// The longest vectors pgvector's HNSW index takes.
const MAX_INDEXED_DIMENSION: u32 = 2000;

/// The HNSW indexes of `vector_points` this process knows exist, one per
/// dimension, so that each is created once.
#[derive(Default)]
pub(crate) struct DimensionIndexes {
    made: Mutex<HashSet<u32>>,
}

impl DimensionIndexes {
    /// Creates the HNSW index for vectors of `dimension`, unless it exists.
    /// Runs outside any transaction: `CREATE INDEX` locks the table against
    /// writes while it runs, which is short for a new dimension (it has no
    /// rows yet).
    pub async fn ensure(&self, pool: &PgPool, dimension: u32) -> Result<()> {
        // pgvector indexes vectors of up to 2000 dimensions; longer ones are
        // searched by scanning the set.
        if self.known(dimension) || dimension > MAX_INDEXED_DIMENSION {
            return Ok(());
        }
        let sql = format!(
            "CREATE INDEX IF NOT EXISTS ix_vector_points_hnsw_{dimension} ON vector_points
             USING hnsw ((embedding::vector({dimension})) vector_cosine_ops) WHERE dimension = {dimension}"
        );
        match pool.execute(sql.as_str()).await {
            Ok(_) => {}
            // Another server created it at the same moment.
            Err(sqlx_core::Error::Database(e)) if e.code().as_deref() == Some("23505") => {}
            Err(e) => return Err(e.into()),
        }
        self.made
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(dimension);
        Ok(())
    }

    fn known(&self, dimension: u32) -> bool {
        self.made
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .contains(&dimension)
    }
}

/// The candidates an HNSW search keeps unless it asks for more: every
/// connection sets it.
pub(crate) const DEFAULT_EF_SEARCH: u32 = 100;

/// How many candidates an HNSW search keeps: twice `top_k`, at least
/// [`DEFAULT_EF_SEARCH`]; pgvector allows up to 1000.
pub(crate) fn ef_search(top_k: u32) -> u32 {
    top_k.saturating_mul(2).clamp(DEFAULT_EF_SEARCH, 1000)
}

pub(crate) use octopus_core::vectors::vector_to_bytes as embedding_bytes;

pub(crate) fn embedding_from(bytes: &[u8]) -> Result<Vec<f32>> {
    octopus_core::vectors::vector_from_bytes(bytes).ok_or_else(|| {
        crate::error::corrupt(
            "embedding",
            format!("{} bytes is not a whole number of f32s", bytes.len()),
        )
    })
}
