//! The dates a query names, read against the conversation's own clock.
//!
//! "What did Maria donate to the shelter in December 2023?" and "What did
//! Gina find on 1 February, 2023?" say when the answer was said: a message's
//! timestamp is the conversation's clock, so recall can put the turns of
//! those days first (see `service::recall` in the engine). Only dates a
//! reader can place without knowing when the question is asked are read: a
//! day ("May 3, 2023", "3 May 2023", "2023-05-03", "on October 13"), a month
//! ("June 2023", "in June"). A year alone spans most of a user's past, and
//! "last week" or "recently" need a "now" the question does not give.

use chrono::{Datelike, Days, NaiveDate};

/// Things are told after they happen ("we went camping last week"), so a
/// span also holds the days just after it.
const TOLD_AFTER_DAYS: u64 = 7;

/// A stretch of days a query names, its last day included. Without a year
/// it is that month or day in any year.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DateSpan {
    year: Option<i32>,
    month: u32,
    /// `None` for the whole month.
    day: Option<u32>,
}

impl DateSpan {
    /// Whether something said on `date` may be about this span: the span's
    /// days or the week after them.
    pub fn holds(&self, date: NaiveDate) -> bool {
        // A span without a year is tried in the date's year and the one
        // before, so that "in December" holds the first days of January.
        let years = match self.year {
            Some(year) => vec![year],
            None => vec![date.year(), date.year() - 1],
        };
        years.into_iter().any(|year| {
            self.days_in(year).is_some_and(|(first, last)| {
                let told_by = last
                    .checked_add_days(Days::new(TOLD_AFTER_DAYS))
                    .unwrap_or(last);
                first <= date && date <= told_by
            })
        })
    }

    /// Its first and last day, when it names its year; `None` without one
    /// ("in June") or for a day the calendar lacks.
    pub fn days(&self) -> Option<(NaiveDate, NaiveDate)> {
        self.days_in(self.year?)
    }

    /// The span's first and last day in `year`; `None` for a day the
    /// calendar lacks (February 30).
    fn days_in(&self, year: i32) -> Option<(NaiveDate, NaiveDate)> {
        match self.day {
            Some(day) => NaiveDate::from_ymd_opt(year, self.month, day).map(|d| (d, d)),
            None => {
                let first = NaiveDate::from_ymd_opt(year, self.month, 1)?;
                let next = match self.month {
                    12 => NaiveDate::from_ymd_opt(year + 1, 1, 1)?,
                    month => NaiveDate::from_ymd_opt(year, month + 1, 1)?,
                };
                Some((first, next.pred_opt()?))
            }
        }
    }
}

/// Words that, before a month's name alone, make it a date ("in June") and
/// not a word of the sentence ("May I ask…").
const BEFORE_A_MONTH: &[&str] = &[
    "in", "during", "since", "until", "till", "by", "of", "early", "late", "mid", "last", "next",
    "this", "from", "through", "to", "before", "after", "around",
];

/// The dates `query` names, in the order it names them.
pub fn dates_named(query: &str) -> Vec<DateSpan> {
    let words: Vec<&str> = query
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .flat_map(|w| iso_or_words(w))
        .filter(|w| !w.is_empty())
        .collect();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if let Some(span) = iso_date(words[i]) {
            spans.push(span);
            i += 1;
            continue;
        }
        let Some(month) = month_of(words[i]) else {
            i += 1;
            continue;
        };
        let day_before = i.checked_sub(1).and_then(|b| day_of(words[b])).or_else(|| {
            // "the 3rd of May"
            (i >= 2 && words[i - 1].eq_ignore_ascii_case("of"))
                .then(|| day_of(words[i - 2]))
                .flatten()
        });
        let day_after = words.get(i + 1).and_then(|w| day_of(w));
        let day = day_after.or(day_before);
        let year_at = i + 1 + usize::from(day_after.is_some());
        let year = words.get(year_at).and_then(|w| year_of(w));
        let preceded = i
            .checked_sub(1)
            .is_some_and(|b| BEFORE_A_MONTH.contains(&words[b].to_lowercase().as_str()));
        if day.is_some() || year.is_some() || preceded {
            spans.push(DateSpan { year, month, day });
        }
        i = year_at + usize::from(year.is_some());
    }
    spans
}

