//! One run of the main graph: resolver, decomposer, global planner, layer router,
//! aggregator and answer synthesizer, raced against cancellation and the global deadline.

use nl2sql_state::Node;
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use nl2sql_adapter::DatasourceBreaker as _;
use nl2sql_aggregate::aggregate_from_store;
use nl2sql_index::{DATASOURCE_K, route_datasources};
use nl2sql_plan::{DatasourceResolution, DecomposerResponse, ExecutionDag, SubQuery};
use nl2sql_planner::{
    AnswerRequest, DatasourceInfo, DecomposeRequest, FinalAnswer, Step, TerminalResult,
};
use nl2sql_planner_llm::capture_calls;
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::{
    AccessPolicy, ArtifactRef, ErrorCode, MismatchPolicy, PipelineError, RunStatus, ScanStatus,
    Severity, SplitMix64, TraceId, UserContext,
};
use nl2sql_validate::validate_decomposition;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::audit::{AuditLog, snippet};
use super::options::AskOptions;
use super::result::{ErrorReport, RunResult, SubQueryReport, TerminalTable};
use super::rows::{column_names, json_rows};
use super::runlog::{Record, RunLog, millis};
use super::scan::{ScanOutcome, run_scan};
use super::{Shared, cancelled};

/// What a run and its scans share.
pub(crate) struct RunCtx {
    pub(crate) shared: Shared,
    pub(crate) trace_id: String,
    pub(crate) question: String,
    pub(crate) user: UserContext,
    pub(crate) access: AccessPolicy,
    pub(crate) cancel: CancellationToken,
    pub(crate) log: RunLog,
    /// The caller's tenant (or the engine's default tenant).
    pub(crate) tenant: String,
    audit: Option<Arc<AuditLog>>,
    rng: Mutex<SplitMix64>,
}

impl RunCtx {
    /// Records one node execution: the run log line, the node's metrics
    /// (`nl2sql.node.duration`, `nl2sql.errors`), a `tracing` event inside the run's span,
    /// and a `security_violation` audit event per `SECURITY_VIOLATION` error.
    pub(crate) fn record(&self, rec: Record<'_>) {
        let node = rec.node.to_owned();
        metrics::histogram!(
            "nl2sql.node.duration",
            "node" => node.clone(),
            "tenant_id" => self.tenant.clone()
        )
        .record(rec.duration.as_secs_f64());
        for e in rec.errors {
            metrics::counter!(
                "nl2sql.errors",
                "code" => e.code.as_str(),
                "severity" => e.severity.as_str(),
                "node" => e.node.clone(),
                "tenant_id" => self.tenant.clone()
            )
            .increment(1);
            if e.code == ErrorCode::SecurityViolation {
                self.audit(
                    "security_violation",
                    json!({
                        "code": e.code.as_str(),
                        "node": e.node,
                        "roles": self.user.roles,
                        "target": e.details.as_deref().cloned().unwrap_or_else(|| json!(e.message)),
                    }),
                );
            }
        }
        let codes: Vec<&str> = rec.errors.iter().map(|e| e.code.as_str()).collect();
        if rec.errors.iter().any(PipelineError::is_blocking) {
            tracing::warn!(
                target: "nl2sql::node",
                node = %node,
                subgraph_id = rec.subgraph_id,
                attempt = rec.attempt,
                duration_ms = millis(rec.duration),
                errors = ?codes,
                "node failed"
            );
        } else {
            tracing::debug!(
                target: "nl2sql::node",
                node = %node,
                subgraph_id = rec.subgraph_id,
                attempt = rec.attempt,
                duration_ms = millis(rec.duration),
                errors = ?codes,
                "node finished"
            );
        }
        self.log.record(rec);
    }

    /// Appends one audit event for this run (none when the engine keeps no audit log).
    pub(crate) fn audit(&self, event_type: &str, data: Value) {
        if let Some(audit) = &self.audit {
            audit.write(event_type, &self.trace_id, &self.tenant, data);
        }
    }

    /// Logs one node execution of the main graph.
    pub(crate) fn log_node(
        &self,
        node: &str,
        started: (SystemTime, Instant),
        delta: Value,
        errors: &[PipelineError],
    ) {
        self.record(Record {
            node,
            subgraph_id: None,
            attempt: None,
            started_at: started.0,
            duration: started.1.elapsed(),
            delta,
            errors,
        });
    }

    /// A uniform number in [0, 1) from the run's seeded generator.
    pub(crate) fn uniform(&self) -> f64 {
        self.rng.lock().map_or(0.0, |mut rng| rng.unit())
    }

