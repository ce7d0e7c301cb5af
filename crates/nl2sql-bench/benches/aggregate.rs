//! Aggregation time: the aggregation engine (Arrow compute kernels, `nl2sql_aggregate`)
//! against DuckDB over the same Arrow data, for the measurement behind the engine choice.
//!
//! - `aggregate/join_1m_x_1m`: a DAG of two scans and a join combine on `product_id`, over
//!   two tables of 1,000,000 rows whose keys match for 90% of the rows (900,000 result rows).
//! - `aggregate/group_by_1m`: a DAG of one scan, a standalone combine and an aggregate post
//!   op grouping 1,000,000 rows into 1,000 stores with a sum and a count.
//! - `aggregate_duckdb/…`: the same operations as SQL in an in-memory DuckDB on one thread:
//!   each iteration registers the batches, scans them with the `arrow(?)` table function
//!   (the load), runs the query and fetches the result as Arrow batches.
//!
//! Both sides start from the same `RecordBatch`es and end with Arrow. Throughput counts the
//! input rows (both tables for the join). Before timing, both must give the same result
//! (column names, row count, column sums). `NL2SQL_BENCH_ROWS` sets the rows of each table
//! (default 1,000,000; the ids carry the size, e.g. `join_10k_x_10k`). Run with
//! `cargo xtask bench aggregate` (release build: DuckDB compiles with optimisations first).

use std::hint::black_box;
use std::time::Duration;

use arrow::array::RecordBatch;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};
#[cfg(feature = "duckdb")]
use duckdb::Connection;
#[cfg(feature = "duckdb")]
use duckdb::vtab::arrow::{ArrowBatchRegistration, ArrowVTab};
use nl2sql_bench::{BenchDag, STORES, size_label, summary};

/// One operation, for both engines.
struct Case {
    /// The function id in both groups.
    name: String,
    /// The inputs: scan `i` of `dag` and `arrow(?)` parameter `i` of `sql` read table `i`.
    tables: Vec<RecordBatch>,
    dag: BenchDag,
    #[cfg_attr(not(feature = "duckdb"), allow(dead_code))]
    sql: &'static str,
    /// Rows of the result.
    result_rows: usize,
}

impl Case {
    fn input_rows(&self) -> u64 {
        self.tables.iter().map(|t| t.num_rows() as u64).sum()
    }
}

fn cases(rows: usize) -> Vec<Case> {
    let label = size_label(rows);
    let (plant, warehouse) = nl2sql_bench::join_tables(rows);
    vec![
        Case {
            name: format!("join_{label}_x_{label}"),
            tables: vec![plant, warehouse],
            dag: nl2sql_bench::join_dag(),
            sql: nl2sql_bench::JOIN_SQL,
            result_rows: rows - rows / 10,
        },
        Case {
            name: format!("group_by_{label}"),
            tables: vec![nl2sql_bench::group_by_table(rows)],
            dag: nl2sql_bench::group_by_dag(),
            sql: nl2sql_bench::GROUP_BY_SQL,
            result_rows: rows.min(STORES as usize),
        },
    ]
}

/// An in-memory DuckDB on one thread (like the engine), with the `arrow` table function.
#[cfg(feature = "duckdb")]
fn duckdb_connection() -> Connection {
    let conn = Connection::open_in_memory().expect("DuckDB opens in memory");
    conn.register_table_function::<ArrowVTab>("arrow")
        .expect("the arrow() table function registers");
    conn.execute_batch("SET threads = 1")
        .expect("DuckDB runs on one thread");
    conn
}

/// Registers `tables`, runs `sql` over them and fetches the result as Arrow.
#[cfg(feature = "duckdb")]
fn duckdb_query(conn: &Connection, sql: &str, tables: &[RecordBatch]) -> Vec<RecordBatch> {
    let registrations: Vec<ArrowBatchRegistration> = tables
        .iter()
        .cloned()
        .map(ArrowBatchRegistration::new)
        .collect();
    let mut statement = conn.prepare(sql).expect("DuckDB prepares the query");
    statement
        .query_arrow(duckdb::params_from_iter(registrations.iter()))
        .expect("DuckDB runs the query")
        .collect()
}

/// The engine's result has the expected size (and, with the `duckdb` feature, equals
/// DuckDB's).
fn check(case: &Case) {
    let engine = case
        .dag
        .run(&case.tables)
        .expect("the engine evaluates the DAG");
    let engine = summary(&[engine]).expect("the engine's result sums");
    #[cfg(feature = "duckdb")]
    {
        let duck = summary(&duckdb_query(&duckdb_connection(), case.sql, &case.tables))
            .expect("DuckDB's result sums");
        assert!(
            engine == duck,
            "{}: the engine gives {engine:?} and DuckDB {duck:?}",
            case.name
        );
    }
    assert!(
        engine.rows == case.result_rows,
        "{}: {} result rows, not {}",
        case.name,
        engine.rows,
        case.result_rows
    );
    eprintln!(
        "{}: {} rows, columns {:?} sum to {:?}",
        case.name, engine.rows, engine.columns, engine.sums
    );
}

/// One iteration takes from tens of milliseconds to a second: ten samples, each timed
/// once.
fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.measurement_time(Duration::from_secs(15));
}

fn aggregate(c: &mut Criterion) {
    let rows = nl2sql_bench::rows_from_env();
    let cases = cases(rows);
    for case in &cases {
        check(case);
    }

    let mut group = c.benchmark_group("aggregate");
    configure(&mut group);
    for case in &cases {
        group.throughput(Throughput::Elements(case.input_rows()));
        group.bench_function(&case.name, |b| {
            b.iter(|| black_box(case.dag.run(black_box(&case.tables))));
        });
    }
    group.finish();

    #[cfg(feature = "duckdb")]
    duckdb_group(c, &cases);
}

/// The same cases in DuckDB.
#[cfg(feature = "duckdb")]
fn duckdb_group(c: &mut Criterion, cases: &[Case]) {
    let conn = duckdb_connection();
    let mut group = c.benchmark_group("aggregate_duckdb");
    configure(&mut group);
    for case in cases {
        group.throughput(Throughput::Elements(case.input_rows()));
        group.bench_function(&case.name, |b| {
            b.iter(|| black_box(duckdb_query(&conn, case.sql, black_box(&case.tables))));
        });
    }
    group.finish();
}

// What `criterion_group!` and `criterion_main!` expand to, without their undocumented
// `pub fn`.
fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    aggregate(&mut criterion);
    criterion.final_summary();
}
