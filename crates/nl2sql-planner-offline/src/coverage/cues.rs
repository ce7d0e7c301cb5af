//! The cues a plan must show: a question's aggregation, superlative, top-N, ordering,
//! grouping or distinct that the built plan has no counterpart for.

use crate::analyze::{Analysis, EveryColumn};
use crate::intent::Agg;
use crate::link::{Mention, SchemaIndex, Target};
use crate::text::Token;
use nl2sql_plan::{Expr, ExprKind, PlanModel};
use std::collections::BTreeSet;

use super::hints::selects_amount_after;
use super::used::Used;

/// The aggregate functions a plan calls (upper case).
pub(super) fn plan_functions(plan: &PlanModel) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    each_call(plan, true, &mut |f| {
        out.insert(f.to_uppercase());
    });
    out
}

/// Calls `f` with the name of every function `plan` calls in its outputs and HAVING, and
/// in its sort keys when `with_order`.
fn each_call(plan: &PlanModel, with_order: bool, f: &mut dyn FnMut(&str)) {
    let mut visit = |e: &Expr| {
        if e.kind == ExprKind::Func
            && let Some(name) = &e.func_name
        {
            f(name);
        }
    };
    for item in &plan.select_items {
        item.expr.walk(&mut visit);
    }
    if let Some(h) = &plan.having {
        h.walk(&mut visit);
    }
    if with_order {
        for o in &plan.order_by {
            o.expr.walk(&mut visit);
        }
    }
}

/// Whether an ORDER BY key of `plan` reads column `name`.
pub(super) fn plan_orders_by(plan: &PlanModel, name: &str) -> bool {
    plan.order_by.iter().any(|o| {
        let mut found = false;
        o.expr.walk(&mut |e: &Expr| {
            if e.column_name
                .as_deref()
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
            {
                found = true;
            }
        });
        found
    })
}

/// The words of grouping cues ("for each", "per", "grouped by", "broken down by").
pub(super) const GROUP_WORDS: &[&str] = &[
    "for",
    "of",
    "in",
    "each",
    "every",
    "per",
    "grouped",
    "broken",
    "down",
    "split",
    "breakdown",
    "by",
];

