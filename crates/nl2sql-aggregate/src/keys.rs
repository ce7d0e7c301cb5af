//! Hash tables over key columns, for the join and compare combines and the group-by post
//! operation.
//!
//! Keys are hashed in one of two forms: a single integer column is hashed as `i64` values
//! read straight from the array (the common case: ids), anything else as the row format
//! of `arrow-row` (one byte string per row, equal exactly when the key values are equal).
//! Null keys never match in a join and form one group of their own in a group-by, as
//! before. Tables are `hashbrown` maps with its default (foldhash) hasher; rows with the
//! same key are chained through one `Vec<u32>` (`next`), so no key owns an allocation.

use std::hash::Hash;

use arrow::array::{Array, ArrayRef, AsArray as _};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Int64Type};
use arrow::error::ArrowError;
use arrow::row::{RowConverter, Rows, SortField};
use hashbrown::HashMap;

/// The end of a chain.
pub(crate) const NONE: u32 = u32::MAX;

fn too_large() -> ArrowError {
    ArrowError::InvalidArgumentError("table too large".to_owned())
}

/// A row count as `u32` (row positions are `u32` in the index arrays).
pub(crate) fn rows_u32(n: usize) -> Result<u32, ArrowError> {
    u32::try_from(n)
        .ok()
        .filter(|n| *n < NONE)
        .ok_or_else(too_large)
}

/// Whether a key column can be read as `i64` without changing which values are equal.
fn widens_to_i64(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
    )
}

/// Key columns in the form they are hashed in.
pub(crate) enum KeyColumns {
    /// One integer column, widened to `i64`.
    Int(ArrayRef),
    /// The row format of all the columns, and which rows have a null key (empty unless
    /// asked for: only a join, which leaves null keys out, reads it).
    Rows(Rows, Vec<bool>),
}

impl KeyColumns {
    /// The hashable form of the key `columns` of each side (each side's columns of the
    /// same types, in the same order): the same form for all sides, so keys compare.
    /// `null_rows`: also flag the rows whose key has a null (for a join).
    pub(crate) fn of_sides(
        sides: &[&[ArrayRef]],
        null_rows: bool,
    ) -> Result<Vec<KeyColumns>, ArrowError> {
        let Some(first) = sides.first() else {
            return Ok(Vec::new());
        };
        if first.len() == 1 && sides.iter().all(|s| widens_to_i64(s[0].data_type())) {
            return sides
                .iter()
                .map(|s| Ok(KeyColumns::Int(cast(&s[0], &DataType::Int64)?)))
                .collect();
        }
        let converter = RowConverter::new(
            first
                .iter()
                .map(|c| SortField::new(c.data_type().clone()))
                .collect(),
        )?;
        sides
            .iter()
            .map(|cols| {
                let rows = converter.convert_columns(cols)?;
                let n = cols.first().map_or(0, |c| c.len());
                let nulls = if null_rows {
                    (0..n).map(|i| cols.iter().any(|c| c.is_null(i))).collect()
                } else {
                    Vec::new()
                };
                Ok(KeyColumns::Rows(rows, nulls))
            })
            .collect()
    }
}

/// Rows by key: `head[key]` is the first row with that key, `next[row]` the next row with
/// the same key (in row order), [`NONE`] at the end. Rows with a null key are left out.
pub(crate) struct Chains<K> {
    head: HashMap<K, u32>,
    next: Vec<u32>,
}

impl<K: Hash + Eq> Chains<K> {
    /// The chains of `keys` (`None`: a null key).
    fn build(keys: Vec<Option<K>>) -> Self {
        let mut head: HashMap<K, u32> = HashMap::with_capacity(keys.len());
        let mut next = vec![NONE; keys.len()];
        // Backwards, so that each chain runs in row order from its head.
        for (row, key) in keys.into_iter().enumerate().rev() {
            if let Some(key) = key {
                // Row positions fit in u32: the callers check the row count.
                let row = row as u32;
                next[row as usize] = head.insert(key, row).unwrap_or(NONE);
            }
        }
        Chains { head, next }
    }

    /// The rows with `key`, in row order.
    fn rows<'a>(&'a self, key: &K) -> impl Iterator<Item = u32> + 'a {
        let mut at = self.head.get(key).copied().unwrap_or(NONE);
        std::iter::from_fn(move || {
            (at != NONE).then(|| {
                let row = at;
                at = self.next[row as usize];
                row
            })
        })
    }
}

