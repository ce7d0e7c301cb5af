//! "players that got more than the average number of points", "products with a price
//! higher than the average price of all products", "people older than average": a column
//! compared with its own average over every row of its table (a scalar sub-query,
//! `price > (SELECT AVG(price) FROM products)`).
//!
//! Read only when the column is certain and the average is over all the rows: the column
//! is named after "average" ([`AverageCue`]'s end), implied by the comparative ("older" →
//! age), or named just before the comparison or inside it ("more pages than"); where two
//! are named they must agree. After
//! the averaged column only "of/for/across/among all <its table>" may follow before the
//! clause ends: anything else ("the average duration in zip code 94103") may narrow the
//! rows averaged, which this reading would drop, so the phrase stays unread and the
//! question is refused naming it.

use super::*;
use crate::intent::AverageCue;
use crate::link::TypeClass;

/// The most words between the compared column and the comparison ("price that is higher").
const MAX_GAP: usize = 3;

/// Words that may stand between a compared column and its comparison.
const LINKING: &[&str] = &[
    "is", "are", "was", "were", "be", "been", "that", "which", "who", "a", "an", "the", "has",
    "have", "had", "got", "get", "gets", "with",
];

/// Words that end the clause the averaged column is named in (a comma ends it too).
const CLAUSE_END: &[&str] = &[
    "and", "or", "but", "order", "ordered", "sorted", "sort", "listed", "ranked",
];

impl Builder<'_> {
    /// Reads every comparison with an average it can; the unread ones are refused later
    /// ([`compares_with_a_computed_value`]).
    pub(super) fn average_comparisons(&mut self) {
        let cues = self.cues.averages.clone();
        for cue in cues {
            if let Some(filter) = self.average_comparison(&cue) {
                self.a
                    .averages_read
                    .push((cue.start, cue.end, filter.column));
                self.a.filters.push(filter);
            }
        }
    }

    fn average_comparison(&mut self, cue: &AverageCue) -> Option<Filter> {
        let numeric = |m: &Mention| match m.target {
            Target::Column(c) => self.index.columns[c].class == TypeClass::Numeric,
            _ => false,
        };
        let free = |k: usize| !self.consumed[k];
        let after = self
            .mentions
            .iter()
            .enumerate()
            .find(|(k, m)| free(*k) && m.start == cue.end)
            .map(|(k, _)| k);
        // A mention after "average" that is not a number column ("the average of all
        // products") is the rows' table, read below; anything else is not understood.
        let named_after = after.filter(|k| numeric(&self.mentions[*k]));
        // Before the comparison ("pages above"), or inside it ("more pages than").
        let before = match cue.between {
            Some((a, b)) => {
                let inside = self
                    .mentions
                    .iter()
                    .enumerate()
                    .find(|(k, m)| free(*k) && m.start >= a && m.end == b)
                    .map(|(k, _)| k);
                // Only the column's words stand there.
                let k = inside.filter(|k| numeric(&self.mentions[*k]))?;
                let m = &self.mentions[k];
                Some(
                    self.tokens[a..m.start]
                        .iter()
                        .all(|t| t.is_any(LINKING))
                        .then_some(k)?,
                )
            }
            None => self
                .mentions
                .iter()
                .enumerate()
                .filter(|(k, m)| {
                    free(*k)
                        && numeric(m)
                        && m.end <= cue.start
                        && cue.start - m.end <= MAX_GAP
                        && self.tokens[m.end..cue.start]
                            .iter()
                            .all(|t| t.is_any(LINKING))
                })
                .max_by_key(|(_, m)| m.end)
                .map(|(k, _)| k),
        };
        let column = |k: usize| self.mentions[k].column();
        let c = match (named_after, self.implied_measure(cue.start), before) {
            (Some(a), _, Some(b)) if column(a) != column(b) => return None,
            (Some(a), _, _) => column(a)?,
            (None, Some(c), _) => c,
            (None, None, Some(b)) => column(b)?,
            (None, None, None) => return None,
        };
        let table = self.index.columns[c].table;
        // The rows averaged: "of all products", "across all the products", or nothing.
        let mut at = named_after.map_or(cue.end, |k| self.mentions[k].end);
        let mut rows = None;
        if self
            .tokens
            .get(at)
            .is_some_and(|t| t.is_any(&["of", "for", "across", "among", "over"]))
        {
            let mut k = at + 1;
            while self
                .tokens
                .get(k)
                .is_some_and(|t| t.is_any(&["all", "the", "every"]))
            {
                k += 1;
            }
            let (j, m) = self
                .mentions
                .iter()
                .enumerate()
                .find(|(j, m)| free(*j) && m.start == k)?;
            if !matches!(m.target, Target::Table(t) if t == table) {
                return None;
            }
            rows = Some(j);
            at = m.end;
        } else if named_after.is_none() && after.is_some() {
            return None;
        }
        if self.tokens.get(at).is_some_and(|t| !t.is_any(CLAUSE_END))
            && !punctuated_before(self.tokens, at)
        {
            return None;
        }
        for k in [named_after, before, rows].into_iter().flatten() {
            self.consumed[k] = true;
        }
        Some(Filter {
            column: c,
            test: Test::VsAverage(cue.op),
            negated: false,
            span: Some((cue.start, at)),
        })
    }
}
