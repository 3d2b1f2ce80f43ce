//! How long each free-form input may be. Every string and JSON value a client
//! sends is bounded: by one of these, or by a limit of its own module
//! (message bytes, system prompt, summary). The OpenAPI document states the
//! same numbers, so a client can check before it sends.

use crate::{Error, Result};

/// Model, deployment and API-version names.
pub const MAX_MODEL_NAME_CHARS: usize = 200;
/// URLs (`base_url`).
pub const MAX_URL_CHARS: usize = 2048;
/// A conversation's `metadata`, serialised.
pub const MAX_METADATA_BYTES: usize = 64 * 1024;
/// A document's `category`, and the category a search filters on.
pub const MAX_CATEGORY_CHARS: usize = 200;
/// A document's `source`.
pub const MAX_SOURCE_CHARS: usize = 1000;
/// A search or recall query: longer text is a document, not a question.
pub const MAX_QUERY_CHARS: usize = 10_000;
/// A tool call's id and function name.
pub const MAX_TOOL_NAME_CHARS: usize = 256;

/// Refuses `value` unless it has `min..=max` characters (after trimming, for
/// the lower bound: blank is empty).
pub fn check_chars(field: &str, value: &str, min: usize, max: usize) -> Result<()> {
    if value.trim().chars().count() < min {
        return Err(Error::invalid(field, "must not be empty"));
    }
    if value.chars().count() > max {
        return Err(Error::invalid(
            field,
            format!("must be at most {max} characters"),
        ));
    }
    Ok(())
}

/// [`check_chars`] for a value that may be absent.
pub fn check_optional_chars(field: &str, value: Option<&str>, max: usize) -> Result<()> {
    value.map_or(Ok(()), |value| check_chars(field, value, 1, max))
}

/// Refuses a JSON value longer than `max` bytes serialised.
pub fn check_json_bytes(field: &str, value: &impl serde::Serialize, max: usize) -> Result<()> {
    let bytes = serde_json::to_vec(value).map_or(usize::MAX, |bytes| bytes.len());
    if bytes > max {
        return Err(Error::invalid(
            field,
            format!("must be at most {max} bytes of JSON"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_are_counted_not_bytes_and_blank_is_empty() {
        assert!(check_chars("f", "ééé", 1, 3).is_ok());
        assert!(check_chars("f", "éééé", 1, 3).is_err());
        assert!(check_chars("f", "   ", 1, 3).is_err());
        assert!(check_optional_chars("f", None, 3).is_ok());
        let json = serde_json::json!({"k": "x".repeat(20)});
        assert!(check_json_bytes("f", &json, 32).is_ok());
        assert!(check_json_bytes("f", &json, 16).is_err());
    }
}
