//! "female students", "male instructors": a gender word is a value of a sex or gender
//! column, spelt as that column's known values spell it (`F`, `Female`, `female`, `W`…).
//! Only a known value is used: a column whose samples spell neither way reads nothing.
//! A question that names both genders ("for male and female students") asks about both,
//! not a filter, and reads nothing either.

use serde_json::Value;

use super::super::text::{Token, TokenKind};
use super::mention::{Candidates, Mention, Target, pending};
use super::schema::{SchemaIndex, TypeClass};

const FEMALE: &[&str] = &["female", "females", "woman", "women", "girl", "girls"];
const MALE: &[&str] = &["male", "males", "man", "men", "boy", "boys"];

/// How a column may spell each gender (lower case).
const FEMALE_VALUES: &[&str] = &["f", "female", "woman", "w"];
const MALE_VALUES: &[&str] = &["m", "male", "man"];

/// Gender words as values of a sex or gender column (one candidate per column).
pub(super) fn genders(
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    taken: &mut [bool],
) -> Vec<Mention> {
    let is =
        |t: &Token, words: &[&str]| t.kind == TokenKind::Word && words.contains(&t.lower.as_str());
    let both = tokens.iter().any(|t| is(t, FEMALE)) && tokens.iter().any(|t| is(t, MALE));
    if both {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if used[i] || taken[i] {
            continue;
        }
        let spellings = if is(t, FEMALE) {
            FEMALE_VALUES
        } else if is(t, MALE) {
            MALE_VALUES
        } else {
            continue;
        };
        let mut cands: Candidates = Vec::new();
        for (c, col) in index.columns.iter().enumerate() {
            let name = col.name.to_lowercase();
            if col.class != TypeClass::Text || !(name.contains("sex") || name.contains("gender")) {
                continue;
            }
            let known = col.samples.iter().find_map(|s| {
                let v = s.value.as_str()?;
                spellings
                    .contains(&v.trim().to_lowercase().as_str())
                    .then(|| v.to_owned())
            });
            if let Some(v) = known {
                cands.push((Target::known(c, Value::String(v)), 6));
            }
        }
        if cands.is_empty() {
            continue;
        }
        taken[i] = true;
        out.push(pending(i, i + 1, cands));
    }
    out
}
