//! Verbs that only relate things the question names ("products made by the supplier",
//! "students who belong to the club", "wines produced in 2008", "the payment method used
//! by more than 3 parties"): where the schema has no column for the verb, the verb is
//! placed by what the plan does with the things it relates: a join, a condition, a
//! grouping that counts.

use crate::analyze::Analysis;
use crate::intent::counts_rows_at;
use crate::link::{SchemaIndex, Target, nearest_after, nearest_before};
use crate::text::{Token, dated_after, is_relating_verb, split_ident};
use nl2sql_plan::{Expr, ExprKind, LiteralValue, PlanModel};

use super::used::{Used, element_of};

/// What the relating verb at `i` became in `plan`, read in this order: the join of the
/// tables on either side of it, the join of the table its clause ends on, the condition
/// on the value after it, the grouping the count after it reads, the condition on the
/// date after it. `None` for another word, or a verb the plan does nothing with.
pub(super) fn placed_as(
    tokens: &[Token],
    i: usize,
    analysis: &Analysis,
    index: &SchemaIndex,
    used: &Used,
    plan: &PlanModel,
) -> Option<String> {
    if !is_relating_verb(&tokens[i].lower) {
        return None;
    }
    let site = Site {
        tokens,
        analysis,
        index,
        used,
    };
    if let Some((a, b)) = related_tables(site, i) {
        return Some(format!(
            "the join of {} and {}",
            index.tables[a].name, index.tables[b].name
        ));
    }
    if let Some((a, b)) = used_by(site, i, plan) {
        return Some(if a == b {
            format!("the rows of {} that hold it", index.tables[a].name)
        } else {
            format!(
                "the join of {} and {}",
                index.tables[a].name, index.tables[b].name
            )
        });
    }
    if let Some((a, joined)) = relates_before_it(site, i, plan) {
        return Some(if joined {
            format!("the join of {} to the other tables", index.tables[a].name)
        } else {
            format!("the columns of {} the plan lists", index.tables[a].name)
        });
    }
    if let Some(c) = valued_by(site, i) {
        let col = &index.columns[c];
        return Some(format!(
            "the condition on {}.{}",
            index.tables[col.table].name, col.name
        ));
    }
    if counted_by(tokens, i, analysis, plan) {
        return Some("the grouping whose rows are counted".to_owned());
    }
    dated_by(tokens, i, plan).map(|date| format!("the condition on the date {date}"))
}

/// Where a verb stands: the question's words, their analysis, the schema and what the
/// plan uses.
#[derive(Clone, Copy)]
struct Site<'a> {
    tokens: &'a [Token],
    analysis: &'a Analysis,
    index: &'a SchemaIndex,
    used: &'a Used,
}

/// How many tokens a side of the relation may be from the verb.
const REACH: usize = 4;

/// The two tables the verb at `i` relates, when it stands (not followed by
/// "by") between a mention of one table (just before it) and a mention of another (just
/// after it), and the plan reads both tables (so it joins them).
fn related_tables(site: Site<'_>, i: usize) -> Option<(usize, usize)> {
    // "made by": "by" reads as a grouping, which a join does not account for.
    if site.used.tables.len() < 2 || site.tokens.get(i + 1).is_some_and(|t| t.is("by")) {
        return None;
    }
    let in_plan = |t: usize| site.used.reads_table(site.index, t);
    let before = nearest_before(&site.analysis.mentions, i, REACH)?
        .1
        .target
        .table(site.index);
    let after = nearest_after(&site.analysis.mentions, i, REACH)?
        .1
        .target
        .table(site.index);
    (before != after && in_plan(before) && in_plan(after)).then_some((before, after))
}

/// "the payment methods used by parties", "the currency codes used in workshop groups",
/// "the policies used by the customer 'Dayana Robel'": a verb followed by "by" or "in"
/// and a table, where what is named right before it is a column or table of that same
/// table (the rows that hold it) or of another the plan joins it with. The tables, the
/// thing's first. Not where the plan groups: "by" may then have been read as "for each"
/// ("how many payment methods are used by parties" counted per party).
fn used_by(site: Site<'_>, i: usize, plan: &PlanModel) -> Option<(usize, usize)> {
    if !site
        .tokens
        .get(i + 1)
        .is_some_and(|t| t.is_any(&["by", "in"]))
        || !plan.group_by.is_empty()
    {
        return None;
    }
    let before = nearest_before(&site.analysis.mentions, i, 1)?.1;
    let after = nearest_after(&site.analysis.mentions, i + 1, 2)?.1;
    let (Target::Column(_) | Target::Table(_), Target::Table(by)) = (&before.target, &after.target)
    else {
        return None;
    };
    let thing = before.target.table(site.index);
    let in_plan = |t: usize| site.used.reads_table(site.index, t);
    (in_plan(thing) && in_plan(*by)).then_some((thing, *by))
}

