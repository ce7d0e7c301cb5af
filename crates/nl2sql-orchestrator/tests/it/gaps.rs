//! Tests that prove the fixes of SPEC §9 gaps the audit (`docs/spec-gaps.md`) found
//! without one: retry routing on warnings (GAP-02), on the current attempt's errors only
//! (GAP-03), after generator and executor failures (GAP-04); the merge order of parallel
//! scans (GAP-15); the decomposer's re-prompt after failed validation (GAP-16); and the
//! password in a datasource URL (GAP-40).
//!
//! The planners here are the offline planner with scripted faults, the databases are
//! copies of `tests/data/fixtures/manufacturing.db`, and the one adapter fault that SQLite
//! cannot produce for real (a sandbox refusal at execution) wraps the real SQLite adapter.

#![allow(clippy::unwrap_used)] // reason: test helpers fail loudly on broken fixtures

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use nl2sql_adapter::{Limits, ResultError, ResultErrorCode, ResultFrame};
use nl2sql_adapter_sqlite::SqliteAdapter;
use nl2sql_orchestrator::{
    AskOptions, DatasourceRegistry, Engine, EngineOptions, RunLogEntry, RunResult, effective_url,
    read_run_log,
};
use nl2sql_plan::{DecomposerResponse, Expr, GroupByItem, LiteralValue, Op, PlanModel};
use nl2sql_planner::{
    AnswerRequest, DecomposeRequest, FinalAnswer, PlanRequest, Planner, RefineRequest,
};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::{
    ConfigFile, DatasourceConfig, EnvSecrets, ErrorCode, PipelineError, RunStatus, ScanStatus,
    Secret, Severity,
};
use nl2sql_test_support::TempDir;
use serde_json::{Value, json};

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

/// An engine over `registry`, indexed, with everything under `dir`.
async fn engine_over(
    registry: DatasourceRegistry,
    dir: &Path,
    planner: Arc<dyn Planner>,
    options: EngineOptions,
) -> Engine {
    let engine = Engine::open(registry, planner, dir)
        .unwrap()
        .with_options(options);
    let report = engine.index_all().await;
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    engine
}

/// An engine over the fixture (ad hoc URL).
async fn fixture_engine(dir: &Path, planner: Arc<dyn Planner>, options: EngineOptions) -> Engine {
    let url = format!("sqlite://{}", fixture().canonicalize().unwrap().display());
    let registry = DatasourceRegistry::ad_hoc(&url).unwrap();
    engine_over(registry, dir, planner, options).await
}

fn run_log(engine: &Engine, r: &RunResult) -> Vec<RunLogEntry> {
    read_run_log(&engine.run_log_path(&r.trace_id).unwrap()).unwrap()
}

/// The nodes of the run log that belong to a scan attempt, as `(attempt, node)`.
fn scan_nodes(entries: &[RunLogEntry]) -> Vec<(u32, String)> {
    entries
        .iter()
        .filter(|e| e.subgraph_id.is_some())
        .filter_map(|e| e.attempt.map(|a| (a, e.node.clone())))
        .collect()
}

// ---------------------------------------------------------------------------------------
// A planner with a script of faults.

/// What the scripted planner does for one `plan` call.
#[derive(Debug)]
enum Turn {
    /// The offline planner's plan, unchanged.
    Offline,
    /// The offline planner's plan, changed by the function.
    Edit(fn(&mut PlanModel)),
    /// This error instead of a plan.
    Fail(PipelineError),
}

/// The offline planner, whose `plan` calls follow a script (then the offline plan); it
/// records the plan and refine requests it receives.
#[derive(Debug, Default)]
struct Scripted {
    inner: OfflinePlanner,
    turns: Mutex<VecDeque<Turn>>,
    plan_requests: Mutex<Vec<PlanRequest>>,
    refine_requests: Mutex<Vec<RefineRequest>>,
}

impl Scripted {
    fn new(turns: Vec<Turn>) -> Arc<Scripted> {
        Arc::new(Scripted {
            turns: Mutex::new(turns.into()),
            ..Scripted::default()
        })
    }

    fn plan_calls(&self) -> usize {
        self.plan_requests.lock().unwrap().len()
    }

    fn feedback(&self) -> Vec<Option<String>> {
        self.plan_requests
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.feedback.clone())
            .collect()
    }

    /// The codes of the errors each refine call was given.
    fn refined_codes(&self) -> Vec<Vec<ErrorCode>> {
        self.refine_requests
            .lock()
            .unwrap()
            .iter()
            .map(|r| r.errors.iter().map(|e| e.code).collect())
            .collect()
    }
}