    /// Calls the planner for `step`: through the planner's circuit breaker, with the
    /// per-call timeout, racing cancellation; records `{step, request, response}`.
    pub(crate) async fn planner_call<Req, T, F>(
        &self,
        step: Step,
        subgraph_id: Option<&str>,
        attempt: Option<u32>,
        request: &Req,
        call: F,
    ) -> Result<T, PipelineError>
    where
        Req: Serialize,
        T: Serialize,
        F: Future<Output = Result<T, PipelineError>>,
    {
        let node = step.as_str();
        let started = (SystemTime::now(), Instant::now());
        let breaker = &self.shared.planner_breaker;
        let mut calls = Vec::new();
        let result = match breaker.enter() {
            Err(e) => Err(PipelineError::new(
                node,
                ErrorCode::ServiceUnavailable,
                Severity::Critical,
                format!("The planner is unavailable: {}", e.safe_message),
            )),
            Ok(permit) => {
                let timeout = self.shared.options.planner_timeout;
                let r = tokio::select! {
                    biased;
                    () = self.cancel.cancelled() => Err(cancelled(node)),
                    r = tokio::time::timeout(timeout, capture_calls(call)) => match r {
                        Ok((r, made)) => {
                            calls = made;
                            r
                        }
                        Err(_) => Err(PipelineError::new(
                            node,
                            ErrorCode::ServiceUnavailable,
                            Severity::Error,
                            format!("The planner did not answer within {} ms.", millis(timeout)),
                        )),
                    },
                };
                match &r {
                    Err(e) if e.code == ErrorCode::ServiceUnavailable => permit.failure(),
                    // A cancelled call says nothing of the planner: its permit is dropped
                    // (a half-open trial reopens the breaker).
                    Err(e) if e.code == ErrorCode::Cancelled => drop(permit),
                    _ => permit.success(),
                }
                r
            }
        };
        let (response, errors) = match &result {
            Ok(v) => (serde_json::to_value(v).unwrap_or(Value::Null), Vec::new()),
            Err(e) => (Value::Null, vec![e.clone()]),
        };
        for call in &calls {
            metrics::counter!(
                "nl2sql.token.usage",
                "agent" => node,
                "model" => call.model.clone(),
                "tenant_id" => self.tenant.clone()
            )
            .increment(call.total_tokens);
            let reply = match &result {
                Ok(_) => response.to_string(),
                Err(e) => e.message.clone(),
            };
            self.audit(
                "llm_interaction",
                json!({
                    "agent": node,
                    "model": call.model,
                    "prompt_version": call.prompt_version,
                    "response_snippet": snippet(&reply, 1000),
                    "token_usage": {
                        "prompt_tokens": call.prompt_tokens,
                        "completion_tokens": call.completion_tokens,
                        "total_tokens": call.total_tokens,
                    },
                    "latency_ms": call.latency_ms,
                    "error": call.error.map(ErrorCode::as_str),
                }),
            );
        }
        self.record(Record {
            node: &format!("planner:{node}"),
            subgraph_id,
            attempt,
            started_at: started.0,
            duration: started.1.elapsed(),
            delta: json!({
                "step": node,
                "planner": self.shared.planner.name(),
                "request": request,
                "response": response,
            }),
            errors: &errors,
        });
        result
    }
}

/// The run's state as it grows (kept outside the raced future so that a cancelled or
/// timed-out run still reports what it had).
#[derive(Default)]
struct State {
    errors: Vec<ErrorReport>,
    warnings: Vec<String>,
    timings: BTreeMap<String, u64>,
    unmapped: Vec<Value>,
    unmapped_typed: Vec<nl2sql_plan::UnmappedSubQuery>,
    dag: Option<ExecutionDag>,
    subqueries: Vec<SubQueryReport>,
    artifacts: BTreeMap<String, ArtifactRef>,
    terminal: Vec<TerminalTable>,
    aggregator_ran: bool,
    answer: Option<FinalAnswer>,
    /// Run-level blocking errors (for the answer step).
    blocking: Vec<PipelineError>,
}

impl State {
    fn error(&mut self, e: &PipelineError) {
        self.errors.push(ErrorReport::of(e));
        if e.is_blocking() {
            self.blocking.push(e.clone());
        }
    }
}