/// Cues of the analysis that the plan does not express: `(start, end, what)`.
pub(super) fn missing_cues(
    tokens: &[Token],
    analysis: &Analysis,
    index: &SchemaIndex,
    plan: &PlanModel,
    used: &Used,
    covered: &[bool],
) -> Vec<(usize, usize, String)> {
    let cues = &analysis.cues;
    let functions = plan_functions(plan);
    let ranked = !plan.order_by.is_empty() && plan.limit.is_some();
    let mut out = Vec::new();
    // A cue spelled inside a name the question links ("Total_Horses") is that name.
    let inside_mention =
        |start: usize, end: usize| (start..end).all(|i| covered.get(i).copied().unwrap_or(false));
    for (n, cue) in cues.aggs.iter().enumerate() {
        if inside_mention(cue.start, cue.end) {
            continue;
        }
        // "the maximum number of pilots": the unit of the extreme before it.
        let unit_of_extreme = n > 0
            && cue.counts_the_unit_of(&cues.aggs[n - 1], tokens)
            && (functions.contains("MAX") || functions.contains("MIN"));
        let (name, ok) = match cue.agg {
            // "how many units", "the total number of minutes": a count of rows, or an
            // amount added up.
            Agg::Count => (
                "a count",
                functions.contains("COUNT")
                    || functions.contains("SUM")
                    || functions.contains("AVG")
                    || unit_of_extreme
                    || selects_amount_after(cue.end, analysis, index, plan),
            ),
            // "how many machines in total": a total count is a count.
            Agg::Sum => (
                "a total",
                functions.contains("SUM") || functions.contains("COUNT"),
            ),
            Agg::Avg => ("an average", functions.contains("AVG")),
            Agg::Min => ("a minimum", functions.contains("MIN") || ranked),
            Agg::Max => ("a maximum", functions.contains("MAX") || ranked),
        };
        if !ok {
            out.push((cue.start, cue.end, name.to_owned()));
        }
    }
    // "all the information about courses": every column of the rows, or (right after
    // listed columns) theirs.
    if let Some((start, end)) = cues.every_column {
        let ok = match analysis.every_column {
            Some(EveryColumn::Listed) => true,
            Some(EveryColumn::Of(t)) => {
                let columns = &index.tables[t].columns;
                plan.select_items.len() >= columns.len()
                    && columns.iter().all(|c| used.reads_column(index, *c))
            }
            None => false,
        };
        if !ok {
            out.push((start, end, "every column of the rows asked for".to_owned()));
        }
    }
    // "how many are male and how many are female": two counts asked for, where the plan
    // computes one and groups nothing, is one number where two were wanted.
    let counts_asked: Vec<_> = cues
        .aggs
        .iter()
        .filter(|a| {
            a.agg == Agg::Count && tokens[a.start].is("how") && !inside_mention(a.start, a.end)
        })
        .collect();
    if counts_asked.len() >= 2
        && plan.group_by.is_empty()
        && calls_of(plan, "COUNT") < counts_asked.len()
        && let Some(second) = counts_asked.get(1)
    {
        out.push((second.start, second.end, "a second count".to_owned()));
    }
    // A ranking of groups ranks them by what each group holds: "the advisor with the
    // most students" sorted by the advisor's own name is no ranking of it.
    let ranks_rows = ranked && (plan.group_by.is_empty() || orders_by_aggregate(plan));
    // An extreme that an aggregation word asked for ("the max speed") is that word's:
    // a superlative elsewhere needs an extreme of its own.
    let extremes_asked = cues
        .aggs
        .iter()
        .filter(|a| matches!(a.agg, Agg::Min | Agg::Max) && !inside_mention(a.start, a.end))
        .count();
    let spare_extreme = extreme_calls(plan) > extremes_asked;
    for cue in &cues.supers {
        if inside_mention(cue.start, cue.end) {
            continue;
        }
        let ok = ranks_rows
            || spare_extreme
            || (analysis.ordering_superlatives.contains(&cue.start) && !plan.order_by.is_empty());
        if !ok {
            out.push((
                cue.start,
                cue.end,
                "a ranking (ordered, with a limit)".to_owned(),
            ));
        }
    }
    // "the dates of the notes", "the open dates and years": a date or year asked for by
    // its word alone (a grammar word to the linker) must be read from some column.
    out.extend(dates_asked(tokens, analysis, index, used, covered));
    // "the largest and smallest codes", "the lowest and highest rating": both extremes
    // are asked for, so the plan must compute both (one ranking cannot stand for both).
    out.extend(both_extremes(tokens, analysis, &functions, &inside_mention));
    // A grouping the question asks for ("for each year", "per factory") that an
    // aggregating plan dropped: one number where the question wants one per group.
    // ("by" alone is too loose a cue to hold a plan to.)
    let aggregates = ["COUNT", "SUM", "AVG", "MIN", "MAX"]
        .iter()
        .any(|f| functions.contains(*f));
    if aggregates && plan.group_by.is_empty() {
        for &end in &cues.groups {
            if end == 0
                || tokens[end - 1].is("by")
                    && end >= 2
                    && !tokens[end - 2].is_any(&["grouped", "split", "breakdown", "down"])
            {
                continue;
            }
            let mut start = end - 1;
            while start > 0
                && cues.used.get(start - 1).copied().unwrap_or(false)
                && tokens[start - 1].is_any(GROUP_WORDS)
            {
                start -= 1;
            }
            // "the average quantity per production run": per row of the table the plan
            // aggregates, not a grouping.
            let per_row = analysis
                .mentions
                .iter()
                .find(|m| m.start == end)
                .is_some_and(|m| match m.target {
                    Target::Table(t) => plan
                        .tables
                        .first()
                        .is_some_and(|f| f.name.eq_ignore_ascii_case(&index.tables[t].name)),
                    _ => false,
                });
            if !per_row && !inside_mention(start, end) {
                out.push((start, end, "a result per group".to_owned()));
            }
        }
    }
    if let Some((n, _, end)) = cues.top
        && (plan.limit != Some(n) || plan.order_by.is_empty())
    {
        let start = end.saturating_sub(2);
        out.push((start, end, format!("the top {n} by some order")));
    }
    // The column named right after "ordered by", "sorted by" or "in (ascending) order of"
    // must be a sort key.
    let mut keys: Vec<usize> = cues.order_key.into_iter().collect();
    keys.extend(
        tokens
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[0].is("order") && w[1].is("of"))
            .map(|(i, _)| i + 2),
    );
    keys.dedup();
    for at in keys {
        let key = analysis
            .mentions
            .iter()
            .find(|m| m.start >= at && m.start <= at + 3)
            .and_then(|m| m.column());
        if let Some(c) = key
            && !plan_orders_by(plan, &index.columns[c].name)
        {
            let start = at.saturating_sub(2);
            out.push((start, at, format!("an order by {}", index.columns[c].name)));
        }
    }
    out.extend(aggregation_words_unread(
        tokens, analysis, &functions, covered,
    ));
    out.extend(dates_unbounded(tokens, analysis, used, &inside_mention));
    out.extend(comparisons_unread(tokens, analysis, &inside_mention));
    out.extend(directions_unplaced(tokens, plan));
    // "sorted by date in ascending order" with no sort key the plan could read: an order
    // asked for and missing.
    if plan.order_by.is_empty()
        && let Some(at) = cues.order_key
    {
        let start = at.saturating_sub(2);
        out.push((start, at, "an order".to_owned()));
    }
    // "the first and last name", "start and end dates": a word coordinated with a
    // column's name ("last name" → `last_name`) that with the same head names another
    // column of that table (`first_name`) asks for that column too.
    for m in &analysis.mentions {
        let Target::Column(c) = m.target else {
            continue;
        };
        if m.start < 2 || !tokens[m.start - 1].is("and") {
            continue;
        }
        let col = &index.columns[c];
        let Some(head) = col.plain.last() else {
            continue;
        };
        let other = &tokens[m.start - 2];
        let sibling = index.columns.iter().position(|o| {
            o.table == col.table
                && o.plain.len() == 2
                && o.plain[1] == *head
                && (o.plain[0] == other.stem || o.plain[0] == other.lower)
        });
        if let Some(s) = sibling
            && s != c
            && !used.reads_column(index, s)
        {
            out.push((
                m.start - 2,
                m.start - 1,
                format!("the column {}", index.columns[s].name),
            ));
        }
    }
    if cues.distinct
        && !plan.distinct
        && !rows_distinct_by_grouping(plan)
        && !plan.select_items.iter().any(|s| s.expr.distinct)
        && cues.aggs.iter().all(|a| !a.distinct)
        && let Some(i) = tokens
            .iter()
            .position(|t| t.is_any(crate::intent::DISTINCT_WORDS))
    {
        out.push((i, i + 1, "distinct values".to_owned()));
    }
    out
}