#[async_trait]
impl Planner for Scripted {
    fn name(&self) -> String {
        "scripted".to_owned()
    }
    async fn decompose(&self, r: &DecomposeRequest) -> Result<DecomposerResponse, PipelineError> {
        self.inner.decompose(r).await
    }
    async fn plan(&self, r: &PlanRequest) -> Result<PlanModel, PipelineError> {
        self.plan_requests.lock().unwrap().push(r.clone());
        let turn = self.turns.lock().unwrap().pop_front();
        match turn.unwrap_or(Turn::Offline) {
            Turn::Offline => self.inner.plan(r).await,
            Turn::Edit(edit) => {
                let mut plan = self.inner.plan(r).await?;
                edit(&mut plan);
                Ok(plan)
            }
            Turn::Fail(e) => Err(e),
        }
    }
    async fn refine(&self, r: &RefineRequest) -> Result<String, PipelineError> {
        self.refine_requests.lock().unwrap().push(r.clone());
        self.inner.refine(r).await
    }
    async fn answer(&self, r: &AnswerRequest) -> Result<FinalAnswer, PipelineError> {
        self.inner.answer(r).await
    }
}

fn from_alias(plan: &PlanModel) -> String {
    plan.tables[0].alias.clone()
}

/// `WHERE <alias>.name = 'Widget Epsilon'`: a product that exists, but is not among the
/// five sample values of `products.name` (eight distinct names), so the logical
/// validator can only warn (rule L with non-exhaustive samples).
fn filter_on_an_unsampled_product(plan: &mut PlanModel) {
    let a = from_alias(plan);
    plan.where_ = Some(Expr::binary(
        Op::Eq,
        Expr::column(Some(&a), "name"),
        Expr::literal(LiteralValue::Str("Widget Epsilon".to_owned())),
    ));
}

/// A column that does not exist: a blocking `COLUMN_NOT_FOUND` (strict columns).
fn select_a_missing_column(plan: &mut PlanModel) {
    let a = from_alias(plan);
    plan.select_items[0].expr = Expr::func("COUNT", vec![Expr::column(Some(&a), "no_such")]);
}

/// `GROUP BY 1`: passes the logical validator, but the generator refuses a constant
/// group-by key (`SQL_GEN_FAILED`).
fn group_by_a_constant(plan: &mut PlanModel) {
    plan.group_by = vec![GroupByItem {
        expr: Expr::literal(LiteralValue::Int(1)),
        ordinal: 0,
    }];
}

/// `SUM(id + 9223372036854775000)`: valid, dry-runs fine, and SQLite fails it while it
/// runs ("integer overflow" as the sum passes i64::MAX).
fn sum_that_overflows(plan: &mut PlanModel) {
    let a = from_alias(plan);
    plan.select_items[0].expr = Expr::func(
        "SUM",
        vec![Expr::binary(
            Op::Plus,
            Expr::column(Some(&a), "id"),
            Expr::literal(LiteralValue::Int(9_223_372_036_854_775_000)),
        )],
    );
}

fn planner_error(code: ErrorCode, severity: Severity, message: &str) -> PipelineError {
    PipelineError::new("ast_planner", code, severity, message)
}

// ---------------------------------------------------------------------------------------
// GAP-02

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap02_a_plan_with_only_warnings_runs_on_the_first_attempt() {
    let dir = TempDir::new("gap02");
    let planner = Scripted::new(vec![Turn::Edit(filter_on_an_unsampled_product)]);
    let engine = fixture_engine(dir.path(), planner.clone(), fast_options()).await;
    let r = engine
        .ask("How many products do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(1)]]), "the filter ran");
    let sq = &r.subqueries[0];
    assert_eq!(sq.status, ScanStatus::Succeeded);
    assert_eq!(sq.attempts, 1, "a warning never causes a retry");
    assert_eq!(sq.attempt_log.len(), 1);
    assert!(sq.attempt_log[0].errors.is_empty());
    assert!(
        sq.sql
            .as_deref()
            .unwrap_or_default()
            .contains("Widget Epsilon")
    );
    assert_eq!(planner.plan_calls(), 1);
    assert!(planner.refined_codes().is_empty(), "the refiner never ran");
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    // The warning is reported to the caller.
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("'Widget Epsilon' not found in stats for products.name")),
        "{:?}",
        r.warnings
    );
    // The logical validator logged it as a WARNING, and the attempt went on to execute.
    let entries = run_log(&engine, &r);
    let logical = entries
        .iter()
        .find(|e| e.node == "logical_validator")
        .unwrap();
    assert_eq!(logical.errors.len(), 1, "{:?}", logical.errors);
    assert_eq!(logical.errors[0].severity, Severity::Warning);
    assert_eq!(logical.errors[0].code, ErrorCode::InvalidPlanStructure);
    let nodes = scan_nodes(&entries);
    assert!(nodes.contains(&(1, "executor".to_owned())), "{nodes:?}");
    assert!(nodes.iter().all(|(a, _)| *a == 1), "{nodes:?}");
    assert!(
        !nodes
            .iter()
            .any(|(_, n)| n == "retry_handler" || n == "refiner")
    );
}

