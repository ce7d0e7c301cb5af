//! The SQL agent for one scan (spec: pipeline.md §3): schema retrieval → plan → logical
//! validation → value grounding → SQL generation → physical validation → execution →
//! artifact, with the retry handler (exponential backoff with jitter) and the refiner
//! between attempts.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use arrow::datatypes::Schema;
use nl2sql_adapter::{
    DatasourceAdapter, DatasourceBreaker as _, PermitOutcome as _, PhysicalSettings, RequestLimits,
    ResultFrame, validate_physical,
};
use nl2sql_artifacts::ArtifactMeta;
use nl2sql_index::{SchemaContext, SchemaRetriever};
use nl2sql_plan::{PlanModel, SubQuery};
use nl2sql_planner::{PlanRequest, RefineRequest, Step};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_sqlgen::SqlGenerator;
use nl2sql_state::{
    ArtifactRef, Attempt as AttemptRecord, Backoff, ErrorCode, GraphStateDelta, Node,
    PipelineError, ScanStatus, Severity, SubgraphOutput, sha256_hex,
};
use nl2sql_validate::{LogicalContext, validate_plan};
use serde_json::{Value, json};

use super::ctx::{RunCtx, cancelled};
use super::ground;
use super::runlog::{Record, millis};
use super::schema::{hide_denied, schema_request};
use super::state::{subgraph_id, warnings_of};

/// The per-scan context.
struct Scan<'a> {
    ctx: &'a RunCtx,
    sq: &'a SubQuery,
    subgraph_id: String,
}

impl Scan<'_> {
    /// Logs that `node` failed with `e` (no output).
    fn log_error(
        &self,
        node: &str,
        attempt: Option<u32>,
        t: (SystemTime, Instant),
        e: &PipelineError,
    ) {
        self.log(node, attempt, t, Value::Null, std::slice::from_ref(e));
    }

    /// A node of this scan starts (a streaming caller hears of it); its start time.
    fn start(&self, node: Node, attempt: Option<u32>) -> (SystemTime, Instant) {
        self.ctx
            .start(node.as_str(), Some(&self.subgraph_id), attempt)
    }

    fn log(
        &self,
        node: &str,
        attempt: Option<u32>,
        t: (SystemTime, Instant),
        delta: Value,
        errors: &[PipelineError],
    ) {
        self.ctx.record(Record {
            node,
            subgraph_id: Some(&self.subgraph_id),
            attempt,
            started_at: t.0,
            duration: t.1.elapsed(),
            delta,
            errors,
        });
    }
}

/// One attempt's result.
#[derive(Default)]
struct Attempt {
    plan: Option<PlanModel>,
    sql: Option<String>,
    /// Blocking errors of the step that stopped the attempt.
    errors: Vec<PipelineError>,
    artifact: Option<ArtifactRef>,
    row_count: Option<u64>,
    done: bool,
}

/// Runs one scan to its end; every exit path yields its delta to the run's state
/// (spec graph-state.md §4): its status, its output, its artifact when it has one, the
/// errors that ended it (marked as the scan's) and its warnings.
pub(crate) async fn run_scan(ctx: Arc<RunCtx>, sq: SubQuery) -> GraphStateDelta {
    let scan = Scan {
        ctx: &ctx,
        sq: &sq,
        subgraph_id: subgraph_id(&sq.id, &ctx.trace_id),
    };
    let mut out = SubgraphOutput {
        sub_query: serde_json::to_value(&sq).ok(),
        subgraph_id: scan.subgraph_id.clone(),
        subgraph_name: Some("sql_agent".to_owned()),
        retry_count: 0,
        plan: None,
        sql_draft: None,
        artifact: None,
        row_count: None,
        attempts: Vec::new(),
        errors: Vec::new(),
        reasoning: Vec::new(),
        status: ScanStatus::Running,
    };
    let mut warnings = Vec::new();
    let ending = drive(&scan, &mut out, &mut warnings).await;
    scan_delta(&sq, out, ending, warnings)
}

