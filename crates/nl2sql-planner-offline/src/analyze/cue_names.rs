//! Aggregation words spelt in a column's name: "the number of deaths" over a column
//! `Number_Deaths`, "the total points" over `Total_Points`, "max speed" over `Max_speed`.
//! The question names a number each row keeps, and asks for that column (listed,
//! compared, ordered by), not for a count, a sum or an extreme of it; an aggregation word
//! before the name still aggregates the column ("the average number of hosts", "the
//! average total amount purchased"). Learned on Spider train, where of 70 questions whose
//! words spell such a column, the gold query reads the column as it is in 62, and those
//! were refused or summed ("List name, dates active, and number of deaths for all storms",
//! "the total points of gymnasts in descending order").

use super::super::intent::{Cues, holder_before};
use super::super::link::{Mention, SchemaIndex, Target};
use super::super::text::{Token, stem};

/// The words a column name may start with for each aggregation word of a question: the
/// word and its abbreviations (`Num_of_Audience`, `No_of_customers`, `tot_cred`).
const NAME_PREFIXES: &[(&str, &[&str])] = &[
    ("number", &["number", "num", "no", "nbr"]),
    ("total", &["total", "tot"]),
    ("maximum", &["maximum", "max"]),
    ("max", &["maximum", "max"]),
    ("minimum", &["minimum", "min"]),
    ("min", &["minimum", "min"]),
    ("average", &["average", "avg", "mean"]),
    ("avg", &["average", "avg", "mean"]),
    ("mean", &["average", "avg", "mean"]),
];

/// Drops the aggregation cue that, with the column mention right after it, spells that
/// column's name ("number of deaths", "total points"), and makes the mention start at
/// the cue: the words are the column's. Not where the words after the aggregation word
/// are the whole name of another column ("the minimum salary" where employees have a
/// `salary` and jobs a `min_salary`): then the question may ask for either; nor after
/// "with the"/"has the", where the word ranks the rows by the column.
pub(super) fn cues_in_names(
    cues: &mut Cues,
    mentions: &mut [Mention],
    tokens: &[Token],
    index: &SchemaIndex,
) {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for m in mentions.iter_mut() {
        let Target::Column(c) = m.target else {
            continue;
        };
        // "number of deaths": the cue is two words; "total points": one.
        let start = match m.start.checked_sub(2) {
            Some(s) if tokens[s].is("number") && tokens[s + 1].is("of") => s,
            _ => m.start.saturating_sub(1),
        };
        if start == m.start {
            continue;
        }
        let cue_of = |s: usize, e: usize| {
            cues.aggs.iter().any(|a| (a.start, a.end) == (s, e))
                || cues.supers.iter().any(|a| (a.start, a.end) == (s, e))
        };
        if !cue_of(start, m.start) {
            continue;
        }
        let said = &tokens[m.start..m.end];
        let Some(rest) = rest_of_name(&index.columns[c].plain, &tokens[start].lower) else {
            continue;
        };
        let number = tokens[start].is("number");
        // "the room with the maximum occupancy" over `maxOccupancy` ranks the rooms by it.
        let ranked = holder_before(tokens, start);
        if spells(rest, said) && !ranked && (number || !names_another_column(index, c, rest)) {
            spans.push((start, m.start));
            m.start = start;
        }
    }
    cues.aggs.retain(|a| !spans.contains(&(a.start, a.end)));
    cues.supers.retain(|s| !spans.contains(&(s.start, s.end)));
}

/// The words of column name `name` after a prefix that aggregation word `word` may be
/// written as in names (and an "of" after it: `Num_of_Audience`), if it starts so.
fn rest_of_name<'n>(name: &'n [String], word: &str) -> Option<&'n [String]> {
    let (_, prefixes) = NAME_PREFIXES.iter().find(|(w, _)| *w == word)?;
    let (first, rest) = name.split_first()?;
    if !prefixes.iter().any(|p| stem(p) == *first || p == first) {
        return None;
    }
    Some(match rest.split_first() {
        Some((of, tail)) if of == "of" => tail,
        _ => rest,
    })
}

/// Whether the tokens `said` spell the name words `rest`, one each.
fn spells(rest: &[String], said: &[Token]) -> bool {
    !rest.is_empty()
        && rest.len() == said.len()
        && rest.iter().zip(said).all(|(w, t)| t.has_stem(w))
}

/// Whether a column other than `c` is named by the words `rest` alone.
fn names_another_column(index: &SchemaIndex, c: usize, rest: &[String]) -> bool {
    index
        .columns
        .iter()
        .enumerate()
        .any(|(k, col)| k != c && col.plain.as_slice() == rest)
}
