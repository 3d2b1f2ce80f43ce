//! Timestamps bounded by date in a pattern: JSON Schema has no way to say
//! "a date-time within these days", so the days are spelt out.

use chrono::{Datelike, NaiveDate};

/// An ECMA-262 pattern for RFC 3339 date-times whose date lies in
/// `first..=last` (none when the range is empty).
pub(super) fn instant_pattern(first: NaiveDate, last: NaiveDate) -> String {
    // Digits as [0-9]: `\d` is Unicode's digits in Python's and Rust's engines.
    const TIME: &str = r"T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$";
    if first > last {
        return "^$.".to_owned(); // matches nothing
    }
    let mut dates = Vec::new();
    // Whole years between the edges' years.
    let years: Vec<String> = (first.year() + 1..last.year())
        .map(|year| format!("{year:04}"))
        .collect();
    if !years.is_empty() {
        dates.push(format!(
            "({})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])",
            years.join("|")
        ));
    }
    // Each month the edges' years contribute, with its days.
    let mut month = NaiveDate::from_ymd_opt(first.year(), first.month(), 1).unwrap_or(first);
    while month <= last {
        let whole_year_between = month.year() > first.year() && month.year() < last.year();
        if !whole_year_between {
            let next = month
                .checked_add_months(chrono::Months::new(1))
                .unwrap_or(last);
            let month_last = next.pred_opt().unwrap_or(next);
            let from = first.max(month).day();
            let to = last.min(month_last).day();
            let days: Vec<String> = (from..=to).map(|day| format!("{day:02}")).collect();
            dates.push(format!(
                "{:04}-{:02}-({})",
                month.year(),
                month.month(),
                days.join("|")
            ));
        }
        month = match month.checked_add_months(chrono::Months::new(1)) {
            Some(next) => next,
            None => break,
        };
    }
    format!("^({}){TIME}", dates.join("|"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    fn admits(first: NaiveDate, last: NaiveDate, day: NaiveDate) -> bool {
        let pattern = regex::Regex::new(&instant_pattern(first, last)).unwrap();
        pattern.is_match(&format!("{day}T12:30:00Z"))
    }

    #[test]
    fn the_instant_pattern_admits_exactly_the_dates_of_its_range() {
        let (first, last) = (date(2024, 11, 28), date(2026, 2, 3));
        assert!(admits(first, last, date(2024, 11, 28)));
        assert!(!admits(first, last, date(2024, 11, 27)));
        assert!(
            admits(first, last, date(2025, 7, 31)),
            "a whole year between"
        );
        assert!(admits(first, last, date(2026, 1, 31)));
        assert!(admits(first, last, date(2026, 2, 3)));
        assert!(!admits(first, last, date(2026, 2, 4)));
        assert!(!admits(first, last, date(2027, 1, 1)));
        assert!(
            !admits(last, first, date(2025, 7, 31)),
            "an empty range admits nothing"
        );
        let pattern = regex::Regex::new(&instant_pattern(first, last)).unwrap();
        assert!(pattern.is_match("2025-07-31T23:59:59.123456+02:00"));
        assert!(!pattern.is_match("2025-07-31 23:59:59Z"));
        assert!(!pattern.is_match("2025-07-31T24:00:00Z"));
    }
}
