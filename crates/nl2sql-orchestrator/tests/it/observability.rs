//! Observability of a run (GAP-48, GAP-56): the audit log's events with the run's trace and
//! tenant, `tracing` records inside the run's span, and the metrics of spec
//! errors-and-recovery.md §8 (node durations, errors, breaker state changes and failures),
//! tenant scoping, and the codes of faults (UNKNOWN_ERROR, EXECUTOR_CRASH).
//!
//! Metrics and logs are captured with a thread-local recorder and subscriber around a
//! current-thread runtime, so every task of the run reports into them.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use nl2sql_adapter::{
    BreakerConfig, CircuitBreaker, DatasourceBreaker as _, PermitOutcome as _, ResultError,
    ResultErrorCode,
};
use nl2sql_orchestrator::{AskOptions, DatasourceRegistry, Engine, EngineOptions, RunResult};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::{ErrorCode, PolicyFile, RunStatus, UserContext, sha256_hex};
use nl2sql_test_support::TempDir;
use serde_json::{Value, json};

use crate::support::fixture;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// An indexed engine over the fixture with its data (and audit log) under `dir`.
async fn engine(dir: &Path, options: EngineOptions) -> Engine {
    let url = format!("sqlite://{}", fixture().canonicalize().unwrap().display());
    let registry = DatasourceRegistry::ad_hoc(&url, crate::support::drivers()).unwrap();
    let engine = Engine::open(registry, Arc::new(OfflinePlanner::new()), dir)
        .unwrap()
        .with_options(options)
        .with_policy_file(
            PolicyFile::from_json_str(
                r#"{"version": 1, "roles": {"analyst": {"description": "everything", "role": "analyst", "allowed_datasources": ["*"], "allowed_tables": ["*"]},
                              "visitor": {"description": "nothing", "role": "visitor", "allowed_datasources": []}}}"#,
            )
            .unwrap(),
        );
    assert!(engine.index_all().await.failed.is_empty());
    engine
}

fn caller(role: &str, tenant: Option<&str>) -> AskOptions {
    AskOptions {
        user: UserContext {
            user_id: Some("u-1".to_owned()),
            tenant_id: tenant.map(str::to_owned),
            roles: vec![role.to_owned()],
        },
        ..AskOptions::default()
    }
}

fn audit_events(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn of_run<'a>(events: &'a [Value], r: &RunResult) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["trace_id"] == r.trace_id)
        .collect()
}

