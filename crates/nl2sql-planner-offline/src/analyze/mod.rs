//! Question analysis: combines the intent cues with the schema links into an [`Analysis`]
//! (what to select, aggregate, group, filter, order and limit, over which tables). The
//! analysis is the common ground of decomposition (semantic sub-queries) and planning
//! (`PlanModel`s). Words in a role position (the target of a count, a grouping, a ranking)
//! that link to nothing make the analysis fail instead of guessing. `bind` ties the cues
//! to their mentions; `assemble` turns the bound cues into outputs, filters and order.

use serde_json::Value;

use super::intent::{Agg, CmpOp, Cues, Day, cues};
use super::link::{Mention, Part, SchemaIndex, Target, link, nearest_before};

mod assemble;
mod bind;
mod computed;
mod cue_names;
mod disjunctions;
mod filters;
mod intersections;
mod per_answer;
mod years;
use super::text::{Token, TokenKind, is_function_word, is_stop_word, punctuated_before};

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

/// What "information" asks for ([`Cues::every_column`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EveryColumn {
    /// Every column of this table: "all the information about courses".
    Of(usize),
    /// The columns named right before it: "the delegate and committee information".
    Listed,
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
    /// The word occurs inside the value (`LIKE '%word%'`), or starts or ends it.
    Contains(String, Part),
    /// A comparison with a value computed over the rows of the column's table (its
    /// average, smallest or largest value), where the conditions hold (all rows when none).
    VsComputed(CmpOp, Agg, Vec<Filter>),
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
    /// The tokens the condition was read from (`start..end`), when it has them: where an
    /// "or" joins two conditions ([`Analysis::alternatives`]).
    pub(crate) span: Option<(usize, usize)>,
}

/// "both … and …": conditions (indexes into [`Analysis::filters`], two or more) each of
/// which holds on some row of every answer. The rows pass when any holds (`OR`); the
/// answers are the groups of the outputs in which every one held (`HAVING`), which is the
/// intersection of the sets of answers of each condition alone.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Both {
    /// The position of "both".
    pub(crate) at: usize,
    /// The conditions, in question order.
    pub(crate) filters: Vec<usize>,
}

/// A condition on a measure (HAVING).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Having {
    /// The measure, by index.
    pub(crate) measure: usize,
    /// The comparison.
    pub(crate) op: CmpOp,
    /// The bound.
    pub(crate) value: Bound,
}

/// What a group's measure is compared with.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Bound {
    /// A number the question gives.
    Number(f64),
    /// A column aggregated over the rows of its table where the conditions hold ("higher
    /// than the average price of all products").
    Computed(usize, Agg, Vec<Filter>),
}

