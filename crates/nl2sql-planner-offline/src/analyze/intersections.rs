//! "customers who have used both the service A and the service B", "countries that have
//! both managers above 50 and managers below 46": two conditions joined by "both … and …"
//! each hold on some row of every answer, not both on one row (no row is of two services;
//! no manager is above 50 and below 46). The plan keeps the rows where either holds and
//! groups them by the outputs; a group is an answer when each condition held on one of
//! its rows ([`Both`]: `HAVING SUM(CASE WHEN … THEN 1 ELSE 0 END) > 0` per condition).
//! That is the intersection of the answers of each condition alone, as SQL's `INTERSECT`
//! of the two queries would give it: the same output values, each once.
//!
//! Read only where the conditions are plain (each right after "both" and after its "and",
//! with only grammar words or words of its own table between: its column, the table,
//! another of its columns, a row noun) and the outputs are plain columns; anything else
//! stays unread, and the coverage check refuses the question naming "both".

use super::*;
use crate::intent::both_positions;

/// The most words between "both" (or "and") and the condition it leads to.
const MAX_LEAD: usize = 4;

impl Builder<'_> {
    pub(super) fn intersections(&mut self) {
        let found: Vec<Both> = both_positions(self.tokens)
            .filter_map(|at| self.both_conditions(at).map(|filters| Both { at, filters }))
            .collect();
        if found.is_empty() {
            return;
        }
        let Some((outputs, rows)) = self.answer_columns(&found) else {
            return;
        };
        if !self.a.measures.is_empty()
            || !self.a.group_by.is_empty()
            || !self.a.having.is_empty()
            || self.a.limit.is_some()
            || !self.a.absent.is_empty()
        {
            return;
        }
        for b in found {
            let filters = self.one_condition_per_value(b.filters);
            self.a.both.push(Both { at: b.at, filters });
        }
        self.a
            .outputs
            .retain(|o| matches!(o, Output::Column(c) if outputs.contains(c)));
        self.a.order.retain(|(o, _)| self.a.outputs.contains(o));
        let named: Vec<usize> = (0..self.mentions.len())
            .filter(|k| matches!(self.mentions[*k].target, Target::Column(c) if rows.contains(&c)))
            .collect();
        self.a.rows_named.extend(named);
        self.group_by_outputs();
        self.a
            .notes
            .push("'both … and …': each condition holds on some row of every answer".into());
    }

    /// The output columns the answers are the groups of, and the columns that only name
    /// the rows the conditions are about; `None` when the outputs cannot be groups.
    ///
    /// Not outputs: a column a condition tests (grouped by it, no group could hold both
    /// conditions: "customers who have order status both 'On Road' and 'Shipped'"), or
    /// one that only names the rows the conditions are about ("committees that have
    /// delegates from both parties"). The rest must be plain columns, and not quantities
    /// (a year is not one): the answers are things that have rows of each kind (names,
    /// codes, places, years), and a quantity ("products made on both machines" reading
    /// "made" as the quantity produced) would split them by it.
    fn answer_columns(&self, found: &[Both]) -> Option<(Vec<usize>, Vec<usize>)> {
        let tested: Vec<usize> = found
            .iter()
            .flat_map(|b| &b.filters)
            .map(|k| self.a.filters[*k].column)
            .collect();
        let mut outputs = Vec::new();
        let mut rows = Vec::new();
        for o in &self.a.outputs {
            let Output::Column(c) = *o else { return None };
            if tested.contains(&c) {
                continue;
            }
            if self.names_rows(c, found) {
                rows.push(c);
            } else if self.index.columns[c].is_measure() && !self.is_year_column(c) {
                return None;
            } else {
                outputs.push(c);
            }
        }
        (!outputs.is_empty()).then_some((outputs, rows))
    }

    /// The conditions of an intersection, one per value where it is one list of values
    /// ("both milk and cat": `= 'Milk'`, `= 'Cat'`).
    fn one_condition_per_value(&mut self, filters: Vec<usize>) -> Vec<usize> {
        let [k] = filters[..] else { return filters };
        let Test::In(values) = self.a.filters[k].test.clone() else {
            return filters;
        };
        let mut split = vec![k];
        self.a.filters[k].test = Test::In(values[..1].to_vec());
        for v in &values[1..] {
            split.push(self.a.filters.len());
            self.a.filters.push(Filter {
                test: Test::In(vec![v.clone()]),
                ..self.a.filters[k].clone()
            });
        }
        split
    }

    /// Whether every mention of column `c` (or of a table whose label it is) names the
    /// rows the conditions are about, not an output: between a "have" and the "both" it
    /// leads to ("committees that have delegates from both …"), or inside the conditions
    /// ("colleges that have both authors with a score above 90 and authors …", "the
    /// starting years shared by technicians from team CLE and CWS").
    fn names_rows(&self, c: usize, found: &[Both]) -> bool {
        let names_c = |m: &&Mention| match m.target {
            Target::Column(x) => x == c,
            // The label a table mention stands for ("shared by technicians from …").
            Target::Table(t) => self.index.label_column(t) == Some(c),
            Target::Value { .. } => false,
        };
        let mut mentions = self.mentions.iter().filter(names_c).peekable();
        mentions.peek().is_some()
            && mentions.all(|m| {
                found.iter().any(|b| {
                    let had = m.end <= b.at
                        && b.at - m.end <= MAX_LEAD
                        && m.start > 0
                        && self.tokens[m.start - 1].is_any(&["have", "has", "had"]);
                    let end = b
                        .filters
                        .iter()
                        .filter_map(|k| self.a.filters[*k].span)
                        .map(|(_, e)| e)
                        .max()
                        .unwrap_or(b.at);
                    had || (b.at < m.start && m.end <= end)
                })
            })
    }

    /// The conditions "both" at `at` joins: a list of values of one column right after it
    /// ("both milk and cat"), or the condition right after it and the one right after the
    /// next "and" ("both performances with more than 2000 attendees and performances with
    /// less than 1000 attendees").
    fn both_conditions(&self, at: usize) -> Option<Vec<usize>> {
        let usable = |k: usize| {
            let f = &self.a.filters[k];
            !f.negated && self.a.alternatives_of(k).is_none() && f.span.is_some()
        };
        let first = self.condition_after(at + 1, usable)?;
        let (_, end) = self.a.filters[first].span?;
        if let Test::In(values) = &self.a.filters[first].test
            && values.len() >= 2
        {
            let (start, _) = self.a.filters[first].span?;
            let joined = self.tokens[start..end].iter().any(|t| t.is("and"));
            let either = self.tokens[start..end].iter().any(|t| t.is("or"));
            return (joined && !either).then(|| vec![first]);
        }
        let and = (end..self.tokens.len().min(end + 2)).find(|i| self.tokens[*i].is("and"))?;
        if !(end..and).all(|i| is_function_word(&self.tokens[i].lower)) {
            return None;
        }
        let second = self.condition_after(and + 1, |k| k != first && usable(k))?;
        Some(vec![first.min(second), first.max(second)])
    }

    /// The filter whose span starts nearest after `from`, with at most [`MAX_LEAD`] words
    /// between, each a grammar word (not "and"/"or") or a word of the filter's table
    /// ([`Builder::leads_to`] with its rows).
    fn condition_after(&self, from: usize, usable: impl Fn(usize) -> bool) -> Option<usize> {
        self.a
            .filters
            .iter()
            .enumerate()
            .filter(|(k, _)| usable(*k))
            .filter_map(|(k, f)| {
                let (s, _) = f.span?;
                (s >= from && s - from <= MAX_LEAD && self.leads_to(from, s, f.column, true))
                    .then_some((k, s))
            })
            .min_by_key(|(_, s)| *s)
            .map(|(k, _)| k)
    }
}
