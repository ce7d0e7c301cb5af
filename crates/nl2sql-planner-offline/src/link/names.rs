//! Name linking: question spans matched against table and column names (whole names,
//! table-qualified column names, synonyms, words inside longer names, descriptions).
//!
//! Among equally good candidates, what the schema literally says beats what only the
//! built-in synonym list makes equal: "list price" is `unit_price`, not `unit_cost` (the
//! list reads "cost" as "price"), and "order amount" is `total_amount`, not a `quantity`
//! (the list reads "amount" as "quantity"). Money words with no name of their own
//! ("revenue", "spend") link to the money columns.

use super::super::text::{
    Token, TokenKind, canonical, is_function_word, is_money_word, is_stop_word, rate_unit, stem,
};
use super::mention::{Candidates, Mention, Target, pending};
use super::schema::SchemaIndex;

/// Name words of money columns, best first: an amount or total, then a price, then a cost.
const MONEY_NAMES: &[(&str, u32)] = &[
    ("amount", 6),
    ("revenue", 6),
    ("sale", 6),
    ("total", 6),
    ("value", 6),
    ("spend", 6),
    ("payment", 6),
    ("price", 5),
    ("cost", 4),
];

pub(super) fn names(
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
) -> Vec<Mention> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let mut found: Option<(usize, Candidates)> = None;
        for n in (1..=5.min(tokens.len() - i)).rev() {
            let span = &tokens[i..i + n];
            let blocked = (i..i + n).any(|k| used[k] || taken[k])
                || span.iter().any(|t| t.kind != TokenKind::Word);
            if blocked {
                continue;
            }
            // A grammar word at an edge ("on hand", "in stock") only as part of a whole
            // name.
            let edge = is_function_word(&span[0].lower) || is_function_word(&span[n - 1].lower);
            if edge && n == 1 {
                continue;
            }
            // A money word before a noun modifies it ("sales channel", "revenue report").
            let modifier = tokens.get(i + n).is_some_and(|t| {
                t.kind == TokenKind::Word && !is_function_word(&t.lower) && !is_stop_word(&t.lower)
            });
            let noun = n == 1 && thing_after_determiner(tokens, i);
            let mut cands = name_candidates(span, !modifier, noun, index);
            // `types of defects` names `defect types` ("friends of friends" is a relation
            // taken twice, no name).
            if cands.is_empty() && n == 3 && span[1].lower == "of" && span[0].stem != span[2].stem {
                let swapped = [span[2].clone(), span[0].clone()];
                cands = name_candidates(&swapped, false, false, index);
            }
            if edge {
                cands.retain(|(_, s)| *s >= 20);
            }
            if !cands.is_empty() {
                found = Some((n, cands));
                break;
            }
        }
        match found {
            Some((n, cands)) => {
                taken[i..i + n].iter_mut().for_each(|t| *t = true);
                out.push(pending(i, i + n, cands));
                i += n;
            }
            None => i += 1,
        }
    }
    out
}

/// Intent words that are also things a schema keeps rows of: "order" sorts a listing,
/// but "an order" is an order.
const THING_WORDS: &[&str] = &["order"];

/// Words before a noun that make it a thing ("customers who never placed an order",
/// "at least one order"), never said before the sorting sense ("in order of", "in the
/// order of", "order by").
/// ("in that order" and "in this order" sort.)
const DETERMINERS: &[&str] = &[
    "a", "an", "any", "each", "every", "one", "no", "their", "its", "his", "her", "single",
    "latest", "earliest", "first", "last",
];

/// Whether the word at `i` is one of [`THING_WORDS`] said as a thing: after a determiner
/// and not before "by", "of" or "in".
fn thing_after_determiner(tokens: &[Token], i: usize) -> bool {
    tokens[i].is_any(THING_WORDS)
        && i > 0
        && tokens[i - 1].is_any(DETERMINERS)
        && !tokens
            .get(i + 1)
            .is_some_and(|t| t.is_any(&["by", "of", "in"]))
}

