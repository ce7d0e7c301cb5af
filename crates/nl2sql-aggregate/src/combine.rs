//! Combine operations (aggregation.md §3): standalone, union, inner join, and compare
//! (full outer join with side-by-side columns and numeric differences).

use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, UInt32Array, new_null_array};
use arrow::compute::kernels::numeric::sub;
use arrow::compute::{cast, concat_batches, interleave, take};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::error::ArrowError;
use nl2sql_plan::{CombineOperation, JoinKeyPair};

use crate::keys::{self, KeyColumns, Matches, NONE};

/// Applies `operation` to the ordered inputs (left side first for join and compare).
///
/// The arity of plan-model.md §3.3 is checked here too, not only by the plan validator: a
/// DAG built by hand or by another client reaches the aggregator without that validator,
/// and an input silently dropped would be a wrong answer. `standalone` takes exactly one
/// input, `join` and `compare` exactly two, `union` at least two.
pub(crate) fn combine(
    operation: CombineOperation,
    inputs: &[&RecordBatch],
    keys: &[JoinKeyPair],
) -> Result<RecordBatch, ArrowError> {
    let (name, arity_ok, wanted) = match operation {
        CombineOperation::Standalone => ("standalone", inputs.len() == 1, "exactly one"),
        CombineOperation::Union => ("union", inputs.len() >= 2, "at least two"),
        CombineOperation::Join => ("join", inputs.len() == 2, "exactly two"),
        CombineOperation::Compare => ("compare", inputs.len() == 2, "exactly two"),
    };
    if !arity_ok {
        return Err(invalid(format!(
            "combine {name} needs {wanted} inputs, got {}",
            inputs.len()
        )));
    }
    match (operation, inputs) {
        (CombineOperation::Standalone, [only]) => Ok((*only).clone()),
        (CombineOperation::Union, _) => union(inputs),
        (CombineOperation::Join, [left, right]) => join(left, right, keys),
        (CombineOperation::Compare, [left, right]) => compare(left, right, keys),
        _ => Err(invalid(format!(
            "combine {name} needs {wanted} inputs, got {}",
            inputs.len()
        ))),
    }
}

fn invalid(message: String) -> ArrowError {
    ArrowError::InvalidArgumentError(message)
}

fn column<'a>(t: &'a RecordBatch, name: &str) -> Result<&'a ArrayRef, ArrowError> {
    t.schema()
        .index_of(name)
        .map(|i| t.column(i))
        .map_err(|_| invalid(format!("column '{name}' does not exist")))
}

fn is_numeric(t: &DataType) -> bool {
    t.is_numeric()
}

fn is_integer(t: &DataType) -> bool {
    t.is_integer()
}

/// The type both sides are compared or merged in, if any.
fn common_type(a: &DataType, b: &DataType) -> Option<DataType> {
    if a == b {
        Some(a.clone())
    } else if *a == DataType::Null {
        Some(b.clone())
    } else if *b == DataType::Null {
        Some(a.clone())
    } else if is_integer(a) && is_integer(b) {
        Some(DataType::Int64)
    } else if is_numeric(a) && is_numeric(b) {
        Some(DataType::Float64)
    } else {
        None
    }
}

fn union(inputs: &[&RecordBatch]) -> Result<RecordBatch, ArrowError> {
    let first = inputs[0].schema();
    let mut fields = Vec::new();
    for field in first.fields() {
        let mut dtype = field.data_type().clone();
        for other in &inputs[1..] {
            let o = other.schema();
            let Ok(of) = o.field_with_name(field.name()) else {
                return Err(invalid(format!(
                    "union inputs have incompatible columns: '{}' is missing from an input",
                    field.name()
                )));
            };
            dtype = common_type(&dtype, of.data_type()).ok_or_else(|| {
                invalid(format!(
                    "union inputs have incompatible columns: '{}' is {} and {}",
                    field.name(),
                    dtype,
                    of.data_type()
                ))
            })?;
        }
        fields.push(Field::new(field.name(), dtype, true));
    }
    for other in &inputs[1..] {
        if other.num_columns() != first.fields().len() {
            return Err(invalid(
                "union inputs have incompatible columns: different column sets".to_owned(),
            ));
        }
    }
    let schema = Arc::new(Schema::new(fields));
    let aligned = inputs
        .iter()
        .map(|t| {
            let columns = schema
                .fields()
                .iter()
                .map(|f| cast(column(t, f.name())?, f.data_type()))
                .collect::<Result<Vec<_>, _>>()?;
            RecordBatch::try_new(schema.clone(), columns)
        })
        .collect::<Result<Vec<_>, _>>()?;
    concat_batches(&schema, &aligned)
}

/// Key columns of both sides cast to common types.
fn key_columns(
    left: &RecordBatch,
    right: &RecordBatch,
    keys: &[JoinKeyPair],
) -> Result<(Vec<ArrayRef>, Vec<ArrayRef>), ArrowError> {
    let mut l = Vec::new();
    let mut r = Vec::new();
    for k in keys {
        let (lc, rc) = (column(left, &k.left)?, column(right, &k.right)?);
        let t = common_type(lc.data_type(), rc.data_type()).ok_or_else(|| {
            invalid(format!(
                "join key types differ: '{}' is {} and '{}' is {}",
                k.left,
                lc.data_type(),
                k.right,
                rc.data_type()
            ))
        })?;
        l.push(cast(lc, &t)?);
        r.push(cast(rc, &t)?);
    }
    Ok((l, r))
}

