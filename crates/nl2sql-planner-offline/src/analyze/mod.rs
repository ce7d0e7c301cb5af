//! Question analysis: combines the intent cues with the schema links into an [`Analysis`]
//! (what to select, aggregate, group, filter, order and limit, over which tables). The
//! analysis is the common ground of decomposition (semantic sub-queries) and planning
//! (`PlanModel`s). Words in a role position (the target of a count, a grouping, a ranking)
//! that link to nothing make the analysis fail instead of guessing. `bind` ties the cues
//! to their mentions; `assemble` turns the bound cues into outputs, filters and order.

use serde_json::Value;

use super::intent::{Agg, CmpOp, Cues, Day, cues};
use super::link::{Mention, SchemaIndex, Target, link};

mod assemble;
mod bind;
use super::text::{Token, TokenKind, is_function_word, is_stop_word, tokenize};

/// Nouns that follow a datasource's name when the question names the datasource.
const SOURCE_NOUNS: &[&str] = &[
    "database",
    "db",
    "datasource",
    "data",
    "dataset",
    "system",
    "schema",
    "source",
];

/// Nouns for the rows of a table ("defect records"): counting them counts rows, even
/// when the table has a count column of its own.
pub(super) const ROW_NOUNS: &[&str] = &[
    "record", "records", "entry", "entries", "row", "rows", "log", "logs",
];

/// The highest link score of a word found only in a table or column description.
const DESCRIPTION_SCORE: u32 = 3;

/// A measure: an aggregation of a column, or a row count of a table.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Measure {
    /// The aggregation.
    pub(crate) agg: Agg,
    /// The column; `None` counts rows (`COUNT(*)`).
    pub(crate) column: Option<usize>,
    /// The table whose rows are aggregated.
    pub(crate) table: usize,
    /// A second column of the same table that `column` is multiplied by before
    /// aggregating: "spend" over a unit price is the price times the quantity.
    pub(crate) times: Option<usize>,
    /// A second column of the same table subtracted from `column` before aggregating:
    /// "the difference between units planned and units produced".
    pub(crate) minus: Option<usize>,
    /// Aggregates each distinct value of `column` once: `COUNT(DISTINCT column)` ("how
    /// many different defect types").
    pub(crate) distinct: bool,
}

/// An output column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Output {
    /// A column value.
    Column(usize),
    /// A measure, by index.
    Measure(usize),
}

/// A calendar period that a date column is grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grain {
    /// The calendar year (`YEAR(d)`).
    Year,
    /// The month (`DATE_TRUNC('month', d)`: the first day of the month).
    Month,
}

/// A literal of a filter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lit {
    /// A number from the question.
    Number(f64),
    /// A date `YYYY-MM-DD`.
    Date(String),
}

/// What a filter tests.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Test {
    /// A comparison.
    Cmp(CmpOp, Lit),
    /// Membership in known values.
    In(Vec<Value>),
    /// The word occurs inside the value (`LIKE '%word%'`).
    Contains(String),
}

/// A row filter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Filter {
    /// The column tested.
    pub(crate) column: usize,
    /// The test.
    pub(crate) test: Test,
    /// Negated (`not`, `except`).
    pub(crate) negated: bool,
}

/// A condition on a measure (HAVING).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Having {
    /// The measure, by index.
    pub(crate) measure: usize,
    /// The comparison.
    pub(crate) op: CmpOp,
    /// The bound.
    pub(crate) value: f64,
}