// ---------------------------------------------------------------------------------------
// GAP-03

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap03_an_earlier_attempts_error_does_not_decide_the_next_attempt() {
    // One retry allowed. Attempt 1 fails in the planner (a blocking, retryable error);
    // attempt 2 has a warning only. Judged on every error so far, attempt 2 would still
    // see attempt 1's PLANNING_FAILURE and, with no retry left, end the scan unexecuted.
    let dir = TempDir::new("gap03-a");
    let planner = Scripted::new(vec![
        Turn::Fail(planner_error(
            ErrorCode::PlanningFailure,
            Severity::Error,
            "the model's plan is not valid JSON",
        )),
        Turn::Edit(filter_on_an_unsampled_product),
    ]);
    let options = EngineOptions {
        max_retries: 1,
        ..fast_options()
    };
    let engine = fixture_engine(dir.path(), planner.clone(), options).await;
    let r = engine
        .ask("How many products do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(1)]]));
    let sq = &r.subqueries[0];
    assert_eq!(sq.attempts, 2);
    assert_eq!(sq.attempt_log[0].errors.len(), 1);
    assert_eq!(sq.attempt_log[0].errors[0].code, ErrorCode::PlanningFailure);
    assert_eq!(sq.attempt_log[0].plan, None);
    assert!(sq.attempt_log[1].errors.is_empty());
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    assert_eq!(
        planner.refined_codes(),
        vec![vec![ErrorCode::PlanningFailure]]
    );

    // Three attempts failing at different steps: each refine call and each attempt's
    // feedback carry only the errors of the attempt just made.
    let dir = TempDir::new("gap03-b");
    let planner = Scripted::new(vec![
        Turn::Edit(select_a_missing_column),
        Turn::Edit(sum_that_overflows),
        Turn::Offline,
    ]);
    let engine = fixture_engine(dir.path(), planner.clone(), fast_options()).await;
    let r = engine
        .ask("How many products do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(8)]]));
    let sq = &r.subqueries[0];
    assert_eq!(sq.attempts, 3);
    let per_attempt: Vec<Vec<ErrorCode>> = sq
        .attempt_log
        .iter()
        .map(|a| a.errors.iter().map(|e| e.code).collect())
        .collect();
    assert_eq!(
        per_attempt,
        vec![
            vec![ErrorCode::ColumnNotFound],
            vec![ErrorCode::ExecutionFailed],
            vec![],
        ]
    );
    assert_eq!(
        planner.refined_codes(),
        vec![
            vec![ErrorCode::ColumnNotFound],
            vec![ErrorCode::ExecutionFailed]
        ]
    );
    let third = planner.feedback()[2].clone().unwrap_or_default();
    assert!(third.contains("EXECUTION_FAILED"), "{third}");
    assert!(!third.contains("COLUMN_NOT_FOUND"), "{third}");
    assert!(r.errors.is_empty(), "{:#?}", r.errors);

    // A non-retryable error in the second attempt ends the scan there, and the scan's
    // errors are that attempt's: the first attempt's error stays in its attempt log.
    let dir = TempDir::new("gap03-c");
    let planner = Scripted::new(vec![
        Turn::Edit(select_a_missing_column),
        Turn::Fail(planner_error(
            ErrorCode::MissingLlm,
            Severity::Error,
            "no model is configured",
        )),
    ]);
    let engine = fixture_engine(dir.path(), planner.clone(), fast_options()).await;
    let r = engine
        .ask("How many products do we have?", AskOptions::default())
        .await;
    assert_eq!(r.status, RunStatus::Failed);
    let sq = &r.subqueries[0];
    assert_eq!(sq.status, ScanStatus::Failed);
    assert_eq!(sq.attempts, 2, "fatal: no third attempt");
    assert_eq!(planner.plan_calls(), 2);
    let scan_errors: Vec<ErrorCode> = r
        .errors
        .iter()
        .filter(|e| e.subquery_id.as_deref() == Some(sq.id.as_str()))
        .map(|e| e.code)
        .collect();
    assert_eq!(scan_errors, vec![ErrorCode::MissingLlm], "{:#?}", r.errors);
    assert_eq!(
        sq.attempt_log[0].errors[0].code,
        ErrorCode::ColumnNotFound,
        "kept in the attempt log"
    );
}

// ---------------------------------------------------------------------------------------
// GAP-04

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap04_a_generator_failure_is_refined_and_retried_without_reaching_the_executor() {
    let dir = TempDir::new("gap04-gen");
    let planner = Scripted::new(vec![Turn::Edit(group_by_a_constant)]);
    let engine = fixture_engine(dir.path(), planner.clone(), fast_options()).await;
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(3)]]));
    let sq = &r.subqueries[0];
    assert_eq!(sq.attempts, 2);
    let first = &sq.attempt_log[0];
    assert_eq!(first.errors.len(), 1, "{:?}", first.errors);
    assert_eq!(first.errors[0].code, ErrorCode::SqlGenFailed);
    assert_eq!(first.errors[0].node, "generator");
    assert_eq!(first.sql, None, "no SQL was produced");
    assert!(sq.attempt_log[1].errors.is_empty());
    assert_eq!(planner.refined_codes(), vec![vec![ErrorCode::SqlGenFailed]]);
    let second = planner.feedback()[1].clone().unwrap_or_default();
    assert!(second.contains("SQL_GEN_FAILED"), "{second}");
    // Attempt 1 stopped at the generator: no physical validation, no execution, and no
    // MISSING_SQL anywhere.
    let entries = run_log(&engine, &r);
    let nodes = scan_nodes(&entries);
    for node in ["physical_validator", "executor"] {
        assert!(!nodes.contains(&(1, node.to_owned())), "{node}: {nodes:?}");
        assert!(nodes.contains(&(2, node.to_owned())), "{node}: {nodes:?}");
    }
    assert!(
        nodes.contains(&(1, "retry_handler".to_owned())),
        "{nodes:?}"
    );
    assert!(nodes.contains(&(1, "refiner".to_owned())), "{nodes:?}");
    assert!(
        !entries
            .iter()
            .flat_map(|e| &e.errors)
            .any(|e| e.code == ErrorCode::MissingSql)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap04_an_execution_failure_is_refined_and_retried_until_the_budget_ends() {
    // Attempt 1's statement fails while it runs; attempt 2 runs the offline plan.
    let dir = TempDir::new("gap04-exec");
    let planner = Scripted::new(vec![Turn::Edit(sum_that_overflows)]);
    let engine = fixture_engine(dir.path(), planner.clone(), fast_options()).await;
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(3)]]));
    let sq = &r.subqueries[0];
    assert_eq!(sq.attempts, 2);
    let first = &sq.attempt_log[0];
    assert_eq!(first.errors.len(), 1, "{:?}", first.errors);
    assert_eq!(first.errors[0].code, ErrorCode::ExecutionFailed);
    assert_eq!(first.errors[0].node, "executor");
    assert!(first.sql.as_deref().unwrap_or_default().contains("SUM"));
    assert_eq!(
        planner.refined_codes(),
        vec![vec![ErrorCode::ExecutionFailed]]
    );
    let second = planner.feedback()[1].clone().unwrap_or_default();
    assert!(second.contains("EXECUTION_FAILED"), "{second}");
    let nodes = scan_nodes(&run_log(&engine, &r));
    assert!(nodes.contains(&(1, "executor".to_owned())), "{nodes:?}");
    assert!(nodes.contains(&(2, "executor".to_owned())), "{nodes:?}");

    // A statement that always fails: 1 + max_retries attempts, then the scan fails with
    // the execution error.
    let dir = TempDir::new("gap04-exec-budget");
    let planner = Scripted::new(vec![
        Turn::Edit(sum_that_overflows),
        Turn::Edit(sum_that_overflows),
        Turn::Edit(sum_that_overflows),
    ]);
    let options = EngineOptions {
        max_retries: 2,
        ..fast_options()
    };
    let engine = fixture_engine(dir.path(), planner.clone(), options).await;
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert_eq!(r.status, RunStatus::Failed);
    let sq = &r.subqueries[0];
    assert_eq!(sq.status, ScanStatus::Failed);
    assert_eq!(sq.attempts, 3);
    assert_eq!(planner.plan_calls(), 3);
    assert_eq!(planner.refined_codes().len(), 2);
    let scan_errors: Vec<(ErrorCode, &str)> = r
        .errors
        .iter()
        .filter(|e| e.subquery_id.as_deref() == Some(sq.id.as_str()))
        .map(|e| (e.code, e.node.as_str()))
        .collect();
    assert_eq!(scan_errors, vec![(ErrorCode::ExecutionFailed, "executor")]);
}

