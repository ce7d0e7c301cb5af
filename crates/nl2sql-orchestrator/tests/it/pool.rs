//! The bounded scan pool (errors-and-recovery.md §5, layer 2): one DAG layer of eight
//! independent scans runs at most `max_parallel_scans` statements at once, and does run
//! that many at once. An adapter over the fixture counts the statements in flight. The
//! same holds for indexing: at most `index_workers` (`SANDBOX_INDEX_WORKERS`) snapshots
//! at once.

#![allow(clippy::unwrap_used)] // reason: test set-up fails the test that calls it

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use nl2sql_adapter::{Limits, ResultError, ResultFrame};
use nl2sql_adapter_sqlite::SqliteAdapter;
use nl2sql_orchestrator::{AskOptions, DatasourceRegistry, Engine, EngineOptions};
use nl2sql_plan::{CombineGroup, CombineInput, CombineOperation, DecomposerResponse, PlanModel};
use nl2sql_planner::{
    AnswerRequest, DecomposeRequest, FinalAnswer, PlanRequest, Planner, RefineRequest,
};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::PipelineError;
use nl2sql_test_support::{TempDir, manufacturing_db};

/// How many scans the layer has.
const SCANS: usize = 8;
/// What marks a copy of the one offline sub-query (the planner plans the original).
const COPY: &str = " | copy ";

/// What the gauges of [`Gauge`] adapters count, shared by all of them.
#[derive(Default)]
struct Counts {
    in_flight: AtomicUsize,
    most: AtomicUsize,
    done: AtomicUsize,
}

impl Counts {
    /// Counts one more in flight for 150 ms around `work`.
    async fn hold<T>(&self, work: impl Future<Output = T>) -> T {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(150)).await;
        let out = work.await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.done.fetch_add(1, Ordering::SeqCst);
        out
    }
}

/// The fixture through the SQLite adapter; every statement and every snapshot holds its
/// slot for 150 ms, and the most ever in flight together is kept.
struct Gauge {
    inner: SqliteAdapter,
    statements: Arc<Counts>,
    snapshots: Arc<Counts>,
}

impl Gauge {
    fn new(id: &str, statements: &Arc<Counts>, snapshots: &Arc<Counts>) -> Arc<Gauge> {
        Arc::new(Gauge {
            inner: SqliteAdapter::open(id, &manufacturing_db(), Limits::default()).unwrap(),
            statements: Arc::clone(statements),
            snapshots: Arc::clone(snapshots),
        })
    }
}

wrapping_adapter!(Gauge, own schema_snapshot {
    async fn execute_guarded(
        &self,
        sql: &nl2sql_validate::GuardedSql,
        limits: &nl2sql_adapter::RequestLimits,
    ) -> ResultFrame {
        self.statements
            .hold(self.inner.execute_guarded(sql, limits))
            .await
    }
    async fn schema_snapshot(&self) -> Result<nl2sql_state::SchemaSnapshot, ResultError> {
        self.snapshots.hold(self.inner.schema_snapshot()).await
    }
});

/// The offline planner, whose one-scan decomposition is copied into [`SCANS`] scans
/// combined by one union.
#[derive(Debug)]
struct FanOut(OfflinePlanner);

