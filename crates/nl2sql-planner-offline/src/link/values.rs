//! Value linking: question spans matched against the known values of text columns
//! (sampled, or listed in a description): whole values (`Offline`, `Widget Beta`),
//! capitalised names shaped like the known ones, single words inside multi-word values
//! (`LIKE`), and unknown capitalised place names after "in" on a place column whose samples
//! are incomplete.

use serde_json::Value;

use super::super::text::{
    Token, TokenKind, canonical, is_function_word, is_stop_word, singular, source_text, stem,
};
use super::{Candidates, Mention, Sample, SchemaIndex, Target, pending};

/// Capitalised phrases (`Widget Beta`, `WH-Texas`) that share a word with the known values
/// of a column whose samples are not exhaustive: the phrase itself is the value.
pub(super) fn proper_nouns(
    text: &str,
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
) -> Vec<Mention> {
    let mut out = Vec::new();
    let capital = |t: &Token| {
        t.kind == TokenKind::Word
            && t.raw.chars().next().is_some_and(char::is_uppercase)
            && !is_function_word(&t.lower)
    };
    let mut i = 1;
    while i < tokens.len() {
        if used[i] || taken[i] || !capital(&tokens[i]) {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < tokens.len()
            && !used[j]
            && !taken[j]
            && (capital(&tokens[j]) || tokens[j].kind == TokenKind::Number)
            && tokens[j].pos.0 <= tokens[j - 1].pos.1 + 1
        {
            j += 1;
        }
        let words: Vec<&str> = tokens[i..j].iter().map(|t| t.lower.as_str()).collect();
        let phrase = source_text(text, tokens, i, j);
        // "Northwind Automotive Inc.": the final period belongs to the name when the
        // known values of that shape end with one.
        let dot_after = text.chars().nth(tokens[j - 1].pos.1) == Some('.');
        let mut cands: Candidates = Vec::new();
        if j - i >= 2 {
            for (c, col) in index.columns.iter().enumerate() {
                let shaped: Vec<&Sample> = col
                    .samples
                    .iter()
                    .filter(|s| {
                        s.words.len() == words.len()
                            && s.words.iter().any(|w| words.contains(&w.as_str()))
                    })
                    .collect();
                if !shaped.is_empty() && !col.exhaustive {
                    let dotted = dot_after
                        && shaped
                            .iter()
                            .all(|s| s.value.as_str().is_some_and(|v| v.ends_with('.')));
                    let value = if dotted {
                        format!("{phrase}.")
                    } else {
                        phrase.clone()
                    };
                    cands.push((
                        Target::Value {
                            column: c,
                            values: vec![Value::String(value)],
                            exact: true,
                            word: String::new(),
                        },
                        14,
                    ));
                }
            }
        }
        if cands.is_empty() {
            i = j;
            continue;
        }
        taken[i..j].iter_mut().for_each(|t| *t = true);
        out.push(pending(i, j, cands));
        i = j;
    }
    out
}

pub(super) fn values_exact(
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
) -> Vec<Mention> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let mut found: Option<(usize, Candidates)> = None;
        for n in (1..=6.min(tokens.len() - i)).rev() {
            let span = &tokens[i..i + n];
            if span
                .iter()
                .zip(&used[i..i + n])
                .any(|(t, u)| *u && t.kind != TokenKind::Quoted)
            {
                continue;
            }
            if n == 1 && (!single_value_word(&span[0], i) || names_column(tokens, i, index)) {
                continue;
            }
            let words: Vec<&str> = if n == 1 && span[0].kind == TokenKind::Quoted {
                Vec::new()
            } else {
                span.iter().map(|t| t.lower.as_str()).collect()
            };
            // A plural that is not itself the name of a table or column.
            let plural_of_value = n == 1
                && span[0].kind == TokenKind::Word
                && span[0].lower.ends_with('s')
                && singular(&span[0].lower) != span[0].lower
                && !names_schema(&span[0], index);
            let mut cands: Candidates = Vec::new();
            for (c, col) in index.columns.iter().enumerate() {
                let hits: Vec<Value> = col
                    .samples
                    .iter()
                    .filter(|s| {
                        if words.is_empty() {
                            s.value
                                .as_str()
                                .is_some_and(|v| v.to_lowercase() == span[0].lower)
                        } else if s.words.iter().map(String::as_str).eq(words.iter().copied()) {
                            true
                        } else {
                            // "sold through distributors": the plural of a one-word value.
                            n == 1
                                && plural_of_value
                                && s.words.len() == 1
                                && singular(words[0]) == s.words[0]
                        }
                    })
                    .map(|s| s.value.clone())
                    .collect();
                if let Some(v) = hits.first() {
                    cands.push((
                        Target::Value {
                            column: c,
                            values: vec![v.clone()],
                            exact: true,
                            word: String::new(),
                        },
                        30 + u32::try_from(n).unwrap_or(0),
                    ));
                }
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

/// True when the word at `i` and its next or previous one are two consecutive words of a
/// column name: "shipped from" names `ship_from_factory_code`, not the status value
/// `Shipped`.
fn names_column(tokens: &[Token], i: usize, index: &SchemaIndex) -> bool {
    let pair_names = |a: Option<&Token>, b: Option<&Token>| {
        let (Some(a), Some(b)) = (a, b) else {
            return false;
        };
        if a.kind != TokenKind::Word || b.kind != TokenKind::Word {
            return false;
        }
        let pair = [stem(&a.lower), stem(&b.lower)];
        index
            .columns
            .iter()
            .any(|c| c.plain.windows(2).any(|w| w == pair))
    };
    // "shipped from" (`ship_from_…`) and "quantity received" (`quantity_received`).
    pair_names(tokens.get(i), tokens.get(i + 1))
        || (i > 0 && pair_names(tokens.get(i - 1), tokens.get(i)))
}

/// True when a word is a word of a table or column name.
fn names_schema(t: &Token, index: &SchemaIndex) -> bool {
    index.tables.iter().any(|x| x.stems.contains(&t.stem))
        || index.columns.iter().any(|x| x.stems.contains(&t.stem))
}

/// Whether one token alone may be a whole value: quoted, or a content word (a stop word
/// only when capitalised inside the sentence).
fn single_value_word(t: &Token, pos: usize) -> bool {
    match t.kind {
        TokenKind::Quoted => true,
        TokenKind::Word => {
            !is_function_word(&t.lower)
                && (!is_stop_word(&t.lower)
                    || (pos > 0 && t.raw.chars().next().is_some_and(char::is_uppercase)))
        }
        TokenKind::Number | TokenKind::Date => false,
    }
}

pub(super) fn values_partial(
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
) -> Vec<Mention> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if used[i] || taken[i] || t.kind != TokenKind::Word || is_stop_word(&t.lower) {
            continue;
        }
        if t.lower.len() < 3 {
            continue;
        }
        let mut cands: Candidates = Vec::new();
        for (c, col) in index.columns.iter().enumerate() {
            let hits: Vec<Value> = col
                .samples
                .iter()
                .filter(|s| {
                    s.words.len() > 1
                        && s.words
                            .iter()
                            .any(|w| *w == t.lower || canonical(w) == t.stem)
                })
                .map(|s| s.value.clone())
                .collect();
            if !hits.is_empty() {
                cands.push((
                    Target::Value {
                        column: c,
                        values: hits,
                        exact: false,
                        word: t.raw.clone(),
                    },
                    12,
                ));
            }
        }
        if !cands.is_empty() {
            taken[i] = true;
            out.push(pending(i, i + 1, cands));
        }
    }
    out
}

/// Words of column names that hold places, coarsest first: a capitalised word after "in"
/// that no known value matches is taken as a value of the first such column of a table.
const PLACE_WORDS: &[&str] = &[
    "country", "nation", "region", "state", "province", "city", "town", "location",
];

/// "customers based in Japan": a capitalised word after `in` that links to nothing
/// is an equality value of a place column (`country`, `city`, …) whose samples are not
/// all its values (only a few values per column are sampled, so a real value is often
/// missing). One candidate per table, the coarsest place first; ties between tables are
/// settled by context like any other.
pub(super) fn place_names(
    text: &str,
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
) -> Vec<Mention> {
    let mut out = Vec::new();
    for i in 1..tokens.len() {
        let t = &tokens[i];
        let capital = t.kind == TokenKind::Word
            && t.raw.chars().next().is_some_and(char::is_uppercase)
            && t.raw.chars().skip(1).any(char::is_lowercase)
            && !is_function_word(&t.lower)
            && !is_stop_word(&t.lower);
        if !capital || used[i] || taken[i] || !tokens[i - 1].is("in") {
            continue;
        }
        let mut j = i + 1;
        while j < tokens.len()
            && !used[j]
            && !taken[j]
            && tokens[j].kind == TokenKind::Word
            && tokens[j].raw.chars().next().is_some_and(char::is_uppercase)
        {
            j += 1;
        }
        let phrase = source_text(text, tokens, i, j);
        let mut cands: Candidates = Vec::new();
        for table in &index.tables {
            let place = PLACE_WORDS.iter().find_map(|w| {
                table.columns.iter().copied().find(|c| {
                    let col = &index.columns[*c];
                    col.class == super::TypeClass::Text
                        && !col.exhaustive
                        && col.plain.last().is_some_and(|p| p == w)
                })
            });
            if let Some(c) = place {
                cands.push((
                    Target::Value {
                        column: c,
                        values: vec![Value::String(phrase.clone())],
                        exact: true,
                        word: String::new(),
                    },
                    5,
                ));
            }
        }
        if !cands.is_empty() {
            taken[i..j].iter_mut().for_each(|t| *t = true);
            out.push(pending(i, j, cands));
        }
    }
    out
}

/// "customers in the Marine industry", "the Acme supplier": capitalised words right
/// before the name of a text column (or of a table whose label is a text column) that no
/// known value matches are a value of that column, when its samples are not all its
/// values (only a few values per column are sampled).
pub(super) fn named_values(
    text: &str,
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
    mentions: &[Mention],
) -> Vec<Mention> {
    let mut out = Vec::new();
    for m in mentions {
        let Target::Column(c) = m.target else {
            continue;
        };
        let col = &index.columns[c];
        if col.class != super::TypeClass::Text || col.is_key || col.exhaustive {
            continue;
        }
        let capital = |k: usize| {
            let t = &tokens[k];
            t.kind == TokenKind::Word
                && !used[k]
                && !taken[k]
                && t.raw.chars().next().is_some_and(char::is_uppercase)
                && !is_function_word(&t.lower)
                && !is_stop_word(&t.lower)
        };
        let mut i = m.start;
        while i > 1 && capital(i - 1) && tokens[i - 1].pos.1 + 1 >= tokens[i].pos.0 {
            i -= 1;
        }
        if i == m.start {
            continue;
        }
        let phrase = source_text(text, tokens, i, m.start);
        taken[i..m.start].iter_mut().for_each(|t| *t = true);
        out.push(pending(
            i,
            m.start,
            vec![(
                Target::Value {
                    column: c,
                    values: vec![Value::String(phrase)],
                    exact: true,
                    word: String::new(),
                },
                5,
            )],
        ));
    }
    out
}

/// Particles of phrasal verbs whose compound is a noun ("break down" → "breakdown").
const PARTICLES: &[&str] = &["down", "up", "over", "out", "off", "in", "back"];

/// "when a machine breaks down", "lines that changed over": a verb and its particle that
/// together spell a one-word known value ("Breakdown", "Changeover") are that value.
pub(super) fn phrasal_values(
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
) -> Vec<Mention> {
    let mut out = Vec::new();
    for i in 0..tokens.len().saturating_sub(1) {
        let (verb, particle) = (&tokens[i], &tokens[i + 1]);
        let free = |k: usize| !used[k] && !taken[k] && tokens[k].kind == TokenKind::Word;
        if !free(i) || !free(i + 1) || !PARTICLES.contains(&particle.lower.as_str()) {
            continue;
        }
        let v = verb.lower.as_str();
        let bases: Vec<&str> = std::iter::once(v)
            .chain(
                ["s", "es", "ed", "d", "ing"]
                    .iter()
                    .filter_map(|e| v.strip_suffix(e)),
            )
            .filter(|b| b.len() >= 3)
            .collect();
        let mut cands: Candidates = Vec::new();
        for (c, col) in index.columns.iter().enumerate() {
            let values: Vec<Value> = col
                .samples
                .iter()
                .filter(|s| {
                    s.words.len() == 1
                        && bases
                            .iter()
                            .any(|b| s.words[0] == format!("{b}{}", particle.lower))
                })
                .map(|s| s.value.clone())
                .collect();
            if !values.is_empty() {
                cands.push((
                    Target::Value {
                        column: c,
                        values,
                        exact: true,
                        word: String::new(),
                    },
                    10,
                ));
            }
        }
        if !cands.is_empty() {
            taken[i..i + 2].iter_mut().for_each(|t| *t = true);
            out.push(pending(i, i + 2, cands));
        }
    }
    out
}
