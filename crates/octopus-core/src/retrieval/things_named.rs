//! The people, places and things a question names, found without a model.
//!
//! "What did Melanie read after Caroline recommended Becoming Nicole?" names
//! three things, and the turns that answer it mention them in different
//! sessions. Searching for each name on its own lets the turns that mention
//! it join the ranking even when the question's other words outweigh it in a
//! search for the whole question. A name is a run of capitalised words that
//! is not a question or function word ("What", "I"), or a quoted title.

use crate::search::is_stop_word;

/// Most names a question is searched for by.
pub const MAX_NAMES: usize = 3;

/// The names in `question`, in order of appearance, without repeats (in any
/// case), at most [`MAX_NAMES`]. A possessive's "'s" is not part of the name.
pub fn things_named(question: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut push = |name: &str| {
        let name = name.trim();
        if !name.is_empty()
            && names.len() < MAX_NAMES
            && !names.iter().any(|n| n.eq_ignore_ascii_case(name))
        {
            names.push(name.to_owned());
        }
    };
    for quoted in quoted_spans(question) {
        push(quoted);
    }
    let mut run: Vec<&str> = Vec::new();
    for word in question.split_whitespace() {
        let bare = word.trim_matches(|c: char| !c.is_alphanumeric());
        let bare = bare
            .strip_suffix("'s")
            .or_else(|| bare.strip_suffix("’s"))
            .unwrap_or(bare);
        let capitalised = bare.chars().next().is_some_and(char::is_uppercase);
        if capitalised && !is_stop_word(bare) && !is_question_word(bare) {
            run.push(bare);
        } else if !run.is_empty() {
            push(&run.join(" "));
            run.clear();
        }
        // A name ends at punctuation after it ("Paris, then Lyon").
        if !run.is_empty() && word.ends_with([',', '.', '?', '!', ';', ':']) {
            push(&run.join(" "));
            run.clear();
        }
    }
    if !run.is_empty() {
        push(&run.join(" "));
    }
    names
}

/// Words that begin questions and requests but name nothing, beyond the
/// stop words.
fn is_question_word(word: &str) -> bool {
    const WORDS: &[&str] = &[
        "tell", "please", "remind", "recall", "list", "name", "describe", "should", "might", "may",
        "has", "have", "hey", "hi", "ok", "okay", "yes",
    ];
    WORDS.iter().any(|w| w.eq_ignore_ascii_case(word))
}

/// The spans between a pair of double quotes (straight or curly).
fn quoted_spans(text: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let mut open: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if matches!(c, '"' | '“' | '”') {
            match open.take() {
                Some(start) => spans.push(&text[start..i]),
                None => open = Some(i + c.len_utf8()),
            }
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_runs_of_capitalised_words_that_are_not_question_words() {
        assert_eq!(
            things_named("What did Melanie read after Caroline recommended Becoming Nicole?"),
            vec!["Melanie", "Caroline", "Becoming Nicole"]
        );
        assert_eq!(
            things_named("When did I move to New York City?"),
            vec!["New York City"]
        );
        assert!(things_named("what does she like to eat?").is_empty());
    }

    #[test]
    fn possessives_punctuation_and_quotes_end_or_mark_a_name() {
        assert_eq!(
            things_named("Did Melanie's kids visit Paris, Lyon and \"the old mill\"?"),
            vec!["the old mill", "Melanie", "Paris"]
        );
        // Repeats in another case count once.
        assert_eq!(things_named("Sweden or SWEDEN?"), vec!["Sweden"]);
    }
}
