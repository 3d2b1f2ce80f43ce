//! Recalled memories as the context shows them: passages of past
//! conversations, each dated.
//!
//! A recalled turn of a few words is often not understandable alone ("Wow,
//! where was that?"), so it comes with the turns around it. Hits next to each other
//! in one episode share their turns, so their windows are joined into one
//! passage instead of being shown twice; a turn whose words were already
//! shown (a greeting, a repeated "thanks!") is not shown again. Every passage
//! carries its date: questions about when need it, and a turn's own text
//! seldom says; a hit said more than once says how many times.

use std::collections::{BTreeMap, HashSet};

use crate::EpisodeId;
use crate::embedded_text::outgoing_text;
use crate::message::Message;
use crate::recall::{MemoryKind, RecallHit};
use crate::working_memory::Retrieved;

/// A turn of at most this many words ("Wow, where was that?", "Yes, the
/// blue one") is about the turns around it, so they are shown with it. A
/// longer one is shown alone: on the LoCoMo dev split, at the default
/// budget, evidence in context rose on every conversation (the book's recall
/// benchmark), as the tokens of neighbours went to more recalled turns.
const FEW_WORDS: usize = 8;

/// A turn longer than this many words (an assistant's answer with code, a
/// pasted log) shows its opening words only: whole, one such turn could
/// take the snippets' whole budget, and then no passage would fit. A turn
/// of a two-person chat seldom comes near it (LoCoMo's longest: 80 words).
const LONG_TURN_WORDS: usize = 100;

/// A run of consecutive turns of one episode, as it is being built.
struct Passage {
    /// The id the trace names it by: its best hit's.
    id: String,
    episode: EpisodeId,
    /// Its best hit's score.
    score: f64,
    label: String,
    /// Lines by ordinal; a summary's or fact's one line at 0.
    lines: BTreeMap<u32, String>,
    /// A summary or a fact: a passage of its own, never joined to turns.
    summary: bool,
}

impl Passage {
    fn touches(&self, episode: EpisodeId, first: u32, last: u32) -> bool {
        let (Some(&start), Some(&end)) = (self.lines.keys().next(), self.lines.keys().last())
        else {
            return false;
        };
        !self.summary && self.episode == episode && first <= end + 1 && start <= last + 1
    }
}

/// Where a recall hit went among the passages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Shown in the passage of this id: its own, or a better-ranked hit's
    /// whose turns it touches.
    Passage(String),
    /// Not shown: its words were already in a passage.
    Repeat,
    /// Not shown: it has no text.
    NoText,
}

/// The ranked hits (best first) as passages, best first: message hits with
/// their windows, joined where they touch in one episode, and summaries on
/// their own. With `redact`, the text that may leave (see [`outgoing_text`]).
pub fn passages(hits: Vec<RecallHit>, redact: bool) -> Vec<Retrieved> {
    passages_placing(hits, redact, |_, _| {})
}

