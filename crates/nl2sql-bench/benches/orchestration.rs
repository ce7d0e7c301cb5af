//! Orchestration overhead of `Engine::ask`: everything a question costs except the
//! planner's and the database's own time (issue 7).
//!
//! The engine runs on a multi-thread tokio runtime, over
//! `tests/data/fixtures/manufacturing.db` through the SQLite adapter (registered with
//! `DatasourceRegistry::with_adapter`), with the offline planner. Both are wrapped in timing
//! wrappers that add up the nanoseconds spent inside every planner call (`decompose`,
//! `plan`, `refine`, `answer`) and every adapter call (`schema_snapshot`,
//! `schema_contract`, `test_connection`, `run_sql`, `execute`, `dry_run`,
//! `cost_estimate`, `explain`). The datasource is indexed once, before timing.
//!
//! - `orchestration/single_scan`: "How many factories do we have?" (one scan) with the
//!   engine `nl2sql ask` builds: `Engine::open` over a temporary data directory (on-disk
//!   schema store and lexical index, a run log per question, local parquet artifacts
//!   written atomically, without fsync: the default durability). One iteration is one `ask`, and the time reported is its wall
//!   time minus the planner time and the database time: the orchestration overhead
//!   (resolution, decomposition validation, DAG, schema retrieval, logical and SQL-guard
//!   validation, SQL generation, the run log, the parquet artifact, aggregation and the
//!   run result). Criterion gives the mean; the bench also prints the p50 and p90 of the
//!   overhead over 200 asks (after 50 warm-up asks).
//! - `orchestration/single_scan_memory_store`: the same with `Engine::in_memory` (schema
//!   store and index in memory, no run log) and local artifacts: the difference from
//!   `single_scan` is the run log and the on-disk store.
//! - `orchestration/single_scan_no_io`: `Engine::in_memory` with the in-memory artifact
//!   store (`memory://`): no file is written, so what is left is the pipeline's own work.
//! - `orchestration/dag_64_scans`: 64 independent scans in one DAG layer (the offline
//!   decomposition of a count question cloned 64 times, combined by one union), with
//!   `max_parallel_scans = 64` and an adapter whose `execute` sleeps 20 ms before running
//!   the query, so the scans' database time adds up to at least 1.28 s. One iteration is
//!   the wall time of one `ask`: bounded by the slowest scan of the layer (≈ 20 ms plus
//!   the overhead), not by the sum.
//! - `orchestration/dag_64_scans_4_parallel`: the same with `max_parallel_scans = 4` (the
//!   default): the semaphore bounds the layer at 16 rounds of 20 ms.
//!
//! The DAG benchmarks use the engine of `single_scan` (`Engine::open`).
//!
//! Before timing, the bench asserts the answers (3 factories; 64 rows of 3 from 64
//! successful scans) and that the 64-scan layer's wall time is under a quarter of the sum
//! of its scans' database time. Run with `cargo xtask bench orchestration`.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use criterion::Criterion;
use nl2sql_adapter::{
    CapabilitySet, CostEstimate, DatasourceAdapter, DryRunResult, Limits, QueryPlan, RequestLimits,
    ResultError, ResultFrame,
};
use nl2sql_adapter_sqlite::SqliteAdapter;
use nl2sql_artifacts::{DEFAULT_PATH_TEMPLATE, PathTemplate, open_artifact_store};
use nl2sql_orchestrator::{AskOptions, DatasourceRegistry, Engine, EngineOptions, RunResult};
use nl2sql_plan::{
    CombineGroup, CombineInput, CombineOperation, DecomposerResponse, PlanModel, SubQuery,
};
use nl2sql_planner::{
    AnswerRequest, DecomposeRequest, FinalAnswer, PlanRequest, Planner, RefineRequest,
};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::{
    ArtifactDurability, Dialect, PipelineError, ScanStatus, SchemaContract, SchemaSnapshot,
};
use serde_json::json;
use tokio::runtime::Runtime;

