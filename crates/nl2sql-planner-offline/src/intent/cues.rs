//! The cues an analysis reads from a question: aggregations, superlatives, comparisons,
//! date ranges, ordering and the rest, and how a number is read at a token.

use crate::text::{Token, TokenKind, number_word};

/// An aggregation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Agg {
    /// Row count.
    Count,
    /// Sum.
    Sum,
    /// Mean.
    Avg,
    /// Smallest.
    Min,
    /// Largest.
    Max,
}

/// A comparison operator of a cue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CmpOp {
    /// `=`.
    Eq,
    /// `!=`.
    NotEq,
    /// `>`.
    Gt,
    /// `>=`.
    GtEq,
    /// `<`.
    Lt,
    /// `<=`.
    LtEq,
}

/// An aggregation word and where its target may start.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AggCue {
    /// The aggregation.
    pub(crate) agg: Agg,
    /// First token of the cue.
    pub(crate) start: usize,
    /// First token after the cue.
    pub(crate) end: usize,
    /// A count of distinct values: "how many different X", "the number of unique X",
    /// "a distinct count of X".
    pub(crate) distinct: bool,
}

impl AggCue {
    /// "the maximum number of pilots", "the maximum and minimum number of cows": a bare
    /// "number of" right after an extreme (`prev`) names the unit of that extreme, not a
    /// count of its own ("the maximum and total number of followers" asks for two
    /// figures).
    pub(crate) fn counts_the_unit_of(&self, prev: &AggCue, tokens: &[Token]) -> bool {
        self.agg == Agg::Count
            && matches!(prev.agg, Agg::Max | Agg::Min)
            && prev.end == self.start
            && self.end == self.start + 2
            && tokens[self.start].is("number")
    }
}

/// Words that make a count one of distinct values.
pub(crate) const DISTINCT_WORDS: &[&str] = &["distinct", "unique", "different", "separate"];

/// A superlative (`highest`, `most`, `fewest`…): a ranking or a MIN/MAX.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SuperCue {
    /// True for highest/most/latest.
    pub(crate) desc: bool,
    /// First token of the cue.
    pub(crate) start: usize,
    /// First token after the cue.
    pub(crate) end: usize,
    /// `most common`/`most frequent`: rank values by how often they occur.
    pub(crate) frequency: bool,
    /// `newest`, `oldest`, `most recent(ly)`: a ranking in time.
    pub(crate) time: bool,
    /// Written with a count (`the 3 oldest`, `two most recently`): the count is the
    /// top-N cue's, and a bare entity after it is what is listed, not a key.
    pub(crate) counted: bool,
}

/// A numeric comparison (`more than 5`, `between 3 and 7`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CmpCue {
    /// First token.
    pub(crate) start: usize,
    /// One past the last token.
    pub(crate) end: usize,
    /// Operator and bound; `between` gives two cues.
    pub(crate) bounds: Vec<(CmpOp, f64)>,
}

/// A comparison with a value computed over rows: "higher than the average price", "older
/// than average", "more than the maximum salary", "older than every engineer" (the
/// largest age of the engineers), "larger than at least one college in Florida" (the
/// smallest): the phrase up to where the column or the rows (if named) start.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ComputedCue {
    /// First token (the comparison).
    pub(crate) start: usize,
    /// One past the phrase ("… the average [number of]", "… every").
    pub(crate) end: usize,
    /// The operator.
    pub(crate) op: CmpOp,
    /// The value compared with: `Avg`, `Min` or `Max` of the column.
    pub(crate) agg: Agg,
    /// The words between the comparative and "than" ("more pages than the average"):
    /// they name the compared column.
    pub(crate) between: Option<(usize, usize)>,
    /// A quantifier ("every", "some", "at least one") rather than an aggregate word: the
    /// rows it quantifies must be named.
    pub(crate) quantified: bool,
}

/// A date range `[lo, hi)` from a date phrase.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DateCue {
    /// First token.
    pub(crate) start: usize,
    /// One past the last token.
    pub(crate) end: usize,
    /// Inclusive lower bound (`YYYY-MM-DD`).
    pub(crate) lo: Option<String>,
    /// Exclusive upper bound.
    pub(crate) hi: Option<String>,
}

/// Every cue of a question.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Cues {
    /// Tokens consumed by cues.
    pub(crate) used: Vec<bool>,
    /// Aggregation words.
    pub(crate) aggs: Vec<AggCue>,
    /// Superlatives.
    pub(crate) supers: Vec<SuperCue>,
    /// Where grouping targets start (after `per`, `by`, `for each`…).
    pub(crate) groups: Vec<usize>,
    /// Numeric comparisons.
    pub(crate) comparisons: Vec<CmpCue>,
    /// Comparisons with a value computed over rows.
    pub(crate) computed: Vec<ComputedCue>,
    /// Date ranges.
    pub(crate) dates: Vec<DateCue>,
    /// `top N` / `N most`: the count, the direction (true = descending) and where the
    /// cue ends.
    pub(crate) top: Option<(i64, Option<bool>, usize)>,
    /// `sorted by X`: where the key starts.
    pub(crate) order_key: Option<usize>,
    /// Direction words (`descending`, `highest first`…).
    pub(crate) order_desc: Option<bool>,
    /// The direction is alphabetical ("in alphabetical order"): it sorts text.
    pub(crate) order_alphabetical: bool,
    /// The noun of a superlative-noun-`first` direction ("highest revenue first"), which
    /// names the sort key when it is a column of the rows listed.
    pub(crate) order_noun: Option<usize>,
    /// `distinct`, `unique`, `different`.
    pub(crate) distinct: bool,
    /// "all the information about courses", "the customer info": every column of the
    /// rows asked for (where the words of the question are not the schema's own names):
    /// the word's span.
    pub(crate) every_column: Option<(usize, usize)>,
    /// The question starts with `which`/`what`/`who`/`list`/`show`.
    pub(crate) listing: bool,
    /// Negation before a value (`not`, `except`, `other than`) at these tokens.
    pub(crate) negations: Vec<usize>,
    /// Tokens of grouping and comparison cues: a clause boundary for binding.
    pub(crate) barriers: Vec<bool>,
}

/// A number written in digits or as a small word.
pub(crate) fn number_at(tokens: &[Token], i: usize) -> Option<f64> {
    let t = tokens.get(i)?;
    t.number().or_else(|| {
        if t.kind == TokenKind::Word {
            number_word(&t.lower).map(|n| n as f64)
        } else {
            None
        }
    })
}