/// [`passages`], telling `placed` where each hit went, by the hit's id
/// (its message's, summary's episode's or fact's).
pub fn passages_placing(
    hits: Vec<RecallHit>,
    redact: bool,
    mut placed: impl FnMut(String, Placement),
) -> Vec<Retrieved> {
    let mut built: Vec<Passage> = Vec::new();
    // The words of every line shown so far, for folding repeats.
    let mut shown: HashSet<String> = HashSet::new();
    for hit in hits {
        let date = hit.at.format("%Y-%m-%d");
        match (hit.kind, hit.window, hit.summary, hit.fact) {
            (MemoryKind::Fact, _, _, Some(fact)) => {
                let episode = fact.vector_episode();
                let text = match redact {
                    true => crate::pii::egress(&fact.text).into_owned(),
                    false => fact.text,
                };
                if !shown.insert(fold_key(&text)) {
                    placed(fact.id.to_string(), Placement::Repeat);
                    continue;
                }
                placed(fact.id.to_string(), Placement::Passage(fact.id.to_string()));
                let label = match fact.valid_to {
                    Some(to) => format!("fact, {date} to {}", to.format("%Y-%m-%d")),
                    None => format!("fact, since {date}"),
                };
                built.push(Passage {
                    id: fact.id.to_string(),
                    episode,
                    score: hit.score,
                    label,
                    lines: BTreeMap::from([(0, text)]),
                    summary: true,
                });
            }
            (MemoryKind::Summary, _, Some(summary), _) => {
                let Some(episode) = hit.episode_id else {
                    continue;
                };
                let text = match redact {
                    true => crate::pii::egress(&summary).into_owned(),
                    false => summary,
                };
                // A summary that only repeats lines already shown (a short
                // episode's extractive summary is its turns) adds nothing.
                let keys: Vec<String> = text
                    .lines()
                    .map(fold_key)
                    .filter(|key| !key.is_empty())
                    .collect();
                if keys.iter().all(|key| shown.contains(key)) {
                    placed(episode.to_string(), Placement::Repeat);
                    continue;
                }
                shown.extend(keys);
                placed(episode.to_string(), Placement::Passage(episode.to_string()));
                built.push(Passage {
                    id: episode.to_string(),
                    episode,
                    score: hit.score,
                    label: format!("{date}, summary"),
                    lines: BTreeMap::from([(0, text)]),
                    summary: true,
                });
            }
            (MemoryKind::Message, Some(window), _, _) => {
                let id = window.message.id.to_string();
                let Some(said) = line(&window.message, redact) else {
                    placed(id, Placement::NoText);
                    continue;
                };
                // A hit that only repeats words already shown adds nothing.
                if shown.contains(&fold_key(&said)) {
                    placed(id, Placement::Repeat);
                    continue;
                }
                let alone = stands_alone(&said);
                let turns: Vec<&Message> = window
                    .before
                    .iter()
                    .filter(|_| !alone)
                    .chain(std::iter::once(&window.message))
                    .chain(window.after.iter().filter(|_| !alone))
                    .collect();
                let first = turns.first().map_or(0, |m| m.ordinal);
                let last = turns.last().map_or(0, |m| m.ordinal);
                let at = built
                    .iter()
                    .position(|p| p.touches(window.message.episode_id, first, last));
                let passage = match at {
                    Some(i) => {
                        placed(id, Placement::Passage(built[i].id.clone()));
                        &mut built[i]
                    }
                    None => {
                        placed(id.clone(), Placement::Passage(id.clone()));
                        built.push(Passage {
                            id,
                            episode: window.message.episode_id,
                            score: hit.score,
                            label: match hit.times_said {
                                0 | 1 => date.to_string(),
                                n => format!("{date}, said {n} times"),
                            },
                            lines: BTreeMap::new(),
                            summary: false,
                        });
                        built.last_mut().expect("just pushed")
                    }
                };
                for turn in turns {
                    if passage.lines.contains_key(&turn.ordinal) {
                        continue;
                    }
                    let Some(text) = line(turn, redact) else {
                        continue;
                    };
                    // The hit's own turn always shows; a neighbour only when
                    // its words are new.
                    if shown.insert(fold_key(&text)) || turn.id == window.message.id {
                        passage.lines.insert(turn.ordinal, text);
                    }
                }
            }
            _ => {}
        }
    }
    built
        .into_iter()
        .filter(|p| !p.lines.is_empty())
        .map(|p| Retrieved {
            id: p.id,
            label: p.label,
            text: p.lines.into_values().collect::<Vec<_>>().join("\n"),
            score: p.score,
        })
        .collect()
}

/// One turn as a line of a passage: who spoke (its name, or its role), then
/// what they said; a transcript's turn that already starts with its
/// speaker's label ("Caroline: …") as it is. `None` for a turn with no text.
fn line(message: &Message, redact: bool) -> Option<String> {
    let text = outgoing_text(message, redact)?;
    let text = first_words(text.trim(), LONG_TURN_WORDS);
    let text = text.as_ref();
    if text.is_empty() {
        return None;
    }
    let speaker = match (&message.name, crate::speakers::transcript_label(text)) {
        (Some(name), _) => name.as_str(),
        (None, Some(_)) => return Some(text.to_owned()),
        (None, None) => message.role.as_str(),
    };
    Some(format!("{speaker}: {text}"))
}

/// `text` up to its `words`-th word, and " …" when there was more; spacing
/// and line breaks inside it kept (code stays code).
fn first_words(text: &str, words: usize) -> std::borrow::Cow<'_, str> {
    let mut seen = 0;
    let mut in_word = false;
    for (at, c) in text.char_indices() {
        if c.is_whitespace() {
            in_word = false;
        } else if !in_word {
            in_word = true;
            seen += 1;
            if seen > words {
                return format!("{} …", text[..at].trim_end()).into();
            }
        }
    }
    text.into()
}

/// Whether a recalled turn, as a [`line`], says enough to be understood
/// without the turns around it: more than [`FEW_WORDS`] words after its
/// speaker.
fn stands_alone(line: &str) -> bool {
    let said = line.split_once(": ").map_or(line, |(_, said)| said);
    said.split_whitespace().count() > FEW_WORDS
}

