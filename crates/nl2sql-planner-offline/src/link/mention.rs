//! What linking produces: question spans (`Mention`) linked to schema targets (`Target`),
//! and a span's candidates before ties are resolved.

use serde_json::Value;

use super::schema::SchemaIndex;

/// What a mention links to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Target {
    /// A table.
    Table(usize),
    /// A column.
    Column(usize),
    /// Known values of a column: `exact` when the question spells whole values.
    Value {
        /// The column.
        column: usize,
        /// The values.
        values: Vec<Value>,
        /// Whole values (`=`/`IN`) or a word inside them (`LIKE`).
        exact: bool,
        /// The word matched when not exact.
        word: String,
        /// Where in the value the word stands when not exact.
        part: Part,
    },
}

/// Where a word stands in the values it is part of: anywhere (`LIKE '%w%'`), at their
/// start ("names starting with 'S'": `LIKE 'S%'`) or at their end (`LIKE '%m'`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// Anywhere in the value.
    Inside,
    /// At the start of the value.
    Start,
    /// At the end of the value.
    End,
}

/// A question span linked to the schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mention {
    /// First token.
    pub(crate) start: usize,
    /// One past the last token.
    pub(crate) end: usize,
    /// The chosen target.
    pub(crate) target: Target,
    /// The score of the choice.
    pub(crate) score: u32,
    /// Equally (or, for words inside longer names, nearly equally) scored targets before
    /// ties were resolved, with their scores (empty when there was no tie).
    pub(crate) alternatives: Vec<(Target, u32)>,
    /// A second reading that nothing but the order of names told apart from the chosen
    /// one (no context, score, type or role preferred either): the question reads two
    /// ways, and the plan would be a guess.
    pub(crate) guess: Option<Target>,
}

impl Target {
    /// One known value of `column`, spelt out whole (`= value`).
    pub(crate) fn known(column: usize, value: Value) -> Target {
        Target::Value {
            column,
            values: vec![value],
            exact: true,
            word: String::new(),
            part: Part::Inside,
        }
    }
}

impl Target {
    /// The table of the target: the table itself, or the table of its column.
    pub(crate) fn table(&self, index: &SchemaIndex) -> usize {
        match self {
            Target::Table(t) => *t,
            Target::Column(c) | Target::Value { column: c, .. } => index.columns[*c].table,
        }
    }
}

impl Mention {
    /// The column of a column or value mention.
    pub(crate) fn column(&self) -> Option<usize> {
        match &self.target {
            Target::Column(c) | Target::Value { column: c, .. } => Some(*c),
            Target::Table(_) => None,
        }
    }
}

/// The score of a table found by one word of its name: the best a partial match gets.
const PARTIAL_SCORE: u32 = 8;

/// The score of a table or column named by its whole name (one word; each further word
/// adds 2).
pub(super) const WHOLE_NAME_SCORE: u32 = 20;

/// Candidates of one span before context is known.
pub(super) type Candidates = Vec<(Target, u32)>;

/// A mention with its best-scored candidates; ties are resolved by `resolve_ties`.
pub(super) fn pending(start: usize, end: usize, mut cands: Candidates) -> Mention {
    let best = cands.iter().map(|(_, s)| *s).max().unwrap_or(0);
    // A word found inside longer names ("kind" in `machine_types` and in
    // `maintenance_type`) is weak evidence for any of them: the context decides between
    // candidates one point apart.
    let floor = if best <= PARTIAL_SCORE {
        best.saturating_sub(1)
    } else {
        best
    };
    cands.retain(|(_, s)| *s >= floor);
    cands.sort_by_key(|(_, s)| std::cmp::Reverse(*s));
    let alternatives: Candidates = cands;
    Mention {
        start,
        end,
        target: alternatives
            .first()
            .map(|(t, _)| t.clone())
            .unwrap_or(Target::Table(0)),
        score: best,
        alternatives: if alternatives.len() > 1 {
            alternatives
        } else {
            Vec::new()
        },
        guess: None,
    }
}

/// The mention nearest before token `at` (ending at most `window` tokens before it), with
/// its index in `mentions`.
pub(crate) fn nearest_before(
    mentions: &[Mention],
    at: usize,
    window: usize,
) -> Option<(usize, &Mention)> {
    mentions
        .iter()
        .enumerate()
        .filter(|(_, m)| m.end <= at && at - m.end <= window)
        .max_by_key(|(_, m)| m.end)
}

/// The mention nearest after token `at` (starting at most `window` tokens after it),
/// with its index in `mentions`.
pub(crate) fn nearest_after(
    mentions: &[Mention],
    at: usize,
    window: usize,
) -> Option<(usize, &Mention)> {
    mentions
        .iter()
        .enumerate()
        .filter(|(_, m)| m.start > at && m.start - at <= window)
        .min_by_key(|(_, m)| m.start)
}
