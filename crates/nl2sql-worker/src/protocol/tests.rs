//! Round trips of every protocol type through its JSON line, and of result frames through
//! Arrow IPC.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int64Array,
    StringArray, TimestampMicrosecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use arrow::record_batch::RecordBatch;
use nl2sql_adapter::{
    Capability, CapabilitySet, CostEstimate, DryRunResult, ExecutionStats, Limits, PlanFormat,
    QueryPlan, RequestLimits, ResultError, ResultErrorCode, ResultFrame, TruncatedReason,
};
use nl2sql_state::{
    ColumnContract, ColumnMetadata, ColumnStatistics, Dialect, SchemaContract, SchemaMetadata,
    SchemaSnapshot, TableContract, TableMetadata, TableRef,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::*;

/// `value` as one JSON line and back: exactly one newline, at the end, and an equal value.
fn check<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(value: &T) -> String {
    let line = to_line(value).unwrap();
    assert!(line.ends_with('\n'), "{line}");
    assert_eq!(line.matches('\n').count(), 1, "more than one line: {line}");
    let back: T = serde_json::from_str(line.trim_end()).unwrap();
    assert_eq!(&back, value);
    line
}

const ALL_MODES: [Mode; 9] = [
    Mode::Describe,
    Mode::TestConnection,
    Mode::FetchSchema,
    Mode::SchemaContract,
    Mode::Execute,
    Mode::RunSql,
    Mode::DryRun,
    Mode::CostEstimate,
    Mode::Explain,
];

#[test]
fn requests_round_trip_in_every_mode() {
    for (i, mode) in ALL_MODES.into_iter().enumerate() {
        let request = ExecutionRequest::new(i as u64, mode)
            .with_sql("SELECT 1\nFROM t -- a comment with \"quotes\"")
            .with_limits(RequestLimits {
                row_limit: Some(10),
                timeout_ms: Some(250),
                max_bytes: None,
            });
        let line = check(&request);
        assert!(
            line.contains(&format!("\"mode\":\"{}\"", mode.as_str())),
            "{line}"
        );
        assert_eq!(ExecutionRequest::from_line(&line).unwrap(), request);
        assert_eq!(request.to_line().unwrap(), line);
    }
}

#[test]
fn request_wire_form_is_the_contract() {
    let mut request = ExecutionRequest::new(7, Mode::RunSql).with_sql("SELECT 1");
    request.trace_id = Some("t-1".to_owned());
    assert_eq!(
        request.to_line().unwrap(),
        "{\"id\":7,\"mode\":\"run_sql\",\"sql\":\"SELECT 1\",\"limits\":{\"row_limit\":null,\"timeout_ms\":null,\"max_bytes\":null},\"trace_id\":\"t-1\"}\n"
    );
    // Only the mode is required.
    let minimal = ExecutionRequest::from_line("{\"mode\":\"test_connection\"}").unwrap();
    assert_eq!(minimal, ExecutionRequest::new(0, Mode::TestConnection));
}

#[test]
fn malformed_requests_do_not_parse() {
    for line in [
        "",
        "not json",
        "{\"mode\":\"drop_everything\"}",
        "{\"id\":1}",
        "{\"mode\":\"execute\",\"limits\":{\"row_limit\":-1}}",
        "[1,2,3]",
    ] {
        assert!(
            matches!(
                ExecutionRequest::from_line(line),
                Err(ProtocolError::Json(_))
            ),
            "{line:?} parsed"
        );
    }
    let error = malformed_request("bad");
    assert_eq!(error.error_code, ResultErrorCode::ExecutionFailed);
    assert!(!error.retryable);
}

fn error() -> ResultError {
    let mut e = ResultError::new(ResultErrorCode::ExecutionTimeout, "the statement timed out")
        .at("execute", "sales");
    e.error_id = Some("e-42".to_owned());
    e
}

fn result(data: Option<ResultData>, success: bool, error: Option<ResultError>) -> ExecutionResult {
    ExecutionResult {
        id: Some(3),
        success,
        data,
        error,
        metrics: Metrics {
            execution_time_ms: 12.5,
        },
    }
}

fn info() -> WorkerInfo {
    WorkerInfo {
        protocol_version: PROTOCOL_VERSION,
        id: "sales".to_owned(),
        engine_type: "sqlite".to_owned(),
        dialect: Dialect::Sqlite,
        capabilities: CapabilitySet::new(&[Capability::SupportsSql, Capability::SupportsDryRun]),
        limits: Limits {
            row_limit: 7,
            statement_timeout_ms: 1234,
            max_bytes: 99,
        },
        details: serde_json::json!({"id": "sales", "file": "sales.db"}),
    }
}

/// Floats that the default (fast) JSON float parser can get wrong by one ULP: 17
/// significant digits, tiny and huge exponents.
fn hard_floats() -> [f64; 5] {
    [
        0.1 + 0.2,
        1.0 / 3.0,
        f64::from_bits(0x3FF0_0000_0000_0001),
        f64::from_bits(0x01A5_6E1F_C2F8_F359),
        f64::from_bits(0x7E37_E43C_8800_759C),
    ]
}

fn snapshot() -> SchemaSnapshot {
    let table = TableRef {
        schema_name: "main".to_owned(),
        table_name: "orders".to_owned(),
    };
    let columns = [("id", "INTEGER", true), ("amount", "REAL", false)]
        .into_iter()
        .map(|(name, ty, pk)| {
            let column = ColumnContract {
                name: name.to_owned(),
                data_type: ty.to_owned(),
                is_nullable: !pk,
                is_primary_key: pk,
            };
            (name.to_owned(), column)
        })
        .collect();
    let contract = SchemaContract {
        datasource_id: "sales".to_owned(),
        engine_type: "sqlite".to_owned(),
        tables: [(
            "main.orders".to_owned(),
            TableContract {
                table: table.clone(),
                columns,
                foreign_keys: Vec::new(),
            },
        )]
        .into_iter()
        .collect(),
    };
    let statistics = ColumnStatistics {
        null_percentage: hard_floats()[1],
        distinct_count: 3,
        min_value: Some(serde_json::json!(hard_floats()[0])),
        max_value: Some(serde_json::json!(hard_floats()[3])),
        sample_values: hard_floats().iter().map(|f| serde_json::json!(f)).collect(),
        values: Vec::new(),
    };
    let meta_columns = [(
        "amount".to_owned(),
        ColumnMetadata {
            statistics: Some(statistics),
            ..ColumnMetadata::default()
        },
    )]
    .into_iter()
    .collect();
    let metadata = SchemaMetadata {
        datasource_id: "sales".to_owned(),
        engine_type: "sqlite".to_owned(),
        tables: [(
            "main.orders".to_owned(),
            TableMetadata {
                table,
                columns: meta_columns,
                row_count: Some(3),
                description: Some("orders, one per line\nsecond line".to_owned()),
            },
        )]
        .into_iter()
        .collect(),
        ..SchemaMetadata::default()
    };
    SchemaSnapshot {
        contract,
        metadata: Some(metadata),
    }
}

#[test]
fn every_result_kind_round_trips() {
    let plan = QueryPlan {
        plan_text: "SCAN orders".to_owned(),
        format: PlanFormat::Text,
    };
    let dry_invalid = DryRunResult {
        is_valid: false,
        error_message: Some("no such column: nope".to_owned()),
        data: None,
        error: Some(error()),
    };
    let dry_valid = DryRunResult {
        is_valid: true,
        error_message: None,
        data: Some(serde_json::json!({"plan": ["SCAN orders"], "cost": hard_floats()[2]})),
        error: None,
    };
    let snapshot = snapshot();
    let results = [
        result(Some(ResultData::Worker(info())), true, None),
        result(
            Some(ResultData::Snapshot(Box::new(snapshot.clone()))),
            true,
            None,
        ),
        result(
            Some(ResultData::Contract(Box::new(snapshot.contract.clone()))),
            true,
            None,
        ),
        result(Some(ResultData::DryRun(dry_valid)), true, None),
        result(Some(ResultData::DryRun(dry_invalid)), false, None),
        result(
            Some(ResultData::CostEstimate(CostEstimate {
                estimated_cost: Some(hard_floats()[0]),
                estimated_rows: Some(u64::MAX),
                estimated_time_ms: None,
            })),
            true,
            None,
        ),
        result(Some(ResultData::Plan(plan)), true, None),
        result(None, true, None),
        ExecutionResult::failure(None, error(), 0.0),
        result(
            Some(ResultData::Frame(
                WireFrame::encode(&typed_frame()).unwrap(),
            )),
            true,
            None,
        ),
    ];
    for r in &results {
        let line = check(r);
        assert_eq!(ExecutionResult::from_line(&line).unwrap(), *r);
        if let Some(data) = &r.data {
            assert!(
                line.contains(&format!("\"kind\":\"{}\"", data.kind())),
                "{line}"
            );
        }
    }
    // Floats survive exactly, not to within an ULP.
    let line = results[1].to_line().unwrap();
    let Some(ResultData::Snapshot(back)) = ExecutionResult::from_line(&line).unwrap().data else {
        panic!("not a snapshot: {line}");
    };
    let stats = back.metadata.unwrap().tables["main.orders"].columns["amount"]
        .statistics
        .clone()
        .unwrap();
    let samples: Vec<u64> = stats
        .sample_values
        .iter()
        .map(|v| v.as_f64().unwrap().to_bits())
        .collect();
    let want: Vec<u64> = hard_floats().iter().map(|f| f.to_bits()).collect();
    assert_eq!(samples, want);
    assert_eq!(stats.null_percentage.to_bits(), hard_floats()[1].to_bits());
}

#[test]
fn result_errors_keep_code_and_drop_the_driver_text() {
    let mut e = error();
    e.detail = Some("/secret/path/db.sqlite: disk I/O error".to_owned());
    let line = ExecutionResult::failure(Some(9), e.clone(), 1.0)
        .to_line()
        .unwrap();
    assert!(
        line.contains("\"error_code\":\"EXECUTION_TIMEOUT\""),
        "{line}"
    );
    assert!(!line.contains("/secret/path"), "{line}");
    let back = ExecutionResult::from_line(&line).unwrap().error.unwrap();
    assert_eq!(back.error_code, ResultErrorCode::ExecutionTimeout);
    assert_eq!(
        back.error_code.pipeline_code(),
        e.error_code.pipeline_code()
    );
    assert_eq!(back.detail, None);
    e.detail = None;
    assert_eq!(back, e);
}

fn typed_frame() -> ResultFrame {
    let schema = Arc::new(Schema::new_with_metadata(
        vec![
            Field::new("id", DataType::Int64, false),
            Field::new("amount", DataType::Float64, true),
            Field::new("name", DataType::Utf8, true),
            Field::new("price", DataType::Decimal128(12, 2), true),
            Field::new("day", DataType::Date32, true),
            Field::new(
                "at",
                DataType::Timestamp(TimeUnit::Microsecond, Some("+02:00".into())),
                true,
            ),
            Field::new("blob", DataType::Binary, true),
            Field::new("ok", DataType::Boolean, true),
        ],
        std::collections::HashMap::from([("origin".to_owned(), "test".to_owned())]),
    ));
    let batch = |offset: i64| {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(vec![offset, offset + 1])),
            Arc::new(Float64Array::from(vec![Some(hard_floats()[0]), None])),
            Arc::new(StringArray::from(vec![Some("a\nb"), None])),
            Arc::new(
                Decimal128Array::from(vec![Some(12_345), None])
                    .with_precision_and_scale(12, 2)
                    .unwrap(),
            ),
            Arc::new(Date32Array::from(vec![Some(19_000), None])),
            Arc::new(
                TimestampMicrosecondArray::from(vec![Some(1_700_000_000_000_000), None])
                    .with_timezone("+02:00"),
            ),
            Arc::new(BinaryArray::from(vec![Some(&b"\x00\xff"[..]), None])),
            Arc::new(BooleanArray::from(vec![Some(true), None])),
        ];
        RecordBatch::try_new(Arc::clone(&schema), columns).unwrap()
    };
    ResultFrame {
        success: true,
        schema: Some(Arc::clone(&schema)),
        batches: vec![batch(1), batch(3)],
        row_count: 4,
        truncated: true,
        bytes: Some(1234),
        datasource_id: Some("sales".to_owned()),
        tenant_id: Some("acme".to_owned()),
        execution_stats: ExecutionStats {
            execution_time_ms: 3.25,
            truncated_reason: Some(TruncatedReason::RowLimit),
        },
        error: None,
    }
}