/// Runs one question.
pub(crate) async fn run(
    shared: Shared,
    question: &str,
    opts: AskOptions,
    access: AccessPolicy,
    tenant: String,
) -> RunResult {
    let started = Instant::now();
    // One "today" for every planner call of the run.
    let mut shared = shared;
    if shared.options.today.is_none() {
        shared.options.today = Some(super::options::clock_today());
    }
    let trace_id = opts.trace_id.clone().unwrap_or_else(TraceId::new);
    let trace = trace_id.as_str().to_owned();
    let seed = shared.options.jitter_seed.unwrap_or_else(|| {
        let h = nl2sql_state::sha256_hex(trace.as_bytes());
        u64::from_str_radix(&h[..16], 16).unwrap_or(0x9E37_79B9_7F4A_7C15)
    });
    let (log, log_warning) = RunLog::open(shared.data_dir.as_deref(), &trace);
    let cancel = opts.cancel.child_token();
    let global_timeout = shared.options.global_timeout;
    let audit = shared.audit.clone();
    let ctx = Arc::new(RunCtx {
        shared,
        trace_id: trace.clone(),
        question: question.to_owned(),
        user: opts.user.clone(),
        access,
        cancel: cancel.clone(),
        log,
        tenant: tenant.clone(),
        audit,
        rng: Mutex::new(SplitMix64::new(seed)),
    });
    // Every log record of the run, its scans' included, is inside this span.
    // Target `nl2sql::span`: a log filter keeps it enabled whatever else it selects.
    let span = tracing::info_span!(
        target: "nl2sql::span",
        "run",
        trace_id = %trace,
        tenant_id = %tenant
    );
    let result = run_in_span(ctx, &opts, global_timeout, started, log_warning)
        .instrument(span)
        .await;
    metrics::histogram!("nl2sql.run.duration", "status" => result.status.as_str(), "tenant_id" => tenant)
        .record(started.elapsed().as_secs_f64());
    result
}

/// [`run`] inside the run's span.
async fn run_in_span(
    ctx: Arc<RunCtx>,
    opts: &AskOptions,
    global_timeout: std::time::Duration,
    started: Instant,
    log_warning: Option<String>,
) -> RunResult {
    let trace = ctx.trace_id.clone();
    let cancel = ctx.cancel.clone();
    let mut st = State::default();
    if let Some(w) = log_warning {
        st.warnings.push(w);
    }

    let stopped: Option<RunStatus> = tokio::select! {
        biased;
        () = cancel.cancelled() => Some(RunStatus::Cancelled),
        () = tokio::time::sleep(global_timeout) => Some(RunStatus::TimedOut),
        () = pipeline(&ctx, opts, &mut st) => None,
    };
    // Stop whatever is still running (scan tasks were aborted with their JoinSet).
    cancel.cancel();

    let status = match stopped {
        Some(s) => {
            let e = match s {
                RunStatus::TimedOut => PipelineError::new(
                    "orchestrator",
                    ErrorCode::PipelineTimeout,
                    Severity::Error,
                    format!(
                        "The request timed out after {} ms; try a simpler question.",
                        millis(global_timeout)
                    ),
                ),
                _ => cancelled("orchestrator"),
            };
            for sq in &mut st.subqueries {
                if matches!(sq.status, ScanStatus::Pending | ScanStatus::Running) {
                    sq.status = ScanStatus::Cancelled;
                }
            }
            st.error(&e);
            if st.answer.is_none() {
                let request = AnswerRequest {
                    question: ctx.question.clone(),
                    results: Vec::new(),
                    unmapped: st.unmapped_typed.clone(),
                    errors: st.blocking.clone(),
                };
                st.answer = Some(OfflinePlanner::new().answer_sync(&request));
            }
            ctx.log_node(
                "orchestrator",
                (SystemTime::now(), Instant::now()),
                json!({"status": s}),
                &[e],
            );
            s
        }
        None => compute_status(&st, ctx.shared.options.execute),
    };
    st.timings
        .insert("total".to_owned(), millis(started.elapsed()));
    ctx.audit(
        "run_completed",
        json!({"status": status, "duration_ms": millis(started.elapsed())}),
    );
    tracing::info!(
        target: "nl2sql::run",
        status = status.as_str(),
        duration_ms = millis(started.elapsed()),
        errors = st.errors.len(),
        "run completed"
    );
    let first = st.terminal.first();
    RunResult {
        trace_id: trace,
        status,
        success: status == RunStatus::Succeeded,
        answer: st.answer,
        columns: first.map(|t| t.columns.clone()),
        rows: first.map(|t| t.rows.clone()),
        terminal_results: st.terminal,
        subqueries: st.subqueries,
        unmapped: st.unmapped,
        dag: st.dag.and_then(|d| serde_json::to_value(d).ok()),
        errors: st.errors,
        warnings: st.warnings,
        timings: st.timings,
    }
}

