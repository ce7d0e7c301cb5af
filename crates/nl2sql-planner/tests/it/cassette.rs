//! The record/replay wrapper: recording through a fake planner, replaying with no planner
//! at all, misses, corrupted files and concurrent recording.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use nl2sql_plan::{DecomposerResponse, PlanModel, parse_plan};
use nl2sql_planner::cassette::cassette_key;
use nl2sql_planner::{
    AnswerFormat, AnswerRequest, CassetteError, CassetteMode, CassettePlanner, DecomposeRequest,
    FinalAnswer, PlanRequest, Planner, RefineRequest, Step,
};
use nl2sql_state::{Dialect, ErrorCode, PipelineError, SchemaSnapshot, Severity};
use serde_json::{Value, json};

const PLAN: &str = r#"{"tables": [{"name": "orders", "alias": "o", "ordinal": 0}],
 "select_items": [{"ordinal": 0, "expr": {"kind": "column", "alias": "o", "column_name": "id"}}]}"#;

/// A planner whose answers are functions of the request, counting its calls.
#[derive(Debug, Default)]
struct Fake {
    calls: AtomicUsize,
}

#[async_trait]
impl Planner for Fake {
    fn name(&self) -> String {
        "fake".into()
    }

    async fn decompose(&self, r: &DecomposeRequest) -> Result<DecomposerResponse, PipelineError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Err(PipelineError::new(
            "decomposer",
            ErrorCode::PlanningFailure,
            Severity::Error,
            format!("cannot split '{}'", r.question),
        )
        .with_details(json!({"path": "$.sub_queries"})))
    }

    async fn plan(&self, r: &PlanRequest) -> Result<PlanModel, PipelineError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let mut plan = parse_plan(PLAN).unwrap();
        plan.reasoning = Some(format!("for {}", r.question));
        Ok(plan)
    }

    async fn refine(&self, r: &RefineRequest) -> Result<String, PipelineError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(format!("1. fix {}", r.plan_request.sub_query.intent))
    }

    async fn answer(&self, r: &AnswerRequest) -> Result<FinalAnswer, PipelineError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(FinalAnswer {
            summary: format!("answer to {}", r.question),
            format_type: AnswerFormat::List,
            content: "- a\n- b".into(),
            warnings: vec!["skipped x".into()],
        })
    }
}

fn temp_file(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "nl2sql-planner-cassette-{}-{name}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    path
}

fn plan_request(question: &str) -> PlanRequest {
    PlanRequest {
        question: question.into(),
        sub_query: serde_json::from_value(json!({
            "id": "sq1", "datasource_id": "shop", "intent": "count orders"
        }))
        .unwrap(),
        dialect: Dialect::DuckDb,
        schema: SchemaSnapshot::default(),
        feedback: None,
        today: Some("2025-01-31".into()),
    }
}

fn refine_request() -> RefineRequest {
    RefineRequest {
        plan_request: plan_request("q1"),
        failed_plan: None,
        errors: vec![],
        history: vec![],
    }
}

fn answer_request() -> AnswerRequest {
    AnswerRequest {
        question: "q1".into(),
        results: vec![],
        unmapped: vec![],
        errors: vec![],
    }
}

fn decompose_request() -> DecomposeRequest {
    DecomposeRequest {
        question: "everything".into(),
        datasources: vec![],
        feedback: None,
        today: None,
    }
}

/// The outputs of one call of each step, rendered for comparison.
async fn run_all(planner: &dyn Planner) -> Vec<String> {
    vec![
        format!("{:?}", planner.plan(&plan_request("q1")).await),
        format!("{:?}", planner.plan(&plan_request("q2")).await),
        format!("{:?}", planner.refine(&refine_request()).await),
        format!("{:?}", planner.answer(&answer_request()).await),
        format!("{:?}", planner.decompose(&decompose_request()).await),
    ]
}