/// "2023-05-03" kept whole; any other hyphenated word ("mid-June") split.
fn iso_or_words(word: &str) -> Vec<&str> {
    match iso_date(word) {
        Some(_) => vec![word],
        None => word.split('-').collect(),
    }
}

fn iso_date(word: &str) -> Option<DateSpan> {
    let date = NaiveDate::parse_from_str(word, "%Y-%m-%d").ok()?;
    Some(DateSpan {
        year: Some(date.year()),
        month: date.month(),
        day: Some(date.day()),
    })
}

/// A month's number from its name or a usual abbreviation, written with a
/// capital as English writes months (so "may" and "march" stay verbs).
fn month_of(word: &str) -> Option<u32> {
    const NAMES: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    if !word.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    let lower = word.to_lowercase();
    let abbreviation = |name: &str| {
        let name = name.to_lowercase();
        lower.len() >= 3 && (lower == name[..3] || (name == "september" && lower == "sept"))
    };
    let found = NAMES
        .iter()
        .position(|name| lower == name.to_lowercase() || abbreviation(name))?;
    Some(found as u32 + 1)
}

/// A day of the month: 1 to 31, with an ordinal's ending or not ("3rd").
fn day_of(word: &str) -> Option<u32> {
    let digits = ["st", "nd", "rd", "th"]
        .iter()
        .find_map(|end| word.strip_suffix(end))
        .unwrap_or(word);
    if digits.len() > 2 {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

/// A year written in full, 1900 to 2199.
pub(crate) fn year_of(word: &str) -> Option<i32> {
    (word.len() == 4)
        .then(|| word.parse().ok())
        .flatten()
        .filter(|y| (1900..2200).contains(y))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    fn span(year: Option<i32>, month: u32, day: Option<u32>) -> DateSpan {
        DateSpan { year, month, day }
    }

    #[test]
    fn days_are_read_in_the_orders_people_write_them() {
        for query in [
            "Who did Maria have dinner with on May 3, 2023?",
            "Who did Maria have dinner with on 3 May, 2023?",
            "Who did Maria have dinner with on the 3rd of May 2023?",
            "Who did Maria have dinner with on 2023-05-03?",
        ] {
            assert_eq!(
                dates_named(query),
                vec![span(Some(2023), 5, Some(3))],
                "{query}"
            );
        }
        assert_eq!(
            dates_named("What did she show on October 13?"),
            vec![span(None, 10, Some(13))]
        );
    }

    #[test]
    fn months_are_read_with_a_year_or_after_a_word_that_makes_them_dates() {
        assert_eq!(
            dates_named("What class did Maria start in December 2023?"),
            vec![span(Some(2023), 12, None)]
        );
        assert_eq!(
            dates_named("When did Melanie go camping in June?"),
            vec![span(None, 6, None)]
        );
        assert_eq!(
            dates_named("What happened between Sept. 2022 and mid-March?"),
            vec![span(Some(2022), 9, None), span(None, 3, None)]
        );
    }

    #[test]
    fn words_that_only_look_like_months_are_not_dates() {
        for query in [
            "May I ask what Caroline said?",
            "What may Melanie march for?",
            "Who is August's friend?",
            "How many times has Melanie gone to the beach in 2023?",
            "What did John do last week?",
            "Did she say the 31 June plan was off?",
        ] {
            let named = dates_named(query);
            assert!(
                named.iter().all(|s| s.days_in(2023).is_none()),
                "{query}: {named:?}"
            );
        }
    }

    #[test]
    fn a_span_holds_its_days_and_the_week_told_after_them() {
        let june = span(Some(2023), 6, None);
        assert!(!june.holds(day(2023, 5, 31)));
        assert!(june.holds(day(2023, 6, 1)));
        assert!(june.holds(day(2023, 7, 7)));
        assert!(!june.holds(day(2023, 7, 8)));
        assert!(!june.holds(day(2022, 6, 15)));

        let december = span(None, 12, None);
        assert!(december.holds(day(2021, 12, 24)));
        assert!(december.holds(day(2024, 1, 3)));
        assert!(!december.holds(day(2024, 1, 9)));

        let the_third = span(Some(2023), 5, Some(3));
        assert!(!the_third.holds(day(2023, 5, 2)));
        assert!(the_third.holds(day(2023, 5, 3)));
        assert!(the_third.holds(day(2023, 5, 10)));
        assert!(!the_third.holds(day(2023, 5, 11)));
    }
}
