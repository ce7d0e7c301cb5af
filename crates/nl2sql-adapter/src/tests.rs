//! Unit tests of the adapter SPI: limits, result building, the breaker, the shape check
//! and safe errors. Adapters are tested against real engines in their own crates.

use std::time::Duration;

use arrow::array::{Array, BooleanArray, Float64Array, Int64Array, StringArray};
use arrow::datatypes::DataType;
use nl2sql_state::Dialect;

use crate::*;

fn limits(row_limit: u64, max_bytes: u64) -> Limits {
    Limits {
        row_limit,
        statement_timeout_ms: 1_000,
        max_bytes,
    }
}

#[test]
fn request_limits_only_narrow() {
    let base = limits(100, 1_000);
    let narrowed = base.narrowed_by(&RequestLimits {
        row_limit: Some(10),
        timeout_ms: Some(5_000),
        max_bytes: None,
    });
    assert_eq!(narrowed.row_limit, 10);
    assert_eq!(
        narrowed.statement_timeout_ms, 1_000,
        "a request cannot widen"
    );
    assert_eq!(narrowed.max_bytes, 1_000);
    assert_eq!(base.narrowed_by(&RequestLimits::default()), base);
}

#[test]
fn adapter_options_default_to_the_spec_defaults() {
    assert_eq!(
        AdapterOptions::default(),
        AdapterOptions {
            connect_timeout_ms: 5_000,
            schema_stats_timeout_ms: 10_000,
            schema_stats_sample_rows: 100_000,
        }
    );
    // A snapshot may take three statistics budgets, never less than one statement.
    let options = AdapterOptions::default();
    assert_eq!(options.snapshot_timeout_ms(&limits(1, 1)), 30_000);
    let spent = AdapterOptions {
        schema_stats_timeout_ms: 0,
        ..options
    };
    assert_eq!(spent.snapshot_timeout_ms(&limits(1, 1)), 1_000);
}

#[test]
fn builder_types_columns_and_keeps_nulls() {
    let mut b = ResultBuilder::new(
        vec!["i".into(), "f".into(), "s".into(), "b".into()],
        vec![
            ColumnKind::Int64,
            ColumnKind::Float64,
            ColumnKind::Utf8,
            ColumnKind::Boolean,
        ],
        limits(10, 1_000),
    );
    assert_eq!(
        b.push_row(vec![
            Cell::Int(1),
            Cell::Int(2),
            Cell::Text("x".into()),
            Cell::Bool(true)
        ]),
        Push::Continue
    );
    b.push_row(vec![Cell::Null, Cell::Float(0.5), Cell::Null, Cell::Null]);
    let f = b.finish("ds", 1.0);
    assert!(f.success && !f.truncated);
    assert_eq!(f.row_count, 2);
    let batch = &f.batches[0];
    let schema = batch.schema();
    let types: Vec<&DataType> = schema.fields().iter().map(|f| f.data_type()).collect();
    assert_eq!(
        types,
        [
            &DataType::Int64,
            &DataType::Float64,
            &DataType::Utf8,
            &DataType::Boolean
        ]
    );
    let i = batch
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    assert_eq!((i.value(0), i.is_null(1)), (1, true));
    let fl = batch
        .column(1)
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap();
    assert_eq!(
        (fl.value(0), fl.value(1)),
        (2.0, 0.5),
        "ints widen into a float column"
    );
    let s = batch
        .column(2)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    assert!(s.is_null(1));
    let bo = batch
        .column(3)
        .as_any()
        .downcast_ref::<BooleanArray>()
        .unwrap();
    assert!(bo.value(0));
    assert_eq!(f.datasource_id.as_deref(), Some("ds"));
    assert!(f.bytes.is_some_and(|n| n > 0));
}

#[test]
fn a_value_that_does_not_fit_turns_the_column_into_text() {
    let mut b = ResultBuilder::new(vec!["x".into()], vec![ColumnKind::Int64], limits(10, 1_000));
    b.push_row(vec![Cell::Int(1)]);
    b.push_row(vec![Cell::Text("two".into())]);
    let f = b.finish("ds", 0.0);
    let col = f.batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<StringArray>()
        .unwrap();
    assert_eq!((col.value(0), col.value(1)), ("1", "two"));
}

