//! Reading typed values out of rows. PostgreSQL has no unsigned integers:
//! counters and ordinals are read signed and checked here.

use sqlx_core::row::Row;
use sqlx_postgres::PgRow;

use crate::error::{Result, corrupt};

pub(crate) type Tx<'a> = sqlx_core::transaction::Transaction<'a, sqlx_postgres::Postgres>;

/// An `integer` column that holds a non-negative number.
pub(crate) fn u32_at(row: &PgRow, column: &str) -> Result<u32> {
    let value: i32 = row.try_get(column)?;
    u32::try_from(value).map_err(|_| corrupt("counter", format!("{column} = {value}")))
}

pub(crate) fn opt_u32_at(row: &PgRow, column: &str) -> Result<Option<u32>> {
    let value: Option<i32> = row.try_get(column)?;
    value
        .map(|v| u32::try_from(v).map_err(|_| corrupt("counter", format!("{column} = {v}"))))
        .transpose()
}

/// A `bigint` column that holds a non-negative number.
pub(crate) fn u64_at(row: &PgRow, column: &str) -> Result<u64> {
    let value: i64 = row.try_get(column)?;
    u64::try_from(value).map_err(|_| corrupt("counter", format!("{column} = {value}")))
}

/// A `json` column read into `T`.
pub(crate) fn json_at<T: serde::de::DeserializeOwned>(
    row: &PgRow,
    column: &str,
    what: &'static str,
) -> Result<T> {
    let value: sqlx_core::types::Json<serde_json::Value> = row.try_get(column)?;
    serde_json::from_value(value.0).map_err(|e| corrupt(what, e))
}

/// A count or position as an `integer` column holds it (PostgreSQL has no
/// unsigned types); past `i32::MAX`, which no validated input reaches, it
/// saturates.
pub(crate) fn int(value: impl TryInto<i32>) -> i32 {
    value.try_into().unwrap_or(i32::MAX)
}

/// JSON for a `json` or `jsonb` parameter.
pub(crate) fn json<T: serde::Serialize>(value: &T) -> sqlx_core::types::Json<serde_json::Value> {
    sqlx_core::types::Json(serde_json::to_value(value).unwrap_or(serde_json::Value::Null))
}

/// Appends ` AND clause` to a query whose `WHERE` is begun, binding `value`
/// where the clause (written once for both SQL stores, by `octopus_sql`)
/// has its `?`.
pub(crate) fn push_clause<'a>(
    sql: &mut sqlx_core::query_builder::QueryBuilder<'a, sqlx_postgres::Postgres>,
    clause: &str,
    value: Option<uuid::Uuid>,
) {
    sql.push(" AND ");
    match (clause.split_once('?'), value) {
        (Some((before, after)), Some(value)) => {
            sql.push(before).push_bind(value).push(after);
        }
        _ => {
            sql.push(clause);
        }
    }
}
