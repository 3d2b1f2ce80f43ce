//! Whether a question asks what holds now or what held at some other time.
//!
//! A fact holds from `valid_from` until a newer one replaces it, and the
//! replaced one is kept (see [`crate::fact`]). "Where does Bob live?" asks
//! what holds now; "Where did Bob live in 2025?" and "Where did Bob live
//! before?" ask about a time when a replaced fact held. Recall puts the facts
//! that held at the time asked about, and the turns they were learned from,
//! ahead of the facts that did not and the turns that stated those (see
//! `service::recall` in the engine), so that the answer that holds leads.
//!
//! Read without a model: a date the question names ([`crate::dates_named`],
//! or a year alone), the recall's own time bounds, and a few words that put
//! a question in the past ("used to", "previously", "no longer").

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};

use crate::dates_named::{dates_named, year_of};
use crate::fact::Fact;

/// Words that ask about a past without a date: what held once and no longer.
const PAST_WITHOUT_A_DATE: &[&[&str]] = &[
    &["used", "to"],
    &["previously"],
    &["formerly"],
    &["former"],
    &["before"],
    &["originally"],
    &["at", "first"],
    &["in", "the", "past"],
    &["back", "then"],
    &["ago"],
    &["anymore"],
    &["any", "more"],
    &["no", "longer"],
];

/// The time a question asks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeAsked {
    /// It names no other time: what holds now.
    Now,
    /// A stretch of time, `from` included and `to` not: a date or year the
    /// question names, or the recall's bounds. What held at some moment of it.
    During {
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    },
    /// A past it does not date ("used to"): what held once and was replaced.
    Before,
}

impl TimeAsked {
    /// The time `question` asks about; a recall bounded by `from` or `to`
    /// asks about those bounds, whatever its words.
    pub fn of(question: &str, from: Option<DateTime<Utc>>, to: Option<DateTime<Utc>>) -> Self {
        if from.is_some() || to.is_some() {
            return TimeAsked::During {
                from: from.unwrap_or(DateTime::<Utc>::MIN_UTC),
                to: to.unwrap_or(DateTime::<Utc>::MAX_UTC),
            };
        }
        let spans = dates_named(question);
        let mut days: Vec<(NaiveDate, NaiveDate)> = spans.iter().filter_map(|s| s.days()).collect();
        let words = words_of(question);
        if spans.is_empty() {
            // A year alone ("in 2025"), which names no month.
            days.extend(words.iter().filter_map(|w| year_of(w)).filter_map(|year| {
                Some((
                    NaiveDate::from_ymd_opt(year, 1, 1)?,
                    NaiveDate::from_ymd_opt(year, 12, 31)?,
                ))
            }));
        }
        if let (Some(first), Some(last)) = (
            days.iter().map(|(first, _)| *first).min(),
            days.iter().map(|(_, last)| *last).max(),
        ) {
            let midnight = |day: NaiveDate| day.and_time(NaiveTime::MIN).and_utc();
            return TimeAsked::During {
                from: midnight(first),
                to: last.succ_opt().map_or(DateTime::<Utc>::MAX_UTC, midnight),
            };
        }
        // A month without its year ("in June") is some June of the past.
        let undated_past = !spans.is_empty()
            || PAST_WITHOUT_A_DATE.iter().any(|phrase| {
                words
                    .windows(phrase.len())
                    .any(|window| window.iter().zip(*phrase).all(|(w, p)| w == p))
            });
        match undated_past {
            true => TimeAsked::Before,
            false => TimeAsked::Now,
        }
    }

    /// Whether `fact` held at the time asked about.
    pub fn holds(&self, fact: &Fact) -> bool {
        match self {
            TimeAsked::Now => fact.valid_to.is_none(),
            TimeAsked::During { from, to } => {
                fact.valid_from < *to && fact.valid_to.is_none_or(|end| end > *from)
            }
            TimeAsked::Before => fact.valid_to.is_some(),
        }
    }
}

/// Within the places of `ranked` whose memory `held` knows about (`Some`),
/// puts those that held ahead of those that did not, each side in its order;
/// every other memory keeps its place, and every place its score, so that
/// the ranking stays sorted.
pub fn put_what_held_first<M: Copy>(ranked: &mut [(M, f64)], held: impl Fn(&M) -> Option<bool>) {
    let places: Vec<usize> = (0..ranked.len())
        .filter(|&i| held(&ranked[i].0).is_some())
        .collect();
    let mut known: Vec<M> = places.iter().map(|&i| ranked[i].0).collect();
    known.sort_by_key(|memory| held(memory) != Some(true));
    for (place, memory) in places.into_iter().zip(known) {
        ranked[place].0 = memory;
    }
}

