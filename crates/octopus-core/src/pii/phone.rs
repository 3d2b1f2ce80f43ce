//! Phone numbers: a candidate span is read by libphonenumber's rules (the
//! `phonenumber` crate, with Google's numbering-plan metadata) and kept when
//! it is a number some plan allows, written the way people write numbers.
//!
//! A number with its country code (`+44 20 7946 0958`, `0044 …`) is read as
//! it is. One without is read in the agent's region (`memory.pii_region`,
//! default US) and, when it starts with a trunk `0` as national numbers do in
//! most of the world, in the regions of [`TRUNK_ZERO_REGIONS`] too: an agent
//! in the US still meets `020 7946 0958`. A number valid in its plan is kept
//! however it is written; one that only has a possible length (fictional
//! ranges such as 555 or Ofcom's 07700 900xxx, which real people quote as
//! examples) is kept only when written in groups, so that a bare run of
//! digits such as an order id is not.

use phonenumber::country::Id;
use phonenumber::{PhoneNumber, metadata::DATABASE};

/// The region whose numbering plan reads phone numbers written without a
/// country code (an ISO 3166 code such as `US`, `GB`, `DE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhoneRegion(Id);

impl PhoneRegion {
    pub const US: PhoneRegion = PhoneRegion(Id::US);

    /// The region of a two-letter code in capitals (`US`, `GB`); `None` for
    /// anything else, or a code that names no numbering plan.
    pub fn parse(code: &str) -> Option<PhoneRegion> {
        if code.len() != 2 || !code.bytes().all(|b| b.is_ascii_uppercase()) {
            return None;
        }
        let id: Id = code.parse().ok()?;
        DATABASE.by_id(id.as_ref())?;
        Some(PhoneRegion(id))
    }

    /// Every code [`PhoneRegion::parse`] takes, sorted (read from the
    /// numbering plans once).
    pub fn codes() -> &'static [&'static str] {
        static CODES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
        CODES.get_or_init(|| {
            let mut codes: Vec<&'static str> = DATABASE
                .iter()
                .map(|plan| plan.id())
                .filter(|id| PhoneRegion::parse(id).is_some())
                .collect();
            codes.sort_unstable();
            codes.dedup();
            codes
        })
    }
}

impl Default for PhoneRegion {
    fn default() -> Self {
        PhoneRegion::US
    }
}

/// Regions that write national numbers with a trunk `0`, tried for a number
/// that starts with one and is not a number of the agent's own region: the
/// most populous such plans, so that a national number from abroad is still
/// found. Italy is here though its `0` is part of the number: its national
/// numbers are written the same way.
pub const TRUNK_ZERO_REGIONS: [Id; 28] = [
    Id::GB,
    Id::DE,
    Id::FR,
    Id::IT,
    Id::NL,
    Id::BE,
    Id::CH,
    Id::AT,
    Id::IE,
    Id::SE,
    Id::FI,
    Id::TR,
    Id::AU,
    Id::NZ,
    Id::JP,
    Id::KR,
    Id::CN,
    Id::IN,
    Id::PK,
    Id::ID,
    Id::TH,
    Id::PH,
    Id::ZA,
    Id::NG,
    Id::EG,
    Id::BR,
    Id::AR,
    Id::IL,
];

/// Words that, just before a number, say it is something else: `order
/// 0151 2345678`, `meeting ID 812 3456 7890`.
const OTHER_LABELS: [&str; 32] = [
    "order",
    "invoice",
    "ref",
    "reference",
    "tracking",
    "account",
    "acct",
    "id",
    "serial",
    "sku",
    "case",
    "ticket",
    "batch",
    "po",
    "part",
    "item",
    "isbn",
    "booking",
    "confirmation",
    "transaction",
    "receipt",
    "customer",
    "member",
    "policy",
    "claim",
    "meeting",
    "pin",
    "code",
    "version",
    "build",
    "model",
    "room",
];

/// Whether `text[start..end]` is a phone number in `region`'s reading.
pub(super) fn is_phone(text: &str, start: usize, end: usize, region: PhoneRegion) -> bool {
    let candidate = &text[start..end];
    let groups = digit_groups(candidate);
    let count: usize = groups.iter().map(|g| g.len()).sum();
    if !(8..=15).contains(&count) || !standalone(text, start, end) {
        return false;
    }
    if written_as_something_else(candidate, &groups) || labelled_as_something_else(text, start) {
        return false;
    }
    let grouped = groups.len() >= 2;
    let Some(normalised) = normalise(candidate) else {
        return false;
    };
    if normalised.starts_with('+') {
        return phonenumber::parse(None, &normalised)
            .is_ok_and(|n| phonenumber::is_valid(&n) || grouped && possible(&n));
    }
    if let Ok(number) = phonenumber::parse(Some(region.0), &normalised) {
        if phonenumber::is_valid(&number) {
            return true;
        }
        // 1 234 567 890 is a count written with thousands separators.
        let thousands = groups[0].len() <= 3 && groups[1..].iter().all(|g| g.len() == 3);
        if grouped && possible(&number) && !thousands {
            return true;
        }
    }
    candidate.starts_with('0')
        && TRUNK_ZERO_REGIONS.iter().any(|&id| {
            phonenumber::parse(Some(id), &normalised)
                .is_ok_and(|n| phonenumber::is_valid(&n) || grouped && possible(&n))
        })
}