/// What two lines share when they say the same: their words, lowercased,
/// without punctuation or spacing.
fn fold_key(line: &str) -> String {
    line.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::message::{MessageContent, Role};
    use crate::recall::MessageWindow;
    use crate::{ConversationId, MessageId};

    fn turn(episode: EpisodeId, ordinal: u32, role: Role, text: &str) -> Message {
        let at = chrono::Utc.with_ymd_and_hms(2023, 5, 8, 13, 56, 0).unwrap();
        Message {
            id: MessageId::new(),
            episode_id: episode,
            conversation_id: ConversationId::new(),
            ordinal,
            role,
            content: Some(MessageContent::Text(text.into())),
            name: None,
            tool_call_id: None,
            tool_calls: Vec::new(),
            token_count: 5,
            timestamp: at + chrono::Duration::seconds(i64::from(ordinal)),
            agent_id: None,
            contains_pii: false,
            redacted_content: None,
            embedding_ref: None,
            usage: None,
            created_at: at,
        }
    }

    /// A hit on `turns[at]` with one turn either side.
    fn hit(turns: &[Message], at: usize, score: f64) -> RecallHit {
        let message = turns[at].clone();
        RecallHit {
            kind: MemoryKind::Message,
            text: message
                .content
                .as_ref()
                .map(|c| c.text())
                .unwrap_or_default(),
            times_said: 1,
            score,
            vector_score: None,
            keyword_score: None,
            episode_id: Some(message.episode_id),
            conversation_id: Some(message.conversation_id),
            at: message.timestamp,
            window: Some(MessageWindow {
                before: turns[at.saturating_sub(1)..at].to_vec(),
                after: turns[at + 1..(at + 2).min(turns.len())].to_vec(),
                message,
            }),
            summary: None,
            fact: None,
            explanation: None,
        }
    }

    /// `text` as the summary of the episode of `turns`, dated at its last turn.
    fn summary_hit(turns: &[Message], text: &str, score: f64) -> RecallHit {
        RecallHit {
            kind: MemoryKind::Summary,
            text: text.into(),
            times_said: 1,
            score,
            vector_score: None,
            keyword_score: None,
            episode_id: Some(turns[0].episode_id),
            conversation_id: Some(turns[0].conversation_id),
            at: turns.last().expect("a turn").timestamp,
            window: None,
            fact: None,
            summary: Some(text.into()),
            explanation: None,
        }
    }

    fn episode(texts: &[&str]) -> Vec<Message> {
        let episode = EpisodeId::new();
        texts
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let role = [Role::User, Role::Assistant][i % 2];
                turn(episode, i as u32, role, text)
            })
            .collect()
    }

    #[test]
    fn a_hit_shows_with_its_neighbours_under_its_date() {
        let trip = episode(&["I went hiking.", "Wow, where was that?", "In the Alps."]);
        let shown = passages(vec![hit(&trip, 1, 0.9)], false);
        assert_eq!(shown.len(), 1);
        assert_eq!(shown[0].label, "2023-05-08");
        assert_eq!(
            shown[0].text,
            "user: I went hiking.\nassistant: Wow, where was that?\nuser: In the Alps."
        );
        assert_eq!(shown[0].id, trip[1].id.to_string());
        assert_eq!(shown[0].score, 0.9);
    }

    #[test]
    fn a_hit_said_more_than_once_says_how_many_times() {
        let turns = episode(&["My flight is on Friday at 9.", "Noted.", "ok"]);
        let mut repeated = hit(&turns, 0, 0.9);
        repeated.times_said = 3;
        let shown = passages(vec![repeated], false);
        assert_eq!(shown[0].label, "2023-05-08, said 3 times");
    }

    #[test]
    fn touching_windows_in_one_episode_join_and_keep_the_best_score() {
        let turns = episode(&["a one", "b two", "c three", "d four", "e five", "f six"]);
        // Windows 0–2 and 3–5 touch; the passage keeps the first hit's score.
        let shown = passages(vec![hit(&turns, 1, 0.9), hit(&turns, 4, 0.5)], false);
        assert_eq!(shown.len(), 1, "{shown:?}");
        assert_eq!(shown[0].text.lines().count(), 6);
        assert!(shown[0].text.starts_with("user: a one"));
        assert_eq!(shown[0].score, 0.9);
        // In another episode they stay apart, each with its own turns.
        let other = episode(&["x", "y", "z"]);
        let shown = passages(vec![hit(&turns, 1, 0.9), hit(&other, 1, 0.4)], false);
        assert_eq!(shown.len(), 2);
        assert_eq!(shown[1].text, "user: x\nassistant: y\nuser: z");
    }

    #[test]
    fn windows_apart_in_one_episode_stay_two_passages() {
        let turns = episode(&["a", "b", "c", "d", "e", "f", "g", "h"]);
        let shown = passages(vec![hit(&turns, 1, 0.9), hit(&turns, 6, 0.5)], false);
        assert_eq!(shown.len(), 2);
        assert_eq!(shown[1].text, "assistant: f\nuser: g\nassistant: h");
    }

    #[test]
    fn repeated_words_are_shown_once() {
        let first = episode(&["Thanks!", "I adopted a dog named Rex.", "thanks"]);
        let second = episode(&["Thanks!!", "Rex learned to sit.", "cool"]);
        let shown = passages(
            vec![
                hit(&first, 1, 0.9),
                // Only repeats the first passage's line: folded away.
                hit(&second, 0, 0.8),
                hit(&second, 1, 0.7),
            ],
            false,
        );
        assert_eq!(shown.len(), 2, "{shown:?}");
        assert_eq!(
            shown[1].text, "assistant: Rex learned to sit.\nuser: cool",
            "the repeated thanks is left out of the second passage"
        );
    }

    #[test]
    fn summaries_stand_alone_and_names_speak_for_their_turns() {
        let mut turns = episode(&["hello there", "hi"]);
        turns[0].name = Some("Caroline".into());
        let summary = summary_hit(&turns, "They greeted each other.", 0.3);
        let shown = passages(vec![hit(&turns, 1, 0.9), summary], false);
        assert_eq!(shown[0].text, "Caroline: hello there\nassistant: hi");
        assert_eq!(shown[1].label, "2023-05-08, summary");
        assert_eq!(shown[1].text, "They greeted each other.");
        assert_eq!(shown[1].id, turns[0].episode_id.to_string());
    }

    #[test]
    fn a_summary_repeating_shown_turns_is_folded() {
        let turns = episode(&["my knee hurts", "ice it", "I will"]);
        let summary = summary_hit(&turns, "user: my knee hurts\nassistant: ice it", 0.5);
        let shown = passages(vec![hit(&turns, 1, 0.9), summary.clone()], false);
        assert_eq!(shown.len(), 1, "{shown:?}");
        // Alone, or saying something new, it stays.
        assert_eq!(passages(vec![summary.clone()], false).len(), 1);
        let mut new = summary;
        new.summary = Some("user: my knee hurts\nThey agreed on rest.".into());
        assert_eq!(passages(vec![hit(&turns, 1, 0.9), new], false).len(), 2);
    }

    #[test]
    fn a_turn_that_says_enough_is_shown_alone_and_a_transcript_keeps_its_label() {
        let said = "Caroline: I finally finished the sunrise painting for my mother's birthday";
        let turns = episode(&[
            "Caroline: How are you?",
            said,
            "Melanie: Wow, where was that?",
        ]);
        let shown = passages(vec![hit(&turns, 1, 0.9)], false);
        assert_eq!(shown.len(), 1);
        assert_eq!(
            shown[0].text, said,
            "no neighbours, no role before the label"
        );
        let shown = passages(vec![hit(&turns, 2, 0.9)], false);
        assert_eq!(
            shown[0].text,
            format!("{said}\nMelanie: Wow, where was that?"),
            "a reaction comes with what it reacts to"
        );
    }

    #[test]
    fn a_long_turn_shows_its_opening_words_and_its_line_breaks() {
        let long = format!(
            "Here is the fix:\n```python\n{}\n```",
            "x = 1\n".repeat(200)
        );
        let cut = first_words(&long, LONG_TURN_WORDS);
        assert!(
            cut.starts_with("Here is the fix:\n```python\nx = 1\n"),
            "{cut}"
        );
        assert!(cut.ends_with(" …"));
        assert_eq!(cut.split_whitespace().count(), LONG_TURN_WORDS + 1);
        let short = "I live in Lyon, near the river";
        assert_eq!(first_words(short, LONG_TURN_WORDS), short);
        let episode = episode(&[&long]);
        let shown = passages(vec![hit(&episode, 0, 0.9)], false);
        assert!(shown[0].text.len() < 700, "{}", shown[0].text);
    }

    #[test]
    fn redaction_reaches_every_line() {
        let turns = episode(&["mail me at ann@example.com", "sure", "ok"]);
        let shown = passages(vec![hit(&turns, 1, 0.9)], true);
        assert!(
            !shown[0].text.contains("ann@example.com"),
            "{}",
            shown[0].text
        );
        assert!(shown[0].text.contains("[EMAIL]"), "{}", shown[0].text);
    }
}