/// The fixture through the real SQLite adapter, except that execution is refused the
/// way an engine sandbox refuses a statement (`SECURITY_VIOLATION`, CRITICAL).
struct RefusingExecution {
    inner: SqliteAdapter,
}

wrapping_adapter!(RefusingExecution {
    async fn execute_guarded(
        &self,
        _sql: &nl2sql_validate::GuardedSql,
        _limits: &nl2sql_adapter::RequestLimits,
    ) -> ResultFrame {
        let e = ResultError::new(
            ResultErrorCode::SecurityViolation,
            "The engine sandbox refused the statement.",
        )
        .at("execute", self.inner.id());
        ResultFrame::failed(e, 0.0)
    }
});

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap04_a_fatal_executor_error_ends_the_scan_without_a_retry() {
    let dir = TempDir::new("gap04-fatal");
    let adapter = RefusingExecution {
        inner: SqliteAdapter::open("manufacturing", &fixture(), Limits::default()).unwrap(),
    };
    let registry = DatasourceRegistry::empty().with_adapter(Arc::new(adapter));
    let planner = Scripted::new(Vec::new());
    let engine = engine_over(registry, dir.path(), planner.clone(), fast_options()).await;
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(r.rows, None);
    let sq = &r.subqueries[0];
    assert_eq!(sq.status, ScanStatus::Failed);
    assert_eq!(sq.attempts, 1);
    assert_eq!(planner.plan_calls(), 1);
    assert!(planner.refined_codes().is_empty(), "no refine, no retry");
    let scan_errors: Vec<_> = r
        .errors
        .iter()
        .filter(|e| e.subquery_id.as_deref() == Some(sq.id.as_str()))
        .collect();
    assert_eq!(scan_errors.len(), 1, "{:#?}", r.errors);
    assert_eq!(scan_errors[0].code, ErrorCode::SecurityViolation);
    assert_eq!(scan_errors[0].severity, Severity::Critical);
    assert_eq!(scan_errors[0].node, "executor");
    let nodes = scan_nodes(&run_log(&engine, &r));
    assert!(nodes.contains(&(1, "executor".to_owned())), "{nodes:?}");
    assert!(
        !nodes
            .iter()
            .any(|(_, n)| n == "retry_handler" || n == "refiner")
    );
}

