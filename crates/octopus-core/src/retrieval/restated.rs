//! When a value changes, both statements stay in the history: "I live in
//! Lyon" and, a year later, "We moved to Paris"; "coverage is at 65 %" and
//! later "coverage has improved to 78 %". Both match a question about it,
//! and the older often matches better. So among recall's best turns, two
//! that are about the same thing, said at different times, are
//! restatements, and the question's tense decides which leads: the later
//! for a question about now, the earlier for one about the past ("used
//! to", "before"). A question in the past tense with no such word ("What
//! did she research?") asks about an event, not a value that changed: it
//! keeps the ranking.
//!
//! Two turns are about the same thing when their vectors are close (the
//! ones recall searched with), or when they share the question's own topic
//! words: at least two, and at least half of those the sparer of them
//! holds. No model is needed.

use std::collections::{HashMap, HashSet};

use crate::Timestamp;
use crate::time_asked::TimeAsked;

/// Which of two restatements a question wants first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    /// What holds now: the later statement.
    Later,
    /// What held before: the earlier one.
    Earlier,
}

/// Words that put a question without a past word ([`TimeAsked::Before`])
/// in the past tense: it asks what happened, not what holds.
const PAST_TENSE: &[&str] = &[
    "did", "didn't", "was", "wasn't", "were", "weren't", "had", "hadn't",
];

