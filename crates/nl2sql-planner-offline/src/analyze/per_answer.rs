//! Conditions on rows an answer has many of, counted per answer ([`Analysis::per_answer`]):
//! "artists who did not have an exhibition in 2004" (no exhibition row of the artist is in
//! 2004), "movies that were not reviewed by Chris Jackson" (no rating row of the movie is
//! his), "schools with players in the mid position but not in the goalie position" (some
//! tryout row is mid, none is goalie). A row filter cannot say these: `WHERE year <> 2004`
//! keeps artists with an exhibition in another year, and an anti-join (`IS NULL`) with
//! the condition drops every artist who has one. The related rows are left-joined, the
//! answers grouped by the outputs, and each condition counted in `HAVING`: `SUM(CASE WHEN
//! <condition> THEN 1 ELSE 0 END) = 0` (none) or `> 0` (some). That is SQL's `EXCEPT`
//! (and `INTERSECT`) of the answers, on the output values.
//!
//! Read only where the answers are plain columns of the base table or of tables each of
//! its rows has one row of; elsewhere the question stays refused.

use super::*;

impl Builder<'_> {
    /// "did not have an exhibition in 2004": each absent table with conditions behind it
    /// becomes "no related row meets the conditions". False (nothing changed) when an
    /// absent table has no condition or the answers cannot be grouped.
    pub(super) fn absent_with_conditions(&mut self) -> bool {
        let index = self.index;
        let base = self.a.base;
        let mut groups: Vec<(Vec<usize>, bool)> = Vec::new();
        for &x in &self.a.absent {
            let behind: Vec<usize> = (0..self.a.filters.len())
                .filter(|k| {
                    let t = index.columns[self.a.filters[*k].column].table;
                    t != base && (t == x || index.refers_to(x, t))
                })
                .collect();
            if behind.is_empty() {
                return false;
            }
            groups.push((behind, false));
        }
        if !self.answers_are_groups() {
            return false;
        }
        self.a.absent.clear();
        self.count_per_answer(groups);
        true
    }

    /// "not reviewed by Chris Jackson" over movies, which have many reviews: each
    /// negated value (filter indexes `negated`) becomes "no related row has it". False
    /// (nothing changed) when the answers cannot be grouped.
    pub(super) fn negated_related_values(&mut self, negated: &[usize]) -> bool {
        if !self.a.absent.is_empty()
            || negated.iter().any(|k| self.a.or_group(*k).is_some())
            || !self.answers_are_groups()
        {
            return false;
        }
        for &k in negated {
            self.a.filters[k].negated = false;
        }
        self.count_per_answer(negated.iter().map(|k| (vec![*k], false)).collect());
        true
    }

    /// "the countries that do not have a stadium opened after 2006": the base table's
    /// rows grouped by the answers, none of a group's rows meeting the `conditions`. False
    /// (nothing changed) when the answers cannot be grouped.
    pub(super) fn group_values_without(&mut self, conditions: Vec<usize>) -> bool {
        if !self.answers_are_groups() {
            return false;
        }
        self.count_per_answer(vec![(conditions, false)]);
        true
    }

    /// Whether the answers can be the groups of the outputs: plain columns of the base
    /// table or of tables each base row has one row of, with no measure, grouping, group
    /// filter, limit or intersection of their own.
    fn answers_are_groups(&self) -> bool {
        let index = self.index;
        let base = self.a.base;
        !self.a.outputs.is_empty()
            && self.a.measures.is_empty()
            && self.a.group_by.is_empty()
            && self.a.having.is_empty()
            && self.a.limit.is_none()
            && self.a.both.is_empty()
            && self.a.outputs.iter().all(|o| match o {
                Output::Column(c) => {
                    let t = index.columns[*c].table;
                    t == base || index.refers_to(base, t)
                }
                Output::Measure(_) => false,
            })
    }

    /// Counts `groups` per answer; the other conditions on rows the answers have many of
    /// must then hold on some row of the answer (one more group), since the related rows
    /// are no longer filtered.
    fn count_per_answer(&mut self, mut groups: Vec<(Vec<usize>, bool)>) {
        let index = self.index;
        let base = self.a.base;
        let counted: Vec<usize> = groups.iter().flat_map(|(g, _)| g.clone()).collect();
        let present: Vec<usize> = (0..self.a.filters.len())
            .filter(|k| {
                let t = index.columns[self.a.filters[*k].column].table;
                !counted.contains(k)
                    && t != base
                    && !index.refers_to(base, t)
                    && self.a.or_group(*k).is_none()
            })
            .collect();
        if !present.is_empty() {
            groups.insert(0, (present, true));
        }
        // A table joined only so that the answers have rows there was named by the
        // negated verb ("customers who never ordered Latte"): an answer without such rows
        // meets "none" too.
        if groups.iter().any(|(_, some)| !some) {
            self.a.joined.clear();
        }
        self.a.per_answer = groups;
        self.group_by_outputs();
        self.a.notes.push(
            "conditions on related rows counted per answer (some row meets it, or none)".into(),
        );
    }

    /// The answers are the groups of the output columns (each once): `GROUP BY` them, no
    /// `DISTINCT`.
    pub(super) fn group_by_outputs(&mut self) {
        let mut group_by: Vec<usize> = Vec::new();
        for o in &self.a.outputs {
            if let Output::Column(c) = o
                && !group_by.contains(c)
            {
                group_by.push(*c);
            }
        }
        self.a.group_by = group_by;
        self.a.distinct = false;
    }
}