// ---------------------------------------------------------------------------------------
// GAP-15

/// The offline planner, but the plan of a scan on `slow` takes a while, and every plan
/// call can be made to fail; records the order in which plan calls finish.
#[derive(Debug, Default)]
struct Staggered {
    inner: OfflinePlanner,
    slow: Mutex<String>,
    fail: bool,
    finished: Mutex<Vec<String>>,
}

#[async_trait]
impl Planner for Staggered {
    fn name(&self) -> String {
        "staggered".to_owned()
    }
    async fn decompose(&self, r: &DecomposeRequest) -> Result<DecomposerResponse, PipelineError> {
        self.inner.decompose(r).await
    }
    async fn plan(&self, r: &PlanRequest) -> Result<PlanModel, PipelineError> {
        let ds = r.sub_query.datasource_id.clone();
        if *self.slow.lock().unwrap() == ds {
            tokio::time::sleep(Duration::from_millis(400)).await;
        }
        self.finished.lock().unwrap().push(ds.clone());
        if self.fail {
            return Err(planner_error(
                ErrorCode::PlanningFailure,
                Severity::Critical,
                &format!("no plan for the scan on {ds}"),
            ));
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

/// What a run produced, without what differs from run to run by design (trace id,
/// timings, artifact locations).
fn shape(r: &RunResult) -> Value {
    json!({
        "status": r.status,
        "rows": r.rows,
        "terminal_results": r.terminal_results,
        "subqueries": r.subqueries.iter().map(|s| json!({
            "id": s.id,
            "datasource_id": s.datasource_id,
            "status": s.status,
            "attempts": s.attempts,
            "sql": s.sql,
            "row_count": s.row_count,
        })).collect::<Vec<_>>(),
        "errors": r.errors,
        "warnings": r.warnings,
        "answer": r.answer,
    })
}

const TWO_PLANTS: &str =
    "Compare the number of factories in plant north with the number of factories in plant south";

async fn two_plants(dir: &Path, planner: Arc<dyn Planner>) -> Engine {
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
    let registry = DatasourceRegistry::from_config(&config, dir, &EnvSecrets).unwrap();
    engine_over(registry, &dir.join("data"), planner, fast_options()).await
}

/// Runs the two-plant question twice, first with the north scan slow, then the south
/// one; returns both results and the order the scans finished planning in.
async fn staggered_runs(fail: bool) -> [(RunResult, Vec<String>); 2] {
    let dir = TempDir::new("gap15");
    let planner = Arc::new(Staggered {
        fail,
        ..Staggered::default()
    });
    let engine = two_plants(dir.path(), planner.clone()).await;
    let mut out = Vec::new();
    for slow in ["plant_north", "plant_south"] {
        *planner.slow.lock().unwrap() = slow.to_owned();
        planner.finished.lock().unwrap().clear();
        let r = engine.ask(TWO_PLANTS, AskOptions::default()).await;
        out.push((r, planner.finished.lock().unwrap().clone()));
    }
    let [a, b]: [(RunResult, Vec<String>); 2] = out.try_into().unwrap();
    [a, b]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap15_parallel_scans_merge_in_node_id_order_whatever_order_they_finish_in() {
    // Both scans fail: each adds an error and a warning to the run, in merge order.
    let [(a, a_order), (b, b_order)] = staggered_runs(true).await;
    assert_eq!(a_order, ["plant_south", "plant_north"]);
    assert_eq!(b_order, ["plant_north", "plant_south"]);
    assert_eq!(a.subqueries.len(), 2, "{:#?}", a.errors);
    assert_eq!(shape(&a), shape(&b));
    let mut ids: Vec<&str> = a.subqueries.iter().map(|s| s.id.as_str()).collect();
    let in_report_order = ids.clone();
    ids.sort_unstable();
    assert_eq!(in_report_order, ids, "scans are reported in id order");
    let error_ids: Vec<&str> = a
        .errors
        .iter()
        .filter_map(|e| e.subquery_id.as_deref())
        .collect();
    assert_eq!(error_ids, ids, "{:#?}", a.errors);
    assert!(
        a.errors
            .iter()
            .filter(|e| e.subquery_id.is_some())
            .all(|e| e.code == ErrorCode::PlanningFailure),
        "{:#?}",
        a.errors
    );
    let warned: Vec<&str> = a
        .warnings
        .iter()
        .filter_map(|w| ids.iter().copied().find(|id| w.contains(id)))
        .collect();
    assert_eq!(warned, ids, "{:?}", a.warnings);

    // Both scans succeed: the same rows, terminal results and reports either way.
    let [(a, a_order), (b, b_order)] = staggered_runs(false).await;
    assert_eq!(a_order, ["plant_south", "plant_north"]);
    assert_eq!(b_order, ["plant_north", "plant_south"]);
    assert!(a.success, "{:#?}", a.errors);
    assert_eq!(shape(&a), shape(&b));
    assert_eq!(a.subqueries.len(), 2);
}

// ---------------------------------------------------------------------------------------
// GAP-16

/// The offline planner, but its first decomposition gives the first sub-query an empty
/// expected schema (a progressive-validation finding); records each request's feedback.
#[derive(Debug, Default)]
struct InvalidOnce {
    inner: OfflinePlanner,
    feedback: Mutex<Vec<Option<String>>>,
    broken: Mutex<Option<String>>,
}

#[async_trait]
impl Planner for InvalidOnce {
    fn name(&self) -> String {
        "invalid-once".to_owned()
    }
    async fn decompose(&self, r: &DecomposeRequest) -> Result<DecomposerResponse, PipelineError> {
        let first = {
            let mut fb = self.feedback.lock().unwrap();
            fb.push(r.feedback.clone());
            fb.len() == 1
        };
        let mut response = self.inner.decompose(r).await?;
        if first {
            let sq = &mut response.sub_queries[0];
            sq.expected_schema.clear();
            *self.broken.lock().unwrap() = Some(sq.id.clone());
        }
        Ok(response)
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
async fn gap16_a_decomposition_that_fails_validation_is_re_prompted_with_the_findings() {
    let dir = TempDir::new("gap16");
    let planner = Arc::new(InvalidOnce::default());
    let engine = fixture_engine(dir.path(), planner.clone(), fast_options()).await;
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(3)]]));
    assert!(r.errors.is_empty(), "{:#?}", r.errors);
    let feedback = planner.feedback.lock().unwrap().clone();
    assert_eq!(feedback.len(), 2);
    assert_eq!(feedback[0], None);
    let second = feedback[1].clone().unwrap_or_default();
    let broken = planner.broken.lock().unwrap().clone().unwrap();
    assert!(
        second.starts_with("Decomposition validation failed at level"),
        "{second}"
    );
    assert!(second.contains(&broken), "{second}");
    assert!(second.contains("expected_schema"), "{second}");
    assert!(second.contains("Hint:"), "{second}");
    // The run log has both decomposer attempts; the first with the finding.
    let entries = run_log(&engine, &r);
    let decomposer: Vec<&RunLogEntry> = entries.iter().filter(|e| e.node == "decomposer").collect();
    assert_eq!(decomposer.len(), 2);
    assert_eq!(decomposer[0].delta["attempt"], json!(1));
    assert!(!decomposer[0].errors.is_empty());
    assert!(
        decomposer[0]
            .errors
            .iter()
            .all(|e| e.code == ErrorCode::InvalidPlanStructure)
    );
    assert_eq!(decomposer[1].delta["attempt"], json!(2));
    assert!(decomposer[1].errors.is_empty());

    // With no re-prompt left, the findings become the run's PLANNING_FAILURE.
    let dir = TempDir::new("gap16-no-retry");
    let planner = Arc::new(InvalidOnce::default());
    let options = EngineOptions {
        decomposer_max_retries: 0,
        ..fast_options()
    };
    let engine = fixture_engine(dir.path(), planner.clone(), options).await;
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert_eq!(r.status, RunStatus::Failed);
    assert!(r.subqueries.is_empty());
    assert_eq!(planner.feedback.lock().unwrap().len(), 1);
    let failures = r.errors_with(ErrorCode::PlanningFailure);
    assert_eq!(failures.len(), 1, "{:#?}", r.errors);
    assert!(
        failures[0]
            .message
            .contains("failed validation after 1 attempt(s)"),
        "{}",
        failures[0].message
    );
    assert!(failures[0].message.contains("expected_schema"));
}

// ---------------------------------------------------------------------------------------
// GAP-40

fn server_config(url: &str, password: &str) -> DatasourceConfig {
    let mut config = DatasourceConfig::ad_hoc(url).unwrap();
    config.password = Some(Secret::new(password));
    config
}

/// Passwords with every character that means something in a URL, and non-ASCII text.
const HARD_PASSWORDS: [&str; 6] = [
    "p@ss:w/rd",
    "100%#?&=+",
    "a b;c,d[e]f",
    "ünïcødé-密码-🔑",
    "../../etc/passwd?x=1#frag",
    "user@other-host:5432/db",
];

#[test]
fn gap40_a_separate_password_is_percent_encoded_and_round_trips() {
    for password in HARD_PASSWORDS {
        for (url, port, db) in [
            (
                "postgres://alice@db.internal:5433/sales?sslmode=disable",
                5433,
                "sales",
            ),
            ("mysql://alice@db.internal:3307/sales", 3307, "sales"),
        ] {
            let config = server_config(url, password);
            let effective = effective_url(&config, Path::new("/nowhere"));
            // Nothing but unreserved characters and escapes in the user info.
            let rest = effective.split_once("://").unwrap().1;
            let userinfo = rest.rsplit_once('@').unwrap().0;
            assert!(
                userinfo.bytes().all(|b| b.is_ascii_alphanumeric()
                    || matches!(b, b'-' | b'.' | b'_' | b'~' | b'%' | b':')),
                "{effective}"
            );
            assert_eq!(userinfo.matches(':').count(), 1, "{effective}");
            // A URL parser reads back the same user, password, host, port and path.
            let parsed = url::Url::parse(&effective).unwrap();
            assert_eq!(parsed.username(), "alice");
            assert_eq!(parsed.host_str(), Some("db.internal"));
            assert_eq!(parsed.port(), Some(port));
            assert_eq!(parsed.path(), format!("/{db}"));
            let decoded = percent_decode(parsed.password().unwrap());
            assert_eq!(decoded, password, "{effective}");
            // And so do the drivers' own parsers, the ones the adapters call.
            if url.starts_with("postgres") {
                assert_eq!(parsed.query(), Some("sslmode=disable"));
                let pg: tokio_postgres::Config = effective.parse().unwrap();
                assert_eq!(pg.get_password(), Some(password.as_bytes()), "{effective}");
                assert_eq!(pg.get_user(), Some("alice"));
                assert_eq!(pg.get_ports(), [port]);
                assert_eq!(pg.get_dbname(), Some(db));
            } else {
                let my = mysql_async::Opts::from_url(&effective).unwrap();
                assert_eq!(my.pass(), Some(password), "{effective}");
                assert_eq!(my.user(), Some("alice"));
                assert_eq!(my.ip_or_hostname(), "db.internal");
                assert_eq!(my.tcp_port(), port);
                assert_eq!(my.db_name(), Some(db));
            }
        }
    }
}

/// Decodes `%XX` escapes (UTF-8).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn gap40_a_password_in_the_url_wins_and_file_urls_are_left_alone() {
    // The URL's own password is kept (the separate one is not added twice).
    let config = server_config("postgres://alice:own@db:5432/sales", "p@ss");
    assert_eq!(
        effective_url(&config, Path::new("/x")),
        "postgres://alice:own@db:5432/sales"
    );
    // File engines have no password; a relative path is made absolute.
    let config = DatasourceConfig::ad_hoc("sqlite://data/plant.db").unwrap();
    assert_eq!(
        effective_url(&config, Path::new("/srv/nl2sql")),
        "sqlite:///srv/nl2sql/data/plant.db"
    );
}

#[test]
fn gap40_no_secret_appears_in_debug_or_display_output() {
    let password = "s3cr3t-p@ss:w/rd";
    let url_password = "url-s3cr3t";
    let toml = format!(
        "version = 1\n\n[[datasources]]\nid = \"sales\"\nurl = \"postgres://alice:{url_password}@db:5432/sales\"\n\n[[datasources]]\nid = \"shop\"\nurl = \"mysql://bob@db:3306/shop\"\npassword = \"${{env:NL2SQL_GAP40_TEST_PASSWORD}}\"\n"
    );
    let file = ConfigFile::from_toml_str(&toml).unwrap();
    let secrets = |key: &str| (key == "NL2SQL_GAP40_TEST_PASSWORD").then(|| password.to_owned());
    let configs = file.resolve(&FnSecrets(&secrets)).unwrap();
    let shop = configs.iter().find(|c| c.id == "shop").unwrap();
    assert_eq!(shop.password.as_ref().map(Secret::expose), Some(password));
    let registry =
        DatasourceRegistry::from_config(&file, Path::new("/x"), &FnSecrets(&secrets)).unwrap();
    let texts = [
        format!("{configs:?}"),
        format!("{configs:#?}"),
        format!("{registry:?}"),
        format!("{}", shop.password.as_ref().unwrap()),
        format!("{:?}", shop.password.as_ref().unwrap()),
        shop.redacted_url(),
        configs[0].redacted_url(),
        format!("{}", configs[0].url),
    ];
    for text in &texts {
        for secret in [password, url_password, "s3cr3t"] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
    }
    assert!(texts[0].contains("Secret(***)"), "{}", texts[0]);
}

/// A secret source backed by a function.
struct FnSecrets<'a>(&'a dyn Fn(&str) -> Option<String>);

