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

mod breaker;
mod decompose;
mod merge;
mod retries;
mod secrets;

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
    let registry = DatasourceRegistry::ad_hoc(&url, crate::support::drivers()).unwrap();
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
