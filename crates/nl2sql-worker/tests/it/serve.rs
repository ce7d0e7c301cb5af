//! `serve` in memory over a real SQLite adapter: one result line per request line, in
//! order; malformed lines get a failed result and the loop goes on; EOF ends it.

use std::sync::Arc;

use nl2sql_adapter::{DatasourceAdapter, ResultErrorCode};
use nl2sql_test_support::TempDir;
use nl2sql_worker::{
    ExecutionRequest, ExecutionResult, MAX_REQUEST_LINE_BYTES, Mode, ResultData, serve,
};

use crate::{copy_fixture, in_process};

/// Serves `input` and returns the result lines.
async fn check(input: &[u8]) -> Vec<ExecutionResult> {
    let dir = TempDir::new("worker-serve");
    let adapter: Arc<dyn DatasourceAdapter> = Arc::new(in_process(&copy_fixture(&dir)));
    let mut output = Vec::new();
    serve(adapter, input, &mut output).await.unwrap();
    let text = String::from_utf8(output).unwrap();
    assert!(text.is_empty() || text.ends_with('\n'), "{text}");
    text.lines()
        .map(|line| ExecutionResult::from_line(line).unwrap())
        .collect()
}

fn line(request: &ExecutionRequest) -> String {
    request.to_line().unwrap()
}

#[tokio::test]
async fn malformed_lines_get_error_results_and_serving_goes_on() {
    let count = ExecutionRequest::new(5, Mode::Execute).with_sql("SELECT COUNT(*) FROM products");
    let mut input = Vec::new();
    input.extend_from_slice(b"this is not json\n");
    input.extend_from_slice(b"{\"id\": 11, \"mode\": \"format_disk\"}\n");
    input.extend_from_slice(b"\xff\xfe not utf-8\n");
    input.extend_from_slice(b"\n");
    input.extend_from_slice(line(&count).as_bytes());
    // A last line without its newline is still a request.
    input.extend_from_slice(
        line(&ExecutionRequest::new(6, Mode::TestConnection))
            .trim_end()
            .as_bytes(),
    );
    let results = check(&input).await;
    assert_eq!(results.len(), 6, "{results:?}");
    for (i, result) in results[..4].iter().enumerate() {
        assert!(!result.success, "line {i}: {result:?}");
        let error = result.error.as_ref().unwrap();
        assert_eq!(
            error.error_code,
            ResultErrorCode::ExecutionFailed,
            "line {i}"
        );
        assert!(
            error.safe_message.starts_with("malformed worker request"),
            "{error:?}"
        );
        assert!(!error.retryable);
    }
    // The id of a request with a bad mode is still echoed.
    assert_eq!(results[0].id, None);
    assert_eq!(results[1].id, Some(11));
    assert_eq!(results[4].id, Some(5));
    assert!(results[4].success, "{:?}", results[4].error);
    let Some(ResultData::Frame(wire)) = &results[4].data else {
        panic!("not a frame: {:?}", results[4]);
    };
    let frame = wire.clone().into_frame(true, None).unwrap();
    let n = frame.batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<arrow::array::Int64Array>()
        .unwrap()
        .value(0);
    assert_eq!(n, 8);
    assert_eq!(results[5].id, Some(6));
    assert!(results[5].success);
}

#[tokio::test]
async fn an_overlong_line_is_refused_and_skipped() {
    let mut input = vec![b'x'; MAX_REQUEST_LINE_BYTES + 10];
    input.push(b'\n');
    input.extend_from_slice(line(&ExecutionRequest::new(1, Mode::TestConnection)).as_bytes());
    let results = check(&input).await;
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0]
            .error
            .as_ref()
            .unwrap()
            .safe_message
            .contains("longer than")
    );
    assert!(results[1].success);
}

#[tokio::test]
async fn eof_ends_the_loop_and_empty_input_answers_nothing() {
    assert!(check(b"").await.is_empty());
}

#[tokio::test]
async fn requests_without_sql_fail_as_missing_sql() {
    let mut input = String::new();
    for (i, mode) in [
        Mode::RunSql,
        Mode::DryRun,
        Mode::CostEstimate,
        Mode::Explain,
        Mode::Execute,
    ]
    .into_iter()
    .enumerate()
    {
        input.push_str(&line(&ExecutionRequest::new(i as u64, mode)));
    }
    let results = check(input.as_bytes()).await;
    assert_eq!(results.len(), 5);
    for result in &results {
        assert!(!result.success);
        assert_eq!(
            result.error.as_ref().unwrap().error_code,
            ResultErrorCode::MissingSql,
            "{result:?}"
        );
    }
    // `execute` is checked by the adapter itself, so its failure is a frame.
    assert!(matches!(results[4].data, Some(ResultData::Frame(_))));
}
