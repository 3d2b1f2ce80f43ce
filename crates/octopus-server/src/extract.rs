//! Extractors whose rejections are JSON errors naming the problem, in place of
//! axum's plain-text ones.

use axum::body::Bytes;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::error::{ApiError, ErrorCode};

/// The media types a JSON body may be sent as: plain JSON, and the JSON merge
/// patch of RFC 7396 (what `PATCH` routes implement).
const JSON_MEDIA_TYPES: &[&str] = &["application/json", "application/merge-patch+json"];

/// A JSON body. Malformed JSON is 400 `malformed_json`; JSON of the wrong shape is
/// 422 `invalid_request` with the path of the offending field. Read under
/// the limits of [`crate::request_body`], after the caller's other
/// extractors (its key among them) have run.
pub struct Json<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        if let Some(content_type) = request.headers().get(CONTENT_TYPE) {
            let media_type = content_type
                .to_str()
                .unwrap_or_default()
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            if !JSON_MEDIA_TYPES.contains(&media_type.as_str()) {
                return Err(ApiError::from_code(
                    ErrorCode::UnsupportedMediaType,
                    "send the body as application/json",
                ));
            }
        }
        let _ = state;
        let bytes = crate::request_body::read(request).await?;
        parse_json(&bytes).map(Json)
    }
}

/// A body read whole, as it came (a dump's JSON Lines), under the same
/// limits as JSON.
pub struct RawBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, _state: &S) -> Result<Self, ApiError> {
        crate::request_body::read(request).await.map(RawBody)
    }
}

/// Parses JSON with the path of any shape error. An object that names one
/// key twice is refused (422, with the key and where), in every body: JSON
/// parsers disagree on which of the two counts, so a proxy in front that
/// reads the first would see another request than the one Octopus acts on.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let value = parse_json_shaped(bytes)?;
    refuse_duplicate_keys(bytes)?;
    Ok(value)
}

fn parse_json_shaped<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    parse_json_as_written(bytes).or_else(|error| {
        // JSON (and JSON Schema) count `3.0` as the integer 3; serde does
        // not. Only a body that failed for a float where an integer goes is
        // read again, as a tree, with such numbers rewritten: the common
        // case pays nothing, and a body refused for its size or shape is
        // not built into a tree it would take many times its bytes to hold.
        if !error.body().error.message.contains("floating point") {
            return Err(error);
        }
        let mut value: serde_json::Value = match serde_json::from_slice(bytes) {
            Ok(value) => value,
            Err(_) => return Err(error),
        };
        if !integral_numbers_as_integers(&mut value) {
            return Err(error);
        }
        from_value(value)
    })
}

/// Rewrites every float with no fraction (within `i64`/`u64`) as an integer;
/// says whether it rewrote any.
pub(crate) fn integral_numbers_as_integers(value: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::Number(number) if number.is_f64() => {
            let Some(float) = number.as_f64() else {
                return false;
            };
            // Exactly the integers the fields can hold: [-2^63, 2^64).
            const TWO_TO_63: f64 = 9_223_372_036_854_775_808.0;
            let integer = if !float.is_finite() || float.fract() != 0.0 {
                None
            } else if (0.0..2.0 * TWO_TO_63).contains(&float) {
                Some(serde_json::Number::from(float as u64))
            } else if (-TWO_TO_63..0.0).contains(&float) {
                Some(serde_json::Number::from(float as i64))
            } else {
                None
            };
            match integer {
                Some(integer) => {
                    *number = integer;
                    true
                }
                None => false,
            }
        }
        Value::Array(items) => {
            let mut rewrote = false;
            for item in items {
                rewrote |= integral_numbers_as_integers(item);
            }
            rewrote
        }
        Value::Object(fields) => {
            let mut rewrote = false;
            for item in fields.values_mut() {
                rewrote |= integral_numbers_as_integers(item);
            }
            rewrote
        }
        _ => false,
    }
}

fn parse_json_as_written<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        // serde_json calls a value of the wrong type (`{"mode": 1}`) a syntax
        // error when the type is an enum; it is valid JSON all the same.
        if inner.is_data() || (inner.is_syntax() && is_valid_json(bytes)) {
            ApiError::from_code(ErrorCode::InvalidRequest, format!("{path}: {inner}"))
                .with_field(path)
        } else {
            malformed(inner)
        }
    })?;
    deserializer.end().map_err(malformed)?;
    Ok(value)
}

/// Walks the body (already parsed once, so valid JSON) and fails at the
/// first object that names a key twice, with the object's path.
fn refuse_duplicate_keys(bytes: &[u8]) -> Result<(), ApiError> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize::<_, UniqueKeys>(&mut deserializer)
        .map(|_| ())
        .map_err(|error| {
            let path = error.path().to_string();
            let inner = error.into_inner();
            ApiError::from_code(ErrorCode::InvalidRequest, format!("{path}: {inner}"))
                .with_field(path)
        })
}

/// Any JSON value whose objects each name their keys once.
struct UniqueKeys;

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(UniqueKeys)
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(self)
    }
    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(self)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut items: A) -> Result<Self, A::Error> {
        while items.next_element::<UniqueKeys>()?.is_some() {}
        Ok(self)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut fields: A) -> Result<Self, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = fields.next_key::<String>()? {
            if seen.contains(&key) {
                return Err(serde::de::Error::custom(format!(
                    "duplicate field `{key}`: each key may appear once in an object"
                )));
            }
            fields.next_value::<UniqueKeys>()?;
            seen.insert(key);
        }
        Ok(self)
    }
}

fn is_valid_json(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok()
}

