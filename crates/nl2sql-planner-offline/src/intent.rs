//! Intent cues: the analytical phrases of a question (count, total, average, min/max and
//! superlatives, top-N, grouping markers, numeric comparisons, date phrases relative to a
//! given `today`, ordering, distinct/list). Each cue records the tokens it consumed so the
//! linker skips them.

use super::text::{Token, TokenKind, month_number, number_word};

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
    /// Date ranges.
    pub(crate) dates: Vec<DateCue>,
    /// `top N` / `N most`: the count, the direction (true = descending) and where the
    /// cue ends.
    pub(crate) top: Option<(i64, Option<bool>, usize)>,
    /// `sorted by X`: where the key starts.
    pub(crate) order_key: Option<usize>,
    /// Direction words (`descending`, `highest first`…).
    pub(crate) order_desc: Option<bool>,
    /// `distinct`, `unique`, `different`.
    pub(crate) distinct: bool,
    /// The question starts with `which`/`what`/`who`/`list`/`show`.
    pub(crate) listing: bool,
    /// Negation before a value (`not`, `except`, `other than`) at these tokens.
    pub(crate) negations: Vec<usize>,
    /// Tokens of grouping and comparison cues: a clause boundary for binding.
    pub(crate) barriers: Vec<bool>,
}

/// A calendar date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Day {
    /// Year.
    pub(crate) y: i32,
    /// Month 1..12.
    pub(crate) m: u32,
    /// Day 1..31.
    pub(crate) d: u32,
}

impl Day {
    /// Parses `YYYY-MM-DD` (a longer timestamp keeps its date part).
    pub(crate) fn parse(s: &str) -> Option<Day> {
        let s = s.get(..10)?;
        let y = s.get(..4)?.parse().ok()?;
        let m = s.get(5..7)?.parse().ok()?;
        let d = s.get(8..10)?.parse().ok()?;
        ((1..=12).contains(&m) && (1..=31).contains(&d)).then_some(Day { y, m, d })
    }

    fn days_from_civil(self) -> i64 {
        let y = i64::from(self.y) - i64::from(self.m <= 2);
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let m = i64::from(self.m);
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(self.d) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// Today (UTC) by the system clock.
    pub(crate) fn from_clock() -> Day {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Day::from_days(i64::try_from(secs / 86_400).unwrap_or(0))
    }

    fn from_days(z: i64) -> Day {
        let z = z + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        let y = yoe + era * 400 + i64::from(m <= 2);
        Day {
            y: i32::try_from(y).unwrap_or(1970),
            m: u32::try_from(m).unwrap_or(1),
            d: u32::try_from(d).unwrap_or(1),
        }
    }

    /// This day plus `n` days.
    pub(crate) fn plus_days(self, n: i64) -> Day {
        Day::from_days(self.days_from_civil() + n)
    }

    /// The first day of the month `n` months after this day's month.
    pub(crate) fn month_start_plus(self, n: i32) -> Day {
        let idx = self.y * 12 + i32::try_from(self.m).unwrap_or(1) - 1 + n;
        Day {
            y: idx.div_euclid(12),
            m: u32::try_from(idx.rem_euclid(12) + 1).unwrap_or(1),
            d: 1,
        }
    }

    /// `YYYY-MM-DD`.
    pub(crate) fn iso(self) -> String {
        format!("{:04}-{:02}-{:02}", self.y, self.m, self.d)
    }
}

fn year_of(t: &Token) -> Option<i32> {
    if t.kind != TokenKind::Number || t.raw.len() != 4 {
        return None;
    }
    let y: i32 = t.raw.parse().ok()?;
    (1900..=2100).contains(&y).then_some(y)
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

/// Finds every cue of `tokens`, with `today` for relative dates: dates first, then one
/// left-to-right pass where, at each unused token, the first scanner of [`SCANNERS`] that
/// recognises a cue there records it and says where the pass goes on.
pub(crate) fn cues(tokens: &[Token], today: Day) -> Cues {
    let mut c = Cues {
        used: vec![false; tokens.len()],
        barriers: vec![false; tokens.len()],
        ..Cues::default()
    };
    c.listing = tokens.first().is_some_and(|t| {
        t.is_any(&[
            "which", "what", "who", "list", "show", "name", "display", "give", "find",
        ])
    });
    dates(tokens, today, &mut c);
    let s = Scan { tokens };
    let mut i = 0;
    while i < tokens.len() {
        if c.used[i] {
            i += 1;
            continue;
        }
        i = SCANNERS
            .iter()
            .find_map(|scan| scan(&s, i, &mut c))
            .unwrap_or(i + 1);
    }
    c
}

/// The tokens a scanner reads.
struct Scan<'a> {
    tokens: &'a [Token],
}

impl Scan<'_> {
    /// The lower-cased word at `i`, or "".
    fn w(&self, i: usize) -> &str {
        self.tokens.get(i).map(|t| t.lower.as_str()).unwrap_or("")
    }
}