/// Whether the first sort key of `plan` is an aggregate, written out or named by the
/// alias of an aggregate output.
fn orders_by_aggregate(plan: &PlanModel) -> bool {
    plan.order_by.first().is_some_and(|o| {
        o.expr.is_aggregate_call()
            || (o.expr.kind == ExprKind::Column
                && o.expr.alias.is_none()
                && plan.select_items.iter().any(|s| {
                    s.expr.is_aggregate_call() && s.alias.is_some() && s.alias == o.expr.column_name
                }))
    })
}

/// How many MIN and MAX calls `plan` makes.
fn extreme_calls(plan: &PlanModel) -> usize {
    calls_of(plan, "MIN") + calls_of(plan, "MAX")
}

/// How many calls of the function `name` `plan` makes in its outputs and HAVING.
fn calls_of(plan: &PlanModel, name: &str) -> usize {
    let mut n = 0;
    each_call(plan, false, &mut |f| {
        if f.eq_ignore_ascii_case(name) {
            n += 1;
        }
    });
    n
}

/// Whether every row `plan` returns is a distinct group: it groups, and each output is
/// a grouping key or an aggregate ("the different headquarters and the number of
/// companies at each" lists each headquarters once, as a DISTINCT would).
fn rows_distinct_by_grouping(plan: &PlanModel) -> bool {
    !plan.group_by.is_empty()
        && plan
            .select_items
            .iter()
            .all(|s| s.expr.is_aggregate_call() || plan.group_by.iter().any(|g| g.expr == s.expr))
}