#[test]
fn audit_events_carry_the_run_s_trace_and_tenant_and_never_rows() {
    let dir = TempDir::new("audit");
    let rt = runtime();
    let (engine, ok, refused, anonymous) = rt.block_on(async {
        let engine = engine(dir.path(), EngineOptions::default()).await;
        let ok = engine
            .ask(
                "How many factories do we have?",
                caller("analyst", Some("acme")),
            )
            .await;
        let refused = engine
            .ask(
                "How many factories do we have?",
                caller("visitor", Some("beta")),
            )
            .await;
        let anonymous = engine
            .ask("How many factories do we have?", caller("analyst", None))
            .await;
        (engine, ok, refused, anonymous)
    });
    assert_eq!(ok.status, RunStatus::Succeeded, "{:#?}", ok.errors);
    assert_eq!(refused.status, RunStatus::Failed);
    let path = engine.audit_log().unwrap().path().to_path_buf();
    assert_eq!(path, dir.join("logs/audit_events.log"));
    let events = audit_events(&path);

    // The answered run: one statement executed, then the run completed.
    let run = of_run(&events, &ok);
    let kinds: Vec<&str> = run
        .iter()
        .map(|e| e["event_type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["sql_executed", "run_completed"], "{run:#?}");
    assert!(run.iter().all(|e| e["tenant_id"] == "acme"));
    let sql = ok.subqueries[0].sql.clone().unwrap();
    let executed = &run[0]["data"];
    assert_eq!(executed["datasource_id"], "manufacturing");
    assert_eq!(executed["sql_sha256"], sha256_hex(sql.as_bytes()));
    assert_eq!(executed["row_count"], 1);
    assert_eq!(executed["truncated"], false);
    assert_eq!(executed["success"], true);
    assert!(executed["duration_ms"].is_u64());
    assert_eq!(run[1]["data"]["status"], "succeeded");
    // Result rows never reach the audit log: the answer (3) is nowhere in its data.
    for e in &run {
        assert!(e["data"].get("rows").is_none());
        assert!(!e["data"].to_string().contains("\"3\""));
    }
    // The tenant also partitions the run's artifact.
    let artifact = ok.subqueries[0].artifact.as_ref().unwrap();
    assert!(artifact.uri.contains("/acme/"), "{}", artifact.uri);

    // The refused run: the resolver's SECURITY_VIOLATION is audited with the caller's roles.
    let run = of_run(&events, &refused);
    let kinds: Vec<&str> = run
        .iter()
        .map(|e| e["event_type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["security_violation", "run_completed"], "{run:#?}");
    assert!(run.iter().all(|e| e["tenant_id"] == "beta"));
    assert_eq!(
        run[0]["data"],
        json!({"code": "SECURITY_VIOLATION", "node": "datasource_resolver",
               "roles": ["visitor"], "target": "No allowed datasources."})
    );
    assert_eq!(run[1]["data"]["status"], "failed");

    // A caller without a tenant gets the engine's default tenant.
    let run = of_run(&events, &anonymous);
    assert!(!run.is_empty());
    assert!(
        run.iter().all(|e| e["tenant_id"] == "default_tenant"),
        "{run:#?}"
    );
    assert_eq!(events.len(), 2 + 2 + 2);
}

#[test]
fn tenant_and_audit_path_come_from_the_environment() {
    let dir = TempDir::new("env");
    let elsewhere = dir.join("audit/elsewhere.log");
    let options = EngineOptions::default()
        .with_env(|k| match k {
            "TENANT_ID" => Some("plant-7".to_owned()),
            "AUDIT_LOG_PATH" => Some(elsewhere.display().to_string()),
            _ => None,
        })
        .unwrap();
    assert_eq!(options.default_tenant, "plant-7");
    let rt = runtime();
    let r = rt.block_on(async {
        let engine = engine(&dir.join("data"), options).await;
        engine
            .ask("How many factories do we have?", caller("analyst", None))
            .await
    });
    assert!(r.success, "{:#?}", r.errors);
    let events = audit_events(&elsewhere);
    assert_eq!(events.len(), 2);
    assert!(
        events
            .iter()
            .all(|e| e["tenant_id"] == "plant-7" && e["trace_id"] == r.trace_id)
    );
    assert!(!dir.join("data/logs/audit_events.log").exists());
    // A tenant that could escape an artifact path is refused, naming the variable.
    let err = EngineOptions::default()
        .with_env(|k| (k == "TENANT_ID").then(|| "../etc".to_owned()))
        .unwrap_err();
    assert!(err.to_string().contains("TENANT_ID"), "{err}");
}

/// A `Write` into a shared buffer, for the log subscriber.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn lines(&self) -> Vec<String> {
        String::from_utf8(self.0.lock().unwrap().clone())
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

/// One snapshot of the recorder: (name, labels, value) per metric. A snapshot drains
/// what it reads, so take one and query it.
type Metrics = Vec<(String, Vec<(String, String)>, DebugValue)>;

fn snapshot(snapshotter: &Snapshotter) -> Metrics {
    snapshotter
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let key = key.key();
            let labels = key
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect();
            (key.name().to_owned(), labels, value)
        })
        .collect()
}

fn matching<'a>(
    metrics: &'a Metrics,
    name: &'a str,
    labels: &'a [(&str, &str)],
) -> impl Iterator<Item = &'a DebugValue> {
    metrics
        .iter()
        .filter(move |(n, l, _)| {
            n == name
                && labels
                    .iter()
                    .all(|(k, v)| l.iter().any(|(lk, lv)| lk == k && lv == v))
        })
        .map(|(_, _, v)| v)
}

fn histogram_count(metrics: &Metrics, name: &str, labels: &[(&str, &str)]) -> usize {
    matching(metrics, name, labels)
        .map(|v| match v {
            DebugValue::Histogram(values) => values.len(),
            _ => 0,
        })
        .sum()
}

fn counter(metrics: &Metrics, name: &str, labels: &[(&str, &str)]) -> u64 {
    matching(metrics, name, labels)
        .map(|v| match v {
            DebugValue::Counter(n) => *n,
            _ => 0,
        })
        .sum()
}

#[test]
fn logs_are_inside_the_run_span_and_metrics_name_node_tenant_and_code() {
    let dir = TempDir::new("logs");
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_writer(move || writer.clone())
        .finish();
    let (ok, refused) = metrics::with_local_recorder(&recorder, || {
        tracing::subscriber::with_default(subscriber, || {
            runtime().block_on(async {
                let engine = engine(dir.path(), EngineOptions::default()).await;
                let ok = engine
                    .ask(
                        "How many factories do we have?",
                        caller("analyst", Some("acme")),
                    )
                    .await;
                let refused = engine
                    .ask(
                        "How many machines are there?",
                        caller("visitor", Some("beta")),
                    )
                    .await;
                (ok, refused)
            })
        })
    });
    assert!(ok.success, "{:#?}", ok.errors);
    assert_eq!(refused.errors[0].code, ErrorCode::SecurityViolation);

    // Every node record of a run is inside its span, which names the trace and tenant.
    let lines = logs.lines();
    let node_lines: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("nl2sql::node"))
        .collect();
    for (r, tenant) in [(&ok, "acme"), (&refused, "beta")] {
        let span = format!("run{{trace_id={} tenant_id={tenant}}}", r.trace_id);
        let of_run: Vec<&&String> = node_lines.iter().filter(|l| l.contains(&span)).collect();
        assert!(!of_run.is_empty(), "no record of {span}: {lines:#?}");
        assert!(
            lines
                .iter()
                .any(|l| l.contains(&span) && l.contains("run completed")),
            "{lines:#?}"
        );
    }
    let in_a_run = |l: &&String| l.contains("run{trace_id=");
    assert!(node_lines.iter().all(in_a_run), "{node_lines:#?}");
    // The scan's nodes ran in spawned tasks and still carry the span.
    assert!(
        node_lines.iter().any(
            |l| l.contains(&format!("trace_id={}", ok.trace_id)) && l.contains("node=executor")
        ),
        "{node_lines:#?}"
    );
    // The refusal is a warning (a blocking error), with its code.
    assert!(
        lines.iter().any(|l| l.contains(" WARN ")
            && l.contains("node=datasource_resolver")
            && l.contains("SECURITY_VIOLATION")),
        "{lines:#?}"
    );

    // Metrics: one duration per node execution, labelled by node and tenant.
    let metrics = snapshot(&snapshotter);
    for node in [
        "datasource_resolver",
        "planner:decomposer",
        "executor",
        "answer_synthesizer",
    ] {
        assert_eq!(
            histogram_count(
                &metrics,
                "nl2sql.node.duration",
                &[("node", node), ("tenant_id", "acme")]
            ),
            1,
            "{node}"
        );
    }
    assert_eq!(
        histogram_count(&metrics, "nl2sql.run.duration", &[("status", "succeeded")]),
        1
    );
    assert_eq!(
        counter(
            &metrics,
            "nl2sql.errors",
            &[
                ("code", "SECURITY_VIOLATION"),
                ("severity", "CRITICAL"),
                ("node", "datasource_resolver"),
                ("tenant_id", "beta")
            ]
        ),
        1
    );
    assert_eq!(
        counter(&metrics, "nl2sql.errors", &[("tenant_id", "acme")]),
        0
    );
}

#[test]
fn breakers_count_failures_and_state_changes() {
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        let breaker = CircuitBreaker::new(
            "warehouse",
            BreakerConfig {
                fail_max: 2,
                reset_timeout: Duration::from_millis(1),
            },
        );
        let down = ResultError::new(ResultErrorCode::ServiceUnavailable, "refused");
        breaker.enter().unwrap().settle(Some(&down));
        breaker.enter().unwrap().settle(Some(&down));
        std::thread::sleep(Duration::from_millis(5));
        breaker.enter().unwrap().settle(None);
    });
    let metrics = snapshot(&snapshotter);
    assert_eq!(
        counter(
            &metrics,
            "nl2sql.breaker.failure",
            &[("breaker", "warehouse")]
        ),
        2
    );
    for (from, to) in [
        ("closed", "open"),
        ("open", "half_open"),
        ("half_open", "closed"),
    ] {
        assert_eq!(
            counter(
                &metrics,
                "nl2sql.breaker.state_change",
                &[("breaker", "warehouse"), ("from", from), ("to", to)]
            ),
            1,
            "{from} → {to}"
        );
    }
}

