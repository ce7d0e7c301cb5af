//! The `Engine` facade: one question through the whole pipeline (spec: pipeline.md).
//!
//! `ask` runs `intent_guard` (a question that asks to change data stops here) →
//! `datasource_resolver` → `decomposer` (progressive validation, one re-prompt
//! with the findings) → `global_planner` (the validated `ExecutionDag`) → `layer_router`
//! (each layer's scans concurrently on a bounded pool: a `JoinSet` and a semaphore) →
//! per scan the SQL agent (`scan`) → `aggregator` → `answer_synthesizer`. The whole run
//! races the caller's cancellation token and the global deadline; when either fires, the
//! in-flight work is dropped (the `JoinSet` aborts its tasks) and the state so far is
//! returned. Every node appends a line to the run log (`runlog`); the same record feeds
//! the metrics and a `tracing` event inside the run's span (`trace_id`, `tenant_id`), and
//! audit events go to the audit log (`audit`).

mod aggregate;
mod answer;
mod audit;
mod ctx;
mod decompose;
mod ground;
mod intent;
mod layers;
mod options;
mod resolve;
mod result;
mod rows;
mod run;
mod runlog;
mod scan;
mod schema;
mod state;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use nl2sql_adapter::{BreakerConfig, CircuitBreaker, DatasourceAdapter};
use nl2sql_artifacts::{ArtifactStore, DEFAULT_PATH_TEMPLATE, LocalArtifactStore, PathTemplate};
use nl2sql_index::{
    DatasourceDocs, IndexProgress, IndexReport, LexicalIndex, SchemaIndex, SchemaStore,
    index_all_with_workers, schema_version_of,
};
use nl2sql_planner::{AnswerRequest, Planner};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::{
    AccessPolicy, ErrorCode, PipelineError, PolicyFile, RunStatus, Severity, TraceId, UserContext,
};

use crate::datasources::DatasourceRegistry;
use ctx::{Shared, panic_text};

pub use audit::{AUDIT_BACKUPS, AUDIT_MAX_BYTES, AuditLog, redact};
pub use options::{
    AskOptions, DEFAULT_TENANT, DEFAULT_VALUE_LOOKUP_LIMIT, ENGINE_ENV_VARS, EngineOptions,
    clock_today,
};
pub use result::{AttemptReport, ErrorReport, RunResult, SubQueryReport, TerminalTable};
pub use runlog::{
    FINAL_STATE_NODE, RunEvent, RunEvents, RunLogEntry, read_run_log, recorded_question,
    run_log_path, write_replay_cassette,
};

/// Where RBAC comes from.
#[derive(Debug, Clone)]
enum Policy {
    /// No policy configured: everything allowed.
    None,
    /// A policy file, resolved per caller from their roles (fails closed).
    File(PolicyFile),
    /// One fixed access policy for every caller.
    Fixed(AccessPolicy),
}

/// The pipeline facade: datasources, schema store and index, planner, artifact store and
/// settings. Cheap to clone; `ask` may run concurrently.
#[derive(Clone)]
pub struct Engine {
    shared: Shared,
    policy: Policy,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("registry", &self.shared.registry)
            .field("planner", &self.shared.planner.name())
            .field("artifacts", &self.shared.artifacts)
            .field("data_dir", &self.shared.data_dir)
            .field("options", &self.shared.options)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine over `registry` with the given store, index, planner and artifact store;
    /// default options, no policy (everything allowed), no run log.
    pub fn new(
        registry: DatasourceRegistry,
        store: SchemaStore,
        index: Arc<dyn SchemaIndex>,
        planner: Arc<dyn Planner>,
        artifacts: Arc<dyn ArtifactStore>,
    ) -> Self {
        Engine {
            shared: Shared {
                registry: Arc::new(registry),
                store: Arc::new(store),
                index,
                planner,
                planner_breaker: Arc::new(CircuitBreaker::new(
                    "planner",
                    BreakerConfig {
                        fail_max: 5,
                        reset_timeout: Duration::from_secs(60),
                    },
                )),
                artifacts,
                options: EngineOptions::default(),
                data_dir: None,
                docs: Arc::new(BTreeMap::new()),
                audit: None,
            },
            policy: Policy::None,
        }
    }

