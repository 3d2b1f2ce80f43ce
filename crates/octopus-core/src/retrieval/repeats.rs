//! The same words said more than once. The conversation log keeps every
//! message as it was said, but a user who pasted one sentence three times
//! wants it recalled once: the repeats of a ranking collapse into the
//! newest of them, at the best-ranked one's place and score, with how many
//! times it was said.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;

use crate::Timestamp;

/// The form two texts are compared in: lower case, each run of white space
/// one space, without white space or `.`, `!` and `?` at the ends. "Call me
/// Dana." and "call me  dana" are the same words; "Call me Dana?" is too,
/// which a repeat pasted with another ending is more often than not.
pub fn said_as(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .join(" ")
        .to_lowercase()
        .trim_end_matches(['.', '!', '?'])
        .trim_end()
        .to_owned()
}

/// Collapses the items of `ranked` that `said` gives the same words (its
/// key, with the time each was said; `None` for an item that is never a
/// repeat, a fact or a summary). Each group keeps one item, at the place and
/// score of its best-ranked member: the newest of the group. Returns how
/// many times each kept item's words were said, for those said more than
/// once.
pub fn collapse_repeats<M: Copy + Eq + Hash>(
    ranked: &mut Vec<(M, f64)>,
    said: impl Fn(&M) -> Option<(String, Timestamp)>,
) -> HashMap<M, u32> {
    // For each words: the place of the best-ranked, the newest and its time,
    // and how many.
    let mut groups: HashMap<String, (usize, M, Timestamp, u32)> = HashMap::new();
    let mut repeats = HashSet::new();
    for (place, (item, _)) in ranked.iter().enumerate() {
        let Some((words, at)) = said(item) else {
            continue;
        };
        match groups.get_mut(&words) {
            None => {
                groups.insert(words, (place, *item, at, 1));
            }
            Some((_, newest, newest_at, count)) => {
                *count += 1;
                repeats.insert(place);
                if at > *newest_at {
                    *newest = *item;
                    *newest_at = at;
                }
            }
        }
    }
    let mut times = HashMap::new();
    for (place, newest, _, count) in groups.into_values() {
        if count > 1 {
            ranked[place].0 = newest;
            times.insert(newest, count);
        }
    }
    let mut place = 0;
    ranked.retain(|_| {
        place += 1;
        !repeats.contains(&(place - 1))
    });
    times
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    fn day(d: u32) -> Timestamp {
        Utc.with_ymd_and_hms(2026, 3, d, 9, 0, 0).unwrap()
    }

    #[test]
    fn the_same_words_whatever_the_case_spacing_and_ending() {
        assert_eq!(said_as("  Call me   Dana. "), "call me dana");
        assert_eq!(said_as("call me dana?!"), "call me dana");
        assert_ne!(said_as("call me Dan"), said_as("call me Dana"));
    }

    #[test]
    fn repeats_become_the_newest_at_the_best_place_with_their_count() {
        // Item: (text, day said).
        let said = [
            ("My flight is on Friday.", 1),
            ("I like tea", 2),
            ("my flight is on friday", 9),
            ("My flight is on Friday!", 5),
        ];
        let mut ranked: Vec<(usize, f64)> = vec![(1, 0.9), (0, 0.8), (3, 0.7), (2, 0.6)];
        let times = collapse_repeats(&mut ranked, |item| {
            let (text, d) = said[*item];
            Some((said_as(text), day(d)))
        });
        // The flight's best place was second, at 0.8; the newest is item 2.
        assert_eq!(ranked, vec![(1, 0.9), (2, 0.8)]);
        assert_eq!(times, HashMap::from([(2, 3)]));
    }

    #[test]
    fn items_without_words_and_words_said_once_keep_their_places() {
        let mut ranked: Vec<(u32, f64)> = vec![(0, 0.9), (1, 0.8), (2, 0.7)];
        let times = collapse_repeats(&mut ranked, |item| match item {
            1 => None,
            other => Some((format!("words {other}"), day(1))),
        });
        assert_eq!(ranked, vec![(0, 0.9), (1, 0.8), (2, 0.7)]);
        assert!(times.is_empty());
    }
}
