//! PII detection and redaction: pure, and fast enough for every append.
//!
//! Each detector finds candidates with a regular expression and keeps only
//! those that pass the kind's own check (a Luhn sum for cards, mod-97 for
//! IBANs, allocation ranges for US SSNs, digit counts for phone numbers,
//! entropy for unprefixed secrets, a numbering plan for phone numbers:
//! [`phone`]), so order ids, dates and version numbers are not taken for
//! PII. Findings are byte spans; redaction replaces each with a typed
//! placeholder such as `[EMAIL]`.

mod phone;

use std::sync::OnceLock;

pub use phone::PhoneRegion;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// What an agent does about the PII in its messages: one setting, each
/// level doing what the one before it does and more.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PiiPolicy {
    /// Nothing is looked for; only what the caller marks is kept.
    Off,
    /// A stored message holding PII is marked (`contains_pii`).
    Flag,
    /// Marked, and a redacted copy kept beside it (`redacted_content`,
    /// with typed placeholders such as `[EMAIL]`); the model and the
    /// embedder are given the original.
    #[default]
    Redact,
    /// As `redact`, and only redacted text leaves Octopus: the model, the
    /// embedder and their providers never see the PII found.
    RedactOutgoing,
    /// As `redact_outgoing`, and the redacted text is stored in place of
    /// the original, which is never written.
    RedactStored,
}

impl PiiPolicy {
    /// Whether stored messages are searched for PII.
    pub fn detects(self) -> bool {
        self != Self::Off
    }

    /// Whether a redacted copy is made of a message holding PII.
    pub fn keeps_redacted_copy(self) -> bool {
        matches!(
            self,
            Self::Redact | Self::RedactOutgoing | Self::RedactStored
        )
    }

    /// Whether only redacted text is sent to models and embedders.
    pub fn redacts_outgoing(self) -> bool {
        matches!(self, Self::RedactOutgoing | Self::RedactStored)
    }

    /// Whether the redacted text replaces the original in storage.
    pub fn stores_redacted_only(self) -> bool {
        self == Self::RedactStored
    }

    /// The policy that the three settings it replaced (`redact_pii`,
    /// `pii_detection`, `pii_storage`) described, for agents stored and
    /// dumps written before it: the storage setting first, then egress,
    /// then detection.
    pub fn from_earlier_settings(
        redact_pii: Option<bool>,
        detection: Option<&str>,
        storage: Option<&str>,
    ) -> Self {
        if storage == Some("redacted_only") {
            return Self::RedactStored;
        }
        if redact_pii == Some(true) {
            return Self::RedactOutgoing;
        }
        match detection {
            Some("off") => Self::Off,
            Some("flag") => Self::Flag,
            _ => Self::Redact,
        }
    }

    /// Rewrites an agent's memory settings as JSON written before this
    /// policy (with `redact_pii`, `pii_detection` or `pii_storage`) into
    /// its terms; settings without them are left as they are.
    pub fn upgrade_memory_settings(memory: &mut serde_json::Map<String, serde_json::Value>) {
        let earlier = ["redact_pii", "pii_detection", "pii_storage"];
        if !earlier.iter().any(|name| memory.contains_key(*name)) {
            return;
        }
        let redact = memory.remove("redact_pii").and_then(|v| v.as_bool());
        let detection = memory.remove("pii_detection");
        let storage = memory.remove("pii_storage");
        let policy = Self::from_earlier_settings(
            redact,
            detection.as_ref().and_then(|v| v.as_str()),
            storage.as_ref().and_then(|v| v.as_str()),
        );
        memory
            .entry("pii")
            .or_insert_with(|| serde_json::to_value(policy).unwrap_or_default());
    }
}

/// A text as it may leave Octopus when PII must not: redacted where anything
/// is detected, borrowed as it is otherwise. Phone numbers without a
/// country code are read as US numbers; [`egress_for`] names the region.
pub fn egress(text: &str) -> std::borrow::Cow<'_, str> {
    egress_for(text, PhoneRegion::default())
}

/// [`egress`], reading phone numbers without a country code in `region`.
pub fn egress_for(text: &str, region: PhoneRegion) -> std::borrow::Cow<'_, str> {
    let findings = detect_for(text, region);
    match findings.is_empty() {
        true => std::borrow::Cow::Borrowed(text),
        false => std::borrow::Cow::Owned(redact(text, &findings)),
    }
}

