//! Country names and their demonyms: "German suppliers" are the suppliers whose country
//! is Germany, and "Italy", "from Japan" name a country wherever they stand. A small
//! built-in table (English names, the usual short forms); the value used is the form the
//! column's known values spell (`USA` or `United States`), else the country's usual
//! English name when the column's values are only sampled.

use serde_json::Value;

use super::super::text::{Token, TokenKind};
use super::mention::{Candidates, Mention, Target, pending};
use super::schema::{SchemaIndex, TypeClass};

/// A country: its usual English name, other spellings of it, and its demonyms.
struct Country {
    name: &'static str,
    aliases: &'static [&'static str],
    demonyms: &'static [&'static str],
}

const fn c(
    name: &'static str,
    aliases: &'static [&'static str],
    demonyms: &'static [&'static str],
) -> Country {
    Country {
        name,
        aliases,
        demonyms,
    }
}

/// The built-in countries.
const COUNTRIES: &[Country] = &[
    c("Argentina", &[], &["Argentine", "Argentinian"]),
    c("Australia", &[], &["Australian"]),
    c("Austria", &[], &["Austrian"]),
    c("Belgium", &[], &["Belgian"]),
    c("Brazil", &[], &["Brazilian"]),
    c("Canada", &[], &["Canadian"]),
    c("Chile", &[], &["Chilean"]),
    c("China", &["PRC"], &["Chinese"]),
    c("Colombia", &[], &["Colombian"]),
    c("Czech Republic", &["Czechia"], &["Czech"]),
    c("Denmark", &[], &["Danish"]),
    c("Egypt", &[], &["Egyptian"]),
    c("Finland", &[], &["Finnish"]),
    c("France", &[], &["French"]),
    c("Germany", &["Deutschland"], &["German"]),
    c("Greece", &[], &["Greek"]),
    c("Hungary", &[], &["Hungarian"]),
    c("India", &[], &["Indian"]),
    c("Indonesia", &[], &["Indonesian"]),
    c("Ireland", &[], &["Irish"]),
    c("Israel", &[], &["Israeli"]),
    c("Italy", &[], &["Italian"]),
    c("Japan", &[], &["Japanese"]),
    c("Malaysia", &[], &["Malaysian"]),
    c("Mexico", &[], &["Mexican"]),
    c("Netherlands", &["The Netherlands", "Holland"], &["Dutch"]),
    c("New Zealand", &[], &[]),
    c("Nigeria", &[], &["Nigerian"]),
    c("Norway", &[], &["Norwegian"]),
    c("Peru", &[], &["Peruvian"]),
    c("Philippines", &[], &["Filipino", "Philippine"]),
    c("Poland", &[], &["Polish"]),
    c("Portugal", &[], &["Portuguese"]),
    c("Romania", &[], &["Romanian"]),
    c("Saudi Arabia", &[], &["Saudi"]),
    c("Singapore", &[], &["Singaporean"]),
    c("South Africa", &[], &[]),
    c(
        "South Korea",
        &["Korea", "Republic of Korea"],
        &["Korean", "South Korean"],
    ),
    c("Spain", &[], &["Spanish"]),
    c("Sweden", &[], &["Swedish"]),
    c("Switzerland", &[], &["Swiss"]),
    c("Taiwan", &[], &["Taiwanese"]),
    c("Thailand", &[], &["Thai"]),
    c("Turkey", &["Türkiye", "Turkiye"], &["Turkish"]),
    c("Ukraine", &[], &["Ukrainian"]),
    c("United Arab Emirates", &["UAE"], &["Emirati"]),
    c(
        "United Kingdom",
        &["UK", "Great Britain", "Britain"],
        &["British"],
    ),
    c(
        "United States",
        &["USA", "US", "United States of America"],
        &["American"],
    ),
    c("Vietnam", &["Viet Nam"], &["Vietnamese"]),
];

/// Words that end a column name for a country.
const COUNTRY_WORDS: &[&str] = &["country", "nation"];

/// The country a capitalised phrase of `words` (lower case) names, as a name, an alias or
/// a demonym, with the number of words it spans.
fn country_at(tokens: &[Token], i: usize) -> Option<(&'static Country, usize)> {
    let capital = |t: &Token| {
        t.kind == TokenKind::Word && t.raw.chars().next().is_some_and(char::is_uppercase)
    };
    if !capital(&tokens[i]) {
        return None;
    }
    let spans = |s: &str| -> Option<usize> {
        let words: Vec<String> = s.split(' ').map(str::to_lowercase).collect();
        let n = words.len();
        (i + n <= tokens.len()
            && tokens[i..i + n]
                .iter()
                .zip(&words)
                .all(|(t, w)| t.lower == *w && t.kind == TokenKind::Word))
        .then_some(n)
    };
    COUNTRIES
        .iter()
        .filter_map(|c| {
            std::iter::once(c.name)
                .chain(c.aliases.iter().copied())
                .chain(c.demonyms.iter().copied())
                // "US" only in capitals: "us" is a pronoun.
                .filter(|s| *s != "US" || tokens[i].raw == "US")
                .filter_map(spans)
                .max()
                .map(|n| (c, n))
        })
        .max_by_key(|(_, n)| *n)
}

/// True when `tokens[i]` starts a country's name, alias or demonym ("Swiss").
pub(crate) fn names_country(tokens: &[Token], i: usize) -> bool {
    country_at(tokens, i).is_some()
}

/// The value of `country` in column `c`: the known value that spells it, else (when the
/// known values are only a sample) its usual name.
fn value_in(country: &Country, c: usize, index: &SchemaIndex) -> Option<String> {
    let col = &index.columns[c];
    let known = col.samples.iter().find_map(|s| {
        let v = s.value.as_str()?;
        std::iter::once(country.name)
            .chain(country.aliases.iter().copied())
            .any(|n| n.eq_ignore_ascii_case(v))
            .then(|| v.to_owned())
    });
    known.or_else(|| (!col.exhaustive).then(|| country.name.to_owned()))
}

/// "German suppliers", "suppliers from Italy", "Japanese customers": a country's name or
/// demonym is an equality value of a country column (one candidate per table; ties
/// settled by context like any other).
pub(super) fn countries(
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
) -> Vec<Mention> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if used[i] || taken[i] {
            i += 1;
            continue;
        }
        let Some((country, n)) = country_at(tokens, i) else {
            i += 1;
            continue;
        };
        if (i..i + n).any(|k| used[k] || taken[k]) {
            i += 1;
            continue;
        }
        let mut cands: Candidates = Vec::new();
        for table in &index.tables {
            let column = table.columns.iter().copied().find(|c| {
                let col = &index.columns[*c];
                col.class == TypeClass::Text
                    && col
                        .plain
                        .last()
                        .is_some_and(|p| COUNTRY_WORDS.contains(&p.as_str()))
            });
            if let Some(c) = column
                && let Some(v) = value_in(country, c, index)
            {
                cands.push((Target::known(c, Value::String(v)), 6));
            }
        }
        if cands.is_empty() {
            i += 1;
            continue;
        }
        taken[i..i + n].iter_mut().for_each(|t| *t = true);
        out.push(pending(i, i + n, cands));
        i += n;
    }
    out
}
