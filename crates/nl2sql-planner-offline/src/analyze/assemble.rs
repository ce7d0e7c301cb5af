//! The second half of question analysis: turning the bound cues (measures, groups,
//! rankings, count conditions) into outputs, the FROM table, date filters and the order.

use std::collections::BTreeSet;

use super::super::link::{PLACE_WORDS, TypeClass};
use super::super::text::stem;

use super::{
    Agg, Bound, Builder, CmpOp, EveryColumn, Filter, Having, Lit, Measure, Output, RankKey, Target,
    Test, Unlinked, is_function_word, punctuated_before,
};

/// What the question is about: the mention that names the rows or attribute asked for,
/// the column that answers it, and its table.
#[derive(Clone, Copy)]
struct Entity {
    mention: Option<usize>,
    column: Option<usize>,
    table: Option<usize>,
    /// The entity is an attribute of the ranked rows (not a table's label): "which
    /// operator produced the most" groups by it.
    attribute: bool,
}

/// How a ranking was bound: rows ordered by a column, or groups by a measure.
#[derive(Default)]
struct Ranking {
    row_rank: Option<(usize, bool, Option<i64>)>,
    order_measure: Option<(usize, bool)>,
}

/// Words of column names that say a column holds a time (beside dates and years).
const TIME_WORDS: &[&str] = &["time", "timestamp", "hour", "day", "month", "when"];

/// Words of column or table names that say they hold a place, beside the place columns'
/// words the linker knows (`link::PLACE_WORDS`).
#[rustfmt::skip]
const MORE_PLACE_WORDS: &[&str] = &[
    "address", "place", "venue", "room", "building", "county", "street", "site", "hometown",
    "district", "area", "zip", "postcode", "stadium", "airport", "station", "campus", "circuit",
    "track", "arena", "continent", "destination", "origin", "latitude", "longitude", "lat",
    "long",
];

/// A plain aggregate of `column` (or of rows) over `table`.
fn plain(agg: Agg, column: Option<usize>, table: usize) -> Measure {
    Measure {
        agg,
        column,
        table,
        times: None,
        minus: None,
        distinct: false,
    }
}

