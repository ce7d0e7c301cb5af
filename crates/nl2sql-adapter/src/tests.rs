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
    // SQL errors are the caller's fault: they never open the breaker.
    for _ in 0..5 {
        b.record(Some(&err(ResultErrorCode::ExecutionFailed)));
    }
    assert_eq!(b.state(), BreakerState::Closed);
    b.record(Some(&err(ResultErrorCode::ServiceUnavailable)));
    assert_eq!(b.state(), BreakerState::Closed);
    b.record(Some(&err(ResultErrorCode::ExecutionTimeout)));
    assert_eq!(b.state(), BreakerState::Open);
    let refused = b.before_call().unwrap_err();
    assert_eq!(refused.error_code, ResultErrorCode::ServiceUnavailable);
    assert!(refused.safe_message.contains("circuit breaker open"));
    std::thread::sleep(Duration::from_millis(60));
    assert_eq!(b.state(), BreakerState::HalfOpen);
    b.before_call().unwrap();
    // One failure in half-open re-opens at once.
    b.record(Some(&err(ResultErrorCode::ExecutorCrash)));
    assert_eq!(b.state(), BreakerState::Open);
    std::thread::sleep(Duration::from_millis(60));
    b.before_call().unwrap();
    b.record(None);
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