impl nl2sql_state::SecretSource for FnSecrets<'_> {
    fn lookup(&self, provider: &str, key: &str) -> Result<Option<String>, String> {
        if provider == "env" {
            Ok((self.0)(key))
        } else {
            Err(format!("unknown secret provider '{provider}'"))
        }
    }
}

// ---------------------------------------------------------------------------------------
// GAP-13

/// The fixture through the real SQLite adapter, except that while `down` is set every dry
/// run and execution fails as an unreachable database does (`SERVICE_UNAVAILABLE`, which
/// the breaker counts); counts the calls that reached it.
struct FlakyDatabase {
    inner: SqliteAdapter,
    down: std::sync::atomic::AtomicBool,
    executed: std::sync::atomic::AtomicUsize,
}

impl FlakyDatabase {
    /// Counts a call; the failure an unreachable database gives while `down`.
    fn call(&self, stage: &str) -> Option<ResultError> {
        use std::sync::atomic::Ordering;
        self.executed.fetch_add(1, Ordering::SeqCst);
        self.down.load(Ordering::SeqCst).then(|| {
            ResultError::new(
                ResultErrorCode::ServiceUnavailable,
                "The database is unreachable.",
            )
            .at(stage, nl2sql_adapter::DatasourceAdapter::id(&self.inner))
        })
    }
}