    /// An engine with everything in memory except artifacts, which go to
    /// `artifact_dir` (a local store).
    pub fn in_memory(
        registry: DatasourceRegistry,
        planner: Arc<dyn Planner>,
        artifact_dir: &Path,
    ) -> Result<Self, PipelineError> {
        let artifacts =
            LocalArtifactStore::new(artifact_dir, PathTemplate::parse(DEFAULT_PATH_TEMPLATE)?)?;
        Ok(Engine::new(
            registry,
            SchemaStore::in_memory(),
            Arc::new(LexicalIndex::in_memory()),
            planner,
            Arc::new(artifacts),
        ))
    }

    /// An engine keeping its schema store, index, artifacts (`<data_dir>/artifacts`), run
    /// logs (`<data_dir>/runs`) and audit log (`<data_dir>/logs/audit_events.log`, unless
    /// the options name another) under `data_dir`.
    pub fn open(
        registry: DatasourceRegistry,
        planner: Arc<dyn Planner>,
        data_dir: &Path,
    ) -> Result<Self, PipelineError> {
        let store = SchemaStore::open(data_dir)?;
        let index = LexicalIndex::open(data_dir)?;
        let artifacts = LocalArtifactStore::new(
            data_dir.join("artifacts"),
            PathTemplate::parse(DEFAULT_PATH_TEMPLATE)?,
        )?;
        Ok(Engine::new(
            registry,
            store,
            Arc::new(index),
            planner,
            Arc::new(artifacts),
        )
        .with_data_dir(data_dir))
    }

    /// The same engine writing result artifacts to `artifacts` (for example a store from
    /// the configuration's `[artifacts]` section) instead of its default store.
    #[must_use]
    pub fn with_artifacts(mut self, artifacts: Arc<dyn ArtifactStore>) -> Self {
        self.shared.artifacts = artifacts;
        self
    }

    /// The same engine indexing and describing datasources with `docs` (descriptions and
    /// example questions by datasource id, from the documentation files).
    #[must_use]
    pub fn with_docs(mut self, docs: BTreeMap<String, DatasourceDocs>) -> Self {
        self.shared.docs = Arc::new(docs);
        self
    }

    /// The same engine with `options`.
    #[must_use]
    pub fn with_options(mut self, options: EngineOptions) -> Self {
        // Keep the writer when the path is the same (an engine cloned with other options
        // shares its audit log, and so its rotation).
        if let Some(path) = &options.audit_log
            && self.shared.audit.as_ref().is_none_or(|a| a.path() != path)
        {
            self.shared.audit = Some(Arc::new(AuditLog::new(path)));
        }
        self.shared.options = options;
        self
    }

    /// The same engine writing run logs under `data_dir/runs` and, unless an audit log is
    /// set already, audit events to `data_dir/logs/audit_events.log`.
    #[must_use]
    pub fn with_data_dir(mut self, data_dir: &Path) -> Self {
        self.shared.data_dir = Some(data_dir.to_path_buf());
        if self.shared.audit.is_none() {
            let path = data_dir.join("logs").join("audit_events.log");
            self.shared.audit = Some(Arc::new(AuditLog::new(path)));
        }
        self
    }

    /// The same engine writing audit events to `audit`.
    #[must_use]
    pub fn with_audit_log(mut self, audit: Arc<AuditLog>) -> Self {
        self.shared.audit = Some(audit);
        self
    }

    /// The audit log, when the engine keeps one.
    pub fn audit_log(&self) -> Option<&AuditLog> {
        self.shared.audit.as_deref()
    }

    /// The same engine resolving each caller's access from `policy` and their roles
    /// (no roles or unknown roles allow nothing).
    #[must_use]
    pub fn with_policy_file(mut self, policy: PolicyFile) -> Self {
        self.policy = Policy::File(policy);
        self
    }

    /// The same engine applying `access` to every caller.
    #[must_use]
    pub fn with_access_policy(mut self, access: AccessPolicy) -> Self {
        self.policy = Policy::Fixed(access);
        self
    }

    /// The settings.
    pub fn options(&self) -> &EngineOptions {
        &self.shared.options
    }

    /// The datasource registry.
    pub fn registry(&self) -> &DatasourceRegistry {
        &self.shared.registry
    }

    /// The schema store.
    pub fn store(&self) -> &SchemaStore {
        &self.shared.store
    }