/// Marks `a..b` as used by a cue.
fn mark(c: &mut Cues, a: usize, b: usize) {
    c.used[a..b].iter_mut().for_each(|u| *u = true);
}

/// Marks `a..b` as used, and as a barrier no link crosses.
fn mark_barrier(c: &mut Cues, a: usize, b: usize) {
    mark(c, a, b);
    c.barriers[a..b].iter_mut().for_each(|b| *b = true);
}

/// A scanner: at token `i`, records the cue it recognises in `Cues` and returns where the
/// pass goes on, or `None` when there is no such cue at `i`.
type Scanner = fn(&Scan<'_>, usize, &mut Cues) -> Option<usize>;

/// The scanners, in the order they are tried at each token.
const SCANNERS: &[Scanner] = &[
    top_n,
    counted_superlative,
    comparison,
    postfix_bound,
    aggregation,
    direction,
    superlative,
    first_or_last_by_a_verb,
    first_or_last_before_a_noun,
    rate,
    layout,
    break_down,
    ordering,
    grouping,
    distinct_or_negation,
];

/// "top 5", "first 3", "bottom 2".
fn top_n(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let tokens = s.tokens;
    if !tokens[i].is_any(&["top", "first", "bottom", "last"]) {
        return None;
    }
    let n = number_at(tokens, i + 1)?;
    let desc = match s.w(i) {
        "top" => Some(true),
        "bottom" => Some(false),
        _ => None,
    };
    c.top = Some((n as i64, desc, i + 2));
    mark(c, i, i + 2);
    Some(i + 2)
}

/// "the 3 largest", "5 most recent": a count before a superlative.
fn counted_superlative(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let tokens = s.tokens;
    let n = number_at(tokens, i)?;
    if tokens[i].kind == TokenKind::Date
        || year_of(&tokens[i]).is_some()
        || superlative_word(s.w(i + 1)).is_none()
        || is_comparison_at(tokens, i.saturating_sub(2), i)
    {
        return None;
    }
    let mut sup = superlative_at(tokens, i + 1)?;
    sup.counted = true;
    let end = sup.end;
    c.top = Some((n as i64, Some(sup.desc), end));
    c.supers.push(sup);
    mark(c, i, end);
    Some(end)
}

/// "between 10 and 18", "at least some X" (above zero), "more than 5".
fn comparison(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let tokens = s.tokens;
    let (op, len) = comparison_words(tokens, i)?;
    let t = &tokens[i];
    let at = i + len;
    if t.is("between")
        && let (Some(a), true, Some(b)) = (
            number_at(tokens, at),
            s.w(at + 1) == "and",
            number_at(tokens, at + 2),
        )
    {
        c.comparisons.push(CmpCue {
            start: i,
            end: at + 3,
            bounds: vec![(CmpOp::GtEq, a.min(b)), (CmpOp::LtEq, a.max(b))],
        });
        mark_barrier(c, i, at + 3);
        return Some(at + 3);
    }
    // "at least some quantity", "more than zero": above nothing.
    if matches!(op, CmpOp::GtEq | CmpOp::Gt)
        && s.w(at) == "some"
        && tokens
            .get(at + 1)
            .is_some_and(|n| n.kind == TokenKind::Word)
    {
        c.comparisons.push(CmpCue {
            start: i,
            end: at + 1,
            bounds: vec![(CmpOp::Gt, 0.0)],
        });
        mark_barrier(c, i, at + 1);
        return Some(at + 1);
    }
    if let Some(n) = number_at(tokens, at)
        && !t.is("between")
    {
        c.comparisons.push(CmpCue {
            start: i,
            end: at + 1,
            bounds: vec![(op, n)],
        });
        mark_barrier(c, i, at + 1);
        return Some(at + 1);
    }
    None
}

/// "450 units or fewer", "10 or more machines": a bound written before its operator.
fn postfix_bound(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let (n, op, len) = postfix_comparison(s.tokens, i)?;
    c.comparisons.push(CmpCue {
        start: i,
        end: i + len,
        bounds: vec![(op, n)],
    });
    mark_barrier(c, i, i + len);
    Some(i + len)
}

/// The aggregate a phrase at `i` asks for, and its length in tokens.
fn aggregate_words(s: &Scan<'_>, i: usize) -> Option<(Agg, usize)> {
    let tokens = s.tokens;
    match (s.w(i), s.w(i + 1), s.w(i + 2)) {
        ("how", "many", _) => Some((Agg::Count, 2)),
        ("how", "much", _) => Some((Agg::Sum, 2)),
        ("total", "number", "of") | ("total", "count", "of") => Some((Agg::Count, 3)),
        ("number", "of", _) | ("count", "of", _) if !after_noun(tokens, i) => Some((Agg::Count, 2)),
        ("count", _, _) | ("counts", _, _) if !after_noun(tokens, i) => Some((Agg::Count, 1)),
        ("total", "of", _) | ("sum", "of", _) => Some((Agg::Sum, 2)),
        // "add up the counts", "sum up", "total up": a sum.
        ("add" | "sum" | "total", "up", _) => Some((Agg::Sum, 2)),
        ("total", _, _) | ("sum", _, _) | ("overall", _, _) | ("combined", _, _)
            if !after_noun(tokens, i) =>
        {
            Some((Agg::Sum, 1))
        }
        ("average", "of", _) | ("mean", "of", _) => Some((Agg::Avg, 2)),
        ("average", _, _) | ("avg", _, _) | ("mean", _, _) => Some((Agg::Avg, 1)),
        // "the typical order value": an average.
        ("typical", _, _) | ("typically", _, _) => Some((Agg::Avg, 1)),
        ("minimum", "of", _) | ("min", "of", _) => Some((Agg::Min, 2)),
        ("maximum", "of", _) | ("max", "of", _) => Some((Agg::Max, 2)),
        ("minimum", _, _) | ("min", _, _) => Some((Agg::Min, 1)),
        ("maximum", _, _) | ("max", _, _) => Some((Agg::Max, 1)),
        _ => None,
    }
}

/// "how many", "the total of", "average", …; "how many different X" counts distinct
/// values.
fn aggregation(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let tokens = s.tokens;
    let (agg, len) = aggregate_words(s, i)?;
    let distinct = agg == Agg::Count
        && (tokens
            .get(i + len)
            .is_some_and(|t| t.is_any(DISTINCT_WORDS))
            || (i > 0 && tokens[i - 1].is_any(DISTINCT_WORDS)));
    c.aggs.push(AggCue {
        agg,
        start: i,
        end: i + len,
        distinct,
    });
    mark(c, i, i + len);
    Some(i + len)
}

/// Direction words before superlatives: `biggest first` orders, it names no key; "in
/// descending order of age" names its key after "of".
fn direction(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let (desc, mut len) = direction_words(s.tokens, i)?;
    c.order_desc = Some(desc);
    if s.w(i + len - 1) == "order" && s.w(i + len) == "of" {
        len += 1;
        c.order_key = Some(i + len);
    }
    mark(c, i, i + len);
    Some(i + len)
}

/// "the largest", "the most common", …
fn superlative(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let sup = superlative_at(s.tokens, i)?;
    let end = sup.end;
    c.supers.push(sup);
    mark(c, i, end);
    Some(end)
}

/// A ranking in time by `first` (ascending) or `last` (descending) at `i`.
fn time_rank(c: &mut Cues, tokens: &[Token], i: usize) -> Option<usize> {
    c.supers.push(SuperCue {
        desc: tokens[i].is("last"),
        start: i,
        end: i + 1,
        frequency: false,
        time: true,
        counted: false,
    });
    mark(c, i, i + 1);
    Some(i + 1)
}

/// "which factory opened first", "the machine last serviced": `first`/`last` next to a
/// verb rank in time.
fn first_or_last_by_a_verb(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let tokens = s.tokens;
    let next_is_no_word_or_verb = tokens
        .get(i + 1)
        .is_none_or(|n| n.kind != TokenKind::Word || n.lower.ends_with("ed"));
    let verb_beside = i > 0
        && (tokens[i - 1].lower.ends_with("ed")
            || tokens.get(i + 1).is_some_and(|n| n.lower.ends_with("ed")));
    (tokens[i].is_any(&["first", "last"]) && next_is_no_word_or_verb && verb_beside)
        .then(|| time_rank(c, tokens, i))
        .flatten()
}

/// "when was the first maintenance job", "the last run": `first`/`last` before a noun
/// rank that noun's rows in time.
fn first_or_last_before_a_noun(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let tokens = s.tokens;
    (tokens[i].is_any(&["first", "last"])
        && i > 0
        && tokens[i - 1].is("the")
        && tokens
            .get(i + 1)
            .is_some_and(|n| n.kind == TokenKind::Word && !n.is_any(NOT_RANKED_NOUNS)))
    .then(|| time_rank(c, tokens, i))
    .flatten()
}

/// "$5 per unit", "price per kg": a rate, not a grouping.
fn rate(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let tokens = s.tokens;
    let is_rate = tokens[i].is("per")
        && RATE_NOUNS.contains(&s.w(i + 1))
        && i > 0
        && (tokens[i - 1].kind == TokenKind::Number
            || tokens[i - 1].is_any(&["price", "cost", "costs", "priced", "paid"]));
    is_rate.then(|| {
        mark(c, i, i + 2);
        i + 2
    })
}

/// "side by side", "next to each other": how to lay the answer out, not a grouping by
/// "side".
fn layout(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let len = side_by_side(s.tokens, i)?;
    mark(c, i, i + len);
    Some(i + len)
}

/// `break down X by Y`: the grouping is `by Y`; the verb itself is filler. Also "break the
/// total scrap down by shift".
fn break_down(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    if !s.tokens[i].is("break") {
        return None;
    }
    if s.w(i + 1) == "down" {
        mark(c, i, i + 2);
        return Some(i + 2);
    }
    let k = (i + 2..s.tokens.len().min(i + 8)).find(|k| s.w(*k) == "down")?;
    if !matches!(s.w(k + 1), "by" | "per") {
        return None;
    }
    mark(c, i, i + 1);
    mark(c, k, k + 1);
    Some(i + 1)
}

/// "sorted from the oldest to the newest date", "ordered by X".
fn ordering(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let t = &s.tokens[i];
    if t.is_any(&[
        "sorted", "ordered", "order", "sort", "ranked", "arranged", "listed",
    ]) && s.w(i + 1) == "from"
    {
        let mut k = i + 2;
        if s.w(k) == "the" {
            k += 1;
        }
        if let Some(desc) = superlative_word(s.w(k)) {
            let mut end = k + 1;
            if s.w(end) == "to" {
                end += 1;
                if s.w(end) == "the" {
                    end += 1;
                }
                if superlative_word(s.w(end)).is_some() {
                    end += 1;
                }
            }
            c.order_desc = Some(desc);
            c.order_key = Some(end);
            mark(c, i, end);
            return Some(end);
        }
    }
    if t.is_any(&[
        "sorted", "ordered", "order", "sort", "ranked", "rank", "arranged",
    ]) && s.w(i + 1) == "by"
    {
        c.order_key = Some(i + 2);
        mark(c, i, i + 2);
        return Some(i + 2);
    }
    None
}

/// "for each", "per", "by", "grouped by", "broken down by".
fn grouping(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let len = match (s.w(i), s.w(i + 1)) {
        ("for", "each") | ("of", "each") | ("for", "every") | ("in", "each") => 2,
        ("grouped", "by") | ("broken", "down") | ("split", "by") | ("breakdown", "by") => {
            if s.w(i + 2) == "by" { 3 } else { 2 }
        }
        ("per", _) | ("each", _) | ("by", _) => 1,
        _ => return None,
    };
    c.groups.push(i + len);
    mark_barrier(c, i, i + len);
    Some(i + len)
}

/// "distinct", "unique", "different" (and "separate" after a distinct count); negations:
/// "not", "except", "no longer", "isn't", …
fn distinct_or_negation(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let t = &s.tokens[i];
    if t.is_any(&["distinct", "unique", "different"])
        || (t.is("separate") && c.aggs.last().is_some_and(|a| a.distinct && a.end == i))
    {
        c.distinct = true;
        mark(c, i, i + 1);
        Some(i + 1)
    } else if t.is("no") && s.w(i + 1) == "longer" {
        c.negations.push(i);
        mark(c, i, i + 2);
        Some(i + 2)
    } else if t.is_any(&["not", "except", "excluding", "never", "non", "without"])
        || (t.is("no") && !matches!(s.w(i + 1), "longer" | "more" | "less" | "fewer" | "than"))
    {
        c.negations.push(i);
        mark(c, i, i + 1);
        Some(i + 1)
    } else if t.is_any(NEGATED_AUXILIARIES) && s.w(i + 1) == "t" {
        // `isn't`, `weren't`: the tokeniser splits off the `t`.
        c.negations.push(i);
        mark(c, i, i + 2);
        Some(i + 2)
    } else {
        None
    }
}

/// The length of a layout phrase at `i`: "side by side" (or "side-by-side"), "next to
/// each other", "next to one another", "alongside each other".
pub(crate) fn side_by_side(tokens: &[Token], i: usize) -> Option<usize> {
    let w = |k: usize| tokens.get(k).map(|t| t.lower.as_str()).unwrap_or("");
    match (w(i), w(i + 1), w(i + 2), w(i + 3)) {
        ("side", "by", "side", _) => Some(3),
        ("next", "to", "each", "other") | ("next", "to", "one", "another") => Some(4),
        ("alongside", "each", "other", _) | ("alongside", "one", "another", _) => Some(3),
        _ => None,
    }
}

/// True when the word before `i` is a content word: `scrap count` and `order total` are
/// names, not aggregations.
fn after_noun(tokens: &[Token], i: usize) -> bool {
    i > 0
        && tokens[i - 1].kind == TokenKind::Word
        && !super::text::is_function_word(&tokens[i - 1].lower)
        && !super::text::is_stop_word(&tokens[i - 1].lower)
}

/// Nouns after "the first"/"the last" that are not rows ranked in time.
const NOT_RANKED_NOUNS: &[&str] = &[
    "time", "times", "one", "ones", "few", "two", "three", "of", "and", "or", "quarter", "half",
    "day", "days", "week", "weeks", "month", "months", "year", "years",
    // "the first name", "the last name": a person's names, not a ranking.
    "name", "names",
];

/// Units of a rate ("$5 per unit"), which is not a grouping.
const RATE_NOUNS: &[&str] = &[
    "unit", "units", "piece", "pieces", "item", "items", "kg", "kilo", "kilogram", "litre",
    "liter", "ton", "tonne", "lb", "pound", "head", "person", "capita",
];

/// Auxiliaries that `n't` negates.
const NEGATED_AUXILIARIES: &[&str] = &[
    "isn", "aren", "wasn", "weren", "doesn", "don", "didn", "hasn", "haven", "hadn",
];

/// A superlative at `i` (`highest`, `most common`, `most recently`), not yet counted.
fn superlative_at(tokens: &[Token], i: usize) -> Option<SuperCue> {
    let w = |k: usize| tokens.get(k).map(|t| t.lower.as_str()).unwrap_or("");
    let desc = superlative_word(w(i))?;
    let (frequency, recent, len) = match w(i + 1) {
        "common" | "frequent" | "often" | "popular" => (true, false, 2),
        "recent" | "recently" => (false, true, 2),
        _ => (false, false, 1),
    };
    // "most recent" is the latest; "least recent" the earliest.
    let desc = if recent { w(i) == "most" } else { desc };
    let time = recent || matches!(w(i), "newest" | "latest" | "oldest" | "earliest");
    Some(SuperCue {
        desc,
        start: i,
        end: i + len,
        frequency,
        time,
        counted: false,
    })
}

fn superlative_word(w: &str) -> Option<bool> {
    match w {
        "highest" | "largest" | "biggest" | "greatest" | "most" | "latest" | "newest"
        | "longest" | "best" | "top" | "heaviest" | "costliest" => Some(true),
        "lowest" | "smallest" | "least" | "fewest" | "earliest" | "oldest" | "shortest"
        | "worst" | "cheapest" | "lightest" => Some(false),
        _ => None,
    }
}

fn is_comparison_at(tokens: &[Token], from: usize, to: usize) -> bool {
    (from..to).any(|k| comparison_words(tokens, k).is_some_and(|(_, len)| k + len == to))
}

/// A comparison phrase at `i`: its operator and length (the number follows).
fn comparison_words(tokens: &[Token], i: usize) -> Option<(CmpOp, usize)> {
    let w = |k: usize| tokens.get(i + k).map(|t| t.lower.as_str()).unwrap_or("");
    let two = (w(0), w(1));
    let op = match two {
        ("more" | "greater" | "larger" | "higher" | "bigger" | "longer", "than") => (CmpOp::Gt, 2),
        ("less" | "fewer" | "smaller" | "lower" | "shorter", "than") => (CmpOp::Lt, 2),
        ("at", "least") => (CmpOp::GtEq, 2),
        ("at", "most") | ("up", "to") => (CmpOp::LtEq, 2),
        ("no", "more") if w(2) == "than" => (CmpOp::LtEq, 3),
        ("no", "less" | "fewer") if w(2) == "than" => (CmpOp::GtEq, 3),
        ("equal", "to") => (CmpOp::Eq, 2),
        ("not", "equal") if w(2) == "to" => (CmpOp::NotEq, 3),
        ("over" | "above" | "exceeding" | "exceeds" | "exceed", _) => (CmpOp::Gt, 1),
        ("under" | "below", _) => (CmpOp::Lt, 1),
        ("exactly" | "equals", _) => (CmpOp::Eq, 1),
        ("between", _) => (CmpOp::GtEq, 1),
        (">", _) => (CmpOp::Gt, 1),
        (">=", _) => (CmpOp::GtEq, 1),
        ("<", _) => (CmpOp::Lt, 1),
        ("<=", _) => (CmpOp::LtEq, 1),
        ("=", _) => (CmpOp::Eq, 1),
        ("!=" | "<>", _) => (CmpOp::NotEq, 1),
        _ => return None,
    };
    Some(op)
}

/// Words for counted units that stand between a bound and a postfix operator ("450
/// units or fewer").
const UNIT_NOUNS: &[&str] = &["unit", "units", "piece", "pieces", "item", "items"];

/// A bound written before its operator at `i`: `N [units] or more|fewer|less|…`, and its
/// length.
fn postfix_comparison(tokens: &[Token], i: usize) -> Option<(f64, CmpOp, usize)> {
    let t = tokens.get(i)?;
    if t.kind != TokenKind::Number || year_of(t).is_some() {
        return None;
    }
    let n = t.number()?;
    let w = |k: usize| tokens.get(k).map(|t| t.lower.as_str()).unwrap_or("");
    let skip = usize::from(UNIT_NOUNS.contains(&w(i + 1)));
    let at = i + 1 + skip;
    if w(at) != "or" {
        return None;
    }
    let op = match w(at + 1) {
        "more" | "greater" | "higher" | "above" | "over" | "larger" | "bigger" => CmpOp::GtEq,
        "fewer" | "less" | "lower" | "below" | "under" | "smaller" => CmpOp::LtEq,
        _ => return None,
    };
    Some((n, op, at + 2 - i))
}

/// `descending`, `highest first`, `alphabetically`…: (descending?, length).
fn direction_words(tokens: &[Token], i: usize) -> Option<(bool, usize)> {
    let w = |k: usize| tokens.get(i + k).map(|t| t.lower.as_str()).unwrap_or("");
    match (w(0), w(1)) {
        ("descending" | "desc" | "decreasing", "order") => Some((true, 2)),
        ("ascending" | "asc" | "increasing", "order") => Some((false, 2)),
        ("descending" | "desc" | "decreasing", _) => Some((true, 1)),
        ("ascending" | "asc" | "increasing" | "alphabetically" | "alphabetical", _) => {
            Some((false, 1))
        }
        ("highest" | "largest" | "biggest" | "most" | "newest" | "latest", "first") => {
            Some((true, 2))
        }
        ("lowest" | "smallest" | "fewest" | "least" | "oldest" | "earliest", "first") => {
            Some((false, 2))
        }
        ("most", "recent") if w(2) == "first" => Some((true, 3)),
        // "biggest producer first", "newest machine first": a superlative, one noun and
        // `first` only order.
        (s, n)
            if w(2) == "first"
                && !n.is_empty()
                && n.chars().all(char::is_alphabetic)
                && superlative_word(s).is_some() =>
        {
            superlative_word(s).map(|d| (d, 3))
        }
        _ => None,
    }
}

/// Date phrases: years, months, ISO dates, relative periods, `before`/`after`/`since`,
/// `between … and …`.
fn dates(tokens: &[Token], today: Day, c: &mut Cues) {
    let w = |i: usize| tokens.get(i).map(|t| t.lower.as_str()).unwrap_or("");
    let mut i = 0;
    while i < tokens.len() {
        // A period at i: (lo, hi, len).
        let period = |k: usize| -> Option<(Day, Day, usize)> { period_at(tokens, k, today) };
        let (prefix, plen) = match (w(i), w(i + 1)) {
            // "on or after April 10", "on or before May 3": the day itself is included.
            ("on" | "in", "or") if matches!(w(i + 2), "after" | "later" | "since") => ("since", 3),
            ("on" | "in", "or") if matches!(w(i + 2), "before" | "earlier") => ("until", 3),
            ("before" | "until" | "till" | "prior", "to") => ("before", 2),
            ("before" | "until" | "till", _) => ("before", 1),
            ("after" | "since", _) => (w(i), 1),
            ("from", _) | ("between", _) => ("range", 1),
            ("in" | "during" | "on" | "for" | "within", _) => ("in", 1),
            _ => ("", 0),
        };
        if let Some((lo, hi, len)) = period(i + plen) {
            let mut end = i + plen + len;
            // "2013 or later", "2020 onwards", "March 2024 or earlier": open ranges.
            let open = match (w(end), w(end + 1)) {
                ("or" | "and", "later" | "after" | "newer" | "since") => Some((true, 2)),
                ("onwards" | "onward" | "forward", _) => Some((true, 1)),
                // "from April 10 on": the phrase ends there.
                ("on", next)
                    if prefix == "range" && !is_period_word(next) && next_is_clause(next) =>
                {
                    Some((true, 1))
                }
                ("or" | "and", "earlier" | "before" | "older" | "prior") => Some((false, 2)),
                _ => None,
            };
            let (lo, hi) = match (prefix, open) {
                ("in" | "" | "range", Some((later, len))) => {
                    end += len;
                    if later {
                        (Some(lo), None)
                    } else {
                        (None, Some(hi))
                    }
                }
                _ => match prefix {
                    "before" => (None, Some(lo)),
                    "until" => (None, Some(hi)),
                    "after" => (Some(hi), None),
                    "since" => (Some(lo), None),
                    "range" if matches!(w(end), "and" | "to" | "through" | "until") => {
                        match period(end + 1) {
                            Some((_, hi2, len2)) => {
                                end = end + 1 + len2;
                                (Some(lo), Some(hi2))
                            }
                            None => (Some(lo), Some(hi)),
                        }
                    }
                    _ => (Some(lo), Some(hi)),
                },
            };
            let start = i;
            c.dates.push(DateCue {
                start,
                end,
                lo: lo.map(Day::iso),
                hi: hi.map(Day::iso),
            });
            c.used[start..end].iter_mut().for_each(|u| *u = true);
            i = end;
            continue;
        }
        i += 1;
    }
}

/// A period named at `i`: `2024`, `March 2024`, `March`, `2024-04-09`, `Q1 2024`,
/// `last month`, `this year`, `last 7 days`, `today`, `yesterday`.
fn period_at(tokens: &[Token], i: usize, today: Day) -> Option<(Day, Day, usize)> {
    let t = tokens.get(i)?;
    let w = |k: usize| tokens.get(k).map(|t| t.lower.as_str()).unwrap_or("");
    if t.kind == TokenKind::Date {
        let d = Day::parse(&t.raw)?;
        return Some((d, d.plus_days(1), 1));
    }
    // "the first quarter of 2024", "the second half of 2023".
    if t.is("the") {
        let (lo, hi, len) = part_of_year(tokens, i + 1, today)?;
        return Some((lo, hi, len + 1));
    }
    if let Some(found) = part_of_year(tokens, i, today) {
        return Some(found);
    }
    if let Some(y) = year_of(t) {
        let lo = Day { y, m: 1, d: 1 };
        return Some((
            lo,
            Day {
                y: y + 1,
                m: 1,
                d: 1,
            },
            1,
        ));
    }
    // `10 April 2024`.
    if t.kind == TokenKind::Number
        && t.raw.len() <= 2
        && let Some(m) = tokens.get(i + 1).and_then(|n| month_number(&n.lower))
        && let Some(y) = tokens.get(i + 2).and_then(year_of)
        && let Ok(d) = t.raw.parse::<u32>()
        && (1..=31).contains(&d)
    {
        let day = Day { y, m, d };
        return Some((day, day.plus_days(1), 3));
    }
    if let Some(m) = month_number(&t.lower).filter(|_| t.kind == TokenKind::Word) {
        // `April 10, 2024` and `April 10`.
        if let Some(n) = tokens
            .get(i + 1)
            .filter(|n| n.kind == TokenKind::Number && n.raw.len() <= 2)
            && let Ok(d) = n.raw.parse::<u32>()
            && (1..=31).contains(&d)
        {
            let (y, len) = match tokens.get(i + 2).and_then(year_of) {
                Some(y) => (y, 3),
                None => (today.y, 2),
            };
            let day = Day { y, m, d };
            return Some((day, day.plus_days(1), len));
        }
        // "may" alone is too often a verb.
        if let Some(y) = tokens.get(i + 1).and_then(year_of) {
            let lo = Day { y, m, d: 1 };
            return Some((lo, lo.month_start_plus(1), 2));
        }
        if t.lower == "may" {
            return None;
        }
        let lo = Day {
            y: today.y,
            m,
            d: 1,
        };
        return Some((lo, lo.month_start_plus(1), 1));
    }
    // `H1 2024`: a half year.
    if let Some(h) = t
        .lower
        .strip_prefix('h')
        .and_then(|h| h.parse::<u32>().ok())
        && (1..=2).contains(&h)
    {
        let y = tokens.get(i + 1).and_then(year_of);
        let lo = Day {
            y: y.unwrap_or(today.y),
            m: (h - 1) * 6 + 1,
            d: 1,
        };
        return Some((lo, lo.month_start_plus(6), if y.is_some() { 2 } else { 1 }));
    }
    if let Some(q) = t
        .lower
        .strip_prefix('q')
        .and_then(|q| q.parse::<u32>().ok())
        && (1..=4).contains(&q)
    {
        let y = tokens.get(i + 1).and_then(year_of);
        let lo = Day {
            y: y.unwrap_or(today.y),
            m: (q - 1) * 3 + 1,
            d: 1,
        };
        return Some((lo, lo.month_start_plus(3), if y.is_some() { 2 } else { 1 }));
    }
    let month0 = Day {
        y: today.y,
        m: today.m,
        d: 1,
    };
    let year0 = Day {
        y: today.y,
        m: 1,
        d: 1,
    };
    match (w(i), w(i + 1)) {
        ("today", _) => Some((today, today.plus_days(1), 1)),
        ("yesterday", _) => Some((today.plus_days(-1), today, 1)),
        ("this", "month") => Some((month0, month0.month_start_plus(1), 2)),
        ("this", "year") => Some((year0, year0.month_start_plus(12), 2)),
        ("this", "week") => Some((today.plus_days(-6), today.plus_days(1), 2)),
        ("this", "quarter") => {
            let lo = quarter_start(today);
            Some((lo, lo.month_start_plus(3), 2))
        }
        ("last" | "previous" | "past", "quarter") => {
            let hi = quarter_start(today);
            Some((hi.month_start_plus(-3), hi, 2))
        }
        ("last" | "previous" | "past", "month") => Some((month0.month_start_plus(-1), month0, 2)),
        ("last" | "previous" | "past", "year") => Some((year0.month_start_plus(-12), year0, 2)),
        ("last" | "previous" | "past", "week") => Some((today.plus_days(-7), today, 2)),
        ("last" | "previous" | "past", _) => {
            let n = number_at(tokens, i + 1)? as i64;
            let unit = w(i + 2);
            let lo = match unit {
                "day" | "days" => today.plus_days(-n + 1),
                "week" | "weeks" => today.plus_days(-7 * n + 1),
                "month" | "months" => month0.month_start_plus(-i32::try_from(n).ok()?),
                "year" | "years" => year0.month_start_plus(-12 * i32::try_from(n).ok()?),
                _ => return None,
            };
            Some((lo, today.plus_days(1), 3))
        }
        _ => None,
    }
}

/// The first day of the quarter `day` is in.
fn quarter_start(day: Day) -> Day {
    Day {
        y: day.y,
        m: (day.m - 1) / 3 * 3 + 1,
        d: 1,
    }
}

/// Words that start a period: after "from X", "on" before one of them is a preposition of
/// the next phrase, not "onwards".
fn is_period_word(w: &str) -> bool {
    month_number(w).is_some() || matches!(w, "the" | "a" | "an")
}

/// True when `next` (the word after "from X on") starts a new clause or ends the
/// question, so "on" closes the date phrase.
fn next_is_clause(next: &str) -> bool {
    next.is_empty()
        || matches!(
            next,
            "and" | "or" | "how" | "what" | "which" | "who" | "were" | "was" | "have" | "has"
        )
}

/// "first quarter of 2024", "2nd half 2023", "last quarter of 2024": a quarter or half of a
/// year (this year when none is written): `(lo, hi, length)`.
fn part_of_year(tokens: &[Token], i: usize, today: Day) -> Option<(Day, Day, usize)> {
    let w = |k: usize| tokens.get(k).map(|t| t.lower.as_str()).unwrap_or("");
    let nth: u32 = match w(i) {
        "first" | "1" => 1,
        "second" | "2" => 2,
        "third" | "3" => 3,
        "fourth" | "4" => 4,
        "last" | "final" => 0,
        _ => return None,
    };
    let (months, count) = match w(i + 1) {
        "quarter" => (3, 4),
        "half" => (6, 2),
        _ => return None,
    };
    if nth > count {
        return None;
    }
    let nth = if nth == 0 { count } else { nth };
    let mut len = 2;
    if w(i + 2) == "of" {
        len += 1;
    }
    let y = match tokens.get(i + len).and_then(year_of) {
        Some(y) => {
            len += 1;
            y
        }
        // "the last quarter" alone is a relative period, read elsewhere.
        None if w(i) == "last" => return None,
        None => {
            if len == 3 {
                len -= 1;
            }
            today.y
        }
    };
    let lo = Day {
        y,
        m: (nth - 1) * months + 1,
        d: 1,
    };
    Some((
        lo,
        lo.month_start_plus(i32::try_from(months).unwrap_or(3)),
        len,
    ))
}
