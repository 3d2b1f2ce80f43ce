//! Extractive episode summaries: the episode's most representative sentences,
//! in their original order, within a token budget. LLM summaries will sit
//! behind the same use, later.
//!
//! A sentence's weight is the mean, over its content words, of how often the
//! episode uses that word: sentences about what the conversation kept coming
//! back to score highest. Only user and assistant turns are read: system
//! injections and tool results are not what the conversation was about.

use std::collections::HashMap;

use crate::message::Role;
use crate::search::is_stop_word;
use crate::tokens::TokenCounter;

/// Episodes with at most this many messages get no generated summary: a
/// question and its answer say no more summarised than as they are.
pub const MIN_SUMMARISED_MESSAGES: u32 = 2;

/// Token budget of a generated summary: short enough that several fit in a
/// turn's context beside the turns they summarise.
pub const SUMMARY_TOKENS: u32 = 200;

/// One turn of the episode, as the summariser reads it.
pub struct Turn<'a> {
    pub role: Role,
    pub text: &'a str,
}

/// Chat filler that says nothing about the episode, besides the stop words.
const FILLER: &[&str] = &[
    "yes", "ok", "okay", "really", "thanks", "thank", "hi", "hello", "hey",
];

fn content_words(sentence: &str) -> Vec<String> {
    sentence
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 1)
        .map(str::to_lowercase)
        .filter(|w| !is_stop_word(w) && !FILLER.contains(&w.as_str()))
        .collect()
}

/// Sentences of a turn: split after `.`, `!` or `?` followed by whitespace.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if matches!(c, '.' | '!' | '?')
            && chars.peek().is_some_and(|(_, next)| next.is_whitespace())
        {
            out.push(text[start..=at].trim());
            start = at + 1;
        }
    }
    out.push(text[start..].trim());
    out.retain(|s| !s.is_empty());
    out
}

/// The summary: chosen sentences, each as `role: sentence`, one per line, in
/// episode order, at most `max_tokens` by `counter`. Empty when nothing fits.
pub fn extractive_summary(
    turns: &[Turn<'_>],
    max_tokens: u32,
    counter: &dyn TokenCounter,
) -> String {
    let candidates: Vec<(usize, Role, &str)> = turns
        .iter()
        .filter(|t| matches!(t.role, Role::User | Role::Assistant))
        .flat_map(|t| sentences(t.text).into_iter().map(move |s| (t.role, s)))
        .enumerate()
        .map(|(order, (role, sentence))| (order, role, sentence))
        .collect();
    let mut frequency: HashMap<String, u32> = HashMap::new();
    for (_, _, sentence) in &candidates {
        for word in content_words(sentence) {
            *frequency.entry(word).or_default() += 1;
        }
    }
    let mut scored: Vec<(f64, usize)> = candidates
        .iter()
        .map(|(order, _, sentence)| {
            let words = content_words(sentence);
            let total: u32 = words.iter().map(|w| frequency[w]).sum();
            (
                f64::from(total) / (words.len().max(1) as f64).sqrt(),
                *order,
            )
        })
        .collect();
    // Best first; ties to the earlier sentence, so the result is deterministic.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let line = |order: usize| {
        let (_, role, sentence) = candidates[order];
        format!("{}: {sentence}", role.as_str())
    };
    let mut chosen: Vec<usize> = Vec::new();
    let mut used = 0;
    for (_, order) in scored {
        let cost = counter.count(&line(order)) + 1;
        if used + cost <= max_tokens {
            used += cost;
            chosen.push(order);
        }
    }
    chosen.sort_unstable();
    chosen.into_iter().map(line).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::ApproximateTokenCounter;
    use proptest::prelude::*;

    fn turn(role: Role, text: &str) -> Turn<'_> {
        Turn { role, text }
    }

    #[test]
    fn keeps_what_the_conversation_returns_to_in_order() {
        let turns = [
            turn(
                Role::System,
                "You are a helpful travel agent. Flights flights flights.",
            ),
            turn(Role::User, "Hi there! I need a flight to Lisbon in May."),
            turn(
                Role::Assistant,
                "Sure. Do you prefer a morning flight to Lisbon?",
            ),
            turn(Role::Tool, "{\"flights\": [\"TP123\", \"TP456\"]}"),
            turn(
                Role::User,
                "A morning flight to Lisbon, yes. Also, nice weather today.",
            ),
        ];
        let summary = extractive_summary(&turns, 40, &ApproximateTokenCounter);
        let lines: Vec<&str> = summary.lines().collect();
        assert!(
            !lines.is_empty() && lines.iter().all(|l| l.contains("Lisbon")),
            "{summary}"
        );
        assert!(lines[0].starts_with("user: "), "episode order: {summary}");
        assert!(
            !summary.contains("travel agent") && !summary.contains("TP123"),
            "system and tool turns are not summarised"
        );
    }

    proptest! {
        #[test]
        fn stays_within_budget_and_only_quotes_the_episode(
            texts in proptest::collection::vec("[a-z ]{0,60}[.!?]? [a-z ]{0,40}", 0..12),
            budget in 0u32..120,
        ) {
            let turns: Vec<Turn<'_>> = texts.iter().enumerate()
                .map(|(i, t)| turn(if i % 2 == 0 { Role::User } else { Role::Assistant }, t))
                .collect();
            let summary = extractive_summary(&turns, budget, &ApproximateTokenCounter);
            let cost: u32 = summary.lines().map(|l| ApproximateTokenCounter.count(l) + 1).sum();
            prop_assert!(cost <= budget);
            for line in summary.lines() {
                let sentence = line.split_once(": ").unwrap().1;
                prop_assert!(texts.iter().any(|t| t.contains(sentence)));
            }
        }
    }
}