impl Builder<'_> {
    /// Binds the count and sum conditions and the ranking, then the outputs.
    pub(super) fn assemble(
        &mut self,
        rank: Option<(RankKey, bool, Option<i64>)>,
        count_havings: Vec<(usize, CmpOp, f64, bool)>,
    ) -> Result<(), Unlinked> {
        let entity = self.entity_reading();
        self.bind_count_conditions(&entity, count_havings);
        self.bind_aggregate_conditions(&entity)?;
        let rank = rank.map(|(key, desc, n)| {
            let counted = entity.mention.and_then(|k| self.count_before(k));
            match (counted, self.cues.top) {
                (Some(c), None) => (key, desc, Some(c)),
                _ => (key, desc, n),
            }
        });
        if rank.is_none() {
            self.group_by_the_attribute_asked_with_which(&entity);
        }
        let explicit_groups = !self.a.group_by.is_empty();
        let ranking = match rank {
            Some((key, desc, n)) => self.bind_rank(&entity, key, desc, n, explicit_groups)?,
            None => Ranking::default(),
        };
        let done = self.finish_outputs(
            entity.mention,
            entity.column,
            entity.table,
            ranking.row_rank,
            ranking.order_measure,
        );
        self.ungroup_the_counted_rows_label();
        done?;
        self.answers_when_or_where()?;
        self.relates_no_two_rows_of_one_table()?;
        self.repeats_no_more_than_the_question()
    }

    /// "What are the first name and last name of Linda Smith's advisor?", where the
    /// schema cannot lead from a student to her advisor: a plan whose outputs include
    /// two columns each held to the one value the question gives (`Fname = 'Linda'`,
    /// `LName = 'Smith'`) answers with the question's own words, so what was asked is
    /// about other rows. Refused. On Spider train the two such answers were wrong and no
    /// right answer had that shape (one such column, "the name and age of the student
    /// named Linda", is common and right).
    fn repeats_no_more_than_the_question(&self) -> Result<(), Unlinked> {
        let index = self.index;
        let held: Vec<usize> = self
            .a
            .outputs
            .iter()
            .filter_map(|o| match o {
                Output::Column(c) => Some(*c),
                Output::Measure(_) => None,
            })
            .filter(|c| {
                self.a.filters.iter().any(|f| {
                    f.column == *c
                        && !f.negated
                        && match &f.test {
                            Test::Cmp(CmpOp::Eq, _) => true,
                            Test::In(values) => values.len() == 1,
                            _ => false,
                        }
                })
            })
            .collect();
        if held.len() < 2 {
            return Ok(());
        }
        let names: Vec<String> = held
            .iter()
            .map(|c| {
                let col = &index.columns[*c];
                format!("{}.{}", index.tables[col.table].name, col.name)
            })
            .collect();
        Err(Unlinked {
            words: Vec::new(),
            reason: format!(
                "the answer would only repeat the values the question gives for {}; \
                 name the table whose rows are asked for",
                names.join(" and ")
            ),
        })
    }

    /// "The employees who report to Nancy Edwards": a column that refers to another row
    /// of its own table (`reports_to`), shown beside a condition on that table, asks for
    /// the rows related to the ones the condition picks, which takes the table twice. The
    /// plan reads it once (it would list Nancy and her own manager's id), so it is
    /// refused. On Spider train both such answers were wrong.
    fn relates_no_two_rows_of_one_table(&self) -> Result<(), Unlinked> {
        let index = self.index;
        let self_reference = self.a.outputs.iter().find_map(|o| {
            let Output::Column(c) = o else { return None };
            let col = &index.columns[*c];
            index
                .foreign_keys
                .iter()
                .any(|f| f.to == col.table && f.leads_from(col))
                .then_some(*c)
        });
        let Some(c) = self_reference else {
            return Ok(());
        };
        let table = index.columns[c].table;
        if !self
            .a
            .filters
            .iter()
            .any(|f| index.columns[f.column].table == table)
        {
            return Ok(());
        }
        Err(Unlinked {
            words: Vec::new(),
            reason: format!(
                "{}.{} refers to other rows of {}, and a plan reads that table once",
                index.tables[table].name, index.columns[c].name, index.tables[table].name
            ),
        })
    }

    /// "When did Linda Smith visit Subway?", "Where is the history department?": a
    /// question that opens with "when" asks for a time, one that opens with "where" for a
    /// place. A plan that shows neither (no date, time or year among its outputs; no
    /// column or table named as a place) answers another question, and is refused. Of
    /// the four such plans on Spider train, three were wrong.
    fn answers_when_or_where(&self) -> Result<(), Unlinked> {
        let Some(first) = self.tokens.first() else {
            return Ok(());
        };
        let columns: Vec<usize> = self
            .a
            .outputs
            .iter()
            .filter_map(|o| match o {
                Output::Column(c) => Some(*c),
                Output::Measure(m) => self.a.measures.get(*m).and_then(|m| m.column),
            })
            .collect();
        let index = self.index;
        let (answered, asks) = if first.is("when") {
            let time = columns.iter().any(|c| {
                let col = &index.columns[*c];
                col.is_named_as_time()
                    || col
                        .plain
                        .iter()
                        .any(|w| TIME_WORDS.iter().any(|t| stem(t) == *w))
            });
            (time, "a time, and the plan shows no date or time")
        } else if first.is("where") {
            let place = columns.iter().any(|c| {
                let col = &index.columns[*c];
                col.plain
                    .iter()
                    .chain(&index.tables[col.table].plain)
                    .any(|w| {
                        PLACE_WORDS
                            .iter()
                            .chain(MORE_PLACE_WORDS)
                            .any(|p| stem(p) == *w)
                    })
            });
            (place, "a place, and the plan shows none")
        } else {
            return Ok(());
        };
        if answered {
            return Ok(());
        }
        // No word is left unplaced: the reason names the question word.
        Err(Unlinked {
            words: Vec::new(),
            reason: format!("'{}' asks for {asks}", first.raw),
        })
    }

    /// "The most common country across members", "the genre most frequent across all
    /// tracks": the rows counted are members (tracks); grouping also by each counted row's
    /// own label would count every row once. The label leaves the grouping (and the
    /// outputs) when the other keys are the counted table's own columns or columns of a
    /// table it refers to. On Spider train, rankings with such a second key were wrong 24
    /// times in 40.
    fn ungroup_the_counted_rows_label(&mut self) {
        let counted: Vec<usize> = self
            .a
            .measures
            .iter()
            .filter(|m| m.agg == Agg::Count && m.column.is_none() && !m.distinct)
            .map(|m| m.table)
            .collect();
        for t in counted {
            let Some(label) = self.index.label_column(t) else {
                continue;
            };
            if self.a.group_by.len() < 2 || !self.a.group_by.contains(&label) {
                continue;
            }
            let index = self.index;
            let others_belong = self.a.group_by.iter().filter(|c| **c != label).all(|c| {
                let owner = index.columns[*c].table;
                owner == t
                    || index
                        .foreign_keys
                        .iter()
                        .any(|fk| fk.from == t && fk.to == owner)
            });
            if others_belong {
                self.a.group_by.retain(|c| *c != label);
                self.a.outputs.retain(|o| *o != Output::Column(label));
                self.a.order.retain(|(o, _)| *o != Output::Column(label));
            }
        }
    }

    /// The entity of the question (marked consumed), with the column that answers it.
    fn entity_reading(&mut self) -> Entity {
        let mention = self.entity();
        if let Some(k) = mention {
            self.consumed[k] = true;
        }
        let who = self.tokens.first().is_some_and(|t| t.is("who"));
        let column = mention.and_then(|k| match self.mentions[k].target {
            // "who did maintenance": rows without a name of their own answer "who" with
            // the person column that records who acted.
            Target::Table(t) if who && self.index.label_is_key(t) => self
                .index
                .person_column(t)
                .or_else(|| self.index.label_column(t)),
            Target::Table(t) => self.index.label_column(t),
            Target::Column(c) => Some(c),
            Target::Value { .. } => None,
        });
        let attribute = mention.is_some_and(|k| {
            matches!(self.mentions[k].target, Target::Column(c)
                if !self.index.columns[c].is_key
                    && self.index.label_column(self.index.columns[c].table) != Some(c))
        });
        Entity {
            mention,
            column,
            table: mention.map(|k| self.table_of(&self.mentions[k])),
            attribute,
        }
    }

    /// Adds `column` to the grouping unless it is there.
    fn group_by_once(&mut self, column: usize) {
        if !self.a.group_by.contains(&column) {
            self.a.group_by.push(column);
        }
    }

    /// Count conditions: `factories with more than 2 machines`.
    fn bind_count_conditions(
        &mut self,
        entity: &Entity,
        count_havings: Vec<(usize, CmpOp, f64, bool)>,
    ) {
        for (t, op, v, rows) in count_havings {
            // "defect records with 6 or more defects": a table that counts its own things
            // per row compares that count, on each row when the rows are what is listed,
            // else as each group's total ("defect types with more than 7 defects").
            if let Some(c) = self.index.count_column(t).filter(|_| !rows) {
                let rows_listed = entity
                    .mention
                    .is_some_and(|k| self.mentions[k].target == Target::Table(t));
                if rows_listed {
                    self.a.filters.push(Filter {
                        column: c,
                        test: Test::Cmp(op, Lit::Number(v)),
                        negated: false,
                        span: None,
                    });
                } else {
                    self.agg_havings.push((Agg::Sum, c, op, Bound::Number(v)));
                }
                continue;
            }
            let m = self.push_measure(plain(Agg::Count, None, t));
            self.a.having.push(Having {
                measure: m,
                op,
                value: Bound::Number(v),
            });
            if let Some(c) = entity.column {
                self.group_by_the_named_rows(entity, t);
                self.group_by_once(c);
            }
        }
    }

    /// Conditions on a group's aggregate: `shifts that produced more than 1000 units in
    /// total`, `studios whose average gross is above 4500000`.
    fn bind_aggregate_conditions(&mut self, entity: &Entity) -> Result<(), Unlinked> {
        for (agg, c, op, v) in std::mem::take(&mut self.agg_havings) {
            let existing = self
                .a
                .measures
                .iter()
                .position(|m| m.agg == agg && m.column == Some(c) && m.times.is_none());
            let m = existing.unwrap_or_else(|| {
                self.push_measure(plain(agg, Some(c), self.index.columns[c].table))
            });
            self.a.having.push(Having {
                measure: m,
                op,
                value: v,
            });
            match entity.column {
                Some(e) if e != c => {
                    if agg != Agg::Sum {
                        self.group_by_the_named_rows(entity, self.index.columns[c].table);
                    }
                    self.group_by_once(e);
                }
                // "the average gross above 4500000" names no groups: a condition on the
                // average of every row is not what was asked.
                _ if agg != Agg::Sum => {
                    return Err(Unlinked {
                        words: Vec::new(),
                        reason: format!(
                            "the condition on the {} of {} names no groups to compute it for; \
                             name what it is per (e.g. 'for each …')",
                            crate::build::agg_word(agg),
                            self.index.columns[c].name
                        ),
                    });
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// "Which warehouse holds the stock, and how much of it": an attribute asked for with
    /// "which" next to an amount is what the amount is per.
    fn group_by_the_attribute_asked_with_which(&mut self, entity: &Entity) {
        if !self.a.measures.is_empty()
            && self.a.group_by.is_empty()
            && let Some(k) = entity.mention
            && self.mentions[k].start == 1
            && self.tokens[0].is_any(&["which", "who"])
            && let Target::Column(c) = self.mentions[k].target
            && !self.index.columns[c].is_key
            && !self.index.columns[c].is_measure()
        {
            self.a.group_by.push(c);
        }
    }

    /// Binds a ranking by `key` (descending when `desc`, `n` rows or groups).
    ///
    /// A ranking that names nothing to rank by (no measure, no date) is refused: its rows
    /// would be whichever the engine returns first, a guess that looks like an answer.
    fn bind_rank(
        &mut self,
        entity: &Entity,
        key: RankKey,
        desc: bool,
        n: Option<i64>,
        explicit_groups: bool,
    ) -> Result<Ranking, Unlinked> {
        let mut ranking = Ranking::default();
        // The ranking's own words, for the refusal: the last superlative, else the top-N.
        let phrase = self
            .cues
            .supers
            .last()
            .map(|s| (s.start, s.end))
            .or_else(|| {
                self.cues
                    .top
                    .map(|(_, _, end)| (end.saturating_sub(2), end))
            })
            .map(|(a, b)| {
                let words: Vec<&str> = self.tokens[a..b].iter().map(|t| t.raw.as_str()).collect();
                format!(" '{}'", words.join(" "))
            })
            .unwrap_or_default();
        let nothing = |what: &str| Unlinked {
            words: Vec::new(),
            reason: format!(
                "the ranking{phrase} names no {what} to rank by; name the column to rank by"
            ),
        };
        match key {
            RankKey::Column(c) => {
                return Ok(self.rank_by_column(entity, c, desc, n, explicit_groups));
            }
            RankKey::Row(c) => ranking.row_rank = Some((c, desc, n)),
            RankKey::Count(t) | RankKey::Latest(t) => {
                let latest = matches!(key, RankKey::Latest(_));
                return Ok(self.rank_by_count_or_time(entity, t, latest, desc, n, explicit_groups));
            }
            RankKey::Amount(m, c) if self.ranks_rows_by_amount(entity, m, c, explicit_groups) => {
                self.a.measures.pop();
                ranking.row_rank = Some((c, desc, n));
            }
            RankKey::Measure(m) | RankKey::Amount(m, _) => {
                if let Some(e) = entity.column
                    && self.a.measures[m].column != Some(e)
                {
                    self.group_by_once(e);
                }
                ranking.order_measure = Some((m, desc));
                self.a.limit = n;
            }
            RankKey::Time => match entity.table.and_then(|t| {
                self.when_column(t)
                    .or_else(|| self.index.ranking_time_column(t))
            }) {
                Some(c) => ranking.row_rank = Some((c, desc, n)),
                None => return Err(nothing("date")),
            },
            RankKey::Nothing => return Err(nothing("measure")),
        }
        Ok(ranking)
    }

    /// "the apartment number with the largest number of bedrooms": measure `m`, the sum
    /// of amount column `c` of the rows the question names, ranks those rows by `c`
    /// itself, not groups of rows sharing the listed attribute by their total ("the state
    /// with the most customers" over banks' `no_of_customers` still sums per state).
    fn ranks_rows_by_amount(
        &self,
        entity: &Entity,
        m: usize,
        c: usize,
        explicit_groups: bool,
    ) -> bool {
        let table = self.index.columns[c].table;
        !explicit_groups
            && self.a.group_by.is_empty()
            && m + 1 == self.a.measures.len()
            && match entity.column {
                Some(e) => {
                    self.index.columns[e].table == table
                        && (!entity.attribute || self.names_rows_of(entity, table))
                }
                None => entity.table == Some(table),
            }
    }

    /// A ranking by a column: the extreme value, the rows in order, each group's extreme,
    /// or groups ranked by their total (latest date for dates).
    fn rank_by_column(
        &mut self,
        entity: &Entity,
        c: usize,
        desc: bool,
        n: Option<i64>,
        explicit_groups: bool,
    ) -> Ranking {
        let mut ranking = Ranking::default();
        let col_table = self.index.columns[c].table;
        let grouped = !self.a.group_by.is_empty();
        let extreme = if desc { Agg::Max } else { Agg::Min };
        match entity.column {
            None if !grouped && n.is_none_or(|n| n == 1) && self.cues.top.is_none() => {
                self.push_measure(plain(extreme, Some(c), col_table));
            }
            Some(e)
                if !grouped
                    && self.index.columns[e].table == col_table
                    && (!entity.attribute
                        || (self.index.columns[c].is_measure()
                            && self.names_rows_of(entity, col_table))) =>
            {
                ranking.row_rank = Some((c, desc, n));
            }
            None if !grouped => ranking.row_rank = Some((c, desc, n)),
            // "the five machines that lost the most minutes" asks for several groups
            // ranked by their total (below), not each group's maximum.
            _ if explicit_groups && self.cues.top.is_none() && n.is_none_or(|n| n <= 1) => {
                // "the longest downtime for each type": MAX per group.
                self.push_measure(plain(extreme, Some(c), col_table));
            }
            _ => {
                let existing = self.a.measures.iter().position(|m| m.column == Some(c));
                // Dates rank groups by their latest (or earliest) one; numbers by their
                // total.
                let agg = match (self.index.columns[c].is_temporal(), desc) {
                    (true, true) => Agg::Max,
                    (true, false) => Agg::Min,
                    (false, _) => Agg::Sum,
                };
                let m =
                    existing.unwrap_or_else(|| self.push_measure(plain(agg, Some(c), col_table)));
                if let Some(e) = entity.column {
                    self.group_by_once(e);
                }
                ranking.order_measure = Some((m, desc));
                self.a.limit = n;
            }
        }
        ranking
    }

    /// Whether every grouping column is the key or the label of one table whose numbers
    /// the question names (and no other numbers): one group per row of that table.
    fn groups_are_the_numbers_rows(&self) -> bool {
        let numbers: BTreeSet<usize> = self
            .mentions
            .iter()
            .enumerate()
            .filter_map(|(k, m)| match m.target {
                Target::Column(c) if !self.consumed[k] && self.index.columns[c].is_measure() => {
                    Some(self.index.columns[c].table)
                }
                _ => None,
            })
            .collect();
        let mut tables = numbers.iter();
        let (Some(&t), None) = (tables.next(), tables.next()) else {
            return false;
        };
        self.a.group_by.iter().all(|&c| {
            self.index.columns[c].table == t
                && (self.index.single_key(t) == Some(c) || self.index.label_column(t) == Some(c))
        })
    }

    /// "wrestlers who are not located in Tokyo", "users whose status is done": column
    /// mention `k` (of column `c`) names the column of the value right after it (over
    /// "is", "not", "in" and the like) that the question filters on; it is that
    /// condition's name, not a column to list.
    fn names_a_filter_value(&self, k: usize, c: usize) -> bool {
        const BETWEEN: &[&str] = &[
            "is", "are", "was", "were", "not", "in", "at", "of", "from", "as", "equal", "equals",
            "to",
        ];
        let end = self.mentions[k].end;
        self.a.filters.iter().any(|f| f.column == c)
            && self.mentions.iter().any(|v| {
                matches!(v.target, Target::Value { column, .. } if column == c)
                    && v.start >= end
                    && v.start - end <= 3
                    && self.tokens[end..v.start].iter().all(|t| t.is_any(BETWEEN))
            })
    }

    /// Whether the question names the rows of `table` that an attribute belongs to: "the
    /// color of the school with the largest enrollment", "the apartment number with the
    /// most bedrooms" rank schools and apartments (each row's own value), not groups of
    /// rows sharing the attribute by a total. On Spider train such rankings read as a
    /// total per attribute were wrong every time the rows were named.
    fn names_rows_of(&self, entity: &Entity, table: usize) -> bool {
        let stems = &self.index.tables[table].stems;
        self.mentions
            .iter()
            .any(|m| matches!(m.target, Target::Table(t) if t == table))
            || entity.mention.is_some_and(|k| {
                let m = &self.mentions[k];
                self.tokens[m.start..m.end]
                    .iter()
                    .any(|t| stems.contains(&t.stem))
            })
    }

    /// "the last names of employees who serve at most 20 customers", "the country of
    /// the artist who made the fewest songs": when rows of `t` are counted for rows the
    /// question names (employees, artists) and an attribute of theirs (not their label)
    /// is listed, each named row is its own group (its key, beside the attribute), so
    /// two employees sharing a last name stay two.
    fn group_by_the_named_rows(&mut self, entity: &Entity, t: usize) {
        if entity.attribute
            && let Some(owner) = entity.table
            && owner != t
            && self.names_rows_of(entity, owner)
            && let Some(key) = self.index.single_key(owner)
            && entity.column != Some(key)
        {
            self.group_by_once(key);
        }
    }

    /// A ranking by how many rows of `t` (or, `latest`, by their time): groups ranked by
    /// their count, each group's latest date, or the rows of `t` by time.
    fn rank_by_count_or_time(
        &mut self,
        entity: &Entity,
        t: usize,
        latest: bool,
        desc: bool,
        n: Option<i64>,
        explicit_groups: bool,
    ) -> Ranking {
        let mut ranking = Ranking::default();
        let m = self.push_measure(plain(Agg::Count, None, t));
        let time = self.index.ranking_time_column(t);
        let extreme = if desc { Agg::Max } else { Agg::Min };
        // "Which month has the most happy hours?", "the advisor with the most students": a
        // column the question names of the counted rows' own table (not its single key)
        // is what they are counted by.
        let own_column_named = entity.mention.is_some_and(|k| {
            matches!(self.mentions[k].target, Target::Column(c)
                if self.index.columns[c].table == t && self.index.single_key(t) != Some(c))
        });
        match entity.column {
            // "the latest maintenance date for each machine": the latest per group.
            _ if latest && explicit_groups && self.cues.top.is_none() && time.is_some() => {
                self.a.measures.pop();
                self.push_measure(plain(extreme, time, t));
            }
            Some(e)
                if !latest && (entity.table != Some(t) || entity.attribute || own_column_named) =>
            {
                // "the country of the artist who made the fewest songs" ranks artists,
                // each by its own songs: one group per artist (its key), not one per
                // country.
                self.group_by_the_named_rows(entity, t);
                self.group_by_once(e);
                ranking.order_measure = Some((m, desc));
                self.a.limit = n;
            }
            _ => {
                // "the most recent production run": rows of t by time.
                self.a.measures.pop();
                // "when did the last run finish": the date itself.
                if let Some(c) = self.when_column(t).filter(|_| !explicit_groups) {
                    // A "when" question answered by the date itself: no ranking left.
                    self.push_measure(plain(extreme, Some(c), t));
                    return ranking;
                }
                // A count ranks by time only when it asks for the latest rows.
                match time.filter(|_| latest) {
                    Some(c) => ranking.row_rank = Some((c, desc, n)),
                    None => self.a.limit = n,
                }
                if entity.mention.is_none() {
                    self.a
                        .outputs
                        .extend(self.index.label_column(t).map(Output::Column));
                }
            }
        }
        ranking
    }

    /// The columns a "when" question asks for over `table`: the date column it names
    /// ("finish" is `ended_at`), else the table's first date; `None` for other questions.
    fn when_column(&mut self, table: usize) -> Option<usize> {
        if !self.tokens.first().is_some_and(|t| t.is("when")) {
            return None;
        }
        let named = self
            .mentions
            .iter()
            .enumerate()
            .find_map(|(k, m)| match m.target {
                Target::Column(c)
                    if !self.consumed[k]
                        && self.index.columns[c].is_temporal()
                        && self.index.columns[c].table == table =>
                {
                    Some((k, c))
                }
                _ => None,
            });
        match named {
            Some((k, c)) => {
                self.consumed[k] = true;
                Some(c)
            }
            None => self.index.time_column(table),
        }
    }

    /// Outputs, the FROM table and distinct, once rankings and conditions are bound.
    fn finish_outputs(
        &mut self,
        entity: Option<usize>,
        entity_col: Option<usize>,
        entity_table: Option<usize>,
        row_rank: Option<(usize, bool, Option<i64>)>,
        order_measure: Option<(usize, bool)>,
    ) -> Result<(), Unlinked> {
        // "List each machine with its factory": grouping words in a listing without any
        // aggregation only name what to list.
        let mut listed_groups: Vec<usize> = Vec::new();
        let numeric_left = self.mentions.iter().enumerate().any(|(k, m)| {
            !self.consumed[k]
                && matches!(m.target, Target::Column(c) if self.index.columns[c].is_measure())
        });
        if self.cues.listing
            && self.a.measures.is_empty()
            && self.cues.aggs.is_empty()
            && !numeric_left
            && self.a.having.is_empty()
        {
            listed_groups = std::mem::take(&mut self.a.group_by);
        }
        // "the grade of each pupil", "the name and population of each county": groups
        // that are the rows of the numbers' own table (its key or label) hold one row
        // each; each row's own numbers are listed, not summed.
        if !self.a.group_by.is_empty()
            && self.a.measures.is_empty()
            && self.cues.aggs.is_empty()
            && self.a.having.is_empty()
            && self.groups_are_the_numbers_rows()
        {
            listed_groups.extend(std::mem::take(&mut self.a.group_by));
        }
        // Grouping without an aggregation: sum a mentioned number, else count rows.
        if !self.a.group_by.is_empty() && self.a.measures.is_empty() {
            let numeric = self.mentions.iter().enumerate().find(|(k, m)| {
                !self.consumed[*k]
                    && matches!(m.target, Target::Column(c) if self.index.columns[c].is_measure())
            });
            let measure = match numeric {
                Some((k, m)) => {
                    self.consumed[k] = true;
                    let c = m.column().unwrap_or_default();
                    Measure {
                        agg: Agg::Sum,
                        column: Some(c),
                        table: self.index.columns[c].table,
                        times: None,
                        minus: None,
                        distinct: false,
                    }
                }
                None => {
                    let group_tables: BTreeSet<usize> = self
                        .a
                        .group_by
                        .iter()
                        .map(|c| self.index.columns[*c].table)
                        .collect();
                    let counted = entity_table
                        .filter(|t| {
                            !group_tables.contains(t)
                                || entity_col.is_some_and(|e| !self.a.group_by.contains(&e))
                        })
                        .or_else(|| {
                            self.mentions.iter().enumerate().find_map(|(k, m)| {
                                (!self.consumed[k] && matches!(m.target, Target::Table(_)))
                                    .then(|| self.table_of(m))
                            })
                        })
                        .unwrap_or_else(|| self.index.columns[self.a.group_by[0]].table);
                    Measure {
                        agg: Agg::Count,
                        column: None,
                        table: counted,
                        times: None,
                        minus: None,
                        distinct: false,
                    }
                }
            };
            self.push_measure(measure);
        }
        // Outputs.
        if self.a.measures.is_empty() {
            let mut cols: Vec<usize> = Vec::new();
            if let Some(e) = entity_col {
                cols.push(e);
            }
            for c in listed_groups {
                if !cols.contains(&c) {
                    cols.push(c);
                }
            }
            let mut joined: Vec<usize> = Vec::new();
            for (k, m) in self.mentions.iter().enumerate() {
                if self.consumed[k] {
                    continue;
                }
                // "categories produced in a run": the rows listed must have rows in a
                // table that refers to them (a verb's or a noun's table), without listing
                // that table's columns.
                if let Some(e) = entity_table
                    && entity_col.is_some()
                {
                    let other = match m.target {
                        Target::Table(t) => Some(t),
                        Target::Column(c)
                            if self.is_verb_link(m, c) || self.had_by_the_listed_rows(m, c, e) =>
                        {
                            Some(self.index.columns[c].table)
                        }
                        _ => None,
                    };
                    if let Some(t) = other
                        && t != e
                        && self.index.refers_to(t, e)
                    {
                        if !joined.contains(&t) {
                            joined.push(t);
                        }
                        continue;
                    }
                }
                if let Target::Column(c) = m.target
                    && self.names_whose_distinct_values(entity, entity_col, k, c)
                {
                    self.consumed[k] = true;
                    self.a.rows_named.push(k);
                    continue;
                }
                if let Target::Column(c) = m.target
                    && !cols.contains(&c)
                    && !self.names_a_filter_value(k, c)
                    && !self.condition_on_distinct_values(entity_col, m, c)
                    && entity_table.is_none_or(|t| {
                        crate::joins::distance(self.index, t, self.index.columns[c].table).is_some()
                    })
                {
                    cols.push(c);
                }
                // "the first and last name, department, city and state of each employee":
                // a table named in a list of the columns asked for is asked for by its
                // label, not only joined.
                if let Target::Table(t) = m.target
                    && entity_table != Some(t)
                    && self.listed_among_columns(k)
                    && let Some(c) = self.index.label_column(t)
                    && !cols.contains(&c)
                {
                    self.consumed[k] = true;
                    cols.push(c);
                }
            }
            if self.count_named
                && let Some(c) = entity_table.and_then(|t| self.index.count_column(t))
                && !cols.contains(&c)
            {
                cols.push(c);
            }
            self.a.joined = joined;
            if let Some((c, _, _)) = row_rank
                && !cols.contains(&c)
            {
                cols.push(c);
            }
            if let Some((start, _)) = self.cues.every_column {
                self.a.every_column =
                    self.every_column_reading(entity, entity_table, row_rank, start, &mut cols);
            }
            if cols.is_empty() {
                // Only filters: list the label of the filtered table.
                let t = self
                    .a
                    .filters
                    .first()
                    .map(|f| self.index.columns[f.column].table)
                    .or_else(|| self.mentions.first().map(|m| self.table_of(m)));
                if let Some(c) = t.and_then(|t| self.index.label_column(t)) {
                    cols.push(c);
                }
            }
            self.a
                .outputs
                .retain(|o| matches!(o, Output::Column(c) if !cols.contains(c)));
            self.a.outputs.extend(cols.into_iter().map(Output::Column));
            let base = entity_table
                .or_else(|| match self.a.outputs.first() {
                    Some(Output::Column(c)) => Some(self.index.columns[*c].table),
                    _ => None,
                })
                .unwrap_or(0);
            self.a.base = base;
            // "Show all product sizes": the values a column takes, each once. A listing
            // with conditions or an order lists rows ("the builders of railways in
            // alphabetical order"), and a column of names or free text names rows too.
            // A table joined only for its rows to exist ("customers with orders") would
            // repeat the rows listed, each once per related row; one whose columns are
            // listed too ("the titles of films and the types of market estimations") is
            // what is listed, a row each.
            self.a.distinct = self.cues.distinct
                || self.a.joined.iter().any(|t| !self.lists_a_column_of(*t))
                || (entity.is_some_and(|k| {
                    matches!(self.mentions[k].target, Target::Column(c) if self.lists_values(c))
                })
                    && self.a.outputs.len() == 1
                    && row_rank.is_none()
                    && self.a.filters.is_empty()
                    && self.a.absent.is_empty()
                    && self.cues.order_key.is_none()
                    && self.cues.order_desc.is_none());
            if let Some((c, desc, n)) = row_rank {
                let pos = self
                    .a
                    .outputs
                    .iter()
                    .position(|o| *o == Output::Column(c))
                    .unwrap_or(0);
                self.a.order.push((Output::Column(c), desc));
                let _ = pos;
                self.a.limit = n;
                self.a.distinct = false;
            }
        } else {
            // "Which parts have more than 2 faults? Show the part name and id": the key
            // of a grouped table, listed, is grouped by too (one group per row of it).
            let keys: Vec<usize> = self
                .mentions
                .iter()
                .enumerate()
                .filter(|(k, _)| !self.consumed[*k])
                .filter_map(|(_, m)| m.column())
                .filter(|c| {
                    let col = &self.index.columns[*c];
                    col.is_pk
                        && self
                            .a
                            .group_by
                            .iter()
                            .any(|g| self.index.columns[*g].table == col.table)
                })
                .collect();
            for c in keys {
                if !self.a.group_by.contains(&c) {
                    self.a.group_by.push(c);
                }
            }
            self.group_by_the_grouped_rows_listed_columns(entity);
            for &c in &self.a.group_by {
                self.a.outputs.push(Output::Column(c));
            }
            for m in 0..self.a.measures.len() {
                self.a.outputs.push(Output::Measure(m));
            }
            self.a.base = self.a.measures[0].table;
            if let Some((m, desc)) = order_measure {
                self.a.order.push((Output::Measure(m), desc));
            }
        }
        self.group_labels_with_their_keys();
        let _ = self.role_unlinked.len();
        Ok(())
    }

    /// "The id and name of the stadium where the most injury accidents happened", "the
    /// invoice number and invoice date for the invoice with most transactions": in a
    /// grouped plan whose groups are rows of a table (its key or its label is grouped by),
    /// the column asked for (the entity), or another column of that table listed with the
    /// columns asked for, is asked for too.
    /// Each row stays its own group: the table's key joins the grouping, then the column
    /// (one value per row, so the groups do not change). A column of another table, or
    /// one of a table grouped by some other attribute, is left to the coverage check.
    /// Learned on Spider train, where 48 questions of this shape were refused for the
    /// second column.
    fn group_by_the_grouped_rows_listed_columns(&mut self, entity: Option<usize>) {
        let index = self.index;
        let rows_grouped = |group_by: &[usize], t: usize| {
            group_by.iter().any(|g| {
                index.columns[*g].table == t
                    && (index.columns[*g].is_pk || index.label_column(t) == Some(*g))
            })
        };
        for k in 0..self.mentions.len() {
            if self.consumed[k] && entity != Some(k) {
                continue;
            }
            let Target::Column(c) = self.mentions[k].target else {
                continue;
            };
            let t = index.columns[c].table;
            // A count of the grouped rows themselves is one per row: no ranking to
            // list them by.
            let counts_itself = self
                .a
                .measures
                .iter()
                .any(|m| m.agg == Agg::Count && m.column.is_none() && m.table == t);
            if counts_itself
                || self.a.group_by.contains(&c)
                || self.a.measures.iter().any(|m| m.column == Some(c))
                || !rows_grouped(&self.a.group_by, t)
                || !(entity == Some(k)
                    || self.listed_among_columns(k)
                    || self.listed_with_a_measure(k)
                    || self.second_half_of_full_name(k))
            {
                continue;
            }
            let Some(key) = index.single_key(t) else {
                continue;
            };
            self.consumed[k] = true;
            // The key leads, so the groups come in the rows' own order (a tie in a
            // ranking keeps the row with the lowest key, as a plain listing would).
            self.a.group_by.retain(|g| *g != key);
            self.a.group_by.insert(0, key);
            self.group_by_once(c);
        }
    }

    /// "The names of students who have more than one advisor": a table's label grouped
    /// by, with only rows of other tables counted or added up and a condition on each
    /// group's count or total, stands for that table's rows, and two rows sharing a label
    /// (two students named Smith) are two groups: the table's key joins the grouping,
    /// before the label. Learned on Spider train, where grouping by the label alone
    /// merged such rows.
    fn group_labels_with_their_keys(&mut self) {
        // Only where groups are kept or dropped by a condition on what each holds (a
        // HAVING): a grouping that only lists groups, or ranks them, keeps its columns
        // (a cross-source join matches groups by them, and "the most common sport"
        // groups by the value).
        if self.a.having.is_empty() {
            return;
        }
        let index = self.index;
        let labels: Vec<(usize, usize)> = self
            .a
            .group_by
            .iter()
            .filter_map(|&g| {
                let t = index.columns[g].table;
                (index.label_column(t) == Some(g) && !index.columns[g].is_key).then_some((g, t))
            })
            .collect();
        for (label, t) in labels {
            let Some(key) = index.single_key(t) else {
                continue;
            };
            // The rows counted must be many per row of `t` (they refer to it): "courses
            // offered by more than one department" counts departments a course refers to,
            // one per course, so its title (not the course) is what is grouped.
            if self.a.group_by.contains(&key)
                || !self
                    .a
                    .measures
                    .iter()
                    .all(|m| m.table != t && index.refers_to(m.table, t))
            {
                continue;
            }
            let at = self
                .a
                .group_by
                .iter()
                .position(|g| *g == label)
                .unwrap_or(0);
            self.a.group_by.insert(at, key);
        }
    }

    /// Whether mention `k` and an aggregation stand side by side in a list: "the account id
    /// and the number of transactions", "the number and customer id" (a comma or "and"
    /// between them, and an article).
    fn listed_with_a_measure(&self, k: usize) -> bool {
        let m = &self.mentions[k];
        let skip_article = |i: usize| {
            if self
                .tokens
                .get(i)
                .is_some_and(|t| t.is_any(&["a", "an", "the"]))
            {
                i + 1
            } else {
                i
            }
        };
        let after = if self.tokens.get(m.end).is_some_and(|t| t.is("and")) {
            Some(skip_article(m.end + 1))
        } else if punctuated_before(self.tokens, m.end) {
            Some(skip_article(m.end))
        } else {
            None
        };
        let mut before = m.start;
        if before > 0 && self.tokens[before - 1].is_any(&["a", "an", "the"]) {
            before -= 1;
        }
        let before = if before > 0 && self.tokens[before - 1].is("and") {
            Some(before - 1)
        } else if punctuated_before(self.tokens, before) {
            Some(before)
        } else {
            None
        };
        self.cues
            .aggs
            .iter()
            .any(|a| after == Some(a.start) || before == Some(a.end))
    }

    /// Whether mention `k` is the "name" of "full name" (the last name, right after the
    /// first name "full" stands for, of the same table).
    fn second_half_of_full_name(&self, k: usize) -> bool {
        let Some(prev) = k.checked_sub(1).map(|j| &self.mentions[j]) else {
            return false;
        };
        let m = &self.mentions[k];
        prev.end == m.start
            && self.tokens[prev.start].is("full")
            && matches!((prev.column(), m.column()), (Some(a), Some(b))
                if self.index.columns[a].table == self.index.columns[b].table)
    }

    /// Whether mention `k` stands in a list of column mentions: a comma or "and"
    /// between it and a column mention right before or right after it. (Commas are not
    /// tokens: two mentions side by side are apart by more than one space.)
    fn listed_among_columns(&self, k: usize) -> bool {
        let m = &self.mentions[k];
        let separator = |from: usize, to: usize| match to.checked_sub(from) {
            Some(0) => punctuated_before(self.tokens, to),
            Some(1) => self.tokens[from].is("and"),
            _ => false,
        };
        let column = |j: usize| matches!(self.mentions[j].target, Target::Column(_));
        let before = k
            .checked_sub(1)
            .is_some_and(|j| column(j) && separator(self.mentions[j].end, m.start));
        let after = self
            .mentions
            .get(k + 1)
            .is_some_and(|n| column(k + 1) && separator(m.end, n.start));
        // The table's name is the whole item: "department number" names a column.
        let whole = self
            .tokens
            .get(m.end)
            .is_none_or(|t| is_function_word(&t.lower) || punctuated_before(self.tokens, m.end));
        (before || after) && whole
    }

    /// A listed column named after "by" and right before a direction ("the dates of games
    /// by the home team name in descending order"): the key it sorts by. Not in a grouped
    /// plan.
    fn listed_before_direction(&self) -> Option<usize> {
        if !self.a.measures.is_empty() {
            return None;
        }
        let w = |k: usize| self.word(k);
        self.mentions.iter().find_map(|m| {
            let c = m.column()?;
            // After "by": "in alphabetical order" after "the names and their types" sorts
            // the whole list, not by the last column named.
            let by = match m.start {
                0 => false,
                s => w(s - 1) == "by" || (s > 1 && w(s - 1) == "the" && w(s - 2) == "by"),
            };
            if !by {
                return None;
            }
            let mut at = m.end;
            if self.tokens.get(at).is_some_and(|t| t.is("in")) {
                at += 1;
                if self.tokens.get(at).is_some_and(|t| t.is_any(&["a", "the"])) {
                    at += 1;
                }
            }
            (crate::intent::direction_words(self.tokens, at).is_some()
                && self.a.outputs.contains(&Output::Column(c)))
            .then_some(c)
        })
    }

    /// What a direction with no key sorts by ("ordered from most to least", "in
    /// alphabetical order"): a measure, else the first output a column mention names
    /// ("the total points of gymnasts in descending order" sorts by the points, not by
    /// the gymnast's label listed beside them); an alphabetical order sorts the first
    /// text output so named ("artists that have at least 3 albums in alphabetical
    /// order": by name, not by the count). Every column of a table
    /// listed ("all the information about courses") puts its key first, which no one
    /// sorts by for want of a word: there it is the table's label, and nothing when the
    /// question named a key the analysis did not find ("sorted by date").
    fn default_sort_key(&self) -> Option<Output> {
        let measure = self
            .a
            .outputs
            .iter()
            .find(|o| matches!(o, Output::Measure(_)));
        match self.a.every_column {
            Some(EveryColumn::Of(t)) => measure.copied().or_else(|| {
                self.index
                    .label_column(t)
                    .filter(|_| self.cues.order_key.is_none())
                    .map(Output::Column)
            }),
            _ if self.cues.order_alphabetical => self
                .outputs_named_first()
                .find(|o| {
                    matches!(o, Output::Column(c)
                        if self.index.columns[*c].class == TypeClass::Text)
                })
                .or(measure.copied())
                .or(self.a.outputs.first().copied()),
            _ => measure
                .copied()
                .or_else(|| self.outputs_named_first().next()),
        }
    }

    /// The outputs, those a column mention names first ("the total points of gymnasts":
    /// `Total_Points` before the gymnast's label, listed because the table was named).
    fn outputs_named_first(&self) -> impl Iterator<Item = Output> + '_ {
        let named = |o: &Output| {
            matches!(o, Output::Column(c)
                if self.mentions.iter().any(|m| m.target == Target::Column(*c)))
        };
        let outputs = &self.a.outputs;
        outputs
            .iter()
            .filter(move |o| named(o))
            .chain(outputs.iter().filter(move |o| !named(o)))
            .copied()
    }

    /// How "information" at `start` reads in a listing whose columns so far are `cols`:
    /// right after listed columns, it is theirs ("the delegate and committee
    /// information"); asked of rows ("all the information about courses", "the customer
    /// information in state NY") when nothing but columns of their table is listed (their
    /// label, a sort or ranking key), it is every column of their table, which replaces
    /// `cols`. `None` (read no way, so the coverage check refuses the word) otherwise.
    fn every_column_reading(
        &self,
        entity: Option<usize>,
        entity_table: Option<usize>,
        row_rank: Option<(usize, bool, Option<i64>)>,
        start: usize,
        cols: &mut Vec<usize>,
    ) -> Option<EveryColumn> {
        let listed_before = self
            .mentions
            .iter()
            .any(|m| m.end == start && matches!(m.target, Target::Column(c) if cols.contains(&c)));
        if listed_before {
            return Some(EveryColumn::Listed);
        }
        if entity.is_some_and(|k| !matches!(self.mentions[k].target, Target::Table(_))) {
            return None;
        }
        let t = entity_table
            .or_else(|| {
                self.a
                    .filters
                    .first()
                    .map(|f| self.index.columns[f.column].table)
            })
            .or_else(|| cols.first().map(|c| self.index.columns[*c].table))?;
        let rank_col = row_rank.map(|(c, _, _)| c);
        if !cols.iter().all(|c| self.index.columns[*c].table == t)
            || rank_col.is_some_and(|c| self.index.columns[c].table != t)
        {
            return None;
        }
        *cols = self.index.tables[t].columns.clone();
        Some(EveryColumn::Of(t))
    }

    /// Whether the outputs read a column of table `t` that is no key (a key's value is
    /// the row it refers to, or is referred to by).
    fn lists_a_column_of(&self, t: usize) -> bool {
        self.a.outputs.iter().any(|o| {
            let Output::Column(c) = o else {
                return false;
            };
            let col = &self.index.columns[*c];
            col.table == t
                && !col.is_key
                && !self.index.foreign_keys.iter().any(|fk| fk.leads_from(col))
        })
    }

    /// "the different positions of players from UCLA": in a listing of distinct values,
    /// a column of the same table named after the listed column, past a word that relates
    /// it ("of", "for", "by", "who"…) and not in a list with it ("and", a comma), says
    /// whose values are listed; listed too, it would make every row distinct.
    fn names_whose_distinct_values(
        &self,
        entity: Option<usize>,
        entity_col: Option<usize>,
        k: usize,
        c: usize,
    ) -> bool {
        const RELATING: &[&str] = &[
            "of", "for", "by", "from", "who", "that", "which", "whose", "with", "in", "at",
        ];
        let (Some(e), Some(listed)) = (entity, entity_col) else {
            return false;
        };
        let (from, to) = (self.mentions[e].end, self.mentions[k].start);
        if !self.cues.distinct
            || to < from
            || self.index.columns[listed].table != self.index.columns[c].table
        {
            return false;
        }
        let between = &self.tokens[from..to];
        between.iter().any(|t| t.is_any(RELATING))
            && !between
                .iter()
                .any(|t| matches!(t.lower.as_str(), "and" | "," | ";"))
    }

    /// "the distinct ages of the heads who are acting": in a listing of a column's
    /// distinct values, a column of another table named right after "who are" (or
    /// "that is", …) is a condition on the rows (`temporary_acting = 'Yes'`), which no
    /// rule here reads; listed beside the values it would make them repeat, so it is left
    /// unplaced and the question refused.
    fn condition_on_distinct_values(
        &self,
        entity_col: Option<usize>,
        m: &super::Mention,
        c: usize,
    ) -> bool {
        let w = |k: usize| self.word(k);
        self.cues.distinct
            && entity_col
                .is_some_and(|e| self.index.columns[e].table != self.index.columns[c].table)
            && m.start >= 2
            && matches!(w(m.start - 2), "who" | "that" | "which")
            && matches!(w(m.start - 1), "is" | "are" | "was" | "were")
    }

    /// "students who have president votes": a column of another table that refers to the
    /// listed table `e`, named after "have" or "with", says which related rows the listed
    /// rows must have (and by which key), not a column to list.
    fn had_by_the_listed_rows(&self, m: &super::Mention, c: usize, e: usize) -> bool {
        let col = &self.index.columns[c];
        col.table != e
            && self.index.column_refers_to(c, e)
            && (0..m.start)
                .rev()
                .find(|&i| !self.tokens[i].is_any(&["a", "an", "the", "any", "some"]))
                .is_some_and(|i| self.tokens[i].is_any(&["have", "has", "had", "with"]))
    }

    /// True when a column mention is a past participle that names the column only by a
    /// word of it ("produced" in `quantity_produced`): a verb, not a column to list.
    fn is_verb_link(&self, m: &super::Mention, c: usize) -> bool {
        m.score <= 8
            && self.index.columns[c].is_measure()
            && self.tokens[m.start..m.end]
                .last()
                .is_some_and(|t| t.lower.ends_with("ed") && t.lower != t.stem)
    }

    /// Date ranges filter the nearest date column, else the FROM table's first date
    /// column, else the first date column among the other tables in use.
    pub(super) fn dates(&mut self) {
        for cue in &self.cues.dates {
            let in_use = self.tables_in_use();
            let mentioned = self
                .mention_before(cue.start, 3)
                .and_then(|m| match m.target {
                    Target::Column(c) if self.index.columns[c].is_temporal() => Some(c),
                    Target::Column(c) if in_use.contains(&self.index.columns[c].table) => {
                        self.index.time_column(self.index.columns[c].table)
                    }
                    Target::Table(t) => self.index.time_column(t),
                    _ => None,
                });
            let near = mentioned
                .or_else(|| self.index.time_column(self.a.base))
                .or_else(|| in_use.iter().find_map(|t| self.index.time_column(*t)));
            // A year column of a table in use is nearer than another table's date.
            if let Some(filters) = self.year_filters(cue, near) {
                self.add_year_filters(cue, filters);
                continue;
            }
            let column = near.or_else(|| self.nearest_time_column());
            let Some(c) = column else {
                self.a
                    .notes
                    .push("a date phrase names no date column; ignored".into());
                continue;
            };
            if let Some(lo) = &cue.lo {
                self.a.filters.push(Filter {
                    column: c,
                    test: Test::Cmp(CmpOp::GtEq, Lit::Date(lo.clone())),
                    negated: false,
                    span: Some((cue.start, cue.end)),
                });
            }
            if let Some(hi) = &cue.hi {
                self.a.filters.push(Filter {
                    column: c,
                    test: Test::Cmp(CmpOp::Lt, Lit::Date(hi.clone())),
                    negated: false,
                    span: Some((cue.start, cue.end)),
                });
            }
        }
    }

    /// The date column of the table nearest the FROM table (at most two foreign keys
    /// away) that has one: "sales in 2023" over order lines dates them by their order.
    pub(super) fn nearest_time_column(&self) -> Option<usize> {
        self.nearest_column(|t| self.index.time_column(t))
    }

    /// `column_of` the table nearest the FROM table (at most two foreign keys away, ties
    /// by table name) for which it is `Some`.
    pub(super) fn nearest_column(
        &self,
        column_of: impl Fn(usize) -> Option<usize>,
    ) -> Option<usize> {
        (0..self.index.tables.len())
            .filter_map(|t| {
                let c = column_of(t)?;
                let d = crate::joins::distance(self.index, self.a.base, t)?;
                (d <= 2).then(|| (d, self.index.tables[t].name.clone(), c))
            })
            .min()
            .map(|(_, _, c)| c)
    }

    /// Tables the analysis uses so far, FROM table first.
    pub(crate) fn tables_in_use(&self) -> Vec<usize> {
        let mut out = vec![self.a.base];
        let mut add = |t: usize| {
            if !out.contains(&t) {
                out.push(t);
            }
        };
        for o in &self.a.outputs {
            if let Output::Column(c) = o {
                add(self.index.columns[*c].table);
            }
        }
        for m in &self.a.measures {
            add(m.table);
        }
        for f in &self.a.filters {
            add(self.index.columns[f.column].table);
        }
        out
    }

    /// Whether listing column `c` lists the values it takes (a category: "sizes",
    /// "ranks", "cities", a `transaction_type` that labels its table only for want of a
    /// name) rather than rows: not a key, not the table's name column, not a name, title
    /// or free text.
    fn lists_values(&self, c: usize) -> bool {
        const ROW_WORDS: &[&str] = &[
            "name",
            "title",
            "description",
            "details",
            "detail",
            "text",
            "note",
            "notes",
            "summary",
            "comment",
            "comments",
        ];
        let col = &self.index.columns[c];
        !col.is_key
            && self.index.name_column(col.table) != Some(c)
            && !crate::text::split_ident(&col.name)
                .iter()
                .any(|w| ROW_WORDS.contains(&w.to_lowercase().as_str()))
    }

    /// The sort keys after the first, from `at` (right after the first key and its own
    /// direction): "sorted by price decreasing and name ascending", "ordered by email
    /// address and phone number". Each is a column the question names after "and" (or a
    /// comma, "then", "by"), sorted by the direction written right after it, or the first
    /// key's.
    fn further_order_keys(&mut self, mut at: usize, first_desc: bool) {
        let mut position = 1;
        loop {
            let w = |k: usize| self.word(k);
            if !matches!(w(at), "and" | ",") {
                return;
            }
            let mut k = at + 1;
            while matches!(w(k), "then" | "by" | "the" | "their" | "its" | "and") {
                k += 1;
            }
            let Some(m) = self.mentions.iter().find(|m| m.start == k) else {
                return;
            };
            let Target::Column(c) = m.target else {
                return;
            };
            let grouped = !self.a.measures.is_empty();
            if grouped && !self.a.group_by.contains(&c) {
                return;
            }
            let own = crate::intent::direction_words(self.tokens, m.end);
            let desc = own.map_or(first_desc, |d| d.desc);
            let o = Output::Column(c);
            if self.a.order.iter().any(|(x, _)| *x == o) {
                return;
            }
            if !grouped && !self.a.outputs.contains(&o) {
                self.a.outputs.push(o);
            }
            self.a.order.insert(position, (o, desc));
            position += 1;
            at = m.end + own.map_or(0, |d| d.len);
        }
    }

    /// The column of the listed rows (the base table) whose whole name is the one word at
    /// `k` ("revenue" → `Revenue`).
    fn column_named_by(&self, k: usize) -> Option<usize> {
        let stem = &self.tokens.get(k)?.stem;
        self.index.columns.iter().position(|col| {
            col.table == self.a.base && !col.is_key && col.stems.len() == 1 && col.stems[0] == *stem
        })
    }

    /// `sorted by X`, direction words and a default order for grouped results.
    pub(super) fn ordering(&mut self) {
        // "ordered by decreasing number of cities": a direction between "by" and the key
        // is the order's own (read as a cue already); the key follows it.
        let key = self
            .cues
            .order_key
            .map(|k| k + crate::intent::direction_words(self.tokens, k).map_or(0, |d| d.len));
        let target = key.and_then(|k| {
            self.mentions
                .iter()
                .find(|m| m.start >= k && m.start <= k + 2)
        });
        let agg_at = key.and_then(|k| {
            self.cues
                .aggs
                .iter()
                .position(|a| a.start >= k && a.start <= k + 1)
        });
        // "ordered from most to least" names no key after it: the direction alone.
        if target.is_some() || agg_at.is_some() {
            let desc = self.cues.order_desc.unwrap_or(false);
            let out = match (agg_at, target) {
                (Some(_), _) if !self.a.measures.is_empty() => Some(Output::Measure(0)),
                (_, Some(m)) => match m.target {
                    Target::Column(c) => {
                        let as_measure = self
                            .a
                            .measures
                            .iter()
                            .position(|x| x.column == Some(c))
                            .map(Output::Measure);
                        as_measure.or_else(|| {
                            if self.a.measures.is_empty() || self.a.group_by.contains(&c) {
                                if !self.a.outputs.contains(&Output::Column(c))
                                    && self.a.measures.is_empty()
                                {
                                    self.a.outputs.push(Output::Column(c));
                                }
                                Some(Output::Column(c))
                            } else {
                                None
                            }
                        })
                    }
                    Target::Table(t) => self
                        .a
                        .measures
                        .iter()
                        .position(|x| x.table == t && x.column.is_none())
                        .map(Output::Measure),
                    Target::Value { .. } => None,
                },
                _ => None,
            };
            if let Some(o) = out {
                // "sorted by price decreasing": a direction right after the key is its own.
                let own = target.and_then(|m| crate::intent::direction_words(self.tokens, m.end));
                let desc = own.map_or(desc, |d| d.desc);
                self.a.order.retain(|(x, _)| *x != o);
                self.a.order.insert(0, (o, desc));
                if let Some(m) = target {
                    let after = m.end + own.map_or(0, |d| d.len);
                    self.further_order_keys(after, desc);
                }
            }
        } else if let Some(desc) = self.cues.order_desc {
            let noun_key = self.cues.order_noun.and_then(|k| self.column_named_by(k));
            if let Some(c) = noun_key
                && (self.a.measures.is_empty() || self.a.group_by.contains(&c))
            {
                let o = Output::Column(c);
                if self.a.measures.is_empty() && !self.a.outputs.contains(&o) {
                    self.a.outputs.push(o);
                }
                self.a.order.retain(|(x, _)| *x != o);
                self.a.order.insert(0, (o, desc));
            } else if let Some(c) = self.listed_before_direction() {
                // "by the home team name in descending order".
                let o = Output::Column(c);
                self.a.order.retain(|(x, _)| *x != o);
                self.a.order.insert(0, (o, desc));
            } else if let Some(first) = self.a.order.first_mut() {
                first.1 = desc;
            } else if let Some(o) = self.default_sort_key() {
                self.a.order.push((o, desc));
            }
        }
        if self.a.order.is_empty() && !self.a.group_by.is_empty() {
            for &c in &self.a.group_by {
                self.a.order.push((Output::Column(c), false));
            }
        }
        if self.a.distinct
            && self.a.order.is_empty()
            && let Some(o) = self.a.outputs.first()
        {
            self.a.order.push((*o, false));
        }
    }
}