fn words_of(question: &str) -> Vec<String> {
    question
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fact::FactSource;
    use crate::ids::{AgentId, FactId, TenantId};

    fn at(day: &str) -> DateTime<Utc> {
        format!("{day}T00:00:00Z").parse().unwrap()
    }

    fn fact(from: &str, to: Option<&str>) -> Fact {
        Fact {
            id: FactId::new(),
            tenant_id: TenantId::new(),
            agent_id: AgentId::new(),
            user_id: "bob".into(),
            episode_id: None,
            message_ids: Vec::new(),
            text: "Bob lives somewhere".into(),
            valid_from: at(from),
            valid_to: to.map(at),
            superseded_by: to.map(|_| FactId::new()),
            created_at: at(from),
            source: FactSource::Learned,
            changed_by: "model".into(),
            category: None,
            key: None,
        }
    }

    #[test]
    fn a_question_without_another_time_asks_what_holds_now() {
        for question in [
            "Where does Bob live?",
            "Where did Bob say he lives?",
            "How old is Bob?",
        ] {
            assert_eq!(
                TimeAsked::of(question, None, None),
                TimeAsked::Now,
                "{question}"
            );
        }
        let lyon = fact("2025-05-04", Some("2026-02-10"));
        let paris = fact("2026-02-10", None);
        assert!(TimeAsked::Now.holds(&paris));
        assert!(!TimeAsked::Now.holds(&lyon));
    }

    #[test]
    fn a_named_year_month_or_day_asks_what_held_then() {
        let lyon = fact("2025-05-04", Some("2026-02-10"));
        let paris = fact("2026-02-10", None);
        let in_2025 = TimeAsked::of("Where did Bob live in 2025?", None, None);
        assert_eq!(
            in_2025,
            TimeAsked::During {
                from: at("2025-01-01"),
                to: at("2026-01-01")
            }
        );
        assert!(in_2025.holds(&lyon) && !in_2025.holds(&paris));
        let in_march = TimeAsked::of("Where was Bob living in March 2026?", None, None);
        assert!(!in_march.holds(&lyon) && in_march.holds(&paris));
        // The day Paris began: Lyon held until then, not on it.
        let that_day = TimeAsked::of("Where did Bob live on 2026-02-10?", None, None);
        assert!(!that_day.holds(&lyon) && that_day.holds(&paris));
        // A stretch over both periods holds both.
        let both = TimeAsked::of("Where did Bob live from 2025 to 2026?", None, None);
        assert!(both.holds(&lyon) && both.holds(&paris));
    }

    #[test]
    fn the_recalls_bounds_are_the_time_asked() {
        let asked = TimeAsked::of("Where does Bob live?", Some(at("2025-01-01")), None);
        assert!(asked.holds(&fact("2025-05-04", Some("2026-02-10"))));
        assert!(!asked.holds(&fact("2020-01-01", Some("2024-12-01"))));
    }

    #[test]
    fn a_past_without_a_date_asks_what_was_replaced() {
        for question in [
            "Bob used to live where?",
            "Where did Bob live before?",
            "Which city does Bob no longer live in?",
            "Where did Bob live in June?",
        ] {
            assert_eq!(
                TimeAsked::of(question, None, None),
                TimeAsked::Before,
                "{question}"
            );
        }
        // "use to" is also what a tool is for: only "used to" is read.
        let tool = TimeAsked::of("What pan does Bob use to cook rice?", None, None);
        assert_eq!(tool, TimeAsked::Now);
        assert!(TimeAsked::Before.holds(&fact("2025-05-04", Some("2026-02-10"))));
        assert!(!TimeAsked::Before.holds(&fact("2026-02-10", None)));
    }

    #[test]
    fn what_held_moves_ahead_within_the_places_of_facts_and_their_turns() {
        // a: a replaced fact's turn, b: unrelated, c: the current fact,
        // d: the replaced fact, e: the current fact's turn.
        let mut ranked = vec![('a', 0.9), ('b', 0.8), ('c', 0.7), ('d', 0.6), ('e', 0.5)];
        let held = |m: &char| match m {
            'c' | 'e' => Some(true),
            'a' | 'd' => Some(false),
            _ => None,
        };
        put_what_held_first(&mut ranked, held);
        assert_eq!(
            ranked,
            vec![('c', 0.9), ('b', 0.8), ('e', 0.7), ('a', 0.6), ('d', 0.5)]
        );
        // Nothing replaced among them: nothing moves.
        let mut same = vec![('b', 0.8), ('c', 0.7), ('e', 0.5)];
        put_what_held_first(&mut same, held);
        assert_eq!(same, vec![('b', 0.8), ('c', 0.7), ('e', 0.5)]);
    }
}
