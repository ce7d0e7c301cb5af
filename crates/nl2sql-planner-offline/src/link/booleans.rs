//! Boolean columns named by an adjective: "preferred suppliers" is `is_preferred = true`,
//! "deliveries that arrived on time" is `on_time = true`, and an English negative of the
//! adjective ("unpaid", "inactive", "non-preferred" is read by the negation cue; "late" is
//! a listed antonym of "on time") is the column being false. The adjective is the column's
//! name without a leading verb (`is_`, `has_`, `was_`…). A text column whose known values
//! are only a yes and a no (`Y`/`N`, `Yes`/`No`, `T`/`F`) is read the same way, as its
//! stored spelling; one named "on X" or "in X" is also said by X alone ("scholarship
//! students" are `OnScholarship = 'Y'`).

use serde_json::Value;

use super::super::text::{Token, TokenKind, antonym_of, stem};
use super::mention::{Candidates, Mention, Target, pending};
use super::schema::{ColumnInfo, SchemaIndex, TypeClass};

/// Leading name words that make a boolean column a yes/no question, not part of the
/// adjective.
const VERB_PREFIXES: &[&str] = &["is", "has", "was", "are", "can", "did", "does", "had"];

/// Prefixes that negate an English adjective (`unpaid`, `inactive`, `nonbillable`,
/// `disabled` is not one: it has its own meaning).
const NEGATING_PREFIXES: &[&str] = &["non", "un", "in", "im", "ir", "il"];

/// The adjective stems of a boolean column (`is_preferred` → `prefer`, `on_time` → `on
/// time`), or `None` for other columns.
fn adjective(plain: &[String]) -> Option<&[String]> {
    let rest = match plain.split_first() {
        Some((first, rest)) if VERB_PREFIXES.contains(&first.as_str()) && !rest.is_empty() => rest,
        _ => plain,
    };
    (!rest.is_empty()).then_some(rest)
}