/// The meaning of a question over one schema.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Analysis {
    /// The FROM table.
    pub(crate) base: usize,
    /// Output columns in order.
    pub(crate) outputs: Vec<Output>,
    /// Measures.
    pub(crate) measures: Vec<Measure>,
    /// Grouping columns.
    pub(crate) group_by: Vec<usize>,
    /// Date columns of `group_by` that are grouped by a calendar period ("per month").
    pub(crate) grains: Vec<(usize, Grain)>,
    /// Row filters.
    pub(crate) filters: Vec<Filter>,
    /// Group filters.
    pub(crate) having: Vec<Having>,
    /// Tables whose matching rows must be absent ("machines that never had maintenance"):
    /// left-joined, with their key `IS NULL`.
    pub(crate) absent: Vec<usize>,
    /// Tables joined only so that the listed rows have rows there ("categories produced
    /// in a run").
    pub(crate) joined: Vec<usize>,
    /// Sort keys: an output and descending?
    pub(crate) order: Vec<(Output, bool)>,
    /// Row limit.
    pub(crate) limit: Option<i64>,
    /// `SELECT DISTINCT`.
    pub(crate) distinct: bool,
    /// Content words that linked to nothing (reported, not used).
    pub(crate) unlinked: Vec<String>,
    /// How the question was read, for the plan's `reasoning`.
    pub(crate) notes: Vec<String>,
    /// Sum of the link scores (to rank datasources).
    pub(crate) score: u32,
    /// The schema links of the question's spans (to check that the plan uses them).
    pub(crate) mentions: Vec<Mention>,
    /// The intent cues of the question (aggregations, comparisons, ordering, grouping),
    /// to check that the plan expresses each.
    pub(crate) cues: Cues,
}

impl Analysis {
    /// Groups by column `to` wherever the analysis grouped, listed or ordered by `from`.
    pub(crate) fn regroup(&mut self, from: usize, to: usize) {
        let swap = |c: &mut usize| {
            if *c == from {
                *c = to;
            }
        };
        self.group_by.iter_mut().for_each(swap);
        for o in self
            .outputs
            .iter_mut()
            .chain(self.order.iter_mut().map(|(o, _)| o))
        {
            if let Output::Column(c) = o {
                swap(c);
            }
        }
        self.notes
            .push("grouped by the key the other datasource shares".into());
    }
}

/// Why a question could not be analysed: the words that link to nothing.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Unlinked {
    /// The words, in question order.
    pub(crate) words: Vec<String>,
    /// A short reason.
    pub(crate) reason: String,
}

/// A ranking request: by what, which way, how many.
#[derive(Debug, Clone, PartialEq)]
enum RankKey {
    Column(usize),
    Count(usize),
    Measure(usize),
    /// The entity's own date column (`oldest`, `most recently`).
    Time,
    /// The latest (or earliest) rows of a table (`the most recent production run`).
    Latest(usize),
    Nothing,
}

/// Analyses `question` over `index`. `ignore` holds lower-case words to skip (datasource
/// names).
pub(crate) fn analyze(
    question: &str,
    index: &SchemaIndex,
    today: Day,
    ignore: &[String],
) -> Result<Analysis, Unlinked> {
    let tokens = tokenize(question);
    let mut cues = cues(&tokens, today);
    // A datasource's name is skipped where it names the datasource ("in the sales
    // database", "from supply"); elsewhere it may still be a word of the question ("total
    // sales"), and is skipped only if it links to nothing.
    let ds_word = |i: usize| {
        let t = &tokens[i];
        t.kind == TokenKind::Word && ignore.contains(&t.lower)
    };
    for i in 0..tokens.len() {
        let next = tokens.get(i + 1);
        let names_source = next.is_some_and(|n| n.is_any(SOURCE_NOUNS))
            || (next.is_none() && i > 0 && tokens[i - 1].is_any(&["in", "from", "using"]));
        if ds_word(i) && names_source {
            cues.used[i] = true;
        }
    }
    let mut mentions = link(question, &tokens, &cues.used, index);
    // Not through a description alone: "sales" is in many descriptions of a sales
    // datasource.
    mentions.retain(|m| !(m.score <= DESCRIPTION_SCORE && (m.start..m.end).any(ds_word)));
    for i in 0..tokens.len() {
        if ds_word(i) && !mentions.iter().any(|m| m.start <= i && i < m.end) {
            cues.used[i] = true;
        }
    }
    Builder {
        tokens: &tokens,
        cues: &cues,
        index,
        consumed: vec![false; mentions.len()],
        mentions: &mentions,
        a: Analysis::default(),
        role_unlinked: Vec::new(),
        unsupported: Vec::new(),
        negations_used: vec![false; cues.negations.len()],
        noun_counts: Vec::new(),
        sum_havings: Vec::new(),
        filter_tokens: vec![false; tokens.len()],
        count_named: false,
        arithmetic: None,
    }
    .run()
}

