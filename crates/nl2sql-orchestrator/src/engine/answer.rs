//! `answer_synthesizer` (pipeline.md §2.6): the short answer.

use std::sync::Arc;

use nl2sql_planner::{AnswerRequest, Step, TerminalResult};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::{Node, PipelineError, ScanStatus};
use serde_json::json;

use super::ctx::RunCtx;
use super::state::State;

/// `answer_synthesizer` (pipeline.md §2.6): the planner's answer, falling back to the
/// offline template when it fails; explain-only when there is no result.
pub(super) async fn answer_synthesizer(ctx: &RunCtx, st: &mut State) {
    let t = ctx.start(Node::AnswerSynthesizer.as_str(), None, None);
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
