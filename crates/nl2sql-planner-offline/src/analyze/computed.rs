//! "players that got more than the average number of points", "rooms whose price is
//! higher than the average price", "people older than every engineer", "colleges larger
//! than at least one college in Florida": a column compared with a value computed over
//! the rows of its own table (a scalar sub-query: `price > (SELECT AVG(price) FROM
//! products)`, `age > (SELECT MAX(age) FROM person WHERE job = 'engineer')`).
//!
//! Read only when the column is certain and the rows computed over are said: the column
//! is named after the aggregate word ([`ComputedCue`]'s end), implied by the comparative
//! ("older" → age), or named just before the comparison or inside it ("more pages than");
//! where two are named they must agree. After it, up to where the clause ends, may stand
//! only the rows' table ("of all products", "every engineer") and conditions on values of
//! that same table ("in Florida", "in the Biology department"): those narrow the rows
//! computed over, not the rows asked for. Any other name there, or another cue (a
//! grouping: "the average age for each gender"), leaves the phrase unread, and the
//! question is refused naming it.

use super::*;
use crate::intent::ComputedCue;

/// Words that may stand between a compared column and its comparison.
const LINKING: &[&str] = &[
    "is", "are", "was", "were", "be", "been", "that", "which", "who", "a", "an", "the", "has",
    "have", "had", "got", "get", "gets", "with",
];

/// Words that end the clause the computed value is named in (a comma ends it too).
const CLAUSE_END: &[&str] = &[
    "and", "or", "but", "order", "ordered", "sorted", "sort", "listed", "ranked",
];

impl Builder<'_> {
    /// Reads every comparison with a computed value it can; the unread ones are refused
    /// in [`Builder::run`].
    pub(super) fn computed_comparisons(&mut self) {
        let cues = self.cues.computed.clone();
        for cue in cues {
            let Some((filter, compared)) = self.computed_comparison(&cue) else {
                continue;
            };
            self.a
                .computed_read
                .push((cue.start, cue.end, filter.column, cue.agg));
            // "product types whose average price is higher than the average price of all
            // products": each group's aggregate is compared (HAVING), not each row.
            if let Some(n) = compared.and_then(|k| self.aggregate_naming(k))
                && let Test::VsComputed(op, agg, within) = filter.test
            {
                self.having_cues.push(n);
                let c = filter.column;
                self.agg_havings.push((
                    self.cues.aggs[n].agg,
                    c,
                    op,
                    Bound::Computed(c, agg, within),
                ));
                continue;
            }
            self.a.filters.push(filter);
        }
    }

    /// The filter, and the mention of the compared column named before the comparison
    /// (or inside it), if one was.
    fn computed_comparison(&mut self, cue: &ComputedCue) -> Option<(Filter, Option<usize>)> {
        let numeric = |m: &Mention| names_a_number_column(self.index, m);
        let free = |k: usize| !self.consumed[k];
        let after = self
            .mentions
            .iter()
            .enumerate()
            .find(|(k, m)| free(*k) && m.start == cue.end)
            .map(|(k, _)| k);
        // A mention after the phrase that is not a number column ("the average of all
        // products", "every engineer") names the rows, read below.
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
                .number_column_before(cue.start, |words| words.iter().all(|t| t.is_any(LINKING))),
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
        // Where the clause ends: the rows and their conditions stand before it.
        let from = named_after.map_or(cue.end, |k| self.mentions[k].end);
        let clause_end = (from..self.tokens.len())
            .find(|&i| {
                self.tokens[i].is_any(CLAUSE_END) || (i > from && punctuated_before(self.tokens, i))
            })
            .unwrap_or(self.tokens.len());
        // Conditions read on values there, of the same table, narrow the rows.
        let within: Vec<usize> = (0..self.a.filters.len())
            .filter(|&j| {
                self.a.filters[j]
                    .span
                    .is_some_and(|(s, e)| s >= from && e <= clause_end)
            })
            .collect();
        if within
            .iter()
            .any(|&j| self.index.columns[self.a.filters[j].column].table != table)
        {
            return None;
        }
        let in_condition = |i: usize| {
            within.iter().any(|&j| {
                self.a.filters[j]
                    .span
                    .is_some_and(|(s, e)| (s..e).contains(&i))
            })
        };
        // Every other name there is the rows' table; no other cue is read there.
        let mut rows: Vec<usize> = Vec::new();
        for (k, m) in self.mentions.iter().enumerate() {
            if m.start < from || m.start >= clause_end || in_condition(m.start) {
                continue;
            }
            match m.target {
                Target::Table(t) if t == table && free(k) => rows.push(k),
                // A word read with a condition's value ("the FL state"): of the same table.
                _ if !free(k) && m.target.table(self.index) == table => {}
                _ => return None,
            }
        }
        if (from..clause_end).any(|i| self.cues.used[i] && !in_condition(i)) {
            return None;
        }
        // A quantifier names rows ("every engineer"): something must say which.
        if cue.quantified && named_after.is_none() && rows.is_empty() && within.is_empty() {
            return None;
        }
        for k in [named_after, before].into_iter().flatten().chain(rows) {
            self.consumed[k] = true;
        }
        // The conditions move into the sub-query, in question order.
        let mut inner = Vec::with_capacity(within.len());
        for j in within.into_iter().rev() {
            inner.push(self.a.filters.remove(j));
        }
        inner.reverse();
        let filter = Filter {
            column: c,
            test: Test::VsComputed(cue.op, cue.agg, inner),
            negated: false,
            span: Some((cue.start, clause_end)),
        };
        Some((filter, before))
    }
}