/// The row pairs of an equi-join, as two index columns, and which right rows matched.
pub(crate) struct Matches {
    /// Left row of each pair.
    pub(crate) left: Vec<u32>,
    /// Right row of each pair ([`NONE`]: no match).
    pub(crate) right: Vec<u32>,
    /// Per right row: whether some left row matched it.
    pub(crate) matched: Vec<bool>,
}

/// The matching (left, right) row pairs of an equi-join: left rows in order, each with its
/// right matches in right order. With `keep_unmatched`, a left row without a match is
/// kept with right [`NONE`].
pub(crate) fn match_rows(
    left: &KeyColumns,
    right: &KeyColumns,
    left_rows: usize,
    right_rows: usize,
    keep_unmatched: bool,
) -> Result<Matches, ArrowError> {
    rows_u32(left_rows)?;
    rows_u32(right_rows)?;
    let mut li = Vec::with_capacity(left_rows);
    let mut ri = Vec::with_capacity(left_rows);
    let mut matched = vec![false; right_rows];
    let mut emit = |i: usize, hits: &mut dyn Iterator<Item = u32>| {
        let mut any = false;
        for j in hits {
            any = true;
            matched[j as usize] = true;
            li.push(i as u32);
            ri.push(j);
        }
        if !any && keep_unmatched {
            li.push(i as u32);
            ri.push(NONE);
        }
    };
    match (left, right) {
        (KeyColumns::Int(l), KeyColumns::Int(r)) => {
            let (l, r) = (l.as_primitive::<Int64Type>(), r.as_primitive::<Int64Type>());
            let chains = Chains::build(
                (0..right_rows)
                    .map(|j| r.is_valid(j).then(|| r.value(j)))
                    .collect(),
            );
            for i in 0..left_rows {
                if l.is_valid(i) {
                    emit(i, &mut chains.rows(&l.value(i)));
                } else {
                    emit(i, &mut std::iter::empty());
                }
            }
        }
        (KeyColumns::Rows(l, lnull), KeyColumns::Rows(r, rnull)) => {
            let chains = Chains::build(
                (0..right_rows)
                    .map(|j| (!rnull[j]).then(|| r.row(j).data()))
                    .collect(),
            );
            for (i, null) in lnull.iter().enumerate().take(left_rows) {
                if *null {
                    emit(i, &mut std::iter::empty());
                } else {
                    emit(i, &mut chains.rows(&l.row(i).data()));
                }
            }
        }
        _ => {
            return Err(ArrowError::InvalidArgumentError(
                "join keys of different forms".to_owned(),
            ));
        }
    }
    Ok(Matches {
        left: li,
        right: ri,
        matched,
    })
}

/// The group of each row (groups numbered in order of first appearance; a null key is a
/// group of its own) and the first row of each group.
pub(crate) fn group_ids(
    keys: &KeyColumns,
    rows: usize,
) -> Result<(Vec<u32>, Vec<u32>), ArrowError> {
    rows_u32(rows)?;
    fn assign<K: Hash + Eq>(rows: usize, key: impl Fn(usize) -> Option<K>) -> (Vec<u32>, Vec<u32>) {
        let mut ids: HashMap<K, u32> = HashMap::new();
        let mut null_group = NONE;
        let mut firsts: Vec<u32> = Vec::new();
        let mut group_of = Vec::with_capacity(rows);
        for row in 0..rows {
            let next = firsts.len() as u32;
            let g = match key(row) {
                Some(k) => *ids.entry(k).or_insert(next),
                None => {
                    if null_group == NONE {
                        null_group = next;
                    }
                    null_group
                }
            };
            if g == next {
                firsts.push(row as u32);
            }
            group_of.push(g);
        }
        (group_of, firsts)
    }
    Ok(match keys {
        KeyColumns::Int(col) => {
            let col = col.as_primitive::<Int64Type>();
            assign(rows, |i| col.is_valid(i).then(|| col.value(i)))
        }
        // The row format encodes nulls as values of their own: a null key (or a
        // combination with nulls) is one group, as equal nulls are equal rows.
        KeyColumns::Rows(r, _) => assign(rows, |i| Some(r.row(i).data())),
    })
}
