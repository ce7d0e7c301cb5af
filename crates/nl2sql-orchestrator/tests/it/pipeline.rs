//! The whole pipeline over `tests/data/fixtures/manufacturing.db` with the offline planner:
//! exact answers, planning failures, a datasource that disappeared (partial results),
//! cancellation, retries with refinement, and the run log.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use nl2sql_orchestrator::{
    AskOptions, DatasourceRegistry, Engine, EngineOptions, FINAL_STATE_NODE, RunResult,
    read_run_log,
};
use nl2sql_plan::{DecomposerResponse, PlanModel};
use nl2sql_planner::{
    AnswerRequest, DecomposeRequest, FinalAnswer, PlanRequest, Planner, RefineRequest,
};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::{
    ConfigFile, EnvSecrets, ErrorCode, GraphState, PipelineError, RunStatus, ScanStatus, Severity,
};
use nl2sql_test_support::TempDir;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::fixture;

fn fast_options() -> EngineOptions {
    EngineOptions {
        retry_base_delay: Duration::from_millis(5),
        retry_max_delay: Duration::from_millis(20),
        retry_jitter: Duration::from_millis(5),
        jitter_seed: Some(7),
        today: Some("2024-06-30".to_owned()),
        ..EngineOptions::default()
    }
}

/// An engine over the fixture (ad hoc URL), indexed, with everything under `dir`.
async fn fixture_engine(dir: &Path, planner: Arc<dyn Planner>) -> Engine {
    let url = format!(
        "sqlite://{}",
        fixture().canonicalize().expect("fixture engine").display()
    );
    let registry =
        DatasourceRegistry::ad_hoc(&url, crate::support::drivers()).expect("fixture engine");
    let engine = Engine::open(registry, planner, dir)
        .expect("fixture engine")
        .with_options(fast_options());
    let report = engine.index_all().await;
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!(report.indexed.len(), 1);
    engine
}

fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(parquet_files(&p));
        } else if p.extension().is_some_and(|x| x == "parquet") {
            out.push(p);
        }
    }
    out
}