/// `succeeded | partial | failed` for a run that finished (pipeline.md §5).
fn compute_status(st: &State, execute: bool) -> RunStatus {
    let scan_failed = st
        .subqueries
        .iter()
        .any(|s| s.status != ScanStatus::Succeeded);
    if execute {
        if st.terminal.is_empty() {
            return RunStatus::Failed;
        }
        let aggregator_errors = st.errors.iter().any(|e| e.node == Node::Aggregator);
        if scan_failed || aggregator_errors || !st.unmapped.is_empty() {
            return RunStatus::Partial;
        }
        RunStatus::Succeeded
    } else {
        let any_ok = st
            .subqueries
            .iter()
            .any(|s| s.status == ScanStatus::Succeeded);
        if st.subqueries.is_empty() || !any_ok {
            RunStatus::Failed
        } else if scan_failed || !st.unmapped.is_empty() {
            RunStatus::Partial
        } else {
            RunStatus::Succeeded
        }
    }
}

/// The main graph. Every exit path goes through the answer synthesizer.
async fn pipeline(ctx: &Arc<RunCtx>, opts: &AskOptions, st: &mut State) {
    if !intent_guard(ctx, st) {
        let t = Instant::now();
        answer_synthesizer(ctx, st).await;
        st.timings
            .insert(Node::AnswerSynthesizer.into(), millis(t.elapsed()));
        return;
    }
    let resolved = resolver(ctx, opts, st).await;
    let dag_and_queries = match resolved {
        Some(res) => {
            let decomposed = decomposer(ctx, &res, st).await;
            match decomposed {
                Some(d) => global_planner(ctx, d, st),
                None => None,
            }
        }
        None => None,
    };
    if let Some((dag, sub_queries)) = dag_and_queries {
        let t = Instant::now();
        layer_router(ctx, &dag, &sub_queries, st).await;
        st.timings
            .insert(Node::LayerRouter.into(), millis(t.elapsed()));
        if ctx.shared.options.execute {
            let t = Instant::now();
            aggregator(ctx, &dag, st).await;
            st.timings
                .insert(Node::Aggregator.into(), millis(t.elapsed()));
        }
    }
    let t = Instant::now();
    answer_synthesizer(ctx, st).await;
    st.timings
        .insert(Node::AnswerSynthesizer.into(), millis(t.elapsed()));
}

/// The resolver's output.
struct Resolved {
    resolution: DatasourceResolution,
    datasources: Vec<DatasourceInfo>,
}

/// `intent_guard`: false (and an `INTENT_VIOLATION`) when the question asks to change
/// data; nothing else runs then.
fn intent_guard(ctx: &RunCtx, st: &mut State) -> bool {
    let t = (SystemTime::now(), Instant::now());
    let Some(verb) = super::intent::write_intent(&ctx.question) else {
        return true;
    };
    let e = PipelineError::new(
        Node::IntentGuard,
        ErrorCode::IntentViolation,
        Severity::Critical,
        format!("The question asks to change data ('{verb}'); nl2sql only reads data."),
    );
    ctx.log_node(
        Node::IntentGuard.as_str(),
        t,
        json!({"verb": verb}),
        std::slice::from_ref(&e),
    );
    st.error(&e);
    false
}

/// A datasource the resolver considers, with what the decomposer is told of it.
struct Candidate {
    id: String,
    description: Option<String>,
    /// Business domains from the matching index document (empty when none matched).
    domains: Vec<String>,
    /// The schema version of the matching index document, when one matched.
    chunk_version: Option<String>,
}

impl Candidate {
    /// A datasource named explicitly or considered without a matching document.
    fn configured(id: String, description: Option<String>) -> Self {
        Candidate {
            id,
            description,
            domains: Vec::new(),
            chunk_version: None,
        }
    }
}

/// `datasource_resolver` (pipeline.md §2.1).
async fn resolver(ctx: &RunCtx, opts: &AskOptions, st: &mut State) -> Option<Resolved> {
    let t = (SystemTime::now(), Instant::now());
    let out = resolve(ctx, opts, st);
    let (delta, errors) = match &out {
        Ok(r) => (
            json!({
                "resolved": r.datasources.iter().map(|d| &d.id).collect::<Vec<_>>(),
                "allowed": r.resolution.allowed,
                "unsupported": r.resolution.unsupported,
                "schema_versions": r.resolution.schema_versions,
            }),
            Vec::new(),
        ),
        Err(e) => (Value::Null, vec![e.clone()]),
    };
    ctx.log_node(Node::DatasourceResolver.as_str(), t, delta, &errors);
    st.timings
        .insert(Node::DatasourceResolver.into(), millis(t.1.elapsed()));
    match out {
        Ok(r) => Some(r),
        Err(e) => {
            st.error(&e);
            None
        }
    }
}

