//! Whole years over a year column: many schemas keep a year as a number (`Year`,
//! `Join_Year`, `opening_year`), not a date, so "in 2004", "after 2004" or "in year 2004"
//! compares that number (`Year = 2004`, `Year > 2004`) instead of a date column's range.

use super::{Builder, CmpOp, Filter, Lit, Target, Test};
use crate::intent::DateCue;
use crate::text::split_ident;

/// A year (`YYYY`) of a bound `YYYY-01-01`; `None` for any other day.
fn year_of_bound(bound: &str) -> Option<i64> {
    let y = bound.strip_suffix("-01-01")?;
    (y.len() == 4).then(|| y.parse().ok()).flatten()
}

impl Builder<'_> {
    /// True for a column that holds a year as a number or text: one word of its name is
    /// `year` (not `years`, a duration: `Years_Played`), none is `id`, and it is not a
    /// date. It may be part of a primary key (`(member, branch, year)`).
    pub(super) fn is_year_column(&self, c: usize) -> bool {
        let col = &self.index.columns[c];
        let words = split_ident(&col.name);
        !col.is_temporal() && words.iter().any(|w| w == "year") && !words.iter().any(|w| w == "id")
    }

    /// The year column of `table`, if it has exactly one.
    fn year_column(&self, table: usize) -> Option<usize> {
        let mut found = self.index.tables[table]
            .columns
            .iter()
            .copied()
            .filter(|c| self.is_year_column(*c));
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }

    /// The year column of `table` when it has no date column.
    fn dateless_year_column(&self, table: usize) -> Option<usize> {
        self.index
            .time_column(table)
            .is_none()
            .then(|| self.year_column(table))
            .flatten()
    }

    /// The filters that read the whole years of `cue` on a year column, when the
    /// question names one, or a table with one and no date, just before the phrase ("in
    /// year 2004", "joined after 2005" where `Join_Year` was named); or when `date` (the
    /// date column of a table in use that the phrase would filter otherwise) is `None`
    /// and a table in use has a year column, or no table at most two foreign keys from
    /// the FROM table has a date but one has a year column. `None` when the phrase is not
    /// whole years.
    pub(super) fn year_filters(&self, cue: &DateCue, date: Option<usize>) -> Option<Vec<Filter>> {
        let lo = match &cue.lo {
            Some(b) => Some(year_of_bound(b)?),
            None => None,
        };
        let hi = match &cue.hi {
            Some(b) => Some(year_of_bound(b)?),
            None => None,
        };
        let named = self
            .mention_before(cue.start, 3)
            .and_then(|m| match m.target {
                Target::Column(c) if self.is_year_column(c) => Some(c),
                // "purchases in 2018", "wines produced before 2010": the named table's
                // year, unless it keeps a date.
                Target::Column(c) => self.dateless_year_column(self.index.columns[c].table),
                Target::Table(t) => self.dateless_year_column(t),
                _ => None,
            });
        let column = match (named, date) {
            (Some(c), _) => c,
            (None, Some(_)) => return None,
            (None, None) => {
                let in_use = self.tables_in_use();
                // Else the nearest table's date, and only without one the nearest year.
                in_use
                    .iter()
                    .find_map(|t| self.year_column(*t))
                    .or_else(|| {
                        self.nearest_time_column()
                            .is_none()
                            .then(|| self.nearest_column(|t| self.year_column(t)))
                            .flatten()
                    })?
            }
        };
        // The years the phrase spells, so that the plan compares with the number the
        // question wrote ("after 2004" is `> 2004`, not `>= 2005`).
        let written: Vec<i64> = self.tokens[cue.start..cue.end]
            .iter()
            .filter_map(|t| t.number())
            .filter(|x| x.fract() == 0.0)
            .map(|x| x as i64)
            .collect();
        // A year kept as text (`'2018'`) is compared as text: four digits order the same.
        let text = self.index.columns[column].class == nl2sql_state::TypeClass::Text;
        let filter = |op: CmpOp, y: i64| Filter {
            column,
            test: Test::Cmp(
                op,
                if text {
                    Lit::Date(y.to_string())
                } else {
                    Lit::Number(y as f64)
                },
            ),
            negated: false,
            span: Some((cue.start, cue.end)),
        };
        let mut out = Vec::new();
        match (lo, hi) {
            (Some(l), Some(h)) if h == l + 1 => out.push(filter(CmpOp::Eq, l)),
            (lo, hi) => {
                if let Some(l) = lo {
                    out.push(if written.contains(&l) || !written.contains(&(l - 1)) {
                        filter(CmpOp::GtEq, l)
                    } else {
                        filter(CmpOp::Gt, l - 1)
                    });
                }
                if let Some(h) = hi {
                    out.push(if written.contains(&h) || !written.contains(&(h - 1)) {
                        filter(CmpOp::Lt, h)
                    } else {
                        filter(CmpOp::LtEq, h - 1)
                    });
                }
            }
        }
        Some(out)
    }

    /// Adds the filters of a year phrase; "in 2008 or 2010" is one `IN` list, not two
    /// years at once.
    pub(super) fn add_year_filters(&mut self, cue: &DateCue, filters: Vec<Filter>) {
        let alternative = cue.start >= 2
            && self.tokens[cue.start - 1].is("or")
            && self.cues.dates.iter().any(|d| d.end == cue.start - 1);
        // The year as the value of an `IN` list (a number, or text for a text column).
        let value = |test: &Test| match test {
            Test::Cmp(CmpOp::Eq, Lit::Number(y)) => Some(serde_json::Value::from(*y as i64)),
            Test::Cmp(CmpOp::Eq, Lit::Date(y)) => Some(serde_json::Value::from(y.as_str())),
            _ => None,
        };
        if let ([f], true) = (filters.as_slice(), alternative)
            && let Some(year) = value(&f.test)
            && let Some(last) = self.a.filters.last_mut()
            && last.column == f.column
            && !last.negated
        {
            last.span = last.span.map(|(s, _)| (s, cue.end));
            if let Some(first) = value(&last.test) {
                last.test = Test::In(vec![first, year]);
                return;
            }
            if let Test::In(values) = &mut last.test {
                values.push(year);
                return;
            }
        }
        self.a.filters.extend(filters);
    }
}