/// The table a relating verb at the end of its clause relates to the rest of the plan:
/// "the names of the county they belong to", "the school the most players belong to",
/// "names of the ships involved", "the marketing region that the store Rob Dinning
/// belongs to": nothing follows the verb (or only a preposition) up to the end of the
/// question or a comma, the nearest mention before it names a table or a value of one,
/// and the plan joins that table to another (the relation is that join: `true`), or
/// reads that table alone and lists another of its columns ("the code of the category
/// that the product 'flax' belongs to", a column of the product's row: `false`).
fn relates_before_it(site: Site<'_>, i: usize, plan: &PlanModel) -> Option<(usize, bool)> {
    const TRAILING: &[&str] = &["to", "in", "on", "at", "for", "with", "from"];
    let last = match site.tokens.get(i + 1) {
        Some(t) if t.is_any(TRAILING) => i + 1,
        _ => i,
    };
    // The clause ends: no word after, or a mark between (tokens skip punctuation).
    let ends = site
        .tokens
        .get(last + 1)
        .is_none_or(|next| next.pos.0 > site.tokens[last].pos.1 + 1);
    let (k, before) = nearest_before(&site.analysis.mentions, i, REACH)?;
    // The row named by a value: "the product with the name 'flax'", "the accounting
    // department" (a value right before its table).
    let value_of = |m: &crate::link::Mention| match m.target {
        Target::Value { column, .. } => Some(column),
        _ => None,
    };
    let (t, valued) = match before.target {
        Target::Table(t) => {
            let named = k
                .checked_sub(1)
                .map(|j| &site.analysis.mentions[j])
                .filter(|m| m.end == before.start)
                .and_then(value_of)
                .filter(|c| site.index.columns[*c].table == t);
            (t, named)
        }
        // A value names the row only right before the verb ("the store Rob Dinning
        // belongs to", "Mark Giuliano is involved in"), not across a clause ("whose
        // office is in DRE 102, and when were they hired").
        Target::Value { column, .. }
            if site.tokens[before.end..i]
                .iter()
                .all(|t| t.is_any(&["is", "are", "was", "were", "be", "been"])) =>
        {
            (site.index.columns[column].table, Some(column))
        }
        Target::Value { .. } | Target::Column(_) => return None,
    };
    if !ends || !site.used.reads_table(site.index, t) {
        return None;
    }
    if site.used.tables.len() >= 2 {
        return Some((t, true));
    }
    // Over one table, only a row named by a value has columns to relate to.
    let valued = valued?;
    let lists_another = plan.select_items.iter().any(|item| {
        item.expr.kind == ExprKind::Column
            && item
                .expr
                .column_name
                .as_deref()
                .is_some_and(|c| !site.index.columns[valued].name.eq_ignore_ascii_case(c))
    });
    lists_another.then_some((t, false))
}

/// The date the relating verb at `i` is dated by: "wines produced in 2008", "movies made
/// before 2000" say when the rows came to be, and the verb is placed by the plan's
/// condition on that date. Only a year or ISO date right after a date preposition ("in
/// the year of 2010" allowed) that the plan compares with a column counts, and only when
/// that column names no other event than the verb's: "members registered after 2015"
/// is not `Open_year > 2015`.
fn dated_by(tokens: &[Token], i: usize, plan: &PlanModel) -> Option<String> {
    let verb = &tokens[i].lower;
    let date = dated_after(tokens, i)?;
    let columns = columns_compared_with(plan, &date.raw);
    (!columns.is_empty() && columns.iter().all(|c| names_no_other_event(c, verb)))
        .then(|| date.raw.clone())
}

