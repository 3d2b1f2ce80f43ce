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

/// The regular expression of a string that is not blank: one character
/// outside ECMA-262's white space. The class is spelt out, not `\S`, because
/// engines disagree on `\S` (Python's and Rust's are Unicode's); [`is_blank`]
/// is its exact negation.
pub const NOT_BLANK_PATTERN: &str = "[^\t\n\u{b}\u{c}\r \u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}]";

/// The regular expression of a string without U+0000 (NUL), which no text
/// a client sends may hold: PostgreSQL cannot store it in text, and no
/// name, id or message needs it.
pub const NO_NUL_PATTERN: &str = "^[^\\x00]*$";

/// [`NO_NUL_PATTERN`] and [`NOT_BLANK_PATTERN`] at once: no NUL, and one
/// character that is neither NUL nor white space.
pub const NOT_BLANK_NO_NUL_PATTERN: &str = "^[^\\x00]*[^\\x00\t\n\u{b}\u{c}\r \u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}][^\\x00]*$";

/// Refuses text holding U+0000 (see [`NO_NUL_PATTERN`]).
pub fn check_no_nul(field: &str, value: &str) -> Result<()> {
    match value.contains('\0') {
        true => Err(Error::invalid(field, "must not contain U+0000 (NUL)")),
        false => Ok(()),
    }
}

/// Whether `value` holds only white space as ECMA-262's `\s` defines it (the
/// definition the OpenAPI document's patterns use, so that the server and
/// the document agree on every string).
pub fn is_blank(value: &str) -> bool {
    value.chars().all(|c| {
        matches!(
            c,
            '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
                ..='\u{200a}'
                    | '\u{2028}'
                    | '\u{2029}'
                    | '\u{202f}'
                    | '\u{205f}'
                    | '\u{3000}'
                    | '\u{feff}'
        )
    })
}

/// Refuses `value` unless it has at most `max` characters, holds no NUL
/// and, when `min` is 1 or more, is not blank.
pub fn check_chars(field: &str, value: &str, min: usize, max: usize) -> Result<()> {
    check_no_nul(field, value)?;
    if min > 0 && is_blank(value) {
        return Err(Error::invalid(field, "must not be empty"));
    }
    if value.chars().count() < min {
        return Err(Error::invalid(
            field,
            format!("must be at least {min} characters"),
        ));
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

/// The text a search for `message` asks with: its first
/// [`MAX_QUERY_CHARS`] characters. A message may be longer than a question
/// (a pasted document, say); its opening is what the embedding model reads
/// of it too.
pub fn query_of(message: &str) -> &str {
    match message.char_indices().nth(MAX_QUERY_CHARS) {
        Some((cut, _)) => &message[..cut],
        None => message,
    }
}

/// Refuses a time window whose `from` is later than its `to`: it could hold
/// nothing, and is more likely a mistake than a question.
pub fn check_window(
    from: Option<chrono::DateTime<chrono::Utc>>,
    to: Option<chrono::DateTime<chrono::Utc>>,
) -> Result<()> {
    match (from, to) {
        (Some(from), Some(to)) if from > to => Err(Error::invalid(
            "from",
            format!("must not be later than `to` ({to})"),
        )),
        _ => Ok(()),
    }
}

/// Deserialises a struct from a JSON object only. serde's derive also takes an
/// array of the fields' values (`[null, null]`), which the API's contract does
/// not allow: a struct whose fields are all optional would take almost any
/// array. For fields of such structs: `#[serde(deserialize_with = ...)]`.
pub fn from_object_only<'de, D, T>(deserializer: D) -> std::result::Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    use serde::Deserialize;
    let object = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
    T::deserialize(serde_json::Value::Object(object)).map_err(serde::de::Error::custom)
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
    fn a_query_is_the_opening_of_a_long_message() {
        let long = "é".repeat(MAX_QUERY_CHARS + 5);
        assert_eq!(query_of(&long).chars().count(), MAX_QUERY_CHARS);
        assert_eq!(query_of("short"), "short");
    }

    #[test]
    fn blank_is_ecma_white_space() {
        assert!(is_blank(" \t\u{feff}\u{3000}"));
        assert!(
            !is_blank("\u{85}"),
            "NEL is white space to Rust, not to ECMA-262"
        );
        assert!(!is_blank(" a "));
    }

    #[test]
    fn characters_are_counted_not_bytes_and_blank_is_empty() {
        assert!(check_chars("f", "ééé", 1, 3).is_ok());
        assert!(check_chars("f", "éééé", 1, 3).is_err());
        assert!(check_chars("f", "   ", 1, 3).is_err());
        assert!(check_optional_chars("f", None, 3).is_ok());
        let error = check_chars("f", "a\0b", 0, 3).unwrap_err().to_string();
        assert!(error.contains("NUL"), "{error}");
        let json = serde_json::json!({"k": "x".repeat(20)});
        assert!(check_json_bytes("f", &json, 32).is_ok());
        assert!(check_json_bytes("f", &json, 16).is_err());
    }
}
