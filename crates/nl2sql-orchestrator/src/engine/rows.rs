//! Arrow record batches as JSON rows, for the run result and the answer step.

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{
    DataType, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type,
    UInt16Type, UInt32Type, UInt64Type,
};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use serde_json::{Value, json};

/// The column names of `batch`, in order.
pub(crate) fn column_names(batch: &RecordBatch) -> Vec<String> {
    batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect()
}

/// The first `max` rows of `batch`, one JSON value per column: numbers, strings, booleans
/// and nulls as such; other types (dates, decimals, …) as their display text.
pub(crate) fn json_rows(batch: &RecordBatch, max: usize) -> Vec<Vec<Value>> {
    let n = batch.num_rows().min(max);
    let options = FormatOptions::default();
    let columns: Vec<Vec<Value>> = batch
        .columns()
        .iter()
        .map(|col| column_values(col.as_ref(), n, &options))
        .collect();
    (0..n)
        .map(|row| {
            columns
                .iter()
                .map(|c| c.get(row).cloned().unwrap_or(Value::Null))
                .collect()
        })
        .collect()
}

fn column_values(col: &dyn Array, n: usize, options: &FormatOptions<'_>) -> Vec<Value> {
    macro_rules! prim {
        ($t:ty) => {{
            let a = col.as_primitive::<$t>();
            (0..n)
                .map(|i| {
                    if a.is_null(i) {
                        Value::Null
                    } else {
                        json!(a.value(i))
                    }
                })
                .collect()
        }};
    }
    match col.data_type() {
        DataType::Null => vec![Value::Null; n],
        DataType::Boolean => {
            let a = col.as_boolean();
            (0..n)
                .map(|i| {
                    if a.is_null(i) {
                        Value::Null
                    } else {
                        Value::Bool(a.value(i))
                    }
                })
                .collect()
        }
        DataType::Int8 => prim!(Int8Type),
        DataType::Int16 => prim!(Int16Type),
        DataType::Int32 => prim!(Int32Type),
        DataType::Int64 => prim!(Int64Type),
        DataType::UInt8 => prim!(UInt8Type),
        DataType::UInt16 => prim!(UInt16Type),
        DataType::UInt32 => prim!(UInt32Type),
        DataType::UInt64 => prim!(UInt64Type),
        DataType::Float32 => prim!(Float32Type),
        DataType::Float64 => prim!(Float64Type),
        DataType::Utf8 => {
            let a = col.as_string::<i32>();
            (0..n)
                .map(|i| {
                    if a.is_null(i) {
                        Value::Null
                    } else {
                        Value::String(a.value(i).to_owned())
                    }
                })
                .collect()
        }
        DataType::LargeUtf8 => {
            let a = col.as_string::<i64>();
            (0..n)
                .map(|i| {
                    if a.is_null(i) {
                        Value::Null
                    } else {
                        Value::String(a.value(i).to_owned())
                    }
                })
                .collect()
        }
        _ => match ArrayFormatter::try_new(col, options) {
            Ok(f) => (0..n)
                .map(|i| {
                    if col.is_null(i) {
                        Value::Null
                    } else {
                        Value::String(f.value(i).to_string())
                    }
                })
                .collect(),
            Err(_) => vec![Value::Null; n],
        },
    }
}
