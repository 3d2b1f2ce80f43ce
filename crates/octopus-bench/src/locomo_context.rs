//! What the model finally sees: for each LoCoMo question, the context a turn
//! would be given in a fresh conversation of the conversation's user with its
//! agent (default memory settings), and how much of the question's evidence
//! reached it, against how many tokens it took.

use std::collections::HashMap;

use crate::locomo::Conversation;

/// One question's context: the share of its evidence turns whose words are
/// in it, and its size.
#[derive(Clone, Copy, Debug)]
pub struct ContextScore {
    /// The conversation's position in the run, its fold under
    /// leave-one-conversation-out.
    pub conversation: usize,
    pub category: u8,
    pub evidence_in_context: f64,
    /// The whole prompt, system prompt and question included.
    pub total_tokens: u32,
    /// The snippets of past conversations alone.
    pub episodic_tokens: u32,
}

/// The stored text of every turn of `conversation`, by dialogue id.
pub fn turn_texts(
    conversation: &Conversation,
    text_of: impl Fn(&crate::locomo::Turn, &str) -> String,
) -> HashMap<String, String> {
    let mut texts = HashMap::new();
    for session in &conversation.sessions {
        let date = session.at.format("%-d %B %Y").to_string();
        for turn in &session.turns {
            texts.insert(turn.dia_id.clone(), text_of(turn, &date));
        }
    }
    texts
}

/// The share of `evidence` (dialogue ids) whose stored words appear in
/// `context`; `None` when the question names no evidence turn we know.
pub fn evidence_in_context(
    evidence: &[String],
    texts: &HashMap<String, String>,
    context: &str,
) -> Option<f64> {
    let known: Vec<&String> = evidence.iter().filter_map(|id| texts.get(id)).collect();
    if known.is_empty() {
        return None;
    }
    let found = known
        .iter()
        .filter(|text| context.contains(text.as_str()))
        .count();
    Some(found as f64 / known.len() as f64)
}

/// A question of the `conversation`-th conversation: its context, made of
/// messages with `contents`, scored against its evidence; `None` when it
/// names no evidence turn we know.
pub fn score(
    conversation: usize,
    question: &crate::locomo::Question,
    texts: &HashMap<String, String>,
    contents: &[&str],
    total_tokens: u32,
    episodic_tokens: u32,
) -> Option<ContextScore> {
    let found = evidence_in_context(&question.evidence, texts, &contents.join("\n"))?;
    Some(ContextScore {
        conversation,
        category: question.category,
        evidence_in_context: found,
        total_tokens,
        episodic_tokens,
    })
}

/// The table the bench prints: per category and overall, mean evidence in
/// context, and mean tokens of the whole context and of its snippets; then
/// the same per conversation, named by `names`.
pub fn print(scores: &[ContextScore], how: &str, names: &[&str]) {
    println!(
        "\n### Evidence in context ({how})\n\n| category | questions | evidence in context | mean tokens | mean snippet tokens |\n|---|---|---|---|---|"
    );
    let mut categories: Vec<u8> = scores.iter().map(|s| s.category).collect();
    categories.sort();
    categories.dedup();
    let row = |name: &str, of: Vec<&ContextScore>| {
        let n = of.len().max(1) as f64;
        println!(
            "| {name} | {} | {:.3} | {:.0} | {:.0} |",
            of.len(),
            of.iter().map(|s| s.evidence_in_context).sum::<f64>() / n,
            of.iter().map(|s| f64::from(s.total_tokens)).sum::<f64>() / n,
            of.iter().map(|s| f64::from(s.episodic_tokens)).sum::<f64>() / n,
        );
    };
    row("all", scores.iter().collect());
    for category in categories {
        row(
            crate::locomo::category_name(category),
            scores.iter().filter(|s| s.category == category).collect(),
        );
    }
    for (c, name) in names.iter().enumerate() {
        row(
            &format!("conversation {name}"),
            scores.iter().filter(|s| s.conversation == c).collect(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_counts_the_turns_whose_words_are_in_the_context() {
        let texts = HashMap::from([
            (
                "D1:1".to_owned(),
                "Caroline: I went to a support group.".to_owned(),
            ),
            ("D1:2".to_owned(), "Melanie: That's brave!".to_owned()),
        ]);
        let context = "[1] (2023-05-08) user: Caroline: I went to a support group.";
        let evidence = ["D1:1".to_owned(), "D1:2".to_owned()];
        assert_eq!(evidence_in_context(&evidence, &texts, context), Some(0.5));
        assert_eq!(
            evidence_in_context(&["D9:9".to_owned()], &texts, context),
            None
        );
    }
}
