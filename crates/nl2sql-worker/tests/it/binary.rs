//! The `nl2sql-worker` binary on real pipes: malformed lines get an error line and the
//! worker keeps serving; closing stdin ends it with status 0; bad arguments exit 2.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use nl2sql_adapter::ResultErrorCode;
use nl2sql_test_support::TempDir;
use nl2sql_worker::{ExecutionRequest, ExecutionResult, Mode, ResultData};

use crate::{copy_fixture, worker_command};

#[test]
fn malformed_lines_get_error_lines_and_the_worker_keeps_serving() {
    let dir = TempDir::new("worker-binary");
    let path = copy_fixture(&dir);
    let mut child = worker_command(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut exchange = |line: &str| {
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.flush().unwrap();
        let mut reply = String::new();
        stdout.read_line(&mut reply).unwrap();
        ExecutionResult::from_line(&reply).unwrap()
    };

    let bad = exchange("{\"id\": 1, \"mode\": \"execute\", \"sql\": \n");
    assert!(!bad.success);
    assert_eq!(
        bad.error.unwrap().error_code,
        ResultErrorCode::ExecutionFailed
    );
    let bad = exchange("{\"id\": 2, \"mode\": \"rm -rf\"}\n");
    assert_eq!(bad.id, Some(2));
    assert!(!bad.success);

    let describe = exchange(&ExecutionRequest::new(3, Mode::Describe).to_line().unwrap());
    assert_eq!(describe.id, Some(3));
    let Some(ResultData::Worker(info)) = describe.data else {
        panic!("not a worker description: {describe:?}");
    };
    assert_eq!(info.id, "manufacturing");
    assert_eq!(info.engine_type, "sqlite");

    let query =
        ExecutionRequest::new(4, Mode::Execute).with_sql("SELECT name FROM factories ORDER BY id");
    let result = exchange(&query.to_line().unwrap());
    assert!(result.success, "{:?}", result.error);
    let Some(ResultData::Frame(wire)) = result.data else {
        panic!("not a frame: {result:?}");
    };
    let frame = wire.into_frame(true, None).unwrap();
    assert!(frame.row_count > 0);
    assert_eq!(frame.columns(), ["name"]);

    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
}

#[test]
fn bad_arguments_exit_with_status_2() {
    let output = Command::new(env!("CARGO_BIN_EXE_nl2sql-worker"))
        .args(["--id", "x"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--url is required"), "{stderr}");
    assert!(output.stdout.is_empty());
}