#[test]
fn a_tenant_uses_only_its_datasources_and_a_refusal_is_audited() {
    let dir = TempDir::new("tenants");
    let url = format!("sqlite://{}", fixture().canonicalize().unwrap().display());
    let policy = PolicyFile::from_json_str(
        r#"{"version": 1,
            "tenants": {"acme": {"allowed_datasources": ["manufacturing"]},
                        "beta": {"allowed_datasources": ["warehouse"]}},
            "roles": {"admin": {"description": "all", "role": "admin",
                                "allowed_datasources": ["*"], "allowed_tables": ["*"]}}}"#,
    )
    .unwrap();
    let rt = runtime();
    let (engine, acme, beta, forced, ghost) = rt.block_on(async {
        let engine = Engine::open(
            DatasourceRegistry::ad_hoc(&url, crate::support::drivers()).unwrap(),
            Arc::new(OfflinePlanner::new()),
            dir.path(),
        )
        .unwrap()
        .with_policy_file(policy);
        assert!(engine.index_all().await.failed.is_empty());
        let q = "How many factories do we have?";
        let acme = engine.ask(q, caller("admin", Some("acme"))).await;
        let beta = engine.ask(q, caller("admin", Some("beta"))).await;
        let mut opts = caller("admin", Some("beta"));
        opts.datasource = Some("manufacturing".to_owned());
        let forced = engine.ask(q, opts).await;
        // No tenant in the context: the default tenant, which the section does not name.
        let ghost = engine.ask(q, caller("admin", None)).await;
        (engine, acme, beta, forced, ghost)
    });
    assert!(acme.success, "{:#?}", acme.errors);
    assert_eq!(acme.rows, Some(vec![vec![json!(3)]]));
    for (r, message) in [
        (&beta, "No allowed datasources."),
        (&forced, "Datasource not allowed."),
        (&ghost, "No allowed datasources."),
    ] {
        assert_eq!(r.status, RunStatus::Failed);
        assert_eq!(
            r.errors[0].code,
            ErrorCode::SecurityViolation,
            "{:#?}",
            r.errors
        );
        assert!(r.subqueries.is_empty());
        let events = audit_events(engine.audit_log().unwrap().path());
        let refused: Vec<&Value> = of_run(&events, r)
            .into_iter()
            .filter(|e| e["event_type"] == "security_violation")
            .collect();
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0]["data"]["target"], message);
    }
    let events = audit_events(engine.audit_log().unwrap().path());
    assert_eq!(of_run(&events, &beta)[0]["tenant_id"], "beta");
    assert_eq!(of_run(&events, &ghost)[0]["tenant_id"], "default_tenant");
}