#[async_trait]
impl nl2sql_adapter::DatasourceAdapter for FlakyDatabase {
    fn id(&self) -> &str {
        self.inner.id()
    }
    fn engine_type(&self) -> &str {
        self.inner.engine_type()
    }
    fn dialect(&self) -> nl2sql_state::Dialect {
        self.inner.dialect()
    }
    fn capabilities(&self) -> &nl2sql_adapter::CapabilitySet {
        self.inner.capabilities()
    }
    fn limits(&self) -> Limits {
        self.inner.limits()
    }
    async fn test_connection(&self) -> Result<(), ResultError> {
        self.inner.test_connection().await
    }
    async fn schema_snapshot(&self) -> Result<nl2sql_state::SchemaSnapshot, ResultError> {
        self.inner.schema_snapshot().await
    }
    async fn schema_contract(&self) -> Result<nl2sql_state::SchemaContract, ResultError> {
        self.inner.schema_contract().await
    }
    async fn run_sql(&self, sql: &nl2sql_validate::GuardedSql, limits: Limits) -> ResultFrame {
        self.inner.run_sql(sql, limits).await
    }
    async fn dry_run(&self, sql: &nl2sql_validate::GuardedSql) -> nl2sql_adapter::DryRunResult {
        match self.call("dry_run") {
            Some(e) => nl2sql_adapter::DryRunResult {
                is_valid: false,
                error_message: Some(e.safe_message.clone()),
                data: None,
                error: Some(e),
            },
            None => self.inner.dry_run(sql).await,
        }
    }
    async fn cost_estimate(
        &self,
        sql: &nl2sql_validate::GuardedSql,
    ) -> Result<nl2sql_adapter::CostEstimate, ResultError> {
        self.inner.cost_estimate(sql).await
    }
    async fn explain(
        &self,
        sql: &nl2sql_validate::GuardedSql,
    ) -> Result<nl2sql_adapter::QueryPlan, ResultError> {
        self.inner.explain(sql).await
    }
    fn details(&self) -> Value {
        self.inner.details()
    }
    async fn execute_guarded(
        &self,
        sql: &nl2sql_validate::GuardedSql,
        limits: &nl2sql_adapter::RequestLimits,
    ) -> ResultFrame {
        match self.call("execute") {
            Some(e) => ResultFrame::failed(e, 0.0),
            None => self.inner.execute_guarded(sql, limits).await,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap13_the_database_breaker_opens_on_repeated_failures_and_recovers() {
    use std::sync::atomic::Ordering;
    let dir = TempDir::new("gap13-breaker");
    let adapter = Arc::new(FlakyDatabase {
        inner: SqliteAdapter::open("manufacturing", &fixture(), Limits::default()).unwrap(),
        down: std::sync::atomic::AtomicBool::new(true),
        executed: std::sync::atomic::AtomicUsize::new(0),
    });
    let registry = DatasourceRegistry::empty()
        .with_adapter(Arc::clone(&adapter) as Arc<dyn nl2sql_adapter::DatasourceAdapter>)
        .with_breaker_config(nl2sql_adapter::BreakerConfig {
            fail_max: 2,
            reset_timeout: Duration::from_millis(400),
        });
    let options = EngineOptions {
        max_retries: 0,
        ..fast_options()
    };
    let engine = engine_over(
        registry,
        dir.path(),
        Arc::new(OfflinePlanner::new()),
        options,
    )
    .await;
    let ask = || engine.ask("How many factories do we have?", AskOptions::default());
    // Two failures reach the database and open the breaker.
    for n in 1..=2 {
        let r = ask().await;
        assert_eq!(r.status, RunStatus::Failed, "{:#?}", r.errors);
        assert!(
            r.errors
                .iter()
                .any(|e| e.code == ErrorCode::ServiceUnavailable),
            "{:#?}",
            r.errors
        );
        assert_eq!(adapter.executed.load(Ordering::SeqCst), n);
    }
    // Open: the next run fails fast without reaching the database.
    let r = ask().await;
    assert_eq!(r.status, RunStatus::Failed);
    assert!(
        r.errors
            .iter()
            .any(|e| e.code == ErrorCode::ServiceUnavailable),
        "{:#?}",
        r.errors
    );
    assert_eq!(
        adapter.executed.load(Ordering::SeqCst),
        2,
        "the breaker held"
    );
    // The database is back; after the reset timeout one trial closes the breaker.
    adapter.down.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let r = ask().await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(3)]]));
    let r = ask().await;
    assert!(r.success, "{:#?}", r.errors);
    // Each good run is a dry run and an execution.
    assert_eq!(adapter.executed.load(Ordering::SeqCst), 6);
}