fn codes(r: &RunResult) -> Vec<ErrorCode> {
    r.errors.iter().map(|e| e.code).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counts_factories_exactly() {
    let dir = TempDir::new("count");
    let engine = fixture_engine(dir.path(), Arc::new(OfflinePlanner::new())).await;
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.status, RunStatus::Succeeded);
    assert_eq!(r.rows, Some(vec![vec![json!(3)]]));
    assert_eq!(r.subqueries.len(), 1);
    let sq = &r.subqueries[0];
    assert_eq!(sq.datasource_id, "manufacturing");
    assert_eq!(sq.status, ScanStatus::Succeeded);
    assert_eq!(sq.attempts, 1);
    assert_eq!(sq.row_count, Some(1));
    let sql = sq.sql.clone().unwrap_or_default().to_uppercase();
    assert!(sql.contains("COUNT") && sql.contains("FACTORIES"), "{sql}");
    assert!(sq.plan.is_some());
    assert!(r.answer.as_ref().is_some_and(|a| a.summary.contains('3')));
    assert!(r.dag.as_ref().and_then(|d| d.get("dag_id")).is_some());
    for stage in [
        "datasource_resolver",
        "decomposer",
        "layer_router",
        "aggregator",
        "total",
    ] {
        assert!(r.timings.contains_key(stage), "{stage}: {:?}", r.timings);
    }
    // One artifact, complete, under its final name.
    assert_eq!(parquet_files(&dir.join("artifacts")).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_a_grouped_question_with_the_expected_table() {
    let dir = TempDir::new("grouped");
    let engine = fixture_engine(dir.path(), Arc::new(OfflinePlanner::new())).await;
    let r = engine
        .ask("How many machines per factory?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    let columns = r.columns.clone().unwrap();
    assert_eq!(columns.len(), 2, "{columns:?}");
    let mut rows = r.rows.clone().unwrap();
    rows.sort_by_key(|row| row[0].to_string());
    // Machines by factory (the fixture has none in Plant Tokyo).
    assert_eq!(columns, ["factory", "machine_count"]);
    assert_eq!(
        rows,
        vec![
            vec![json!("Plant Austin"), json!(2)],
            vec![json!("Plant Berlin"), json!(1)],
        ]
    );
    let sql = r.subqueries[0]
        .sql
        .clone()
        .unwrap_or_default()
        .to_uppercase();
    assert!(sql.contains("GROUP BY"), "{sql}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_a_question_the_planner_cannot_link() {
    let dir = TempDir::new("unlinked");
    let engine = fixture_engine(dir.path(), Arc::new(OfflinePlanner::new())).await;
    let r = engine
        .ask(
            "What is the airspeed velocity of an unladen swallow?",
            AskOptions::default(),
        )
        .await;
    assert!(!r.success);
    assert_eq!(r.status, RunStatus::Failed);
    let failures = r.errors_with(ErrorCode::AmbiguousQuestion);
    assert_eq!(failures.len(), 1, "{:#?}", r.errors);
    assert!(
        failures[0].message.contains("airspeed"),
        "{}",
        failures[0].message
    );
    assert!(r.subqueries.is_empty());
    assert!(r.answer.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vanished_datasource_gives_a_partial_answer_naming_it() {
    let dir = TempDir::new("partial");
    let north = dir.join("north.db");
    let south = dir.join("south.db");
    std::fs::copy(fixture(), &north).unwrap();
    std::fs::copy(fixture(), &south).unwrap();
    let toml = format!(
        "version = 1\n\n[[datasources]]\nid = \"plant_north\"\nurl = \"sqlite://{}\"\n\n[[datasources]]\nid = \"plant_south\"\nurl = \"sqlite://{}\"\n",
        north.display(),
        south.display()
    );
    let config = ConfigFile::from_toml_str(&toml).unwrap();
    let data = dir.join("data");
    let registry = || {
        DatasourceRegistry::from_config(&config, dir.path(), &EnvSecrets, crate::support::drivers())
            .unwrap()
    };
    let planner: Arc<dyn Planner> = Arc::new(OfflinePlanner::new());
    let indexer = Engine::open(registry(), Arc::clone(&planner), &data).unwrap();
    let report = indexer.index_all().await;
    assert_eq!(report.indexed.len(), 2, "{:?}", report.failed);
    drop(indexer);

    // The south plant's database disappears after indexing.
    std::fs::remove_file(&south).unwrap();
    let engine = Engine::open(registry(), planner, &data)
        .unwrap()
        .with_options(fast_options());
    let r = engine
        .ask(
            "Compare the number of factories in plant north with the number of factories in plant south",
            AskOptions::default(),
        )
        .await;
    assert_eq!(r.subqueries.len(), 2, "{:#?}", r.errors);
    assert!(!r.success);
    let north_sq = r
        .subqueries
        .iter()
        .find(|s| s.datasource_id == "plant_north")
        .unwrap();
    let south_sq = r
        .subqueries
        .iter()
        .find(|s| s.datasource_id == "plant_south")
        .unwrap();
    assert_eq!(north_sq.status, ScanStatus::Succeeded);
    assert_eq!(north_sq.row_count, Some(1));
    assert_eq!(south_sq.status, ScanStatus::Failed);
    let south_errors: Vec<_> = r
        .errors
        .iter()
        .filter(|e| e.datasource_id.as_deref() == Some("plant_south"))
        .collect();
    assert!(!south_errors.is_empty(), "{:#?}", r.errors);
    assert_eq!(south_errors[0].code, ErrorCode::ServiceUnavailable);
    assert_eq!(
        south_errors[0].subquery_id.as_deref(),
        Some(south_sq.id.as_str())
    );
    assert!(south_errors[0].message.contains("plant_south"));
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains(&south_sq.id) && w.contains("plant_south")),
        "{:?}",
        r.warnings
    );
    assert!(
        !r.errors
            .iter()
            .any(|e| e.datasource_id.as_deref() == Some("plant_north"))
    );
    // In the run's state the error is marked as the south scan's, whose output has it.
    let st = final_state(&engine, &r);
    let south_scan = format!("sql_agent:{}:{}", south_sq.id, r.trace_id);
    let marked: Vec<_> = st
        .errors
        .iter()
        .filter(|e| e.subgraph_id.as_deref() == Some(south_scan.as_str()))
        .collect();
    assert_eq!(marked.len(), south_errors.len(), "{:#?}", st.errors);
    assert_eq!(st.subgraph_outputs[&south_scan].errors.len(), marked.len());
    assert_eq!(st.scan_status.get(&south_sq.id), Some(&ScanStatus::Failed));
    assert_eq!(st.status, Some(RunStatus::Partial));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_that_asks_to_change_data_is_refused_before_planning() {
    let dir = TempDir::new("intent");
    let engine = fixture_engine(dir.path(), Arc::new(OfflinePlanner::new())).await;
    let r = engine
        .ask(
            "Please delete all factories in Berlin",
            AskOptions::default(),
        )
        .await;
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(codes(&r), vec![ErrorCode::IntentViolation]);
    assert!(r.subqueries.is_empty(), "nothing was planned");
    assert!(r.answer.is_some(), "the user is told why");
    let entries = read_run_log(&engine.run_log_path(&r.trace_id).unwrap()).unwrap();
    let nodes: Vec<&str> = entries.iter().map(|e| e.node.as_str()).collect();
    assert!(nodes.contains(&"intent_guard"), "{nodes:?}");
    assert!(!nodes.contains(&"datasource_resolver"), "{nodes:?}");
    assert!(
        !nodes.iter().any(|n| n.starts_with("planner:decomposer")),
        "{nodes:?}"
    );
    // A question about deletions is a question.
    let r = engine
        .ask("How many factories are there?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_stops_promptly_and_leaves_no_artifact() {
    let dir = TempDir::new("cancel");
    let engine = fixture_engine(dir.path(), Arc::new(OfflinePlanner::new())).await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let started = Instant::now();
    let r = engine
        .ask(
            "How many factories do we have?",
            AskOptions {
                cancel,
                ..AskOptions::default()
            },
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(r.status, RunStatus::Cancelled);
    assert!(!r.success);
    assert_eq!(codes(&r), vec![ErrorCode::Cancelled]);
    assert!(parquet_files(&dir.join("artifacts")).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_global_timeout_stops_a_slow_planner() {
    let dir = TempDir::new("timeout");
    let planner = Arc::new(SlowPlanner(OfflinePlanner::new()));
    let engine = fixture_engine(dir.path(), planner)
        .await
        .with_options(EngineOptions {
            global_timeout: Duration::from_millis(200),
            ..fast_options()
        });
    let started = Instant::now();
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(r.status, RunStatus::TimedOut);
    assert_eq!(codes(&r), vec![ErrorCode::PipelineTimeout]);
    assert!(parquet_files(&dir.join("artifacts")).is_empty());
}

/// GAP-12: cancelling one run leaves a concurrent run of the same engine alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_one_run_leaves_a_concurrent_run_alone() {
    let dir = TempDir::new("cancel-one");
    let planner = Arc::new(HeldPlanner {
        inner: OfflinePlanner::new(),
        held: "factories",
        entered: tokio::sync::Notify::new(),
    });
    let engine = Arc::new(fixture_engine(dir.path(), planner.clone()).await);
    let cancel = CancellationToken::new();
    let held = {
        let engine = Arc::clone(&engine);
        let cancel = cancel.clone();
        tokio::spawn(async move {
            engine
                .ask(
                    "How many factories do we have?",
                    AskOptions {
                        cancel,
                        ..AskOptions::default()
                    },
                )
                .await
        })
    };
    // The held run is inside its plan step; the other run starts and ends meanwhile.
    planner.entered.notified().await;
    let free = {
        let engine = Arc::clone(&engine);
        tokio::spawn(async move {
            engine
                .ask("How many machines do we have?", AskOptions::default())
                .await
        })
    };
    let started = Instant::now();
    cancel.cancel();
    let held = held.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(held.status, RunStatus::Cancelled);
    assert_eq!(codes(&held), vec![ErrorCode::Cancelled]);
    let free = free.await.unwrap();
    assert!(free.success, "{:#?}", free.errors);
    assert_eq!(free.status, RunStatus::Succeeded);
    assert_eq!(free.rows, Some(vec![vec![json!(3)]]), "{:?}", free.rows);
    // Only the free run left a result.
    let artifacts = parquet_files(&dir.join("artifacts"));
    assert_eq!(artifacts.len(), 1, "the free run's scan: {artifacts:?}");
    assert!(
        artifacts
            .iter()
            .all(|p| p.to_string_lossy().contains(&free.trace_id)),
        "{artifacts:?}"
    );
}

/// The offline planner, but its decomposer cancels the run and returns at once: the
/// pipeline notices the cancellation and runs to its end without waiting again.
#[derive(Debug)]
struct CancellingPlanner {
    inner: OfflinePlanner,
    run: CancellationToken,
}

#[async_trait]
impl Planner for CancellingPlanner {
    fn name(&self) -> String {
        "cancelling".to_owned()
    }
    async fn decompose(&self, _: &DecomposeRequest) -> Result<DecomposerResponse, PipelineError> {
        self.run.cancel();
        Err(PipelineError::new(
            "decomposer",
            ErrorCode::Cancelled,
            Severity::Error,
            "Pipeline cancelled by user.",
        ))
    }
    async fn plan(&self, r: &PlanRequest) -> Result<PlanModel, PipelineError> {
        self.inner.plan(r).await
    }
    async fn refine(&self, r: &RefineRequest) -> Result<String, PipelineError> {
        self.inner.refine(r).await
    }
    async fn answer(&self, r: &AnswerRequest) -> Result<FinalAnswer, PipelineError> {
        self.inner.answer(r).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancellation_the_pipeline_notices_itself_still_cancels_the_run() {
    let dir = TempDir::new("cancel-inside");
    let run = CancellationToken::new();
    let planner = Arc::new(CancellingPlanner {
        inner: OfflinePlanner::new(),
        run: run.clone(),
    });
    let engine = fixture_engine(dir.path(), planner).await;
    let r = engine
        .ask(
            "How many factories do we have?",
            AskOptions {
                cancel: run,
                ..AskOptions::default()
            },
        )
        .await;
    assert_eq!(r.status, RunStatus::Cancelled, "{:#?}", r.errors);
    assert!(codes(&r).contains(&ErrorCode::Cancelled), "{:#?}", r.errors);
}

/// The offline planner, but planning a question that holds `held` waits until the run is
/// cancelled (it says when it has started waiting).
#[derive(Debug)]
struct HeldPlanner {
    inner: OfflinePlanner,
    held: &'static str,
    entered: tokio::sync::Notify,
}

#[async_trait]
impl Planner for HeldPlanner {
    fn name(&self) -> String {
        "held".to_owned()
    }
    async fn decompose(&self, r: &DecomposeRequest) -> Result<DecomposerResponse, PipelineError> {
        self.inner.decompose(r).await
    }
    async fn plan(&self, r: &PlanRequest) -> Result<PlanModel, PipelineError> {
        if r.question.contains(self.held) {
            self.entered.notify_one();
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
        self.inner.plan(r).await
    }
    async fn refine(&self, r: &RefineRequest) -> Result<String, PipelineError> {
        self.inner.refine(r).await
    }
    async fn answer(&self, r: &AnswerRequest) -> Result<FinalAnswer, PipelineError> {
        self.inner.answer(r).await
    }
}

/// The offline planner, but its plan step never answers in time.
#[derive(Debug)]
struct SlowPlanner(OfflinePlanner);

#[async_trait]
impl Planner for SlowPlanner {
    fn name(&self) -> String {
        "slow".to_owned()
    }
    async fn decompose(&self, r: &DecomposeRequest) -> Result<DecomposerResponse, PipelineError> {
        self.0.decompose(r).await
    }
    async fn plan(&self, r: &PlanRequest) -> Result<PlanModel, PipelineError> {
        tokio::time::sleep(Duration::from_secs(30)).await;
        self.0.plan(r).await
    }
    async fn refine(&self, r: &RefineRequest) -> Result<String, PipelineError> {
        self.0.refine(r).await
    }
    async fn answer(&self, r: &AnswerRequest) -> Result<FinalAnswer, PipelineError> {
        self.0.answer(r).await
    }
}

/// The offline planner, but its first plan names a column that does not exist.
#[derive(Debug, Default)]
struct FlakyPlanner {
    inner: OfflinePlanner,
    plans: AtomicU32,
    feedback: std::sync::Mutex<Vec<Option<String>>>,
    /// The model is down for the refine and answer steps.
    model_down: bool,
}

fn model_down() -> PipelineError {
    PipelineError::new(
        "planner",
        ErrorCode::ServiceUnavailable,
        Severity::Error,
        "model endpoint unavailable (503)",
    )
}

fn break_first_column(v: &mut Value) -> bool {
    match v {
        Value::Object(map) => {
            if let Some(Value::String(c)) = map.get_mut("column_name") {
                *c = "no_such_column".to_owned();
                return true;
            }
            map.values_mut().any(break_first_column)
        }
        Value::Array(items) => items.iter_mut().any(break_first_column),
        _ => false,
    }
}

#[async_trait]
impl Planner for FlakyPlanner {
    fn name(&self) -> String {
        "flaky".to_owned()
    }
    async fn decompose(&self, r: &DecomposeRequest) -> Result<DecomposerResponse, PipelineError> {
        self.inner.decompose(r).await
    }
    async fn plan(&self, r: &PlanRequest) -> Result<PlanModel, PipelineError> {
        self.feedback.lock().expect("lock").push(r.feedback.clone());
        let plan = self.inner.plan(r).await?;
        if self.plans.fetch_add(1, Ordering::SeqCst) > 0 {
            return Ok(plan);
        }
        let mut v = serde_json::to_value(&plan).expect("plan json");
        assert!(break_first_column(&mut v), "{v}");
        Ok(serde_json::from_value(v).expect("plan"))
    }
    async fn refine(&self, r: &RefineRequest) -> Result<String, PipelineError> {
        if self.model_down {
            return Err(model_down());
        }
        self.inner.refine(r).await
    }
    async fn answer(&self, r: &AnswerRequest) -> Result<FinalAnswer, PipelineError> {
        if self.model_down {
            return Err(model_down());
        }
        self.inner.answer(r).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_cannot_refine_or_answer_falls_back_to_the_offline_steps() {
    let dir = TempDir::new("fallback-steps");
    let planner = Arc::new(FlakyPlanner {
        model_down: true,
        ..FlakyPlanner::default()
    });
    let engine = fixture_engine(dir.path(), planner.clone()).await;
    let r = engine
        .ask("List the names of all factories", AskOptions::default())
        .await;
    // The scan still recovers: the offline refiner's feedback drives the second attempt.
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.subqueries[0].attempts, 2);
    assert_eq!(r.rows.as_ref().map(Vec::len), Some(3));
    let feedback = planner.feedback.lock().unwrap().clone();
    let second = feedback[1].clone().unwrap_or_default();
    assert!(second.contains("COLUMN_NOT_FOUND"), "{second}");
    // The answer is the offline planner's, with a warning saying so.
    let summary = &r.answer.as_ref().unwrap().summary;
    assert!(summary.contains("Plant Austin"), "{summary}");
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("Answer synthesis failed") && w.contains("503")),
        "{:?}",
        r.warnings
    );
    // The run log keeps both model errors and marks the fallbacks.
    let entries = read_run_log(&engine.run_log_path(&r.trace_id).unwrap()).unwrap();
    let refiner = entries.iter().find(|e| e.node == "refiner").unwrap();
    assert_eq!(refiner.delta["offline_fallback"], json!(true));
    assert_eq!(refiner.errors[0].code, ErrorCode::ServiceUnavailable);
    let answer = entries
        .iter()
        .find(|e| e.node == "answer_synthesizer")
        .unwrap();
    assert_eq!(answer.errors[0].code, ErrorCode::ServiceUnavailable);
}

/// A model whose first decomposition is not valid JSON.
#[derive(Debug, Default)]
struct GarbledOnce {
    inner: OfflinePlanner,
    calls: AtomicU32,
    feedback: std::sync::Mutex<Vec<Option<String>>>,
}

#[async_trait]
impl Planner for GarbledOnce {
    fn name(&self) -> String {
        "garbled-once".to_owned()
    }
    async fn decompose(&self, r: &DecomposeRequest) -> Result<DecomposerResponse, PipelineError> {
        self.feedback.lock().expect("lock").push(r.feedback.clone());
        if self.calls.fetch_add(1, Ordering::SeqCst) == 0 {
            return Err(PipelineError::new(
                "decomposer",
                ErrorCode::PlanningFailure,
                Severity::Error,
                "the model's answer is not valid JSON: EOF while parsing an object at line 1 column 42",
            ));
        }
        self.inner.decompose(r).await
    }
    async fn plan(&self, r: &PlanRequest) -> Result<PlanModel, PipelineError> {
        self.inner.plan(r).await
    }
    async fn refine(&self, r: &RefineRequest) -> Result<String, PipelineError> {
        self.inner.refine(r).await
    }
    async fn answer(&self, r: &AnswerRequest) -> Result<FinalAnswer, PipelineError> {
        self.inner.answer(r).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unparsable_decomposition_is_re_prompted_with_the_parse_error() {
    let dir = TempDir::new("garbled");
    let planner = Arc::new(GarbledOnce::default());
    let engine = fixture_engine(dir.path(), planner.clone()).await;
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(3)]]));
    let feedback = planner.feedback.lock().unwrap().clone();
    assert_eq!(feedback.len(), 2);
    assert_eq!(feedback[0], None);
    let second = feedback[1].clone().unwrap_or_default();
    assert!(second.contains("not valid JSON"), "{second}");

    // With no retry left, the error is the run's.
    let dir = TempDir::new("garbled-no-retry");
    let planner = Arc::new(GarbledOnce::default());
    let engine = fixture_engine(dir.path(), planner.clone())
        .await
        .with_options(EngineOptions {
            decomposer_max_retries: 0,
            ..fast_options()
        });
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert_eq!(codes(&r), vec![ErrorCode::PlanningFailure]);
    assert_eq!(planner.feedback.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_first_plan_is_refined_and_retried() {
    let dir = TempDir::new("retry");
    let planner = Arc::new(FlakyPlanner::default());
    let engine = fixture_engine(dir.path(), planner.clone()).await;
    let r = engine
        .ask("List the names of all factories", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    let sq = &r.subqueries[0];
    assert_eq!(sq.attempts, 2);
    assert_eq!(sq.attempt_log.len(), 2);
    assert_eq!(sq.attempt_log[0].errors[0].code, ErrorCode::ColumnNotFound);
    assert!(sq.attempt_log[1].errors.is_empty());
    assert_eq!(r.rows.as_ref().map(Vec::len), Some(3));
    let feedback = planner.feedback.lock().unwrap().clone();
    assert_eq!(feedback.len(), 2);
    assert_eq!(feedback[0], None);
    let second = feedback[1].clone().unwrap_or_default();
    assert!(second.contains("COLUMN_NOT_FOUND"), "{second}");
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
}

/// The final state of run `r` (seed 002's `GraphState`): the run log's last entry.
fn final_state(engine: &Engine, r: &RunResult) -> GraphState {
    let path = engine.run_log_path(&r.trace_id).expect("a data dir");
    let entries = read_run_log(&path).expect("a readable run log");
    let last = entries.last().expect("a run log");
    assert_eq!(last.node, FINAL_STATE_NODE);
    serde_json::from_value(last.delta.clone()).expect("the last entry is a GraphState")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_log_ends_with_the_graph_state_the_result_is_read_from() {
    let dir = TempDir::new("state");
    let planner = Arc::new(FlakyPlanner::default());
    let engine = fixture_engine(dir.path(), planner).await;
    let r = engine
        .ask("List the names of all factories", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    let st = final_state(&engine, &r);
    assert_eq!(st.trace_id, r.trace_id);
    assert_eq!(st.user_query, "List the names of all factories");
    assert_eq!(st.status, Some(RunStatus::Succeeded));
    assert!(st.started_at.is_some() && st.finished_at.is_some());
    assert_eq!(st.timings, r.timings);
    assert!(st.timings.contains_key("layer_router") && st.timings.contains_key("total"));
    assert_eq!(
        st.warnings
            .iter()
            .map(|w| w.content.clone())
            .collect::<Vec<_>>(),
        r.warnings
    );
    assert!(st.errors.is_empty(), "{:#?}", st.errors);
    // The scan: its status, artifact and output with both attempts.
    let sq = &r.subqueries[0];
    assert_eq!(st.scan_status.get(&sq.id), Some(&ScanStatus::Succeeded));
    assert_eq!(st.artifact_refs.get(&sq.id), sq.artifact.as_ref());
    let out = &st.subgraph_outputs[&format!("sql_agent:{}:{}", sq.id, r.trace_id)];
    assert_eq!(out.status, ScanStatus::Succeeded);
    assert_eq!(out.retry_count, 1);
    assert_eq!(out.row_count, Some(3));
    assert_eq!(out.sql_draft, sq.sql);
    assert_eq!(out.attempts.len(), 2);
    assert_eq!(out.attempts[0].attempt, 1);
    assert_eq!(out.attempts[0].errors[0].code, ErrorCode::ColumnNotFound);
    assert_eq!(
        out.errors, out.attempts[0].errors,
        "every error of the scan"
    );
    let feedback = out.attempts[1].feedback.clone().unwrap_or_default();
    assert!(feedback.contains("COLUMN_NOT_FOUND"), "{feedback}");
    // The responses: DAG, terminal table (counted, its rows not inlined), answer.
    assert_eq!(st.global_planner_response, r.dag);
    let table = &st.aggregator_response.as_ref().unwrap()["terminal_results"][0];
    assert_eq!(table["total_rows"], json!(3));
    assert_eq!(table["columns"], json!(r.columns.clone().unwrap()));
    assert!(table.get("rows").is_none(), "{table}");
    let answer = &st.answer_synthesizer_response.as_ref().unwrap()["final_answer"];
    assert_eq!(
        answer,
        &serde_json::to_value(r.answer.as_ref().unwrap()).unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_run_log_has_one_line_per_node_with_the_trace_id() {
    let dir = TempDir::new("runlog");
    let engine = fixture_engine(dir.path(), Arc::new(OfflinePlanner::new())).await;
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert!(r.success);
    let path = engine.run_log_path(&r.trace_id).unwrap();
    assert_eq!(path, dir.join("runs").join(format!("{}.jsonl", r.trace_id)));
    let entries = read_run_log(&path).unwrap();
    assert!(entries.iter().all(|e| e.trace_id == r.trace_id));
    let seqs: Vec<u64> = entries.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (0..entries.len() as u64).collect::<Vec<_>>());
    let count = |node: &str| entries.iter().filter(|e| e.node == node).count();
    for node in [
        "datasource_resolver",
        "decomposer",
        "global_planner",
        "layer_router",
        "schema_retriever",
        "ast_planner",
        "logical_validator",
        "generator",
        "physical_validator",
        "executor",
        "aggregator",
        "answer_synthesizer",
        "planner:decomposer",
        "planner:ast_planner",
        "planner:answer_synthesizer",
    ] {
        assert_eq!(count(node), 1, "{node}");
    }
    let subgraph = format!("sql_agent:{}:{}", r.subqueries[0].id, r.trace_id);
    let exec = entries.iter().find(|e| e.node == "executor").unwrap();
    assert_eq!(exec.subgraph_id.as_deref(), Some(subgraph.as_str()));
    assert_eq!(exec.attempt, Some(1));
    let call = entries
        .iter()
        .find(|e| e.node == "planner:ast_planner")
        .unwrap();
    assert_eq!(call.delta["step"], json!("ast_planner"));
    assert!(call.delta["request"]["sub_query"].is_object());
    assert!(
        call.delta["response"]["tables"].is_array(),
        "{}",
        call.delta["response"]
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), entries.len());
}
