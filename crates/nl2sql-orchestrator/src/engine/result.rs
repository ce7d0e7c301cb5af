//! The outcome of one question (spec: pipeline.md §5): [`RunResult`] and its parts.

use std::collections::BTreeMap;

use nl2sql_plan::SubQuery;
use nl2sql_planner::FinalAnswer;
use nl2sql_state::{
    ArtifactRef, ErrorCode, GraphState, PipelineError, RunStatus, ScanStatus, Severity,
    SubgraphOutput,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One error of the run, as shown to the caller (the code's safe message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorReport {
    /// The stable code.
    pub code: ErrorCode,
    /// How serious it is.
    pub severity: Severity,
    /// The safe message.
    pub message: String,
    /// The node that emitted it (`decomposer`, `ast_planner`, `executor`, …).
    pub node: String,
    /// The scan (sub-query id) it belongs to, for errors of a scan.
    #[serde(default)]
    pub subquery_id: Option<String>,
    /// The datasource of that scan.
    #[serde(default)]
    pub datasource_id: Option<String>,
}

impl ErrorReport {
    /// The report of a run-level error.
    pub fn of(e: &PipelineError) -> Self {
        ErrorReport {
            code: e.code,
            severity: e.severity,
            message: e.safe_message().to_owned(),
            node: e.node.clone(),
            subquery_id: None,
            datasource_id: None,
        }
    }

    /// The report of an error of scan `subquery_id` on `datasource_id`.
    pub fn of_scan(e: &PipelineError, subquery_id: &str, datasource_id: &str) -> Self {
        ErrorReport {
            subquery_id: Some(subquery_id.to_owned()),
            datasource_id: Some(datasource_id.to_owned()),
            ..ErrorReport::of(e)
        }
    }

    /// True for ERROR and CRITICAL.
    pub fn is_blocking(&self) -> bool {
        self.severity.is_blocking()
    }
}

/// One planning attempt of a scan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptReport {
    /// 1-based.
    pub attempt: u32,
    /// The plan (PlanModel JSON), when the planner produced one.
    pub plan: Option<Value>,
    /// The generated SQL, when generation ran.
    pub sql: Option<String>,
    /// The blocking errors of this attempt (empty for the attempt that succeeded).
    pub errors: Vec<ErrorReport>,
    /// The feedback this attempt was planned with.
    pub feedback: Option<String>,
}

/// One scan (sub-query) of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubQueryReport {
    /// Sub-query id (the DAG's scan node id).
    pub id: String,
    /// Its datasource.
    pub datasource_id: String,
    /// What it asks.
    pub intent: String,
    /// `pending`, `running`, `succeeded`, `failed` or `cancelled`.
    pub status: ScanStatus,
    /// The last plan (PlanModel JSON).
    pub plan: Option<Value>,
    /// The last generated SQL.
    pub sql: Option<String>,
    /// Planning attempts made (1 + retries).
    pub attempts: u32,
    /// Rows returned, when it ran.
    pub row_count: Option<u64>,
    /// The result artifact, when it ran.
    pub artifact: Option<ArtifactRef>,
    /// Every attempt, in order.
    pub attempt_log: Vec<AttemptReport>,
}

/// One terminal node's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TerminalTable {
    /// DAG node id.
    pub node_id: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Rows, one JSON value per column.
    pub rows: Vec<Vec<Value>>,
    /// Total rows of the node.
    pub total_rows: u64,
}

/// What [`crate::Engine::ask`] returns; also the JSON of `ask --format json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The run id (also the run log's file name).
    pub trace_id: String,
    /// `succeeded`, `partial`, `failed`, `cancelled` or `timed_out`.
    pub status: RunStatus,
    /// `status == succeeded`.
    pub success: bool,
    /// The final answer (also for failed runs: it explains what went wrong).
    pub answer: Option<FinalAnswer>,
    /// Columns of the first terminal result.
    pub columns: Option<Vec<String>>,
    /// Rows of the first terminal result.
    pub rows: Option<Vec<Vec<Value>>>,
    /// Every terminal result, in DAG order.
    pub terminal_results: Vec<TerminalTable>,
    /// The scans.
    pub subqueries: Vec<SubQueryReport>,
    /// Parts of the question no datasource answers (JSON of `UnmappedSubQuery`).
    pub unmapped: Vec<Value>,
    /// The ExecutionDag (JSON), when one was planned.
    pub dag: Option<Value>,
    /// Errors that shaped the outcome. Errors of earlier attempts of a scan that then
    /// succeeded are only in that scan's `attempt_log`.
    pub errors: Vec<ErrorReport>,
    /// Warnings (never blocking).
    pub warnings: Vec<String>,
    /// Milliseconds per stage (`datasource_resolver`, `decomposer`, `global_planner`,
    /// `layer_router`, `aggregator`, `answer_synthesizer`) and `total`.
    pub timings: BTreeMap<String, u64>,
}

