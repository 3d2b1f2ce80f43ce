//! Reading typed values out of rows, and building queries with optional filters.

use chrono::{DateTime, Utc};
use octopus_core::DomainCode;
use rusqlite::types::Value;
use rusqlite::{Row, RowIndex, Statement};
use uuid::Uuid;

use crate::codec;
use crate::error::Result;

// The readers take a column by name or by position: a hot read (a search's
// rows) goes by position, as a name is looked up among the row's columns
// one comparison at a time.

pub(crate) fn uuid(row: &Row<'_>, column: impl RowIndex) -> Result<Uuid> {
    let bytes = bytes(row, column)?.ok_or_else(|| crate::error::corrupt("id", "null"))?;
    codec::uuid_from(bytes)
}

pub(crate) fn opt_uuid(row: &Row<'_>, column: impl RowIndex) -> Result<Option<Uuid>> {
    bytes(row, column)?.map(codec::uuid_from).transpose()
}

/// A blob column's bytes where the row holds them, not copied.
pub(crate) fn bytes<'row>(row: &'row Row<'_>, column: impl RowIndex) -> Result<Option<&'row [u8]>> {
    row.get_ref(column)?
        .as_blob_or_null()
        .map_err(|e| crate::error::corrupt("blob column", e))
}

pub(crate) fn time(row: &Row<'_>, column: impl RowIndex) -> Result<DateTime<Utc>> {
    codec::instant(row.get(column)?)
}

pub(crate) fn opt_time(row: &Row<'_>, column: impl RowIndex) -> Result<Option<DateTime<Utc>>> {
    let micros: Option<i64> = row.get(column)?;
    micros.map(codec::instant).transpose()
}

/// A non-negative counter. SQLite integers are signed 64-bit.
pub(crate) fn count(row: &Row<'_>, column: &str) -> Result<u64> {
    let value: i64 = row.get(column)?;
    u64::try_from(value)
        .map_err(|_| crate::error::corrupt("counter", format!("{column} = {value}")))
}

/// A row's `seq` (AUTOINCREMENT, so positive), in its first column: the key
/// of its vector in a derived index.
pub(crate) fn key(row: &Row<'_>) -> Result<u64> {
    Ok(row.get::<_, i64>(0)?.unsigned_abs())
}

/// Runs `stmt` and maps every row.
pub(crate) fn collect<T>(
    stmt: &mut Statement<'_>,
    params: impl rusqlite::Params,
    mut map: impl FnMut(&Row<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    let mut rows = stmt.query(params)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        out.push(map(row)?);
    }
    Ok(out)
}

pub(crate) fn blob(id: &Uuid) -> Value {
    Value::Blob(id.as_bytes().to_vec())
}

/// A `WHERE` clause grown one optional filter at a time, with its parameters.
#[derive(Default)]
pub(crate) struct Filters {
    clauses: Vec<String>,
    pub params: Vec<Value>,
}

impl Filters {
    /// Adds `clause`, whose single `?` takes `value`.
    pub fn push(&mut self, clause: &str, value: Value) -> &mut Self {
        self.params.push(value);
        self.clauses
            .push(clause.replace('?', &format!("?{}", self.params.len())));
        self
    }

    /// Adds a clause without parameters.
    pub fn push_plain(&mut self, clause: &str) -> &mut Self {
        self.clauses.push(clause.to_owned());
        self
    }

    /// The next positional parameter's placeholder, for LIMIT and OFFSET.
    pub fn bind(&mut self, value: Value) -> String {
        self.params.push(value);
        format!("?{}", self.params.len())
    }

    pub fn where_sql(&self) -> String {
        if self.clauses.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", self.clauses.join(" AND "))
        }
    }
}

/// A unique index is the arbiter of a name being taken, so that two
/// concurrent writes cannot both win: its violation becomes the domain's
/// `Conflict` with `code`.
pub(crate) fn unique_conflict(
    outcome: rusqlite::Result<usize>,
    code: DomainCode,
    message: impl FnOnce() -> String,
) -> Result<()> {
    match outcome {
        Ok(_) => Ok(()),
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE =>
        {
            Err(octopus_core::Error::conflict(code, message()).into())
        }
        Err(e) => Err(e.into()),
    }
}
