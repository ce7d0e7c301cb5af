//! Post-combine operations (aggregation.md §4): filter, aggregate, project, sort, limit.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray, UInt32Array,
    make_comparator, new_null_array,
};
use arrow::compute::kernels::cmp;
use arrow::compute::{
    SortColumn, SortOptions, and, cast, filter_record_batch, lexsort_to_indices, or, take,
};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::error::ArrowError;
use nl2sql_plan::{
    Aggregation, ExpectedColumn, FilterOperator, FilterSpec, FilterValue, GroupBySpec, MetricSpec,
    OrderBySpec, SortDirection,
};

use crate::keys::{self, KeyColumns};

fn invalid(message: String) -> ArrowError {
    ArrowError::InvalidArgumentError(message)
}

fn column<'a>(t: &'a RecordBatch, name: &str) -> Result<&'a ArrayRef, ArrowError> {
    t.schema()
        .index_of(name)
        .map(|i| t.column(i))
        .map_err(|_| invalid(format!("column '{name}' does not exist")))
}

/// Keeps the rows that satisfy every filter; a null value satisfies none.
pub(crate) fn filter(
    input: &RecordBatch,
    filters: &[FilterSpec],
) -> Result<RecordBatch, ArrowError> {
    let mut mask = BooleanArray::from(vec![true; input.num_rows()]);
    for f in filters {
        let col = column(input, &f.attribute)?;
        mask = and(&mask, &predicate(col, f)?)?;
    }
    filter_record_batch(input, &mask)
}

/// One scalar as a one-element array of the comparison type of `col`.
fn scalar(col: &ArrayRef, value: &Scalar) -> Result<(ArrayRef, ArrayRef), ArrowError> {
    let t = col.data_type();
    match value {
        Scalar::Num(n) if t.is_numeric() => Ok((
            cast(col, &DataType::Float64)?,
            Arc::new(Float64Array::from(vec![*n])),
        )),
        Scalar::Text(s) if t.is_temporal() => {
            let parsed = cast(
                &(Arc::new(StringArray::from(vec![s.as_str()])) as ArrayRef),
                t,
            )?;
            if parsed.is_null(0) {
                return Err(invalid(format!("'{s}' is not a valid {t}")));
            }
            Ok((col.clone(), parsed))
        }
        other => Ok((
            cast(col, &DataType::Utf8)?,
            Arc::new(StringArray::from(vec![other.text()])),
        )),
    }
}

enum Scalar {
    Num(f64),
    Text(String),
    Bool(bool),
}