/// A planner whose decomposition panics (a bug outside every scan).
#[derive(Debug)]
struct PanickingPlanner(OfflinePlanner);

#[async_trait::async_trait]
impl nl2sql_planner::Planner for PanickingPlanner {
    fn name(&self) -> String {
        "panicking".to_owned()
    }

    async fn decompose(
        &self,
        _request: &nl2sql_planner::DecomposeRequest,
    ) -> Result<nl2sql_plan::DecomposerResponse, nl2sql_state::PipelineError> {
        panic!("decomposer bug")
    }

    async fn plan(
        &self,
        request: &nl2sql_planner::PlanRequest,
    ) -> Result<nl2sql_plan::PlanModel, nl2sql_state::PipelineError> {
        self.0.plan(request).await
    }

    async fn refine(
        &self,
        request: &nl2sql_planner::RefineRequest,
    ) -> Result<String, nl2sql_state::PipelineError> {
        self.0.refine(request).await
    }

    async fn answer(
        &self,
        request: &nl2sql_planner::AnswerRequest,
    ) -> Result<nl2sql_planner::FinalAnswer, nl2sql_state::PipelineError> {
        self.0.answer(request).await
    }
}

#[test]
fn a_panic_outside_the_scans_fails_the_run_with_unknown_error() {
    let dir = TempDir::new("panic");
    let url = format!("sqlite://{}", fixture().canonicalize().unwrap().display());
    let rt = runtime();
    let (engine, r, after) = rt.block_on(async {
        let engine = Engine::open(
            DatasourceRegistry::ad_hoc(&url, crate::support::drivers()).unwrap(),
            Arc::new(PanickingPlanner(OfflinePlanner::new())),
            dir.path(),
        )
        .unwrap();
        assert!(engine.index_all().await.failed.is_empty());
        let r = engine
            .ask("How many factories do we have?", AskOptions::default())
            .await;
        // The engine is still usable after the fault.
        let after = engine
            .ask("How many machines are there?", AskOptions::default())
            .await;
        (engine, r, after)
    });
    assert_eq!(r.status, RunStatus::Failed);
    assert!(!r.success);
    assert_eq!(r.errors.len(), 1);
    assert_eq!(r.errors[0].code, ErrorCode::UnknownError);
    assert_eq!(r.errors[0].node, "orchestrator");
    assert!(r.answer.is_some());
    assert!(!r.trace_id.is_empty());
    assert_eq!(after.errors[0].code, ErrorCode::UnknownError);
    assert_ne!(after.trace_id, r.trace_id);
    let events = audit_events(engine.audit_log().unwrap().path());
    let completed: Vec<&Value> = of_run(&events, &r);
    assert_eq!(completed.len(), 1);
    assert_eq!(completed[0]["event_type"], "run_completed");
    assert_eq!(completed[0]["data"]["status"], "failed");
}