#[test]
fn row_limit_and_byte_limit_stop_reading() {
    let mut b = ResultBuilder::new(vec!["x".into()], vec![ColumnKind::Int64], limits(2, 1_000));
    assert_eq!(b.push_row(vec![Cell::Int(1)]), Push::Continue);
    assert_eq!(b.push_row(vec![Cell::Int(2)]), Push::Continue);
    assert_eq!(b.push_row(vec![Cell::Int(3)]), Push::Stop);
    let f = b.finish("ds", 0.0);
    assert_eq!((f.row_count, f.truncated), (2, true));
    assert_eq!(
        f.execution_stats.truncated_reason,
        Some(TruncatedReason::RowLimit)
    );

    let mut b = ResultBuilder::new(vec!["s".into()], vec![ColumnKind::Utf8], limits(100, 20));
    assert_eq!(
        b.push_row(vec![Cell::Text("0123456789".into())]),
        Push::Continue
    );
    assert_eq!(
        b.push_row(vec![Cell::Text("0123456789".into())]),
        Push::Stop
    );
    let f = b.finish("ds", 0.0);
    assert_eq!((f.row_count, f.truncated), (1, true));
    assert_eq!(
        f.execution_stats.truncated_reason,
        Some(TruncatedReason::MaxBytes)
    );
}

#[test]
fn an_empty_result_keeps_its_schema() {
    let b = ResultBuilder::new(
        vec!["a".into(), "b".into()],
        vec![ColumnKind::Int64, ColumnKind::Utf8],
        limits(10, 100),
    );
    let f = b.finish("ds", 0.0);
    assert_eq!(f.row_count, 0);
    assert_eq!(f.columns(), ["a", "b"]);
    assert_eq!(f.schema.unwrap().field(0).data_type(), &DataType::Int64);
}

fn err(code: ResultErrorCode) -> ResultError {
    ResultError::new(code, "x")
}

#[test]
fn breaker_opens_after_counted_failures_and_half_opens_after_the_timeout() {
    let b = CircuitBreaker::new(
        "db:test",
        BreakerConfig {
            fail_max: 2,
            reset_timeout: Duration::from_millis(50),
        },
    );
    let call = |error: Option<ResultErrorCode>| {
        b.enter().unwrap().settle(error.map(err).as_ref());
    };
    // SQL errors are the caller's fault: they never open the breaker.
    for _ in 0..5 {
        call(Some(ResultErrorCode::ExecutionFailed));
    }
    assert_eq!(b.state(), BreakerState::Closed);
    call(Some(ResultErrorCode::ServiceUnavailable));
    assert_eq!(b.state(), BreakerState::Closed);
    call(Some(ResultErrorCode::ExecutionTimeout));
    assert_eq!(b.state(), BreakerState::Open);
    let refused = b.enter().unwrap_err();
    assert_eq!(refused.error_code, ResultErrorCode::ServiceUnavailable);
    assert!(refused.safe_message.contains("circuit breaker open"));
    std::thread::sleep(Duration::from_millis(60));
    // After the timeout, one trial call; a second waits for its outcome.
    let trial = b.enter().unwrap();
    assert_eq!(b.state(), BreakerState::HalfOpen);
    assert!(b.enter().is_err(), "one trial at a time");
    // One failure in half-open re-opens at once.
    trial.settle(Some(&err(ResultErrorCode::ExecutorCrash)));
    assert_eq!(b.state(), BreakerState::Open);
    std::thread::sleep(Duration::from_millis(60));
    // A trial abandoned without an outcome (a cancelled call) re-opens it too.
    drop(b.enter().unwrap());
    assert_eq!(b.state(), BreakerState::Open);
    std::thread::sleep(Duration::from_millis(60));
    call(None);
    assert_eq!(b.state(), BreakerState::Closed);
}

#[test]
fn shape_check_refuses_what_is_not_a_query() {
    assert!(shape_check("ds", Dialect::Sqlite, "SELECT 1").is_ok());
    for sql in [
        "DELETE FROM t",
        "DROP TABLE t",
        "ATTACH 'x.db' AS y",
        "PRAGMA writable_schema = 1",
        "SELECT 1; SELECT 2",
    ] {
        let e = shape_check("ds", Dialect::Sqlite, sql).unwrap_err();
        assert_eq!(e.error_code, ResultErrorCode::SecurityViolation, "{sql}");
        assert!(!e.retryable, "{sql}");
    }
    let e = shape_check("ds", Dialect::Sqlite, "SELEC 1").unwrap_err();
    assert_eq!(e.error_code, ResultErrorCode::ExecutionFailed);
}