    /// The run log of `trace_id`, when the engine has a data dir.
    pub fn run_log_path(&self, trace_id: &str) -> Option<PathBuf> {
        self.shared
            .data_dir
            .as_deref()
            .map(|d| run_log_path(d, trace_id))
    }

    /// The access policy of `user`.
    pub fn access_for(&self, user: &UserContext) -> AccessPolicy {
        match &self.policy {
            Policy::None => AccessPolicy::allow_all(),
            Policy::File(p) => p.access_for_tenant(&user.roles, &self.tenant_of(user)),
            Policy::Fixed(a) => a.clone(),
        }
    }

    /// The tenant of `user`: their context's, else the engine's default (`TENANT_ID`).
    pub fn tenant_of(&self, user: &UserContext) -> String {
        user.tenant_id
            .clone()
            .filter(|t| !t.trim().is_empty())
            .unwrap_or_else(|| self.shared.options.default_tenant.clone())
    }

    /// Snapshots and indexes every datasource of the registry, in id order; one that
    /// cannot be reached or described is reported in `failed` and the others continue.
    pub async fn index_all(&self) -> IndexReport {
        self.index_all_with_progress(&mut |_| {}).await
    }

    /// [`Engine::index_all`], reporting each step to `progress` (positions count the
    /// registry's datasources).
    pub async fn index_all_with_progress(
        &self,
        progress: &mut dyn FnMut(IndexProgress),
    ) -> IndexReport {
        let ids: Vec<String> = self
            .shared
            .registry
            .ids()
            .into_iter()
            .map(str::to_owned)
            .collect();
        self.index_these(&ids, progress).await
    }

    /// Indexes the datasources whose schema is not the one the schema store holds as
    /// latest: those never indexed, and those whose structure (tables, columns, keys)
    /// changed since, read cheaply through [`DatasourceAdapter::schema_contract`]. The
    /// others keep their stored snapshot, statistics and index documents. A datasource
    /// that cannot be reached is reported in `failed` (a question may still use the
    /// others).
    pub async fn index_stale(&self) -> IndexReport {
        let mut stale = Vec::new();
        let mut report = IndexReport::default();
        for id in self.shared.registry.ids() {
            let Some(stored) = self.shared.store.latest_version(id) else {
                stale.push(id.to_owned());
                continue;
            };
            let adapter = match self.shared.registry.adapter(id).await {
                Ok(a) => a,
                Err(e) => {
                    report
                        .failed
                        .push((id.to_owned(), e.to_pipeline_error("indexing")));
                    continue;
                }
            };
            match adapter.schema_contract().await {
                Ok(mut contract) => {
                    // Stored contracts carry the configured id, as in indexing.
                    contract.datasource_id = id.to_owned();
                    if schema_version_of(&contract) != stored {
                        tracing::info!(datasource = id, "schema changed: re-indexing");
                        stale.push(id.to_owned());
                    }
                }
                Err(e) => report
                    .failed
                    .push((id.to_owned(), e.to_pipeline_error("indexing"))),
            }
        }
        let indexed = self.index_these(&stale, &mut |_| {}).await;
        report.indexed = indexed.indexed;
        report.failed.extend(indexed.failed);
        report
    }