/// Nothing joins the span to a longer token: no letter or digit either
/// side, no currency sign or `#` before, no unit after; a comma or full stop
/// after ends it unless a digit follows (`1,249.50`).
fn standalone(text: &str, start: usize, end: usize) -> bool {
    let mut before = text[..start].chars().rev();
    let mut after = text[end..].chars();
    let (b, a) = (before.next(), after.next());
    let closed_by = |open: char, close: char| b == Some(open) && a == Some(close);
    let before_ok = match b {
        None => true,
        Some('(') => closed_by('(', ')') || text[start..end].starts_with('+'),
        Some(c) => {
            !c.is_alphanumeric()
                && !matches!(c, '.' | '/' | ',' | '$' | '€' | '£' | '#' | '-' | '+')
        }
    };
    let after_ok = match a {
        None => true,
        Some(',' | '.') => !after.next().is_some_and(|n| n.is_ascii_digit()),
        Some(c) => !c.is_alphanumeric() && !matches!(c, '/' | '%' | '-' | '€' | '$' | '£'),
    };
    before_ok && after_ok
}

/// Whether a run of digits is written as a date, a book's number, or a
/// reference in blocks of four.
pub(super) fn written_as_another_number(candidate: &str) -> bool {
    written_as_something_else(candidate, &digit_groups(candidate))
}

fn digit_groups(candidate: &str) -> Vec<&str> {
    candidate
        .split(|c: char| !c.is_ascii_digit())
        .filter(|g| !g.is_empty())
        .collect()
}

/// Numbers that are written as dates, books, counts or references.
fn written_as_something_else(candidate: &str, groups: &[&str]) -> bool {
    let count: usize = groups.iter().map(|g| g.len()).sum();
    let plain = !candidate.starts_with('+') && !candidate.starts_with('(');
    // 2024-05-03, 03.05.2024, 12/05/2023.
    let year = |g: &str| g.len() == 4 && (g.starts_with("19") || g.starts_with("20"));
    let date = groups.len() == 3
        && ((year(groups[0]) && groups[1].len() <= 2 && groups[2].len() <= 2)
            || (groups[0].len() <= 2
                && groups[1].len() <= 2
                && (year(groups[2]) || groups[2].len() == 2)));
    // ISBN-13 (978-3-16-148410-0) and ISBN-10 (0-306-40615-2) end in a
    // one-digit check group; no numbering plan ends a number so.
    let hyphenated = candidate.chars().all(|c| c.is_ascii_digit() || c == '-');
    let isbn = (count == 13 && (candidate.starts_with("978") || candidate.starts_with("979")))
        || (hyphenated
            && matches!(count, 10 | 13)
            && groups.len() >= 4
            && groups.last().is_some_and(|g| g.len() == 1));
    // 1234 5678 9012: groups of four, as cards and references are written.
    let blocks_of_four = plain && groups.len() >= 3 && groups.iter().all(|g| g.len() == 4);
    // A slash is a separator only after a trunk-0 area code (089/1234567).
    let slashes = candidate.matches('/').count();
    let slash = slashes > 1
        || (slashes == 1
            && !(groups[0].starts_with('0')
                && candidate.starts_with(groups[0])
                && candidate[groups[0].len()..].starts_with('/')));
    date || isbn || blocks_of_four || slash
}

/// Whether the word before `start` (past `number`, `no.`, `is` and the
/// like) names the number as something other than a phone: `order no. 0151
/// 2345678`, `meeting ID 812 3456 7890`. A number with its country code is
/// a phone whatever it is called.
fn labelled_as_something_else(text: &str, start: usize) -> bool {
    const FILLERS: [&str; 9] = ["number", "no", "nr", "num", "is", "was", "the", "a", "of"];
    if text[start..].starts_with('+') {
        return false;
    }
    text[..start]
        .rsplit(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .find(|word| !FILLERS.contains(&word.as_str()))
        .is_some_and(|word| OTHER_LABELS.contains(&word.as_str()))
}

/// The candidate as libphonenumber reads it: `00` as `+`, the `(0)` of
/// `+44 (0)20` dropped, slashes as spaces. `None` for `(0)` without a
/// country code.
fn normalise(candidate: &str) -> Option<String> {
    let mut text = candidate.replace('/', " ");
    if let Some(rest) = text.strip_prefix("00") {
        text = format!("+{rest}");
    }
    if text.contains("(0)") {
        if !text.starts_with('+') {
            return None;
        }
        text = text.replacen("(0)", "", 1);
    }
    Some(text)
}

/// The number has a length its country's plan allows for a fixed line or
/// a mobile, though no range of the plan holds it.
fn possible(number: &PhoneNumber) -> bool {
    let length = number.national().to_string().len() as u16;
    let Some(plans) = DATABASE.by_code(&number.code().value()) else {
        return false;
    };
    plans.iter().any(|plan| {
        let descriptors = plan.descriptors();
        [descriptors.fixed_line(), descriptors.mobile()]
            .into_iter()
            .flatten()
            .any(|d| d.possible_length().contains(&length))
    })
}