#[test]
fn driver_text_never_leaves_the_error() {
    let e = ResultError::from_engine(
        ResultErrorCode::ExecutionFailed,
        "connection to postgres://admin:hunter2@db.internal:5432/x failed",
    );
    assert_eq!(
        e.detail.as_deref().map(|d| d.contains("hunter2")),
        Some(true)
    );
    let json = serde_json::to_string(&e).unwrap();
    assert!(!json.contains("hunter2"), "{json}");
    assert!(!e.safe_message.contains("hunter2"), "{}", e.safe_message);
    let p = e.to_pipeline_error("executor");
    assert_eq!(p.code, nl2sql_state::ErrorCode::ExecutionFailed);
    assert!(e.retryable);
    assert!(!err(ResultErrorCode::SecurityViolation).retryable);
}

/// An adapter whose dry run and cost estimate are scripted, counting calls.
struct Scripted {
    caps: CapabilitySet,
    dry: DryRunResult,
    cost: Result<CostEstimate, ResultError>,
    calls: std::sync::atomic::AtomicUsize,
}

impl Scripted {
    fn new(dry: DryRunResult, cost: Result<CostEstimate, ResultError>) -> Self {
        Scripted {
            caps: CapabilitySet::new(&[
                Capability::SupportsSql,
                Capability::SupportsDryRun,
                Capability::SupportsCostEstimate,
            ]),
            dry,
            cost,
            calls: std::sync::atomic::AtomicUsize::new(0),
        }
    }
    fn calls(&self) -> usize {
        self.calls.load(std::sync::atomic::Ordering::SeqCst)
    }
}

fn valid_dry_run() -> DryRunResult {
    DryRunResult {
        is_valid: true,
        error_message: None,
        data: None,
        error: None,
    }
}

#[async_trait::async_trait]
impl DatasourceAdapter for Scripted {
    fn id(&self) -> &str {
        "ops"
    }
    fn engine_type(&self) -> &str {
        "fake"
    }
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }
    fn capabilities(&self) -> &CapabilitySet {
        &self.caps
    }
    fn limits(&self) -> Limits {
        limits(100, 1_000_000)
    }
    async fn test_connection(&self) -> Result<(), ResultError> {
        Ok(())
    }
    async fn schema_snapshot(&self) -> Result<nl2sql_state::SchemaSnapshot, ResultError> {
        Err(err(ResultErrorCode::CapabilityViolation))
    }
    async fn run_sql(&self, _sql: &nl2sql_validate::GuardedSql, _limits: Limits) -> ResultFrame {
        ResultFrame::failed(err(ResultErrorCode::CapabilityViolation), 0.0)
    }
    async fn dry_run(&self, _sql: &nl2sql_validate::GuardedSql) -> DryRunResult {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.dry.clone()
    }
    async fn cost_estimate(
        &self,
        _sql: &nl2sql_validate::GuardedSql,
    ) -> Result<CostEstimate, ResultError> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.cost.clone()
    }
    async fn explain(&self, _sql: &nl2sql_validate::GuardedSql) -> Result<QueryPlan, ResultError> {
        Err(err(ResultErrorCode::CapabilityViolation))
    }
    fn details(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}

fn orders_contract() -> nl2sql_state::SchemaContract {
    let columns =
        [("id", "bigint"), ("total", "numeric")].map(|(c, t)| introspect::CatalogColumn {
            schema: "public".into(),
            table: "orders".into(),
            column: c.into(),
            data_type: t.into(),
            nullable: false,
        });
    introspect::assemble_contract("ops", "postgres", &columns, &[], &[])
}

fn breaker() -> CircuitBreaker {
    CircuitBreaker::new(
        "db:ops",
        BreakerConfig {
            fail_max: 2,
            reset_timeout: Duration::from_secs(60),
        },
    )
}

fn codes(report: &PhysicalReport) -> Vec<(nl2sql_state::ErrorCode, nl2sql_state::Severity)> {
    report.errors.iter().map(|e| (e.code, e.severity)).collect()
}

#[tokio::test]
async fn physical_validation_stops_at_the_guard_before_the_engine() {
    let a = Scripted::new(valid_dry_run(), Ok(CostEstimate::default()));
    let report = validate_physical(
        &a,
        &breaker(),
        &orders_contract(),
        "SELECT nope FROM orders",
        &PhysicalSettings::default(),
    )
    .await;
    assert!(report.is_blocking());
    assert_eq!(
        a.calls(),
        0,
        "the engine was asked about SQL the guard refused"
    );
    // Generated SQL that fails the guard is the generator's fault.
    let report = validate_physical(
        &a,
        &breaker(),
        &orders_contract(),
        "SELECT nope FROM orders",
        &PhysicalSettings {
            generated: true,
            ..PhysicalSettings::default()
        },
    )
    .await;
    assert_eq!(
        codes(&report),
        vec![(
            nl2sql_state::ErrorCode::SqlGenFailed,
            nl2sql_state::Severity::Error
        )]
    );
}