/// Matching (left, right) row pairs ([`keys::match_rows`]); with `keep_unmatched`, a
/// left row without a match comes with right [`NONE`].
fn matches(
    lk: &[ArrayRef],
    rk: &[ArrayRef],
    left_rows: usize,
    right_rows: usize,
    keep_unmatched: bool,
) -> Result<Matches, ArrowError> {
    let forms = KeyColumns::of_sides(&[lk, rk], true)?;
    let [l, r] = forms.as_slice() else {
        return Err(invalid("join keys of different forms".to_owned()));
    };
    keys::match_rows(l, r, left_rows, right_rows, keep_unmatched)
}

/// Index arrays with nulls where a side has no row ([`NONE`]).
fn nullable_indices(values: &[u32]) -> UInt32Array {
    values.iter().map(|v| (*v != NONE).then_some(*v)).collect()
}

/// Appends `name` (suffixed `_right` on collision).
fn push_column(fields: &mut Vec<Field>, columns: &mut Vec<ArrayRef>, name: &str, col: ArrayRef) {
    let name = if fields.iter().any(|f| f.name() == name) {
        format!("{name}_right")
    } else {
        name.to_owned()
    };
    fields.push(Field::new(name, col.data_type().clone(), true));
    columns.push(col);
}

fn join(
    left: &RecordBatch,
    right: &RecordBatch,
    keys: &[JoinKeyPair],
) -> Result<RecordBatch, ArrowError> {
    let (lk, rk) = key_columns(left, right, keys)?;
    let m = matches(&lk, &rk, left.num_rows(), right.num_rows(), false)?;
    let (li, ri) = (UInt32Array::from(m.left), UInt32Array::from(m.right));
    let (mut fields, mut columns) = (Vec::new(), Vec::new());
    let ls = left.schema();
    for (f, c) in ls.fields().iter().zip(left.columns()) {
        push_column(&mut fields, &mut columns, f.name(), take(c, &li, None)?);
    }
    let rs = right.schema();
    for (f, c) in rs.fields().iter().zip(right.columns()) {
        if !keys.iter().any(|k| &k.right == f.name()) {
            push_column(&mut fields, &mut columns, f.name(), take(c, &ri, None)?);
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}

fn compare(
    left: &RecordBatch,
    right: &RecordBatch,
    keys: &[JoinKeyPair],
) -> Result<RecordBatch, ArrowError> {
    let (lk, rk) = key_columns(left, right, keys)?;
    let Matches {
        left: mut l_rows,
        right: mut r_rows,
        matched,
    } = matches(&lk, &rk, left.num_rows(), right.num_rows(), true)?;
    // Then the right rows nothing matched, in right order.
    for (j, _) in matched.iter().enumerate().filter(|(_, m)| !**m) {
        l_rows.push(NONE);
        r_rows.push(j as u32);
    }
    let rows: Vec<(Option<usize>, Option<usize>)> = l_rows
        .iter()
        .zip(&r_rows)
        .map(|(l, r)| {
            (
                (*l != NONE).then_some(*l as usize),
                (*r != NONE).then_some(*r as usize),
            )
        })
        .collect();
    let li = nullable_indices(&l_rows);
    let ri = nullable_indices(&r_rows);
    let (mut fields, mut columns) = (Vec::new(), Vec::new());
    for (k, (lc, rc)) in keys.iter().zip(lk.iter().zip(&rk)) {
        let picks: Vec<(usize, usize)> = rows
            .iter()
            .map(|p| match p {
                (Some(l), _) => (0, *l),
                (None, Some(r)) => (1, *r),
                (None, None) => (0, 0),
            })
            .collect();
        let merged = if rows.is_empty() {
            new_null_array(lc.data_type(), 0)
        } else {
            interleave(&[lc.as_ref(), rc.as_ref()], &picks)?
        };
        push_column(&mut fields, &mut columns, &k.left, merged);
    }
    let ls = left.schema();
    let rs = right.schema();
    let left_rest: Vec<usize> = (0..ls.fields().len())
        .filter(|i| !keys.iter().any(|k| &k.left == ls.field(*i).name()))
        .collect();
    let right_rest: Vec<usize> = (0..rs.fields().len())
        .filter(|i| !keys.iter().any(|k| &k.right == rs.field(*i).name()))
        .collect();
    let mut left_taken = Vec::new();
    for &i in &left_rest {
        let col = take(left.column(i), &li, None)?;
        left_taken.push((ls.field(i).name().clone(), col.clone()));
        push_column(&mut fields, &mut columns, ls.field(i).name(), col);
    }
    let mut right_taken = Vec::new();
    for &i in &right_rest {
        let col = take(right.column(i), &ri, None)?;
        right_taken.push((rs.field(i).name().clone(), col.clone()));
        push_column(&mut fields, &mut columns, rs.field(i).name(), col);
    }
    for (name, lcol) in &left_taken {
        let Some((_, rcol)) = right_taken.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let (lt, rt) = (lcol.data_type(), rcol.data_type());
        if !(is_numeric(lt) && is_numeric(rt)) {
            continue;
        }
        let t = if is_integer(lt) && is_integer(rt) {
            DataType::Int64
        } else {
            DataType::Float64
        };
        let diff = sub(&cast(lcol, &t)?, &cast(rcol, &t)?)?;
        push_column(&mut fields, &mut columns, &format!("{name}_diff"), diff);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
}