/// A JSON document (a tool call's arguments, a result) as it may leave
/// Octopus when PII must not: every string in it, keys and values, through
/// [`egress`], so the document stays valid JSON of the same shape.
pub fn egress_json(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(text) => Value::String(egress(text).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(egress_json).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(key, value)| (egress(key).into_owned(), egress_json(value)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// What kind of personal or secret data a span holds.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PiiKind {
    Email,
    Phone,
    Card,
    Iban,
    Ssn,
    IpAddress,
    Secret,
}

impl PiiKind {
    pub const ALL: [PiiKind; 7] = [
        PiiKind::Email,
        PiiKind::Phone,
        PiiKind::Card,
        PiiKind::Iban,
        PiiKind::Ssn,
        PiiKind::IpAddress,
        PiiKind::Secret,
    ];

    /// The kinds whose placeholder `text` holds: what redaction replaced in
    /// it (or what its author wrote as such).
    pub fn placeholders_in(text: &str) -> Vec<PiiKind> {
        Self::ALL
            .into_iter()
            .filter(|kind| text.contains(kind.placeholder()))
            .collect()
    }

    /// The placeholder a redacted span becomes.
    pub fn placeholder(self) -> &'static str {
        match self {
            PiiKind::Email => "[EMAIL]",
            PiiKind::Phone => "[PHONE]",
            PiiKind::Card => "[CARD]",
            PiiKind::Iban => "[IBAN]",
            PiiKind::Ssn => "[SSN]",
            PiiKind::IpAddress => "[IP]",
            PiiKind::Secret => "[SECRET]",
        }
    }
}

/// A detected span: `text[start..end]` is of `kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finding {
    pub kind: PiiKind,
    pub start: usize,
    pub end: usize,
}

struct Detectors {
    email: Regex,
    secret_prefixed: Regex,
    secret_generic: Regex,
    iban: Regex,
    card: Regex,
    ssn: Regex,
    ipv4: Regex,
    ipv6: Regex,
    phone: Regex,
}

fn detectors() -> &'static Detectors {
    static DETECTORS: OnceLock<Detectors> = OnceLock::new();
    DETECTORS.get_or_init(|| {
        let build = |pattern: &str| Regex::new(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
        Detectors {
            email: build(r"(?i)\b[a-z0-9][a-z0-9._%+-]{0,63}@[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?)*\.[a-z]{2,24}\b"),
            secret_prefixed: build(concat!(
                r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,}",
                r"|xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|oct_[A-Za-z0-9_-]{20,}",
                r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
            )),
            secret_generic: build(r"\b[A-Za-z0-9_+/=-]{32,}\b"),
            iban: build(r"\b[A-Z]{2}[0-9]{2}(?:[ ]?[A-Z0-9]){11,30}\b"),
            card: build(r"\b[0-9](?:[ -]?[0-9]){12,18}\b"),
            ssn: build(r"\b([0-9]{3})-([0-9]{2})-([0-9]{4})\b"),
            ipv4: build(r"\b(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\b"),
            ipv6: build(r"[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:[0-9A-Fa-f:]*"),
            // Digits in groups, with the separators, parentheses and `+` people
            // write numbers with; phone::is_phone decides what it is.
            phone: build(r"\+?(?:\([0-9]{1,5}\)|[0-9]{1,15})(?:[ ./-]?(?:\([0-9]{1,5}\)|[0-9]{1,15})){0,7}"),
        }
    })
}

/// Every PII span of `text`, in order, none overlapping (where two kinds
/// claim the same bytes, the first found in the order secrets, e-mail,
/// IBAN, card, SSN, IP, phone wins). Phone numbers without a country code
/// are read as US numbers; [`detect_for`] names the region.
pub fn detect(text: &str) -> Vec<Finding> {
    detect_for(text, PhoneRegion::default())
}

