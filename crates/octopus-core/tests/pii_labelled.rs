//! PII detection on a labelled set written for it (`tests/data/pii-sentences.json`:
//! 210 sentences, 150 with PII of every kind and 60 look-alikes that must not
//! be flagged). Prints precision and recall per kind
//! (`cargo test -p octopus-core --test pii_labelled -- --nocapture`) and holds
//! them to a floor.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use octopus_core::pii::{PiiKind, detect, redact};
use serde::Deserialize;

#[derive(Deserialize)]
struct Labelled {
    sentences: Vec<Sentence>,
}

#[derive(Deserialize)]
struct Sentence {
    text: String,
    pii: Vec<Span>,
}

#[derive(Deserialize)]
struct Span {
    kind: PiiKind,
    text: String,
}

#[test]
fn precision_and_recall_on_the_labelled_sentences() {
    let labelled: Labelled = serde_json::from_str(include_str!("data/pii-sentences.json")).unwrap();
    assert!(labelled.sentences.len() >= 200);
    // Per kind: true positives, false positives, false negatives.
    let mut counts: BTreeMap<PiiKind, (usize, usize, usize)> = BTreeMap::new();
    let mut misses = Vec::new();
    for sentence in &labelled.sentences {
        let found: Vec<(PiiKind, &str)> = detect(&sentence.text)
            .into_iter()
            .map(|f| (f.kind, &sentence.text[f.start..f.end]))
            .collect();
        for expected in &sentence.pii {
            let entry = counts.entry(expected.kind).or_default();
            if found.contains(&(expected.kind, expected.text.as_str())) {
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
        let findings = detect(&sentence.text);
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
    for miss in &misses {
        println!("{miss}");
    }
    assert!(
        precision >= 0.95 && recall >= 0.95,
        "precision {precision:.3}, recall {recall:.3}"
    );
}
