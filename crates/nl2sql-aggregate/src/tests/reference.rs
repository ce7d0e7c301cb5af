//! Join, compare and group-by against a nested-loop reference over seeded random tables
//! (nulls, repeated keys, one and two key columns): the hash tables of `keys.rs` must give
//! the rows, in the order, that the definitions give.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{
    Array as _, ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
};
use nl2sql_plan::CombineOperation;
use serde_json::json;

use super::{f, group_by, i, keys, metrics, table};
use crate::{combine, post};

/// Random tables for the reference checks: `n` rows of an `Int32` key `k` (nulls
/// included, few distinct values so keys repeat), a text key `t`, an `Int64` value `v`
/// and a float `x` (nulls included).
fn random_table(rng: &mut nl2sql_state::SplitMix64, n: usize, prefix: &str) -> RecordBatch {
    let mut pick = |m: u64| (rng.next_u64() % m) as i64;
    let mut k = Vec::new();
    let mut t = Vec::new();
    let mut v = Vec::new();
    let mut x = Vec::new();
    for _ in 0..n {
        k.push((pick(8) != 0).then(|| pick(12) as i32));
        t.push((pick(10) != 0).then(|| ["a", "b", "c"][pick(3) as usize].to_owned()));
        v.push((pick(6) != 0).then(|| pick(1000) - 500));
        x.push((pick(5) != 0).then(|| pick(1000) as f64 / 7.0));
    }
    table(vec![
        ("k", Arc::new(Int32Array::from(k)) as ArrayRef),
        ("t", Arc::new(StringArray::from(t)) as ArrayRef),
        (&format!("{prefix}v"), i(v)),
        (&format!("{prefix}x"), f(x)),
    ])
}

fn cells(t: &RecordBatch, row: usize) -> Vec<String> {
    t.columns()
        .iter()
        .map(|c| arrow::util::display::array_value_to_string(c, row).expect("prints"))
        .collect()
}

fn key_of(t: &RecordBatch, row: usize, names: &[&str]) -> Option<Vec<String>> {
    names
        .iter()
        .map(|n| {
            let c = t.column(t.schema().index_of(n).expect("key"));
            c.is_valid(row)
                .then(|| arrow::util::display::array_value_to_string(c, row).expect("prints"))
        })
        .collect()
}

#[test]
fn join_compare_and_group_by_agree_with_a_nested_loop_reference() {
    let mut rng = nl2sql_state::SplitMix64::new(20261126);
    for round in 0..40 {
        let (ln, rn) = (rng.next_u64() as usize % 60, rng.next_u64() as usize % 60);
        let left = random_table(&mut rng, ln, "l");
        let right = random_table(&mut rng, rn, "r");
        // One integer key (the hashed-integer form), then two keys (the row form).
        for names in [&["k"][..], &["k", "t"][..]] {
            let pairs: Vec<(&str, &str)> = names.iter().map(|n| (*n, *n)).collect();
            let joined = combine::combine(CombineOperation::Join, &[&left, &right], &keys(&pairs))
                .expect("join");
            // Left rows in order, each with its matches in right order; the right side's
            // key columns are not repeated.
            let mut want = Vec::new();
            for a in 0..ln {
                let Some(ka) = key_of(&left, a, names) else {
                    continue;
                };
                for b in 0..rn {
                    if key_of(&right, b, names).as_ref() == Some(&ka) {
                        let mut row = cells(&left, a);
                        row.extend(cells(&right, b).into_iter().skip(names.len()));
                        want.push(row);
                    }
                }
            }
            let got: Vec<Vec<String>> = (0..joined.num_rows()).map(|r| cells(&joined, r)).collect();
            assert_eq!(got, want, "round {round}, keys {names:?}");

            let compared =
                combine::combine(CombineOperation::Compare, &[&left, &right], &keys(&pairs))
                    .expect("compare");
            let matched_left: usize = (0..ln)
                .map(|a| {
                    let hits = key_of(&left, a, names).map_or(0, |ka| {
                        (0..rn)
                            .filter(|b| key_of(&right, *b, names).as_ref() == Some(&ka))
                            .count()
                    });
                    hits.max(1)
                })
                .sum();
            let unmatched_right = (0..rn)
                .filter(|b| {
                    key_of(&right, *b, names).is_none_or(|kb| {
                        (0..ln).all(|a| key_of(&left, a, names).as_ref() != Some(&kb))
                    })
                })
                .count();
            assert_eq!(
                compared.num_rows(),
                matched_left + unmatched_right,
                "round {round}, keys {names:?}"
            );
        }

        // Group-by against a BTreeMap of the groups (nulls first, keys ascending).
        let m = metrics(json!([
            {"name": "lv", "aggregation": "sum"},
            {"name": "lx", "aggregation": "avg"},
            {"name": "t", "aggregation": "max"}
        ]));
        let out = post::aggregate(&left, &group_by(&["k"]), &m).expect("aggregate");
        let kcol = left
            .column(0)
            .as_any()
            .downcast_ref::<Int32Array>()
            .expect("k");
        let vcol = left
            .column(2)
            .as_any()
            .downcast_ref::<Int64Array>()
            .expect("v");
        let xcol = left
            .column(3)
            .as_any()
            .downcast_ref::<Float64Array>()
            .expect("x");
        let tcol = left
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .expect("t");
        // Per key: the integer sum, the float sum and count, the text maximum.
        type Expected = (Option<i64>, f64, usize, Option<String>);
        let mut groups: BTreeMap<Option<i32>, Expected> = BTreeMap::new();
        for r in 0..ln {
            let e = groups
                .entry(kcol.is_valid(r).then(|| kcol.value(r)))
                .or_insert((None, 0.0, 0, None));
            if vcol.is_valid(r) {
                e.0 = Some(e.0.unwrap_or(0) + vcol.value(r));
            }
            if xcol.is_valid(r) {
                e.1 += xcol.value(r);
                e.2 += 1;
            }
            if tcol.is_valid(r) && e.3.as_deref().is_none_or(|m| tcol.value(r) > m) {
                e.3 = Some(tcol.value(r).to_owned());
            }
        }
        assert_eq!(out.num_rows(), groups.len(), "round {round}");
        for (row, (k, (sum, xs, n, max))) in groups.iter().enumerate() {
            let got_k = out
                .column(0)
                .as_any()
                .downcast_ref::<Int32Array>()
                .expect("k");
            assert_eq!(got_k.is_valid(row).then(|| got_k.value(row)), *k);
            let got_v = out
                .column(1)
                .as_any()
                .downcast_ref::<Int64Array>()
                .expect("v");
            assert_eq!(got_v.is_valid(row).then(|| got_v.value(row)), *sum);
            let got_x = out
                .column(2)
                .as_any()
                .downcast_ref::<Float64Array>()
                .expect("x");
            let avg = (*n > 0).then(|| xs / *n as f64);
            assert_eq!(got_x.is_valid(row).then(|| got_x.value(row)), avg);
            let got_t = out
                .column(3)
                .as_any()
                .downcast_ref::<StringArray>()
                .expect("t");
            assert_eq!(
                got_t.is_valid(row).then(|| got_t.value(row).to_owned()),
                *max
            );
        }
    }
}