/// The extreme cue whose function the plan lacks when the question asks for both the
/// highest and the lowest value (in amounts, not in time or frequency).
fn both_extremes(
    tokens: &[Token],
    analysis: &Analysis,
    functions: &BTreeSet<String>,
    inside_mention: &dyn Fn(usize, usize) -> bool,
) -> Option<(usize, usize, String)> {
    let cues = &analysis.cues;
    let mut highest = None;
    let mut lowest = None;
    let aggs = cues.aggs.iter().filter_map(|a| match a.agg {
        Agg::Max => Some((true, a.start, a.end)),
        Agg::Min => Some((false, a.start, a.end)),
        _ => None,
    });
    let supers = cues
        .supers
        .iter()
        .filter(|s| !s.time && !s.frequency && !s.counted)
        // "most" alone ("the most orders") counts; only the words of amounts are extremes.
        .filter(|s| !tokens[s.start].is_any(&["most", "least", "fewest"]))
        .map(|s| (s.desc, s.start, s.end));
    for (desc, start, end) in aggs.chain(supers) {
        if inside_mention(start, end) {
            continue;
        }
        let slot = if desc { &mut highest } else { &mut lowest };
        slot.get_or_insert((start, end));
    }
    let ((hs, he), (ls, le)) = (highest?, lowest?);
    if !functions.contains("MAX") {
        Some((hs, he, "a maximum".to_owned()))
    } else if !functions.contains("MIN") {
        Some((ls, le, "a minimum".to_owned()))
    } else {
        None
    }
}

/// A word that names an aggregate after a determiner or a conjunction ("the number and
/// average age of students") but that no cue read and no name holds, where the plan
/// computes no such aggregate: the question asks for a figure the answer would lack.
fn aggregation_words_unread(
    tokens: &[Token],
    analysis: &Analysis,
    functions: &BTreeSet<String>,
    covered: &[bool],
) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let read = covered.get(i).copied().unwrap_or(false)
            || analysis.cues.used.get(i).copied().unwrap_or(false);
        // After a noun it is part of a name ("phone number", "flight number"); only a
        // determiner or a conjunction before it makes it a figure of its own.
        let own = i == 0 || tokens[i - 1].is_any(&["the", "a", "and", "their", "its", ","]);
        if read || !own {
            continue;
        }
        let (what, computed) = match t.lower.as_str() {
            "number" | "count" => ("a count", functions.contains("COUNT")),
            "average" | "avg" | "mean" => ("an average", functions.contains("AVG")),
            "minimum" | "min" => ("a minimum", functions.contains("MIN")),
            "maximum" | "max" => ("a maximum", functions.contains("MAX")),
            _ => continue,
        };
        if !computed {
            out.push((i, i + 1, what.to_owned()));
        }
    }
    out
}

/// A date phrase must bound a date of the plan: "in August" with no date filter is a
/// condition dropped (its month name is no number the checks of numbers would see). Its
/// bounds show as date text, or as the years compared with a year column ("in 2004" →
/// `Year = 2004`, "before 2010" → `Year < 2010`).
fn dates_unbounded(
    tokens: &[Token],
    analysis: &Analysis,
    used: &Used,
    inside_mention: &dyn Fn(usize, usize) -> bool,
) -> Vec<(usize, usize, String)> {
    let year = |bound: &String| bound.get(..4).and_then(|y| y.parse::<f64>().ok());
    analysis
        .cues
        .dates
        .iter()
        .filter(|d| {
            let placed = [&d.lo, &d.hi].into_iter().flatten().any(|b| {
                used.has_text(b)
                    || year(b).is_some_and(|y| used.has_number(y) || used.has_number(y - 1.0))
            }) || (d.start..d.end)
                .any(|k| tokens[k].number().is_some_and(|x| used.has_number(x)));
            !placed && !inside_mention(d.start, d.end)
        })
        .map(|d| (d.start, d.end, "a date range".to_owned()))
        .collect()
}

/// A comparison phrase ("greater than", "at least", "above any") that no cue read
/// compared nothing the plan holds: "whose age is greater than any engineer" must not
/// become a list of engineers.
fn comparisons_unread(
    tokens: &[Token],
    analysis: &Analysis,
    inside_mention: &dyn Fn(usize, usize) -> bool,
) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    for i in 0..tokens.len() {
        let Some((_, len)) = crate::intent::comparison_words(tokens, i) else {
            continue;
        };
        // "greater than", "at least"; or one comparison word compared with "any" or
        // "all" of some rows ("prices above any wine produced in 2006").
        let phrase = (len >= 2 && (tokens[i + len - 1].is("than") || tokens[i].is("at")))
            || tokens
                .get(i + len)
                .is_some_and(|t| t.is_any(&["any", "all", "every", "some"]));
        let read = (i..i + len).any(|k| analysis.cues.used.get(k).copied().unwrap_or(false));
        if phrase && !read && !inside_mention(i, i + len) {
            out.push((i, i + len, "a comparison".to_owned()));
        }
    }
    out
}