/// [`detect`], reading phone numbers without a country code in `region`.
pub fn detect_for(text: &str, region: PhoneRegion) -> Vec<Finding> {
    // Most messages hold no digit and no `@`: skip the scans that need one.
    let has_digit = text.bytes().any(|b| b.is_ascii_digit());
    let has_at = text.contains('@');
    let d = detectors();
    let mut found: Vec<Finding> = Vec::new();
    let add = |kind: PiiKind, start: usize, end: usize, found: &mut Vec<Finding>| {
        if !found.iter().any(|f| start < f.end && f.start < end) {
            found.push(Finding { kind, start, end });
        }
    };
    for m in d.secret_prefixed.find_iter(text) {
        add(PiiKind::Secret, m.start(), m.end(), &mut found);
    }
    if has_at {
        for m in d.email.find_iter(text) {
            add(PiiKind::Email, m.start(), m.end(), &mut found);
        }
    }
    for m in d.secret_generic.find_iter(text) {
        if looks_random(m.as_str()) {
            add(PiiKind::Secret, m.start(), m.end(), &mut found);
        }
    }
    if has_digit {
        // A candidate may run on into the next number: each kind takes the
        // longest run of the candidate's groups that passes its check.
        // A run already claimed by another kind is no candidate: the search
        // goes on past it to the number after.
        let free = |found: &[Finding], start: usize, end: usize| {
            !found.iter().any(|f| start < f.end && f.start < end)
        };
        let taken = found.clone();
        for (start, end) in longest_prefixes(&d.iban, text, |s, e| {
            free(&taken, s, e) && iban_checksum_ok(&text[s..e])
        }) {
            add(PiiKind::Iban, start, end, &mut found);
        }
        // An IBAN whose checksum fails is no IBAN, and its digits are no
        // card or phone either (`DE89 3704 0044 0532 0130 01`). The run of
        // IBAN-like groups that holds a valid one blocks nothing: what
        // follows the IBAN in it may be a card.
        let iban_shaped: Vec<Finding> = d
            .iban
            .find_iter(text)
            .map(|m| Finding {
                kind: PiiKind::Iban,
                start: m.start(),
                end: m.end(),
            })
            .filter(|shaped| free(&found, shaped.start, shaped.end))
            .collect();
        let taken = [found.as_slice(), &iban_shaped].concat();
        for (start, end) in longest_prefixes(&d.card, text, |s, e| {
            free(&taken, s, e) && card_ok(&text[s..e])
        }) {
            add(PiiKind::Card, start, end, &mut found);
        }
        for c in d.ssn.captures_iter(text) {
            let (Some(all), Some(area), Some(group), Some(serial)) =
                (c.get(0), c.get(1), c.get(2), c.get(3))
            else {
                continue;
            };
            if ssn_ok(area.as_str(), group.as_str(), serial.as_str()) {
                add(PiiKind::Ssn, all.start(), all.end(), &mut found);
            }
        }
        for m in d.ipv4.find_iter(text) {
            // A fourth dotted part right before or after is a version number.
            let before = text[..m.start()].chars().next_back();
            let after = text[m.end()..].chars().next();
            let dotted = |c: Option<char>, next: Option<char>| {
                c == Some('.') && next.is_some_and(|n| n.is_ascii_digit())
            };
            if !dotted(before, text[..m.start()].chars().rev().nth(1))
                && !dotted(after, text[m.end()..].chars().nth(1))
            {
                add(PiiKind::IpAddress, m.start(), m.end(), &mut found);
            }
        }
        // A run of digits written as a date or in blocks of four is no
        // phone, and neither is any part of it (`2024 0503 1234`).
        let other_numbers: Vec<Finding> = d
            .phone
            .find_iter(text)
            .filter(|m| phone::written_as_another_number(m.as_str()))
            .map(|m| Finding {
                kind: PiiKind::Phone,
                start: m.start(),
                end: m.end(),
            })
            .collect();
        let taken = [found.as_slice(), &iban_shaped, &other_numbers].concat();
        for (start, end) in longest_prefixes(&d.phone, text, |s, e| {
            free(&taken, s, e) && phone::is_phone(text, s, e, region)
        }) {
            add(PiiKind::Phone, start, end, &mut found);
        }
    }
    if text.contains("::") || text.matches(':').count() >= 2 {
        for m in d.ipv6.find_iter(text) {
            let before = text[..m.start()].chars().next_back();
            let after = text[m.end()..].chars().next();
            let joined = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
            if !joined(before) && !joined(after) && m.as_str().parse::<std::net::Ipv6Addr>().is_ok()
            {
                add(PiiKind::IpAddress, m.start(), m.end(), &mut found);
            }
        }
    }
    found.sort_by_key(|f| f.start);
    found
}

