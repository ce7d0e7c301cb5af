//! `decomposer` and `global_planner` (pipeline.md §2.2–2.3): sub-queries, validated
//! level by level, and the `ExecutionDag` built from them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use nl2sql_plan::{DecomposerResponse, ExecutionDag, SubQuery};
use nl2sql_planner::{DecomposeRequest, Step};
use nl2sql_state::{ErrorCode, GraphStateDelta, Node, PipelineError, ScanStatus, Severity};
use nl2sql_validate::validate_decomposition;
use serde_json::{Value, json};

use super::ctx::RunCtx;
use super::resolve::Resolved;
use super::runlog::millis;
use super::state::warnings_of;

/// The decomposer's validated output.
pub(super) struct Decomposed {
    pub(super) response: DecomposerResponse,
    pub(super) dag: ExecutionDag,
}

/// `decomposer` (pipeline.md §2.2): decompose, validate progressively, re-prompt with the
/// findings, then `PLANNING_FAILURE`. Its state delta (the normalised response, warnings,
/// timing, error) and the validated decomposition.
pub(super) async fn decomposer(
    ctx: &RunCtx,
    res: &Resolved,
) -> (GraphStateDelta, Option<Decomposed>) {
    const NODE: &str = Node::Decomposer.as_str();
    let t0 = Instant::now();
    let mut warnings = Vec::new();
    let mut error = None;
    let mut feedback: Option<String> = None;
    let tries = ctx.shared.options.decomposer_max_retries.saturating_add(1);
    let mut outcome = None;
    for attempt in 1..=tries {
        let t = ctx.start(Node::Decomposer.as_str(), None, Some(attempt));
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
                error = Some(e);
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
                error = Some(e);
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
        warnings.extend(report.warnings.iter().map(|w| w.message.clone()));
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
            error = Some(PipelineError::new(
                NODE,
                ErrorCode::PlanningFailure,
                Severity::Error,
                format!("The decomposition failed validation after {attempt} attempt(s): {text}"),
            ));
        }
    }
    let mut delta = GraphStateDelta::timing(NODE, millis(t0.elapsed()));
    delta.warnings = warnings_of(NODE, warnings);
    delta.errors.extend(error);
    delta.decomposer_response = outcome
        .as_ref()
        .and_then(|d| serde_json::to_value(&d.response).ok());
    (delta, outcome)
}

/// The DAG and its sub-queries by id.
pub(super) type Planned = (ExecutionDag, BTreeMap<String, SubQuery>);

/// `global_planner` (pipeline.md §2.3): the DAG validated with the decomposition. Its
/// state delta (the DAG, every scan pending, timing) and the DAG with its sub-queries,
/// when there is a scan to run.
pub(super) fn global_planner(ctx: &RunCtx, d: Decomposed) -> (GraphStateDelta, Option<Planned>) {
    let t = ctx.start(Node::Decomposer.as_str(), None, None);
    let dag = d.dag;
    ctx.log_node(
        "global_planner",
        t,
        json!({"dag_id": dag.dag_id, "layers": dag.layers}),
        &[],
    );
    let mut delta = GraphStateDelta::timing("global_planner", millis(t.1.elapsed()));
    let queries: BTreeMap<String, SubQuery> = d
        .response
        .sub_queries
        .into_iter()
        .map(|q| (q.id.clone(), q))
        .collect();
    delta.scan_status = queries
        .keys()
        .map(|id| (id.clone(), ScanStatus::Pending))
        .collect();
    delta.global_planner_response = serde_json::to_value(&dag).ok();
    if queries.is_empty() {
        return (delta, None);
    }
    (delta, Some((dag, queries)))
}