fn resolve(ctx: &RunCtx, opts: &AskOptions, st: &mut State) -> Result<Resolved, PipelineError> {
    const NODE: &str = Node::DatasourceResolver.as_str();
    let registry = &ctx.shared.registry;
    let store = &ctx.shared.store;
    let registered: BTreeSet<String> = registry.ids().into_iter().map(str::to_owned).collect();
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut unsupported = BTreeSet::new();
    if let Some(id) = &opts.datasource {
        if !registered.contains(id) {
            return Err(PipelineError::new(
                NODE,
                ErrorCode::InvalidState,
                Severity::Error,
                format!("Datasource not found: {id}"),
            ));
        }
        if !ctx.access.datasource_allowed(id) {
            return Err(PipelineError::new(
                NODE,
                ErrorCode::SecurityViolation,
                Severity::Critical,
                "Datasource not allowed.",
            ));
        }
        let description = registry.config(id).ok().and_then(|c| c.description.clone());
        candidates.push(Candidate::configured(id.clone(), description));
    } else {
        let routing =
            route_datasources(ctx.shared.index.as_ref(), &ctx.question, None, DATASOURCE_K)
                .map_err(|e| {
                    PipelineError::new(
                        NODE,
                        ErrorCode::SchemaRetrievalFailed,
                        Severity::Error,
                        format!("Datasource resolution failed: {}", e.message),
                    )
                })?;
        // The router's warning (no candidate within its thresholds) reaches the answer.
        st.warnings.extend(routing.warnings);
        for c in routing.candidates {
            if !registered.contains(&c.datasource_id) {
                unsupported.insert(c.datasource_id);
                continue;
            }
            let description = (!c.metadata.description.is_empty())
                .then(|| c.metadata.description.clone())
                .or_else(|| {
                    registry
                        .config(&c.datasource_id)
                        .ok()
                        .and_then(|cfg| cfg.description.clone())
                });
            candidates.push(Candidate {
                id: c.datasource_id,
                description,
                domains: c.metadata.domains,
                chunk_version: Some(c.schema_version),
            });
        }
        if candidates.is_empty() {
            // Few datasources and no word of the question in their documents: every
            // indexed, registered datasource is a candidate (the planner links words).
            for id in store.datasource_ids() {
                if registered.contains(&id) {
                    let description = registry
                        .config(&id)
                        .ok()
                        .and_then(|c| c.description.clone());
                    candidates.push(Candidate::configured(id, description));
                }
            }
            if !candidates.is_empty() {
                st.warnings.push(
                    "No datasource document matched the question; every indexed datasource was considered."
                        .to_owned(),
                );
            }
        }
        if candidates.is_empty() {
            let message = if store.datasource_ids().is_empty() {
                "schema index unavailable: no datasource has been indexed"
            } else {
                "No datasource candidates resolved."
            };
            return Err(PipelineError::new(
                NODE,
                ErrorCode::SchemaRetrievalFailed,
                Severity::Error,
                message,
            ));
        }
    }
    let allowed: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| ctx.access.datasource_allowed(&c.id))
        .collect();
    if allowed.is_empty() {
        return Err(PipelineError::new(
            NODE,
            ErrorCode::SecurityViolation,
            Severity::Critical,
            "No allowed datasources.",
        ));
    }
    let mut schema_versions = BTreeMap::new();
    let mut datasources = Vec::new();
    let mut mismatched = Vec::new();
    for candidate in &allowed {
        let Candidate {
            id,
            description,
            domains,
            chunk_version,
        } = candidate;
        let latest = store.latest_version(id);
        if let (Some(l), Some(c)) = (&latest, chunk_version)
            && l != c
        {
            mismatched.push(id.clone());
        }
        if let Some(v) = &latest {
            schema_versions.insert(id.clone(), v.clone());
        }
        let examples = ctx
            .shared
            .docs
            .get(id)
            .map(|d| d.examples.clone())
            .unwrap_or_default();
        let snapshot = store.latest_snapshot(id);
        // The matching document's domains, else those of the stored snapshot (an
        // explicit datasource, or one considered without a matching document).
        let domains = if domains.is_empty() {
            snapshot
                .as_ref()
                .and_then(|s| s.metadata.as_ref())
                .and_then(|m| m.domains.clone())
                .unwrap_or_default()
        } else {
            domains.clone()
        };
        datasources.push(DatasourceInfo {
            id: id.clone(),
            description: description.clone(),
            domains,
            examples,
            schema_version: latest.clone(),
            snapshot,
        });
    }
    if !mismatched.is_empty() {
        mismatched.sort();
        let message = format!(
            "Schema version mismatch for datasources: {}",
            mismatched.join(", ")
        );
        match ctx.shared.options.schema_version_mismatch {
            MismatchPolicy::Fail => {
                return Err(PipelineError::new(
                    NODE,
                    ErrorCode::InvalidState,
                    Severity::Error,
                    message,
                ));
            }
            MismatchPolicy::Warn => st.warnings.push(message),
            MismatchPolicy::Ignore => {}
        }
    }
    Ok(Resolved {
        resolution: DatasourceResolution {
            resolved: Some(candidates.iter().map(|c| c.id.clone()).collect()),
            allowed: Some(allowed.iter().map(|c| c.id.clone()).collect()),
            unsupported,
            schema_versions,
        },
        datasources,
    })
}