/// The meaning of a question over one schema.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Analysis {
    /// The FROM table.
    pub(crate) base: usize,
    /// The phrases of the comparisons with a computed value that became filters
    /// (`start..end`), with the column compared and the aggregate.
    pub(crate) computed_read: Vec<(usize, usize, usize, Agg)>,
    /// Output columns in order.
    pub(crate) outputs: Vec<Output>,
    /// Measures.
    pub(crate) measures: Vec<Measure>,
    /// Grouping columns.
    pub(crate) group_by: Vec<usize>,
    /// Date columns of `group_by` that are grouped by a calendar period ("per month").
    pub(crate) grains: Vec<(usize, Grain)>,
    /// Row filters, all of which hold (`AND`), except that the filters of each group of
    /// `alternatives` hold one or the other.
    pub(crate) filters: Vec<Filter>,
    /// Groups of filters (indexes into `filters`, two or more each, in order) that "or"
    /// joins: a row passes a group when any of its filters holds (`OR`).
    pub(crate) alternatives: Vec<Vec<usize>>,
    /// Positions of the question's "or"s that join nothing the plan reads as
    /// alternatives: the coverage check refuses such a question rather than answer it as
    /// if "or" were "and".
    pub(crate) unread_or: Vec<usize>,
    /// Intersections ("customers who used both service A and service B"): conditions
    /// each of which must hold on some row of every answer, not all on one row.
    pub(crate) both: Vec<Both>,
    /// Group filters.
    pub(crate) having: Vec<Having>,
    /// Tables whose matching rows must be absent ("machines that never had maintenance"):
    /// left-joined, with their key `IS NULL`.
    pub(crate) absent: Vec<usize>,
    /// Mentions (indexes into `mentions`) of tables missing with the absent rows: the
    /// table a link table leads to ("stations without any trains") and what the absent
    /// rows would have led to ("not enrolled in any course").
    pub(crate) absent_with: Vec<usize>,
    /// Words that chose the link table rows are missing from, of several between the same
    /// two tables ("do not have any registered members" over `membership_register_branch`,
    /// not `purchase`): (token, table).
    pub(crate) link_words: Vec<(usize, usize)>,
    /// Keys chosen by their role among several foreign keys between the same two tables
    /// ("trips that started from the station": `trip.start_station_id`), with the words
    /// that said the role ([`crate::link::roles_said`]).
    pub(crate) roles: Vec<(usize, Vec<usize>)>,
    /// Conditions on rows of tables an answer has many rows of, counted per answer
    /// ("movies not reviewed by Chris Jackson": no rating by him; "schools with players
    /// in the mid position but not in the goalie position"): each group of filters
    /// (indexes into `filters`, all holding on one row) must hold on some row of the
    /// answer (`true`) or on none (`false`). Their tables are left-joined, the filters
    /// stay out of `WHERE`, and the answers are the groups of the outputs, each
    /// condition counted in `HAVING`.
    pub(crate) per_answer: Vec<(Vec<usize>, bool)>,
    /// Mentions (indexes into `mentions`) of columns that name the rows an intersection's
    /// conditions are about ("colleges that have both authors with a score above 90 and
    /// …"), or the rows a frequency counts ("the most common genre in all tracks"), not
    /// an output.
    pub(crate) rows_named: Vec<usize>,
    /// First tokens of superlatives that order every row instead of picking the extreme
    /// ones ("starting with the oldest", "from the most recent to the oldest").
    pub(crate) ordering_superlatives: Vec<usize>,
    /// Tables joined only so that the listed rows have rows there ("categories produced
    /// in a run").
    pub(crate) joined: Vec<usize>,
    /// Sort keys: an output and descending?
    pub(crate) order: Vec<(Output, bool)>,
    /// Row limit.
    pub(crate) limit: Option<i64>,
    /// `SELECT DISTINCT`.
    pub(crate) distinct: bool,
    /// How "information" ([`Cues::every_column`]) was read, if it was.
    pub(crate) every_column: Option<EveryColumn>,
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
    /// The group of alternatives filter `k` is in, if any.
    pub(crate) fn alternatives_of(&self, k: usize) -> Option<&[usize]> {
        self.alternatives
            .iter()
            .find(|g| g.contains(&k))
            .map(Vec::as_slice)
    }

    /// Whether filter `k` is counted per answer ([`Analysis::per_answer`]), not a row
    /// filter.
    pub(crate) fn counted_per_answer(&self, k: usize) -> bool {
        self.per_answer.iter().any(|(g, _)| g.contains(&k))
    }

    /// Whether some tables are left-joined: rows that must be missing, or rows counted
    /// per answer.
    pub(crate) fn left_joins(&self) -> bool {
        !self.absent.is_empty() || !self.per_answer.is_empty()
    }

    /// The filters whose `OR` filter `k` stands in: its group of alternatives, or the
    /// conditions of its intersection (a row passes when any of them holds).
    pub(crate) fn or_group(&self, k: usize) -> Option<&[usize]> {
        self.alternatives_of(k).or_else(|| {
            self.both
                .iter()
                .find(|b| b.filters.contains(&k))
                .map(|b| b.filters.as_slice())
        })
    }

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
    /// A property of each row (`youngest` is the lowest age): the rows in order, never a
    /// group's total.
    Row(usize),
    Count(usize),
    Measure(usize),
    /// "the largest number of bedrooms" over `bedroom_count`: measure `.0`, the sum of a
    /// row's own amount column `.1` that "number of" named. Groups rank by the sum; rows
    /// the question names rank by the column itself.
    Amount(usize, usize),
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
    let tokens = crate::link::question_tokens(question, index);
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
    // "the information of a document" over a schema with an `other_info` column: the
    // schema's own word, for the linker.
    if let Some((start, end)) = cues.every_column
        && names_every_column_word(index)
    {
        cues.every_column = None;
        cues.used[start..end].iter_mut().for_each(|u| *u = false);
    }
    let mut mentions = link(question, &tokens, &cues.used, index);
    cue_names::cues_in_names(&mut cues, &mut mentions, &tokens, index);
    // A value spelt with the word ("the tech info desk", linked over cue words): the
    // word is the value's.
    if let Some((start, _)) = cues.every_column
        && mentions.iter().any(|m| m.start <= start && start < m.end)
    {
        cues.every_column = None;
    }
    // Not through a description alone: "sales" is in many descriptions of a sales
    // datasource.
    mentions.retain(|m| !(m.score <= DESCRIPTION_SCORE && (m.start..m.end).any(ds_word)));
    for i in 0..tokens.len() {
        if ds_word(i) && !mentions.iter().any(|m| m.start <= i && i < m.end) {
            cues.used[i] = true;
        }
    }
    // "problems reported by the staff": a word that says which of several keys joins two
    // tables (its role) is read as that key, not as a column of the same table that
    // shares the word (`date_problem_reported`).
    let roles = crate::link::roles_said(&tokens, index);
    // Its "by" ("dispatched by the clerk") says the role, not a grouping.
    for i in roles.iter().flat_map(|(_, words)| words) {
        if tokens[*i].is("by") {
            cues.groups.retain(|g| *g != i + 1);
            cues.barriers[*i] = false;
        }
    }
    let keep: Vec<bool> = mentions
        .iter()
        .map(|m| !only_role_words(m, &mentions, &roles, index))
        .collect();
    let mut keep = keep.into_iter();
    mentions.retain(|_| keep.next().unwrap_or(true));
    Builder {
        tokens: &tokens,
        cues: &cues,
        index,
        consumed: vec![false; mentions.len()],
        mentions: &mentions,
        a: Analysis {
            roles,
            ..Analysis::default()
        },
        role_unlinked: Vec::new(),
        unsupported: Vec::new(),
        no_values: Vec::new(),
        negations_used: vec![false; cues.negations.len()],
        values_without: Vec::new(),
        noun_counts: Vec::new(),
        agg_havings: Vec::new(),
        having_cues: Vec::new(),
        filter_tokens: vec![false; tokens.len()],
        count_named: false,
        arithmetic: None,
    }
    .run()
}

