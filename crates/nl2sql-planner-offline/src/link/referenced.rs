//! "the description of the transaction type with code PUR": `Transactions` also holds a
//! `transaction_type_code` column (a foreign key to `Ref_Transaction_Types`), and a word
//! linked to it rather than to the referenced key would join every transaction of the
//! type, once per transaction. A foreign key column holds the values of the key it refers
//! to, so when nothing else in the question names its table and the referenced table is
//! named, the word is read as the referenced key: same values, no join that repeats rows.

use super::mention::{Mention, Target};
use super::schema::SchemaIndex;
use crate::text::Token;

/// Moves each column or value mention of a foreign key column to the key it refers to,
/// where the referencing table is named by no other mention and the referenced table is.
pub(super) fn to_referenced_keys(mentions: &mut [Mention], tokens: &[Token], index: &SchemaIndex) {
    let valued: Vec<usize> = mentions
        .iter()
        .filter_map(|m| match m.target {
            Target::Value { column, .. } => Some(column),
            _ => None,
        })
        .collect();
    for k in 0..mentions.len() {
        let Some(c) = mentions[k].column() else {
            continue;
        };
        let Some(key) = referenced_key(index, c) else {
            continue;
        };
        let (own, referenced) = (index.columns[c].table, index.columns[key].table);
        let others = || {
            mentions
                .iter()
                .enumerate()
                .filter(move |(j, _)| *j != k)
                .map(|(_, m)| m)
        };
        // Another word about the referencing table (a table name, another column of it)
        // asks for its rows; only other foreign key mentions into the same table do not.
        let own_named = others().any(|m| {
            m.target.table(index) == own
                && m.column()
                    .and_then(|o| referenced_key(index, o))
                    .is_none_or(|o| index.columns[o].table != referenced)
        });
        // The referenced table's own columns or values are named ("the description of
        // …", "the document type Paper"): a table's name alone is not enough.
        let referenced_named =
            others().any(|m| m.column().is_some() && m.target.table(index) == referenced);
        // A value is the same value either way; a column after "have" asks for rows,
        // unless a value of it follows ("the type with code 'PUR'").
        let asks_for_rows = matches!(mentions[k].target, Target::Column(_))
            && after_have(tokens, mentions[k].start)
            && !valued.contains(&c);
        if own_named || !referenced_named || asks_for_rows {
            continue;
        }
        let m = &mut mentions[k];
        match &mut m.target {
            Target::Value { column, .. } => *column = key,
            target => *target = Target::Column(key),
        }
        if m.guess.as_ref().is_some_and(|g| *g == m.target) {
            m.guess = None;
        }
    }
}

/// "students who have class senator votes": the rows of the referencing table are what
/// the words ask for (within two words after "have", "has" or "with").
fn after_have(tokens: &[Token], start: usize) -> bool {
    tokens[start.saturating_sub(2)..start]
        .iter()
        .any(|t| t.is_any(&["have", "has", "had", "with", "without"]))
}

/// The one column `c` refers to, when `c` is the whole of a one-column foreign key into
/// another table, and the only key of its table into that table (a table of friends
/// refers to people twice, and each key is a different relation).
pub(super) fn referenced_key(index: &SchemaIndex, c: usize) -> Option<usize> {
    let col = &index.columns[c];
    let mut keys = index.foreign_keys.iter().filter(|f| {
        f.from == col.table
            && f.to != col.table
            && f.from_columns.len() == 1
            && f.to_columns.len() == 1
            && f.from_columns[0].eq_ignore_ascii_case(&col.name)
    });
    let fk = keys.next()?;
    if keys.next().is_some()
        || index
            .foreign_keys
            .iter()
            .filter(|f| f.from == fk.from && f.to == fk.to)
            .count()
            > 1
    {
        return None;
    }
    index.tables[fk.to].columns.iter().copied().find(|&o| {
        index.columns[o]
            .name
            .eq_ignore_ascii_case(&fk.to_columns[0])
    })
}
