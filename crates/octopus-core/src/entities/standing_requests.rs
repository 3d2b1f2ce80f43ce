//! Standing requests: what a user asks once for every later turn —
//! instructions ("Always format code with syntax highlighting", "Never call
//! me before 10") and preferences ("I prefer minimal dependencies"). A later
//! question seldom shares a word with them, so no search finds them: they
//! are kept as the user's facts under a category of their own
//! ([`INSTRUCTION`], [`PREFERENCE`]), listed and corrected as every fact is,
//! and every turn's context shows them ahead of the rest.
//!
//! They are recognised in what the user writes without a model, by the
//! shape of the sentence: one that opens with "always", "never" or "from
//! now on" is an instruction; a clause in which the user says they prefer
//! something (or would rather) is a preference. A question ("Should I
//! prefer…?") is neither.

use std::sync::LazyLock;

use regex::Regex;

/// The category of a standing instruction.
pub const INSTRUCTION: &str = "instruction";
/// The category of a stated preference.
pub const PREFERENCE: &str = "preference";
/// The categories of standing requests, which every agent files facts
/// under, whatever its `memory.fact_categories`.
pub const CATEGORIES: [&str; 2] = [INSTRUCTION, PREFERENCE];

/// Whether `category` is one of the standing requests' [`CATEGORIES`].
pub fn is_standing(category: &str) -> bool {
    CATEGORIES.contains(&category)
}

/// One request recognised in a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StandingRequest {
    /// [`INSTRUCTION`] or [`PREFERENCE`].
    pub category: &'static str,
    /// The words that make it, as the user wrote them.
    pub text: String,
}

/// Longest sentence taken as an instruction: a longer one is a story that
/// happens to start with "always", not a rule.
const MAX_INSTRUCTION_CHARS: usize = 300;
/// Most words of a preference kept: its clause, clipped.
const MAX_PREFERENCE_WORDS: usize = 25;

/// An instruction opens its sentence ("please" and "and" aside).
static INSTRUCTION_OPENING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^(?:(?:please|and|also|oh|ok|okay|so)[,]?\s+)*(?:always|never|from now on|(?:do not|don't) ever|make sure to always|remember to always)\b",
    )
    .expect("a valid pattern")
});

/// The user saying what they prefer, and the word before it (a question's
/// "should I prefer" or "do you prefer" is not a preference).
static PREFERENCE_CLAUSE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:\b(\w+)\s+)?\b((?:i|we)(?:'d|’d|\s+would)?\s+(?:(?:really|generally|usually|strongly|still|also|definitely)\s+)?(?:prefer|rather)|my preference is)\b",
    )
    .expect("a valid pattern")
});

/// Where a preference's clause ends: a new clause ("…, so", "…, how can
/// I") or the sentence's end.
static CLAUSE_END: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i),\s*(?:so|but|and i|and we|how|can|could|what|which|because|as|since|while|though|although|is|are|do|does|would|should|i'm|i am|any)\b|[.!?;:\n]",
    )
    .expect("a valid pattern")
});

/// Words that, just before "I prefer", make it a question or a condition.
const NOT_STATED: &[&str] = &[
    "should", "would", "could", "can", "do", "does", "did", "shall", "will", "if", "whether",
    "unless", "might", "may",
];

/// The standing requests in a user's message: each sentence that is an
/// instruction whole, each preference as its clause. Code blocks are left
/// out.
pub fn recognise(text: &str) -> Vec<StandingRequest> {
    let mut found = Vec::new();
    for sentence in sentences(&without_code(text)) {
        if INSTRUCTION_OPENING.is_match(sentence) {
            if sentence.chars().count() <= MAX_INSTRUCTION_CHARS {
                found.push(StandingRequest {
                    category: INSTRUCTION,
                    text: sentence.to_owned(),
                });
            }
            continue;
        }
        if let Some(preference) = preference_in(sentence) {
            found.push(StandingRequest {
                category: PREFERENCE,
                text: preference,
            });
        }
    }
    found.dedup();
    found
}