/// Whether mention `m` is a column of a key's table (not the key) said only in words that
/// chose the key by its role (see [`crate::link::roles_said`]), where another of the
/// `mentions` names the table the key leads to ("problems reported by the staff"; not
/// "problems reported before 1978", which is `date_problem_reported`).
fn only_role_words(
    m: &Mention,
    mentions: &[Mention],
    roles: &[(usize, Vec<usize>)],
    index: &SchemaIndex,
) -> bool {
    let Target::Column(c) = m.target else {
        return false;
    };
    roles.iter().any(|(k, words)| {
        let key = &index.foreign_keys[*k];
        index.columns[c].table == key.from
            && mentions.iter().any(|o| o.target.table(index) == key.to)
            && !key.is_referencing_column(&index.columns[c].name)
            && (m.start..m.end).all(|i| words.contains(&i))
    })
}

/// Whether a table or column name of the schema holds a word that asks for every column
/// ("information", "info").
fn names_every_column_word(index: &SchemaIndex) -> bool {
    let names = index.tables.iter().map(|t| &t.name);
    names
        .chain(index.columns.iter().map(|c| &c.name))
        .flat_map(|n| crate::text::split_ident(n))
        .any(|w| crate::intent::EVERY_COLUMN_WORDS.contains(&w.to_lowercase().as_str()))
}

/// Whether mention `m` names a number column (what a comparison can compare).
fn names_a_number_column(index: &SchemaIndex, m: &Mention) -> bool {
    matches!(m.target, Target::Column(c) if index.columns[c].is_number())
}

/// What the planner reads of comparisons with a computed value, for refusals.
const COMPUTED_READ: &str = "a column compared with its average, smallest or largest value \
     over the rows of its own table, all of them or those with named values, is understood";

/// "where the reviewer had the same name as the director": two values of the rows
/// compared with each other, which no plan element here reads ("same" is a stop word
/// otherwise); answered without it, every row would pass. On Spider train the one such
/// question answered was wrong.
fn same_as(tokens: &[Token]) -> Option<String> {
    let i = tokens.iter().position(|t| t.is("same"))?;
    let k = (i + 1..tokens.len().min(i + 5)).find(|&k| tokens[k].is("as"))?;
    let words: Vec<&str> = tokens[i..=k].iter().map(|t| t.raw.as_str()).collect();
    Some(format!(
        "'{}' compares two values of the rows with each other, which this planner does not \
         read",
        words.join(" ")
    ))
}

