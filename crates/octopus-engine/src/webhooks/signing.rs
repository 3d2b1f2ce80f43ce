//! Signing deliveries as the Standard Webhooks specification says: the
//! signed content is `{webhook-id}.{webhook-timestamp}.{body}`, signed with
//! HMAC-SHA256 under the endpoint's secret (`whsec_` and the base64 of the
//! key), and sent as `webhook-signature: v1,{base64 of the MAC}`. Any
//! library of the specification verifies it.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// What every secret starts with.
pub const SECRET_PREFIX: &str = "whsec_";
/// Bytes of a new secret's key (the specification asks for 24 to 64).
const KEY_BYTES: usize = 32;

/// A new endpoint secret.
pub fn new_secret() -> String {
    let mut key = [0u8; KEY_BYTES];
    // The OS random source failing leaves nothing sensible to do.
    getrandom::fill(&mut key).expect("the operating system's random source failed");
    format!("{SECRET_PREFIX}{}", STANDARD.encode(key))
}

/// The `webhook-signature` header of `body` sent as message `message_id` at
/// `timestamp` (Unix seconds).
pub fn signature(secret: &str, message_id: &str, timestamp: i64, body: &str) -> String {
    let key = STANDARD
        .decode(secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret))
        .unwrap_or_else(|_| secret.as_bytes().to_vec());
    // HMAC takes a key of any length.
    let mut mac = <Hmac<Sha256>>::new_from_slice(&key).expect("HMAC takes a key of any length");
    mac.update(format!("{message_id}.{timestamp}.").as_bytes());
    mac.update(body.as_bytes());
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specifications_example_signs_as_published() {
        // What the specification's Python library (PyPI standardwebhooks
        // 1.1.0) signs for this secret, id, time and body.
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let signed = signature(
            secret,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            r#"{"test": 2432232314}"#,
        );
        assert_eq!(signed, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn secrets_are_new_each_time_and_hold_a_32_byte_key() {
        let (a, b) = (new_secret(), new_secret());
        assert_ne!(a, b);
        let key = STANDARD
            .decode(a.strip_prefix(SECRET_PREFIX).unwrap())
            .unwrap();
        assert_eq!(key.len(), KEY_BYTES);
    }
}