/// Direction words both ways ("sorted by price decreasing and name ascending") ask for
/// two sort keys, one each way (a phrase is read once: "descending alphabetical order" is
/// one direction).
fn directions_unplaced(tokens: &[Token], plan: &PlanModel) -> Option<(usize, usize, String)> {
    let mut directions = BTreeSet::new();
    let mut last = None;
    let mut i = 0;
    while i < tokens.len() {
        match crate::intent::direction_words(tokens, i) {
            Some(d) => {
                directions.insert(d.desc);
                last = Some(i);
                i += d.len;
            }
            None => i += 1,
        }
    }
    let ways: BTreeSet<bool> = plan
        .order_by
        .iter()
        .map(|o| o.direction == nl2sql_plan::Direction::Desc)
        .collect();
    let i = last?;
    (directions.len() == 2 && ways.len() < 2)
        .then(|| (i, i + 1, "a second sort key, the other way".to_owned()))
}

/// A word for dates ("date", "dates") or years ("year", "years") that no mention or date
/// phrase covers, in a question whose plan reads no column of that kind: the question
/// asks for something the answer would lack ("what are the dates of the notes" answered
/// with the notes' text).
fn dates_asked(
    tokens: &[Token],
    analysis: &Analysis,
    index: &SchemaIndex,
    used: &Used,
    covered: &[bool],
) -> Option<(usize, usize, String)> {
    let in_date_phrase = |i: usize| {
        analysis
            .cues
            .dates
            .iter()
            .any(|d| d.start <= i && i < d.end)
    };
    let reads = |fits: &dyn Fn(&str, bool) -> bool| {
        index.columns.iter().enumerate().any(|(k, c)| {
            fits(&c.name.to_lowercase(), c.is_temporal()) && used.reads_column(index, k)
        })
    };
    tokens.iter().enumerate().find_map(|(i, t)| {
        // "in order of founded year": the word qualifies the column named before it.
        let qualifies = i > 0 && covered.get(i - 1).copied().unwrap_or(false);
        if covered.get(i).copied().unwrap_or(false) || qualifies || in_date_phrase(i) {
            return None;
        }
        let (what, ok) = if t.is_any(&["date", "dates"]) {
            (
                "a date",
                reads(&|name, temporal| temporal || name.contains("date")),
            )
        } else if t.is_any(&["year", "years"]) {
            (
                "a year",
                reads(&|name, temporal| temporal || name.contains("year")),
            )
        } else {
            return None;
        };
        (!ok).then(|| (i, i + 1, what.to_owned()))
    })
}

/// Words that, before the counted noun, name a column holding a count of it
/// (`no_of_customers`, `num_of_staff`, `total_degrees`).
const COUNT_PREFIXES: &[&str] = &["no", "num", "number", "of", "total", "tot"];

/// "how many degrees were conferred" over a table `degrees` whose rows carry a number
/// `Degrees`, "the number of customers in the banks" over `bank.no_of_customers`: the
/// counted noun at `m` (a table the plan counts rows of) also names a number column of a
/// table the plan reads, so the question may ask for the rows counted or for that column
/// added up. The column, or `None` when nothing else reads the noun.
pub(super) fn counted_or_summed(
    m: &Mention,
    tokens: &[Token],
    analysis: &Analysis,
    index: &SchemaIndex,
    functions: &BTreeSet<String>,
    used: &Used,
) -> Option<usize> {
    let Target::Table(_) = m.target else {
        return None;
    };
    if m.end != m.start + 1 || !functions.contains("COUNT") || functions.contains("SUM") {
        return None;
    }
    let counted = analysis
        .cues
        .aggs
        .iter()
        .any(|c| c.agg == Agg::Count && c.end <= m.start && m.start - c.end <= 1);
    if !counted {
        return None;
    }
    let stem = &tokens[m.start].stem;
    index.columns.iter().enumerate().find_map(|(c, col)| {
        let named = col.plain.last() == Some(stem)
            && col.plain[..col.plain.len() - 1]
                .iter()
                .all(|w| COUNT_PREFIXES.contains(&w.as_str()));
        (named && col.is_measure() && used.reads_table(index, col.table)).then_some(c)
    })
}