/// The candidates of one span, best kept by `pending`, literal matches preferred; a stop
/// word links inside longer names only when said as a thing (`noun`).
fn name_candidates(span: &[Token], money: bool, noun: bool, index: &SchemaIndex) -> Candidates {
    let stems: Vec<&str> = span.iter().map(|t| t.stem.as_str()).collect();
    let plain: Vec<String> = span.iter().map(|t| stem(&t.lower)).collect();
    // "hourly capacity" names `capacity_per_hour`: a rate adjective is "per" its unit.
    if let Some(cands) = rate_names(span, index) {
        return cands;
    }
    let mut cands = whole_names(&stems, index);
    let synonym_only = !cands.is_empty() && !cands.iter().any(|(t, _)| literal(t, &plain, index));
    if cands.is_empty() || synonym_only {
        // A literal word inside a longer name beats a whole name that only the synonym
        // list makes equal ("amount" is in `total_amount`; it is a `quantity` only by
        // synonym).
        let partial = if span.len() == 1 {
            if is_stop_word(&span[0].lower) && !noun {
                Vec::new()
            } else {
                word_in_names(stems[0], &plain[0], index)
            }
        } else if subject_and_verb(span) {
            Vec::new()
        } else {
            words_in_name(&stems, index)
        };
        if synonym_only {
            let literal_partial: Candidates = partial
                .into_iter()
                .filter(|(t, _)| literal(t, &plain, index))
                .collect();
            if !literal_partial.is_empty() {
                cands = literal_partial;
            }
        } else {
            cands = partial;
        }
    }
    if cands.is_empty() && span.len() == 1 {
        if money && span[0].kind == TokenKind::Word && is_money_word(&span[0].lower) {
            cands = money_columns(index);
        }
        if cands.is_empty() && !is_stop_word(&span[0].lower) && stems[0].len() >= 3 {
            cands = in_descriptions(stems[0], index);
        }
    }
    prefer_literal(&mut cands, &plain, index);
    cands
}

/// "hourly capacity", "daily output": a span with a rate adjective ("hourly") read with
/// the adjective as "per" its unit after the other words ("capacity per hour"), when that
/// is a whole column name.
fn rate_names(span: &[Token], index: &SchemaIndex) -> Option<Candidates> {
    if span.len() < 2 {
        return None;
    }
    let (k, unit) = span
        .iter()
        .enumerate()
        .find_map(|(k, t)| rate_unit(&t.lower).map(|u| (k, u)))?;
    let mut rewritten: Vec<String> = span
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != k)
        .map(|(_, t)| t.stem.clone())
        .collect();
    rewritten.push(canonical("per"));
    rewritten.push(canonical(unit));
    let stems: Vec<&str> = rewritten.iter().map(String::as_str).collect();
    let cands: Candidates = whole_names(&stems, index)
        .into_iter()
        .filter(|(t, _)| matches!(t, Target::Column(_)))
        .collect();
    (!cands.is_empty()).then_some(cands)
}

/// Whole table names, table-qualified column names, column names and column synonyms.
fn whole_names(stems: &[&str], index: &SchemaIndex) -> Candidates {
    let n = u32::try_from(stems.len()).unwrap_or(0);
    let mut cands: Candidates = Vec::new();
    let eq = |a: &[String]| a.iter().map(String::as_str).eq(stems.iter().copied());
    for (t, table) in index.tables.iter().enumerate() {
        if eq(&table.stems) {
            cands.push((Target::Table(t), 20 + 2 * n));
        } else if table.synonyms.iter().any(|s| eq(s)) {
            cands.push((Target::Table(t), 18 + 2 * n));
        }
    }
    for (c, col) in index.columns.iter().enumerate() {
        let table = &index.tables[col.table];
        let qualified = || {
            table
                .stems
                .iter()
                .chain(col.stems.iter())
                .map(String::as_str)
                .eq(stems.iter().copied())
        };
        let tail_qualified = || {
            table
                .stems
                .last()
                .into_iter()
                .chain(col.stems.iter())
                .map(String::as_str)
                .eq(stems.iter().copied())
        };
        if n >= 2 && (qualified() || tail_qualified()) {
            cands.push((Target::Column(c), 22 + 2 * n));
        } else if eq(&col.stems) {
            cands.push((Target::Column(c), 20 + 2 * n));
        } else if col.synonyms.iter().any(|s| eq(s)) {
            cands.push((Target::Column(c), 18 + 2 * n));
        }
    }
    cands
}

/// One content word inside a longer table or column name.
fn word_in_names(s: &str, plain: &str, index: &SchemaIndex) -> Candidates {
    let mut cands: Candidates = Vec::new();
    if s.len() < 3 {
        return cands;
    }
    let has = |stems: &[String], plains: &[String]| {
        stems.iter().any(|x| x == s) || plains.iter().any(|x| x == plain)
    };
    for (t, table) in index.tables.iter().enumerate() {
        if has(&table.stems, &table.plain) {
            cands.push((Target::Table(t), 8));
        }
    }
    // A word that meets a column name only through the synonym list meets its head (last)
    // word: "produce" is `quantity_produced` (from "made"), not `made_in_factory_code`.
    let via_synonym_head = |stems: &[String], plains: &[String]| {
        plains.iter().any(|x| x == plain) || stems.last().is_some_and(|x| x == s)
    };
    // A code that identifies the word's thing (`factory_code` for "plant", a synonym of
    // "factory") stands for it, as a name column would.
    let identifies = |stems: &[String], plains: &[String]| {
        matches!(stems, [first, _] if first == s)
            && plains
                .last()
                .is_some_and(|w| ["code", "key", "number", "no"].contains(&w.as_str()))
    };
    for (c, col) in index.columns.iter().enumerate() {
        if has(&col.stems, &col.plain)
            && (via_synonym_head(&col.stems, &col.plain)
                || (identifies(&col.stems, &col.plain)
                    && col.class == super::schema::TypeClass::Text))
            && !(col.is_key && col.stems.len() > 1)
        {
            cands.push((Target::Column(c), 7));
        } else if col.is_pk
            && col.class == super::schema::TypeClass::Text
            && col.plain.last().is_some_and(|w| w == plain)
            && ["code", "number", "no"].contains(&plain)
        {
            // "the codes of the courses" over `COURSE.CRS_CODE` (its key) and
            // `COURSE.DEPT_CODE`: the key that a code word heads is a reading too.
            cands.push((Target::Column(c), 7));
        } else if col.synonyms.iter().any(|syn| syn.iter().any(|x| x == s)) {
            cands.push((Target::Column(c), 6));
        }
    }
    cands
}