#[tokio::test]
async fn physical_validation_reports_dry_run_failures_and_cost_limits() {
    let rejected = DryRunResult {
        is_valid: false,
        error_message: Some("column \"totl\" does not exist".into()),
        data: None,
        error: Some(err(ResultErrorCode::ExecutionFailed)),
    };
    let a = Scripted::new(rejected, Ok(CostEstimate::default()));
    let report = validate_physical(
        &a,
        &breaker(),
        &orders_contract(),
        "SELECT id FROM orders",
        &PhysicalSettings::default(),
    )
    .await;
    assert_eq!(
        codes(&report),
        vec![(
            nl2sql_state::ErrorCode::ExecutionError,
            nl2sql_state::Severity::Error
        )]
    );
    assert!(report.errors[0].message.contains("totl"));
    assert_eq!(a.calls(), 1, "no cost estimate after a failed dry run");

    let estimate = CostEstimate {
        estimated_cost: Some(5_000.0),
        estimated_rows: Some(250),
        estimated_time_ms: None,
    };
    let a = Scripted::new(valid_dry_run(), Ok(estimate));
    let sql = "SELECT id, total FROM orders";
    // 250 estimated rows over the row limit of 100: a warning only.
    let report = validate_physical(
        &a,
        &breaker(),
        &orders_contract(),
        sql,
        &PhysicalSettings::default(),
    )
    .await;
    assert_eq!(
        codes(&report),
        vec![(
            nl2sql_state::ErrorCode::PerformanceWarning,
            nl2sql_state::Severity::Warning
        )]
    );
    assert!(!report.is_blocking());
    assert_eq!(report.cost.as_ref().unwrap().estimated_rows, Some(250));
    // A cost over the configured maximum blocks.
    let settings = PhysicalSettings {
        max_cost: Some(1_000.0),
        ..PhysicalSettings::default()
    };
    let report = validate_physical(&a, &breaker(), &orders_contract(), sql, &settings).await;
    assert!(report.is_blocking());
    assert!(report.errors.iter().any(|e| e.message.contains("5000")));
}

#[tokio::test]
async fn physical_validation_goes_through_the_breaker() {
    let down = DryRunResult {
        is_valid: false,
        error_message: Some("cannot connect".into()),
        data: None,
        error: Some(err(ResultErrorCode::ServiceUnavailable)),
    };
    let a = Scripted::new(down, Ok(CostEstimate::default()));
    let b = breaker();
    let sql = "SELECT id FROM orders";
    for _ in 0..2 {
        let r = validate_physical(
            &a,
            &b,
            &orders_contract(),
            sql,
            &PhysicalSettings::default(),
        )
        .await;
        assert_eq!(
            r.errors[0].code,
            nl2sql_state::ErrorCode::ServiceUnavailable
        );
    }
    assert_eq!(b.state(), BreakerState::Open);
    let r = validate_physical(
        &a,
        &b,
        &orders_contract(),
        sql,
        &PhysicalSettings::default(),
    )
    .await;
    assert_eq!(
        r.errors[0].code,
        nl2sql_state::ErrorCode::ServiceUnavailable
    );
    assert_eq!(a.calls(), 2, "an open breaker still called the engine");
}

#[test]
fn the_fixture_loads_in_foreign_key_order_for_every_server_dialect() {
    let tables = fixture::tables();
    let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, conformance::FIXTURE_TABLES);
    for (i, t) in tables.iter().enumerate() {
        for fk in &t.foreign_keys {
            let at = names
                .iter()
                .position(|n| *n == fk.references_table)
                .unwrap();
            assert!(
                at < i,
                "{} references {} defined later",
                t.name,
                fk.references_table
            );
        }
    }
    let rows: usize = tables.iter().map(|t| t.rows.len()).sum();
    for dialect in [Dialect::Postgres, Dialect::MySql, Dialect::DuckDb] {
        let stmts = fixture::load_statements(dialect, Some("fx"));
        let inserts = stmts.iter().filter(|s| s.starts_with("INSERT")).count();
        // The engines themselves run these in each adapter's tests.
        assert_eq!(inserts, tables.len(), "{dialect:?}");
        assert!(stmts[0].starts_with("CREATE SCHEMA IF NOT EXISTS"));
    }
    assert_eq!(rows, 37);
    let mysql = fixture::load_statements(Dialect::MySql, None).join("\n");
    assert!(
        mysql.contains("`sku` VARCHAR(255) NOT NULL UNIQUE"),
        "{mysql}"
    );
    assert!(mysql.contains("'Hansen, Soto and Ward'"));
}