/// The decomposer's validated output.
struct Decomposed {
    response: DecomposerResponse,
    dag: ExecutionDag,
}

/// `decomposer` (pipeline.md §2.2): decompose, validate progressively, re-prompt with the
/// findings, then `PLANNING_FAILURE`.
async fn decomposer(ctx: &RunCtx, res: &Resolved, st: &mut State) -> Option<Decomposed> {
    const NODE: &str = Node::Decomposer.as_str();
    let t0 = Instant::now();
    let mut feedback: Option<String> = None;
    let tries = ctx.shared.options.decomposer_max_retries.saturating_add(1);
    let mut outcome = None;
    for attempt in 1..=tries {
        let t = (SystemTime::now(), Instant::now());
        let request = DecomposeRequest {
            question: ctx.question.clone(),
            datasources: res.datasources.clone(),
            feedback: feedback.clone(),
            today: ctx.shared.options.today.clone(),
        };
        let planner = Arc::clone(&ctx.shared.planner);
        let req = request.clone();
        let response = ctx
            .planner_call(
                Step::Decomposer,
                None,
                Some(attempt),
                &request,
                async move { planner.decompose(&req).await },
            )
            .await;
        let response = match response {
            Ok(r) => r,
            Err(e) => {
                ctx.log_node(
                    NODE,
                    t,
                    json!({"attempt": attempt}),
                    std::slice::from_ref(&e),
                );
                // Output the planner could not turn into a decomposition (malformed or
                // schema-violating JSON from a model) is re-prompted with the parse error,
                // within the same budget as failed validation.
                if e.code == ErrorCode::PlanningFailure && e.is_retryable() && attempt < tries {
                    feedback = Some(format!(
                        "Your previous answer could not be used: {}",
                        e.message
                    ));
                    continue;
                }
                st.error(&e);
                break;
            }
        };
        let json_text = match serde_json::to_string(&response) {
            Ok(s) => s,
            Err(e) => {
                let e = PipelineError::new(
                    NODE,
                    ErrorCode::OrchestratorCrash,
                    Severity::Critical,
                    format!("Decomposition failed: {e}"),
                );
                ctx.log_node(NODE, t, Value::Null, std::slice::from_ref(&e));
                st.error(&e);
                break;
            }
        };
        let report = validate_decomposition(&json_text, &res.resolution);
        let findings: Vec<PipelineError> = report
            .findings
            .iter()
            .map(|f| f.to_pipeline_error())
            .collect();
        ctx.log_node(
            NODE,
            t,
            json!({"attempt": attempt, "validation": report.to_json()}),
            &findings,
        );
        for w in &report.warnings {
            st.warnings.push(w.message.clone());
        }
        feedback = report.feedback();
        if report.is_ok()
            && let (Some(n), Some(dag)) = (report.normalized, report.dag)
        {
            outcome = Some(Decomposed {
                response: n.response,
                dag,
            });
            break;
        }
        if attempt == tries {
            let text = feedback.clone().unwrap_or_default();
            let e = PipelineError::new(
                NODE,
                ErrorCode::PlanningFailure,
                Severity::Error,
                format!("The decomposition failed validation after {attempt} attempt(s): {text}"),
            );
            st.error(&e);
        }
    }
    st.timings.insert(NODE.to_owned(), millis(t0.elapsed()));
    if let Some(d) = &outcome {
        st.unmapped_typed = d.response.unmapped_subqueries.clone();
        st.unmapped = d
            .response
            .unmapped_subqueries
            .iter()
            .filter_map(|u| serde_json::to_value(u).ok())
            .collect();
    }
    outcome
}