/// Links adjectives of boolean columns as `true`/`false` values. Spans right after a
/// grouping word (`by`, `per`) are left to the name linker: they name the column itself.
pub(super) fn booleans(
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
) -> Vec<Mention> {
    let mut columns: Vec<(usize, &[String])> = index
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.class == TypeClass::Boolean)
        .filter_map(|(i, c)| adjective(&c.plain).map(|a| (i, a)))
        .collect();
    // A boolean column described in a short phrase ("Still sold", "Discontinued") is also
    // named by the whole phrase: "products we still sell" are `is_active`; "sold" alone is
    // not.
    columns.extend(
        index
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                c.class == TypeClass::Boolean
                    && !c.phrase.is_empty()
                    && c.phrase.first().is_some_and(|w| w != "whether")
            })
            .map(|(i, c)| (i, c.phrase.as_slice())),
    );
    // A text column whose values are only a yes and a no ("Y"/"N", "Yes"/"No", "T"/"F")
    // is a boolean spelt in text: "students on scholarship" are `OnScholarship = 'Y'`.
    let spelt: Vec<(usize, Value, Option<Value>)> = index
        .columns
        .iter()
        .enumerate()
        .filter_map(|(i, c)| yes_no_spelling(c).map(|(yes, no)| (i, yes, no)))
        .collect();
    columns.extend(
        spelt
            .iter()
            .filter_map(|(i, _, _)| adjective(&index.columns[*i].plain).map(|a| (*i, a))),
    );
    // "scholarship students" are students `OnScholarship = 'Y'`: a yes/no spelt in text
    // and named "on X" or "in X" is also said by X alone, before the noun — unless X is
    // the name of a table or of another column ("scholarships" then are that table's rows).
    let names_something_else = |c: usize, words: &[String]| {
        index.tables.iter().any(|t| t.plain == words)
            || index
                .columns
                .iter()
                .enumerate()
                .any(|(k, other)| k != c && other.plain == words)
    };
    columns.extend(spelt.iter().filter_map(|(i, _, _)| {
        let plain = index.columns[*i].plain.as_slice();
        match plain.split_first() {
            Some((first, rest))
                if matches!(first.as_str(), "on" | "in")
                    && !rest.is_empty()
                    && !names_something_else(*i, rest) =>
            {
                Some((*i, rest))
            }
            _ => None,
        }
    }));
    if columns.is_empty() {
        return Vec::new();
    }
    // The value a column's adjective (or its negative) stands for.
    let value_of = |c: usize, yes: bool| -> Option<Target> {
        match spelt.iter().find(|(i, _, _)| *i == c) {
            Some((_, y, n)) => {
                let v = if yes { Some(y.clone()) } else { n.clone() };
                v.map(|v| Target::known(c, v))
            }
            None => Some(bool_value(c, yes)),
        }
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let free = |k: usize| !used[k] && !taken[k] && tokens[k].kind == TokenKind::Word;
        let names_column = i > 0 && tokens[i - 1].is_any(&["by", "per", "each"]);
        if !free(i) || names_column {
            i += 1;
            continue;
        }
        let mut found: Option<(usize, Candidates)> = None;
        // The adjective itself, up to three words (`on time`).
        for n in (1..=3.min(tokens.len() - i)).rev() {
            if !(i..i + n).all(free) {
                continue;
            }
            let plain: Vec<String> = tokens[i..i + n].iter().map(|t| stem(&t.lower)).collect();
            let cands: Candidates = columns
                .iter()
                .filter(|(_, adj)| *adj == plain.as_slice())
                .filter_map(|(c, _)| {
                    value_of(*c, true).map(|t| (t, 16 + 2 * u32::try_from(n).unwrap_or(0)))
                })
                .collect();
            if !cands.is_empty() {
                found = Some((n, cands));
                break;
            }
        }
        if found.is_none() {
            found = negative(&tokens[i], &columns, &value_of).map(|c| (1, c));
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

/// A negative adjective (`unpaid`, `late`): the columns it is the negation of, as `false`.
fn negative(
    token: &Token,
    columns: &[(usize, &[String])],
    value_of: &dyn Fn(usize, bool) -> Option<Target>,
) -> Option<Candidates> {
    let mut wanted: Vec<Vec<String>> = Vec::new();
    if let Some(phrase) = antonym_of(&token.lower) {
        wanted.push(phrase.split(' ').map(stem).collect());
    }
    for p in NEGATING_PREFIXES {
        if let Some(rest) = token.lower.strip_prefix(p)
            && rest.len() >= 3
        {
            wanted.push(vec![stem(rest.trim_start_matches('-'))]);
        }
        // "available rooms" where the column says `Unavailable`: the adjective without
        // the column's negating prefix is the column being false.
        if token.lower.len() >= 3 && token.lower.chars().all(|c| c.is_ascii_alphabetic()) {
            wanted.push(vec![stem(&format!("{p}{}", token.lower))]);
        }
    }
    let cands: Candidates = columns
        .iter()
        .filter(|(_, adj)| wanted.iter().any(|w| w.as_slice() == *adj))
        .filter_map(|(c, _)| value_of(*c, false).map(|t| (t, 17)))
        .collect();
    (!cands.is_empty()).then_some(cands)
}

/// The stored spellings of yes and no (when it occurs) of a text column whose known values
/// are all of them one yes/no pair, yes among them.
fn yes_no_spelling(column: &ColumnInfo) -> Option<(Value, Option<Value>)> {
    const PAIRS: &[(&str, &str)] = &[("y", "n"), ("yes", "no"), ("t", "f"), ("true", "false")];
    if column.class != TypeClass::Text || !column.exhaustive || column.samples.is_empty() {
        return None;
    }
    let spelt: Vec<(&str, &Value)> = column
        .samples
        .iter()
        .filter_map(|s| s.value.as_str().map(|v| (v, &s.value)))
        .collect();
    if spelt.len() != column.samples.len() {
        return None;
    }
    PAIRS.iter().find_map(|(yes, no)| {
        let all = spelt
            .iter()
            .all(|(v, _)| v.eq_ignore_ascii_case(yes) || v.eq_ignore_ascii_case(no));
        let find = |w: &str| {
            spelt
                .iter()
                .find(|(v, _)| v.eq_ignore_ascii_case(w))
                .map(|(_, value)| (*value).clone())
        };
        match (all, find(yes)) {
            (true, Some(y)) => Some((y, find(no))),
            _ => None,
        }
    })
}

fn bool_value(column: usize, value: bool) -> Target {
    Target::known(column, Value::Bool(value))
}