/// Which restatement `question` wants first; `None` when it names a time
/// (the turns said then lead by `date_first`) or asks in the past tense
/// about what happened.
pub fn wanted(question: &str, asked: TimeAsked) -> Option<Wanted> {
    match asked {
        TimeAsked::Before => Some(Wanted::Earlier),
        TimeAsked::During { .. } => None,
        TimeAsked::Now => {
            let past = words(question).any(|w| PAST_TENSE.contains(&w.as_str()));
            (!past).then_some(Wanted::Later)
        }
    }
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// A word as compared between a question and a turn: lowercased, a plural
/// or third-person `s` dropped ("commits" is "commit").
fn stem(word: &str) -> String {
    let word = word.to_lowercase();
    match word.strip_suffix('s') {
        Some(rest) if rest.len() >= 3 && !rest.ends_with('s') => rest.to_owned(),
        _ => word,
    }
}

/// The question's `topics` (its topic words) that `text` holds.
pub fn topics_held(topics: &[&str], text: &str) -> HashSet<String> {
    let wanted: HashSet<String> = topics.iter().map(|t| stem(t)).collect();
    words(text)
        .map(|w| stem(&w))
        .filter(|w| wanted.contains(w))
        .collect()
}

/// Whether two turns holding these question topics are about the same
/// thing by their words: at least two shared, and at least half of what
/// the sparer holds.
pub fn same_topics(a: &HashSet<String>, b: &HashSet<String>) -> bool {
    let shared = a.intersection(b).count();
    shared >= 2 && 2 * shared >= a.len().min(b.len())
}

/// Cosine of two vectors of unit length (as stored): their dot product.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Words with which a person says that something changed: "we **moved**
/// to Paris", "coverage has **recently improved** to 78 %", "the **new**
/// quota of 1,200 calls". A later turn restates an earlier one's value only
/// when it says so; otherwise two turns about one thing are two facts about
/// it, and the ranking stands.
const CHANGE_WORDS: &[&str] = &[
    "now",
    "new",
    "newly",
    "recently",
    "lately",
    "currently",
    "anymore",
    "instead",
    "longer",
    "update",
    "updated",
    "change",
    "changed",
    "move",
    "moved",
    "moving",
    "switch",
    "switched",
    "improved",
    "increased",
    "decreased",
    "reduced",
    "raised",
    "lowered",
    "dropped",
    "grew",
    "grown",
    "extended",
    "shortened",
    "rescheduled",
    "postponed",
    "replaced",
    "reached",
    "upgraded",
    "downgraded",
    "revised",
    "adjusted",
    "expanded",
    "boosted",
];

/// Whether `text` says that something changed (see [`CHANGE_WORDS`]).
pub fn states_a_change(text: &str) -> bool {
    words(text).any(|w| CHANGE_WORDS.contains(&w.as_str()))
}

/// Reorders `ranked` (best first) so that the best-ranked item with a
/// restatement further down is preceded by it, when the question wants
/// that one first: walking down, the first item with a later (for
/// [`Wanted::Earlier`], an earlier) restatement below — `same` of the two,
/// said at another time, the later of the two `changes` (says that
/// something changed) — gives its place to the latest (earliest) such one,
/// and moves down one with the rest. One item is lifted at most: a
/// question asks about one thing, and every lift pushes the others down.
/// Items without a time keep their order. The lifted item takes the score
/// of the place it takes, and scores below are lowered to keep the order.
pub fn put_restatements_in_order<M: Copy + Eq + std::hash::Hash>(
    ranked: &mut [(M, f64)],
    same: impl Fn(&M, &M) -> bool,
    at: impl Fn(&M) -> Option<Timestamp>,
    changes: impl Fn(&M) -> bool,
    wanted: Wanted,
) {
    let better = |then: Timestamp, best: Timestamp| match wanted {
        Wanted::Later => then > best,
        Wanted::Earlier => then < best,
    };
    let lift = (0..ranked.len()).find_map(|i| {
        let here = ranked[i].0;
        let when = at(&here)?;
        let mut pick: Option<(usize, Timestamp)> = None;
        for (j, (other, _)) in ranked.iter().enumerate().skip(i + 1) {
            let Some(then) = at(other) else {
                continue;
            };
            let later = match wanted {
                Wanted::Later => other,
                Wanted::Earlier => &here,
            };
            if better(then, pick.map_or(when, |(_, best)| best))
                && changes(later)
                && same(&here, other)
            {
                pick = Some((j, then));
            }
        }
        pick.map(|(j, _)| (i, j))
    });
    if let Some((i, j)) = lift {
        let score = ranked[i].1;
        ranked[i..=j].rotate_right(1);
        ranked[i].1 = score;
    }
    for i in 1..ranked.len() {
        ranked[i].1 = ranked[i].1.min(ranked[i - 1].1);
    }
}

/// [`same`](put_restatements_in_order) from what recall has of its turns:
/// their vectors (close at `similarity` or more) and the question's topics
/// each holds.
pub fn same_by_vectors_or_topics<'a, M: Eq + std::hash::Hash>(
    vectors: &'a HashMap<M, Vec<f32>>,
    topics: &'a HashMap<M, HashSet<String>>,
    similarity: f32,
) -> impl Fn(&M, &M) -> bool + 'a {
    move |a, b| {
        let close = match (vectors.get(a), vectors.get(b)) {
            (Some(x), Some(y)) => cosine(x, y) >= similarity,
            _ => false,
        };
        close
            || match (topics.get(a), topics.get(b)) {
                (Some(x), Some(y)) => same_topics(x, y),
                _ => false,
            }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;

    fn day(d: u32) -> Timestamp {
        Utc.with_ymd_and_hms(2026, 1, d, 9, 0, 0).unwrap()
    }

    /// A unit vector at `degrees` in a plane.
    fn towards(degrees: f32) -> Vec<f32> {
        let r = degrees.to_radians();
        vec![r.cos(), r.sin()]
    }

    type Ranked = Vec<(u32, f64)>;

    /// Items 0..n ranked in that order, with vectors at the given angles.
    fn setup(angles: &[f32]) -> (Ranked, HashMap<u32, Vec<f32>>) {
        let ranked = (0..angles.len() as u32)
            .map(|i| (i, 1.0 - f64::from(i) / 10.0))
            .collect();
        let vectors = angles
            .iter()
            .enumerate()
            .map(|(i, a)| (i as u32, towards(*a)))
            .collect();
        (ranked, vectors)
    }

    fn order(ranked: &[(u32, f64)]) -> Vec<u32> {
        ranked.iter().map(|(m, _)| *m).collect()
    }

    fn by_vectors(vectors: &HashMap<u32, Vec<f32>>) -> impl Fn(&u32, &u32) -> bool + '_ {
        |a, b| cosine(&vectors[a], &vectors[b]) >= 0.8
    }

    /// Items ranked as [`setup`] makes them, ordered for `wanted` where
    /// every later turn states a change.
    fn ordered(angles: &[f32], at: impl Fn(&u32) -> Option<Timestamp>, wanted: Wanted) -> Ranked {
        let (mut ranked, vectors) = setup(angles);
        put_restatements_in_order(&mut ranked, by_vectors(&vectors), at, |_| true, wanted);
        ranked
    }

    #[test]
    fn a_later_restatement_goes_above_the_earlier_for_now_and_below_for_the_past() {
        // 0 "I live in Lyon" (day 1), 1 unrelated, 2 "We moved to Paris"
        // (day 5), close to 0 (cosine of 30° ≈ 0.87).
        let days = [1, 3, 5];
        let at = |m: &u32| Some(day(days[*m as usize]));
        let ranked = ordered(&[0.0, 90.0, 30.0], at, Wanted::Later);
        assert_eq!(order(&ranked), [2, 0, 1]);
        assert_eq!(
            ranked[0].1, 1.0,
            "the lifted one takes the top place's score"
        );
        assert!(ranked.windows(2).all(|w| w[0].1 >= w[1].1));

        let ranked = ordered(&[0.0, 90.0, 30.0], at, Wanted::Earlier);
        assert_eq!(order(&ranked), [0, 1, 2], "the earlier already leads");
    }

    #[test]
    fn turns_about_other_things_keep_their_places() {
        let days = [1, 5, 9];
        let at = |m: &u32| Some(day(days[*m as usize]));
        // 2 is newer and 60° from 0 (cosine 0.5); 1 is far from both.
        let ranked = ordered(&[0.0, -90.0, 60.0], at, Wanted::Later);
        assert_eq!(order(&ranked), [0, 1, 2]);
        // Without a time, a turn is not compared.
        let (mut ranked, vectors) = setup(&[0.0, -90.0, 0.0]);
        let undated = |m: &u32| (*m != 0).then(|| day(days[*m as usize]));
        put_restatements_in_order(
            &mut ranked,
            by_vectors(&vectors),
            undated,
            |_| true,
            Wanted::Later,
        );
        assert_eq!(order(&ranked), [0, 1, 2]);
    }

    #[test]
    fn the_latest_of_several_restatements_leads_and_one_moves_at_most() {
        // Three statements of one value on days 1, 7, 4; an unrelated turn.
        let days = [1, 2, 7, 4];
        let at = |m: &u32| Some(day(days[*m as usize]));
        let ranked = ordered(&[0.0, 90.0, 10.0, 20.0], at, Wanted::Later);
        // Day 7 takes the top; the rest keep their order below it.
        assert_eq!(order(&ranked), [2, 0, 1, 3]);
        let ranked = ordered(&[0.0, 90.0, 10.0, 20.0], at, Wanted::Earlier);
        // Day 1 already leads its restatements; day 7 gives its place to day 4.
        assert_eq!(order(&ranked), [0, 1, 3, 2]);
    }

    /// Turns 0 (most similar), 1 (unrelated) and 2 (close to 0), said on
    /// `days` with `texts`, ordered for `wanted` with the change words as
    /// the test of a change.
    fn ordered_with_texts(days: [u32; 3], texts: [&str; 3], wanted: Wanted) -> Vec<u32> {
        let at = |m: &u32| Some(day(days[*m as usize]));
        let changes = |m: &u32| states_a_change(texts[*m as usize]);
        let (mut ranked, vectors) = setup(&[0.0, 90.0, 30.0]);
        put_restatements_in_order(&mut ranked, by_vectors(&vectors), at, changes, wanted);
        order(&ranked)
    }

    #[test]
    fn a_later_turn_that_says_nothing_changed_is_not_lifted() {
        let later = ordered_with_texts(
            [1, 3, 5],
            ["I live in Lyon", "unrelated", "Lyon is lovely in spring"],
            Wanted::Later,
        );
        assert_eq!(later, [0, 1, 2]);
        // For the past, the later of the two must say it changed too.
        let earlier = ordered_with_texts(
            [5, 3, 1],
            ["We moved to Paris", "unrelated", "I live in Lyon"],
            Wanted::Earlier,
        );
        assert_eq!(earlier, [2, 0, 1]);
        assert!(states_a_change("coverage has recently improved to 78 %"));
        assert!(!states_a_change("coverage is at 65 % after the first run"));
    }

    #[test]
    fn turns_sharing_the_questions_topics_are_restatements() {
        let question = "How many commits have been merged into the main branch?";
        let topics = crate::search::topic_terms(question);
        let old = topics_held(
            &topics,
            "I tagged v1.0.0 with 150 commits and 12 branches merged.",
        );
        let new = topics_held(
            &topics,
            "Commits merged into the main branch have now reached 165.",
        );
        let other = topics_held(&topics, "The main page needs a new logo.");
        assert!(same_topics(&old, &new), "{old:?} {new:?}");
        assert!(!same_topics(&old, &other), "{old:?} {other:?}");
        // Whichever way the vectors lie, shared topics are enough.
        let vectors = HashMap::from([(0u32, towards(0.0)), (1, towards(90.0))]);
        let held = HashMap::from([(0u32, old), (1, new)]);
        let same = same_by_vectors_or_topics(&vectors, &held, 0.8);
        assert!(same(&0, &1));
    }

    #[test]
    fn the_tense_asked_decides_which_leads() {
        let now = TimeAsked::Now;
        assert_eq!(
            wanted("What is the dashboard API's response time?", now),
            Some(Wanted::Later)
        );
        assert_eq!(
            wanted("How many commits have been merged?", now),
            Some(Wanted::Later)
        );
        assert_eq!(wanted("What did Caroline research?", now), None);
        assert_eq!(
            wanted("Where did bob live before?", TimeAsked::Before),
            Some(Wanted::Earlier)
        );
        let during = TimeAsked::During {
            from: day(1),
            to: day(2),
        };
        assert_eq!(wanted("Where did bob live in 2025?", during), None);
    }
}