/// The candidates of `regex` in `text`, each cut to its longest prefix that
/// ends a group (of letters and digits) and passes `accept`; the search goes
/// on after it, or one character on when no prefix passes. A greedy pattern
/// can run one number into the next (a card, then an order number); this
/// finds the number in it.
fn longest_prefixes(
    regex: &Regex,
    text: &str,
    accept: impl Fn(usize, usize) -> bool,
) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(m) = regex.find_at(text, from) {
        let candidate = m.as_str();
        let group_ends = candidate.char_indices().filter_map(|(i, c)| {
            let end = i + c.len_utf8();
            let last = !candidate[end..].starts_with(|n: char| n.is_ascii_alphanumeric());
            (c.is_ascii_alphanumeric() && last).then_some(m.start() + end)
        });
        let ends: Vec<usize> = group_ends.collect();
        match ends.into_iter().rev().find(|&end| accept(m.start(), end)) {
            Some(end) => {
                spans.push((m.start(), end));
                from = end;
            }
            None => from = m.start() + 1,
        }
        while from < text.len() && !text.is_char_boundary(from) {
            from += 1;
        }
    }
    spans
}

/// `text` with every finding replaced by its kind's placeholder.
pub fn redact(text: &str, findings: &[Finding]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for finding in findings {
        if finding.start < at || finding.end > text.len() {
            continue;
        }
        out.push_str(&text[at..finding.start]);
        out.push_str(finding.kind.placeholder());
        at = finding.end;
    }
    out.push_str(&text[at..]);
    out
}

fn digits(text: &str) -> Vec<u32> {
    text.chars().filter_map(|c| c.to_digit(10)).collect()
}

/// 13 to 19 digits starting as a card scheme does (2 to 6), passing the Luhn sum, not
/// all one digit.
fn card_ok(candidate: &str) -> bool {
    let digits = digits(candidate);
    if !(13..=19).contains(&digits.len()) || !(2..=6).contains(&digits[0]) {
        return false;
    }
    if digits.iter().all(|d| *d == digits[0]) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| match i % 2 {
            1 => {
                let doubled = d * 2;
                if doubled > 9 { doubled - 9 } else { doubled }
            }
            _ => d,
        })
        .sum();
    sum.is_multiple_of(10)
}

/// ISO 13616: moved first four characters, letters as numbers, mod 97 is 1.
fn iban_checksum_ok(candidate: &str) -> bool {
    let compact: String = candidate.chars().filter(|c| !c.is_whitespace()).collect();
    if !(15..=34).contains(&compact.len()) {
        return false;
    }
    let (head, tail) = compact.split_at(4);
    let mut remainder: u64 = 0;
    for c in tail.chars().chain(head.chars()) {
        let value = match c.to_digit(36) {
            Some(v) => v as u64,
            None => return false,
        };
        remainder = if value >= 10 {
            (remainder * 100 + value) % 97
        } else {
            (remainder * 10 + value) % 97
        };
    }
    remainder == 1
}

/// US SSN allocation rules: no area 000, 666 or 900–999, no group 00, no
/// serial 0000.
fn ssn_ok(area: &str, group: &str, serial: &str) -> bool {
    let area: u32 = area.parse().unwrap_or(0);
    area != 0 && area != 666 && area < 900 && group != "00" && serial != "0000"
}