/// The single-scan question, and the question whose decomposition the DAG bench clones.
const QUESTION: &str = "How many factories do we have?";
/// Scans in the DAG bench's one layer.
const SCANS: usize = 64;
/// What each scan of the DAG bench sleeps in the database.
const SCAN_DELAY: Duration = Duration::from_millis(20);
/// Asks sampled for the printed percentiles (under `cargo bench`), after `WARM_UP` asks.
const SAMPLES: usize = 200;
const WARM_UP: usize = 50;
/// Marks a cloned sub-query's intent (so that normalisation does not merge the clones).
const COPY: &str = " | copy ";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// True under `cargo bench` (which passes `--bench`); false when the bench runs as a test.
fn benching() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// A fresh directory under the system temp dir (removed on drop).
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "nl2sql-bench-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Nanoseconds spent inside the planner and inside the adapter since the last reset.
#[derive(Debug, Default)]
struct Clock {
    planner_ns: AtomicU64,
    database_ns: AtomicU64,
    executes: AtomicU64,
}

impl Clock {
    fn reset(&self) {
        self.planner_ns.store(0, Ordering::SeqCst);
        self.database_ns.store(0, Ordering::SeqCst);
        self.executes.store(0, Ordering::SeqCst);
    }

    fn add(counter: &AtomicU64, since: Instant) {
        let ns = u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX);
        counter.fetch_add(ns, Ordering::SeqCst);
    }

    fn planner(&self) -> Duration {
        Duration::from_nanos(self.planner_ns.load(Ordering::SeqCst))
    }

    fn database(&self) -> Duration {
        Duration::from_nanos(self.database_ns.load(Ordering::SeqCst))
    }

    fn executes(&self) -> u64 {
        self.executes.load(Ordering::SeqCst)
    }
}

/// The offline planner, timed. With `fan_out`, `decompose` returns the offline
/// decomposition's one sub-query cloned that many times (distinct ids and intents), all
/// combined by one union group; `plan` plans each clone as the original.
#[derive(Debug)]
struct TimedPlanner {
    inner: OfflinePlanner,
    clock: Arc<Clock>,
    fan_out: Option<usize>,
}

impl TimedPlanner {
    fn fan_out(
        mut response: DecomposerResponse,
        n: usize,
    ) -> Result<DecomposerResponse, PipelineError> {
        if response.sub_queries.len() != 1 {
            return Err(PipelineError::new(
                "bench",
                nl2sql_state::ErrorCode::PlanningFailure,
                nl2sql_state::Severity::Error,
                format!(
                    "the offline decomposition has {} sub-queries, not 1",
                    response.sub_queries.len()
                ),
            ));
        }
        let template = response.sub_queries.remove(0);
        let sub_queries: Vec<SubQuery> = (0..n)
            .map(|i| SubQuery {
                id: format!("q{i}"),
                intent: format!("{}{COPY}{i}", template.intent),
                ..template.clone()
            })
            .collect();
        let group = CombineGroup {
            group_id: "all".to_owned(),
            operation: CombineOperation::Union,
            inputs: sub_queries
                .iter()
                .map(|sq| CombineInput {
                    subquery_id: sq.id.clone(),
                    role: None,
                })
                .collect(),
            join_keys: Vec::new(),
        };
        Ok(DecomposerResponse {
            sub_queries,
            combine_groups: vec![group],
            post_combine_ops: Vec::new(),
            unmapped_subqueries: Vec::new(),
        })
    }
}

#[async_trait]
impl Planner for TimedPlanner {
    fn name(&self) -> String {
        self.inner.name()
    }

    async fn decompose(
        &self,
        request: &DecomposeRequest,
    ) -> Result<DecomposerResponse, PipelineError> {
        let t = Instant::now();
        let response = self.inner.decompose(request).await;
        let response = match self.fan_out {
            Some(n) => response.and_then(|r| TimedPlanner::fan_out(r, n)),
            None => response,
        };
        Clock::add(&self.clock.planner_ns, t);
        response
    }

    async fn plan(&self, request: &PlanRequest) -> Result<PlanModel, PipelineError> {
        let t = Instant::now();
        let plan = match request.sub_query.intent.rsplit_once(COPY) {
            Some((intent, _)) => {
                let mut original = request.clone();
                original.sub_query.intent = intent.to_owned();
                self.inner.plan(&original).await
            }
            None => self.inner.plan(request).await,
        };
        Clock::add(&self.clock.planner_ns, t);
        plan
    }