impl RunResult {
    /// The errors with `code`.
    pub fn errors_with(&self, code: ErrorCode) -> Vec<&ErrorReport> {
        self.errors.iter().filter(|e| e.code == code).collect()
    }

    /// The scan with id `id`.
    pub fn subquery(&self, id: &str) -> Option<&SubQueryReport> {
        self.subqueries.iter().find(|s| s.id == id)
    }
}

impl RunResult {
    /// The result of a run, read from its final state (`status` set).
    pub(super) fn from_state(mut st: GraphState) -> RunResult {
        let (queries, unmapped) = super::state::decomposed(&st);
        // Scan ids → (sub-query id, datasource id), to report a scan's errors with it.
        let scans: BTreeMap<String, (&str, &str)> = queries
            .iter()
            .map(|q| {
                (
                    super::state::subgraph_id(&q.id, &st.trace_id),
                    (q.id.as_str(), q.datasource_id.as_str()),
                )
            })
            .collect();
        let report = |e: &PipelineError| match e.subgraph_id.as_deref().and_then(|id| scans.get(id))
        {
            Some((id, ds)) => ErrorReport::of_scan(e, id, ds),
            None => ErrorReport::of(e),
        };
        let errors: Vec<ErrorReport> = st.errors.iter().map(report).collect();
        let subqueries: Vec<SubQueryReport> = queries
            .iter()
            .map(|q| {
                let status = st
                    .scan_status
                    .get(&q.id)
                    .copied()
                    .unwrap_or(ScanStatus::Pending);
                let output = st
                    .subgraph_outputs
                    .get(&super::state::subgraph_id(&q.id, &st.trace_id));
                SubQueryReport::of(q, status, output)
            })
            .collect();
        let terminal: Vec<TerminalTable> = st
            .aggregator_response
            .take()
            .and_then(|mut v| v.get_mut("terminal_results").map(Value::take))
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        let answer = st
            .answer_synthesizer_response
            .take()
            .and_then(|mut v| v.get_mut("final_answer").map(Value::take))
            .and_then(|v| serde_json::from_value(v).ok());
        let unmapped = unmapped
            .iter()
            .filter_map(|u| serde_json::to_value(u).ok())
            .collect();
        let status = st.status.unwrap_or(RunStatus::Failed);
        let first = terminal.first();
        RunResult {
            trace_id: st.trace_id,
            status,
            success: status == RunStatus::Succeeded,
            answer,
            columns: first.map(|t| t.columns.clone()),
            rows: first.map(|t| t.rows.clone()),
            terminal_results: terminal,
            subqueries,
            unmapped,
            dag: st.global_planner_response,
            errors,
            warnings: st.warnings.into_iter().map(|w| w.content).collect(),
            timings: st.timings,
        }
    }
}

impl SubQueryReport {
    /// The report of sub-query `q`, from what its scan left in the state (if it ran).
    fn of(q: &SubQuery, status: ScanStatus, output: Option<&SubgraphOutput>) -> Self {
        let mut report = SubQueryReport {
            id: q.id.clone(),
            datasource_id: q.datasource_id.clone(),
            intent: q.intent.clone(),
            status,
            plan: None,
            sql: None,
            attempts: 0,
            row_count: None,
            artifact: None,
            attempt_log: Vec::new(),
        };
        if let Some(out) = output {
            report.plan.clone_from(&out.plan);
            report.sql.clone_from(&out.sql_draft);
            report.attempts = u32::try_from(out.attempts.len()).unwrap_or(u32::MAX);
            report.row_count = out.row_count;
            report.artifact.clone_from(&out.artifact);
            report.attempt_log = out
                .attempts
                .iter()
                .map(|a| AttemptReport {
                    attempt: a.attempt,
                    plan: a.plan.clone(),
                    sql: a.sql.clone(),
                    errors: a
                        .errors
                        .iter()
                        .map(|e| ErrorReport::of_scan(e, &q.id, &q.datasource_id))
                        .collect(),
                    feedback: a.feedback.clone(),
                })
                .collect();
        }
        report
    }
}
