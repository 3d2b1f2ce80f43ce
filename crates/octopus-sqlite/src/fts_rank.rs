//! BM25 over one tenant's (or agent's, or user's) documents, not the whole
//! FTS5 table.
//!
//! FTS5's own `bm25()` takes its statistics (the number of documents, their
//! average length, how many contain each word) from the whole table, which
//! holds every tenant: one tenant's writes would move another's scores, a
//! signal across tenants. So the statistics are counted within the search's
//! scope (the documents carrying its scope token, see `search.rs` and
//! `knowledge.rs`) and handed to two auxiliary functions registered on each
//! connection:
//!
//! - `octopus_length(fts)`: a document's length in tokens, its last column
//!   (the scope token) left out; summed over the scope for the average;
//! - `octopus_bm25(fts, average_length, idf_0, idf_1, ...)`: the
//!   document's BM25 (k1 = 1.2, b = 0.75, as FTS5's), one IDF per phrase of
//!   the MATCH expression in order, the last column weighted 0. Higher is
//!   better.
//! - `octopus_hits(fts)`: the document's length and its hits of each
//!   phrase, for a search that counts how many candidates hold each word
//!   from the candidates themselves and scores them with [`bm25_of`].
//!
//! FTS5 offers auxiliary functions only through its C API, so this module is
//! one of the project's audited `unsafe` places: each block below calls the
//! API exactly as its documentation describes (<https://sqlite.org/fts5.html>,
//! "Custom Auxiliary Functions"), with the pointers FTS5 passes in.

#![allow(unsafe_code)]

use std::ffi::{CStr, c_int, c_void};

use rusqlite::Connection;
use rusqlite::ffi;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The IDF of a phrase found in `containing` of `documents` documents, as
/// Lucene computes it and the PostgreSQL store too: `ln(1 + (N - n + 0.5) /
/// (n + 0.5))`, about 0.7 for a word in half the documents and never zero.
/// (FTS5's own, without the `1 +`, is zero for a word in half of them and
/// is then held at a millionth: a search of a few messages scored 1e-6.)
pub(crate) fn idf(documents: u64, containing: u64) -> f64 {
    let n = documents as f64;
    let df = containing as f64;
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// Registers `octopus_length` and `octopus_bm25` on `conn`.
pub(crate) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let api = fts5_api(conn)?;
    create(api, c"octopus_length", length)?;
    create(api, c"octopus_bm25", bm25)?;
    create(api, c"octopus_hits", hits)?;
    Ok(())
}

/// The connection's FTS5 API, fetched as FTS5's documentation shows: a
/// pointer bound to `SELECT fts5(?1)` under the type "fts5_api_ptr".
fn fts5_api(conn: &Connection) -> rusqlite::Result<*mut ffi::fts5_api> {
    let mut api: *mut ffi::fts5_api = std::ptr::null_mut();
    // SAFETY: the handle is the live connection's; the statement is
    // prepared, stepped and finalised here, with `api` outliving it.
    unsafe {
        let db = conn.handle();
        let mut stmt: *mut ffi::sqlite3_stmt = std::ptr::null_mut();
        let rc = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &raw mut stmt,
            std::ptr::null_mut(),
        );
        if rc != ffi::SQLITE_OK {
            return Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None));
        }
        ffi::sqlite3_bind_pointer(
            stmt,
            1,
            (&raw mut api).cast::<c_void>(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        ffi::sqlite3_step(stmt);
        ffi::sqlite3_finalize(stmt);
    }
    if api.is_null() {
        return Err(rusqlite::Error::SqliteFailure(
            ffi::Error::new(ffi::SQLITE_ERROR),
            Some("this SQLite has no FTS5".into()),
        ));
    }
    Ok(api)
}

type AuxFunction = unsafe extern "C" fn(
    *const ffi::Fts5ExtensionApi,
    *mut ffi::Fts5Context,
    *mut ffi::sqlite3_context,
    c_int,
    *mut *mut ffi::sqlite3_value,
);

fn create(api: *mut ffi::fts5_api, name: &CStr, function: AuxFunction) -> rusqlite::Result<()> {
    // SAFETY: `api` came from `fts5_api` for this connection and is valid
    // while it is open; FTS5 copies the name.
    let rc = unsafe {
        match (*api).xCreateFunction {
            Some(create) => create(
                api,
                name.as_ptr(),
                std::ptr::null_mut(),
                Some(function),
                None,
            ),
            None => ffi::SQLITE_MISUSE,
        }
    };
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None))
    }
}

