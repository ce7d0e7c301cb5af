//! Binding the cues of a question to its mentions: aggregation words to what they
//! aggregate, grouping words to what they group by, superlatives to what they rank (a
//! column, a count, a time), with the measures they create.

use super::super::intent::{CORRESPONDING, number_at};
use super::super::link::{ColumnInfo, TypeClass, nearest_before};
use super::super::text::{is_money_word, punctuated_before, stem};
use super::{Agg, Builder, Measure, Mention, ROW_NOUNS, RankKey, Target, is_singular};

impl Builder<'_> {
    /// Aggregation words bind to the next column or table.
    pub(super) fn aggregations(&mut self) -> Vec<usize> {
        let mut out = Vec::new();
        // The mention each cue bound, so that "the average and minimum weight" binds both
        // to the weight.
        let mut bound: Vec<Option<usize>> = vec![None; self.cues.aggs.len()];
        for (n, cue) in self.cues.aggs.iter().enumerate() {
            // ("studios whose average gross is above 4500000": a group's condition.)
            if self.having_cues.contains(&n) {
                continue;
            }
            // "on average, how many workers …": the count names the unit being averaged;
            // "the maximum number of pilots" over a number column: the unit maximised.
            if cue.agg == Agg::Count
                && n > 0
                && self.only_filler(self.cues.aggs[n - 1].end, cue.start)
                && match self.cues.aggs[n - 1].agg {
                    Agg::Avg => true,
                    Agg::Max | Agg::Min => {
                        cue.counts_the_unit_of(&self.cues.aggs[n - 1], self.tokens)
                            && bound[n - 1].is_some_and(|k| {
                                self.mentions[k].start >= cue.end
                                    && self.mentions[k]
                                        .column()
                                        .is_some_and(|c| self.index.columns[c].is_measure())
                            })
                    }
                    Agg::Count | Agg::Sum => false,
                }
            {
                continue;
            }
            let Some(k) = self
                .mention_after(cue.end, 5)
                .or_else(|| self.coordinated_target(n, &bound))
            else {
                // "how much of it", "how much is that": the amount of the thing named
                // just before.
                if let Some(m) = self.pronoun_measure(cue.agg, cue.start, cue.end) {
                    out.push(self.push_measure(m));
                    continue;
                }
                // "how many pubs": a counted value counts the rows of its table.
                if cue.agg == Agg::Count
                    && let Some(t) = self.mentions.iter().find_map(|m| match &m.target {
                        Target::Value { column, .. }
                            if m.start >= cue.end
                                && m.start <= cue.end + 2
                                && self.only_filler(cue.end, m.start) =>
                        {
                            Some(self.index.columns[*column].table)
                        }
                        _ => None,
                    })
                {
                    out.push(self.push_measure(Measure {
                        agg: Agg::Count,
                        column: None,
                        table: t,
                        times: None,
                        minus: None,
                        distinct: false,
                    }));
                    continue;
                }
                if let Some(w) = self.unlinked_at(cue.end, 3) {
                    self.role_unlinked.push(w);
                } else if cue.agg == Agg::Count && self.nothing_after(cue.end) {
                    // "their type and count": the subject's own count column.
                    self.count_named = true;
                }
                continue;
            };
            let m = &self.mentions[k];
            // "the total number of defects" over a table that records a count of its own
            // thing per row (`defects.defect_count`): the sum of that count.
            let total_of_counts = self.tokens[cue.start].is("total");
            // "how many units were returned": units of a table are its quantity.
            let units = self
                .tokens
                .get(cue.end)
                .is_some_and(|t| t.is_any(&["units", "pieces"]));
            let unit_column = units.then(|| self.unit_measure()).flatten();
            let replace = match m.target {
                Target::Table(_) => true,
                // A measure the question names ("units on hand") is the units counted.
                Target::Column(c) => !self.counts_units(c) && !self.index.columns[c].is_measure(),
                Target::Value { .. } => false,
            };
            let measure = match (&m.target, cue.agg) {
                (_, Agg::Count) if replace && unit_column.is_some() => {
                    unit_column.map(|c| Measure {
                        agg: Agg::Sum,
                        column: Some(c),
                        table: self.index.columns[c].table,
                        times: None,
                        minus: None,
                        distinct: false,
                    })
                }
                (Target::Table(t), Agg::Count) if cue.distinct => {
                    let key = self.index.tables[*t]
                        .columns
                        .iter()
                        .copied()
                        .find(|c| self.index.columns[*c].is_pk);
                    if key.is_some() {
                        self.distinct_rows_of(k, *t);
                    }
                    Some(Measure {
                        agg: Agg::Count,
                        column: key,
                        table: *t,
                        times: None,
                        minus: None,
                        distinct: key.is_some(),
                    })
                }
                (Target::Table(t), Agg::Count) => Some(
                    match self
                        .index
                        .count_column(*t)
                        .filter(|c| total_of_counts || self.counts_things(m, *c))
                    {
                        Some(c) => Measure {
                            agg: Agg::Sum,
                            column: Some(c),
                            table: *t,
                            times: None,
                            minus: None,
                            distinct: false,
                        },
                        None => Measure {
                            agg: Agg::Count,
                            column: None,
                            table: *t,
                            times: None,
                            minus: None,
                            distinct: false,
                        },
                    },
                ),
                (Target::Table(t), agg) => match self.index.quantity_column(*t) {
                    Some(q) => Some(Measure {
                        agg,
                        column: Some(q),
                        table: *t,
                        times: None,
                        minus: None,
                        distinct: false,
                    }),
                    None if agg == Agg::Sum => Some(Measure {
                        agg: Agg::Count,
                        column: None,
                        table: *t,
                        times: None,
                        minus: None,
                        distinct: false,
                    }),
                    None => self
                        .index
                        .time_column(*t)
                        .filter(|_| matches!(agg, Agg::Min | Agg::Max))
                        .map(|c| Measure {
                            agg,
                            column: Some(c),
                            table: *t,
                            times: None,
                            minus: None,
                            distinct: false,
                        }),
                },
                // "how many different defect types", "the number of unique customers who
                // ordered": the distinct values of the column, or the distinct rows of the
                // table (by its key).
                (Target::Column(c), Agg::Count)
                    if cue.distinct
                        || (self.cues.distinct && !self.index.columns[*c].is_measure()) =>
                {
                    Some(Measure {
                        agg: Agg::Count,
                        column: Some(*c),
                        table: self.index.columns[*c].table,
                        times: None,
                        minus: None,
                        distinct: true,
                    })
                }
                (Target::Column(c), Agg::Count) => {
                    let col = &self.index.columns[*c];
                    // "how many minutes of downtime", "how many units produced": a count of a
                    // measure's unit is its sum.
                    if col.is_measure() {
                        Some(Measure {
                            agg: Agg::Sum,
                            column: Some(*c),
                            table: col.table,
                            times: None,
                            minus: None,
                            distinct: false,
                        })
                    } else if !col.is_key
                        && col.class == TypeClass::Text
                        && !names_an_amount(col)
                        && self.index.label_column(col.table) != Some(*c)
                        && !self.a.filters.iter().any(|f| f.column == *c)
                        && self.counts_kinds(m)
                    {
                        // "the number of card types", "how many advisors are there": the
                        // values of a column that names kinds of a row (not the rows' own
                        // label), each counted once.
                        Some(Measure {
                            agg: Agg::Count,
                            column: Some(*c),
                            table: col.table,
                            times: None,
                            minus: None,
                            distinct: true,
                        })
                    } else {
                        Some(Measure {
                            agg: Agg::Count,
                            column: None,
                            table: col.table,
                            times: None,
                            minus: None,
                            distinct: false,
                        })
                    }
                }
                (Target::Column(c), agg) => {
                    let col = &self.index.columns[*c];
                    let ok = col.is_measure()
                        || (matches!(agg, Agg::Min | Agg::Max) && col.class != TypeClass::Boolean);
                    ok.then_some(Measure {
                        agg,
                        column: Some(*c),
                        table: col.table,
                        times: self.money_quantity(m, *c, agg),
                        minus: None,
                        distinct: false,
                    })
                }
                (Target::Value { .. }, _) => None,
            };
            if let Some(measure) = measure {
                self.consumed[k] = true;
                bound[n] = Some(k);
                out.push(self.push_measure(measure));
                let shared = self.columns_sharing_the_aggregation(n, k);
                out.extend(shared);
            }
        }
        out
    }

    /// "the average height and weight", "the maximum price and score of wines": columns
    /// of the same table listed right after the column cue `n` aggregates (bound as
    /// mention `k`), with no aggregation word of their own, share its aggregation (a
    /// count does not: "the number of deaths and damage"). Each must be one the
    /// aggregation can take (a measure; any ordered column for a minimum or maximum).
    /// Learned on Spider train, where such second columns were refused as unplaced.
    fn columns_sharing_the_aggregation(&mut self, n: usize, k: usize) -> Vec<usize> {
        let agg = self.cues.aggs[n].agg;
        let Some(first) = self.mentions[k].column() else {
            return Vec::new();
        };
        if agg == Agg::Count {
            return Vec::new();
        }
        let table = self.index.columns[first].table;
        let next_cue = self
            .cues
            .aggs
            .get(n + 1)
            .map_or(self.tokens.len(), |c| c.start);
        let mut out = Vec::new();
        let mut prev = k;
        for j in k + 1..self.mentions.len() {
            let m = &self.mentions[j];
            let Some(c) = m.column() else { break };
            if self.consumed[j] || m.start >= next_cue {
                break;
            }
            let gap = &self.tokens[self.mentions[prev].end..m.start];
            let listed = match gap {
                [] => punctuated_before(self.tokens, m.start),
                [and] => and.is("and"),
                _ => false,
            };
            let col = &self.index.columns[c];
            let takes = col.is_measure()
                || (matches!(agg, Agg::Min | Agg::Max) && col.class != TypeClass::Boolean);
            if !listed || col.table != table || !takes {
                break;
            }
            self.consumed[j] = true;
            out.push(self.push_measure(Measure {
                agg,
                column: Some(c),
                table,
                times: None,
                minus: None,
                distinct: false,
            }));
            prev = j;
        }
        out
    }

    /// Whether a count's mention `m` of a text column names kinds of values, not rows: its
    /// last word is plural ("card types", "advisors"), no table is named right after it
    /// ("advisors of students" may count students), and no comparison of a count follows
    /// it ("cities with more than 3 airports" counts the airports of each city).
    fn counts_kinds(&self, m: &Mention) -> bool {
        let last = &self.tokens[m.end - 1];
        let plural = last.lower.ends_with('s') && !is_singular(&last.lower);
        let table_after = self.mentions.iter().any(|n| {
            n.start > m.end && n.start <= m.end + 2 && matches!(n.target, Target::Table(_))
        });
        // No column is named between the mention and the comparison ("rooms whose
        // capacity is less than 50" compares the capacity).
        let count_compared = self.cues.comparisons.iter().any(|c| {
            c.start >= m.end
                && !self.mentions.iter().any(|n| {
                    n.start >= m.end && n.end <= c.start && matches!(n.target, Target::Column(_))
                })
        });
        plural && !table_after && !count_compared
    }

    /// The mention that the aggregation before cue `n` bound, when the two are
    /// coordinated ("the average and minimum weight", "maximum, minimum and average
    /// price": nothing but `and`, `or`, commas and `the` between them) and the mention
    /// comes after cue `n`.
    fn coordinated_target(&self, n: usize, bound: &[Option<usize>]) -> Option<usize> {
        let cue = &self.cues.aggs[n];
        let previous = self.cues.aggs.get(n.checked_sub(1)?)?;
        let k = bound[n - 1]?;
        let m = &self.mentions[k];
        // Commas are not tokens: "minimum, average" leaves the cues side by side.
        let joined = previous.end <= cue.start
            && self.tokens[previous.end..cue.start]
                .iter()
                .all(|t| t.is_any(&["and", "or", ",", "the"]));
        (joined && m.start >= cue.end && self.only_filler(cue.end, m.start)).then_some(k)
    }

    /// "how many different machines had downtime": the rows of the counted table must have
    /// rows in a table that refers to them and that the question names right after
    /// (joined, not listed).
    fn distinct_rows_of(&mut self, k: usize, t: usize) {
        let end = self.mentions[k].end;
        let other = self.mentions.iter().enumerate().find_map(|(j, m)| {
            let r = match m.target {
                Target::Table(r) => r,
                Target::Column(c) if self.index.columns[c].is_measure() => {
                    self.index.columns[c].table
                }
                _ => return None,
            };
            (j != k && !self.consumed[j] && m.start >= end && r != t && self.index.refers_to(r, t))
                .then_some((j, r))
        });
        if let Some((j, r)) = other {
            if matches!(self.mentions[j].target, Target::Table(_)) {
                self.consumed[j] = true;
            }
            if !self.a.joined.contains(&r) {
                self.a.joined.push(r);
            }
        }
    }

    /// "how many units did customers order": the number column that counts units
    /// (named `units_…`/`quantity`, or described as "Units …") nearest, by foreign keys,
    /// to the tables the question names; one whose name or description holds another word
    /// of the question ("Units returned" for "returned") first.
    fn unit_measure(&self) -> Option<usize> {
        let tables: Vec<usize> = self.mentions.iter().map(|m| self.table_of(m)).collect();
        let words: Vec<&str> = self
            .tokens
            .iter()
            .filter(|t| !super::super::text::is_stop_word(&t.lower))
            .map(|t| t.stem.as_str())
            .collect();
        self.index
            .columns
            .iter()
            .enumerate()
            .filter(|(c, col)| col.is_measure() && self.counts_units(*c))
            .filter_map(|(c, col)| {
                let d = tables
                    .iter()
                    .filter_map(|t| super::super::joins::distance(self.index, *t, col.table))
                    .min()?;
                let said = col
                    .plain
                    .iter()
                    .chain(col.description.iter().skip(1))
                    .any(|w| w != "unit" && words.contains(&w.as_str()));
                Some(((!said, d, c), c))
            })
            .min_by_key(|(k, _)| *k)
            .map(|(_, c)| c)
    }

    /// True for a number column that counts units: `units_…`, `…_quantity`, `quantity`, or
    /// described as "Units …"; never a price or cost per unit.
    fn counts_units(&self, c: usize) -> bool {
        let col = &self.index.columns[c];
        let name = col.name.to_lowercase();
        let money = ["price", "cost", "amount", "value"]
            .iter()
            .any(|w| name.contains(w));
        !money
            && (col
                .plain
                .last()
                .is_some_and(|p| ["unit", "quantity", "qty"].contains(&p.as_str()))
                || col
                    .plain
                    .first()
                    .is_some_and(|p| ["unit", "quantity", "qty"].contains(&p.as_str()))
                || col.description.first().is_some_and(|d| d == "unit"))
    }

    /// The quantity a unit price is multiplied by when a money word ("spend", "revenue")
    /// names the price: the total spent on order lines is the sum of price times quantity.
    fn money_quantity(&self, m: &Mention, price: usize, agg: Agg) -> Option<usize> {
        let word = &self.tokens[m.end - 1];
        let col = &self.index.columns[price];
        let per_unit = col.plain.iter().any(|w| w == "unit")
            && col.plain.iter().any(|w| w == "pric" || w == "cost");
        if agg != Agg::Sum || !per_unit || !is_money_word(&word.lower) {
            return None;
        }
        self.index.tables[col.table]
            .columns
            .iter()
            .copied()
            .find(|c| {
                let q = &self.index.columns[*c];
                *c != price
                    && q.is_measure()
                    && q.plain
                        .iter()
                        .any(|w| ["quantity", "qty"].contains(&w.as_str()))
            })
    }

    /// True when the words after a table mention name its rows ("defect records",
    /// "maintenance entries"): a count of rows, not of the things a count column counts.
    pub(super) fn rows_named(&self, m: &Mention) -> bool {
        self.tokens.get(m.end).is_some_and(|t| t.is_any(ROW_NOUNS))
            || self.tokens[m.start..m.end]
                .last()
                .is_some_and(|t| t.is_any(ROW_NOUNS))
    }

    /// "how many defects were found" over a table that counts its defects per row
    /// (`defect_count`) asks for the things counted, not the rows; the rows are meant when
    /// the question names them ("defect records"), asks whether they exist ("how many
    /// faults are there"), or tests the count column on each row ("faults with a count
    /// above 3").
    fn counts_things(&self, m: &Mention, count_column: usize) -> bool {
        let w = |k: usize| self.word(k);
        let there = (m.end..m.end + 3).any(|k| w(k) == "there");
        !self.rows_named(m) && !there && !self.a.filters.iter().any(|f| f.column == count_column)
    }

    /// True when no content word follows `from`.
    fn nothing_after(&self, from: usize) -> bool {
        self.tokens[from.min(self.tokens.len())..].iter().all(|t| {
            t.kind != super::super::text::TokenKind::Word
                || super::super::text::is_function_word(&t.lower)
                || super::super::text::is_stop_word(&t.lower)
        })
    }

    /// "how much of it": an amount whose target is a pronoun (or nothing) is the quantity
    /// of the table named last before the cue.
    fn pronoun_measure(&self, agg: Agg, start: usize, end: usize) -> Option<Measure> {
        if agg == Agg::Count {
            return None;
        }
        let w = |k: usize| self.word(k);
        let pronoun = matches!(
            (w(end), w(end + 1)),
            ("of", "it" | "them" | "that" | "this")
        ) || matches!(w(end), "is" | "was" | "are" | "were")
            && matches!(w(end + 1), "it" | "that" | "there")
            || w(end).is_empty();
        if !pronoun {
            return None;
        }
        let t = self.mentions.iter().rev().find_map(|m| match m.target {
            Target::Table(t) if m.end <= start => Some(t),
            _ => None,
        })?;
        let c = self.index.quantity_column(t)?;
        Some(Measure {
            agg,
            column: Some(c),
            table: t,
            times: None,
            minus: None,
            distinct: false,
        })
    }

    pub(super) fn push_measure(&mut self, m: Measure) -> usize {
        match self.a.measures.iter().position(|x| *x == m) {
            Some(i) => i,
            None => {
                self.a.measures.push(m);
                self.a.measures.len() - 1
            }
        }
    }

    /// Grouping markers bind to the next column or table (its label column). A numeric
    /// column or an aggregation after `by` is a ranking key instead.
    /// "machine count", "order counts": a table followed by `count` (a word no column
    /// name took) is the number of its rows. Returns where each starts and its measure.
    pub(super) fn noun_counts(&mut self) -> Vec<(usize, usize)> {
        let covered = self.covered();
        let mut out = Vec::new();
        for k in 0..self.mentions.len() {
            let (start, end) = (self.mentions[k].start, self.mentions[k].end);
            let Target::Table(t) = self.mentions[k].target else {
                continue;
            };
            let counted = self.tokens.get(end).is_some_and(|w| {
                w.is_any(&["count", "counts"]) && !covered[end] && !self.cues.used[end]
            });
            if self.consumed[k] || !counted {
                continue;
            }
            self.consumed[k] = true;
            let m = self.push_measure(Measure {
                agg: Agg::Count,
                column: None,
                table: t,
                times: None,
                minus: None,
                distinct: false,
            });
            out.push((start, m));
        }
        out
    }

    /// The measure of a noun count starting at `at` (or after one `the`).
    fn noun_count_at(&self, at: usize) -> Option<usize> {
        let at = if self.tokens.get(at).is_some_and(|t| t.is("the")) {
            at + 1
        } else {
            at
        };
        self.noun_counts
            .iter()
            .find(|(s, _)| *s == at)
            .map(|(_, m)| *m)
    }

    /// "Show all majors and the number of students", "the booking status code and the
    /// corresponding number of bookings": a column listed right before "and" a count, in a
    /// question with no grouping cue, is what the count is per (the only reading in which
    /// both are one answer's columns). Read only for a count, and only for a plain column
    /// mention nothing else has bound. "The different card types, and how many cards are
    /// there of each?", "different publishers together with the number of publications":
    /// an "each" that ends the question points back at that column, and "together with"
    /// or "along with" joins the two as "and" does.
    pub(super) fn groups_listed_beside_a_count(&mut self) {
        if !self
            .cues
            .groups
            .iter()
            .all(|&g| g > 0 && self.tokens[g - 1].is("each") && self.nothing_after(g))
        {
            return;
        }
        for cue in &self.cues.aggs {
            if cue.agg != Agg::Count {
                continue;
            }
            let mut at = cue.start;
            while at > 0
                && (self.tokens[at - 1].is_any(&["the", "their", "its"])
                    || self.tokens[at - 1].is_any(CORRESPONDING))
            {
                at -= 1;
            }
            let joined_with = |a: usize| {
                a > 0
                    && self.tokens[a].is("with")
                    && self.tokens[a - 1].is_any(&["together", "along"])
            };
            let Some(and) = at.checked_sub(1).and_then(|a| {
                if self.tokens[a].is("and") {
                    Some(a)
                } else if joined_with(a) {
                    Some(a - 1)
                } else {
                    None
                }
            }) else {
                continue;
            };
            let Some(mut k) = self.mentions.iter().position(|m| m.end == and) else {
                continue;
            };
            // "the different software platforms for devices, and how many": past the
            // column's own table, named after "for" or "of".
            if let Target::Table(t) = self.mentions[k].target
                && k > 0
                && let Target::Column(c) = self.mentions[k - 1].target
                && self.index.columns[c].table == t
                && self.mentions[k - 1].end + 1 == self.mentions[k].start
                && self.tokens[self.mentions[k - 1].end].is_any(&["for", "of"])
            {
                k -= 1;
            }
            // "the most common mill type, and how many are there": the superlative
            // binds the column (a frequency ranking, whose count is the one asked).
            let start = self.mentions[k].start;
            if self.consumed[k]
                || self
                    .cues
                    .supers
                    .iter()
                    .any(|s| s.end <= start && start <= s.end + 1)
            {
                continue;
            }
            // "their type and count" over rows that keep a count of their own: that
            // column, listed (see `count_named`), not a grouping.
            if let Target::Column(c) = self.mentions[k].target
                && !self.a.group_by.contains(&c)
                && !(self.nothing_after(cue.end)
                    && self
                        .index
                        .count_column(self.index.columns[c].table)
                        .is_some())
            {
                self.consumed[k] = true;
                self.a.group_by.push(c);
            }
        }
    }

    pub(super) fn groups(&mut self, agg_measures: &[usize]) -> Option<RankKey> {
        let mut rank_key = None;
        for &g in &self.cues.groups {
            if let Some(pos) = self.cues.aggs.iter().position(|a| a.start == g)
                && let Some(m) = agg_measures
                    .get(pos)
                    .copied()
                    .or(agg_measures.first().copied())
            {
                rank_key = Some(RankKey::Measure(m));
                continue;
            }
            // "by machine count": a ranking key.
            if let Some(m) = self.noun_count_at(g) {
                rank_key = Some(RankKey::Measure(m));
                continue;
            }
            // "per month", "by year": the date of the measured rows, by calendar period.
            if let Some(grain) = self.grain_at(g)
                && let Some(c) = self.grain_column()
            {
                if !self.a.group_by.contains(&c) {
                    self.a.group_by.push(c);
                    self.a.grains.push((c, grain));
                }
                continue;
            }
            let Some(k) = self.mention_after(g, 2) else {
                if let Some(w) = self.unlinked_at(g, 2) {
                    self.role_unlinked.push(w);
                }
                continue;
            };
            self.consumed[k] = true;
            let mut targets = vec![k];
            // `by factory and shift`.
            let mut last = self.mentions[k].end;
            while self.tokens.get(last).is_some_and(|t| t.is("and")) {
                match self.mention_after(last + 1, 1) {
                    Some(k2) => {
                        self.consumed[k2] = true;
                        targets.push(k2);
                        last = self.mentions[k2].end;
                    }
                    None => break,
                }
            }
            for k in targets {
                match self.mentions[k].target {
                    Target::Column(c) if self.index.columns[c].is_measure() => {
                        rank_key = Some(RankKey::Column(c));
                    }
                    Target::Column(c) => {
                        if !self.a.group_by.contains(&c) {
                            self.a.group_by.push(c);
                        }
                    }
                    // "the average quantity per production run" when the quantity is a
                    // column of the runs: the average over the runs, not one per run.
                    Target::Table(t) if self.averages_rows_of(t) => {
                        self.a.notes.push(format!(
                            "'per {}' names the rows averaged, not a grouping",
                            self.index.entity_noun(t)
                        ));
                    }
                    Target::Table(t) => {
                        if let Some(c) = self.index.label_column(t)
                            && !self.a.group_by.contains(&c)
                        {
                            self.a.group_by.push(c);
                        }
                    }
                    Target::Value { .. } => {}
                }
            }
        }
        rank_key
    }

    /// A calendar period named at `at` (after one `the`): "month", "year".
    fn grain_at(&self, at: usize) -> Option<super::Grain> {
        let w = |k: usize| self.word(k);
        let at = if w(at) == "the" { at + 1 } else { at };
        match w(at) {
            "month" | "months" => Some(super::Grain::Month),
            "year" | "years" => Some(super::Grain::Year),
            _ => None,
        }
    }

    /// The date column a calendar grouping groups: the date of the first measure's table,
    /// else of the first table the question names, else the nearest date.
    fn grain_column(&self) -> Option<usize> {
        let tables = self
            .a
            .measures
            .iter()
            .map(|m| m.table)
            .chain(self.mentions.iter().map(|m| self.table_of(m)));
        for t in tables {
            if let Some(c) = self.index.time_column(t) {
                return Some(c);
            }
        }
        None
    }

    /// True when an average of a column of `table` is asked for: each row of `table`
    /// holds one value, so "per row" is what an average already is.
    fn averages_rows_of(&self, table: usize) -> bool {
        self.a
            .measures
            .iter()
            .any(|m| m.agg == Agg::Avg && m.column.is_some() && m.table == table)
    }

    /// The subject of a frequency superlative that names nothing after it: the nearest
    /// table or column (not an amount) before `at`, with only its verb or "is" between
    /// ("the type code appears the most often", "the code that is most common").
    fn frequency_subject_before(&self, at: usize) -> Option<usize> {
        let (k, m) = nearest_before(self.mentions, at, 3)?;
        let fits = match m.target {
            Target::Table(_) => true,
            Target::Column(c) => !self.index.columns[c].is_measure(),
            Target::Value { .. } => false,
        };
        let between = &self.tokens[m.end..at];
        let plain = between.len() <= 3
            && between.iter().all(|t| {
                t.is_any(&[
                    "is", "are", "was", "were", "the", "that", "which", "appears", "appear",
                    "appeared", "occurs", "occur", "occurred", "used",
                ])
            });
        (fits && plain).then_some(k)
    }

    /// A ranking of mention `k`'s values by how often they occur: group by it, count the
    /// rows of its table, rank the groups.
    fn frequency_rank(
        &mut self,
        k: usize,
        sup_end: usize,
        desc: bool,
    ) -> Option<(RankKey, bool, Option<i64>)> {
        self.consumed[k] = true;
        let (col, table) = match self.mentions[k].target {
            Target::Column(c) => (Some(c), self.index.columns[c].table),
            Target::Table(t) => (self.index.label_column(t), t),
            Target::Value { .. } => return None,
        };
        if let Some(c) = col
            && !self.a.group_by.contains(&c)
        {
            self.a.group_by.push(c);
        }
        // "the most common genre in all tracks", "the position most common among
        // players": the rows counted are the table named after it.
        let after = self.mentions[k].end.max(sup_end);
        let table = self.counted_rows_after(after, table).unwrap_or(table);
        let m = self.push_measure(Measure {
            agg: Agg::Count,
            column: None,
            table,
            times: None,
            minus: None,
            distinct: false,
        });
        Some((RankKey::Measure(m), desc, Some(1)))
    }

    /// The rows a frequency counts, named right after `from` by "in", "among", "across"
    /// or "of" (and "all" or "the"): a table other than `own` that refers to `own` (or is
    /// linked to it through a table of pairs), or a column of `own` itself ("the most
    /// common college of authors" counts the rows whose `Author` says whose they are; it
    /// does not group by author too). The mention is consumed and recorded as naming
    /// rows, not an output.
    fn counted_rows_after(&mut self, from: usize, own: usize) -> Option<usize> {
        let mut at = from;
        if !self
            .tokens
            .get(at)?
            .is_any(&["in", "among", "across", "of"])
        {
            return None;
        }
        at += 1;
        while self
            .tokens
            .get(at)
            .is_some_and(|t| t.is_any(&["all", "the"]))
        {
            at += 1;
        }
        let (k, target) = self
            .mentions
            .iter()
            .enumerate()
            .find(|(k, m)| m.start == at && !self.consumed[*k])?;
        let t = match target.target {
            // Rows of another table about `own` rows: referring to them, or linked to them
            // through a table of pairs ("across all products": each product's
            // characteristics).
            Target::Table(t)
                if t != own
                    && (self.index.refers_to(t, own)
                        || self.index.link_table(t, own).is_some()) =>
            {
                t
            }
            // "among players" over a table whose `player` column says whose row it is: the
            // rows of the table itself.
            Target::Column(c)
                if self.index.columns[c].table == own && !self.index.columns[c].is_measure() =>
            {
                own
            }
            _ => return None,
        };
        self.consumed[k] = true;
        self.a.rows_named.push(k);
        Some(t)
    }

    /// "starting with the oldest", "beginning with the most recent", "from the most
    /// recent to the oldest": the superlative at `start..end` starts an order of every
    /// row, it picks none.
    fn starts_an_order(&self, start: usize, end: usize) -> bool {
        let w = |i: Option<usize>| i.and_then(|i| self.tokens.get(i)).map(|t| t.lower.as_str());
        let at = self.word_before_the(start);
        let before = at.and_then(|a| a.checked_sub(1));
        let starting = matches!(w(at), Some("with" | "from"))
            && matches!(
                w(before),
                Some("starting" | "beginning" | "start" | "begin")
            );
        let range = w(at) == Some("from")
            && self
                .cues
                .supers
                .iter()
                .any(|o| o.start >= end && self.ends_an_order(o.start));
        starting || range
    }

    /// "three churches that opened most recently": the count written before the table a
    /// later superlative picks rows of (with no top-N cue of its own).
    fn rows_counted_before(&self, start: usize) -> Option<i64> {
        if self.cues.top.is_some() {
            return None;
        }
        let m = self
            .mentions
            .iter()
            .rev()
            .find(|m| m.end <= start && matches!(m.target, Target::Table(_)))?;
        let at = m.start.checked_sub(1)?;
        let n = number_at(self.tokens, at)?;
        ((1.0..1000.0).contains(&n) && n.fract() == 0.0 && !self.cues.used[at]).then_some(n as i64)
    }

    /// The superlative at `start` ends "from the … to the …".
    fn ends_an_order(&self, start: usize) -> bool {
        let is = |i: Option<usize>, word: &str| i.is_some_and(|i| self.tokens[i].is(word));
        is(self.word_before_the(start), "to")
            && self
                .cues
                .supers
                .iter()
                .any(|o| o.end <= start && is(self.word_before_the(o.start), "from"))
    }

    /// The token before `start`, or before a "the" right before it.
    fn word_before_the(&self, start: usize) -> Option<usize> {
        let at = start.checked_sub(1)?;
        if self.tokens[at].is("the") {
            at.checked_sub(1)
        } else {
            Some(at)
        }
    }

    /// For a superlative from `start` to `end` that says "times" or "often" right after it
    /// ("the most times", "the greatest number of times", "most often", "most of the
    /// times") and binds to nothing: the table whose rows are counted, the table named
    /// nearest before the superlative when it refers to one named before it, else the only
    /// table whose foreign keys refer to it. On Spider train such rankings were refused as
    /// naming no measure.
    ///
    /// Where several tables refer to it, a verb right before the superlative names the
    /// one ("the product that was ordered the most often" over `Order_Items` and
    /// `Product_Suppliers`: the rows of orders), and then "times" need not be said ("the
    /// product ordered the most").
    fn times_counted(&self, start: usize, end: usize) -> Option<usize> {
        let said = self.tokens[start..(end + 3).min(self.tokens.len())]
            .iter()
            .any(|t| t.is_any(&["times", "often", "frequently"]));
        // The verb: the word before the superlative ("ordered the most"), not one the
        // question links, ending in -ed.
        let verb = start
            .checked_sub(if start >= 2 && self.tokens[start - 1].is("the") {
                2
            } else {
                1
            })
            .filter(|&v| {
                self.tokens[v].lower.ends_with("ed")
                    && !self.mentions.iter().any(|m| m.start <= v && v < m.end)
            })
            .map(|v| self.tokens[v].stem.as_str());
        let names_verb = |t: usize| {
            verb.is_some_and(|v| self.index.tables[t].plain.iter().any(|w| stem(w) == v))
        };
        let at_the_end = self.tokens[end..]
            .iter()
            .all(|t| t.is_any(&["?", ".", "often", "times", "number", "of", "the"]));
        let verb_at_the_end = verb.is_some() && at_the_end;
        if !said && !verb_at_the_end {
            return None;
        }
        let tables: Vec<usize> = self
            .mentions
            .iter()
            .filter(|m| m.end <= start)
            .filter_map(|m| match m.target {
                Target::Table(t) => Some(t),
                _ => None,
            })
            .collect();
        let (&named, earlier) = tables.split_last()?;
        // "the vehicle used in lessons for most of the times": the table named last
        // refers to one named before it, and its rows are the ones counted.
        if earlier
            .iter()
            .any(|&e| e != named && self.index.refers_directly(named, e))
        {
            return Some(named);
        }
        let referring: Vec<usize> = (0..self.index.tables.len())
            .filter(|&l| l != named && self.index.refers_directly(l, named))
            .collect();
        let by_verb: Vec<usize> = referring
            .iter()
            .copied()
            .filter(|&l| names_verb(l))
            .collect();
        match (referring.as_slice(), by_verb.as_slice()) {
            (_, [l]) => Some(*l),
            ([l], []) if said => Some(*l),
            _ => None,
        }
    }

    pub(super) fn superlatives(
        &mut self,
        agg_measures: &[usize],
        rank: &mut Option<(RankKey, bool, Option<i64>)>,
    ) {
        for s in &self.cues.supers {
            // "from the most recent to the oldest": the second names the order's end.
            if self.ends_an_order(s.start) {
                self.a.ordering_superlatives.push(s.start);
                continue;
            }
            // "starting with the oldest", "from the most recent to the oldest": every row,
            // in that order; otherwise the extreme one.
            let ordering = self.starts_an_order(s.start, s.end);
            if ordering {
                self.a.ordering_superlatives.push(s.start);
            }
            let limit = (!ordering).then(|| self.rows_counted_before(s.start).unwrap_or(1));
            // "the youngest captain", "the tallest player": the superlative names its
            // measure (an age, a height, a weight of a table the question names).
            if let Some((c, desc)) = self.implied_extreme(s.start, s.end) {
                *rank = Some((RankKey::Row(c), desc, Some(1)));
                continue;
            }
            // An aggregation right after ("highest average downtime") is the key.
            if let Some(pos) = self
                .cues
                .aggs
                .iter()
                .position(|a| a.start >= s.end && a.start <= s.end + 1)
                && let Some(&m) = agg_measures.get(pos)
            {
                // "the largest number of bedrooms" over `bedroom_count`: a number of a
                // row's own amount, which may rank the rows themselves (`bind_rank`).
                let measure = &self.a.measures[m];
                let key = match measure.column {
                    Some(c) if self.cues.aggs[pos].agg == Agg::Count && measure.agg == Agg::Sum => {
                        RankKey::Amount(m, c)
                    }
                    _ => RankKey::Measure(m),
                };
                *rank = Some((key, s.desc, Some(1)));
                continue;
            }
            // "the highest machine count".
            if let Some(m) = self.noun_count_at(s.end) {
                *rank = Some((RankKey::Measure(m), s.desc, Some(1)));
                continue;
            }
            // "the position most common among players": what is counted is named before;
            // after "among" come the rows counted.
            if s.frequency
                && self
                    .tokens
                    .get(s.end)
                    .is_some_and(|t| t.is_any(&["among", "across"]))
                && let Some(k) = self.frequency_subject_before(s.start)
            {
                if let Some(r) = self.frequency_rank(k, s.end, s.desc) {
                    *rank = Some(r);
                }
                continue;
            }
            let Some(k) = self.mention_after(s.end, 3) else {
                // "which type code appears the most often", "the code that is most
                // common": what is counted is named before.
                if s.frequency
                    && let Some(k) = self.frequency_subject_before(s.start)
                {
                    if let Some(r) = self.frequency_rank(k, s.end, s.desc) {
                        *rank = Some(r);
                    }
                    continue;
                }
                if let Some(w) = self.unlinked_at(s.end, 2) {
                    // "the 3 most recently added products": a verb the schema does not
                    // name; the ranking is still in time.
                    if !(s.time && w.to_lowercase().ends_with("ed")) {
                        self.role_unlinked.push(w);
                        continue;
                    }
                }
                // "which machine produced the most": a measure right before; "which
                // factory opened first": a date right before.
                let before = self.mentions.iter().enumerate().rev().find(|(k, m)| {
                    let fits = |c: usize| {
                        let col = &self.index.columns[c];
                        if s.time {
                            col.is_temporal()
                        } else {
                            col.is_measure()
                        }
                    };
                    !self.consumed[*k]
                        && m.end <= s.start
                        && s.start - m.end <= 2
                        && matches!(m.target, Target::Column(c) if fits(c))
                });
                match before {
                    Some((k, m)) => {
                        self.consumed[k] = true;
                        let c = m.column().unwrap_or_default();
                        *rank = Some((RankKey::Column(c), s.desc, limit));
                    }
                    // A superlative that binds to nothing keeps an earlier ranking; one
                    // in time ranks by the time of the rows; any other names nothing to
                    // rank by ("the most", "the greatest number of times").
                    _ if s.time => {
                        *rank = Some((RankKey::Time, s.desc, limit));
                    }
                    // "the vehicle used in lessons for most of the times", "the vehicle
                    // used the most times": the rows counted are those of a table that
                    // refers to the rows named before.
                    _ if rank.is_none()
                        && let Some(t) = self.times_counted(s.start, s.end) =>
                    {
                        *rank = Some((RankKey::Count(t), s.desc, limit));
                    }
                    _ if rank.is_none() => {
                        *rank = Some((RankKey::Nothing, s.desc, Some(1)));
                    }
                    _ => {}
                }
                continue;
            };
            let target = self.mentions[k].target.clone();
            if s.counted && !s.frequency && matches!(target, Target::Table(_)) {
                // "the 3 oldest machines": the table is what is listed, not a key.
                if s.time {
                    *rank = Some((RankKey::Time, s.desc, limit));
                }
                continue;
            }
            if s.frequency {
                // "most common defect type": group by it, count, rank.
                if let Some(r) = self.frequency_rank(k, s.end, s.desc) {
                    *rank = Some(r);
                }
                continue;
            }
            self.consumed[k] = true;
            let key = match target {
                // "the most recently produced products": the time of the verb's rows.
                Target::Column(c) if s.time && !self.index.columns[c].is_named_as_time() => {
                    match self.index.ranking_time_column(self.index.columns[c].table) {
                        Some(t) => RankKey::Column(t),
                        None => RankKey::Time,
                    }
                }
                Target::Column(c) => RankKey::Column(c),
                Target::Table(t) if s.time => RankKey::Latest(t),
                // "the most songs" counts them and "the most stock" sums it; "the
                // shortest song" ranks songs by a length the question does not name
                // ("the longest stoppage in minutes" names it).
                Target::Table(t)
                    if !self.tokens[s.start..s.end].iter().any(|w| {
                        // Or a price's own words: "the cheapest product" ranks by price.
                        w.is_any(&[
                            "most",
                            "least",
                            "fewest",
                            "more",
                            "fewer",
                            "cheapest",
                            "expensive",
                        ])
                    }) && !self.index.quantity_column(t).is_some_and(|q| {
                        self.mentions
                            .iter()
                            .any(|m| matches!(m.target, Target::Column(c) if c == q))
                    }) =>
                {
                    self.ranking_unread(s.start, s.end, "names no column to rank by");
                    continue;
                }
                // "the most stock": a singular (mass) noun is an amount, not a count.
                Target::Table(t)
                    if is_singular(&self.tokens[self.mentions[k].end - 1].lower)
                        && self.index.quantity_column(t).is_some() =>
                {
                    RankKey::Column(self.index.quantity_column(t).unwrap_or_default())
                }
                // "the most expensive hotels" where no price was found: a count of the
                // rows would answer another question.
                Target::Table(_)
                    if self.tokens[s.start..s.end]
                        .iter()
                        .any(|w| w.is_any(&["expensive", "costly", "cheapest", "costliest"])) =>
                {
                    self.ranking_unread(
                        s.start,
                        s.end,
                        "names a price the schema has no column for",
                    );
                    continue;
                }
                Target::Table(t) => RankKey::Count(t),
                Target::Value { .. } => continue,
            };
            *rank = Some((key, s.desc, limit));
        }
    }
}

impl Builder<'_> {
    /// Refuses the ranking spelt by `start..end`, saying why.
    fn ranking_unread(&mut self, start: usize, end: usize, why: &str) {
        let words: Vec<&str> = self.tokens[start..end]
            .iter()
            .map(|t| t.raw.as_str())
            .collect();
        self.unsupported.push(format!(
            "the ranking '{}' {why}; name the column to rank by",
            words.join(" ")
        ));
    }
}

/// Whether a column's name says it holds an amount (`room_count`, `Order_Quantity`), even
/// when its type is text: its values are no kinds of anything.
pub(super) fn names_an_amount(col: &ColumnInfo) -> bool {
    col.plain.iter().any(|w| {
        ["count", "quantity", "amount", "total"]
            .iter()
            .any(|a| stem(a) == *w)
    })
}