/// What scan `sq` leaves in the run's state.
fn scan_delta(
    sq: &SubQuery,
    out: SubgraphOutput,
    ending: Vec<PipelineError>,
    warnings: Vec<String>,
) -> GraphStateDelta {
    let mut delta = GraphStateDelta::default();
    if out.status != ScanStatus::Succeeded {
        let status = serde_json::to_value(out.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        delta.warnings = warnings_of(
            Node::LayerRouter.as_str(),
            [format!(
                "Sub-query {} on datasource '{}' produced no result ({status}).",
                sq.id, sq.datasource_id
            )],
        );
    }
    delta.warnings.extend(warnings_of("sql_agent", warnings));
    delta.errors = ending
        .into_iter()
        .map(|e| e.in_subgraph(&out.subgraph_id))
        .collect();
    delta.scan_status.insert(sq.id.clone(), out.status);
    if let Some(a) = &out.artifact {
        delta.artifact_refs.insert(sq.id.clone(), a.clone());
    }
    delta.subgraph_outputs.insert(out.subgraph_id.clone(), out);
    delta
}

/// The state machine; returns the errors that ended the scan (those of its last attempt,
/// or of the step that stopped it before or between attempts, also kept in `out.errors`).
async fn drive(
    scan: &Scan<'_>,
    out: &mut SubgraphOutput,
    warnings: &mut Vec<String>,
) -> Vec<PipelineError> {
    let ending = drive_attempts(scan, out, warnings).await;
    for e in &ending {
        if !out.errors.contains(e) {
            out.errors.push(e.clone());
        }
    }
    ending
}

/// [`drive`] without the bookkeeping of its ending errors.
async fn drive_attempts(
    scan: &Scan<'_>,
    out: &mut SubgraphOutput,
    warnings: &mut Vec<String>,
) -> Vec<PipelineError> {
    let ctx = scan.ctx;
    let ds = scan.sq.datasource_id.as_str();
    if ctx.cancel.is_cancelled() {
        out.status = ScanStatus::Cancelled;
        return vec![cancelled("sql_agent")];
    }
    // The adapter (through the datasource's breaker): recorded only when it fails.
    let t = (SystemTime::now(), Instant::now());
    let adapter = match ctx.shared.registry.adapter(ds).await {
        Ok(a) => a,
        Err(e) => {
            let err = PipelineError::new(
                Node::Executor,
                ErrorCode::ServiceUnavailable,
                Severity::Critical,
                format!("Datasource '{ds}' is unavailable: {}", e.safe_message),
            );
            scan.log(
                Node::Executor.as_str(),
                None,
                t,
                json!({"datasource_id": ds}),
                std::slice::from_ref(&err),
            );
            out.status = ScanStatus::Failed;
            return vec![err];
        }
    };
    // schema_retriever.
    let t = scan.start(Node::SchemaRetriever, None);
    let request = schema_request(scan.sq);
    let retrieved =
        SchemaRetriever::new(ctx.shared.index.as_ref(), &ctx.shared.store).retrieve(&request);
    let schema: SchemaContext = match retrieved {
        Ok(mut s) => {
            // The planner sees only what the caller may read, so it never plans a denied
            // column (the logical validator still checks the plan against the policy).
            hide_denied(&mut s.snapshot, &ctx.access, &scan.sq.datasource_id);
            s
        }
        Err(mut e) => {
            e.node = Node::SchemaRetriever.into();
            e.severity = Severity::Critical;
            scan.log_error(Node::SchemaRetriever.as_str(), None, t, &e);
            out.status = ScanStatus::Failed;
            return vec![e];
        }
    };
    warnings.extend(schema.warnings.iter().cloned());
    let tables: Vec<String> = schema.snapshot.contract.tables.keys().cloned().collect();
    // The columns of each table the context kept (a wide table is narrowed to its hits
    // and keys): what a planner can name, for recall measurements.
    let columns: serde_json::Map<String, Value> = schema
        .snapshot
        .contract
        .tables
        .iter()
        .map(|(k, t)| (k.clone(), json!(t.columns.keys().collect::<Vec<_>>())))
        .collect();
    scan.log(
        Node::SchemaRetriever.as_str(),
        None,
        t,
        json!({
            "schema_version": schema.schema_version,
            "tables": tables,
            "columns": columns,
            "fallback": schema.fallback,
        }),
        &[],
    );

    let options = &ctx.shared.options;
    let mut feedback: Option<String> = None;
    let mut history: Vec<String> = Vec::new();
    let mut attempt_no: u32 = 0;
    loop {
        attempt_no += 1;
        out.retry_count = attempt_no - 1;
        let plan_request = PlanRequest {
            question: ctx.question.clone(),
            sub_query: scan.sq.clone(),
            dialect: adapter.dialect(),
            schema: schema.snapshot.clone(),
            feedback: feedback.clone(),
            today: options.today.clone(),
        };
        let a = attempt(
            scan,
            adapter.as_ref(),
            &schema,
            &plan_request,
            attempt_no,
            warnings,
        )
        .await;
        out.plan = a.plan.as_ref().and_then(|p| serde_json::to_value(p).ok());
        out.sql_draft.clone_from(&a.sql);
        out.errors.extend(a.errors.iter().cloned());
        out.attempts.push(AttemptRecord {
            attempt: attempt_no,
            plan: out.plan.clone(),
            sql: a.sql.clone(),
            errors: a.errors.clone(),
            feedback: feedback.clone(),
        });
        if a.done {
            out.status = ScanStatus::Succeeded;
            out.artifact = a.artifact;
            out.row_count = a.row_count;
            return Vec::new();
        }
        for e in &a.errors {
            history.push(format!("[{}]: {}", e.node, e.safe_message()));
        }
        // route(step).
        if ctx.cancel.is_cancelled() || a.errors.iter().any(|e| e.code == ErrorCode::Cancelled) {
            out.status = ScanStatus::Cancelled;
            return a.errors;
        }
        let retryable = worth_retrying(&a.errors, ctx.shared.planner.ignores_feedback());
        if !retryable || attempt_no > options.max_retries {
            out.status = ScanStatus::Failed;
            return a.errors;
        }
        // retry_handler: backoff with jitter, raced against cancellation.
        let t = scan.start(Node::RetryHandler, Some(attempt_no));
        let backoff = Backoff {
            base: options.retry_base_delay,
            max: options.retry_max_delay,
            jitter: options.retry_jitter,
        };
        let delay = backoff.delay(attempt_no - 1, ctx.uniform());
        let waited = tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => false,
            () = tokio::time::sleep(delay) => true,
        };
        let handler_errors = if waited {
            Vec::new()
        } else {
            vec![cancelled(Node::RetryHandler.as_str())]
        };
        scan.log(Node::RetryHandler.as_str(),
            Some(attempt_no),
            t,
            json!({"retry_count": attempt_no, "delay_ms": u64::try_from(delay.as_millis()).unwrap_or(u64::MAX)}),
            &handler_errors,
        );
        if !waited {
            out.status = ScanStatus::Cancelled;
            return handler_errors;
        }
        // refiner (falls back to the offline refiner).
        let t = scan.start(Node::Refiner, Some(attempt_no));
        let refine = RefineRequest {
            plan_request: plan_request.clone(),
            failed_plan: a.plan.clone(),
            errors: a.errors.clone(),
            history: history.clone(),
        };
        let planner = Arc::clone(&ctx.shared.planner);
        let req = refine.clone();
        let refined = ctx
            .planner_call(
                Step::Refiner,
                Some(&scan.subgraph_id),
                Some(attempt_no),
                &refine,
                async move { planner.refine(&req).await },
            )
            .await;
        // A model that fails to refine does not end the scan: the offline refiner's
        // feedback is used, and the model's error stays in the run log.
        let (text, refiner_errors) = match refined {
            Ok(f) => (f, Vec::new()),
            Err(e) if e.code == ErrorCode::Cancelled => {
                out.status = ScanStatus::Cancelled;
                return vec![e];
            }
            Err(e) => (OfflinePlanner::new().refine_sync(&refine), vec![e]),
        };
        let mut fb = text.clone();
        for e in &a.errors {
            fb.push_str(&format!("\n- {}: {}", e.code, e.safe_message()));
        }
        scan.log(
            Node::Refiner.as_str(),
            Some(attempt_no),
            t,
            json!({"feedback": text, "offline_fallback": !refiner_errors.is_empty()}),
            &refiner_errors,
        );
        history.push(format!("[refiner]: {text}"));
        feedback = Some(fb);
    }
}

