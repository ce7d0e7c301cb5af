//! The builder's filters and measures: values named in the question, tables whose rows
//! must be absent, arithmetic between measures, numeric comparisons, and the entity a
//! count or total is about.

use super::*;

/// Words that begin another clause: a negation before them does not reach past them.
const CLAUSE_WORDS: &[&str] = &[
    "and", "or", "but", "who", "which", "that", "whose", "whom", "than",
];

/// Words that make the value after them a bound ("after 12:00:00", "before Smith").
const ORDER_WORDS: &[&str] = &["after", "before", "since", "until", "till"];

impl Builder<'_> {
    pub(super) fn value_filters(&mut self) {
        // The table the question is about: the first it names (by a table or a column).
        let subject = self.mentions.iter().find_map(|x| match x.target {
            Target::Table(t) => Some(t),
            Target::Column(c) => Some(self.index.columns[c].table),
            Target::Value { .. } => None,
        });
        for (k, m) in self.mentions.iter().enumerate() {
            let Target::Value {
                column,
                values,
                exact,
                word,
                part,
            } = &m.target
            else {
                continue;
            };
            // "races held after 12:00:00": a value after a word of order is a bound, which
            // an equality would not say; left unplaced, the question is refused.
            if m.start > 0 && self.tokens[m.start - 1].is_any(ORDER_WORDS) {
                continue;
            }
            self.consumed[k] = true;
            // "weren't delivered on time", "not in the Widgets category": a verb or a
            // preposition may stand between the negation and the value.
            let negation = self
                .cues
                .negations
                .iter()
                .position(|n| *n < m.start && m.start - n <= 3)
                .or_else(|| {
                    self.cues
                        .negations
                        .iter()
                        .position(|n| self.negation_reaches_value(*n, m.start, *column))
                });
            if let Some(p) = negation {
                self.negations_used[p] = true;
                // "ranks that have no captain in the Third-rate class", "people who have
                // no student friends": "no" says none of the related rows has the value
                // (an absence), which a row whose value differs does not express: unless
                // it is read per answer over related rows (`per_answer.rs`), it is refused
                // at the end. ("no longer active", "no discount": a boolean's other value
                // is what they say.)
                let at = self.cues.negations[p];
                let boolean = matches!(values.as_slice(), [Value::Bool(_)]);
                if self.tokens[at].is("no")
                    && !self.tokens.get(at + 1).is_some_and(|t| t.is("longer"))
                    && !boolean
                {
                    let words = |from: usize| {
                        self.tokens[from..m.end]
                            .iter()
                            .map(|t| t.raw.as_str())
                            .collect::<Vec<_>>()
                            .join(" ")
                    };
                    self.no_values.push((
                        *column,
                        format!(
                            "'{}' asks for what has none with '{}' (an absence of rows), not for \
                         rows whose {} is another value; ask for those that have it, or \
                         write 'not' if you mean another value",
                            words(at),
                            words(m.start),
                            self.index.columns[*column].name
                        ),
                    ));
                }
            }
            let negated = negation.is_some();
            let test = if *exact || values.len() == 1 {
                Test::In(values.clone())
            } else {
                Test::Contains(word.clone(), *part)
            };
            // "not preferred": the boolean's other value, which also keeps `NULL`s out.
            let (test, negated) = match (&test, negated) {
                (Test::In(v), true) if matches!(v.as_slice(), [Value::Bool(_)]) => {
                    let b = v.first().and_then(Value::as_bool).unwrap_or(true);
                    (Test::In(vec![Value::Bool(!b)]), false)
                }
                _ => (test, negated),
            };
            // "students who participate in Canoeing and Kayaking": two values of one
            // column of another table than the one the question is about (the first it
            // names), joined by "and", are asked for together (each on some related row),
            // which an `IN` list would not say; unless "both" or "shared by" leads them
            // (`intersections.rs`), the second stays unplaced and the question is refused.
            // ("the mean defect count across Dimension and Assembly defects": values of
            // the rows asked about, either one.)
            let related = subject != Some(self.index.columns[*column].table);
            let joined_by_and = related
                && self.a.filters.iter().any(|f| {
                    f.column == *column
                        && f.span.is_some_and(|(_, e)| {
                            e <= m.start
                                && m.start - e <= 2
                                && self.tokens[e..m.start].iter().any(|t| t.is("and"))
                        })
                })
                && !crate::intent::both_positions(self.tokens).any(|b| b < m.start);
            if joined_by_and {
                self.consumed[k] = false;
                continue;
            }
            // Merge `A or B` on the same column into one IN list.
            if let Some(f) = self
                .a
                .filters
                .iter_mut()
                .find(|f| f.column == *column && f.negated == negated)
                && let (Test::In(old), Test::In(new)) = (&mut f.test, &test)
            {
                for v in new {
                    if !old.contains(v) {
                        old.push(v.clone());
                    }
                }
                f.span = f.span.map(|(s, e)| (s.min(m.start), e.max(m.end)));
                continue;
            }
            self.a.filters.push(Filter {
                column: *column,
                test,
                negated,
                span: Some((m.start, m.end)),
            });
        }
        self.paired_alternatives();
        // `run 4`, `machine #2`: a table followed by a whole number names a row by key.
        for (k, m) in self.mentions.iter().enumerate() {
            let Target::Table(t) = m.target else { continue };
            let Some(next) = self.tokens.get(m.end) else {
                continue;
            };
            let Some(n) = next
                .number()
                .filter(|n| n.fract() == 0.0 && next.raw.len() < 7)
            else {
                continue;
            };
            if self.cues.used[m.end] {
                continue;
            }
            let Some(pk) = self.index.tables[t]
                .columns
                .iter()
                .copied()
                .find(|c| self.index.columns[*c].is_pk)
            else {
                continue;
            };
            self.consumed[k] = true;
            self.a.filters.push(Filter {
                column: pk,
                test: Test::Cmp(CmpOp::Eq, Lit::Number(n)),
                negated: false,
                span: Some((m.start, m.end + 1)),
            });
        }
        // A column or table word right next to a value names the value's column
        // ("the Night shift", "category Widgets"): it is part of the filter.
        for (k, m) in self.mentions.iter().enumerate() {
            if self.consumed[k] {
                continue;
            }
            let adjacent = self.mentions.iter().any(|v| {
                matches!(v.target, Target::Value { .. })
                    && (v.end == m.start || m.end == v.start || self.holds_after(v, m))
                    && match &m.target {
                        Target::Column(c) => Some(*c) == v.column(),
                        // An adjective's noun ("late deliveries") is what the question is
                        // about, not a name of the adjective's column.
                        Target::Table(_) if is_boolean_value(&v.target) => false,
                        Target::Table(t) => {
                            let col = v.column().map(|c| &self.index.columns[c]);
                            col.is_some_and(|col| col.stems == self.index.tables[*t].stems)
                                || (col.map(|c| c.table) == Some(*t)
                                    && v.end == m.start
                                    && !self.is_entity_position(m))
                        }
                        Target::Value { .. } => false,
                    }
            });
            if adjacent {
                self.consumed[k] = true;
                self.filter_tokens[m.start..m.end]
                    .iter_mut()
                    .for_each(|t| *t = true);
            }
        }
    }

    /// The nearest mention of a number column not yet read that ends at most three words
    /// before token `at` ("price that is higher"), where the words between pass `between`:
    /// the column a comparison at `at` compares ("pages above 300", "pages above the
    /// average").
    pub(super) fn number_column_before(
        &self,
        at: usize,
        between: impl Fn(&[Token]) -> bool,
    ) -> Option<usize> {
        self.mentions
            .iter()
            .enumerate()
            .filter(|(k, m)| {
                !self.consumed[*k]
                    && names_a_number_column(self.index, m)
                    && m.end <= at
                    && at - m.end <= 3
                    && between(&self.tokens[m.end..at])
            })
            .max_by_key(|(_, m)| m.end)
            .map(|(k, _)| k)
    }

    /// Whether mention `m` says what holds the value `v` right after it: "'dar' in their
    /// names", "'Comp' in its department name".
    fn holds_after(&self, v: &Mention, m: &Mention) -> bool {
        crate::text::holder_after(self.tokens, v.end) == Some(m.start)
    }

    /// Negations followed by a table, or by a past participle that names a number column
    /// of a table, with only grammar words and one verb between ("never had maintenance",
    /// "not involved in any incident", "have not been rated"): rows of that table must be
    /// absent.
    pub(super) fn absent_tables(&mut self) {
        for (p, &n) in self.cues.negations.iter().enumerate() {
            if self.negations_used[p] {
                continue;
            }
            // Every mention the negation reaches, in order: "faculty who do not
            // participate in any activity" reaches `Participates_in` (the verb) and then
            // `Activity`, and only the second relates to the faculty.
            let reached: Vec<(usize, usize)> = self
                .mentions
                .iter()
                .enumerate()
                .filter_map(|(k, m)| {
                    if self.consumed[k] || m.start <= n || !self.negation_reaches(n, m.start) {
                        return None;
                    }
                    match m.target {
                        Target::Table(t) => Some((k, t)),
                        Target::Column(c)
                            if self.index.columns[c].is_measure()
                                && self.tokens[m.end - 1].lower.ends_with("ed") =>
                        {
                            Some((k, self.index.columns[c].table))
                        }
                        // "students who don't have any allergies" over `Has_Allergy.Allergy`
                        // (a key of another table): rows of the column's table.
                        Target::Column(c)
                            if m.start > 0
                                && self.tokens[m.start - 1].is("any")
                                && (0..self.index.tables.len())
                                    .any(|to| self.index.column_refers_to(c, to)) =>
                        {
                            Some((k, self.index.columns[c].table))
                        }
                        _ => None,
                    }
                })
                .collect();
            let Some((k, named, t)) = reached
                .iter()
                .find_map(|&(k, named)| self.absent_of(n, k, named).map(|t| (k, named, t)))
            else {
                // "countries that do not have a stadium opened after 2006": values of a
                // column of the table, not rows of another.
                if let Some(&(k, named)) = reached.first()
                    && self.values_of_before(n, named)
                {
                    self.consumed[k] = true;
                    self.negations_used[p] = true;
                    self.values_without.push((n, named));
                }
                continue;
            };
            self.consumed[k] = true;
            // A mention passed before it ("participate", naming `Participates_in`) is
            // read with it: as a word of the link table's name when it is one (see
            // `words_naming_table`); otherwise the coverage finds it unused and refuses.
            for &(j, _) in reached.iter().take_while(|(j, _)| *j != k) {
                self.consumed[j] = true;
            }
            if t != named || matches!(self.mentions[k].target, Target::Column(_)) {
                self.a.absent_with.push(k);
                // The words that chose the link table are read.
                for i in self.words_naming_table(t, n + 1, self.mentions[k].start) {
                    self.a.link_words.push((i, t));
                }
            }
            self.negations_used[p] = true;
            if !self.a.absent.contains(&t) {
                self.a.absent.push(t);
            }
            self.missing_with(k, t);
        }
    }

    /// The table whose rows must lack matches when the negation at `n` reaches mention
    /// `k` (naming table `named`), if a table named before the negation relates to it.
    fn absent_of(&self, n: usize, k: usize, named: usize) -> Option<usize> {
        // The rows that lack matches are of a table named before the negation (as a
        // table, its key or label, or a column said with its table: "the locations of
        // schools"), one the named table refers to ("machines that never had
        // maintenance") or one a link table between the two refers to ("stations
        // without any trains": no row of the link table). Missing rows say nothing
        // about another column's values ("hometowns not associated with any gymnast"
        // asks for hometowns no gymnast has).
        self.mentions.iter().enumerate().find_map(|(j, m)| {
            if j == k || m.start >= n {
                return None;
            }
            let s = match m.target {
                Target::Table(s) => s,
                Target::Column(c)
                    if self.index.columns[c].is_pk
                        || self.index.label_column(self.index.columns[c].table) == Some(c)
                        || self.tokens[m.start..m.end].iter().any(|w| {
                            self.index.tables[self.index.columns[c].table]
                                .stems
                                .contains(&w.stem)
                        }) =>
                {
                    self.index.columns[c].table
                }
                _ => return None,
            };
            if s == named {
                None
            } else if self.index.refers_to(named, s) {
                Some(named)
            } else if !self.index.refers_to(s, named) {
                self.index
                    .link_table(s, named)
                    .or_else(|| self.link_table_said(s, named, n + 1, self.mentions[k].start))
            } else {
                None
            }
        })
    }

    /// Whether a column of table `t` that is not a key is named before the negation at
    /// `n` (the answers would be its values: "the countries" of `stadium.Country`).
    fn values_of_before(&self, n: usize, t: usize) -> bool {
        self.mentions.iter().any(|m| {
            m.start < n
                && matches!(m.target, Target::Column(c)
                    if self.index.columns[c].table == t && !self.index.columns[c].is_key)
        })
    }

    /// Of several link tables between `a` and `b`, the one that the words from `from` to
    /// `to` name, if exactly one: "branches that do not have any registered members" over
    /// `membership_register_branch` and `purchase`; "students who never attend courses"
    /// over `Student_Course_Attendance` and `Student_Course_Registrations`.
    fn link_table_said(&self, a: usize, b: usize, from: usize, to: usize) -> Option<usize> {
        let mut said = self
            .index
            .link_tables(a, b)
            .filter(|&l| !self.words_naming_table(l, from, to).is_empty());
        match (said.next(), said.next()) {
            (Some(l), None) => Some(l),
            _ => None,
        }
    }

    /// The positions from `from` to `to` of content words that name table `t`: a word of
    /// its name, or (five letters or more) the start of one or a word it starts ("register"
    /// and `regist`, "attend" and `attendanc`).
    fn words_naming_table(&self, t: usize, from: usize, to: usize) -> Vec<usize> {
        let stems = &self.index.tables[t].stems;
        (from..to)
            .filter(|&i| {
                let w = self.tokens[i].stem.as_str();
                !is_function_word(&self.tokens[i].lower)
                    && stems.iter().any(|s| {
                        let (short, long) = if w.len() <= s.len() {
                            (w, s.as_str())
                        } else {
                            (s.as_str(), w)
                        };
                        short == long || (short.len() >= 5 && long.starts_with(short))
                    })
            })
            .collect()
    }

    /// "not enrolled in any course": the tables right after the negated mention `k` that
    /// the absent table `t` refers to are missing with its rows; their mentions are
    /// consumed and recorded in `Analysis::absent_with`.
    fn missing_with(&mut self, k: usize, t: usize) {
        let mut end = self.mentions[k].end;
        for j in k + 1..self.mentions.len() {
            let m = &self.mentions[j];
            let gap = self.tokens[end..m.start.max(end)].iter().all(|w| {
                w.is_any(&[
                    "any", "a", "an", "the", "in", "on", "at", "to", "for", "with", "of", "by",
                    "from",
                ])
            });
            match m.target {
                Target::Table(o)
                    if m.start >= end
                        && m.start - end <= 2
                        && gap
                        && o != t
                        && self.index.refers_to(t, o) =>
                {
                    self.consumed[j] = true;
                    self.a.absent_with.push(j);
                    end = m.end;
                }
                _ => break,
            }
        }
    }

    /// Whether the negation at `n` reaches a value of `column` starting at `start` across
    /// more than three words: "not from the country of Switzerland", "do not have the
    /// status 'Village'", "did not grow up in Santo Domingo". Between them only grammar
    /// words, mentions of that same column and at most two other words (a verb and its
    /// particle); never a clause ("and", "who", "than"), another table or column, nor
    /// "any" (which asks for an absence of related rows), and at most six words.
    fn negation_reaches_value(&self, n: usize, start: usize, column: usize) -> bool {
        if start <= n || start - n > 6 {
            return false;
        }
        let gap = n + 1..start;
        if self.tokens[gap.clone()]
            .iter()
            .any(|t| t.is_any(CLAUSE_WORDS) || t.is_any(&["any", "no", "not", "never"]))
        {
            return false;
        }
        let inside = |i: usize| self.mentions.iter().find(|m| m.start <= i && i < m.end);
        let mut others = 0;
        for i in gap {
            match inside(i) {
                Some(m) if m.target == Target::Column(column) => {}
                Some(_) => return false,
                None if is_function_word(&self.tokens[i].lower) => {}
                None => others += 1,
            }
        }
        others <= 2
    }

    /// Whether the negation at `n` reaches a mention starting at `start`: within three
    /// words, or across grammar words ("any", "been", "in") and at most one verb ("not
    /// involved in any behavior incident"), never across a clause word ("and", "or",
    /// "who", "than": `CLAUSE_WORDS`) nor past six words. Commas are not tokens, so a
    /// comma alone does not stop it.
    fn negation_reaches(&self, n: usize, start: usize) -> bool {
        if start <= n || start - n > 6 {
            return false;
        }
        if self.tokens[n + 1..start]
            .iter()
            .any(|t| t.is_any(CLAUSE_WORDS))
        {
            return false;
        }
        if start - n <= 3 {
            return true;
        }
        // The one word besides grammar is a verb the linker left alone.
        let words: Vec<usize> = (n + 1..start)
            .filter(|&i| {
                !is_function_word(&self.tokens[i].lower)
                    && !self.tokens[i].is_any(&["yet", "ever", "t"])
            })
            .collect();
        match words.as_slice() {
            [] => true,
            // Or a verb that names a table ("do not participate in any activity" over
            // `Participates_in`), tried before what follows it.
            [i] => match self.mentions.iter().find(|m| m.start <= *i && *i < m.end) {
                None => true,
                Some(m) => matches!(m.target, Target::Table(_)) && m.end <= start,
            },
            _ => false,
        }
    }

    /// "quantity times unit price", "units planned minus units produced", "the difference
    /// between X and Y": two number columns of one table combined into one measure. Both
    /// mentions are consumed.
    pub(super) fn arithmetic(&mut self) -> Option<(bool, usize, usize)> {
        if self.cues.aggs.is_empty() {
            return None;
        }
        let w = |k: usize| self.word(k);
        let number = |k: usize| match self.mentions[k].target {
            Target::Column(c) if self.index.columns[c].is_measure() => Some(c),
            _ => None,
        };
        for k in 0..self.mentions.len() {
            if self.consumed[k] {
                continue;
            }
            let Some(a) = number(k) else { continue };
            let end = self.mentions[k].end;
            // "the difference between A and B".
            let between = self.mentions[k].start >= 2
                && w(self.mentions[k].start - 1) == "between"
                && matches!(w(self.mentions[k].start - 2), "difference" | "gap");
            let (times, len) = match (w(end), w(end + 1)) {
                ("times" | "x", _) | ("multiplied", "by") if !between => {
                    (true, if w(end) == "multiplied" { 2 } else { 1 })
                }
                ("minus", _) if !between => (false, 1),
                ("and", _) if between => (false, 1),
                _ => continue,
            };
            let Some(j) = (k + 1..self.mentions.len()).find(|j| {
                self.mentions[*j].start == end + len || self.mentions[*j].start == end + len + 1
            }) else {
                continue;
            };
            let Some(b) = number(j) else { continue };
            if self.index.columns[a].table != self.index.columns[b].table || a == b {
                continue;
            }
            self.consumed[k] = true;
            self.consumed[j] = true;
            return Some((times, a, b));
        }
        None
    }

    /// Makes the first measure of an aggregation the computed one ("the combined value
    /// (quantity times unit price)"), or adds it as a sum when the question aggregates
    /// nothing else.
    pub(super) fn apply_arithmetic(&mut self, agg_measures: &mut Vec<usize>) {
        let Some((times, a, b)) = self.arithmetic else {
            return;
        };
        let table = self.index.columns[a].table;
        let computed = |agg: Agg| Measure {
            agg: if agg == Agg::Count { Agg::Sum } else { agg },
            column: Some(a),
            table,
            times: times.then_some(b),
            minus: (!times).then_some(b),
            distinct: false,
        };
        match agg_measures.first() {
            Some(&m) => {
                let agg = self.a.measures[m].agg;
                self.a.measures[m] = computed(agg);
            }
            None => {
                let agg = self.cues.aggs.first().map_or(Agg::Sum, |c| c.agg);
                let m = self.push_measure(computed(agg));
                agg_measures.push(m);
            }
        }
    }

    /// "a count above 3", "a quantity of at least 10": a generic measure noun right before
    /// a comparison stands for the counting or quantity column of the question's first
    /// table.
    pub(super) fn generic_measure_before(&self, at: usize) -> Option<usize> {
        let noun = (at.saturating_sub(2)..at)
            .rev()
            .find(|i| !self.tokens[*i].is_any(&["a", "an", "the", "of"]))?;
        let t = &self.tokens[noun];
        if !t.is_any(&["count", "number", "quantity", "amount", "total"]) {
            return None;
        }
        let table = self.mentions.iter().find_map(|m| match m.target {
            Target::Table(t) => Some(t),
            _ => None,
        })?;
        self.index
            .count_column(table)
            .or_else(|| self.index.quantity_column(table))
    }

    /// True when a table mention is what the question is about (right after `which`,
    /// `how many`, `top N`, a superlative…).
    pub(super) fn is_entity_position(&self, m: &Mention) -> bool {
        m.start == 0
            || self
                .cues
                .aggs
                .iter()
                .any(|a| a.end <= m.start && self.only_filler(a.end, m.start))
            || self.tokens[..m.start]
                .iter()
                .enumerate()
                .rev()
                .take_while(|(i, t)| self.cues.used[*i] || is_function_word(&t.lower))
                .any(|(_, t)| t.is_any(&["which", "what", "list", "show"]))
    }

    /// Numeric comparisons become filters on the nearest numeric column; a comparison
    /// followed by a table (`more than 2 machines`) becomes a count condition.
    pub(super) fn comparisons(&mut self) -> Vec<(usize, CmpOp, f64, bool)> {
        let mut count_havings = Vec::new();
        for cue in &self.cues.comparisons {
            let total = self.total_marker(cue.start, cue.end);
            let numeric = |m: &Mention| names_a_number_column(self.index, m);
            let before = self.number_column_before(cue.start, |_| true);
            let after = self
                .mentions
                .iter()
                .enumerate()
                .find(|(k, m)| !self.consumed[*k] && m.start >= cue.end && m.start - cue.end <= 2)
                // "older than 46 and joined after 1990", "bigger than 100 ordered by year":
                // a column after a conjunction or another phrase is not the one compared.
                .filter(|(_, m)| {
                    !self.tokens[cue.end..m.start].iter().any(|t| {
                        t.is_any(&[
                            "and", "or", "but", "by", "ordered", "sorted", "order", "sort",
                            "whose", "who", "which", "that", "with", "where",
                        ])
                    })
                })
                .map(|(k, _)| k);
            // "above age 46": the column named between the comparison and its number.
            let inside = self
                .mentions
                .iter()
                .enumerate()
                .find(|(k, m)| {
                    !self.consumed[*k] && numeric(m) && m.start > cue.start && m.end < cue.end
                })
                .map(|(k, _)| k);
            let (after, before) = match inside {
                Some(k) => (Some(k), None),
                None => (after, before),
            };
            // "older than 25", "heavier than 10", "25 or older": the comparative names its
            // measure; the same column named right before it is read with it ("aged 25
            // or older"; not "the age of artists older than 40", where the age is listed).
            if let Some(c) = self
                .implied_measure(cue.start)
                .or_else(|| self.implied_measure(cue.end - 1))
                && !matches!(after, Some(k) if numeric(&self.mentions[k]))
            {
                let start = match before {
                    Some(k)
                        if self.mentions[k].end == cue.start
                            && self.mentions[k].start + 1 == cue.start
                            && self.mentions[k].column() == Some(c) =>
                    {
                        self.consumed[k] = true;
                        self.mentions[k].start
                    }
                    _ => cue.start,
                };
                for (op, v) in &cue.bounds {
                    self.a.filters.push(Filter {
                        column: c,
                        test: Test::Cmp(*op, Lit::Number(*v)),
                        negated: false,
                        span: Some((start, cue.end)),
                    });
                }
                continue;
            }
            // "customers who have taken a total amount of more than 5000 in loans": the
            // total of the amount column named before "of" is compared (HAVING SUM), and
            // the loans after the number are the rows it sums, not rows to count.
            if let Some(kb) = before
                && let Some(c) = self.mentions[kb].column()
                && self.index.columns[c].is_measure()
                && self.mentions[kb].end + 1 == cue.start
                && self.tokens[self.mentions[kb].end].is("of")
                && self.mentions[kb].start > 0
                && self.tokens[self.mentions[kb].start - 1].is_any(&["total", "sum", "combined"])
            {
                self.consumed[kb] = true;
                if let Some(ka) = after
                    && matches!(self.mentions[ka].target,
                        Target::Table(t) if t == self.index.columns[c].table)
                {
                    self.consumed[ka] = true;
                }
                for (op, v) in &cue.bounds {
                    self.agg_havings.push((Agg::Sum, c, *op, Bound::Number(*v)));
                }
                continue;
            }
            let chosen = match (after, before) {
                (Some(k), _) if numeric(&self.mentions[k]) => Some(k),
                (Some(k), _) if matches!(self.mentions[k].target, Target::Table(_)) => {
                    self.consumed[k] = true;
                    let t = self.table_of(&self.mentions[k]);
                    let rows = self.rows_named(&self.mentions[k]);
                    for (op, v) in &cue.bounds {
                        count_havings.push((t, *op, *v, rows));
                    }
                    continue;
                }
                // "counties that have at least two delegates": a plural naming a text
                // column (each row holds one) counts the rows of its table.
                (Some(k), _) if self.counts_rows_by_a_column(k) => {
                    self.consumed[k] = true;
                    self.a.rows_named.push(k);
                    let t = self.table_of(&self.mentions[k]);
                    for (op, v) in &cue.bounds {
                        count_havings.push((t, *op, *v, false));
                    }
                    continue;
                }
                (_, Some(k)) => Some(k),
                _ => None,
            };
            match chosen {
                Some(k) => {
                    self.consumed[k] = true;
                    let Some(c) = self.mentions[k].column() else {
                        continue;
                    };
                    // "studios whose average gross is above 4500000", "jobs with average
                    // salary above 8000": a condition on each group's aggregate (HAVING).
                    if let Some(n) = self.aggregate_compared(k, cue.start) {
                        self.having_cues.push(n);
                        let agg = self.cues.aggs[n].agg;
                        for (op, v) in &cue.bounds {
                            self.agg_havings.push((agg, c, *op, Bound::Number(*v)));
                        }
                        continue;
                    }
                    // "which shifts produced more than 1000 units in total": a condition
                    // on the groups' sum (HAVING), not on rows.
                    if total.is_some() {
                        for (op, v) in &cue.bounds {
                            self.agg_havings.push((Agg::Sum, c, *op, Bound::Number(*v)));
                        }
                        continue;
                    }
                    let m = &self.mentions[k];
                    for (op, v) in &cue.bounds {
                        self.a.filters.push(Filter {
                            column: c,
                            test: Test::Cmp(*op, Lit::Number(*v)),
                            negated: false,
                            span: Some((m.start.min(cue.start), m.end.max(cue.end))),
                        });
                    }
                }
                None => {
                    if let Some(c) = self
                        .alternative_of(cue.start)
                        .or_else(|| self.generic_measure_before(cue.start))
                    {
                        // "less than 100 or more than 900": the column compared before "or";
                        // "defects with a count above 3": the subject's own count.
                        for (op, v) in &cue.bounds {
                            self.a.filters.push(Filter {
                                column: c,
                                test: Test::Cmp(*op, Lit::Number(*v)),
                                negated: false,
                                span: Some((cue.start, cue.end)),
                            });
                        }
                    } else if let Some(w) = self.unlinked_at(cue.end, 2) {
                        self.role_unlinked.push(w);
                    } else {
                        self.a
                            .notes
                            .push("a numeric comparison names no column; ignored".into());
                    }
                }
            }
        }
        count_havings
    }

    /// The aggregation cue (not a count) right before the compared column mention `k`,
    /// when the mention ends the words before the comparison at `cmp_start` ("an average
    /// gross of over", "whose maximum salary is above"): the comparison is on that
    /// aggregate of each group. Not "the average gross of films above 10", where the
    /// comparison is said of the films.
    fn aggregate_compared(&self, k: usize, cmp_start: usize) -> Option<usize> {
        let m = &self.mentions[k];
        let between_is_copula = m.end <= cmp_start
            && self.tokens[m.end..cmp_start]
                .iter()
                .all(|t| t.is_any(&["is", "are", "was", "were", "of"]));
        if !between_is_copula {
            return None;
        }
        self.aggregate_naming(k)
    }

    /// The aggregation cue (not a count, not already read by a group's condition) right
    /// before mention `k` ("average gross", "the maximum salary"); not a word of the
    /// column's own name ("overall rating" over `overall_rating`).
    pub(super) fn aggregate_naming(&self, k: usize) -> Option<usize> {
        let m = &self.mentions[k];
        let name = m.column().map(|c| &self.index.columns[c].plain);
        self.cues.aggs.iter().enumerate().find_map(|(n, a)| {
            (a.agg != Agg::Count
                && a.end <= m.start
                && m.start - a.end <= 1
                && self.only_filler(a.end, m.start)
                && !self.having_cues.contains(&n)
                && !self.tokens[a.start..a.end]
                    .iter()
                    .any(|t| name.is_some_and(|words| words.contains(&t.lower))))
            .then_some(n)
        })
    }

    /// Whether mention `k`, right after a count comparison, is a plural naming a text
    /// column that is not a key ("two or more players" where each row holds one
    /// `Player`): the rows of its table are what is counted.
    fn counts_rows_by_a_column(&self, k: usize) -> bool {
        let m = &self.mentions[k];
        let Target::Column(c) = m.target else {
            return false;
        };
        let col = &self.index.columns[c];
        let last = &self.tokens[m.end - 1].lower;
        // (`membership_amount` holds a number as text: "100 memberships" compares it.)
        col.class == crate::link::TypeClass::Text
            && !col.is_key
            && !bind::names_an_amount(col)
            && !is_singular(last)
    }

    /// "the staff named Dameon Frami or Jolie Weber": values of two columns said in pairs
    /// and joined by "or" would become two lists (`first IN (Dameon, Jolie) AND last IN
    /// (Frami, Weber)`), which also admits Dameon Weber; the alternatives are pairs, which
    /// this planner cannot say, so the question is refused naming them.
    fn paired_alternatives(&mut self) {
        let lists: Vec<(usize, (usize, usize))> = self
            .a
            .filters
            .iter()
            .filter_map(|f| match (&f.test, f.span) {
                (Test::In(values), Some(span)) if values.len() >= 2 && !f.negated => {
                    Some((f.column, span))
                }
                _ => None,
            })
            .collect();
        let interleaved = lists.iter().enumerate().find_map(|(i, &(a, (s1, e1)))| {
            lists[i + 1..]
                .iter()
                .find(|&&(b, (s2, e2))| b != a && s1.max(s2) < e1.min(e2))
                .map(|&(b, (s2, e2))| (a, b, s1.min(s2), e1.max(e2)))
        });
        if let Some((a, b, start, end)) = interleaved {
            let col = |c: usize| {
                format!(
                    "{}.{}",
                    self.index.tables[self.index.columns[c].table].name, self.index.columns[c].name
                )
            };
            self.unsupported.push(format!(
                "'{}' pairs values of {} and {} as alternatives, which this planner cannot \
                 express (it would also admit the values crossed); ask for each pair alone",
                self.tokens[start..end]
                    .iter()
                    .map(|t| t.raw.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                col(a),
                col(b)
            ));
        }
    }

    /// A negation over rows of another table that carry a condition: "artists who did
    /// not have an exhibition in 2004" is not "artists without exhibitions" (the
    /// anti-join) and "in 2004" (a filter the anti-join's empty rows never meet), and
    /// "films never presented in China" is not "films presented somewhere other than
    /// China" (`<>` on a table the film has many rows of). Both count the condition per
    /// answer ([`Analysis::per_answer`]: no row of the answer meets it) where the answers
    /// are plain columns; otherwise the question is refused (such answers were wrong on
    /// Spider train every time).
    pub(super) fn negations_of_related_rows(&mut self) -> Result<(), Unlinked> {
        self.values_without_conditions()?;
        let index = self.index;
        let base = self.a.base;
        let table_of = |c: usize| index.columns[c].table;
        // A condition on an absent table, or on a table reached only through it.
        let absent = self.a.absent.clone();
        let behind_absent =
            |t: usize| t != base && absent.iter().any(|&x| x == t || index.refers_to(x, t));
        let output_behind = self
            .a
            .outputs
            .iter()
            .filter_map(|o| match o {
                Output::Column(c) => Some(table_of(*c)),
                Output::Measure(_) => None,
            })
            .find(|t| behind_absent(*t));
        let filter_behind = self
            .a
            .filters
            .iter()
            .map(|f| table_of(f.column))
            .find(|t| behind_absent(*t));
        if let Some(t) = output_behind.or(filter_behind) {
            if output_behind.is_none() && self.absent_with_conditions() {
                return Ok(());
            }
            return Err(Unlinked {
                words: Vec::new(),
                reason: format!(
                    "the negation asks for rows with no matching {} and for something of \
                     those rows, which this planner cannot express",
                    index.tables[t].name
                ),
            });
        }
        // A negated value of a table the base has many rows of, unless that table's rows
        // are what the question is about ("names of entrepreneurs whose investor is not
        // X": the first table it names).
        let subject = self.mentions.iter().find_map(|m| match m.target {
            Target::Table(x) => Some(x),
            _ => None,
        });
        let named = |t: usize| subject == Some(t);
        let negated: Vec<usize> = (0..self.a.filters.len())
            .filter(|k| {
                let f = &self.a.filters[*k];
                let t = table_of(f.column);
                f.negated && t != base && !index.refers_to(base, t) && !named(t)
            })
            .collect();
        if let Some(&k) = negated.first() {
            if self.negated_related_values(&negated) {
                return Ok(());
            }
            return Err(Unlinked {
                words: Vec::new(),
                reason: format!(
                    "the negation of a value of {} (which each {} row can have many of) asks \
                     for rows with no such match, which this planner cannot express",
                    index.tables[table_of(self.a.filters[k].column)].name,
                    index.tables[base].name
                ),
            });
        }
        Ok(())
    }

    /// "the countries that do not have a stadium opened after 2006", "the locations where
    /// no cinema has a capacity over 800": the answers are the values of a column of the
    /// negated table (its `Country`) none of whose rows with that value meets the
    /// conditions after the negation, SQL's `EXCEPT` of the values: the rows are grouped by
    /// the value and the conditions counted per answer ([`Analysis::per_answer`]).
    /// Refused where the conditions are missing ("the hometowns no gymnast comes from"),
    /// where other conditions restrict the rows first (which rows the values are
    /// subtracted from would be a guess), or where the answers are not the table's
    /// values.
    fn values_without_conditions(&mut self) -> Result<(), Unlinked> {
        let Some(&(n, t)) = self.values_without.first() else {
            return Ok(());
        };
        let index = self.index;
        let table = &index.tables[t].name;
        let refuse = |why: &str| {
            Err(Unlinked {
                words: Vec::new(),
                reason: format!(
                    "the negation asks for values of {table} that no row of theirs has \
                     {why}, which this planner cannot express"
                ),
            })
        };
        let outputs_of_t = !self.a.outputs.is_empty()
            && self.a.outputs.iter().all(|o| {
                matches!(o, Output::Column(c) if index.columns[*c].table == t && !index.columns[*c].is_key)
            });
        if self.values_without.len() > 1 || self.a.base != t || !outputs_of_t {
            return refuse("beside other answers");
        }
        let (behind, before): (Vec<usize>, Vec<usize>) = (0..self.a.filters.len())
            .partition(|k| self.a.filters[*k].span.is_some_and(|(start, _)| start > n));
        if behind.is_empty()
            || !before.is_empty()
            || behind.iter().any(|k| {
                let f = &self.a.filters[*k];
                index.columns[f.column].table != t || f.negated || self.a.or_group(*k).is_some()
            })
        {
            return refuse("with conditions this planner reads");
        }
        // "opened after 2006": a column of the conditions is not an answer.
        let conditions: Vec<usize> = behind.iter().map(|k| self.a.filters[*k].column).collect();
        self.a
            .outputs
            .retain(|o| !matches!(o, Output::Column(c) if conditions.contains(c)));
        if self.a.outputs.is_empty() || !self.group_values_without(behind) {
            return refuse("as answers it can group");
        }
        Ok(())
    }

    /// "less than 100 or more than 900", "below 100 and above 500": the column of the
    /// comparison that ends right before the "or" (or "and") at `at - 1`, which a
    /// comparison naming no column of its own compares too.
    fn alternative_of(&self, at: usize) -> Option<usize> {
        let joint = at
            .checked_sub(1)
            .filter(|i| self.tokens[*i].is_any(&["or", "and"]))?;
        self.a.filters.iter().rev().find_map(|f| {
            (matches!(f.test, Test::Cmp(..)) && f.span.is_some_and(|(_, e)| e == joint))
                .then_some(f.column)
        })
    }

    /// The measure a comparative names by itself: "older"/"younger" an age, "heavier"/
    /// "lighter" a weight, "taller" a height; the numeric column of that one-word name in
    /// a table the question names (the first such table).
    pub(super) fn implied_measure(&self, at: usize) -> Option<usize> {
        let name = match self.tokens.get(at)?.lower.as_str() {
            "older" | "younger" => "age",
            "heavier" | "lighter" => "weight",
            // ("shorter" of a pit stop is no height: only a height column is implied.)
            "taller" | "shorter" => "height",
            _ => return None,
        };
        self.measure_named(name)
    }

    /// The measure a superlative names by itself, and whether its highest value is meant:
    /// "youngest" the lowest age or the latest birth date, "oldest" the highest age or the
    /// earliest birth date (only where one is kept: otherwise "oldest" ranks in time),
    /// "tallest" the highest height, "shortest" the lowest height or else length or
    /// duration, "longest" the highest length or duration, "heaviest" and "lightest" a
    /// weight. Looked for in the table the superlative describes ("the youngest captain")
    /// and the tables it refers to ("the tallest entrepreneur", whose height is the
    /// person's), else in any table the question names.
    pub(super) fn implied_extreme(&self, start: usize, end: usize) -> Option<(usize, bool)> {
        use Dimension::{Age, Height, Length, Price, Weight};
        let next = self.tokens.get(start + 1).map_or("", |t| t.lower.as_str());
        let readings: &[(Dimension, bool)] = match self.tokens.get(start)?.lower.as_str() {
            // "the three most expensive procedures" over `Cost`, "the cheapest hotel"
            // over `price_range`: a price or cost of the rows.
            "most" if end > start + 1 && matches!(next, "expensive" | "costly") => &[(Price, true)],
            "least" if end > start + 1 && matches!(next, "expensive" | "costly") => {
                &[(Price, false)]
            }
            "cheapest" => &[(Price, false)],
            "costliest" | "priciest" => &[(Price, true)],
            "youngest" => &[(Age, false)],
            "oldest" => &[(Age, true)],
            "tallest" => &[(Height, true)],
            "shortest" => &[(Height, false), (Length, false)],
            "longest" => &[(Length, true)],
            "heaviest" => &[(Weight, true)],
            "lightest" => &[(Weight, false)],
            _ => return None,
        };
        let described = self
            .mention_after(end, 2)
            .map(|k| self.table_of(&self.mentions[k]));
        let mut tables: Vec<usize> = Vec::new();
        if let Some(t) = described {
            tables.push(t);
            let mut referred: Vec<usize> = self
                .index
                .foreign_keys
                .iter()
                .filter(|f| f.from == t && f.to != t)
                .map(|f| f.to)
                .collect();
            referred.sort_unstable();
            referred.dedup();
            tables.extend(referred);
        }
        tables.extend(self.mentions.iter().map(|m| self.table_of(m)));
        readings.iter().find_map(|(dimension, desc)| {
            tables.iter().find_map(|t| {
                self.index.tables[*t].columns.iter().find_map(|c| {
                    dimension
                        .reads(&self.index.columns[*c])
                        .map(|later| (*c, *desc != later))
                })
            })
        })
    }

    /// The numeric column of this one-word name in a table the question names (the
    /// first such table).
    fn measure_named(&self, name: &str) -> Option<usize> {
        self.mentions.iter().find_map(|m| {
            let t = self.table_of(m);
            self.index.tables[t].columns.iter().copied().find(|c| {
                let col = &self.index.columns[*c];
                col.is_measure() && col.name.eq_ignore_ascii_case(name)
            })
        })
    }

    /// The aggregation cue of a "total" word that makes a comparison a condition on a sum:
    /// "more than 1000 units in total", "a total of more than 1000", "… combined".
    pub(super) fn total_marker(&self, start: usize, end: usize) -> Option<usize> {
        // ("more than 5000 total horses" over `Total_Horses`: the column's name.)
        let is_total = |i: usize| {
            self.tokens
                .get(i)
                .is_some_and(|t| t.is_any(&["total", "combined", "altogether", "overall"]))
                && !self.mentions.iter().any(|m| m.start <= i && i < m.end)
        };
        let mut i = end;
        while self
            .tokens
            .get(i)
            .is_some_and(|t| t.is_any(&["units", "unit", "pieces", "items", "in", "all"]))
            && i < end + 2
        {
            i += 1;
        }
        let after = is_total(i).then_some(i);
        let before = (start >= 2 && self.tokens[start - 1].is("of") && is_total(start - 2))
            .then(|| start - 2);
        after.or(before)
    }

    /// The entity: what the question lists or ranks (the first unconsumed table, or a text
    /// column when no table is named; a number column right after "distinct" too: "the
    /// distinct districts for elections" lists district numbers, each once, not
    /// elections).
    pub(super) fn entity(&self) -> Option<usize> {
        self.mentions.iter().enumerate().find_map(|(k, m)| {
            let ok = !self.consumed[k]
                && match m.target {
                    Target::Table(_) => true,
                    Target::Column(c) => {
                        !self.index.columns[c].is_measure()
                            || (m.start > 0
                                && self.tokens[m.start - 1].is_any(crate::intent::DISTINCT_WORDS))
                    }
                    Target::Value { .. } => false,
                };
            ok.then_some(k)
        })
    }

    /// A number written right before mention `k` (`which two factories`).
    pub(super) fn count_before(&self, k: usize) -> Option<i64> {
        let start = self.mentions[k].start;
        let i = start.checked_sub(1)?;
        let t = &self.tokens[i];
        if t.kind == TokenKind::Number && t.raw.len() < 4 {
            return t.number().map(|n| n as i64);
        }
        crate::text::number_word(&t.lower).filter(|n| *n > 1)
    }
}