/// The frame through the wire and back equals the frame.
fn check_frame(frame: &ResultFrame) {
    let wire = WireFrame::encode(frame).unwrap();
    let line = to_line(&wire).unwrap();
    let wire: WireFrame = serde_json::from_str(line.trim_end()).unwrap();
    let back = wire.into_frame(frame.success, frame.error.clone()).unwrap();
    assert_eq!(back.success, frame.success);
    assert_eq!(back.schema, frame.schema);
    assert_eq!(back.batches, frame.batches);
    assert_eq!(back.row_count, frame.row_count);
    assert_eq!(back.truncated, frame.truncated);
    assert_eq!(back.bytes, frame.bytes);
    assert_eq!(back.datasource_id, frame.datasource_id);
    assert_eq!(back.tenant_id, frame.tenant_id);
    assert_eq!(back.execution_stats, frame.execution_stats);
    assert_eq!(back.error, frame.error);
}

#[test]
fn frames_keep_types_values_and_metadata() {
    let frame = typed_frame();
    check_frame(&frame);
    // A schema without rows, and a failed frame without a schema.
    let empty = ResultFrame {
        batches: Vec::new(),
        row_count: 0,
        ..typed_frame()
    };
    check_frame(&empty);
    let failed = ResultFrame::failed(error(), 2.0);
    check_frame(&failed);
    assert_eq!(WireFrame::encode(&failed).unwrap().arrow_ipc, None);
}

#[test]
fn corrupt_frames_are_errors_not_panics() {
    let mut wire = WireFrame::encode(&typed_frame()).unwrap();
    wire.arrow_ipc = Some("not base64!".to_owned());
    assert!(matches!(
        wire.clone().into_frame(true, None),
        Err(ProtocolError::Base64(_))
    ));
    wire.arrow_ipc = Some(BASE64.encode(b"definitely not arrow"));
    assert!(matches!(
        wire.into_frame(true, None),
        Err(ProtocolError::Arrow(_))
    ));
}

#[test]
fn modes_name_their_stage() {
    let stages: BTreeMap<&str, &str> = ALL_MODES
        .into_iter()
        .map(|m| (m.as_str(), m.stage()))
        .collect();
    assert_eq!(stages["execute"], "execute");
    assert_eq!(stages["run_sql"], "execute");
    assert_eq!(stages["fetch_schema"], "schema_snapshot");
    assert_eq!(stages["dry_run"], "dry_run");
    assert_eq!(stages.len(), ALL_MODES.len());
    for mode in ALL_MODES {
        let json = serde_json::to_value(mode).unwrap();
        assert_eq!(json, serde_json::json!(mode.as_str()));
    }
}