/// The columns `plan`'s filter compares with a literal spelt `text` (a year or a date).
fn columns_compared_with(plan: &PlanModel, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let spells = |e: &Expr| match &e.value {
        Some(LiteralValue::Int(n)) => n.to_string() == text,
        Some(LiteralValue::Float(x)) => x.to_string() == text,
        Some(LiteralValue::Str(s)) => s.starts_with(text),
        _ => false,
    };
    if let Some(w) = &plan.where_ {
        w.walk(&mut |e: &Expr| {
            if let (Some(l), Some(r)) = (e.left.as_deref(), e.right.as_deref()) {
                for (a, b) in [(l, r), (r, l)] {
                    if a.kind == ExprKind::Column
                        && b.kind == ExprKind::Literal
                        && spells(b)
                        && let Some(name) = &a.column_name
                    {
                        out.push(name.clone());
                    }
                }
            }
        });
    }
    out
}

/// Whether a date column named `column` dates nothing but what `verb` says: its words
/// besides "year", "date" and the like are none, or one of them is the verb's
/// ("Open_Year" for "opened").
fn names_no_other_event(column: &str, verb: &str) -> bool {
    const DATE_WORDS: &[&str] = &[
        "year", "years", "date", "time", "day", "yr", "on", "at", "of",
    ];
    let events: Vec<String> = split_ident(column)
        .into_iter()
        .filter(|w| !DATE_WORDS.contains(&w.as_str()))
        .collect();
    events.is_empty()
        || events.iter().any(|w| {
            // The first four letters (not bytes: names may hold any letters).
            let head: String = w.chars().take(4).collect();
            head.chars().count() >= 3 && verb.starts_with(&head)
        })
}

/// Whether the relating verb at `i` says which rows a grouped count counts: "the
/// payment method used by more than 3 parties", "the industry shared by the most
/// companies", "how many invoices correspond to each order": the verb, then (after a
/// preposition or "the") a cue the plan reads that counts ("more than 3", "the most") or
/// groups ("each"), over a plan that groups and counts. The relation is the grouping
/// itself. ("registered after 2015" is a date, not a count.)
fn counted_by(tokens: &[Token], i: usize, analysis: &Analysis, plan: &PlanModel) -> bool {
    if plan.group_by.is_empty() || !counts(plan) {
        return false;
    }
    let Some(j) = (i + 1..tokens.len().min(i + 4))
        .find(|&j| !tokens[j].is_any(&["by", "to", "with", "for", "in", "the"]))
    else {
        return false;
    };
    analysis.cues.used.get(j).copied().unwrap_or(false)
        && (tokens[j].is_any(&["each", "every", "per"]) || counts_rows_at(tokens, j))
}

/// Whether `plan` counts rows (a `COUNT` among its outputs or in its grouping condition).
fn counts(plan: &PlanModel) -> bool {
    let mut found = false;
    let mut visit = |e: &Expr| {
        found |= e.is_aggregate_call()
            && e.func_name
                .as_deref()
                .is_some_and(|f| f.eq_ignore_ascii_case("COUNT"));
    };
    for s in &plan.select_items {
        s.expr.walk(&mut visit);
    }
    if let Some(h) = &plan.having {
        h.walk(&mut visit);
    }
    found
}

/// The column whose filter the relating verb at `i` names the value of: "channels owned
/// by CCTV", "circuits that belong to France or Belgium", "participants belong to the
/// type 'Organizer'": the verb, a preposition or article at most, then a value the plan
/// filters on. The relation is that condition.
fn valued_by(site: Site<'_>, i: usize) -> Option<usize> {
    const BETWEEN: &[&str] = &[
        "by", "to", "at", "in", "from", "for", "with", "the", "either",
    ];
    let (_, m) = nearest_after(&site.analysis.mentions, i, 3)?;
    let Target::Value { column, .. } = m.target else {
        return None;
    };
    (site.tokens[i + 1..m.start]
        .iter()
        .all(|t| t.is_any(BETWEEN))
        && element_of(m, site.index, site.used).1)
        .then_some(column)
}

#[cfg(test)]
mod tests {
    use super::names_no_other_event;

    #[test]
    fn a_column_names_another_event_by_its_first_letters() {
        assert!(names_no_other_event("Year", "produced"));
        assert!(names_no_other_event("Open_Year", "opened"));
        assert!(!names_no_other_event("Open_year", "registered"));
        // Letters past ASCII are letters, not bytes to cut through.
        assert!(!names_no_other_event("Année_year", "registered"));
        assert!(names_no_other_event("Année_year", "annéed"));
    }
}