    async fn refine(&self, request: &RefineRequest) -> Result<String, PipelineError> {
        let t = Instant::now();
        let feedback = self.inner.refine(request).await;
        Clock::add(&self.clock.planner_ns, t);
        feedback
    }

    async fn answer(&self, request: &AnswerRequest) -> Result<FinalAnswer, PipelineError> {
        let t = Instant::now();
        let answer = self.inner.answer(request).await;
        Clock::add(&self.clock.planner_ns, t);
        answer
    }
}

/// The SQLite adapter over the fixture, timed; `execute` first sleeps `delay`.
struct TimedAdapter {
    inner: SqliteAdapter,
    clock: Arc<Clock>,
    delay: Duration,
}

impl TimedAdapter {
    fn open(clock: Arc<Clock>, delay: Duration) -> TimedAdapter {
        let path = root().join("tests/data/fixtures/manufacturing.db");
        let inner = SqliteAdapter::open("manufacturing", &path, Limits::default())
            .expect("open the fixture");
        TimedAdapter {
            inner,
            clock,
            delay,
        }
    }
}

#[async_trait]
impl DatasourceAdapter for TimedAdapter {
    fn id(&self) -> &str {
        self.inner.id()
    }
    fn engine_type(&self) -> &str {
        self.inner.engine_type()
    }
    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }
    fn capabilities(&self) -> &CapabilitySet {
        self.inner.capabilities()
    }
    fn limits(&self) -> Limits {
        self.inner.limits()
    }
    fn details(&self) -> serde_json::Value {
        self.inner.details()
    }

    async fn test_connection(&self) -> Result<(), ResultError> {
        let t = Instant::now();
        let r = self.inner.test_connection().await;
        Clock::add(&self.clock.database_ns, t);
        r
    }

    async fn schema_snapshot(&self) -> Result<SchemaSnapshot, ResultError> {
        let t = Instant::now();
        let r = self.inner.schema_snapshot().await;
        Clock::add(&self.clock.database_ns, t);
        r
    }

    async fn schema_contract(&self) -> Result<SchemaContract, ResultError> {
        let t = Instant::now();
        let r = self.inner.schema_contract().await;
        Clock::add(&self.clock.database_ns, t);
        r
    }

    async fn run_sql(&self, sql: &nl2sql_validate::GuardedSql, limits: Limits) -> ResultFrame {
        let t = Instant::now();
        let r = self.inner.run_sql(sql, limits).await;
        Clock::add(&self.clock.database_ns, t);
        r
    }

    async fn dry_run(&self, sql: &nl2sql_validate::GuardedSql) -> DryRunResult {
        let t = Instant::now();
        let r = self.inner.dry_run(sql).await;
        Clock::add(&self.clock.database_ns, t);
        r
    }

    async fn cost_estimate(
        &self,
        sql: &nl2sql_validate::GuardedSql,
    ) -> Result<CostEstimate, ResultError> {
        let t = Instant::now();
        let r = self.inner.cost_estimate(sql).await;
        Clock::add(&self.clock.database_ns, t);
        r
    }

    async fn explain(&self, sql: &nl2sql_validate::GuardedSql) -> Result<QueryPlan, ResultError> {
        let t = Instant::now();
        let r = self.inner.explain(sql).await;
        Clock::add(&self.clock.database_ns, t);
        r
    }

    async fn execute_guarded(
        &self,
        sql: &nl2sql_validate::GuardedSql,
        limits: &RequestLimits,
    ) -> ResultFrame {
        let t = Instant::now();
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        // What the engine's executor calls (since the guard's rendering is what runs). The
        // inner adapter calls its own `run_sql`, not ours: counted once.
        let r = self.inner.execute_guarded(sql, limits).await;
        Clock::add(&self.clock.database_ns, t);
        self.clock.executes.fetch_add(1, Ordering::SeqCst);
        r
    }
}

/// Where an engine keeps its state and its result artifacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Storage {
    /// `Engine::open`: on-disk schema store and index, run logs, local artifacts.
    DataDir,
    /// `Engine::in_memory`: store and index in memory, no run log, local artifacts.
    MemoryStore,
    /// `Engine::in_memory` with the in-memory artifact store: no file written.
    NoIo,
}

/// An indexed engine over the fixture and the clock of its planner and adapter.
struct Setup {
    runtime: Runtime,
    engine: Engine,
    clock: Arc<Clock>,
    _dir: TempDir,
}