/// The row's length in tokens, its last column left out.
///
/// # Safety
/// Called by FTS5 with its own live API and context pointers.
unsafe fn document_length(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
) -> Option<f64> {
    // SAFETY: as the caller's contract says.
    unsafe {
        let columns = ((*api).xColumnCount?)(fts);
        let column_size = (*api).xColumnSize?;
        let mut total = 0i64;
        for column in 0..columns - 1 {
            let mut size: c_int = 0;
            if column_size(fts, column, &raw mut size) != ffi::SQLITE_OK {
                return None;
            }
            total += i64::from(size);
        }
        Some(total as f64)
    }
}

unsafe extern "C" fn length(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _values: c_int,
    _args: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 passes live pointers for the duration of the call.
    unsafe {
        match document_length(api, fts) {
            Some(length) => ffi::sqlite3_result_double(ctx, length),
            None => ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_ERROR),
        }
    }
}

unsafe extern "C" fn bm25(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    values: c_int,
    args: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 passes live pointers for the duration of the call, and
    // `args` holds `values` values.
    unsafe {
        match score(api, fts, values, args) {
            Some(score) => ffi::sqlite3_result_double(ctx, score),
            None => ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_ERROR),
        }
    }
}

/// # Safety
/// As [`bm25`]'s.
unsafe fn score(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    values: c_int,
    args: *mut *mut ffi::sqlite3_value,
) -> Option<f64> {
    // SAFETY: as the caller's contract says.
    unsafe {
        if values < 1 {
            return None;
        }
        let idfs: Vec<f64> = (1..values)
            .map(|i| ffi::sqlite3_value_double(*args.offset(i as isize)))
            .collect();
        let average = ffi::sqlite3_value_double(*args);
        let hits = phrase_hits(api, fts)?;
        Some(bm25_of(&hits, document_length(api, fts)?, average, &idfs))
    }
}

/// The BM25 of a document of `length` tokens with `hits[i]` hits of phrase
/// `i`, where the average length is `average` and the phrases' IDFs are
/// `idfs` (a phrase without one counts for nothing).
pub(crate) fn bm25_of(hits: &[f64], length: f64, average: f64, idfs: &[f64]) -> f64 {
    let norm = K1 * (1.0 - B + B * length / average.max(1.0));
    let mut total = 0.0;
    for (tf, idf) in hits.iter().zip(idfs) {
        if *tf > 0.0 {
            total += idf * tf * (K1 + 1.0) / (tf + norm);
        }
    }
    total
}

/// Hits per phrase of the MATCH expression in the row's weighted columns
/// (all but the last).
///
/// # Safety
/// As [`bm25`]'s.
unsafe fn phrase_hits(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
) -> Option<Vec<f64>> {
    // SAFETY: as the caller's contract says.
    unsafe {
        let phrases = ((*api).xPhraseCount?)(fts);
        let last_column = ((*api).xColumnCount?)(fts) - 1;
        let mut hits = vec![0.0f64; usize::try_from(phrases).ok()?];
        let mut instances: c_int = 0;
        if ((*api).xInstCount?)(fts, &raw mut instances) != ffi::SQLITE_OK {
            return None;
        }
        let inst = (*api).xInst?;
        for i in 0..instances {
            let (mut phrase, mut column, mut offset) = (0, 0, 0);
            if inst(fts, i, &raw mut phrase, &raw mut column, &raw mut offset) != ffi::SQLITE_OK {
                return None;
            }
            if column != last_column {
                hits[usize::try_from(phrase).ok()?] += 1.0;
            }
        }
        Some(hits)
    }
}

/// `octopus_hits(fts)`: the row's length, then its hits of each phrase, as
/// little-endian u32s in a blob, for a search that scores its candidates
/// itself (see `search.rs`).
unsafe extern "C" fn hits(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _values: c_int,
    _args: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 passes live pointers for the duration of the call; the
    // blob is copied by SQLite (SQLITE_TRANSIENT).
    unsafe {
        let found = document_length(api, fts).zip(phrase_hits(api, fts));
        match found {
            Some((length, hits)) => {
                let bytes: Vec<u8> = std::iter::once(length)
                    .chain(hits)
                    .flat_map(|n| (n as u32).to_le_bytes())
                    .collect();
                ffi::sqlite3_result_blob(
                    ctx,
                    bytes.as_ptr().cast::<c_void>(),
                    c_int::try_from(bytes.len()).unwrap_or(0),
                    ffi::SQLITE_TRANSIENT(),
                );
            }
            None => ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_ERROR),
        }
    }
}

/// A row's length and phrase hits as `octopus_hits` wrote them.
pub(crate) fn read_hits(blob: &[u8]) -> Option<(f64, Vec<f64>)> {
    let mut numbers = blob
        .chunks_exact(4)
        .map(|b| f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])));
    let length = numbers.next()?;
    Some((length, numbers.collect()))
}