#[tokio::test]
async fn replay_gives_the_recorded_outputs_and_errors_without_any_call() {
    let path = temp_file("roundtrip");
    let fake = Arc::new(Fake::default());
    let recorder = CassettePlanner::record(fake.clone(), &path).unwrap();
    assert_eq!(recorder.name(), "record:fake");
    let recorded = run_all(&recorder).await;
    assert_eq!(fake.calls.load(Ordering::SeqCst), 5);
    assert!(recorded[0].contains("for q1") && recorded[1].contains("for q2"));
    assert!(recorded[4].starts_with("Err("), "{}", recorded[4]);

    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[2]["step"], "refiner");
    assert_eq!(lines[2]["response"], json!({"ok": "1. fix count orders"}));
    assert_eq!(lines[4]["response"]["error"]["code"], "PLANNING_FAILURE");
    let request = serde_json::to_value(plan_request("q1")).unwrap();
    assert_eq!(lines[0]["key"], cassette_key(Step::AstPlanner, &request));

    let replayer = CassettePlanner::replay(&path).unwrap();
    assert_eq!(
        (replayer.mode(), replayer.len(), replayer.name().as_str()),
        (CassetteMode::Replay, 5, "replay")
    );
    assert_eq!(run_all(&replayer).await, recorded);
    let e = replayer.decompose(&decompose_request()).await.unwrap_err();
    assert_eq!(
        e.details.as_deref(),
        Some(&json!({"path": "$.sub_queries"}))
    );
    assert_eq!(
        fake.calls.load(Ordering::SeqCst),
        5,
        "replay called the inner planner"
    );
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn replay_miss_names_the_step_and_the_key() {
    let path = temp_file("miss");
    let recorder = CassettePlanner::record(Arc::new(Fake::default()), &path).unwrap();
    recorder.plan(&plan_request("q1")).await.unwrap();
    let replayer = CassettePlanner::replay(&path).unwrap();
    let other = plan_request("a question never recorded");
    let e = replayer.plan(&other).await.unwrap_err();
    let key = cassette_key(Step::AstPlanner, &serde_json::to_value(&other).unwrap());
    assert_eq!(e.code, ErrorCode::PlanningFailure);
    assert_eq!(e.node, "ast_planner");
    assert!(
        e.message.contains("no recorded ast_planner call"),
        "{}",
        e.message
    );
    assert!(e.message.contains(&key), "{}", e.message);
    // Same request, other step: also a miss (the step is part of the key).
    assert!(replayer.refine(&refine_request()).await.is_err());
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn corrupted_line_is_an_error_naming_its_line() {
    let path = temp_file("corrupt");
    let recorder = CassettePlanner::record(Arc::new(Fake::default()), &path).unwrap();
    recorder.plan(&plan_request("q1")).await.unwrap();
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("{\"key\": \"abc\", \"step\": \"refi\n");
    std::fs::write(&path, text).unwrap();
    match CassettePlanner::replay(&path) {
        Err(e @ CassetteError::Malformed { line: 2, .. }) => {
            let message = PipelineError::from(e).message;
            assert!(message.contains("line 2"), "{message}");
        }
        other => panic!("expected a malformed line 2, got {other:?}"),
    }
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn missing_cassette_is_an_io_error_and_passthrough_writes_nothing() {
    let path = temp_file("absent");
    assert!(matches!(
        CassettePlanner::replay(&path),
        Err(CassetteError::Io { .. })
    ));
    let fake = Arc::new(Fake::default());
    let passthrough =
        CassettePlanner::open(CassetteMode::Passthrough, Some(fake.clone()), &path).unwrap();
    assert!(passthrough.plan(&plan_request("q1")).await.is_ok());
    assert_eq!(fake.calls.load(Ordering::SeqCst), 1);
    assert!(!path.exists());
    let e = CassettePlanner::open(CassetteMode::Record, None, &path).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidState);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_recording_writes_whole_lines() {
    let path = temp_file("concurrent");
    let recorder = Arc::new(CassettePlanner::record(Arc::new(Fake::default()), &path).unwrap());
    let tasks: Vec<_> = (0..32)
        .map(|i| {
            let recorder = recorder.clone();
            tokio::spawn(async move { recorder.plan(&plan_request(&format!("q{i}"))).await })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let replayer = CassettePlanner::replay(&path).unwrap();
    assert_eq!(replayer.len(), 32);
    let plan = replayer.plan(&plan_request("q17")).await.unwrap();
    assert_eq!(plan.reasoning.as_deref(), Some("for q17"));
    let _ = std::fs::remove_file(&path);
}