/// The preference a sentence states, as its clause from the subject on;
/// none in a question ("…, we would prefer the blue one?").
fn preference_in(sentence: &str) -> Option<String> {
    let found = PREFERENCE_CLAUSE.captures_iter(sentence).find(|c| {
        c.get(1)
            .is_none_or(|before| !NOT_STATED.contains(&before.as_str().to_lowercase().as_str()))
    })?;
    let saying = found.get(2)?;
    let rest = &sentence[saying.start()..];
    let end = CLAUSE_END.find_at(rest, saying.len());
    if end.map_or(sentence.ends_with('?'), |end| end.as_str() == "?") {
        return None;
    }
    let clause: Vec<&str> = rest[..end.map_or(rest.len(), |end| end.start())]
        .split_whitespace()
        .collect();
    // "I prefer" alone, with its object in the next clause, says nothing.
    if clause.len() < 4 {
        return None;
    }
    Some(
        clause[..clause.len().min(MAX_PREFERENCE_WORDS)]
            .join(" ")
            .trim_end_matches(',')
            .to_owned(),
    )
}

/// `text` without its fenced code blocks.
fn without_code(text: &str) -> String {
    text.split("```").step_by(2).collect::<Vec<_>>().join("\n")
}

/// The sentences of `text`: split after `.`, `!` or `?` before a space,
/// and at line breaks; trimmed, none empty.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, c) in line.char_indices() {
            let ends = matches!(c, '.' | '!' | '?')
                && bytes
                    .get(i + 1)
                    .is_none_or(|next| next.is_ascii_whitespace());
            if ends {
                out.push(line[start..=i].trim());
                start = i + 1;
            }
        }
        out.push(line[start..].trim());
    }
    out.retain(|s| !s.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<(&'static str, String)> {
        recognise(text)
            .into_iter()
            .map(|r| (r.category, r.text))
            .collect()
    }

    #[test]
    fn a_sentence_that_opens_with_always_or_never_is_an_instruction() {
        assert_eq!(
            texts(
                "Always format all code snippets with syntax highlighting when I ask about implementation details."
            ),
            [(
                INSTRUCTION,
                "Always format all code snippets with syntax highlighting when I ask about implementation details.".to_owned()
            )]
        );
        assert_eq!(
            texts("Thanks! Please never call me before 10. What's next?"),
            [(INSTRUCTION, "Please never call me before 10.".to_owned())]
        );
        assert!(texts("I always forget where I put my keys.").is_empty());
        assert!(texts("Is it always this slow?").is_empty());
    }

    #[test]
    fn a_preference_is_its_clause() {
        assert_eq!(
            texts(
                "I'm trying to keep my app lightweight and easy to maintain, so I prefer simple, minimal dependencies, how can I ensure that my Flask app stays minimal?"
            ),
            [(
                PREFERENCE,
                "I prefer simple, minimal dependencies".to_owned()
            )]
        );
        assert_eq!(
            texts("I'd rather use Microsoft Word over Google Docs for the formatting control."),
            [(
                PREFERENCE,
                "I'd rather use Microsoft Word over Google Docs for the formatting control"
                    .to_owned()
            )]
        );
    }

    #[test]
    fn a_question_or_a_condition_is_not_a_preference() {
        assert!(texts("Should I prefer Postgres over MySQL for this?").is_empty());
        assert!(texts("Do you think we would prefer the blue one?").is_empty());
        assert!(texts("Which do you prefer?").is_empty());
        assert!(texts("I prefer it.").is_empty(), "too short to say what");
    }

    #[test]
    fn code_is_not_read_for_requests() {
        let text = "Here's my code:\n```python\n# always close the file\nnever_used = 1\n```\nCan you check it?";
        assert!(texts(text).is_empty());
    }
}
