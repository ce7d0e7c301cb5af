//! Intent cues: the analytical phrases of a question (count, total, average, min/max and
//! superlatives, top-N, grouping markers, numeric comparisons, date phrases relative to a
//! given `today`, ordering, distinct/list). Each cue records the tokens it consumed so the
//! linker skips them.

use super::text::{Token, TokenKind, is_function_word, is_stop_word, number_word};

mod compare;
mod cues;
mod dates;

pub(crate) use compare::comparison_words;
use compare::is_comparison_at;
pub(crate) use dates::Day;
use dates::{dates, year_of};

pub(crate) use cues::{
    Agg, AggCue, CmpCue, CmpOp, ComputedCue, Cues, DISTINCT_WORDS, DateCue, SuperCue, number_at,
};

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
    // "either X or Y": the alternatives are read where "or" joins them (an `IN` list);
    // "either" itself adds nothing.
    for i in 0..tokens.len() {
        if tokens[i].is("either") && tokens[i + 1..].iter().take(8).any(|t| t.is("or")) {
            c.used[i] = true;
        }
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
    compared_with_computed,
    comparison,
    postfix_bound,
    correspondence,
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
    every_column,
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

/// "higher than the average price", "older than average", "more than the average number
/// of points", "less than the maximum salary", "older than every engineer", "larger than
/// at least one college in Florida": a comparison (`>`, `<`, `>=`, `<=`) with a value
/// computed over rows. An average or a named extreme is that aggregate; "every"/"all"
/// is the extreme beyond which the comparison holds for all rows (`> MAX`, `< MIN`), and
/// "some"/"at least one" the one beyond which it holds for some row (`> MIN`, `< MAX`).
/// "any" says either, and is left unread. The phrase ends after the aggregate word and
/// the words that lead to the column ("of", "number of", "the"), or after the
/// quantifier; which column, and over which rows, is the analysis's to read.
fn compared_with_computed(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let tokens = s.tokens;
    // "more than", "above"; or "more pages than", "fewer total points than".
    let (op, len, between) = match comparison_words(tokens, i) {
        Some((op, len)) => (op, len, None),
        None => {
            let op = match s.w(i) {
                "more" | "greater" | "larger" | "higher" | "bigger" => CmpOp::Gt,
                "less" | "fewer" | "smaller" | "lower" => CmpOp::Lt,
                _ => return None,
            };
            let than = (i + 2..=i + 3).find(|k| s.w(*k) == "than")?;
            (op, than + 1 - i, Some((i + 1, than)))
        }
    };
    if !matches!(op, CmpOp::Gt | CmpOp::Lt | CmpOp::GtEq | CmpOp::LtEq) || s.w(i) == "between" {
        return None;
    }
    let greater = matches!(op, CmpOp::Gt | CmpOp::GtEq);
    let mut k = i + len;
    // "than that of some college": the column is the compared one.
    if s.w(k) == "that" && s.w(k + 1) == "of" {
        k += 2;
    }
    // A quantifier only after "than" or a one-word comparison ("above every …"), never
    // after "at least" ("at least some quantity" is a bound).
    let quantifiable = s.w(i + len - 1) == "than" || len == 1;
    let quantifier = match (s.w(k), s.w(k + 1), s.w(k + 2)) {
        ("some", _, _) if quantifiable => Some((if greater { Agg::Min } else { Agg::Max }, 1)),
        ("at", "least", "one") if quantifiable => {
            Some((if greater { Agg::Min } else { Agg::Max }, 3))
        }
        ("all" | "every", _, _) if quantifiable => {
            Some((if greater { Agg::Max } else { Agg::Min }, 1))
        }
        _ => None,
    };
    let quantified = quantifier.is_some();
    let (agg, mut end) = match quantifier {
        Some((agg, n)) => (agg, k + n),
        None => {
            while matches!(s.w(k), "the" | "an" | "overall") {
                k += 1;
            }
            let agg = match s.w(k) {
                "average" | "mean" | "avg" => Agg::Avg,
                "maximum" | "max" | "largest" | "highest" | "biggest" | "greatest" => Agg::Max,
                "minimum" | "min" | "smallest" | "lowest" => Agg::Min,
                _ => return None,
            };
            let mut end = k + 1;
            if matches!(s.w(end), "number" | "amount" | "value" | "level") && s.w(end + 1) == "of" {
                end += 2;
            } else if s.w(end) == "of" {
                end += 1;
            }
            (agg, end)
        }
    };
    if s.w(end) == "of" && s.w(end + 1) == "the" {
        end += 2;
    } else if s.w(end) == "the" {
        end += 1;
    }
    c.computed.push(ComputedCue {
        start: i,
        end,
        op,
        agg,
        between,
        quantified,
    });
    match between {
        Some((a, b)) => {
            mark_barrier(c, i, a);
            mark_barrier(c, b, end);
        }
        None => mark_barrier(c, i, end),
    }
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
    // "above age 46", "over price 100": the compared column stands between the word and
    // the number; its words stay unmarked, for the linker.
    let named = (1..=2).find(|k| {
        tokens[at..(at + k).min(tokens.len())].iter().all(|w| {
            w.kind == TokenKind::Word && !is_function_word(&w.lower) && !is_stop_word(&w.lower)
        }) && number_at(tokens, at + k).is_some()
    });
    if let Some(k) = named
        && !t.is("between")
        && let Some(n) = number_at(tokens, at + k)
    {
        c.comparisons.push(CmpCue {
            start: i,
            end: at + k + 1,
            bounds: vec![(op, n)],
        });
        mark_barrier(c, i, at);
        mark_barrier(c, at + k, at + k + 1);
        return Some(at + k + 1);
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
        // "count the number of different languages": one count, distinct by the word after
        // it.
        ("count", "the", "number") if s.w(i + 3) == "of" => Some((Agg::Count, 4)),
        ("count", "number", "of") => Some((Agg::Count, 3)),
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
    // "the flight with the maximum price", "who has the minimum age": the row holding the
    // extreme (a superlative), not the extreme itself.
    if matches!(agg, Agg::Min | Agg::Max) && holder_before(tokens, i) {
        return None;
    }
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
    let d = direction_words(s.tokens, i)?;
    let mut len = d.len;
    c.order_desc = Some(d.desc);
    c.order_alphabetical = (i..i + len).any(|k| s.w(k).starts_with("alphabetic"));
    // "highest revenue first": the noun may name the key.
    if d.noun {
        c.order_noun = Some(i + 1);
    }
    // "in descending order of age", "ordered descending by age", "in ascending order by
    // name": the key follows.
    if (s.w(i + len - 1) == "order" && matches!(s.w(i + len), "of" | "by")) || s.w(i + len) == "by"
    {
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
    // "in order of salary", "in the order of their names": the key follows, ascending
    // unless a direction says otherwise.
    if t.is("order")
        && s.w(i + 1) == "of"
        && (i >= 1 && s.w(i - 1) == "in"
            || i >= 2 && s.w(i - 1) == "the" && matches!(s.w(i - 2), "in" | "by"))
    {
        c.order_key = Some(i + 2);
        mark(c, i, i + 2);
        return Some(i + 2);
    }
    if t.is_any(&[
        "sorted", "ordered", "order", "sort", "ranked", "rank", "arranged",
    ]) {
        // "sort them by details", "order the results by age": what is sorted, named by a
        // pronoun or as the result, before "by".
        let object = match (s.w(i + 1), s.w(i + 2)) {
            ("them" | "it" | "these" | "those", _) => 1,
            ("the", "results" | "result" | "list") => 2,
            _ => 0,
        };
        if s.w(i + 1 + object) == "by" {
            let end = i + 2 + object;
            c.order_key = Some(end);
            mark(c, i, end);
            return Some(end);
        }
    }
    None
}

/// "for each", "for different", "per", "by", "grouped by", "broken down by".
fn grouping(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let len = match (s.w(i), s.w(i + 1)) {
        ("for" | "of" | "in", "each") | ("for" | "in", "every") => 2,
        // "the average amount of transactions for different lots": for each lot.
        ("for", "different") => 2,
        ("grouped", "by") | ("broken", "down") | ("split", "by") | ("breakdown", "by") => {
            if s.w(i + 2) == "by" { 3 } else { 2 }
        }
        ("per", _) | ("each", _) => 1,
        // "the hometowns shared by people older than 23 and younger than 20": who share,
        // not a grouping.
        // "the format used by the most files": the rows that rank it, not a grouping.
        ("by", _)
            if !(i > 0 && s.w(i - 1) == "shared" || agent_after_participle(s, i))
                && superlative_at(s.tokens, i + 1 + usize::from(s.w(i + 1) == "the")).is_none() =>
        {
            1
        }
        _ => return None,
    };
    c.groups.push(i + len);
    mark_barrier(c, i, i + len);
    Some(i + len)
}

/// "mountains climbed by climbers from West Germany", "songs written by Smith": after a
/// past participle, "by" and a plural noun, a name or a determiner names who acted, not
/// a grouping; "orders placed by year" (a singular noun) still groups, and so does
/// "grouped by", "sorted by", … (read elsewhere).
fn agent_after_participle(s: &Scan<'_>, i: usize) -> bool {
    let before = if i > 0 { s.w(i - 1) } else { "" };
    let next = s.w(i + 1);
    let raw = s.tokens.get(i + 1).map_or("", |t| t.raw.as_str());
    crate::text::is_ed_participle(before)
        && !matches!(
            before,
            "grouped" | "sorted" | "ordered" | "ranked" | "arranged" | "listed"
        )
        && (matches!(next, "the" | "a" | "an" | "some")
            || raw.starts_with(|ch: char| ch.is_uppercase())
            || (next.len() > 3 && next.ends_with('s') && !next.ends_with("ss")))
}

/// Words that ask for every column of the rows: "all the information about courses",
/// "the customer info".
pub(crate) const EVERY_COLUMN_WORDS: &[&str] = &["information", "info"];

/// "all the information about courses", "what information is there on albums": every
/// column of the rows (the analysis drops the cue where the schema names a column or a
/// table with the word).
fn every_column(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let t = &s.tokens[i];
    // Capitalised inside the question, a word of a name ("Computer Info. Systems").
    let in_name = i > 0 && t.raw.starts_with(|ch: char| ch.is_uppercase());
    if !t.is_any(EVERY_COLUMN_WORDS) || in_name || c.every_column.is_some() {
        return None;
    }
    c.every_column = Some((i, i + 1));
    mark(c, i, i + 1);
    Some(i + 1)
}

/// "distinct", "unique", "different" (and "separate" after a distinct count); negations:
/// "not", "except", "no longer", "other than", "isn't", …
fn distinct_or_negation(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    let t = &s.tokens[i];
    if t.is_any(&["distinct", "unique", "different"])
        || (t.is("separate") && c.aggs.last().is_some_and(|a| a.distinct && a.end == i))
    {
        c.distinct = true;
        mark(c, i, i + 1);
        Some(i + 1)
    } else if (t.is("no") && s.w(i + 1) == "longer") || (t.is("other") && s.w(i + 1) == "than") {
        // "regions other than Denmark": the value's other values.
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
        && !is_function_word(&tokens[i - 1].lower)
        && !is_stop_word(&tokens[i - 1].lower)
        && !tokens[i - 1].is_any(CORRESPONDING)
}

/// "the corresponding number of students", "their respective departments": what follows
/// belongs to each thing listed before, which the plan's grouping or join says.
pub(crate) const CORRESPONDING: &[&str] = &["corresponding", "respective"];

/// "Show all majors and the corresponding number of students": the word adds nothing the
/// plan does not say (each major's own count is the grouping, each climber's own mountain
/// the join), so it is placed; a count after it is still a count.
fn correspondence(s: &Scan<'_>, i: usize, c: &mut Cues) -> Option<usize> {
    s.tokens[i].is_any(CORRESPONDING).then(|| {
        mark(c, i, i + 1);
        i + 1
    })
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
        // "the most expensive product" ranks by its price, as "the costliest" does.
        "expensive" | "costly" if matches!(w(i), "most" | "least") => (false, false, 2),
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

/// True when a verb or preposition of having, and "the", stand right before `i` ("with
/// the maximum", "has the minimum"); without "the" only before a whole word ("the
/// employee with maximum salary", not "storms with max speed", which names a column).
pub(crate) fn holder_before(tokens: &[Token], i: usize) -> bool {
    const HOLDERS: &[&str] = &["with", "has", "have", "had", "having"];
    let article = usize::from(i >= 1 && tokens[i - 1].is("the"));
    let whole = article == 1 || tokens[i].is_any(&["maximum", "minimum"]);
    whole && i > article && tokens[i - 1 - article].is_any(HOLDERS)
}

fn superlative_word(w: &str) -> Option<bool> {
    match w {
        "maximum" | "max" | "tallest" => Some(true),
        "minimum" | "min" | "youngest" => Some(false),
        "highest" | "largest" | "biggest" | "greatest" | "most" | "latest" | "newest"
        | "longest" | "best" | "top" | "heaviest" | "costliest" => Some(true),
        "lowest" | "smallest" | "least" | "fewest" | "earliest" | "oldest" | "shortest"
        | "worst" | "cheapest" | "lightest" => Some(false),
        _ => None,
    }
}

/// Words for counted units that stand between a bound and a postfix operator ("450
/// units or fewer").
const UNIT_NOUNS: &[&str] = &["unit", "units", "piece", "pieces", "item", "items"];

/// A bound written before its operator at `i`: `N [units] or more|fewer|less|older|…`, and
/// its length.
fn postfix_comparison(tokens: &[Token], i: usize) -> Option<(f64, CmpOp, usize)> {
    let t = tokens.get(i)?;
    // "10 or more", and "two or more" spelt out.
    let n = match t.kind {
        TokenKind::Number if year_of(t).is_none() => t.number()?,
        TokenKind::Word => number_word(&t.lower)? as f64,
        _ => return None,
    };
    let w = |k: usize| tokens.get(k).map(|t| t.lower.as_str()).unwrap_or("");
    let skip = usize::from(UNIT_NOUNS.contains(&w(i + 1)));
    let at = i + 1 + skip;
    if w(at) != "or" {
        return None;
    }
    let op = match w(at + 1) {
        "more" | "greater" | "higher" | "above" | "over" | "larger" | "bigger" => CmpOp::GtEq,
        "fewer" | "less" | "lower" | "below" | "under" | "smaller" => CmpOp::LtEq,
        // "25 or older": the comparative names its measure (an age; see
        // `implied_measure`).
        "older" => CmpOp::GtEq,
        "younger" => CmpOp::LtEq,
        _ => return None,
    };
    Some((n, op, at + 2 - i))
}

/// Words that give a sort direction, read by [`direction_words`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Direction {
    /// Descending.
    pub(crate) desc: bool,
    /// How many words.
    pub(crate) len: usize,
    /// The second word is a noun that may name the key ("highest revenue first").
    pub(crate) noun: bool,
}

/// `descending`, `highest first`, `alphabetically`… at `i`.
pub(crate) fn direction_words(tokens: &[Token], i: usize) -> Option<Direction> {
    let dir = |desc: bool, len: usize| Direction {
        desc,
        len,
        noun: false,
    };
    let w = |k: usize| tokens.get(i + k).map(|t| t.lower.as_str()).unwrap_or("");
    const MORE: &[&str] = &["most", "highest", "largest", "biggest", "greatest"];
    const LESS: &[&str] = &["least", "lowest", "smallest", "fewest"];
    match (w(0), w(1)) {
        // "in descending alphabetical order", "reverse alphabetical order": Z to A.
        ("descending" | "desc" | "decreasing" | "reverse", "alphabetical" | "alphabetically") => {
            Some(dir(true, if w(2) == "order" { 3 } else { 2 }))
        }
        // "ordered from most to least", "from lowest to highest".
        ("from", a) if w(2) == "to" && MORE.contains(&a) && LESS.contains(&w(3)) => {
            Some(dir(true, 4))
        }
        ("from", a) if w(2) == "to" && LESS.contains(&a) && MORE.contains(&w(3)) => {
            Some(dir(false, 4))
        }
        ("descending" | "desc" | "decreasing", "order") => Some(dir(true, 2)),
        ("ascending" | "asc" | "increasing", "order") => Some(dir(false, 2)),
        // "in alphabetical order of last name": the key follows "order of".
        ("alphabetical" | "alphabetically" | "alphabetic", "order") => Some(dir(false, 2)),
        ("descending" | "desc" | "decreasing", _) => Some(dir(true, 1)),
        (
            "ascending" | "asc" | "increasing" | "alphabetically" | "alphabetical" | "alphabetic",
            _,
        ) => Some(dir(false, 1)),
        ("highest" | "largest" | "biggest" | "most" | "newest" | "latest", "first") => {
            Some(dir(true, 2))
        }
        ("lowest" | "smallest" | "fewest" | "least" | "oldest" | "earliest", "first") => {
            Some(dir(false, 2))
        }
        ("most", "recent") if w(2) == "first" => Some(dir(true, 3)),
        // "biggest producer first", "newest machine first": a superlative, one noun and
        // `first` only order.
        // ("the most popular first name": "first" begins a name, not an order.)
        (s, n)
            if w(2) == "first"
                && !n.is_empty()
                && n.chars().all(char::is_alphabetic)
                && (w(3).is_empty() || is_function_word(w(3)))
                && superlative_word(s).is_some() =>
        {
            superlative_word(s).map(|desc| Direction {
                desc,
                len: 3,
                noun: true,
            })
        }
        _ => None,
    }
}

/// Verbs after which "both" lists outputs ("return both the city and the count"), not
/// conditions.
const LISTING: &[&str] = &[
    "return",
    "show",
    "list",
    "give",
    "display",
    "print",
    "returning",
    "showing",
    "listing",
    "giving",
    "include",
    "including",
];

/// The positions of the words that ask for an intersection: "both" (not "return both
/// the city and the count", two outputs), and "shared" before "by", "among" or "between"
/// ("the hometowns shared by people older than 23 and younger than 20").
pub(crate) fn both_positions(tokens: &[Token]) -> impl Iterator<Item = usize> + '_ {
    tokens
        .iter()
        .enumerate()
        .filter(|(i, t)| {
            (t.is("both") && !(*i > 0 && tokens[i - 1].is_any(LISTING)))
                || (t.is("shared")
                    && tokens
                        .get(i + 1)
                        .is_some_and(|n| n.is_any(&["by", "among", "between"]))
                    && !shared_by_a_count(tokens, *i))
        })
        .map(|(i, _)| i)
}

/// "the industry shared by the most companies", "birth places shared by at least two
/// people": what "shared" at `i` is shared by is a count of rows, not two sets of rows
/// to intersect.
fn shared_by_a_count(tokens: &[Token], i: usize) -> bool {
    counts_rows_at(tokens, i + 2)
}

/// Whether the words from `from` (past "the", "a") start a count of rows: a number, a
/// comparison ("more than 3", "at least two", "over 5"), a superlative ("the most", "the
/// greatest number"), or a bare quantity word ("more", "fewer", "many", "multiple", "no").
pub(crate) fn counts_rows_at(tokens: &[Token], from: usize) -> bool {
    let Some(at) = (from..tokens.len()).find(|&j| !tokens[j].is_any(&["the", "a"])) else {
        return false;
    };
    let t = &tokens[at];
    t.kind == TokenKind::Number
        || number_word(&t.lower).is_some()
        || comparison_words(tokens, at).is_some()
        || superlative_word(&t.lower).is_some()
        || t.is_any(&["more", "fewer", "less", "many", "multiple", "no"])
}