/// A long token that reads like a key: letters and digits mixed, and high
/// character entropy (English words and hex hashes of commits fall below).
fn looks_random(token: &str) -> bool {
    let has_digit = token.bytes().any(|b| b.is_ascii_digit());
    let has_lower = token.bytes().any(|b| b.is_ascii_lowercase());
    let has_upper = token.bytes().any(|b| b.is_ascii_uppercase());
    if !(has_digit && has_lower && has_upper) {
        return false;
    }
    let mut counts = [0u32; 256];
    for b in token.bytes() {
        counts[b as usize] += 1;
    }
    let n = token.len() as f64;
    let entropy: f64 = counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum();
    entropy > 4.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_earlier_settings_read_as_one_policy() {
        use serde_json::json;
        let cases = [
            (json!({}), None),
            (json!({"pii_detection": "off"}), Some("off")),
            (
                json!({"pii_detection": "flag", "redact_pii": false}),
                Some("flag"),
            ),
            (
                json!({"pii_detection": "redact", "pii_storage": "original"}),
                Some("redact"),
            ),
            (
                json!({"pii_detection": "off", "redact_pii": true}),
                Some("redact_outgoing"),
            ),
            (
                json!({"redact_pii": true, "pii_storage": "redacted_only"}),
                Some("redact_stored"),
            ),
            // A setting already in the new terms wins over an earlier one.
            (json!({"pii": "flag", "redact_pii": true}), Some("flag")),
        ];
        for (before, policy) in cases {
            let mut memory = before.as_object().unwrap().clone();
            memory.insert("knowledge_top_k".into(), json!(3));
            PiiPolicy::upgrade_memory_settings(&mut memory);
            assert_eq!(
                memory.get("pii").and_then(|p| p.as_str()),
                policy,
                "{before}"
            );
            assert_eq!(memory["knowledge_top_k"], 3, "other settings stay");
            for earlier in ["redact_pii", "pii_detection", "pii_storage"] {
                assert!(!memory.contains_key(earlier), "{before}: {earlier} left");
            }
        }
        let levels = [
            PiiPolicy::Off,
            PiiPolicy::Flag,
            PiiPolicy::Redact,
            PiiPolicy::RedactOutgoing,
            PiiPolicy::RedactStored,
        ];
        let what: Vec<_> = levels
            .iter()
            .map(|p| {
                (
                    p.detects(),
                    p.keeps_redacted_copy(),
                    p.redacts_outgoing(),
                    p.stores_redacted_only(),
                )
            })
            .collect();
        assert_eq!(
            what,
            [
                (false, false, false, false),
                (true, false, false, false),
                (true, true, false, false),
                (true, true, true, false),
                (true, true, true, true),
            ],
            "each level does what the one before does, and more"
        );
    }

    fn kinds(text: &str) -> Vec<(PiiKind, &str)> {
        detect(text)
            .into_iter()
            .map(|f| (f.kind, &text[f.start..f.end]))
            .collect()
    }

    #[test]
    fn each_kind_is_found_with_its_check() {
        assert_eq!(
            kinds("mail dana.smith+orders@example.co.uk now"),
            [(PiiKind::Email, "dana.smith+orders@example.co.uk")]
        );
        assert_eq!(
            kinds("card 4111 1111 1111 1111 thanks"),
            [(PiiKind::Card, "4111 1111 1111 1111")]
        );
        assert!(
            kinds("card 4111 1111 1111 1112 thanks").is_empty(),
            "Luhn fails"
        );
        assert_eq!(
            kinds("IBAN GB82 WEST 1234 5698 7654 32 ok"),
            [(PiiKind::Iban, "GB82 WEST 1234 5698 7654 32")]
        );
        assert!(
            kinds("IBAN GB83 WEST 1234 5698 7654 32 ok")
                .iter()
                .all(|(k, _)| *k != PiiKind::Iban),
            "mod 97 fails"
        );
        assert_eq!(kinds("SSN 123-45-6789."), [(PiiKind::Ssn, "123-45-6789")]);
        assert!(
            kinds("SSN 666-45-6789.").is_empty(),
            "area 666 is never issued"
        );
        assert_eq!(
            kinds("from 192.168.1.20 at"),
            [(PiiKind::IpAddress, "192.168.1.20")]
        );
        assert_eq!(
            kinds("from 2001:db8::8a2e:370:7334 at"),
            [(PiiKind::IpAddress, "2001:db8::8a2e:370:7334")]
        );
        assert_eq!(
            kinds("call +44 20 7946 0958 today"),
            [(PiiKind::Phone, "+44 20 7946 0958")]
        );
        assert_eq!(
            kinds("call (415) 555-0132 today"),
            [(PiiKind::Phone, "(415) 555-0132")]
        );
        assert_eq!(
            kinds("key sk-proj-AbCdEfGhIjKlMnOpQrStUvWx12 here"),
            [(PiiKind::Secret, "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx12")]
        );
        assert_eq!(
            kinds("token ghp_aBcD1234eFgH5678iJkL9012mNoP3456qRsT"),
            [(PiiKind::Secret, "ghp_aBcD1234eFgH5678iJkL9012mNoP3456qRsT")]
        );
    }

    #[test]
    fn phone_numbers_are_read_by_numbering_plans_in_every_format() {
        // Each was missed, or cut short, by the one pattern that came before.
        assert_eq!(
            kinds("x 555-867-5309, y"),
            [(PiiKind::Phone, "555-867-5309")]
        );
        assert_eq!(
            redact(
                "+44 20 7946 0958, thanks",
                &detect("+44 20 7946 0958, thanks")
            ),
            "[PHONE], thanks"
        );
        for number in [
            "07700 900123",
            "030 12345678",
            "4155552671",
            "0044 20 7946 0958",
            "+44 (0)20 7946 0958",
            "089/1234567",
            "090-1234-5678",
            "212.555.0198",
            "(02) 9374 4000",
            "+55 11 91234-5678",
        ] {
            let text = format!("call {number}. Thanks");
            assert_eq!(kinds(&text), [(PiiKind::Phone, number)], "{text}");
        }
    }

    #[test]
    fn numbers_without_a_country_code_are_read_in_the_agents_region() {
        let spain = PhoneRegion::parse("ES").unwrap();
        let text = "Llámame al 912 345 678 mañana";
        assert!(detect(text).is_empty(), "nine digits are no US number");
        assert_eq!(
            detect_for(text, spain)
                .iter()
                .map(|f| &text[f.start..f.end])
                .collect::<Vec<_>>(),
            ["912 345 678"]
        );
        assert_eq!(PhoneRegion::parse("XX"), None);
        assert_eq!(PhoneRegion::parse("USA"), None);
        assert_eq!(
            PhoneRegion::parse("es"),
            None,
            "the codes are capitals, as ISO writes them"
        );
        let codes = PhoneRegion::codes();
        assert!(
            codes.len() > 200 && codes.contains(&"US") && codes.contains(&"DE"),
            "{codes:?}"
        );
    }

    #[test]
    fn an_iban_that_fails_its_checksum_is_not_read_as_a_card() {
        let text = "IBAN DE89 3704 0044 0532 0130 01 please";
        assert!(kinds(text).is_empty(), "{:?}", kinds(text));
        assert_eq!(
            kinds("IBAN DE89 3704 0044 0532 0130 00 please"),
            [(PiiKind::Iban, "DE89 3704 0044 0532 0130 00")]
        );
    }

    #[test]
    fn look_alikes_are_not_pii() {
        for text in [
            "Order ORD-88213 shipped on 2024-05-03 at 14:30",
            "Invoice 2024-0017, total 1,249.50 EUR",
            "Version 2.10.1 of the app, build 20240503",
            "Meeting on 03.05.2024, room 12",
            "Tracking 1Z999AA10123456784 is with UPS",
            "The commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed it",
            "We sold 12 345 units",
            "Call me at 5 pm",
            "Order 9876543210 is delayed",
            "Meeting ID 812 3456 7890, passcode 42",
            "ISBN 0-306-40615-2",
            "We sold 1 234 567 890 units",
            "Between 2019 2024 and 2025",
        ] {
            assert!(kinds(text).is_empty(), "{text}: {:?}", kinds(text));
        }
    }

    proptest::proptest! {
        #[test]
        fn redaction_keeps_the_rest_and_leaves_no_detected_text(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "hello", "order 88213", "on 2024-05-03", "ana@x.io", "+44 20 7946 0958",
                "4111 1111 1111 1111", "GB82 WEST 1234 5698 7654 32", "123-45-6789",
                "10.0.0.1", "sk-proj-Ab3dEfGh1jKlMn0pQrStUvWx9z", "thanks!", "é café", "\n",
            ]), 0..12),
        ) {
            let text = pieces.join(" ");
            let findings = detect(&text);
            let redacted = redact(&text, &findings);
            // The text between spans is kept as it was, in order.
            let mut expected = String::new();
            let mut at = 0;
            for f in &findings {
                proptest::prop_assert!(f.start >= at && f.end <= text.len() && f.start < f.end);
                expected.push_str(&text[at..f.start]);
                expected.push_str(f.kind.placeholder());
                at = f.end;
            }
            expected.push_str(&text[at..]);
            proptest::prop_assert_eq!(&redacted, &expected);
            for f in &findings {
                proptest::prop_assert!(!redacted.contains(&text[f.start..f.end]), "{} left in {}", &text[f.start..f.end], redacted);
            }
        }
    }

    #[test]
    fn a_json_document_leaves_redacted_and_of_the_same_shape() {
        let arguments = serde_json::json!({"customer": "ana@x.io", "ana@x.io": [1, "call +44 20 7946 0958"], "n": 4111});
        assert_eq!(
            egress_json(&arguments),
            serde_json::json!({"customer": "[EMAIL]", "[EMAIL]": [1, "call [PHONE]"], "n": 4111})
        );
    }

    #[test]
    fn redaction_replaces_each_span_with_its_placeholder() {
        let text = "Write to ana@x.io or call +33 6 12 34 56 78.";
        let findings = detect(text);
        assert_eq!(redact(text, &findings), "Write to [EMAIL] or call [PHONE].");
    }
}