#[test]
fn statistics_classes_follow_engine_type_names() {
    use introspect::{StatClass, stat_class};
    for (t, c) in [
        ("bigint", StatClass::Integer),
        ("int(11) unsigned", StatClass::Integer),
        ("INTEGER", StatClass::Integer),
        ("DECIMAL(18,3)", StatClass::Number),
        ("double precision", StatClass::Number),
        ("character varying(255)", StatClass::Text),
        ("VARCHAR", StatClass::Text),
        ("enum('a','b')", StatClass::Text),
        ("timestamp without time zone", StatClass::Temporal),
        ("DATE", StatClass::Temporal),
        ("boolean", StatClass::Boolean),
        ("jsonb", StatClass::Skip),
        ("INTEGER[]", StatClass::Skip),
        ("point", StatClass::Skip),
        ("interval", StatClass::Skip),
    ] {
        assert_eq!(stat_class(t), c, "{t}");
    }
    let s = introspect::statistics(
        StatClass::Integer,
        10,
        8,
        3,
        Some("1".into()),
        Some("9".into()),
    );
    assert!((s.null_percentage - 0.2).abs() < 1e-9);
    assert_eq!(s.min_value, Some(serde_json::json!(1)));
    assert!(introspect::lists_values(StatClass::Text, 3));
    assert!(introspect::lists_values(StatClass::Text, 200));
    assert!(!introspect::lists_values(StatClass::Text, 201));
    assert!(!introspect::lists_values(StatClass::Integer, 3));
    assert_eq!(
        introspect::stats_sql(Dialect::MySql, "`t`", "c", StatClass::Text).unwrap(),
        "SELECT count(*), count(`c`), count(DISTINCT `c`), CAST(min(`c`) AS CHAR), CAST(max(`c`) AS CHAR) FROM `t`"
    );
}

#[test]
fn contracts_group_composite_foreign_keys_by_constraint() {
    let t = |n: &str| nl2sql_state::TableRef {
        schema_name: "s".into(),
        table_name: n.into(),
    };
    let col = |table: &str, c: &str| introspect::CatalogColumn {
        schema: "s".into(),
        table: table.into(),
        column: c.into(),
        data_type: "int".into(),
        nullable: true,
    };
    let columns = [col("a", "x"), col("a", "y"), col("b", "x"), col("b", "y")];
    let fk = |c: &str, rc: &str| introspect::CatalogForeignKey {
        name: "fk_ab".into(),
        table: t("b"),
        column: c.into(),
        referred_table: t("a"),
        referred_column: rc.into(),
    };
    let contract = introspect::assemble_contract(
        "ds",
        "postgres",
        &columns,
        &[(t("a"), "x".into()), (t("a"), "y".into())],
        &[fk("x", "x"), fk("y", "y")],
    );
    let b = &contract.tables["s.b"];
    assert_eq!(b.foreign_keys.len(), 1);
    assert_eq!(b.foreign_keys[0].constrained_columns, ["x", "y"]);
    assert_eq!(b.foreign_keys[0].business_meaning, None);
    assert!(contract.tables["s.a"].columns["y"].is_primary_key);
    assert!(!b.columns["y"].is_primary_key);
}