/// `global_planner` (pipeline.md §2.3): the DAG validated with the decomposition.
fn global_planner(
    ctx: &RunCtx,
    d: Decomposed,
    st: &mut State,
) -> Option<(ExecutionDag, BTreeMap<String, SubQuery>)> {
    let t = (SystemTime::now(), Instant::now());
    let dag = d.dag;
    ctx.log_node(
        "global_planner",
        t,
        json!({"dag_id": dag.dag_id, "layers": dag.layers}),
        &[],
    );
    st.timings
        .insert("global_planner".to_owned(), millis(t.1.elapsed()));
    let queries: BTreeMap<String, SubQuery> = d
        .response
        .sub_queries
        .into_iter()
        .map(|q| (q.id.clone(), q))
        .collect();
    st.subqueries = queries
        .values()
        .map(|q| SubQueryReport {
            id: q.id.clone(),
            datasource_id: q.datasource_id.clone(),
            intent: q.intent.clone(),
            status: ScanStatus::Pending,
            plan: None,
            sql: None,
            attempts: 0,
            row_count: None,
            artifact: None,
            attempt_log: Vec::new(),
        })
        .collect();
    st.dag = Some(dag.clone());
    if queries.is_empty() {
        return None;
    }
    Some((dag, queries))
}

/// `layer_router` (pipeline.md §2.4): each layer's pending scans, concurrently, at most
/// `max_parallel_scans` at a time; outcomes merged in node-id order.
async fn layer_router(
    ctx: &Arc<RunCtx>,
    dag: &ExecutionDag,
    queries: &BTreeMap<String, SubQuery>,
    st: &mut State,
) {
    let permits = Arc::new(Semaphore::new(ctx.shared.options.max_parallel_scans.max(1)));
    for layer in &dag.layers {
        let pending: Vec<&SubQuery> = layer
            .iter()
            .filter_map(|id| queries.get(id))
            .filter(|q| {
                st.subqueries
                    .iter()
                    .any(|s| s.id == q.id && s.status == ScanStatus::Pending)
            })
            .collect();
        if pending.is_empty() {
            continue;
        }
        let t = (SystemTime::now(), Instant::now());
        let mut set: JoinSet<ScanOutcome> = JoinSet::new();
        let mut task_ids = BTreeMap::new();
        for q in &pending {
            if let Some(s) = st.subqueries.iter_mut().find(|s| s.id == q.id) {
                s.status = ScanStatus::Running;
            }
            let ctx = Arc::clone(ctx);
            let permits = Arc::clone(&permits);
            let q = (*q).clone();
            let scan_id = q.id.clone();
            let handle = set.spawn(
                async move {
                    let _permit = tokio::select! {
                        biased;
                        () = ctx.cancel.cancelled() => None,
                        p = permits.acquire_owned() => p.ok(),
                    };
                    run_scan(ctx, q).await
                }
                .in_current_span(),
            );
            task_ids.insert(handle.id(), scan_id);
        }
        let mut outcomes = Vec::new();
        while let Some(joined) = set.join_next_with_id().await {
            match joined {
                Ok((_, o)) => outcomes.push(o),
                Err(e) => {
                    // A panic inside a scan: that scan failed, the others go on.
                    let err = PipelineError::new(
                        "sql_agent",
                        ErrorCode::ExecutorCrash,
                        Severity::Critical,
                        format!("The scan task failed: {e}"),
                    );
                    let id = task_ids.get(&e.id()).cloned().unwrap_or_default();
                    if let Some(s) = st.subqueries.iter_mut().find(|s| s.id == id) {
                        s.status = ScanStatus::Failed;
                        st.errors
                            .push(ErrorReport::of_scan(&err, &s.id, &s.datasource_id));
                        st.blocking.push(err);
                    } else {
                        st.error(&err);
                    }
                }
            }
        }
        outcomes.sort_by(|a, b| a.report.id.cmp(&b.report.id));
        let ids: Vec<&str> = pending.iter().map(|q| q.id.as_str()).collect();
        ctx.log_node(
            Node::LayerRouter.as_str(),
            t,
            json!({"dispatched": ids}),
            &[],
        );
        for o in outcomes {
            for e in &o.errors {
                st.errors.push(ErrorReport::of_scan(
                    e,
                    &o.report.id,
                    &o.report.datasource_id,
                ));
            }
            let id = o.report.id.clone();
            if o.report.status != ScanStatus::Succeeded {
                st.warnings.push(format!(
                    "Sub-query {} on datasource '{}' produced no result ({}).",
                    o.report.id,
                    o.report.datasource_id,
                    serde_json::to_value(o.report.status)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                ));
            }
            st.warnings.extend(o.warnings);
            if let Some(a) = &o.report.artifact {
                st.artifacts.insert(o.report.id.clone(), a.clone());
            }
            if let Some(s) = st.subqueries.iter_mut().find(|s| s.id == id) {
                *s = o.report;
            }
        }
    }
}

