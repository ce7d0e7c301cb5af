//! `decomposer` and `global_planner` (pipeline.md §2.2–2.3): sub-queries, validated
//! level by level, and the `ExecutionDag` built from them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use nl2sql_plan::{DecomposerResponse, ExecutionDag, SubQuery};
use nl2sql_planner::{DecomposeRequest, Step};
use nl2sql_state::{ErrorCode, Node, PipelineError, ScanStatus, Severity};
use nl2sql_validate::validate_decomposition;
use serde_json::{Value, json};

use super::ctx::RunCtx;
use super::resolve::Resolved;
use super::result::SubQueryReport;
use super::runlog::millis;
use super::state::State;

/// The decomposer's validated output.
pub(super) struct Decomposed {
    pub(super) response: DecomposerResponse,
    pub(super) dag: ExecutionDag,
}

/// `decomposer` (pipeline.md §2.2): decompose, validate progressively, re-prompt with the
/// findings, then `PLANNING_FAILURE`.
pub(super) async fn decomposer(ctx: &RunCtx, res: &Resolved, st: &mut State) -> Option<Decomposed> {
    const NODE: &str = Node::Decomposer.as_str();
    let t0 = Instant::now();
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
pub(super) fn global_planner(
    ctx: &RunCtx,
    d: Decomposed,
    st: &mut State,
) -> Option<(ExecutionDag, BTreeMap<String, SubQuery>)> {
    let t = ctx.start(Node::Decomposer.as_str(), None, None);
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