#[test]
fn statistics_read_a_sample_of_big_tables_and_order_tied_samples_by_value() {
    // GAP-41: a table over the sample size is read through a LIMIT sub-query; one within
    // it (or of unknown size but under the limit) is read whole.
    assert_eq!(
        introspect::stats_source(Dialect::Postgres, "s", "big", Some(1_000_001), 1_000_000),
        r#"(SELECT * FROM "s"."big" LIMIT 1000000) AS nl2sql_sample"#
    );
    assert_eq!(
        introspect::stats_source(Dialect::MySql, "s", "small", Some(10), 1_000_000),
        "`s`.`small`"
    );
    assert_eq!(
        introspect::stats_source(Dialect::DuckDb, "main", "t", None, 100),
        r#"(SELECT * FROM "main"."t" LIMIT 100) AS nl2sql_sample"#,
        "an unknown row count is sampled"
    );
    // Values: most frequent first, ties broken by the value itself, in every dialect.
    for (dialect, c) in [
        (Dialect::Postgres, r#""colour""#),
        (Dialect::DuckDb, r#""colour""#),
        (Dialect::Sqlite, r#""colour""#),
        (Dialect::MySql, "`colour`"),
    ] {
        let sql = introspect::values_sql(dialect, "src", "colour");
        assert!(
            sql.ends_with(&format!(
                "GROUP BY {c} ORDER BY count(*) DESC, {c} LIMIT {}",
                introspect::VALUE_LIST_LIMIT
            )),
            "{dialect:?}: {sql}"
        );
        assert!(sql.contains(&format!("WHERE {c} IS NOT NULL")), "{sql}");
    }
}

#[test]
fn values_are_listed_only_when_all_are_read_and_fit() {
    let read = |n: usize| (0..n).map(|i| format!("v{i}")).collect::<Vec<_>>();
    let stats = |distinct: u64| nl2sql_state::ColumnStatistics {
        distinct_count: distinct,
        ..Default::default()
    };
    // Few values: all listed, the first five sampled.
    let mut s = stats(7);
    introspect::fill_values(&mut s, read(7));
    assert_eq!(s.values.len(), 7);
    assert_eq!(s.sample_values, s.values[..introspect::SAMPLE_VALUES]);
    // More than LOW_CARDINALITY: listed, not sampled (the context shows no samples).
    let mut s = stats(50);
    introspect::fill_values(&mut s, read(50));
    assert_eq!((s.values.len(), s.sample_values.len()), (50, 0));
    // Fewer read than there are (a column that changed): not listed, a list is complete.
    let mut s = stats(9);
    introspect::fill_values(&mut s, read(8));
    assert!(s.values.is_empty());
    assert_eq!(s.sample_values.len(), introspect::SAMPLE_VALUES);
    // Values too long together: not listed.
    let mut s = stats(3);
    let long = "x".repeat(introspect::VALUE_LIST_CHARS / 2);
    introspect::fill_values(&mut s, vec![long.clone(), long, "y".into()]);
    assert!(s.values.is_empty());
}

#[test]
fn a_read_the_guard_did_not_resolve_is_reported() {
    use crate::differential::{Reads, unseen};
    let engine: Reads = [
        (
            "singer".to_owned(),
            ["name", "age"].map(str::to_owned).into(),
        ),
        ("secret".to_owned(), std::collections::BTreeSet::new()),
    ]
    .into();
    let guard: Reads = [("singer".to_owned(), ["name".to_owned()].into())].into();
    assert_eq!(unseen(&engine, &guard), ["secret", "singer.age"]);
    assert!(unseen(&guard, &engine).is_empty());
}

#[test]
fn the_differential_corpus_is_the_same_on_every_run_and_varied() {
    let a = differential::generated(50);
    assert_eq!(a, differential::generated(50));
    let distinct: std::collections::BTreeSet<&String> = a.iter().collect();
    assert!(distinct.len() > 40, "{a:#?}");
    assert!(a.iter().any(|s| s.contains("GROUP BY")));
    assert!(a.iter().any(|s| s.contains("LEFT JOIN")));
    assert!(a.iter().any(|s| s.contains(" IN (SELECT")));
}

#[tokio::test]
async fn spawn_on_drop_runs_its_cleanup_only_when_dropped_armed() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<&'static str>();
    // Dropped armed (a call whose future went away): the cleanup gets the value.
    let sender = tx.clone();
    let mut armed = SpawnOnDrop::new("statement 1", move |v| async move {
        let _ = sender.send(v);
    });
    assert_eq!(armed.get_mut().map(|v| *v), Some("statement 1"));
    drop(armed);
    let got = tokio::time::timeout(Duration::from_secs(5), rx.recv()).await;
    assert_eq!(got.ok().flatten(), Some("statement 1"));
    // Disarmed (the call decided for itself): the value comes back and nothing runs.
    let sender = tx.clone();
    let mut disarmed = SpawnOnDrop::new("statement 2", move |v| async move {
        let _ = sender.send(v);
    });
    assert_eq!(disarmed.disarm(), Some("statement 2"));
    assert!(disarmed.get_mut().is_none());
    drop(disarmed);
    drop(tx);
    let rest = tokio::time::timeout(Duration::from_secs(5), rx.recv()).await;
    assert_eq!(rest.ok().flatten(), None);
}
