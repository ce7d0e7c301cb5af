//! `layer_router` (pipeline.md §2.4): the DAG's scans, layer by layer.

use std::collections::BTreeMap;
use std::sync::Arc;

use nl2sql_plan::{ExecutionDag, SubQuery};
use nl2sql_state::{ErrorCode, Node, PipelineError, ScanStatus, Severity};
use serde_json::json;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tracing::Instrument as _;

use super::ctx::RunCtx;
use super::result::ErrorReport;
use super::scan::{ScanOutcome, run_scan};
use super::state::State;

/// `layer_router` (pipeline.md §2.4): each layer's pending scans, concurrently, at most
/// `max_parallel_scans` at a time; outcomes merged in node-id order.
pub(super) async fn layer_router(
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
        let t = ctx.start(Node::LayerRouter.as_str(), None, None);
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
