//! One run of the main graph: resolver, decomposer, global planner, layer router,
//! aggregator and answer synthesizer, raced against cancellation and the global deadline.

use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use nl2sql_planner::AnswerRequest;
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::{
    AccessPolicy, ErrorCode, GraphState, GraphStateDelta, Node, PipelineError, RunStatus,
    ScanStatus, Severity, SplitMix64, TraceId,
};
use serde_json::json;
use tracing::Instrument as _;

use super::aggregate::aggregator;
use super::answer::answer_synthesizer;
use super::ctx::RunCtx;
use super::ctx::{Shared, cancelled};
use super::decompose::{Planned, decomposer, global_planner};
use super::layers::layer_router;
use super::options::AskOptions;
use super::resolve::{intent_guard, resolver};
use super::result::RunResult;
use super::runlog::{RunLog, iso8601, millis};
use super::state::{
    answer_response, decomposed, for_log, has_terminal, has_unmapped, merge, run_blocking,
};

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

/// [`run`] inside the run's span: the pipeline raced against cancellation and the global
/// deadline, on one [`GraphState`] that outlives the race; the result is read from it.
async fn run_in_span(
    ctx: Arc<RunCtx>,
    opts: &AskOptions,
    global_timeout: std::time::Duration,
    started: Instant,
    log_warning: Option<String>,
) -> RunResult {
    let cancel = ctx.cancel.clone();
    let mut st = GraphState::new(ctx.trace_id.clone(), ctx.question.clone(), ctx.user.clone());
    st.datasource_id.clone_from(&opts.datasource);
    st.started_at = Some(iso8601(SystemTime::now()));
    if let Some(w) = log_warning {
        merge(&mut st, GraphStateDelta::warning("run_log", w));
    }

    let stopped: Option<RunStatus> = tokio::select! {
        biased;
        () = cancel.cancelled() => Some(RunStatus::Cancelled),
        () = tokio::time::sleep(global_timeout) => Some(RunStatus::TimedOut),
        () = pipeline(&ctx, opts, &mut st) => None,
    };
    // A cancellation noticed only inside the pipeline (a planner call saw it and the
    // pipeline then ran to its end in the same poll) is still a cancellation.
    let stopped = stopped.or_else(|| cancel.is_cancelled().then_some(RunStatus::Cancelled));
    // Stop whatever is still running (scan tasks were aborted with their JoinSet).
    cancel.cancel();

    let status = match stopped {
        Some(s) => {
            stop(&ctx, &mut st, s, global_timeout);
            s
        }
        None => compute_status(&st, ctx.shared.options.execute),
    };
    let elapsed = millis(started.elapsed());
    let mut done = GraphStateDelta::timing("total", elapsed);
    done.status = Some(status);
    done.finished_at = Some(iso8601(SystemTime::now()));
    merge(&mut st, done);
    ctx.audit(
        "run_completed",
        json!({"status": status, "duration_ms": elapsed}),
    );
    tracing::info!(
        target: "nl2sql::run",
        status = status.as_str(),
        duration_ms = elapsed,
        errors = st.errors.len(),
        "run completed"
    );
    ctx.log.final_state(|| for_log(&mut st));
    RunResult::from_state(st)
}

/// A run stopped by cancellation or its deadline: unfinished scans are cancelled, the
/// error is kept, and the offline answer explains it when no answer was made.
fn stop(ctx: &RunCtx, st: &mut GraphState, status: RunStatus, global_timeout: std::time::Duration) {
    let e = match status {
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
    let mut delta = GraphStateDelta::error(e.clone());
    delta.scan_status = st
        .scan_status
        .iter()
        .filter(|(_, s)| matches!(s, ScanStatus::Pending | ScanStatus::Running))
        .map(|(id, _)| (id.clone(), ScanStatus::Cancelled))
        .collect();
    merge(st, delta);
    if st.answer_synthesizer_response.is_none() {
        let request = AnswerRequest {
            question: ctx.question.clone(),
            results: Vec::new(),
            unmapped: decomposed(st).1,
            errors: run_blocking(st),
        };
        let answer = OfflinePlanner::new().answer_sync(&request);
        merge(
            st,
            GraphStateDelta {
                answer_synthesizer_response: Some(answer_response(&answer)),
                ..GraphStateDelta::default()
            },
        );
    }
    ctx.log_node(
        "orchestrator",
        (SystemTime::now(), Instant::now()),
        json!({"status": status}),
        &[e],
    );
}

/// `succeeded | partial | failed` for a run that finished (pipeline.md §5).
fn compute_status(st: &GraphState, execute: bool) -> RunStatus {
    let scan_failed = st.scan_status.values().any(|s| *s != ScanStatus::Succeeded);
    let unmapped = has_unmapped(st);
    if execute {
        if !has_terminal(st) {
            return RunStatus::Failed;
        }
        let aggregator_errors = st.errors.iter().any(|e| e.node == Node::Aggregator);
        if scan_failed || aggregator_errors || unmapped {
            return RunStatus::Partial;
        }
        RunStatus::Succeeded
    } else {
        let any_ok = st.scan_status.values().any(|s| *s == ScanStatus::Succeeded);
        if st.scan_status.is_empty() || !any_ok {
            RunStatus::Failed
        } else if scan_failed || unmapped {
            RunStatus::Partial
        } else {
            RunStatus::Succeeded
        }
    }
}

/// The main graph, top to bottom: intent guard → datasource resolver → decomposer →
/// global planner → layer router (the scans) → aggregator → answer synthesizer. Each
/// stage returns its delta, merged here; every exit path goes through the answer
/// synthesizer.
async fn pipeline(ctx: &Arc<RunCtx>, opts: &AskOptions, st: &mut GraphState) {
    if let Some(planned) = plan(ctx, opts, st).await {
        let (dag, sub_queries) = planned;
        let t = Instant::now();
        layer_router(ctx, &dag, &sub_queries, st).await;
        merge(
            st,
            GraphStateDelta::timing(Node::LayerRouter.as_str(), millis(t.elapsed())),
        );
        if ctx.shared.options.execute {
            let t = Instant::now();
            let mut delta = aggregator(ctx, &dag, st).await;
            delta
                .timings
                .insert(Node::Aggregator.into(), millis(t.elapsed()));
            merge(st, delta);
        }
    }
    let t = Instant::now();
    let mut delta = answer_synthesizer(ctx, st).await;
    delta
        .timings
        .insert(Node::AnswerSynthesizer.into(), millis(t.elapsed()));
    merge(st, delta);
}

/// The stages before the scans; the DAG and its sub-queries when there is a scan to run.
async fn plan(ctx: &Arc<RunCtx>, opts: &AskOptions, st: &mut GraphState) -> Option<Planned> {
    if let Some(e) = intent_guard(ctx) {
        merge(st, GraphStateDelta::error(e));
        return None;
    }
    let (delta, resolved) = resolver(ctx, opts);
    merge(st, delta);
    let (delta, decomposed) = decomposer(ctx, &resolved?).await;
    merge(st, delta);
    let (delta, planned) = global_planner(ctx, decomposed?);
    merge(st, delta);
    planned
}