impl Setup {
    fn new(
        name: &str,
        storage: Storage,
        fan_out: Option<usize>,
        delay: Duration,
        parallel: usize,
    ) -> Setup {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        let dir = TempDir::new(name);
        let clock = Arc::new(Clock::default());
        let adapter = TimedAdapter::open(Arc::clone(&clock), delay);
        let planner = TimedPlanner {
            inner: OfflinePlanner::new(),
            clock: Arc::clone(&clock),
            fan_out,
        };
        let registry = DatasourceRegistry::empty().with_adapter(Arc::new(adapter));
        let options = EngineOptions {
            max_parallel_scans: parallel,
            today: Some("2024-06-30".to_owned()),
            ..EngineOptions::default()
        };
        let planner: Arc<dyn Planner> = Arc::new(planner);
        let engine = match storage {
            Storage::DataDir => Engine::open(registry, planner, dir.path()),
            Storage::MemoryStore | Storage::NoIo => {
                Engine::in_memory(registry, planner, dir.path())
            }
        }
        .expect("build the engine")
        .with_options(options);
        let engine = if storage == Storage::NoIo {
            let template =
                PathTemplate::parse(DEFAULT_PATH_TEMPLATE).expect("the default path template");
            let store = open_artifact_store(
                "memory://",
                template,
                ArtifactDurability::Atomic,
                Vec::<(String, String)>::new(),
            )
            .expect("the in-memory artifact store");
            engine.with_artifacts(store)
        } else {
            engine
        };
        let report = runtime.block_on(engine.index_all());
        assert!(
            report.failed.is_empty() && report.indexed.len() == 1,
            "indexing the fixture failed: {:?}",
            report.failed
        );
        Setup {
            runtime,
            engine,
            clock,
            _dir: dir,
        }
    }

    /// One ask: the result, its wall time, and the planner and database time inside it.
    fn ask(&self) -> Measured {
        self.clock.reset();
        let started = Instant::now();
        let result = self
            .runtime
            .block_on(self.engine.ask(QUESTION, AskOptions::default()));
        let wall = started.elapsed();
        Measured {
            result,
            wall,
            planner: self.clock.planner(),
            database: self.clock.database(),
            executes: self.clock.executes(),
        }
    }
}

struct Measured {
    result: RunResult,
    wall: Duration,
    planner: Duration,
    database: Duration,
    executes: u64,
}

impl Measured {
    /// Wall time minus planner and database time.
    fn overhead(&self) -> Duration {
        self.wall.saturating_sub(self.planner + self.database)
    }
}

/// The `p`-th percentile (nearest rank) of `values`.
fn percentile(values: &[Duration], p: usize) -> Duration {
    let mut sorted = values.to_vec();
    sorted.sort();
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted.get(rank - 1).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn check_single(m: &Measured) {
    let r = &m.result;
    assert!(
        r.success,
        "the single-scan question failed: {:#?}",
        r.errors
    );
    assert_eq!(
        r.rows,
        Some(vec![vec![json!(3)]]),
        "the fixture has 3 factories"
    );
    assert_eq!(r.subqueries.len(), 1, "one scan");
    assert_eq!(
        m.executes, 1,
        "one statement executed through the timed adapter"
    );
    assert!(!m.planner.is_zero() && !m.database.is_zero());
}

fn single_scan(c: &mut Criterion, name: &str, storage: Storage) {
    let setup = Setup::new(name, storage, None, Duration::ZERO, 4);
    check_single(&setup.ask());

    let (warm_up, samples) = if benching() {
        (WARM_UP, SAMPLES)
    } else {
        (1, 3)
    };
    (0..warm_up).for_each(|_| check_single(&setup.ask()));
    let runs: Vec<Measured> = (0..samples).map(|_| setup.ask()).collect();
    runs.iter().for_each(check_single);
    let of = |f: fn(&Measured) -> Duration| runs.iter().map(f).collect::<Vec<_>>();
    let (overhead, wall, planner, database) = (
        of(Measured::overhead),
        of(|m| m.wall),
        of(|m| m.planner),
        of(|m| m.database),
    );
    eprintln!(
        "orchestration/{name}: overhead over {samples} asks: p50 {}, p90 {} \
         (wall p50 {}, planner p50 {}, database p50 {})",
        ms(percentile(&overhead, 50)),
        ms(percentile(&overhead, 90)),
        ms(percentile(&wall, 50)),
        ms(percentile(&planner, 50)),
        ms(percentile(&database, 50)),
    );

    let mut group = c.benchmark_group("orchestration");
    // The reported time (the overhead) is a part of each iteration's time: fewer samples
    // keep the run within criterion's time budget.
    group.sample_size(50);
    group.measurement_time(Duration::from_secs(8));
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let m = black_box(setup.ask());
                total += m.overhead();
            }
            total
        });
    });
    group.finish();
}