/// `aggregator` (pipeline.md §2.5): partial evaluation over the artifacts.
async fn aggregator(ctx: &RunCtx, dag: &ExecutionDag, st: &mut State) {
    let t = (SystemTime::now(), Instant::now());
    let outcome = aggregate_from_store(dag, ctx.shared.artifacts.as_ref(), &st.artifacts).await;
    for e in &outcome.errors {
        let mut e = e.clone();
        e.node = Node::Aggregator.into();
        st.error(&e);
    }
    let max = ctx.shared.options.answer_rows;
    // A terminal node that could not be computed (one of its inputs failed) gives way to
    // the nearest parts upstream of it that were: a partial answer, said so in words.
    let mut shown: Vec<String> = outcome.results.clone();
    for terminal in dag.terminal_nodes() {
        if outcome.results.iter().any(|r| r == terminal) {
            continue;
        }
        let parts = computed_parts(dag, terminal, &outcome.tables);
        if parts.is_empty() {
            continue;
        }
        st.warnings.push(format!(
            "The combined result '{terminal}' could not be computed; showing what could be: {}.",
            parts.join(", ")
        ));
        for p in parts {
            if !shown.contains(&p) {
                shown.push(p);
            }
        }
    }
    for id in &shown {
        if let Some(batch) = outcome.tables.get(id) {
            st.terminal.push(TerminalTable {
                node_id: id.clone(),
                columns: column_names(batch),
                rows: json_rows(batch, usize::MAX),
                total_rows: u64::try_from(batch.num_rows()).unwrap_or(u64::MAX),
            });
        }
    }
    st.aggregator_ran = true;
    ctx.log_node(Node::Aggregator.as_str(),
        t,
        json!({
            "results": shown,
            "row_counts": st.terminal.iter().map(|t| (t.node_id.clone(), t.total_rows)).collect::<BTreeMap<_, _>>(),
            "max_rows_to_answer": max,
        }),
        &outcome.errors,
    );
}

/// The nodes nearest upstream of `node` (itself included) whose table was computed, in
/// input order.
fn computed_parts<T>(dag: &ExecutionDag, node: &str, tables: &BTreeMap<String, T>) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![node.to_owned()];
    let mut seen = BTreeSet::new();
    while let Some(id) = stack.pop() {
        if !seen.insert(id.clone()) {
            continue;
        }
        if tables.contains_key(&id) {
            out.push(id);
            continue;
        }
        if let Some(n) = dag.node(&id) {
            stack.extend(n.inputs.iter().rev().cloned());
        }
    }
    out
}

/// `answer_synthesizer` (pipeline.md §2.6): the planner's answer, falling back to the
/// offline template when it fails; explain-only when there is no result.
async fn answer_synthesizer(ctx: &RunCtx, st: &mut State) {
    let t = (SystemTime::now(), Instant::now());
    let max = ctx.shared.options.answer_rows;
    let mut errors: Vec<PipelineError> = st.blocking.clone();
    for sq in &st.subqueries {
        if sq.status != ScanStatus::Succeeded
            && let Some(e) = st
                .errors
                .iter()
                .find(|e| e.subquery_id.as_deref() == Some(sq.id.as_str()) && e.is_blocking())
        {
            errors.push(PipelineError::new(
                e.node.clone(),
                e.code,
                e.severity,
                format!(
                    "sub-query {} on datasource '{}': {}",
                    sq.id, sq.datasource_id, e.message
                ),
            ));
        }
    }
    let request = AnswerRequest {
        question: ctx.question.clone(),
        results: st
            .terminal
            .iter()
            .map(|t| TerminalResult {
                node_id: t.node_id.clone(),
                columns: t.columns.clone(),
                rows: t.rows.iter().take(max).cloned().collect(),
                total_rows: t.total_rows,
            })
            .collect(),
        unmapped: st.unmapped_typed.clone(),
        errors,
    };
    let planner = Arc::clone(&ctx.shared.planner);
    let req = request.clone();
    let answered = ctx
        .planner_call(Step::AnswerSynthesizer, None, None, &request, async move {
            planner.answer(&req).await
        })
        .await;
    let (answer, errs) = match answered {
        Ok(a) => (a, Vec::new()),
        Err(e) => {
            st.warnings.push(format!(
                "Answer synthesis failed ({}); the offline answer is used.",
                e.safe_message()
            ));
            (OfflinePlanner::new().answer_sync(&request), vec![e])
        }
    };
    ctx.log_node(
        Node::AnswerSynthesizer.as_str(),
        t,
        json!({"final_answer": answer}),
        &errs,
    );
    st.answer = Some(answer);
}