/// "prices beyond the average", "players taller than the average of those in their team":
/// a comparison word before an average that no phrase the analysis read holds (`read`
/// holds the phrases it read); read as anything else, the condition would be dropped (on
/// Spider train one such question was answered with the average beside the count).
fn compares_with_a_computed_value(
    tokens: &[Token],
    read: &[(usize, usize, usize, Agg)],
) -> Option<String> {
    const COMPARING: &[&str] = &[
        "above",
        "below",
        "than",
        "over",
        "under",
        "exceeds",
        "exceed",
        "exceeding",
        "beyond",
    ];
    const COMPUTED: &[&str] = &["average", "mean", "avg"];
    (0..tokens.len()).find_map(|i| {
        if !tokens[i].is_any(COMPARING) || read.iter().any(|(a, b, _, _)| (*a..*b).contains(&i)) {
            return None;
        }
        let mut k = i + 1;
        while tokens
            .get(k)
            .is_some_and(|t| t.is_any(&["the", "an", "a", "overall"]))
        {
            k += 1;
        }
        let t = tokens.get(k)?;
        t.is_any(COMPUTED).then(|| {
            format!(
                "'{} {}' compares with a value computed over rows this planner could not \
                 read ({COMPUTED_READ}); ask for the {} first, then compare with the number",
                tokens[i].raw,
                tokens[i + 1..=k]
                    .iter()
                    .map(|t| t.raw.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                t.raw
            )
        })
    })
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
    /// Values negated by "no" ("no captain in the Third-rate class"): the column, and why
    /// a row filter on it would be wrong, for when no per-answer reading took it.
    no_values: Vec<(usize, String)>,
    /// Which negation cues negate a value.
    negations_used: Vec<bool>,
    /// "countries that do not have a stadium opened after 2006": negations (token) of a
    /// table whose column the answers are values of, each value asked for where no row
    /// of the table with it meets the conditions after the negation.
    values_without: Vec<(usize, usize)>,
    /// "machine count": where a table followed by `count` starts, and its count measure.
    noun_counts: Vec<(usize, usize)>,
    /// Conditions on an aggregate of a column per group (HAVING SUM, HAVING AVG…):
    /// aggregate, column, operator, bound.
    agg_havings: Vec<(Agg, usize, CmpOp, Bound)>,
    /// The aggregation cues (indices into `cues.aggs`) that such a condition read
    /// ("studios whose average gross is above 4500000"): no measure of their own.
    having_cues: Vec<usize>,
    /// Tokens that spell a value filter, with the column or table word that names it
    /// ("the Day shift"): filler between a cue and what it binds to.
    filter_tokens: Vec<bool>,
    /// A listing asks for the subject's own count ("their type and count").
    count_named: bool,
    /// A measure computed from two columns of one table: (multiply?, first, second).
    arithmetic: Option<(bool, usize, usize)>,
}

impl Builder<'_> {
    /// The lowercased word at `k`, or "" past the end of the question.
    fn word(&self, k: usize) -> &str {
        self.tokens.get(k).map_or("", |t| t.lower.as_str())
    }

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
        self.computed_comparisons();
        let count_havings = self.comparisons();
        self.noun_counts = self.noun_counts();
        let mut agg_measures = self.aggregations();
        self.apply_arithmetic(&mut agg_measures);
        agg_measures.extend(self.noun_counts.iter().map(|(_, m)| *m));
        self.groups_listed_beside_a_count();
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
            && let Some((n, desc, end)) = self.cues.top
        {
            let key = match rank_by_group {
                Some(k) => k,
                None => match agg_measures.first() {
                    Some(m) => RankKey::Measure(*m),
                    None => self.measure_named_by_top(end).unwrap_or(RankKey::Nothing),
                },
            };
            rank = Some((key, desc.unwrap_or(true), Some(n)));
        } else if let Some((_, _, n)) = rank.as_mut()
            && let Some((top_n, _, _)) = self.cues.top
        {
            *n = Some(top_n);
        }
        // A comparison with a computed value that was not read would be dropped.
        if let Some(cue) = self
            .cues
            .computed
            .iter()
            .find(|c| !self.a.computed_read.iter().any(|r| r.0 == c.start))
        {
            self.unsupported.push(format!(
                "'{}' compares with a value computed over rows this planner could not read \
                 ({COMPUTED_READ})",
                self.tokens[cue.start..cue.end]
                    .iter()
                    .map(|t| t.raw.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
        }
        if let Some(reason) = compares_with_a_computed_value(self.tokens, &self.a.computed_read) {
            self.unsupported.push(reason);
        }
        if let Some(reason) = same_as(self.tokens) {
            self.unsupported.push(reason);
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
        self.disjunctions();
        self.intersections();
        self.ordering();
        self.negations_of_related_rows()?;
        if let Some((_, reason)) = self
            .no_values
            .iter()
            .find(|(c, _)| self.a.filters.iter().any(|f| f.negated && f.column == *c))
        {
            return Err(Unlinked {
                words: Vec::new(),
                reason: reason.clone(),
            });
        }
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
        m.target.table(self.index)
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

    /// The mention that ends nearest before `at`, at most `window` words before it ("the
    /// orders placed in 2023": `orders` before the date phrase).
    fn mention_before(&self, at: usize, window: usize) -> Option<&Mention> {
        nearest_before(self.mentions, at, window).map(|(_, m)| m)
    }

    /// "the trips with the top 3 durations", "the mountains with the top 3 prominence": a
    /// top-N right before a measure (or a date) ranks by it. A top-N before a table or a
    /// text column ("the top 3 apartment type codes") names no key of its own.
    fn measure_named_by_top(&mut self, end: usize) -> Option<RankKey> {
        let k = self.mention_after(end, 0)?;
        let c = self.mentions[k].column()?;
        let col = &self.index.columns[c];
        (col.is_measure() || col.is_temporal()).then(|| {
            self.consumed[k] = true;
            RankKey::Column(c)
        })
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