    /// Indexes `ids` (SANDBOX_INDEX_WORKERS at once, [`EngineOptions::index_workers`]).
    /// Adapters are created first, one after the other; one that cannot be created is
    /// reported and the others go on. Positions in progress reports count all of `ids`;
    /// the report lists the indexed datasources in the order of `ids`, then the failed
    /// ones (those that could not connect first).
    async fn index_these(
        &self,
        ids: &[String],
        progress: &mut dyn FnMut(IndexProgress),
    ) -> IndexReport {
        let registry = &self.shared.registry;
        let total = ids.len();
        let mut report = IndexReport::default();
        let mut adapters: Vec<Arc<dyn DatasourceAdapter>> = Vec::new();
        // The position (among `ids`) of each adapter that could be created.
        let mut positions = Vec::new();
        let mut docs = BTreeMap::new();
        for (i, id) in ids.iter().enumerate() {
            match registry.adapter(id).await {
                Ok(adapter) => {
                    adapters.push(adapter);
                    positions.push(i + 1);
                }
                Err(e) => {
                    let err = e.to_pipeline_error("indexing");
                    progress(IndexProgress::Failed {
                        datasource_id: id.clone(),
                        position: i + 1,
                        total,
                        message: err.to_string(),
                    });
                    report.failed.push((id.clone(), err));
                    continue;
                }
            }
            let mut ds_docs = self.shared.docs.get(id).cloned().unwrap_or_default();
            if let Some(d) = registry.config(id).ok().and_then(|c| c.description.clone()) {
                ds_docs.description = Some(d);
            }
            docs.insert(id.clone(), ds_docs);
        }
        let refs: Vec<&dyn DatasourceAdapter> = adapters.iter().map(|a| &**a).collect();
        let at = |position: usize| {
            position
                .checked_sub(1)
                .and_then(|i| positions.get(i))
                .copied()
                .unwrap_or(position)
        };
        let mut relay = |p: IndexProgress| {
            progress(match p {
                IndexProgress::Step {
                    datasource_id,
                    position,
                    step,
                    ..
                } => IndexProgress::Step {
                    datasource_id,
                    position: at(position),
                    total,
                    step,
                },
                IndexProgress::Done {
                    position, stats, ..
                } => IndexProgress::Done {
                    position: at(position),
                    total,
                    stats,
                },
                IndexProgress::Failed {
                    datasource_id,
                    position,
                    message,
                    ..
                } => IndexProgress::Failed {
                    datasource_id,
                    position: at(position),
                    total,
                    message,
                },
            });
        };
        let indexed = index_all_with_workers(
            &refs,
            &self.shared.store,
            self.shared.index.as_ref(),
            &docs,
            self.shared.options.index_workers,
            &mut relay,
        )
        .await;
        report.indexed = indexed.indexed;
        report.failed.extend(indexed.failed);
        report
    }

    /// Answers `question` (spec: pipeline.md §5). Never fails: every problem is in the
    /// result's errors and status.
    pub async fn ask(&self, question: &str, opts: AskOptions) -> RunResult {
        let access = self.access_for(&opts.user);
        let tenant = self.tenant_of(&opts.user);
        let mut opts = opts;
        let trace_id = opts.trace_id.clone().unwrap_or_else(TraceId::new);
        opts.trace_id = Some(trace_id.clone());
        let started = std::time::Instant::now();
        let run = run::run(self.shared.clone(), question, opts, access, tenant.clone());
        match std::panic::AssertUnwindSafe(run).catch_unwind().await {
            Ok(result) => result,
            // A fault outside every scan (scans are caught by their task): the run fails
            // with UNKNOWN_ERROR instead of unwinding into the caller.
            Err(panic) => self.crashed(
                question,
                trace_id.as_str(),
                &tenant,
                started,
                &panic_text(&*panic),
            ),
        }
    }

    /// The result of a run that panicked outside its scans.
    fn crashed(
        &self,
        question: &str,
        trace_id: &str,
        tenant: &str,
        started: std::time::Instant,
        why: &str,
    ) -> RunResult {
        tracing::error!(target: "nl2sql::run", trace_id, tenant_id = tenant, fault = why, "run stopped by an unexpected fault");
        let e = PipelineError::new(
            "orchestrator",
            ErrorCode::UnknownError,
            Severity::Critical,
            format!("An unexpected fault stopped the run: {why}"),
        );
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        if let Some(audit) = &self.shared.audit {
            audit.write(
                "run_completed",
                trace_id,
                tenant,
                serde_json::json!({"status": RunStatus::Failed, "duration_ms": duration_ms}),
            );
        }
        RunResult {
            trace_id: trace_id.to_owned(),
            status: RunStatus::Failed,
            success: false,
            answer: Some(OfflinePlanner::new().answer_sync(&AnswerRequest {
                question: question.to_owned(),
                results: Vec::new(),
                unmapped: Vec::new(),
                errors: vec![e.clone()],
            })),
            columns: None,
            rows: None,
            terminal_results: Vec::new(),
            subqueries: Vec::new(),
            unmapped: Vec::new(),
            dag: None,
            errors: vec![ErrorReport::of(&e)],
            warnings: Vec::new(),
            timings: BTreeMap::from([("total".to_owned(), duration_ms)]),
        }
    }
}