struct Builder<'a> {
    tokens: &'a [Token],
    cues: &'a Cues,
    index: &'a SchemaIndex,
    mentions: &'a [Mention],
    consumed: Vec<bool>,
    a: Analysis,
    role_unlinked: Vec<String>,
    /// Readings the plan model cannot express (counting distinct values).
    unsupported: Vec<String>,
    /// Which negation cues negate a value.
    negations_used: Vec<bool>,
    /// "machine count": where a table followed by `count` starts, and its count measure.
    noun_counts: Vec<(usize, usize)>,
    /// Conditions on a column's sum per group (HAVING SUM): column, operator, bound.
    sum_havings: Vec<(usize, CmpOp, f64)>,
    /// Tokens that spell a value filter, with the column or table word that names it
    /// ("the Day shift"): filler between a cue and what it binds to.
    filter_tokens: Vec<bool>,
    /// A listing asks for the subject's own count ("their type and count").
    count_named: bool,
    /// A measure computed from two columns of one table: (multiply?, first, second).
    arithmetic: Option<(bool, usize, usize)>,
}

impl Builder<'_> {
    fn run(mut self) -> Result<Analysis, Unlinked> {
        let unlinked = self.unlinked_words();
        if self.mentions.is_empty() {
            return Err(Unlinked {
                words: if unlinked.is_empty() {
                    content_words(self.tokens)
                } else {
                    unlinked
                },
                reason: "no word of the question names a table, column or known value".into(),
            });
        }
        // "Swiss vendors" where no country column can hold Switzerland: a filter the
        // question asks for and the plan would drop.
        let countries: Vec<String> = (0..self.tokens.len())
            .filter(|i| {
                !self.cues.used[*i]
                    && unlinked.contains(&self.tokens[*i].raw)
                    && super::link::names_country(self.tokens, *i)
            })
            .map(|i| self.tokens[i].raw.clone())
            .collect();
        if !countries.is_empty() {
            return Err(Unlinked {
                words: countries,
                reason: "no country column of the schema holds that country".into(),
            });
        }
        self.a.score = self.mentions.iter().map(|m| m.score).sum();
        if let Some(first) = self.first_content_word()
            && unlinked.contains(&first)
        {
            return Err(Unlinked {
                words: unlinked,
                reason: "the subject of the question is not in the schema".into(),
            });
        }
        // A subject found only inside a description ("company" in "Company name"), in a
        // question with other words the schema lacks, is a guess.
        if let Some(m) = self.subject_mention()
            && m.score <= DESCRIPTION_SCORE
            && !unlinked.is_empty()
        {
            let mut words: Vec<String> = self.tokens[m.start..m.end]
                .iter()
                .map(|t| t.raw.clone())
                .collect();
            words.extend(unlinked);
            return Err(Unlinked {
                words,
                reason: "the subject of the question is only in a description".into(),
            });
        }
        self.value_filters();
        // "machines that never had maintenance", "products with no runs": a negation of
        // a table (or of a verb that names one of its columns) asks for rows without
        // matching rows there (an anti-join).
        self.absent_tables();
        // Any other negation that negates no value is not understood.
        if let Some(p) = self.negations_used.iter().position(|u| !u) {
            let word = self.tokens[self.cues.negations[p]].raw.clone();
            return Err(Unlinked {
                words: Vec::new(),
                reason: format!("the negation '{word}' negates no known value"),
            });
        }
        self.arithmetic = self.arithmetic();
        let count_havings = self.comparisons();
        self.noun_counts = self.noun_counts();
        let mut agg_measures = self.aggregations();
        self.apply_arithmetic(&mut agg_measures);
        agg_measures.extend(self.noun_counts.iter().map(|(_, m)| *m));
        let rank_by_group = self.groups(&agg_measures);
        let mut rank = None;
        self.superlatives(&agg_measures, &mut rank);
        // "Rank the machines by total units produced": a grouping by a measure, with no
        // count, orders every group by it.
        if rank.is_none()
            && self.cues.top.is_none()
            && let Some(RankKey::Measure(m)) = &rank_by_group
        {
            rank = Some((
                RankKey::Measure(*m),
                self.cues.order_desc.unwrap_or(true),
                None,
            ));
        }
        if rank.is_none()
            && let Some((n, desc, _)) = self.cues.top
        {
            let key = match rank_by_group {
                Some(k) => k,
                None => match agg_measures.first() {
                    Some(m) => RankKey::Measure(*m),
                    None => RankKey::Nothing,
                },
            };
            rank = Some((key, desc.unwrap_or(true), Some(n)));
        } else if let Some((_, _, n)) = rank.as_mut()
            && let Some((top_n, _, _)) = self.cues.top
        {
            *n = Some(top_n);
        }
        if let Some(reason) = self.unsupported.first() {
            return Err(Unlinked {
                words: Vec::new(),
                reason: reason.clone(),
            });
        }
        if !self.role_unlinked.is_empty() {
            let mut words = self.role_unlinked.clone();
            words.extend(
                unlinked
                    .iter()
                    .filter(|w| !self.role_unlinked.contains(w))
                    .cloned(),
            );
            return Err(Unlinked {
                words,
                reason: "the question asks about something the schema does not hold".into(),
            });
        }
        self.assemble(rank, count_havings)?;
        self.dates();
        self.ordering();
        self.a.unlinked = unlinked;
        self.a.mentions = self.mentions.to_vec();
        self.a.cues = self.cues.clone();
        if !self.a.unlinked.is_empty() {
            self.a
                .notes
                .push(format!("ignored words: {}", self.a.unlinked.join(", ")));
        }
        Ok(self.a)
    }

    fn table_of(&self, m: &Mention) -> usize {
        match &m.target {
            Target::Table(t) => *t,
            Target::Column(c) | Target::Value { column: c, .. } => self.index.columns[*c].table,
        }
    }

    /// Content words no mention or cue covers.
    fn unlinked_words(&self) -> Vec<String> {
        let covered = self.covered();
        self.tokens
            .iter()
            .enumerate()
            .filter(|(i, t)| {
                t.kind == TokenKind::Word
                    && !covered[*i]
                    && !self.cues.used[*i]
                    && !is_function_word(&t.lower)
                    && !is_stop_word(&t.lower)
                    && t.lower.chars().any(char::is_alphabetic)
            })
            .map(|(_, t)| t.raw.clone())
            .collect()
    }

    fn covered(&self) -> Vec<bool> {
        let mut covered = vec![false; self.tokens.len()];
        for m in self.mentions {
            covered[m.start..m.end].iter_mut().for_each(|c| *c = true);
        }
        covered
    }

    /// The first content word of the question, if no mention or cue covers it.
    fn first_content_word(&self) -> Option<String> {
        let covered = self.covered();
        let i = self.tokens.iter().enumerate().position(|(i, t)| {
            covered[i]
                || (t.kind == TokenKind::Word
                    && !self.cues.used[i]
                    && !is_function_word(&t.lower)
                    && !is_stop_word(&t.lower))
        })?;
        (!covered[i]).then(|| self.tokens[i].raw.clone())
    }

    /// The mention that covers the first content word of the question, if any.
    fn subject_mention(&self) -> Option<&Mention> {
        let i = self.tokens.iter().enumerate().position(|(i, t)| {
            self.mentions.iter().any(|m| m.start <= i && i < m.end)
                || (t.kind == TokenKind::Word
                    && !self.cues.used[i]
                    && !is_function_word(&t.lower)
                    && !is_stop_word(&t.lower))
        })?;
        self.mentions.iter().find(|m| m.start <= i && i < m.end)
    }

    /// The first content word at or after `from` (within `window` tokens) when it is
    /// unlinked: the question names something in a role position that the schema lacks.
    fn unlinked_at(&self, from: usize, window: usize) -> Option<String> {
        let covered = self.covered();
        for (i, t) in self.tokens.iter().enumerate().skip(from).take(window) {
            if covered[i] {
                return None;
            }
            if self.cues.used[i] || t.kind != TokenKind::Word || is_function_word(&t.lower) {
                continue;
            }
            if is_stop_word(&t.lower) {
                continue;
            }
            return Some(t.raw.clone());
        }
        None
    }

    /// The first unconsumed mention starting in `[from, from + window]` that is a table or
    /// a column.
    fn mention_after(&self, from: usize, window: usize) -> Option<usize> {
        self.mentions.iter().enumerate().find_map(|(k, m)| {
            (!self.consumed[k]
                && m.start >= from
                && m.start <= from + window
                && !matches!(m.target, Target::Value { .. })
                && self.only_filler(from, m.start))
            .then_some(k)
        })
    }

    /// True when tokens `[from, to)` are grammar words or cue words (but no grouping or
    /// comparison cue, which starts a new clause).
    fn only_filler(&self, from: usize, to: usize) -> bool {
        (from..to).all(|i| {
            let t = &self.tokens[i];
            let in_value = self.filter_tokens[i]
                || self
                    .mentions
                    .iter()
                    .any(|m| matches!(m.target, Target::Value { .. }) && m.start <= i && i < m.end);
            !self.cues.barriers[i]
                && (in_value
                    || self.cues.used[i]
                    || is_function_word(&t.lower)
                    || is_stop_word(&t.lower))
        })
    }

    fn value_filters(&mut self) {
        for (k, m) in self.mentions.iter().enumerate() {
            let Target::Value {
                column,
                values,
                exact,
                word,
            } = &m.target
            else {
                continue;
            };
            self.consumed[k] = true;
            // "weren't delivered on time", "not in the Widgets category": a verb or a
            // preposition may stand between the negation and the value.
            let negation = self
                .cues
                .negations
                .iter()
                .position(|n| *n < m.start && m.start - n <= 3);
            if let Some(p) = negation {
                self.negations_used[p] = true;
            }
            let negated = negation.is_some();
            let test = if *exact || values.len() == 1 {
                Test::In(values.clone())
            } else {
                Test::Contains(word.clone())
            };
            // "not preferred": the boolean's other value, which also keeps `NULL`s out.
            let (test, negated) = match (&test, negated) {
                (Test::In(v), true) if matches!(v.as_slice(), [Value::Bool(_)]) => {
                    let b = v.first().and_then(Value::as_bool).unwrap_or(true);
                    (Test::In(vec![Value::Bool(!b)]), false)
                }
                _ => (test, negated),
            };
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
                continue;
            }
            self.a.filters.push(Filter {
                column: *column,
                test,
                negated,
            });
        }
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
                    && (v.end == m.start || m.end == v.start)
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

    /// Negations followed (within three words) by a table, or by a past participle that
    /// names a number column of a table: rows of that table must be absent.
    fn absent_tables(&mut self) {
        for (p, &n) in self.cues.negations.iter().enumerate() {
            if self.negations_used[p] {
                continue;
            }
            let found = self.mentions.iter().enumerate().find_map(|(k, m)| {
                if self.consumed[k] || m.start <= n || m.start - n > 3 {
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
                    _ => None,
                }
            });
            let Some((k, t)) = found else { continue };
            // The rows that lack matches must be of another table that `t` refers to.
            let subject = self
                .mentions
                .iter()
                .enumerate()
                .find_map(|(j, m)| match m.target {
                    Target::Table(s) if j != k && s != t && self.index.refers_to(t, s) => Some(s),
                    Target::Column(c)
                        if j != k
                            && self.index.columns[c].table != t
                            && self.index.refers_to(t, self.index.columns[c].table) =>
                    {
                        Some(self.index.columns[c].table)
                    }
                    _ => None,
                });
            if subject.is_none()
                || self.index.tables[t]
                    .columns
                    .iter()
                    .all(|c| !self.index.columns[*c].is_pk)
            {
                continue;
            }
            self.consumed[k] = true;
            self.negations_used[p] = true;
            if !self.a.absent.contains(&t) {
                self.a.absent.push(t);
            }
        }
    }

    /// "quantity times unit price", "units planned minus units produced", "the difference
    /// between X and Y": two number columns of one table combined into one measure. Both
    /// mentions are consumed.
    fn arithmetic(&mut self) -> Option<(bool, usize, usize)> {
        if self.cues.aggs.is_empty() {
            return None;
        }
        let w = |k: usize| self.tokens.get(k).map(|t| t.lower.as_str()).unwrap_or("");
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
    fn apply_arithmetic(&mut self, agg_measures: &mut Vec<usize>) {
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
    fn generic_measure_before(&self, at: usize) -> Option<usize> {
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
    fn is_entity_position(&self, m: &Mention) -> bool {
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
    fn comparisons(&mut self) -> Vec<(usize, CmpOp, f64, bool)> {
        let mut count_havings = Vec::new();
        for cue in &self.cues.comparisons {
            let total = self.total_marker(cue.start, cue.end);
            let numeric = |m: &Mention| match m.target {
                Target::Column(c) => self.index.columns[c].class == super::link::TypeClass::Numeric,
                _ => false,
            };
            let before = self
                .mentions
                .iter()
                .enumerate()
                .filter(|(k, m)| {
                    !self.consumed[*k] && numeric(m) && m.end <= cue.start && cue.start - m.end <= 3
                })
                .max_by_key(|(_, m)| m.end)
                .map(|(k, _)| k);
            let after = self
                .mentions
                .iter()
                .enumerate()
                .find(|(k, m)| !self.consumed[*k] && m.start >= cue.end && m.start - cue.end <= 2)
                .map(|(k, _)| k);
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
                (_, Some(k)) => Some(k),
                _ => None,
            };
            match chosen {
                Some(k) => {
                    self.consumed[k] = true;
                    let Some(c) = self.mentions[k].column() else {
                        continue;
                    };
                    // "which shifts produced more than 1000 units in total": a condition
                    // on the groups' sum (HAVING), not on rows.
                    if total.is_some() {
                        for (op, v) in &cue.bounds {
                            self.sum_havings.push((c, *op, *v));
                        }
                        continue;
                    }
                    for (op, v) in &cue.bounds {
                        self.a.filters.push(Filter {
                            column: c,
                            test: Test::Cmp(*op, Lit::Number(*v)),
                            negated: false,
                        });
                    }
                }
                None => {
                    if let Some(c) = self.generic_measure_before(cue.start) {
                        // "defects with a count above 3": the subject's own count.
                        for (op, v) in &cue.bounds {
                            self.a.filters.push(Filter {
                                column: c,
                                test: Test::Cmp(*op, Lit::Number(*v)),
                                negated: false,
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

    /// The aggregation cue of a "total" word that makes a comparison a condition on a sum:
    /// "more than 1000 units in total", "a total of more than 1000", "… combined".
    fn total_marker(&self, start: usize, end: usize) -> Option<usize> {
        let is_total = |i: usize| {
            self.tokens
                .get(i)
                .is_some_and(|t| t.is_any(&["total", "combined", "altogether", "overall"]))
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
    /// column when no table is named).
    fn entity(&self) -> Option<usize> {
        self.mentions.iter().enumerate().find_map(|(k, m)| {
            let ok = !self.consumed[k]
                && match m.target {
                    Target::Table(_) => true,
                    Target::Column(c) => !self.index.columns[c].is_measure(),
                    Target::Value { .. } => false,
                };
            ok.then_some(k)
        })
    }

    /// A number written right before mention `k` (`which two factories`).
    fn count_before(&self, k: usize) -> Option<i64> {
        let start = self.mentions[k].start;
        let i = start.checked_sub(1)?;
        let t = &self.tokens[i];
        if t.kind == TokenKind::Number && t.raw.len() < 4 {
            return t.number().map(|n| n as i64);
        }
        super::text::number_word(&t.lower).filter(|n| *n > 1)
    }
}

/// True for a word that is its own singular ("stock", not "machines").
fn is_singular(word: &str) -> bool {
    super::text::singular(word) == word
}

/// True for a `true`/`false` value of a boolean column.
fn is_boolean_value(target: &Target) -> bool {
    matches!(target, Target::Value { values, .. } if matches!(values.as_slice(), [Value::Bool(_)]))
}

fn content_words(tokens: &[Token]) -> Vec<String> {
    tokens
        .iter()
        .filter(|t| t.kind == TokenKind::Word && !is_function_word(&t.lower))
        .map(|t| t.raw.clone())
        .collect()
}
