//! Calendar dates and the date phrases of a question: years, months, ISO dates, relative
//! periods ("last quarter", "the past 10 years"), `before`/`after`/`since`, `between … and
//! …`, relative to the request's `today`.

use super::compare::is_comparison_at;
use super::cues::{Cues, DateCue, number_at};
use crate::text::{Token, TokenKind, month_number};

/// A calendar date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Day {
    /// Year.
    pub(crate) y: i32,
    /// Month 1..12.
    pub(crate) m: u32,
    /// Day 1..31.
    pub(crate) d: u32,
}

impl Day {
    /// Parses `YYYY-MM-DD` (a longer timestamp keeps its date part).
    pub(crate) fn parse(s: &str) -> Option<Day> {
        let s = s.get(..10)?;
        let y = s.get(..4)?.parse().ok()?;
        let m = s.get(5..7)?.parse().ok()?;
        let d = s.get(8..10)?.parse().ok()?;
        ((1..=12).contains(&m) && (1..=31).contains(&d)).then_some(Day { y, m, d })
    }

    fn days_from_civil(self) -> i64 {
        let y = i64::from(self.y) - i64::from(self.m <= 2);
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let m = i64::from(self.m);
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(self.d) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// Today (UTC) by the system clock.
    pub(crate) fn from_clock() -> Day {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Day::from_days(i64::try_from(secs / 86_400).unwrap_or(0))
    }

    fn from_days(z: i64) -> Day {
        let z = z + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        let y = yoe + era * 400 + i64::from(m <= 2);
        Day {
            y: i32::try_from(y).unwrap_or(1970),
            m: u32::try_from(m).unwrap_or(1),
            d: u32::try_from(d).unwrap_or(1),
        }
    }

    /// This day plus `n` days.
    pub(crate) fn plus_days(self, n: i64) -> Day {
        Day::from_days(self.days_from_civil() + n)
    }

    /// The first day of the month `n` months after this day's month.
    pub(crate) fn month_start_plus(self, n: i32) -> Day {
        let idx = self.y * 12 + i32::try_from(self.m).unwrap_or(1) - 1 + n;
        Day {
            y: idx.div_euclid(12),
            m: u32::try_from(idx.rem_euclid(12) + 1).unwrap_or(1),
            d: 1,
        }
    }

    /// `YYYY-MM-DD`.
    pub(crate) fn iso(self) -> String {
        format!("{:04}-{:02}-{:02}", self.y, self.m, self.d)
    }
}

pub(super) fn year_of(t: &Token) -> Option<i32> {
    if t.kind != TokenKind::Number || t.raw.len() != 4 {
        return None;
    }
    let y: i32 = t.raw.parse().ok()?;
    (1900..=2100).contains(&y).then_some(y)
}

/// Date phrases: years, months, ISO dates, relative periods, `before`/`after`/`since`,
/// `between … and …`.
pub(super) fn dates(tokens: &[Token], today: Day, c: &mut Cues) {
    let w = |i: usize| tokens.get(i).map(|t| t.lower.as_str()).unwrap_or("");
    let mut i = 0;
    while i < tokens.len() {
        // A period at i: (lo, hi, len).
        let period = |k: usize| -> Option<(Day, Day, usize)> { period_at(tokens, k, today) };
        let (prefix, plen) = match (w(i), w(i + 1)) {
            // "on or after April 10", "on or before May 3": the day itself is included.
            ("on" | "in", "or") if matches!(w(i + 2), "after" | "later" | "since") => ("since", 3),
            ("on" | "in", "or") if matches!(w(i + 2), "before" | "earlier") => ("until", 3),
            ("before" | "until" | "till" | "prior", "to") | ("earlier", "than") => ("before", 2),
            ("later", "than") => ("after", 2),
            ("before" | "until" | "till", _) => ("before", 1),
            ("after" | "since", _) => (w(i), 1),
            ("from", _) | ("between", _) => ("range", 1),
            ("in" | "during" | "on" | "for" | "within", _) => ("in", 1),
            _ => ("", 0),
        };
        // "after the year 2012", "in the year of 1995", "before year 2000": the year word
        // between the preposition and the period is part of the phrase.
        let plen = plen
            + if plen == 0 {
                0
            } else {
                year_words(tokens, i + plen)
            };
        // "more than 2000 distance", "at least 1990 points": a number after a comparison
        // is what is compared, not a year.
        let compared = plen == 0
            && year_of(&tokens[i]).is_some()
            && is_comparison_at(tokens, i.saturating_sub(3), i);
        if let Some((lo, hi, len)) = period(i + plen).filter(|_| !compared) {
            let mut end = i + plen + len;
            // "2013 or later", "2020 onwards", "March 2024 or earlier": open ranges.
            let open = match (w(end), w(end + 1)) {
                ("or" | "and", "later" | "after" | "newer" | "since") => Some((true, 2)),
                ("onwards" | "onward" | "forward", _) => Some((true, 1)),
                // "from April 10 on": the phrase ends there.
                ("on", next)
                    if prefix == "range" && !is_period_word(next) && next_is_clause(next) =>
                {
                    Some((true, 1))
                }
                ("or" | "and", "earlier" | "before" | "older" | "prior") => Some((false, 2)),
                _ => None,
            };
            let (lo, hi) = match (prefix, open) {
                ("in" | "" | "range", Some((later, len))) => {
                    end += len;
                    if later {
                        (Some(lo), None)
                    } else {
                        (None, Some(hi))
                    }
                }
                _ => match prefix {
                    "before" => (None, Some(lo)),
                    "until" => (None, Some(hi)),
                    "after" => (Some(hi), None),
                    "since" => (Some(lo), None),
                    "range" if matches!(w(end), "and" | "to" | "through" | "until") => {
                        match period(end + 1) {
                            Some((_, hi2, len2)) => {
                                end = end + 1 + len2;
                                (Some(lo), Some(hi2))
                            }
                            None => (Some(lo), Some(hi)),
                        }
                    }
                    _ => (Some(lo), Some(hi)),
                },
            };
            let start = i;
            c.dates.push(DateCue {
                start,
                end,
                lo: lo.map(Day::iso),
                hi: hi.map(Day::iso),
            });
            c.used[start..end].iter_mut().for_each(|u| *u = true);
            i = end;
            continue;
        }
        i += 1;
    }
}

/// How many words at `i` say "the year" before a year: `the year of`, `the year`, `year
/// of`, `year` (0 when no year follows them).
fn year_words(tokens: &[Token], i: usize) -> usize {
    let w = |k: usize| tokens.get(k).map(|t| t.lower.as_str()).unwrap_or("");
    [
        &["the", "year", "of"][..],
        &["the", "year"],
        &["year", "of"],
        &["year"],
    ]
    .iter()
    .find(|words| {
        words.iter().enumerate().all(|(k, word)| w(i + k) == *word)
            && tokens.get(i + words.len()).and_then(year_of).is_some()
    })
    .map_or(0, |words| words.len())
}

/// A period named at `i`: `2024`, `March 2024`, `March`, `2024-04-09`, `Q1 2024`,
/// `last month`, `this year`, `last 7 days`, `today`, `yesterday`.
pub(super) fn period_at(tokens: &[Token], i: usize, today: Day) -> Option<(Day, Day, usize)> {
    let t = tokens.get(i)?;
    let w = |k: usize| tokens.get(k).map(|t| t.lower.as_str()).unwrap_or("");
    if t.kind == TokenKind::Date {
        let d = Day::parse(&t.raw)?;
        return Some((d, d.plus_days(1), 1));
    }
    // "the first quarter of 2024", "the second half of 2023".
    if t.is("the") {
        let (lo, hi, len) = part_of_year(tokens, i + 1, today)?;
        return Some((lo, hi, len + 1));
    }
    if let Some(found) = part_of_year(tokens, i, today) {
        return Some(found);
    }
    if let Some(y) = year_of(t) {
        let lo = Day { y, m: 1, d: 1 };
        return Some((
            lo,
            Day {
                y: y + 1,
                m: 1,
                d: 1,
            },
            1,
        ));
    }
    // `10 April 2024`.
    if t.kind == TokenKind::Number
        && t.raw.len() <= 2
        && let Some(m) = tokens.get(i + 1).and_then(|n| month_number(&n.lower))
        && let Some(y) = tokens.get(i + 2).and_then(year_of)
        && let Ok(d) = t.raw.parse::<u32>()
        && (1..=31).contains(&d)
    {
        let day = Day { y, m, d };
        return Some((day, day.plus_days(1), 3));
    }
    if let Some(m) = month_number(&t.lower).filter(|_| t.kind == TokenKind::Word) {
        // `April 10, 2024` and `April 10`.
        if let Some(n) = tokens
            .get(i + 1)
            .filter(|n| n.kind == TokenKind::Number && n.raw.len() <= 2)
            && let Ok(d) = n.raw.parse::<u32>()
            && (1..=31).contains(&d)
        {
            let (y, len) = match tokens.get(i + 2).and_then(year_of) {
                Some(y) => (y, 3),
                None => (today.y, 2),
            };
            let day = Day { y, m, d };
            return Some((day, day.plus_days(1), len));
        }
        // "may" alone is too often a verb.
        if let Some(y) = tokens.get(i + 1).and_then(year_of) {
            let lo = Day { y, m, d: 1 };
            return Some((lo, lo.month_start_plus(1), 2));
        }
        if t.lower == "may" {
            return None;
        }
        let lo = Day {
            y: today.y,
            m,
            d: 1,
        };
        return Some((lo, lo.month_start_plus(1), 1));
    }
    // `H1 2024`: a half year.
    if let Some(h) = t
        .lower
        .strip_prefix('h')
        .and_then(|h| h.parse::<u32>().ok())
        && (1..=2).contains(&h)
    {
        let y = tokens.get(i + 1).and_then(year_of);
        let lo = Day {
            y: y.unwrap_or(today.y),
            m: (h - 1) * 6 + 1,
            d: 1,
        };
        return Some((lo, lo.month_start_plus(6), if y.is_some() { 2 } else { 1 }));
    }
    if let Some(q) = t
        .lower
        .strip_prefix('q')
        .and_then(|q| q.parse::<u32>().ok())
        && (1..=4).contains(&q)
    {
        let y = tokens.get(i + 1).and_then(year_of);
        let lo = Day {
            y: y.unwrap_or(today.y),
            m: (q - 1) * 3 + 1,
            d: 1,
        };
        return Some((lo, lo.month_start_plus(3), if y.is_some() { 2 } else { 1 }));
    }
    let month0 = Day {
        y: today.y,
        m: today.m,
        d: 1,
    };
    let year0 = Day {
        y: today.y,
        m: 1,
        d: 1,
    };
    match (w(i), w(i + 1)) {
        ("today", _) => Some((today, today.plus_days(1), 1)),
        ("yesterday", _) => Some((today.plus_days(-1), today, 1)),
        ("this", "month") => Some((month0, month0.month_start_plus(1), 2)),
        ("this", "year") => Some((year0, year0.month_start_plus(12), 2)),
        ("this", "week") => Some((today.plus_days(-6), today.plus_days(1), 2)),
        ("this", "quarter") => {
            let lo = quarter_start(today);
            Some((lo, lo.month_start_plus(3), 2))
        }
        ("last" | "previous" | "past", "quarter") => {
            let hi = quarter_start(today);
            Some((hi.month_start_plus(-3), hi, 2))
        }
        ("last" | "previous" | "past", "month") => Some((month0.month_start_plus(-1), month0, 2)),
        ("last" | "previous" | "past", "year") => Some((year0.month_start_plus(-12), year0, 2)),
        ("last" | "previous" | "past", "week") => Some((today.plus_days(-7), today, 2)),
        ("last" | "previous" | "past", _) => {
            let n = number_at(tokens, i + 1)? as i64;
            let unit = w(i + 2);
            let lo = match unit {
                "day" | "days" => today.plus_days(-n + 1),
                "week" | "weeks" => today.plus_days(-7 * n + 1),
                "month" | "months" => month0.month_start_plus(-i32::try_from(n).ok()?),
                "year" | "years" => year0.month_start_plus(-12 * i32::try_from(n).ok()?),
                _ => return None,
            };
            Some((lo, today.plus_days(1), 3))
        }
        _ => None,
    }
}

/// The first day of the quarter `day` is in.
pub(super) fn quarter_start(day: Day) -> Day {
    Day {
        y: day.y,
        m: (day.m - 1) / 3 * 3 + 1,
        d: 1,
    }
}

/// Words that start a period: after "from X", "on" before one of them is a preposition of
/// the next phrase, not "onwards".
pub(super) fn is_period_word(w: &str) -> bool {
    month_number(w).is_some() || matches!(w, "the" | "a" | "an")
}

/// True when `next` (the word after "from X on") starts a new clause or ends the
/// question, so "on" closes the date phrase.
pub(super) fn next_is_clause(next: &str) -> bool {
    next.is_empty()
        || matches!(
            next,
            "and" | "or" | "how" | "what" | "which" | "who" | "were" | "was" | "have" | "has"
        )
}

/// "first quarter of 2024", "2nd half 2023", "last quarter of 2024": a quarter or half of a
/// year (this year when none is written): `(lo, hi, length)`.
pub(super) fn part_of_year(tokens: &[Token], i: usize, today: Day) -> Option<(Day, Day, usize)> {
    let w = |k: usize| tokens.get(k).map(|t| t.lower.as_str()).unwrap_or("");
    let nth: u32 = match w(i) {
        "first" | "1" => 1,
        "second" | "2" => 2,
        "third" | "3" => 3,
        "fourth" | "4" => 4,
        "last" | "final" => 0,
        _ => return None,
    };
    let (months, count) = match w(i + 1) {
        "quarter" => (3, 4),
        "half" => (6, 2),
        _ => return None,
    };
    if nth > count {
        return None;
    }
    let nth = if nth == 0 { count } else { nth };
    let mut len = 2;
    if w(i + 2) == "of" {
        len += 1;
    }
    let y = match tokens.get(i + len).and_then(year_of) {
        Some(y) => {
            len += 1;
            y
        }
        // "the last quarter" alone is a relative period, read elsewhere.
        None if w(i) == "last" => return None,
        None => {
            if len == 3 {
                len -= 1;
            }
            today.y
        }
    };
    let lo = Day {
        y,
        m: (nth - 1) * months + 1,
        d: 1,
    };
    Some((
        lo,
        lo.month_start_plus(i32::try_from(months).unwrap_or(3)),
        len,
    ))
}