/// One attempt: plan → logical → generate → physical → execute → artifact.
async fn attempt(
    scan: &Scan<'_>,
    adapter: &dyn DatasourceAdapter,
    schema: &SchemaContext,
    plan_request: &PlanRequest,
    n: u32,
    warnings: &mut Vec<String>,
) -> Attempt {
    let ctx = scan.ctx;
    let ds = scan.sq.datasource_id.as_str();
    let options = &ctx.shared.options;
    let mut out = Attempt::default();
    let blocking = |errs: &[PipelineError]| -> Vec<PipelineError> {
        errs.iter().filter(|e| e.is_blocking()).cloned().collect()
    };

    // ast_planner.
    let t = scan.start(Node::AstPlanner, Some(n));
    let planner = Arc::clone(&ctx.shared.planner);
    let req = plan_request.clone();
    let planned = ctx
        .planner_call(
            Step::AstPlanner,
            Some(&scan.subgraph_id),
            Some(n),
            plan_request,
            async move { planner.plan(&req).await },
        )
        .await;
    let mut plan = match planned {
        Ok(p) => p,
        Err(mut e) => {
            e.node = Node::AstPlanner.into();
            scan.log_error(Node::AstPlanner.as_str(), Some(n), t, &e);
            out.errors = vec![e];
            return out;
        }
    };
    scan.log(
        Node::AstPlanner.as_str(),
        Some(n),
        t,
        json!({"plan": plan}),
        &[],
    );
    out.plan = Some(plan.clone());

    // logical_validator.
    let t = scan.start(Node::LogicalValidator, Some(n));
    let lctx = LogicalContext {
        datasource_id: Some(ds.to_owned()),
        contract: &schema.snapshot.contract,
        metadata: schema.snapshot.metadata.as_ref(),
        expected_schema: scan
            .sq
            .expected_schema
            .iter()
            .map(|c| c.name.clone())
            .collect(),
        policy: ctx.access.clone(),
        strict_columns: options.strict_columns,
    };
    let logical = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // A test can make the validator panic here (fail point `logical_validator`; fail
        // points exist only in test builds).
        fail::fail_point!("logical_validator");
        validate_plan(Some(&plan), &lctx)
    })) {
        Ok(report) => report,
        Err(panic) => {
            let e = PipelineError::new(
                Node::LogicalValidator,
                ErrorCode::ValidatorCrash,
                Severity::Error,
                format!(
                    "The logical validator stopped unexpectedly: {}",
                    super::ctx::panic_text(&*panic)
                ),
            );
            scan.log_error(Node::LogicalValidator.as_str(), Some(n), t, &e);
            out.errors = vec![e];
            return out;
        }
    };
    scan.log(
        Node::LogicalValidator.as_str(),
        Some(n),
        t,
        json!({"reasoning": logical.reasoning}),
        &logical.findings,
    );
    for f in logical.findings.iter().filter(|f| !f.is_blocking()) {
        warnings.push(f.message.clone());
    }
    if !logical.is_ok() {
        out.errors = blocking(&logical.findings);
        return out;
    }

    let limits = ctx
        .shared
        .registry
        .limits(ds)
        .unwrap_or_else(|_| adapter.limits());
    let full = ctx
        .shared
        .store
        .get_snapshot(ds, &schema.schema_version)
        .unwrap_or_else(|| schema.snapshot.clone());
    let breaker = match ctx.shared.registry.breaker(ds) {
        Ok(b) => b,
        Err(e) => {
            let e = PipelineError::new(
                Node::PhysicalValidator,
                ErrorCode::MissingDatasourceId,
                Severity::Error,
                e.to_string(),
            );
            out.errors = vec![e];
            return out;
        }
    };
    let request_limits = RequestLimits {
        row_limit: Some(limits.row_limit),
        timeout_ms: Some(limits.statement_timeout_ms),
        max_bytes: Some(limits.max_bytes),
    };

    // value_grounder.
    let t = scan.start(Node::ValueGrounder, Some(n));
    let grounded = ground::ground(ctx, adapter, &breaker, &full, &request_limits, &mut plan).await;
    if let Some(grounded) = grounded {
        scan.log(ground::NODE, Some(n), t, grounded.delta, &grounded.errors);
        warnings.extend(grounded.warnings);
        if !grounded.errors.is_empty() {
            out.errors = grounded.errors;
            return out;
        }
        out.plan = Some(plan.clone());
    }

    // generator.
    let t = scan.start(Node::SqlGenerator, Some(n));
    let generated = SqlGenerator::new(adapter.dialect())
        .with_schema(&full.contract)
        .with_row_limit(limits.row_limit)
        .generate(&plan);
    let sql = match generated {
        Ok(s) => s,
        Err(mut e) => {
            e.node = Node::SqlGenerator.into();
            scan.log_error(Node::SqlGenerator.as_str(), Some(n), t, &e);
            out.errors = vec![e];
            return out;
        }
    };
    scan.log(
        Node::SqlGenerator.as_str(),
        Some(n),
        t,
        json!({"sql_draft": sql}),
        &[],
    );
    out.sql = Some(sql.clone());

    // physical_validator.
    let t = scan.start(Node::PhysicalValidator, Some(n));
    let settings = PhysicalSettings {
        max_cost: options.max_cost,
        policy: Some(ctx.access.clone()),
        generated: true,
    };
    let physical = tokio::select! {
        biased;
        () = ctx.cancel.cancelled() => None,
        r = tokio::time::timeout(
            options.database_timeout,
            validate_physical(adapter, &breaker, &full.contract, &sql, &settings),
        ) => Some(r),
    };
    let physical = match physical {
        None => {
            out.errors = vec![cancelled(Node::PhysicalValidator.as_str())];
            return out;
        }
        Some(Err(_)) => {
            let e = PipelineError::new(
                Node::PhysicalValidator,
                ErrorCode::ExecutionTimeout,
                Severity::Error,
                format!("Datasource '{ds}' did not finish the dry run in time."),
            );
            scan.log_error(Node::PhysicalValidator.as_str(), Some(n), t, &e);
            out.errors = vec![e];
            return out;
        }
        Some(Ok(r)) => r,
    };
    scan.log(Node::PhysicalValidator.as_str(),
        Some(n),
        t,
        json!({"dry_run": physical.dry_run, "cost": physical.cost, "reasoning": physical.reasoning}),
        &physical.errors,
    );
    for f in physical.errors.iter().filter(|f| !f.is_blocking()) {
        warnings.push(f.message.clone());
    }
    if physical.is_blocking() {
        out.errors = blocking(&physical.errors);
        return out;
    }
    if !options.execute {
        out.done = true;
        return out;
    }

    // executor.
    let t = scan.start(Node::Executor, Some(n));
    let permit = match breaker.enter() {
        Ok(permit) => permit,
        Err(e) => {
            let e = e.to_pipeline_error(Node::Executor.as_str());
            scan.log_error(Node::Executor.as_str(), Some(n), t, &e);
            out.errors = vec![e];
            return out;
        }
    };
    // What runs is the guard's rendering of the statement physical validation approved.
    let Some(guarded) = physical.guarded.clone() else {
        let e = PipelineError::new(
            Node::Executor,
            ErrorCode::UnknownError,
            Severity::Error,
            "physical validation passed without a guarded statement",
        );
        scan.log_error(Node::Executor.as_str(), Some(n), t, &e);
        out.errors = vec![e];
        return out;
    };
    let frame: Option<Result<ResultFrame, _>> = tokio::select! {
        biased;
        () = ctx.cancel.cancelled() => None,
        r = tokio::time::timeout(
            options.database_timeout,
            adapter.execute_guarded(&guarded, &request_limits),
        ) => Some(r),
    };
    let frame = match frame {
        None => {
            out.errors = vec![cancelled(Node::Executor.as_str())];
            return out;
        }
        Some(Err(_)) => {
            // A statement past the deadline counts against the datasource, as the
            // adapters' own timeouts do.
            permit.failure();
            let e = PipelineError::new(
                Node::Executor,
                ErrorCode::ExecutionTimeout,
                Severity::Error,
                format!("Datasource '{ds}' did not finish the query in time."),
            );
            scan.log_error(Node::Executor.as_str(), Some(n), t, &e);
            out.errors = vec![e];
            return out;
        }
        Some(Ok(f)) => f,
    };
    permit.settle(frame.error.as_ref());
    ctx.audit(
        "sql_executed",
        json!({
            "datasource_id": ds,
            "sql_sha256": sha256_hex(guarded.as_str().as_bytes()),
            "row_count": frame.row_count,
            "truncated": frame.truncated,
            "duration_ms": millis(t.1.elapsed()),
            "success": frame.success,
            "error": frame.error.as_ref().map(|e| e.to_pipeline_error(Node::Executor.as_str()).code.as_str()),
        }),
    );
    if !frame.success {
        let e = match &frame.error {
            Some(err) => err.to_pipeline_error(Node::Executor.as_str()),
            None => PipelineError::new(
                Node::Executor,
                ErrorCode::ExecutionFailed,
                Severity::Error,
                "SQL execution failed.",
            ),
        };
        scan.log(
            Node::Executor.as_str(),
            Some(n),
            t,
            json!({"sql": sql}),
            std::slice::from_ref(&e),
        );
        out.errors = vec![e];
        return out;
    }
    if frame.truncated {
        warnings.push(format!(
            "The result of sub-query {} was truncated at {} rows.",
            scan.sq.id, frame.row_count
        ));
    }
    let schema_ref = frame
        .schema
        .clone()
        .or_else(|| frame.batches.first().map(|b| b.schema()))
        .unwrap_or_else(|| Arc::new(Schema::empty()));
    let meta = ArtifactMeta {
        tenant_id: ctx.tenant.clone(),
        request_id: ctx.trace_id.clone(),
        subgraph_name: "sql_agent".to_owned(),
        dag_node_id: scan.sq.id.clone(),
        schema_version: Some(schema.schema_version.clone()),
    };
    let written = tokio::select! {
        biased;
        () = ctx.cancel.cancelled() => None,
        r = ctx.shared.artifacts.write(&meta, schema_ref, &frame.batches) => Some(r),
    };
    let artifact = match written {
        None => {
            out.errors = vec![cancelled(Node::Executor.as_str())];
            return out;
        }
        Some(Err(mut e)) => {
            // The statement ran but its result cannot be kept (a full disk, a store that
            // refuses the write): not retried, and said as the store said it.
            e.node = Node::Executor.into();
            e.code = ErrorCode::ExecutionFailed;
            e.severity = Severity::Critical;
            e.message = format!("the result could not be stored: {}", e.message);
            scan.log_error(Node::Executor.as_str(), Some(n), t, &e);
            out.errors = vec![e];
            return out;
        }
        Some(Ok(a)) => a,
    };
    scan.log(
        Node::Executor.as_str(),
        Some(n),
        t,
        json!({
            "artifact": artifact,
            "metrics": {"row_count": frame.row_count, "bytes_returned": frame.bytes},
        }),
        &[],
    );
    out.row_count = Some(frame.row_count);
    out.artifact = Some(artifact);
    out.done = true;
    out
}

