//! "the ids of all trips", "the part name and id", "the student id of the oldest
//! student": the word "id" alone names the key of the table it belongs to, whatever the
//! key is called (`trip.id`, `Parts.part_id`, `Student.StuID`). Which table: the one named
//! right before it ("student id"), else the one it is "of" or "for" ("ids of all trips"),
//! else the table of the column it is listed with ("the name and id of …", "the part
//! name and id"). Only a table with a one-column primary key has such a key; elsewhere
//! the word stays unlinked.

use super::mention::{Mention, Target, WHOLE_NAME_SCORE};
use super::schema::{SchemaIndex, TypeClass};
use crate::text::Token;

/// The words that name a key.
const KEY_WORDS: &[&str] = &["id", "ids"];

/// Words between "ids of" and the table ("the ids of all the trips").
const DETERMINERS: &[&str] = &[
    "the", "all", "each", "every", "a", "an", "its", "their", "those", "these",
];

/// Links each unlinked key word to the key of its table (see the module).
pub(super) fn key_words(
    mentions: &mut Vec<Mention>,
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
) {
    for i in 0..tokens.len() {
        if !tokens[i].is_any(KEY_WORDS)
            || used.get(i).copied().unwrap_or(false)
            || mentions.iter().any(|m| m.start <= i && i < m.end)
        {
            continue;
        }
        // "student id": the table right before it, one mention with it.
        if let Some(k) = mentions.iter().position(|m| m.end == i)
            && let Target::Table(t) = mentions[k].target
        {
            if let Some(key) = key_of(index, t) {
                let m = &mut mentions[k];
                m.end = i + 1;
                m.target = Target::Column(key);
                m.alternatives.clear();
                m.guess = None;
            }
            continue;
        }
        let Some(t) = table_of(mentions, tokens, index, i) else {
            continue;
        };
        let Some(key) = key_of(index, t) else {
            continue;
        };
        let at = mentions.partition_point(|m| m.start < i);
        mentions.insert(
            at,
            Mention {
                start: i,
                end: i + 1,
                target: Target::Column(key),
                score: WHOLE_NAME_SCORE,
                alternatives: Vec::new(),
                guess: None,
            },
        );
    }
}

/// The table the key word at `i` belongs to, when it is not named right before it.
fn table_of(
    mentions: &[Mention],
    tokens: &[Token],
    index: &SchemaIndex,
    i: usize,
) -> Option<usize> {
    // "ids of all trips", "id for each student".
    let mut at = i + 1;
    if tokens.get(at).is_some_and(|t| t.is_any(&["of", "for"])) {
        at += 1;
        while tokens.get(at).is_some_and(|t| t.is_any(DETERMINERS)) {
            at += 1;
        }
        // "the id of the most recent order", "the ids of the two longest songs": a count
        // and a superlative may stand before the table.
        let mut skipped = 0;
        while skipped < 3 && tokens.get(at).is_some_and(ranks_rows) {
            // "most expensive": the adjective after "most" or "least" ranks too.
            let degree = tokens[at].is_any(&["most", "least"]);
            at += 1;
            skipped += 1;
            if degree && !mentions.iter().any(|m| m.start == at) && at + 1 < tokens.len() {
                at += 1;
            }
        }
        if let Some(m) = mentions.iter().find(|m| m.start == at) {
            return Some(m.target.table(index));
        }
    }
    // "the name and id", "id and salary", "the account name, id and …": the column it
    // is listed with (commas are not tokens).
    let listed = |m: &&Mention| {
        matches!(m.target, Target::Column(_))
            && (m.end == i
                || i + 1 == m.start
                || (m.end + 1 == i && tokens[m.end].is("and"))
                || (i + 2 == m.start && tokens[i + 1].is("and")))
    };
    mentions.iter().find(listed).map(|m| m.target.table(index))
}

/// Words that count or rank the rows named after them: a number ("two", "3"), "most",
/// "least", "top", "recent", "first", "last", or a superlative in "-est" ("longest",
/// "oldest").
fn ranks_rows(t: &Token) -> bool {
    const WORDS: &[&str] = &[
        "most", "least", "top", "recent", "first", "last", "two", "three", "four", "five", "ten",
    ];
    t.kind == crate::text::TokenKind::Number
        || t.is_any(WORDS)
        || (t.lower.len() > 5 && t.lower.ends_with("est") && !t.lower.ends_with("rest"))
}

/// The one-column primary key of table `t`, when it is an identifier: a number, or a
/// name with "id" in it (not a key that is the table's name, such as `song_name`).
fn key_of(index: &SchemaIndex, t: usize) -> Option<usize> {
    let key = index.single_key(t)?;
    let col = &index.columns[key];
    (col.class == TypeClass::Numeric || col.name.to_lowercase().contains("id")).then_some(key)
}
