//! Query expansion from the best keyword hits (pseudo-relevance feedback).
//!
//! A question seldom uses the words of its answer: "What does Melanie do to
//! destress?" is answered by a turn about running. The best hits for the
//! question's own words often share words with the answer that the question
//! lacks, so the words that recur among them are searched for again beside
//! the question's.

use std::collections::HashSet;

use crate::search::{is_stop_word, search_terms};

/// Best hits the feedback is read from.
pub const FEEDBACK_HITS: usize = 3;
/// Most words added to the query.
pub const MAX_FEEDBACK_TERMS: usize = 5;
/// Shortest word worth adding: shorter ones are mostly function words the
/// stop list lacks.
const MIN_TERM_CHARS: usize = 4;

/// Words found in at least two of `hits` (the best first, at most
/// [`FEEDBACK_HITS`] read) that `query` does not hold, most widely shared
/// first, then in order of appearance; at most [`MAX_FEEDBACK_TERMS`]. A
/// transcript's speaker label ("Caroline: …") is not a word of the turn.
pub fn feedback_terms<'a>(query: &str, hits: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let asked: HashSet<String> = search_terms(query)
        .into_iter()
        .map(str::to_lowercase)
        .collect();
    let mut seen: Vec<(String, usize)> = Vec::new();
    for text in hits.into_iter().take(FEEDBACK_HITS) {
        let words = match crate::speakers::transcript_label(text) {
            Some(label) => &text[text.find(label).unwrap_or(0) + label.len()..],
            None => text,
        };
        let mut in_this: HashSet<String> = HashSet::new();
        for word in search_terms(words) {
            let word = word.to_lowercase();
            if word.chars().count() < MIN_TERM_CHARS
                || is_stop_word(&word)
                || asked.contains(&word)
                || word.chars().all(|c| c.is_ascii_digit())
                || !in_this.insert(word.clone())
            {
                continue;
            }
            match seen.iter_mut().find(|(w, _)| *w == word) {
                Some((_, count)) => *count += 1,
                None => seen.push((word, 1)),
            }
        }
    }
    let mut shared: Vec<(String, usize)> = seen.into_iter().filter(|(_, n)| *n >= 2).collect();
    // Stable: equal counts keep their order of appearance.
    shared.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    shared
        .into_iter()
        .take(MAX_FEEDBACK_TERMS)
        .map(|(word, _)| word)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_shared_by_the_best_hits_and_not_asked_are_added() {
        let hits = [
            "Melanie: Running clears my head, the trails by the river help me relax.",
            "Melanie: After work I go running by the river to relax.",
            "Melanie: Pottery class relaxes me too, and the river walk.",
            "Melanie: The river, running and relax are in a fourth hit, not read.",
        ];
        assert_eq!(
            feedback_terms("What does Melanie do to relax?", hits),
            vec!["river", "running"]
        );
    }

    #[test]
    fn nothing_is_added_when_no_word_recurs() {
        let hits = [
            "Caroline: I adopted a dog.",
            "Caroline: The museum was closed.",
        ];
        assert!(feedback_terms("What did Caroline do?", hits).is_empty());
    }
}
