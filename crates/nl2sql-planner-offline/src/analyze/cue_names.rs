//! Aggregation words spelt in a column's name: "the number of deaths" over a column
//! `Number_Deaths`, "the total points" over `Total_Points`, "max speed" over `Max_speed`,
//! "an overall rating" over `overall_rating`.
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
    ("overall", &["overall"]),
    ("maximum", &["maximum", "max"]),
    ("max", &["maximum", "max"]),
    ("minimum", &["minimum", "min"]),
    ("min", &["minimum", "min"]),
    ("average", &["average", "avg", "mean"]),
    ("avg", &["average", "avg", "mean"]),
    ("mean", &["average", "avg", "mean"]),
];

/// Drops the aggregation cue that, with the column mention right after it, spells that
/// column's name ("number of deaths", "total points", "max temperature" for
/// `max_temperature_f`: a unit the name ends with may go unsaid), and makes the mention
/// start at the cue: the words are the column's. Where the words after the cue tied
/// several columns, the one whose name the cue and words spell is the mention's, and the
/// tie is settled. Not where the words after the aggregation word
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
        if !matches!(m.target, Target::Column(_)) {
            continue;
        }
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
        let number = tokens[start].is("number");
        // "the room with the maximum occupancy" over `maxOccupancy` ranks the rooms by it.
        if holder_before(tokens, start) {
            continue;
        }
        // The chosen column, or one the word tied with ("max temperature": "temperature"
        // is as much `mean_temperature_f` as `max_temperature_f`; the cue says which).
        let tied = m
            .alternatives
            .iter()
            .map(|(t, _)| t)
            .chain(m.guess.as_ref());
        let spelt = std::iter::once(&m.target).chain(tied).find_map(|t| {
            let Target::Column(c) = *t else {
                return None;
            };
            let rest = rest_of_name(&index.columns[c].plain, &tokens[start].lower)?;
            let other = !number && names_another_column(index, c, without_units(rest));
            (spells(rest, said) && !other).then_some(c)
        });
        if let Some(c) = spelt {
            spans.push((start, m.start));
            m.start = start;
            m.target = Target::Column(c);
            m.alternatives.clear();
            m.guess = None;
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

/// Units and scales that a number column's name may end with and a question leaves
/// unsaid ("the max temperature" over `max_temperature_f`, "mean visibility" over
/// `mean_visibility_miles`).
const UNIT_WORDS: &[&str] = &[
    "f", "c", "mph", "kph", "kmh", "km", "miles", "mi", "inches", "feet", "ft", "cm", "mm", "kg",
    "lb", "lbs", "usd", "eur", "gbp", "pct", "percent", "secs", "seconds", "ms", "hrs", "hours",
    "million", "millions", "billion", "billions",
];

/// The name words `rest` without the units they end with (all of them if nothing else).
fn without_units(rest: &[String]) -> &[String] {
    let units = rest
        .iter()
        .rev()
        .take_while(|w| UNIT_WORDS.iter().any(|u| stem(u) == **w || u == w))
        .count();
    match &rest[..rest.len() - units] {
        [] => rest,
        named => named,
    }
}

/// Whether the tokens `said` spell the name words `rest`, one each (the units it ends
/// with said or not).
fn spells(rest: &[String], said: &[Token]) -> bool {
    let named = without_units(rest);
    !said.is_empty()
        && (said.len() == named.len() || said.len() == rest.len())
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