/// Whether an attempt that failed with `errors` is worth another: every error retryable,
/// and, for a planner that ignores feedback (it would write the same plan again), every
/// error a passing fault (a timeout, a crash, an unavailable database).
fn worth_retrying(errors: &[PipelineError], ignores_feedback: bool) -> bool {
    errors.iter().all(PipelineError::is_retryable)
        && (!ignores_feedback || errors.iter().all(|e| e.code.is_transient()))
}

#[cfg(test)]
mod tests {
    use nl2sql_state::{ErrorCode, PipelineError, Severity};

    use super::worth_retrying;

    #[test]
    fn a_planner_that_ignores_feedback_is_retried_only_for_passing_faults() {
        let e = |code| PipelineError::new("n", code, Severity::Error, "m");
        let plan_fault = [e(ErrorCode::ValueNotFound)];
        let passing = [e(ErrorCode::ExecutionTimeout), e(ErrorCode::ValidatorCrash)];
        let mixed = [e(ErrorCode::ExecutionTimeout), e(ErrorCode::ColumnNotFound)];
        assert!(worth_retrying(&plan_fault, false));
        assert!(!worth_retrying(&plan_fault, true));
        assert!(worth_retrying(&passing, true));
        assert!(!worth_retrying(&mixed, true));
        assert!(worth_retrying(&mixed, false));
        // Fatal codes are never retried, whoever plans.
        let fatal = [e(ErrorCode::AmbiguousQuestion)];
        assert!(!worth_retrying(&fatal, false));
        let critical = [PipelineError::new(
            "n",
            ErrorCode::ExecutionTimeout,
            Severity::Critical,
            "m",
        )];
        assert!(!worth_retrying(&critical, true));
    }
}
