//! Inputs of the aggregation benches: generated Arrow tables, the `ExecutionDag`s the
//! aggregation engine evaluates over them, the same operations as DuckDB SQL over the same
//! Arrow data, and a [`Summary`] to check that both give the same result.
//!
//! - Join: `plant` (`product_id`, `units_produced`) and `warehouse` (`product_id`,
//!   `units_on_hand`), `rows` rows each, inner-joined on `product_id`. The warehouse keys
//!   are a permutation of `rows/10 .. rows + rows/10`, so 90% of the keys match, once.
//! - Group-by: `orders` (`order_id`, `store_id`, `amount`), `rows` rows over 1,000 stores,
//!   grouped by `store_id` with the sum of `amount` and the count of `order_id`.

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, Int64Array, RecordBatch};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Int64Type};
use arrow::error::ArrowError;
use nl2sql_aggregate::aggregate;
use nl2sql_plan::{DatasourceResolution, ExecutionDag};
use nl2sql_state::{ErrorCode, PipelineError, Severity};
use nl2sql_validate::validate_decomposition;
use serde_json::json;

/// Rows of each input table, unless `NL2SQL_BENCH_ROWS` says otherwise.
pub const DEFAULT_ROWS: usize = 1_000_000;

/// The environment variable that sets the rows of each aggregation input (a smaller
/// number makes a debug run of the benches quick).
pub const ROWS_ENV: &str = "NL2SQL_BENCH_ROWS";

/// The number of distinct `store_id`s of the group-by table.
pub const STORES: i64 = 1_000;

/// The DuckDB query of the join bench: `arrow(?)` scans the two registered batches
/// (plant, warehouse).
pub const JOIN_SQL: &str = "SELECT l.product_id, l.units_produced, r.units_on_hand \
     FROM arrow(?) AS l JOIN arrow(?) AS r ON l.product_id = r.product_id";

/// The DuckDB query of the group-by bench over the registered orders batch; sorted by
/// the key like the engine's aggregate, and with the engine's column names and types.
pub const GROUP_BY_SQL: &str = "SELECT store_id, CAST(sum(amount) AS BIGINT) AS amount, \
     count(order_id) AS order_id FROM arrow(?) GROUP BY store_id ORDER BY store_id";

/// `NL2SQL_BENCH_ROWS` when it is a positive integer, else [`DEFAULT_ROWS`].
pub fn rows_from_env() -> usize {
    std::env::var(ROWS_ENV)
        .ok()
        .and_then(|v| v.trim().replace('_', "").parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_ROWS)
}

/// A row count as it appears in bench ids: `1m`, `10k`, else the number.
pub fn size_label(rows: usize) -> String {
    if rows >= 1_000_000 && rows.is_multiple_of(1_000_000) {
        format!("{}m", rows / 1_000_000)
    } else if rows >= 1_000 && rows.is_multiple_of(1_000) {
        format!("{}k", rows / 1_000)
    } else {
        rows.to_string()
    }
}

fn int64(values: impl Iterator<Item = i64>) -> ArrayRef {
    Arc::new(values.collect::<Int64Array>())
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    // Same-length, non-null Int64 columns with distinct names always make a batch.
    #[allow(clippy::expect_used)] // reason: the columns are built above, never mismatched
    RecordBatch::try_from_iter_with_nullable(columns.into_iter().map(|(n, c)| (n, c, false)))
        .expect("generated columns form a batch")
}

/// The two join inputs, `rows` rows each: `(plant, warehouse)`.
pub fn join_tables(rows: usize) -> (RecordBatch, RecordBatch) {
    let n = rows as i64;
    let plant = batch(vec![
        ("product_id", int64(0..n)),
        ("units_produced", int64((0..n).map(|i| (i * 7) % 1_000 + 1))),
    ]);
    // i ↦ i·p mod n is a permutation when p is prime and does not divide n.
    let p: i128 = 1_000_003;
    let warehouse = batch(vec![
        (
            "product_id",
            int64((0..n).map(|j| ((j as i128 * p) % n as i128) as i64 + n / 10)),
        ),
        ("units_on_hand", int64((0..n).map(|j| (j * 13) % 500))),
    ]);
    (plant, warehouse)
}

/// The group-by input, `rows` rows: `order_id`, `store_id` (one of [`STORES`]), `amount`.
pub fn group_by_table(rows: usize) -> RecordBatch {
    let n = rows as i64;
    batch(vec![
        ("order_id", int64(0..n)),
        ("store_id", int64((0..n).map(|i| (i * 7) % STORES))),
        ("amount", int64((0..n).map(|i| (i * 31) % 10_000))),
    ])
}

/// An `ExecutionDag` for the aggregation engine, with its scan node ids in the order of
/// the tables they read.
#[derive(Debug, Clone)]
pub struct BenchDag {
    /// The planned DAG.
    pub dag: ExecutionDag,
    /// Scan node ids: scan `i` reads table `i`.
    pub scans: Vec<String>,
}

