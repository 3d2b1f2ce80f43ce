//! PII detection on a labelled set written for it (`tests/data/pii-sentences.json`:
//! 310 sentences, 220 with PII of every kind, phone numbers from 19
//! countries, and 90 look-alikes that must not be flagged). Prints precision
//! and recall per kind and phone recall per country
//! (`cargo test -p octopus-core --test pii_labelled -- --nocapture`) and holds
//! them to a floor. Being written by us, the set is not the measure of record.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use octopus_core::pii::{PhoneRegion, PiiKind, detect_for, redact};
use serde::Deserialize;

#[derive(Deserialize)]
struct Labelled {
    sentences: Vec<Sentence>,
}

#[derive(Deserialize)]
struct Sentence {
    text: String,
    pii: Vec<Span>,
    /// The country of a phone number.
    country: Option<String>,
    /// The agent's `memory.pii_region`, when not the default (US).
    region: Option<String>,
}

#[derive(Deserialize)]
struct Span {
    kind: PiiKind,
    text: String,
}

#[test]
fn precision_and_recall_on_the_labelled_sentences() {
    let labelled: Labelled = serde_json::from_str(include_str!("data/pii-sentences.json")).unwrap();
    assert!(labelled.sentences.len() >= 300);
    // Per kind: true positives, false positives, false negatives.
    let mut counts: BTreeMap<PiiKind, (usize, usize, usize)> = BTreeMap::new();
    // Per country: phone numbers found, phone numbers expected.
    let mut countries: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    for sentence in &labelled.sentences {
        let region = match &sentence.region {
            Some(code) => PhoneRegion::parse(code).unwrap(),
            None => PhoneRegion::default(),
        };
        let findings = detect_for(&sentence.text, region);
        let found: Vec<(PiiKind, &str)> = findings
            .iter()
            .map(|f| (f.kind, &sentence.text[f.start..f.end]))
            .collect();
        for expected in &sentence.pii {
            let entry = counts.entry(expected.kind).or_default();
            let hit = found.contains(&(expected.kind, expected.text.as_str()));
            if let Some(country) = &sentence.country {
                let per_country = countries.entry(country).or_default();
                per_country.0 += usize::from(hit);
                per_country.1 += 1;
            }
            if hit {
                entry.0 += 1;
            } else {
                entry.2 += 1;
                misses.push(format!(
                    "missed {:?} {:?} in {:?}",
                    expected.kind, expected.text, sentence.text
                ));
            }
        }
        for (kind, text) in &found {
            if !sentence
                .pii
                .iter()
                .any(|e| e.kind == *kind && e.text == *text)
            {
                counts.entry(*kind).or_default().1 += 1;
                misses.push(format!("flagged {kind:?} {text:?} in {:?}", sentence.text));
            }
        }
        // Redaction leaves no detected text behind.
        let redacted = redact(&sentence.text, &findings);
        for finding in &findings {
            assert!(!redacted.contains(&sentence.text[finding.start..finding.end]));
        }
    }
    let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    println!("| kind | precision | recall | found / expected |\n|---|---|---|---|");
    let (mut tp, mut fp, mut fn_) = (0, 0, 0);
    for (kind, (t, f, n)) in &counts {
        println!(
            "| {kind:?} | {:.3} | {:.3} | {t} / {} |",
            ratio(*t, t + f),
            ratio(*t, t + n),
            t + n
        );
        (tp, fp, fn_) = (tp + t, fp + f, fn_ + n);
    }
    let (precision, recall) = (ratio(tp, tp + fp), ratio(tp, tp + fn_));
    println!(
        "| all | {precision:.3} | {recall:.3} | {tp} / {} |",
        tp + fn_
    );
    let phones: Vec<String> = countries
        .iter()
        .map(|(country, (found, expected))| format!("{country} {found}/{expected}"))
        .collect();
    println!("phone numbers found per country: {}", phones.join(", "));
    for miss in &misses {
        println!("{miss}");
    }
    assert!(
        precision >= 0.95 && recall >= 0.95,
        "precision {precision:.3}, recall {recall:.3}"
    );
}
