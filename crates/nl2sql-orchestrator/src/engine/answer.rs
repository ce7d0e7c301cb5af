//! `answer_synthesizer` (pipeline.md §2.6): the short answer.

use std::sync::Arc;

use nl2sql_planner::{AnswerRequest, Step};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::{GraphState, GraphStateDelta, Node, PipelineError, ScanStatus};
use serde_json::json;

use super::ctx::RunCtx;
use super::state::{answer_response, decomposed, run_blocking, subgraph_id, terminal_results};

/// What the answer synthesizer is asked: the question, the terminal results (at most
/// `max` rows each), the unmapped parts and the errors that blocked parts of the answer
/// (the main graph's, and the one that ended each failed scan).
pub(super) fn answer_request(ctx: &RunCtx, st: &GraphState, max: usize) -> AnswerRequest {
    let mut errors: Vec<PipelineError> = run_blocking(st);
    let (queries, unmapped) = decomposed(st);
    for sq in queries {
        if st.scan_status.get(&sq.id) == Some(&ScanStatus::Succeeded) {
            continue;
        }
        let scan = subgraph_id(&sq.id, &st.trace_id);
        if let Some(e) = st
            .errors
            .iter()
            .find(|e| e.subgraph_id.as_deref() == Some(scan.as_str()) && e.is_blocking())
        {
            errors.push(PipelineError::new(
                e.node.clone(),
                e.code,
                e.severity,
                format!(
                    "sub-query {} on datasource '{}': {}",
                    sq.id,
                    sq.datasource_id,
                    e.safe_message()
                ),
            ));
        }
    }
    AnswerRequest {
        question: ctx.question.clone(),
        results: terminal_results(st, max),
        unmapped,
        errors,
    }
}

/// `answer_synthesizer` (pipeline.md §2.6): the planner's answer, falling back to the
/// offline template when it fails; explain-only when there is no result. Its state delta:
/// the answer (and a warning when the fallback answered).
pub(super) async fn answer_synthesizer(ctx: &RunCtx, st: &GraphState) -> GraphStateDelta {
    const NODE: &str = Node::AnswerSynthesizer.as_str();
    let t = ctx.start(NODE, None, None);
    let request = answer_request(ctx, st, ctx.shared.options.answer_rows);
    let mut delta = GraphStateDelta::default();
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
            delta.warnings.push(nl2sql_state::WarningEntry {
                node: NODE.to_owned(),
                content: format!(
                    "Answer synthesis failed ({}); the offline answer is used.",
                    e.safe_message()
                ),
            });
            (OfflinePlanner::new().answer_sync(&request), vec![e])
        }
    };
    ctx.log_node(NODE, t, json!({"final_answer": answer}), &errs);
    delta.answer_synthesizer_response = Some(answer_response(&answer));
    delta
}