fn malformed(error: serde_json::Error) -> ApiError {
    ApiError::from_code(
        ErrorCode::MalformedJson,
        format!("the body is not valid JSON: {error}"),
    )
}

/// Path parameters. A malformed id is 400 `invalid_id`.
pub struct Path<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for Path<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| Path(value))
            .map_err(|rejection: PathRejection| {
                ApiError::from_code(
                    ErrorCode::InvalidId,
                    format!(
                        "invalid path parameter: {} (ids are UUIDs, as each object's `id` says: a name is not an id; list the objects to find it)",
                        rejection.body_text()
                    ),
                )
            })
    }
}

/// Query parameters. Bad ones are 400 `invalid_query`.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        if let Some(name) = parts.uri.query().and_then(first_not_utf8) {
            return Err(ApiError::from_code(
                ErrorCode::InvalidQuery,
                format!("query parameter `{name}` is not UTF-8 once percent-decoded"),
            ));
        }
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(value)| Query(value))
            .map_err(|rejection: QueryRejection| {
                ApiError::from_code(ErrorCode::InvalidQuery, rejection.body_text())
            })
    }
}

/// The name of the first parameter of a query string whose name or value
/// is not UTF-8 once percent-decoded. The form decoder would put U+FFFD in
/// their place and answer for other text than was sent; a path's bytes
/// are held to UTF-8 the same way.
fn first_not_utf8(query: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let valid = |text: &str| std::str::from_utf8(&percent_decode(text)).is_ok();
        match valid(name) && valid(value) {
            true => None,
            false => Some(String::from_utf8_lossy(&percent_decode(name)).into_owned()),
        }
    })
}

/// `%XX` escapes decoded to their bytes (and `+` to a space); a `%` that
/// starts no escape is kept, as the form decoder keeps it.
fn percent_decode(text: &str) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let escape = match bytes[at] {
            b'%' if at + 2 < bytes.len() => hex(bytes[at + 1]).zip(hex(bytes[at + 2])),
            _ => None,
        };
        match (escape, bytes[at]) {
            (Some((high, low)), _) => {
                decoded.push(high * 16 + low);
                at += 3;
            }
            (None, b'+') => {
                decoded.push(b' ');
                at += 1;
            }
            (None, byte) => {
                decoded.push(byte);
                at += 1;
            }
        }
    }
    decoded
}

/// Deserializes a JSON value, naming the path of a field of the wrong shape.
pub(crate) fn from_value<T: serde::de::DeserializeOwned>(
    mut value: serde_json::Value,
) -> Result<T, ApiError> {
    integral_numbers_as_integers(&mut value);
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        ApiError::from(octopus_core::Error::invalid(path, error.into_inner()))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_query_parameter_that_is_not_utf8_once_decoded_is_named() {
        use super::first_not_utf8;
        assert_eq!(first_not_utf8("q=%FF%FE&limit=3").as_deref(), Some("q"));
        assert_eq!(first_not_utf8("limit=3&q=caf%C3%A9+au+lait"), None);
        assert_eq!(first_not_utf8("q=100%"), None, "a lone % is kept as it is");
        assert_eq!(
            first_not_utf8("q=%e9t%e9").as_deref(),
            Some("q"),
            "Latin-1 is not UTF-8"
        );
        assert_eq!(first_not_utf8("%FF=1").as_deref(), Some("\u{fffd}"));
    }

    use super::*;

    #[test]
    fn integral_floats_become_the_integers_they_are_up_to_the_fields_limits() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Fields {
            unsigned: u64,
            signed: i64,
        }
        for (body, expected) in [
            (r#"{"unsigned": 142.0, "signed": -3.0}"#, (142, -3)),
            (
                r#"{"unsigned": 1.8e19, "signed": 9.2e18}"#,
                (18_000_000_000_000_000_000, 9_200_000_000_000_000_000),
            ),
            (
                r#"{"unsigned": 1e3, "signed": -9.2e18}"#,
                (1000, -9_200_000_000_000_000_000),
            ),
            // Read exactly: one unit off (as serde_json reads it without
            // `float_roundtrip`), it would not be integral.
            (
                r#"{"unsigned": 2251799813685247.0, "signed": 0}"#,
                (2_251_799_813_685_247, 0),
            ),
        ] {
            let fields: Fields = parse_json(body.as_bytes()).unwrap();
            assert_eq!((fields.unsigned, fields.signed), expected, "{body}");
        }
        for body in [
            r#"{"unsigned": 1.5, "signed": 0}"#,
            r#"{"unsigned": 2e19, "signed": 0}"#,
            r#"{"unsigned": -1.0, "signed": 0}"#,
        ] {
            assert!(parse_json::<Fields>(body.as_bytes()).is_err(), "{body}");
        }
    }

    #[test]
    fn a_key_named_twice_is_refused_in_any_object_with_where_it_is() {
        let error = parse_json::<serde_json::Value>(
            br#"{"messages": [{"role": "user", "content": "a", "role": "assistant"}]}"#,
        )
        .unwrap_err();
        let body = error.body();
        assert_eq!(body.error.code, "invalid_request");
        assert!(
            body.error.message.contains("duplicate field `role`"),
            "{}",
            body.error.message
        );
        assert!(
            body.error.message.starts_with("messages[0]"),
            "{}",
            body.error.message
        );
        // At the top level, and escaped spellings of one key are one key.
        assert!(parse_json::<serde_json::Value>(br#"{"a": 1, "\u0061": 2}"#).is_err());
        // The same key in two objects, or in an object and its child, is fine.
        let fine =
            parse_json::<serde_json::Value>(br#"{"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}]}"#);
        assert!(
            fine.is_ok(),
            "{:?}",
            fine.err().map(|e| e.body().error.message.clone())
        );
    }
}