impl BenchDag {
    /// Plans a fixed decomposition whose sub-queries are named `t0`, `t1`…
    ///
    /// # Panics
    /// When the decomposition is not valid (a bug in this file).
    fn plan(decomposition: &serde_json::Value, tables: usize) -> BenchDag {
        let report =
            validate_decomposition(&decomposition.to_string(), &DatasourceResolution::default());
        let (Some(dag), Some(normalized)) = (report.dag.clone(), report.normalized.as_ref()) else {
            panic!(
                "the bench decomposition is invalid: {}",
                report.feedback().unwrap_or_default()
            );
        };
        let scans = (0..tables)
            .map(|i| {
                normalized
                    .subquery_ids
                    .get(&format!("t{i}"))
                    .cloned()
                    .unwrap_or_else(|| panic!("sub-query t{i} was dropped"))
            })
            .collect();
        BenchDag { dag, scans }
    }

    /// Evaluates the DAG with the aggregation engine over `tables` (cheap clones: the
    /// arrays are shared) and returns its one result.
    pub fn run(&self, tables: &[RecordBatch]) -> Result<RecordBatch, PipelineError> {
        let mut outcome = aggregate(&self.dag, |id| {
            self.scans
                .iter()
                .position(|s| s == id)
                .and_then(|i| tables.get(i).cloned())
                .ok_or_else(|| bench_error(format!("no table for scan '{id}'")))
        });
        if let Some(e) = outcome.errors.into_iter().next() {
            return Err(e);
        }
        match outcome.results.as_slice() {
            [id] => outcome
                .tables
                .remove(id)
                .ok_or_else(|| bench_error(format!("result '{id}' has no table"))),
            ids => Err(bench_error(format!(
                "expected one result, got {}",
                ids.len()
            ))),
        }
    }
}

fn bench_error(message: String) -> PipelineError {
    PipelineError::new(
        "bench",
        ErrorCode::AggregatorFailed,
        Severity::Error,
        message,
    )
}

/// Two scans (`plant`, `warehouse`) and one join combine on `product_id`; the combine is
/// the result.
pub fn join_dag() -> BenchDag {
    let scan = |id: &str, ds: &str, intent: &str, metric: &str| {
        json!({
            "id": id, "datasource_id": ds, "intent": intent,
            "expected_schema": [{"name": "product_id", "dtype": "int"},
                                {"name": metric, "dtype": "int"}]
        })
    };
    let decomposition = json!({
        "sub_queries": [
            scan("t0", "plant", "units produced per product", "units_produced"),
            scan("t1", "warehouse", "units on hand per product", "units_on_hand")
        ],
        "combine_groups": [{
            "group_id": "stock", "operation": "join",
            "inputs": [{"subquery_id": "t0", "role": "left"},
                       {"subquery_id": "t1", "role": "right"}],
            "join_keys": [{"left": "product_id", "right": "product_id"}]
        }]
    });
    BenchDag::plan(&decomposition, 2)
}

/// One scan (`orders`), a standalone combine and an aggregate post op grouping by
/// `store_id` with the sum of `amount` and the count of `order_id`; the post op is the
/// result.
pub fn group_by_dag() -> BenchDag {
    let decomposition = json!({
        "sub_queries": [{
            "id": "t0", "datasource_id": "shop", "intent": "amount of every order and its store",
            "expected_schema": [{"name": "order_id", "dtype": "int"},
                                {"name": "store_id", "dtype": "int"},
                                {"name": "amount", "dtype": "int"}]
        }],
        "combine_groups": [{
            "group_id": "orders", "operation": "standalone",
            "inputs": [{"subquery_id": "t0"}]
        }],
        "post_combine_ops": [{
            "op_id": "per_store", "target_group_id": "orders", "operation": "aggregate",
            "group_by": [{"attribute": "store_id"}],
            "metrics": [{"name": "amount", "aggregation": "sum"},
                        {"name": "order_id", "aggregation": "count"}]
        }]
    });
    BenchDag::plan(&decomposition, 1)
}

/// What is compared between the engine's result and DuckDB's: the column names, the row
/// count and the sum of each column (as integers), which do not depend on row order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Column names, in order.
    pub columns: Vec<String>,
    /// Rows over all batches.
    pub rows: usize,
    /// The sum of the non-null values of each column, cast to 64-bit integers.
    pub sums: Vec<i128>,
}

/// The [`Summary`] of a result given as one or more batches of the same schema.
pub fn summary(batches: &[RecordBatch]) -> Result<Summary, ArrowError> {
    let Some(first) = batches.first() else {
        return Ok(Summary {
            columns: Vec::new(),
            rows: 0,
            sums: Vec::new(),
        });
    };
    let schema = first.schema();
    let columns: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let mut sums = vec![0_i128; columns.len()];
    let mut rows = 0;
    for b in batches {
        if b.num_columns() != columns.len() {
            return Err(ArrowError::SchemaError(
                "batches of different widths".to_owned(),
            ));
        }
        rows += b.num_rows();
        for (sum, column) in sums.iter_mut().zip(b.columns()) {
            let ints = cast(column, &DataType::Int64)?;
            let ints = ints.as_primitive::<Int64Type>();
            *sum += ints.iter().flatten().map(i128::from).sum::<i128>();
        }
    }
    Ok(Summary {
        columns,
        rows,
        sums,
    })
}