/// Several content words inside one table-qualified column name, in order, the last one
/// the column's head (last) word ("factory code" in `ship_from_factory_code`, "order
/// amount" in `orders.total_amount`; "order line" is not `line_amount`).
fn words_in_name(stems: &[&str], index: &SchemaIndex) -> Candidates {
    let n = u32::try_from(stems.len()).unwrap_or(0);
    let mut cands: Candidates = Vec::new();
    if !(2..=3).contains(&stems.len()) {
        return cands;
    }
    for (c, col) in index.columns.iter().enumerate() {
        // The head: the last word that is not a grammar word (`ended_at` → "end").
        let head = col
            .stems
            .iter()
            .rev()
            .find(|w| !is_function_word(w))
            .map(String::as_str);
        if col.is_key || stems.last() != head.as_ref() {
            continue;
        }
        let mut words = index.tables[col.table].stems.iter().chain(col.stems.iter());
        if stems.iter().all(|s| words.any(|w| w == s)) {
            cands.push((Target::Column(c), 10 + n));
        }
    }
    cands
}

/// True when a span reads as a subject and its verb ("factories opened", "runs produced")
/// rather than one name: a plural before the last word, or a past participle last.
fn subject_and_verb(span: &[Token]) -> bool {
    let plural = |t: &Token| t.lower.ends_with('s') && t.lower != t.stem;
    span.split_last()
        .is_some_and(|(last, rest)| rest.iter().any(plural) || last.lower.ends_with("ed"))
}

/// Numeric columns that hold money, by their name words.
fn money_columns(index: &SchemaIndex) -> Candidates {
    index
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.is_measure())
        .filter_map(|(i, c)| {
            MONEY_NAMES
                .iter()
                .filter(|(w, _)| c.plain.iter().any(|p| *p == stem(w)))
                .map(|(_, s)| *s)
                .max()
                .map(|s| (Target::Column(i), s))
        })
        .collect()
}

/// Tables and columns whose description holds the word.
fn in_descriptions(s: &str, index: &SchemaIndex) -> Candidates {
    let mut cands: Candidates = Vec::new();
    for (t, table) in index.tables.iter().enumerate() {
        if table.description.iter().any(|x| x == s) {
            cands.push((Target::Table(t), 3));
        }
    }
    for (c, col) in index.columns.iter().enumerate() {
        // "Workers on the shift" on a number column: the description's head noun is what
        // the column counts, as good as a synonym.
        if col.is_measure() && col.description.first().is_some_and(|x| x == s) {
            cands.push((Target::Column(c), 8));
        } else if col.description.iter().any(|x| x == s) {
            cands.push((Target::Column(c), 2));
        }
    }
    cands
}

/// True when every word of the span, as written (no synonym), is in the target's name.
fn literal(target: &Target, plain: &[String], index: &SchemaIndex) -> bool {
    let words: Vec<&String> = match target {
        Target::Table(t) => index.tables[*t].plain.iter().collect(),
        Target::Column(c) | Target::Value { column: c, .. } => {
            let col = &index.columns[*c];
            index.tables[col.table]
                .plain
                .iter()
                .chain(col.plain.iter())
                .chain(col.synonyms.iter().flatten())
                .collect()
        }
    };
    plain.iter().all(|p| words.contains(&p))
}

/// Among the best-scored candidates, drops those that match only through the synonym
/// list when another matches literally.
fn prefer_literal(cands: &mut Candidates, plain: &[String], index: &SchemaIndex) {
    let Some(best) = cands.iter().map(|(_, s)| *s).max() else {
        return;
    };
    let lit: Vec<bool> = cands
        .iter()
        .map(|(t, s)| *s == best && literal(t, plain, index))
        .collect();
    if lit.iter().any(|l| *l) {
        let mut k = 0;
        cands.retain(|(_, s)| {
            let keep = *s != best || lit[k];
            k += 1;
            keep
        });
    }
}