#[test]
fn an_artifact_that_cannot_be_written_fails_the_scan_saying_why_and_is_not_retried() {
    let dir = TempDir::new("artifact-fault");
    let url = format!("sqlite://{}", fixture().canonicalize().unwrap().display());
    let store_dir = dir.join("results");
    let store = nl2sql_artifacts::LocalArtifactStore::new(
        &store_dir,
        nl2sql_artifacts::PathTemplate::parse(nl2sql_artifacts::DEFAULT_PATH_TEMPLATE).unwrap(),
    )
    .unwrap();
    // The store's directory becomes a file: every write fails.
    std::fs::remove_dir_all(&store_dir).unwrap();
    std::fs::write(&store_dir, b"not a directory").unwrap();
    let rt = runtime();
    let r = rt.block_on(async {
        let engine = Engine::open(
            DatasourceRegistry::ad_hoc(&url, crate::support::drivers()).unwrap(),
            Arc::new(OfflinePlanner::new()),
            &dir.join("data"),
        )
        .unwrap()
        .with_artifacts(Arc::new(store));
        assert!(engine.index_all().await.failed.is_empty());
        engine
            .ask("How many factories do we have?", AskOptions::default())
            .await
    });
    assert_eq!(r.status, RunStatus::Failed);
    let sq = &r.subqueries[0];
    assert_eq!(
        sq.attempts, 1,
        "a result that cannot be stored is not retried"
    );
    let failed = r.errors_with(ErrorCode::ExecutionFailed);
    assert_eq!(failed.len(), 1, "{:#?}", r.errors);
    assert_eq!(failed[0].node, "executor");
    assert!(
        failed[0]
            .message
            .starts_with("the result could not be stored: cannot write artifact"),
        "{}",
        failed[0].message
    );
    assert_eq!(failed[0].severity, nl2sql_state::Severity::Critical);
    assert!(sq.artifact.is_none());
    assert_eq!(std::fs::read(&store_dir).unwrap(), b"not a directory");
}