#[async_trait]
impl Planner for FanOut {
    fn name(&self) -> String {
        "fan-out".to_owned()
    }
    async fn decompose(&self, r: &DecomposeRequest) -> Result<DecomposerResponse, PipelineError> {
        let mut response = self.0.decompose(r).await?;
        assert_eq!(response.sub_queries.len(), 1, "{response:?}");
        let template = response.sub_queries.remove(0);
        let sub_queries: Vec<_> = (0..SCANS)
            .map(|i| nl2sql_plan::SubQuery {
                id: format!("q{i}"),
                intent: format!("{}{COPY}{i}", template.intent),
                ..template.clone()
            })
            .collect();
        let inputs = sub_queries
            .iter()
            .map(|sq| CombineInput {
                subquery_id: sq.id.clone(),
                role: None,
            })
            .collect();
        Ok(DecomposerResponse {
            sub_queries,
            combine_groups: vec![CombineGroup {
                group_id: "all".to_owned(),
                operation: CombineOperation::Union,
                inputs,
                join_keys: Vec::new(),
            }],
            post_combine_ops: Vec::new(),
            unmapped_subqueries: Vec::new(),
        })
    }
    async fn plan(&self, r: &PlanRequest) -> Result<PlanModel, PipelineError> {
        let mut original = r.clone();
        if let Some((intent, _)) = r.sub_query.intent.rsplit_once(COPY) {
            intent.clone_into(&mut original.sub_query.intent);
        }
        self.0.plan(&original).await
    }
    async fn refine(&self, r: &RefineRequest) -> Result<String, PipelineError> {
        self.0.refine(r).await
    }
    async fn answer(&self, r: &AnswerRequest) -> Result<FinalAnswer, PipelineError> {
        self.0.answer(r).await
    }
}

/// Asks the count question over eight scans with `parallel` slots; returns the most
/// statements seen in flight at once.
async fn most_in_flight(parallel: usize) -> usize {
    let dir = TempDir::new("pool");
    let statements = Arc::new(Counts::default());
    let gauge = Gauge::new("plant", &statements, &Arc::new(Counts::default()));
    let registry = DatasourceRegistry::empty().with_adapter(gauge);
    let engine = Engine::in_memory(
        registry,
        Arc::new(FanOut(OfflinePlanner::new())),
        dir.path(),
    )
    .unwrap()
    .with_options(EngineOptions {
        max_parallel_scans: parallel,
        ..EngineOptions::default()
    });
    assert!(engine.index_all().await.failed.is_empty());
    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.subqueries.len(), SCANS);
    // The union of eight counts of 3.
    assert_eq!(r.rows.as_ref().map(Vec::len), Some(SCANS));
    assert_eq!(statements.done.load(Ordering::SeqCst), SCANS);
    assert_eq!(statements.in_flight.load(Ordering::SeqCst), 0);
    statements.most.load(Ordering::SeqCst)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_layer_runs_at_most_max_parallel_scans_statements_at_once() {
    // Two slots: never three statements at once, and the two slots are both used.
    assert_eq!(most_in_flight(2).await, 2);
    // One slot: the scans run one after another.
    assert_eq!(most_in_flight(1).await, 1);
    // Eight slots: the gauge does see more than two (so the bound above is the pool's).
    assert!(most_in_flight(SCANS).await > 2);
}

/// Indexes four datasources with `workers` index workers; returns the most snapshots
/// seen in flight at once.
async fn most_snapshots_at_once(workers: usize) -> usize {
    let dir = TempDir::new("index-pool");
    let (statements, snapshots) = (Arc::new(Counts::default()), Arc::new(Counts::default()));
    let mut registry = DatasourceRegistry::empty();
    for id in ["a", "b", "c", "d"] {
        registry.insert_adapter(Gauge::new(id, &statements, &snapshots));
    }
    let engine = Engine::in_memory(registry, Arc::new(OfflinePlanner::new()), dir.path())
        .unwrap()
        .with_options(EngineOptions {
            index_workers: workers,
            ..EngineOptions::default()
        });
    let report = engine.index_all().await;
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let indexed: Vec<&str> = report
        .indexed
        .iter()
        .map(|s| s.datasource_id.as_str())
        .collect();
    assert_eq!(indexed, ["a", "b", "c", "d"], "in id order");
    assert_eq!(snapshots.done.load(Ordering::SeqCst), 4);
    snapshots.most.load(Ordering::SeqCst)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn index_workers_bound_the_snapshots_taken_at_once() {
    assert_eq!(most_snapshots_at_once(2).await, 2);
    assert_eq!(most_snapshots_at_once(1).await, 1);
    assert!(most_snapshots_at_once(4).await > 2);
}