fn check_dag(m: &Measured) {
    let r = &m.result;
    assert!(
        r.success,
        "the {SCANS}-scan question failed: {:#?}",
        r.errors
    );
    assert_eq!(r.subqueries.len(), SCANS, "{SCANS} scans");
    assert!(
        r.subqueries
            .iter()
            .all(|s| s.status == ScanStatus::Succeeded && s.attempts == 1),
        "every scan succeeds at its first attempt"
    );
    assert_eq!(m.executes, SCANS as u64, "{SCANS} statements executed");
    assert_eq!(
        r.rows,
        Some(vec![vec![json!(3)]; SCANS]),
        "the union holds one count of 3 per scan"
    );
    let layer = r
        .dag
        .as_ref()
        .and_then(|d| d.get("layers"))
        .and_then(|l| l.as_array())
        .and_then(|l| l.first())
        .and_then(|l| l.as_array())
        .map_or(0, Vec::len);
    assert_eq!(layer, SCANS, "the {SCANS} scans are in the first layer");
}

fn dag(c: &mut Criterion, name: &str, parallel: usize) {
    let setup = Setup::new(name, Storage::DataDir, Some(SCANS), SCAN_DELAY, parallel);
    let first = setup.ask();
    check_dag(&first);
    // The scans' database time adds up to at least 64 × 20 ms.
    assert!(first.database >= SCAN_DELAY * SCANS as u32);

    let (warm_up, samples) = if benching() { (3, 20) } else { (0, 1) };
    (0..warm_up).for_each(|_| check_dag(&setup.ask()));
    let runs: Vec<Measured> = (0..samples).map(|_| setup.ask()).collect();
    runs.iter().for_each(check_dag);
    let wall: Vec<Duration> = runs.iter().map(|m| m.wall).collect();
    let sum: Vec<Duration> = runs.iter().map(|m| m.database).collect();
    let bound = SCAN_DELAY * SCANS.div_ceil(parallel) as u32;
    eprintln!(
        "orchestration/{name}: wall over {samples} asks: p50 {}, p90 {}; sum of the {SCANS} \
         scans' database time p50 {} (at least {}); bound by the layer ({} rounds of {}): {}",
        ms(percentile(&wall, 50)),
        ms(percentile(&wall, 90)),
        ms(percentile(&sum, 50)),
        ms(SCAN_DELAY * SCANS as u32),
        SCANS.div_ceil(parallel),
        ms(SCAN_DELAY),
        ms(bound),
    );
    if parallel >= SCANS {
        // Layer-bounded, not sum-bounded (a correctness check, with a wide margin).
        let (w, s) = (percentile(&wall, 50), percentile(&sum, 50));
        assert!(
            w * 4 < s,
            "wall {w:?} is not under a quarter of the sum {s:?}"
        );
    }

    let mut group = c.benchmark_group("orchestration");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(if parallel >= SCANS { 10 } else { 30 }));
    group.bench_function(name, |b| {
        b.iter(|| black_box(setup.ask().wall));
    });
    group.finish();
}

// What `criterion_group!` and `criterion_main!` expand to, without their undocumented
// `pub fn`.
fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    single_scan(&mut criterion, "single_scan", Storage::DataDir);
    single_scan(
        &mut criterion,
        "single_scan_memory_store",
        Storage::MemoryStore,
    );
    single_scan(&mut criterion, "single_scan_no_io", Storage::NoIo);
    dag(&mut criterion, "dag_64_scans", SCANS);
    dag(&mut criterion, "dag_64_scans_4_parallel", 4);
    criterion.final_summary();
}
