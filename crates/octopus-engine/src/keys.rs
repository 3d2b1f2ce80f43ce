//! API keys. A key is `oct_` followed by 64 hex digits (256 random bits); only its
//! SHA-256 is stored. The admin key has the same form.

use sha2::{Digest, Sha256};

use octopus_core::TenantId;
use octopus_core::tenant::KeyHash;

const PREFIX: &str = "oct_";
/// Characters of a key shown in listings so that a person can tell keys apart.
const SHOWN_CHARS: usize = 12;

/// Who is calling, as established from the presented key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller {
    Admin,
    Tenant(TenantId),
}

/// A freshly minted key: the secret is shown once and never stored.
#[derive(Clone, Debug)]
pub struct MintedKey {
    pub secret: String,
    pub hash: KeyHash,
    pub prefix: String,
}

pub fn mint() -> MintedKey {
    let mut bytes = [0u8; 32];
    // The OS random source failing leaves nothing sensible to do.
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    let secret = format!("{PREFIX}{}", hex(&bytes));
    MintedKey {
        hash: hash(&secret),
        prefix: secret[..SHOWN_CHARS].to_owned(),
        secret,
    }
}

pub fn hash(secret: &str) -> KeyHash {
    KeyHash(Sha256::digest(secret.as_bytes()).into())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares two hashes in time independent of where they differ.
pub(crate) fn same_hash(a: &KeyHash, b: &KeyHash) -> bool {
    a.0.iter()
        .zip(b.0.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_keys_are_distinct_and_hash_stably() {
        let a = mint();
        let b = mint();
        assert_ne!(a.secret, b.secret);
        assert!(a.secret.starts_with("oct_") && a.secret.len() == 68);
        assert_eq!(hash(&a.secret), a.hash);
        assert!(same_hash(&a.hash, &hash(&a.secret)));
        assert!(!same_hash(&a.hash, &b.hash));
        assert!(a.secret.starts_with(&a.prefix));
    }
}