/// What a superlative adjective ranks by.
#[derive(Debug, Clone, Copy)]
enum Dimension {
    Age,
    Height,
    Length,
    Weight,
    /// A price or cost (`Price`, `Cost`, `price_range`, `unit_cost`).
    Price,
}

impl Dimension {
    /// Whether `col` measures this dimension: `Some(false)` when a higher value is more of
    /// it, `Some(true)` when a later value is less of it (a birth date: the later, the
    /// younger).
    fn reads(self, col: &crate::link::ColumnInfo) -> Option<bool> {
        let name = col.name.to_lowercase();
        match self {
            Dimension::Age if col.is_measure() && name == "age" => Some(false),
            Dimension::Age
                if col.is_temporal()
                    && (name.contains("birth")
                        || name.contains("dob")
                        || name.ends_with("born")) =>
            {
                Some(true)
            }
            Dimension::Height if col.is_measure() && name.contains("height") => Some(false),
            Dimension::Length
                if col.is_measure() && (name.contains("length") || name.contains("duration")) =>
            {
                Some(false)
            }
            Dimension::Weight if col.is_measure() && name.contains("weight") => Some(false),
            Dimension::Price
                if col.is_measure()
                    && col.plain.iter().any(|w| {
                        *w == crate::text::stem("price") || *w == crate::text::stem("cost")
                    }) =>
            {
                Some(false)
            }
            _ => None,
        }
    }
}
