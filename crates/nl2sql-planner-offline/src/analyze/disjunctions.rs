//! "older than 30 or from France": two conditions that "or" joins hold one or the other
//! (an `OR` group of the plan), not both. An "or" the plan cannot read that way ("names
//! or ids", "more than 8 pit stops or 5 results") is kept in
//! [`Analysis::unread_or`], so that the question is refused rather than answered as if
//! "or" were "and".
//!
//! Alternatives of one column ("from France or Germany", "in 2008 or 2010") are already
//! one `IN` list whose span holds the "or"; date phrases read their own "or" ("in 2010 or
//! later"), as do comparisons ("10 or more").

use super::*;
use crate::text::pronoun_or;

/// The most words between a condition and the "or" that joins it (each a grammar word or
/// a word naming the condition's column: "whose age is", "the hometown").
const MAX_GAP: usize = 4;

impl Builder<'_> {
    pub(super) fn disjunctions(&mut self) {
        for i in 0..self.tokens.len() {
            // ("he or she" is one person.)
            if !self.tokens[i].is("or") || self.cues.used[i] || pronoun_or(self.tokens, i) {
                continue;
            }
            let inside = self
                .a
                .filters
                .iter()
                .any(|f| f.span.is_some_and(|(s, e)| s < i && i < e));
            if inside {
                continue;
            }
            let left = self.condition_beside(i, false);
            let right = self.condition_beside(i, true);
            match (left, right) {
                (Some(l), Some(r)) if l != r => self.join_alternatives(l, r),
                _ => self.a.unread_or.push(i),
            }
        }
        if !self.a.alternatives.is_empty() {
            self.a
                .notes
                .push("conditions joined by 'or': either one holds".into());
        }
    }

    /// The filter nearest before (or after) the "or" at `at`, with only words of its own
    /// between them.
    fn condition_beside(&self, at: usize, after: bool) -> Option<usize> {
        self.a
            .filters
            .iter()
            .enumerate()
            .filter_map(|(k, f)| {
                let (s, e) = f.span?;
                let (from, to) = if after { (at + 1, s) } else { (e, at) };
                (from <= to && self.gap_of(from, to, f.column)).then(|| (k, to - from))
            })
            .min_by_key(|(_, gap)| *gap)
            .map(|(k, _)| k)
    }

    /// Whether the words `from..to` only lead to a condition on `column`: at most
    /// [`MAX_GAP`], each a grammar word or part of a mention of that column or its table.
    fn gap_of(&self, from: usize, to: usize, column: usize) -> bool {
        to - from <= MAX_GAP && self.leads_to(from, to, column, false)
    }

    /// Whether the words `from..to` only lead to a condition on `column`: each a grammar
    /// word (not "and" or "or") or part of a mention of that column or its table; with
    /// `rows`, also a word for the table's rows: another of its columns ("authors with a
    /// score above 90") or a row noun ("records of an attendance below 100").
    pub(super) fn leads_to(&self, from: usize, to: usize, column: usize, rows: bool) -> bool {
        let table = self.index.columns[column].table;
        (from..to).all(|i| {
            let t = &self.tokens[i];
            (is_function_word(&t.lower) && !t.is_any(&["and", "or"]))
                || (rows && t.is_any(ROW_NOUNS))
                || self.mentions.iter().any(|m| {
                    m.start <= i
                        && i < m.end
                        && match m.target {
                            Target::Column(c) => {
                                c == column || (rows && self.index.columns[c].table == table)
                            }
                            Target::Table(t) => t == table,
                            Target::Value { .. } => false,
                        }
                })
        })
    }

    /// Puts filters `l` and `r` in one group of alternatives (joining the groups they are
    /// already in).
    fn join_alternatives(&mut self, l: usize, r: usize) {
        let groups = &mut self.a.alternatives;
        let of = |groups: &[Vec<usize>], k: usize| groups.iter().position(|g| g.contains(&k));
        match (of(groups, l), of(groups, r)) {
            (Some(a), Some(b)) if a == b => {}
            (Some(a), Some(b)) => {
                let moved = groups.remove(b.max(a));
                let keep = b.min(a);
                groups[keep].extend(moved);
                groups[keep].sort_unstable();
            }
            (Some(a), None) => groups[a].push(r),
            (None, Some(b)) => {
                groups[b].push(l);
                groups[b].sort_unstable();
            }
            (None, None) => groups.push(vec![l, r]),
        }
    }
}