impl Scalar {
    fn text(&self) -> String {
        match self {
            Scalar::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => format!("{}", *n as i64),
            Scalar::Num(n) => n.to_string(),
            Scalar::Text(s) => s.clone(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

fn scalars(value: &FilterValue) -> Vec<Scalar> {
    match value {
        FilterValue::Bool(b) => vec![Scalar::Bool(*b)],
        FilterValue::Int(i) => vec![Scalar::Num(*i as f64)],
        FilterValue::Float(f) => vec![Scalar::Num(*f)],
        FilterValue::String(s) => vec![Scalar::Text(s.clone())],
        FilterValue::StringList(v) => v.iter().map(|s| Scalar::Text(s.clone())).collect(),
        FilterValue::IntList(v) => v.iter().map(|i| Scalar::Num(*i as f64)).collect(),
        FilterValue::FloatList(v) => v.iter().map(|f| Scalar::Num(*f)).collect(),
    }
}

fn compare(col: &ArrayRef, op: FilterOperator, value: &Scalar) -> Result<BooleanArray, ArrowError> {
    let (c, s) = scalar(col, value)?;
    let s = arrow::array::Scalar::new(s);
    match op {
        FilterOperator::Eq => cmp::eq(&c, &s),
        FilterOperator::NotEq => cmp::neq(&c, &s),
        FilterOperator::Gt => cmp::gt(&c, &s),
        FilterOperator::GtEq => cmp::gt_eq(&c, &s),
        FilterOperator::Lt => cmp::lt(&c, &s),
        FilterOperator::LtEq => cmp::lt_eq(&c, &s),
        FilterOperator::Between
        | FilterOperator::In
        | FilterOperator::Contains
        | FilterOperator::StartsWith
        | FilterOperator::EndsWith => Err(invalid("not a comparison".to_owned())),
    }
}

fn predicate(col: &ArrayRef, f: &FilterSpec) -> Result<BooleanArray, ArrowError> {
    let values = scalars(&f.value);
    let list = f.value.list_len().is_some();
    match f.operator {
        FilterOperator::Between => match values.as_slice() {
            [lo, hi] if list => and(
                &compare(col, FilterOperator::GtEq, lo)?,
                &compare(col, FilterOperator::LtEq, hi)?,
            ),
            _ => Err(invalid(format!(
                "between on '{}' needs [lo, hi]",
                f.attribute
            ))),
        },
        FilterOperator::In => {
            if !list || values.is_empty() {
                return Err(invalid(format!(
                    "in on '{}' needs a non-empty list",
                    f.attribute
                )));
            }
            let mut mask = BooleanArray::from(vec![false; col.len()]);
            for v in &values {
                mask = or(&mask, &compare(col, FilterOperator::Eq, v)?)?;
            }
            Ok(mask)
        }
        FilterOperator::Contains | FilterOperator::StartsWith | FilterOperator::EndsWith => {
            let [needle] = values.as_slice() else {
                return Err(invalid(format!(
                    "{} on '{}' needs one value",
                    f.operator.as_str(),
                    f.attribute
                )));
            };
            let needle = needle.text();
            let text = cast(col, &DataType::Utf8)?;
            let text = text
                .as_any()
                .downcast_ref::<StringArray>()
                .ok_or_else(|| invalid("cannot read text".to_owned()))?;
            Ok(text
                .iter()
                .map(|v| {
                    v.map(|s| match f.operator {
                        FilterOperator::StartsWith => s.starts_with(&needle),
                        FilterOperator::EndsWith => s.ends_with(&needle),
                        _ => s.contains(&needle),
                    })
                })
                .collect())
        }
        op => match values.as_slice() {
            [v] if !list => compare(col, op, v),
            _ => Err(invalid(format!(
                "'{}' on '{}' needs a single value",
                op.as_str(),
                f.attribute
            ))),
        },
    }
}

/// Groups by `group_by` (nulls form their own group; output sorted by the keys ascending,
/// nulls first) and computes each metric over the input column of its name.
pub(crate) fn aggregate(
    input: &RecordBatch,
    group_by: &[GroupBySpec],
    metrics: &[MetricSpec],
) -> Result<RecordBatch, ArrowError> {
    let keys = group_by
        .iter()
        .map(|g| column(input, &g.attribute).cloned())
        .collect::<Result<Vec<_>, _>>()?;
    // The group of each row, groups in first-appearance order, and each group's first row.
    let (group_of, firsts) = if keys.is_empty() {
        let n = keys::rows_u32(input.num_rows())?;
        (vec![0; n as usize], vec![0])
    } else {
        let forms = KeyColumns::of_sides(&[&keys], false)?;
        keys::group_ids(&forms[0], input.num_rows())?
    };
    let groups = Groups {
        of: &group_of,
        count: firsts.len(),
    };
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    let firsts = UInt32Array::from(firsts);
    for (g, k) in group_by.iter().zip(&keys) {
        fields.push(Field::new(&g.attribute, k.data_type().clone(), true));
        columns.push(take(k, &firsts, None)?);
    }
    for m in metrics {
        let Some(agg) = m.aggregation else { continue };
        let col = column(input, &m.name)?;
        let out = metric(col, agg, &groups)?;
        fields.push(Field::new(&m.name, out.data_type().clone(), true));
        columns.push(out);
    }
    let batch = RecordBatch::try_new_with_options(
        Arc::new(Schema::new(fields)),
        columns,
        &arrow::array::RecordBatchOptions::new().with_row_count(Some(groups.count)),
    )?;
    if keys.is_empty() || batch.num_rows() == 0 {
        return Ok(batch);
    }
    let sort_columns: Vec<SortColumn> = (0..keys.len())
        .map(|i| SortColumn {
            values: batch.column(i).clone(),
            options: Some(SortOptions {
                descending: false,
                nulls_first: true,
            }),
        })
        .collect();
    let order = lexsort_to_indices(&sort_columns, None)?;
    take_batch(&batch, &order)
}

/// The group of each input row, and how many groups there are.
struct Groups<'a> {
    of: &'a [u32],
    count: usize,
}

/// One metric per group, in one pass over the rows (values added in row order, so sums
/// are the same to the bit as adding each group's values in order).
fn metric(col: &ArrayRef, agg: Aggregation, groups: &Groups<'_>) -> Result<ArrayRef, ArrowError> {
    let t = col.data_type();
    let rows = groups.of.iter().enumerate().map(|(i, g)| (i, *g as usize));
    Ok(match agg {
        Aggregation::Count => {
            let mut counts = vec![0_i64; groups.count];
            for (i, g) in rows {
                if col.is_valid(i) {
                    counts[g] += 1;
                }
            }
            Arc::new(Int64Array::from(counts))
        }
        Aggregation::Sum if t.is_integer() => {
            let ints = cast(col, &DataType::Int64)?;
            let ints = ints
                .as_any()
                .downcast_ref::<Int64Array>()
                .ok_or_else(|| invalid("cannot read integers".to_owned()))?;
            let mut sums = vec![0_i64; groups.count];
            let mut seen = vec![false; groups.count];
            for (i, g) in rows {
                if ints.is_valid(i) {
                    sums[g] = sums[g].wrapping_add(ints.value(i));
                    seen[g] = true;
                }
            }
            let out: Int64Array = sums
                .into_iter()
                .zip(seen)
                .map(|(s, seen)| seen.then_some(s))
                .collect();
            Arc::new(out)
        }
        Aggregation::Sum | Aggregation::Avg => {
            if !t.is_numeric() && *t != DataType::Null {
                return Err(invalid(format!("cannot {agg:?} a {t} column")));
            }
            let floats = cast(col, &DataType::Float64)?;
            let floats = floats
                .as_any()
                .downcast_ref::<Float64Array>()
                .ok_or_else(|| invalid("cannot read numbers".to_owned()))?;
            let mut sums = vec![0.0_f64; groups.count];
            let mut counts = vec![0_usize; groups.count];
            for (i, g) in rows {
                if floats.is_valid(i) {
                    sums[g] += floats.value(i);
                    counts[g] += 1;
                }
            }
            let out: Float64Array = sums
                .into_iter()
                .zip(counts)
                .map(|(sum, n)| {
                    (n > 0).then(|| {
                        if agg == Aggregation::Avg {
                            sum / n as f64
                        } else {
                            sum
                        }
                    })
                })
                .collect();
            Arc::new(out)
        }
        Aggregation::Min | Aggregation::Max => {
            let compare = make_comparator(col.as_ref(), col.as_ref(), SortOptions::default())?;
            let better = if agg == Aggregation::Max {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Less
            };
            let mut best = vec![keys::NONE; groups.count];
            for (i, g) in rows {
                if col.is_valid(i)
                    && (best[g] == keys::NONE || compare(i, best[g] as usize) == better)
                {
                    best[g] = i as u32;
                }
            }
            if groups.count == 0 {
                new_null_array(t, 0)
            } else {
                let picks: UInt32Array = best
                    .iter()
                    .map(|b| (*b != keys::NONE).then_some(*b))
                    .collect();
                take(col, &picks, None)?
            }
        }
    })
}

/// The `expected_schema` columns in order; empty → unchanged.
pub(crate) fn project(
    input: &RecordBatch,
    cols: &[ExpectedColumn],
) -> Result<RecordBatch, ArrowError> {
    if cols.is_empty() {
        return Ok(input.clone());
    }
    let schema = input.schema();
    let picked = cols
        .iter()
        .map(|c| {
            schema
                .index_of(&c.name)
                .map_err(|_| invalid(format!("column '{}' does not exist", c.name)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    input.project(&picked)
}

/// Stable sort by `order_by`, nulls last in both directions.
pub(crate) fn sort(
    input: &RecordBatch,
    order_by: &[OrderBySpec],
) -> Result<RecordBatch, ArrowError> {
    if order_by.is_empty() || input.num_rows() == 0 {
        return Ok(input.clone());
    }
    let mut sort_columns = order_by
        .iter()
        .map(|o| {
            Ok(SortColumn {
                values: column(input, &o.attribute)?.clone(),
                options: Some(SortOptions {
                    descending: o.direction == SortDirection::Desc,
                    nulls_first: false,
                }),
            })
        })
        .collect::<Result<Vec<_>, ArrowError>>()?;
    // Row position as the last key makes the sort stable.
    sort_columns.push(SortColumn {
        values: Arc::new(to_indices((0..input.num_rows()).map(Some))?),
        options: None,
    });
    let order = lexsort_to_indices(&sort_columns, None)?;
    take_batch(input, &order)
}

/// The first `limit` rows; null → unchanged.
pub(crate) fn limit(input: &RecordBatch, limit: Option<i64>) -> Result<RecordBatch, ArrowError> {
    match limit {
        None => Ok(input.clone()),
        Some(n) if n < 0 => Err(invalid(format!("limit {n} is negative"))),
        Some(n) => {
            let n = usize::try_from(n)
                .unwrap_or(usize::MAX)
                .min(input.num_rows());
            Ok(input.slice(0, n))
        }
    }
}

fn to_indices(values: impl Iterator<Item = Option<usize>>) -> Result<UInt32Array, ArrowError> {
    values
        .map(|v| v.map(u32::try_from).transpose())
        .collect::<Result<UInt32Array, _>>()
        .map_err(|_| invalid("table too large".to_owned()))
}

fn take_batch(batch: &RecordBatch, order: &UInt32Array) -> Result<RecordBatch, ArrowError> {
    let columns = batch
        .columns()
        .iter()
        .map(|c| take(c, order, None))
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(batch.schema(), columns)
}