#[test]
fn a_panicking_logical_validator_is_a_validator_crash_retried_within_the_budget() {
    // nextest runs each test in its own process: the fail point is this test's alone.
    let scenario = fail::FailScenario::setup();
    let dir = TempDir::new("validator-crash");
    let url = format!("sqlite://{}", fixture().canonicalize().unwrap().display());
    let options = EngineOptions {
        max_retries: 2,
        retry_base_delay: Duration::from_millis(5),
        retry_max_delay: Duration::from_millis(20),
        retry_jitter: Duration::from_millis(5),
        jitter_seed: Some(7),
        ..EngineOptions::default()
    };
    let question = "How many factories do we have?";
    let rt = runtime();
    let (once, always, after) = rt.block_on(async {
        let engine = Engine::open(
            DatasourceRegistry::ad_hoc(&url, crate::support::drivers()).unwrap(),
            Arc::new(OfflinePlanner::new()),
            &dir.join("data"),
        )
        .unwrap()
        .with_options(options);
        assert!(engine.index_all().await.failed.is_empty());
        // A validator that crashes once: VALIDATOR_CRASH is an ERROR, so retried.
        fail::cfg("logical_validator", "1*panic(validator bug)").unwrap();
        let once = engine.ask(question, AskOptions::default()).await;
        // A validator that always crashes: the budget runs out, no SQL ever runs.
        fail::cfg("logical_validator", "panic(validator bug)").unwrap();
        let always = engine.ask(question, AskOptions::default()).await;
        // The same engine answers once the fault is gone.
        fail::remove("logical_validator");
        let after = engine.ask(question, AskOptions::default()).await;
        (once, always, after)
    });
    scenario.teardown();

    assert!(once.success, "{:#?}", once.errors);
    let sq = &once.subqueries[0];
    assert_eq!(sq.attempts, 2);
    let first: Vec<&str> = sq.attempt_log[0]
        .errors
        .iter()
        .map(|e| e.code.as_str())
        .collect();
    assert_eq!(first, ["VALIDATOR_CRASH"]);
    assert!(
        sq.attempt_log[0].sql.is_none(),
        "no SQL from an unvalidated plan"
    );
    assert!(once.rows.is_some());
    assert_eq!(once.rows, after.rows);

    assert_eq!(always.status, RunStatus::Failed, "{:#?}", always.errors);
    let crash = always.errors_with(ErrorCode::ValidatorCrash);
    assert!(!crash.is_empty(), "{:#?}", always.errors);
    assert!(crash.iter().all(|e| e.node == "logical_validator"));
    let sq = &always.subqueries[0];
    assert_eq!(sq.attempts, 3, "1 + max_retries");
    assert!(sq.attempt_log.iter().all(|a| a.sql.is_none()));
    assert!(sq.artifact.is_none());

    assert!(after.success, "{:#?}", after.errors);
    assert_eq!(after.rows.as_ref().map(Vec::len), Some(1));
}
