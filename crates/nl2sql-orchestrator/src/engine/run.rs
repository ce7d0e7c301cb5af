//! One run of the main graph: resolver, decomposer, global planner, layer router,
//! aggregator and answer synthesizer, raced against cancellation and the global deadline.

use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use nl2sql_planner::AnswerRequest;
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::{
    AccessPolicy, ErrorCode, Node, PipelineError, RunStatus, ScanStatus, Severity, SplitMix64,
    TraceId,
};
use serde_json::json;
use tracing::Instrument as _;

use super::aggregate::aggregator;
use super::answer::answer_synthesizer;
use super::ctx::RunCtx;
use super::decompose::{decomposer, global_planner};
use super::layers::layer_router;
use super::options::AskOptions;
use super::resolve::{intent_guard, resolver};
use super::result::RunResult;
use super::runlog::{RunLog, millis};
use super::state::State;
use super::{Shared, cancelled};

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
    let (log, log_warning) = RunLog::open(shared.data_dir.as_deref(), &trace, opts.events.clone());
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
