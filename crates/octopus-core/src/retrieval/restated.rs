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

/// Reorders `ranked` (best first) so that each item is preceded by the
/// restatements of it the question wants first: walking down, an item with
/// a later (for [`Wanted::Earlier`], an earlier) restatement further down —
/// `same` of the two, said at another time — gives its place to the latest
/// (earliest) such one, and moves down one with the rest. Each item is
/// lifted at most once; items without a time keep their order. A lifted
/// item takes the score of the place it takes, and scores below are
/// lowered to keep the order.
pub fn put_restatements_in_order<M: Copy + Eq + std::hash::Hash>(
    ranked: &mut Vec<(M, f64)>,
    same: impl Fn(&M, &M) -> bool,
    at: impl Fn(&M) -> Option<Timestamp>,
    wanted: Wanted,
) {
    let mut lifted: HashSet<M> = HashSet::new();
    let mut i = 0;
    while i < ranked.len() {
        let here = ranked[i].0;
        let Some(when) = at(&here) else {
            i += 1;
            continue;
        };
        let better = |then: Timestamp, best: Timestamp| match wanted {
            Wanted::Later => then > best,
            Wanted::Earlier => then < best,
        };
        let mut pick: Option<(usize, Timestamp)> = None;
        for (j, (other, _)) in ranked.iter().enumerate().skip(i + 1) {
            if lifted.contains(other) {
                continue;
            }
            let Some(then) = at(other) else {
                continue;
            };
            if better(then, pick.map_or(when, |(_, best)| best)) && same(&here, other) {
                pick = Some((j, then));
            }
        }
        if let Some((j, _)) = pick {
            let score = ranked[i].1;
            let (item, _) = ranked.remove(j);
            ranked.insert(i, (item, score));
            lifted.insert(item);
        }
        i += 1;
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

    #[test]
    fn a_later_restatement_goes_above_the_earlier_for_now_and_below_for_the_past() {
        // 0 "I live in Lyon" (day 1), 1 unrelated, 2 "We moved to Paris"
        // (day 5), close to 0 (cosine of 30° ≈ 0.87).
        let days = [1, 3, 5];
        let at = |m: &u32| Some(day(days[*m as usize]));
        let (mut ranked, vectors) = setup(&[0.0, 90.0, 30.0]);
        put_restatements_in_order(&mut ranked, by_vectors(&vectors), at, Wanted::Later);
        assert_eq!(order(&ranked), [2, 0, 1]);
        assert_eq!(
            ranked[0].1, 1.0,
            "the lifted one takes the top place's score"
        );
        assert!(ranked.windows(2).all(|w| w[0].1 >= w[1].1));

        let (mut ranked, vectors) = setup(&[0.0, 90.0, 30.0]);
        put_restatements_in_order(&mut ranked, by_vectors(&vectors), at, Wanted::Earlier);
        assert_eq!(order(&ranked), [0, 1, 2], "the earlier already leads");
    }

    #[test]
    fn turns_about_other_things_keep_their_places() {
        let days = [1, 5, 9];
        let at = |m: &u32| Some(day(days[*m as usize]));
        // 2 is newer and 60° from 0 (cosine 0.5); 1 is far from both.
        let (mut ranked, vectors) = setup(&[0.0, -90.0, 60.0]);
        put_restatements_in_order(&mut ranked, by_vectors(&vectors), at, Wanted::Later);
        assert_eq!(order(&ranked), [0, 1, 2]);
        // Without a time, a turn is not compared.
        let (mut ranked, vectors) = setup(&[0.0, -90.0, 0.0]);
        let undated = |m: &u32| (*m != 0).then(|| day(days[*m as usize]));
        put_restatements_in_order(&mut ranked, by_vectors(&vectors), undated, Wanted::Later);
        assert_eq!(order(&ranked), [0, 1, 2]);
    }

    #[test]
    fn the_latest_of_several_restatements_leads_and_each_moves_once() {
        // Three statements of one value on days 1, 7, 4; an unrelated turn.
        let days = [1, 2, 7, 4];
        let at = |m: &u32| Some(day(days[*m as usize]));
        let (mut ranked, vectors) = setup(&[0.0, 90.0, 10.0, 20.0]);
        put_restatements_in_order(&mut ranked, by_vectors(&vectors), at, Wanted::Later);
        // Day 7 takes the top; day 1 (next) gives its place to day 4.
        assert_eq!(order(&ranked), [2, 3, 0, 1]);
        let (mut ranked, vectors) = setup(&[0.0, 90.0, 10.0, 20.0]);
        put_restatements_in_order(&mut ranked, by_vectors(&vectors), at, Wanted::Earlier);
        // Day 1 already leads; day 7 gives its place to day 4.
        assert_eq!(order(&ranked), [0, 1, 3, 2]);
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
