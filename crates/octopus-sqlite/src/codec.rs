//! How values are laid out in SQLite columns: ids as 16-byte blobs, instants as
//! microseconds, and message payloads behind a one-byte codec tag.
//!
//! Payload codec: `0` then the bytes as they are, or `1` then a gzip stream. Gzip is
//! used only when the payload is long enough to shrink: a chat message of a few
//! dozen bytes grows under gzip (18 bytes of header and trailer), and compressing
//! it would cost more time than the row write itself.

use std::borrow::Cow;
use std::io::{Read, Write};

use chrono::{DateTime, TimeZone, Utc};
use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use uuid::Uuid;

use crate::error::{Error, corrupt};

const RAW: u8 = 0;
const GZIP: u8 = 1;

/// Payloads shorter than this are stored raw.
const COMPRESS_FROM_BYTES: usize = 256;

pub(crate) fn encode_payload(bytes: &[u8]) -> Vec<u8> {
    if bytes.len() >= COMPRESS_FROM_BYTES {
        let mut encoder = GzEncoder::new(
            Vec::with_capacity(bytes.len() / 2 + 32),
            Compression::fast(),
        );
        encoder.get_mut().push(GZIP);
        // Writing to a Vec cannot fail.
        if encoder.write_all(bytes).is_ok()
            && let Ok(compressed) = encoder.finish()
            && compressed.len() < bytes.len() + 1
        {
            return compressed;
        }
    }
    let mut raw = Vec::with_capacity(bytes.len() + 1);
    raw.push(RAW);
    raw.extend_from_slice(bytes);
    raw
}

pub(crate) fn decode_payload(stored: &[u8]) -> Result<Cow<'_, [u8]>, Error> {
    match stored.split_first() {
        Some((&RAW, rest)) => Ok(Cow::Borrowed(rest)),
        Some((&GZIP, rest)) => {
            let mut out = Vec::with_capacity(rest.len() * 3);
            GzDecoder::new(rest)
                .read_to_end(&mut out)
                .map_err(|e| corrupt("compressed payload", e))?;
            Ok(Cow::Owned(out))
        }
        Some((tag, _)) => Err(corrupt("payload", format!("unknown codec tag {tag}"))),
        None => Err(corrupt("payload", "empty")),
    }
}

pub(crate) fn encode_json<T: serde::Serialize>(value: &T) -> Vec<u8> {
    // Serializing our own types to a Vec cannot fail.
    encode_payload(&serde_json::to_vec(value).unwrap_or_default())
}

pub(crate) fn decode_json<T: serde::de::DeserializeOwned>(
    stored: &[u8],
    what: &'static str,
) -> Result<T, Error> {
    serde_json::from_slice(&decode_payload(stored)?).map_err(|e| corrupt(what, e))
}

pub(crate) fn micros(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros()
}

pub(crate) fn instant(micros: i64) -> Result<DateTime<Utc>, Error> {
    Utc.timestamp_micros(micros)
        .single()
        .ok_or_else(|| corrupt("timestamp", micros))
}

pub(crate) fn uuid_from(bytes: &[u8]) -> Result<Uuid, Error> {
    Uuid::from_slice(bytes).map_err(|e| corrupt("id", e))
}

pub(crate) use octopus_core::vectors::vector_to_bytes as embedding_bytes;

pub(crate) fn embedding_from(bytes: &[u8]) -> Result<Vec<f32>, Error> {
    octopus_core::vectors::vector_from_bytes(bytes).ok_or_else(|| {
        corrupt(
            "embedding",
            format!("{} bytes is not a whole number of f32s", bytes.len()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_payloads_stay_raw_and_long_ones_shrink() {
        let short = b"hello there";
        let stored = encode_payload(short);
        assert_eq!(stored[0], RAW);
        assert_eq!(&*decode_payload(&stored).unwrap(), short);

        let long = "the order shipped with FedEx; ".repeat(40);
        let stored = encode_payload(long.as_bytes());
        assert_eq!(stored[0], GZIP);
        assert!(stored.len() < long.len() / 2);
        assert_eq!(&*decode_payload(&stored).unwrap(), long.as_bytes());
    }

    proptest::proptest! {
        #[test]
        fn any_payload_round_trips(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..4096)) {
            let stored = encode_payload(&bytes);
            proptest::prop_assert_eq!(&*decode_payload(&stored).unwrap(), &bytes[..]);
        }

        #[test]
        fn repetitive_text_is_stored_smaller(word in "[a-z]{3,8}", repeats in 64usize..512) {
            let text = format!("{word} ").repeat(repeats);
            proptest::prop_assert!(encode_payload(text.as_bytes()).len() < text.len());
        }
    }

    #[test]
    fn unknown_tag_is_reported_as_corruption() {
        assert!(decode_payload(&[9, 1, 2]).is_err());
        assert!(decode_payload(&[]).is_err());
    }

    #[test]
    fn embeddings_round_trip() {
        let v = vec![0.25_f32, -1.5, 3.0e-7];
        assert_eq!(embedding_from(&embedding_bytes(&v)).unwrap(), v);
        assert!(embedding_from(&[1, 2, 3]).is_err());
    }
}
