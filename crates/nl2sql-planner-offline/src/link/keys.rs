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
        if key_with_number(mentions, tokens, used, index, i) {
            continue;
        }
        let Some(t) = table_of(mentions, tokens, index, i) else {
            continue;
        };
        let Some(key) = key_of(index, t) else {
            continue;
        };
        let at = mentions.partition_point(|m| m.start < i);
        mentions.insert(at, key_at(i, key));
    }
}

/// The key word at `i` read as the key column `key`.
fn key_at(i: usize, key: usize) -> Mention {
    Mention {
        start: i,
        end: i + 1,
        target: Target::Column(key),
        score: WHOLE_NAME_SCORE,
        alternatives: Vec::new(),
        guess: None,
    }
}

/// Words between a table and the key word that picks one of its rows ("the document with
/// id 3", "the student whose id is 171", "the aircraft that has an id of 12").
const PICKING: &[&str] = &[
    "with", "whose", "that", "which", "has", "have", "having", "the", "an", "a",
];

/// Comparison words a key word may be followed by ("whose id is between 10 and 20").
const COMPARING: &[&str] = &[
    "between", "greater", "more", "less", "fewer", "above", "below", "over", "under", "larger",
    "smaller", "higher", "lower", "at",
];

/// Words between the key word and its number ("id is 171", "an id of 12").
const KEY_BINDERS: &[&str] = &["is", "of", "equal", "equals", "to", "number"];

/// "the document with id 3", "the student whose id is 171": the key word at `i` after a
/// table (over [`PICKING`] words, "with" or "whose" among them) and before a number the
/// question reads nothing else into picks the row of that table whose key is the number:
/// a mention of the key, and one of the number as its value. Before a comparison the cues
/// read ("whose id is between 10 and 20") only the key is mentioned; the comparison binds
/// to it. False (nothing added) when the words do not read that way or the table has no
/// one-column numeric key.
fn key_with_number(
    mentions: &mut Vec<Mention>,
    tokens: &[Token],
    used: &[bool],
    index: &SchemaIndex,
    i: usize,
) -> bool {
    let mut s = i;
    while s > 0 && i - s < 3 && tokens[s - 1].is_any(PICKING) {
        s -= 1;
    }
    if !tokens[s..i]
        .iter()
        .any(|t| t.is_any(&["with", "whose", "has", "having"]))
    {
        return false;
    }
    // The table, or a column said of it that ends with its name ("the detail of vehicle
    // with id 1" read as `Vehicles.vehicle_details`).
    let Some(t) = mentions
        .iter()
        .find(|m| m.end == s)
        .and_then(|m| match m.target {
            Target::Table(t) => Some(t),
            Target::Column(c) => {
                let t = index.columns[c].table;
                index.tables[t]
                    .stems
                    .contains(&tokens[m.end - 1].stem)
                    .then_some(t)
            }
            Target::Value { .. } => None,
        })
    else {
        return false;
    };
    let Some(key) = key_of(index, t) else {
        return false;
    };
    if index.columns[key].class != TypeClass::Numeric {
        return false;
    }
    let mut j = i + 1;
    while j - i <= 2 && tokens.get(j).is_some_and(|t| t.is_any(KEY_BINDERS)) {
        j += 1;
    }
    let free = |k: usize| {
        !used.get(k).copied().unwrap_or(true) && !mentions.iter().any(|m| m.start <= k && k < m.end)
    };
    let at = mentions.partition_point(|m| m.start < i);
    let key_mention = key_at(i, key);
    // "the customers whose id is between 10 and 20": a comparison the cues read follows;
    // it compares the key.
    if tokens.get(j).is_some_and(|t| t.is_any(COMPARING)) && used.get(j).copied().unwrap_or(false) {
        mentions.insert(at, key_mention);
        return true;
    }
    let Some(value) = tokens
        .get(j)
        .and_then(Token::number)
        .filter(|_| (i + 1..=j).all(free))
        .and_then(super::values::number_json)
    else {
        return false;
    };
    let value_mention = Mention {
        start: i + 1,
        end: j + 1,
        target: Target::known(key, value),
        // As a number after any other column's words scores ("bike id 636").
        score: 20,
        alternatives: Vec::new(),
        guess: None,
    };
    mentions.splice(at..at, [key_mention, value_mention]);
    true
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
