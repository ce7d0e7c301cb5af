//! Pipeline state and its reducers (spec: graph-state.md).
//!
//! Nodes never mutate state: each returns a delta that the orchestrator merges with the
//! field's reducer — lists append, maps merge, responses replace, identity fields are set
//! once. Parallel scan deltas are merged in ascending node-id order, so the final state
//! does not depend on scheduling. Response types owned by later crates (decomposition,
//! plans, aggregation) are held as opaque JSON values here.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::context::UserContext;
use crate::error::{ErrorCode, PipelineError, Severity};

/// The content of a reasoning entry: one line or several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ReasoningContent {
    /// One line.
    Text(String),
    /// Several lines.
    Lines(Vec<String>),
}

/// Kind of a reasoning entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningKind {
    /// A warning.
    Warning,
    /// An error.
    Error,
}

/// A human-readable trace line; never parsed by code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasoningEntry {
    /// Emitting node.
    pub node: String,
    /// Text.
    pub content: ReasoningContent,
    /// Kind, when not plain information.
    #[serde(rename = "type", default)]
    pub kind: Option<ReasoningKind>,
}

/// A warning line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarningEntry {
    /// Emitting node.
    pub node: String,
    /// Text.
    pub content: String,
}

/// Status of one scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScanStatus {
    /// Not started.
    Pending,
    /// Running.
    Running,
    /// Finished with an artifact.
    Succeeded,
    /// Finished without one; final.
    Failed,
    /// Cancelled.
    Cancelled,
}

/// Status of a run, computed from its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every part answered.
    Succeeded,
    /// Some parts answered.
    Partial,
    /// Nothing answered.
    Failed,
    /// Cancelled.
    Cancelled,
    /// The global deadline passed.
    TimedOut,
}

impl RunStatus {
    /// The serialised spelling (`succeeded`, `partial`, `failed`, `cancelled`, `timed_out`).
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Succeeded => "succeeded",
            RunStatus::Partial => "partial",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
            RunStatus::TimedOut => "timed_out",
        }
    }
}

/// Where a scan's result is stored (spec: storage.md §1.1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactRef {
    /// Location (`file:///…`, `s3://…`, `abfs://…`).
    pub uri: String,
    /// Where it is stored: `local`, `s3`, `adls`, `gcs` or `memory`.
    pub backend: String,
    /// Always `parquet`.
    pub format: String,
    /// Rows in the object.
    pub row_count: u64,
    /// Column names in order.
    pub columns: Vec<String>,
    /// Stored size.
    pub bytes: u64,
    /// SHA-256 of the bytes.
    pub content_hash: String,
    /// UTC ISO-8601.
    pub created_at: String,
    /// Schema version the scan ran against.
    #[serde(default)]
    pub schema_version: Option<String>,
    /// Path template used.
    pub path_template: String,
}

/// What a scan leaves in the main state (spec: graph-state.md §4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubgraphOutput {
    /// The sub-query (opaque here; typed in nl2sql-plan).
    #[serde(default)]
    pub sub_query: Option<Value>,
    /// `{subgraph_name}:{node_id}:{trace_id}`.
    pub subgraph_id: String,
    /// E.g. `sql_agent`.
    #[serde(default)]
    pub subgraph_name: Option<String>,
    /// Retries used.
    #[serde(default)]
    pub retry_count: u32,
    /// Last plan (opaque here; typed in nl2sql-plan).
    #[serde(default)]
    pub plan: Option<Value>,
    /// Last generated SQL.
    #[serde(default)]
    pub sql_draft: Option<String>,
    /// The artifact, on success.
    #[serde(default)]
    pub artifact: Option<ArtifactRef>,
    /// Rows the scan returned, when it ran (Rust addition).
    #[serde(default)]
    pub row_count: Option<u64>,
    /// Every planning attempt, in order (Rust addition).
    #[serde(default)]
    pub attempts: Vec<Attempt>,
    /// Every error of the scan: its attempts' and the one that ended it.
    #[serde(default)]
    pub errors: Vec<PipelineError>,
    /// Reasoning of the scan.
    #[serde(default)]
    pub reasoning: Vec<ReasoningEntry>,
    /// `succeeded`, `failed` or `cancelled`.
    pub status: ScanStatus,
}

/// The main graph's state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphState {
    /// Run id (set once).
    pub trace_id: String,
    /// The question (set once).
    pub user_query: String,
    /// The caller (set once).
    #[serde(default)]
    pub user_context: UserContext,
    /// Explicit datasource override (set once).
    #[serde(default)]
    pub datasource_id: Option<String>,
    /// Resolver response (opaque here).
    #[serde(default)]
    pub datasource_resolver_response: Option<Value>,
    /// Decomposer response (opaque here; typed in nl2sql-plan).
    #[serde(default)]
    pub decomposer_response: Option<Value>,
    /// Global planner response (opaque here; typed in nl2sql-plan).
    #[serde(default)]
    pub global_planner_response: Option<Value>,
    /// Aggregator response (opaque here).
    #[serde(default)]
    pub aggregator_response: Option<Value>,
    /// Answer synthesizer response (opaque here).
    #[serde(default)]
    pub answer_synthesizer_response: Option<Value>,
    /// Artifacts by DAG node id (map merge).
    #[serde(default)]
    pub artifact_refs: BTreeMap<String, ArtifactRef>,
    /// Scan outputs by sub-graph id (map merge).
    #[serde(default)]
    pub subgraph_outputs: BTreeMap<String, SubgraphOutput>,
    /// Scan status by node id (map merge).
    #[serde(default)]
    pub scan_status: BTreeMap<String, ScanStatus>,
    /// Errors (append).
    #[serde(default)]
    pub errors: Vec<PipelineError>,
    /// Reasoning (append).
    #[serde(default)]
    pub reasoning: Vec<ReasoningEntry>,
    /// Warnings (append).
    #[serde(default)]
    pub warnings: Vec<WarningEntry>,
    /// Scan dispatch payload only.
    #[serde(default)]
    pub subgraph_id: Option<String>,
    /// Scan dispatch payload only.
    #[serde(default)]
    pub subgraph_name: Option<String>,
    /// Run status, set by the orchestrator.
    #[serde(default)]
    pub status: Option<RunStatus>,
    /// UTC ISO-8601.
    #[serde(default)]
    pub started_at: Option<String>,
    /// UTC ISO-8601.
    #[serde(default)]
    pub finished_at: Option<String>,
    /// Milliseconds per stage and `total` (map merge; Rust addition).
    #[serde(default)]
    pub timings: BTreeMap<String, u64>,
}

/// A node's change to [`GraphState`]; absent fields leave the state unchanged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GraphStateDelta {
    /// Set once.
    #[serde(default)]
    pub trace_id: Option<String>,
    /// Set once.
    #[serde(default)]
    pub user_query: Option<String>,
    /// Set once.
    #[serde(default)]
    pub user_context: Option<UserContext>,
    /// Set once.
    #[serde(default)]
    pub datasource_id: Option<String>,
    /// Replace.
    #[serde(default)]
    pub datasource_resolver_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub decomposer_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub global_planner_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub aggregator_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub answer_synthesizer_response: Option<Value>,
    /// Map merge.
    #[serde(default)]
    pub artifact_refs: BTreeMap<String, ArtifactRef>,
    /// Map merge.
    #[serde(default)]
    pub subgraph_outputs: BTreeMap<String, SubgraphOutput>,
    /// Map merge.
    #[serde(default)]
    pub scan_status: BTreeMap<String, ScanStatus>,
    /// Append.
    #[serde(default)]
    pub errors: Vec<PipelineError>,
    /// Append.
    #[serde(default)]
    pub reasoning: Vec<ReasoningEntry>,
    /// Append.
    #[serde(default)]
    pub warnings: Vec<WarningEntry>,
    /// Replace.
    #[serde(default)]
    pub status: Option<RunStatus>,
    /// Replace.
    #[serde(default)]
    pub started_at: Option<String>,
    /// Replace.
    #[serde(default)]
    pub finished_at: Option<String>,
    /// Map merge.
    #[serde(default)]
    pub timings: BTreeMap<String, u64>,
}

impl GraphStateDelta {
    /// A delta that appends one error.
    pub fn error(e: PipelineError) -> Self {
        GraphStateDelta {
            errors: vec![e],
            ..GraphStateDelta::default()
        }
    }

    /// A delta that appends one warning of `node`.
    pub fn warning(node: impl Into<String>, content: impl Into<String>) -> Self {
        GraphStateDelta {
            warnings: vec![WarningEntry {
                node: node.into(),
                content: content.into(),
            }],
            ..GraphStateDelta::default()
        }
    }

    /// A delta that records how long `stage` took.
    pub fn timing(stage: impl Into<String>, ms: u64) -> Self {
        GraphStateDelta {
            timings: BTreeMap::from([(stage.into(), ms)]),
            ..GraphStateDelta::default()
        }
    }
}

/// The set-once fields, checked before a delta changes anything.
#[derive(Clone)]
struct Identity {
    trace_id: String,
    user_query: String,
    user_context: UserContext,
    datasource_id: String,
}

impl Identity {
    fn of(state: &GraphState) -> Self {
        Identity {
            trace_id: state.trace_id.clone(),
            user_query: state.user_query.clone(),
            user_context: state.user_context.clone(),
            datasource_id: state.datasource_id.clone().unwrap_or_default(),
        }
    }

    /// Takes the delta's set-once writes; a second, different write is `INVALID_STATE`.
    fn take(&mut self, delta: &GraphStateDelta) -> Result<(), PipelineError> {
        set_once("trace_id", &mut self.trace_id, delta.trace_id.clone())?;
        set_once("user_query", &mut self.user_query, delta.user_query.clone())?;
        set_once(
            "user_context",
            &mut self.user_context,
            delta.user_context.clone(),
        )?;
        set_once(
            "datasource_id",
            &mut self.datasource_id,
            delta.datasource_id.clone(),
        )
    }
}

fn set_once<T: PartialEq + Clone + Default>(
    field: &str,
    current: &mut T,
    new: Option<T>,
) -> Result<(), PipelineError> {
    let Some(new) = new else { return Ok(()) };
    if *current != T::default() && *current != new {
        return Err(PipelineError::new(
            "orchestrator",
            ErrorCode::InvalidState,
            Severity::Error,
            format!("field '{field}' is set once and already holds a different value"),
        ));
    }
    *current = new;
    Ok(())
}

fn replace<T>(current: &mut Option<T>, new: Option<T>) {
    if new.is_some() {
        *current = new;
    }
}

impl GraphState {
    /// A fresh state for one question.
    pub fn new(
        trace_id: impl Into<String>,
        user_query: impl Into<String>,
        user_context: UserContext,
    ) -> Self {
        GraphState {
            trace_id: trace_id.into(),
            user_query: user_query.into(),
            user_context,
            ..GraphState::default()
        }
    }

    /// Merges one delta with each field's reducer. A second, different write to a
    /// set-once field is `INVALID_STATE`, and the state is left unchanged.
    pub fn apply(&mut self, delta: GraphStateDelta) -> Result<(), PipelineError> {
        Identity::of(self).take(&delta)?;
        self.merge_checked(delta);
        Ok(())
    }

    /// Merges a delta whose set-once writes were checked (no copy of the state).
    fn merge_checked(&mut self, delta: GraphStateDelta) {
        let GraphStateDelta {
            trace_id,
            user_query,
            user_context,
            datasource_id,
            datasource_resolver_response,
            decomposer_response,
            global_planner_response,
            aggregator_response,
            answer_synthesizer_response,
            artifact_refs,
            subgraph_outputs,
            scan_status,
            errors,
            reasoning,
            warnings,
            status,
            started_at,
            finished_at,
            timings,
        } = delta;
        if let Some(v) = trace_id {
            self.trace_id = v;
        }
        if let Some(v) = user_query {
            self.user_query = v;
        }
        if let Some(v) = user_context {
            self.user_context = v;
        }
        replace(&mut self.datasource_id, datasource_id);
        replace(
            &mut self.datasource_resolver_response,
            datasource_resolver_response,
        );
        replace(&mut self.decomposer_response, decomposer_response);
        replace(&mut self.global_planner_response, global_planner_response);
        replace(&mut self.aggregator_response, aggregator_response);
        replace(
            &mut self.answer_synthesizer_response,
            answer_synthesizer_response,
        );
        self.artifact_refs.extend(artifact_refs);
        self.subgraph_outputs.extend(subgraph_outputs);
        self.scan_status.extend(scan_status);
        self.errors.extend(errors);
        self.reasoning.extend(reasoning);
        self.warnings.extend(warnings);
        replace(&mut self.status, status);
        replace(&mut self.started_at, started_at);
        replace(&mut self.finished_at, finished_at);
        self.timings.extend(timings);
    }

    /// Merges the deltas of parallel branches (one per DAG node) in ascending node-id
    /// order, whatever order they finished in. Two branches writing the same map key is
    /// `INVALID_STATE`, and the state is left unchanged.
    pub fn merge_parallel(
        &mut self,
        mut deltas: Vec<(String, GraphStateDelta)>,
    ) -> Result<(), PipelineError> {
        deltas.sort_by(|a, b| a.0.cmp(&b.0));
        let mut seen: [std::collections::BTreeSet<&str>; 3] = Default::default();
        for (node, delta) in &deltas {
            let groups = [
                delta.artifact_refs.keys().collect::<Vec<_>>(),
                delta.subgraph_outputs.keys().collect(),
                delta.scan_status.keys().collect(),
            ];
            for (set, keys) in seen.iter_mut().zip(groups) {
                for key in keys {
                    if !set.insert(key.as_str()) {
                        return Err(duplicate_key(node, key));
                    }
                }
            }
        }
        let mut identity = Identity::of(self);
        for (_, delta) in &deltas {
            identity.take(delta)?;
        }
        for (_, delta) in deltas {
            self.merge_checked(delta);
        }
        Ok(())
    }
}

fn duplicate_key(node: &str, key: &str) -> PipelineError {
    PipelineError::new(
        "orchestrator",
        ErrorCode::InvalidState,
        Severity::Error,
        format!(
            "parallel branch '{node}' writes key '{key}', which another branch of the same layer also writes"
        ),
    )
}

/// One planning attempt of a scan (Rust addition).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// 1-based attempt number (as the run log's `attempt`).
    pub attempt: u32,
    /// The plan of the attempt (opaque here).
    #[serde(default)]
    pub plan: Option<Value>,
    /// SQL generated from it.
    #[serde(default)]
    pub sql: Option<String>,
    /// Errors of the attempt.
    #[serde(default)]
    pub errors: Vec<PipelineError>,
    /// The feedback the attempt was planned with.
    #[serde(default)]
    pub feedback: Option<String>,
}

/// The state of one SQL-agent run (spec: graph-state.md §3). Node responses are opaque
/// JSON here; they are typed by the crates that produce them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubgraphExecutionState {
    /// Run id.
    pub trace_id: String,
    /// The sub-query (opaque here).
    #[serde(default)]
    pub sub_query: Option<Value>,
    /// The caller.
    #[serde(default)]
    pub user_context: Option<UserContext>,
    /// Sub-graph run id.
    #[serde(default)]
    pub subgraph_id: Option<String>,
    /// Sub-graph name.
    #[serde(default)]
    pub subgraph_name: Option<String>,
    /// Schema context (replace).
    #[serde(default)]
    pub relevant_tables: Vec<Value>,
    /// Replace.
    #[serde(default)]
    pub ast_planner_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub logical_validator_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub physical_validator_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub generator_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub executor_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub refiner_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub retry_count: u32,
    /// Append.
    #[serde(default)]
    pub errors: Vec<PipelineError>,
    /// Append.
    #[serde(default)]
    pub reasoning: Vec<ReasoningEntry>,
    /// Append.
    #[serde(default)]
    pub warnings: Vec<WarningEntry>,
    /// Append.
    #[serde(default)]
    pub attempts: Vec<Attempt>,
}

/// A node's change to [`SubgraphExecutionState`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubgraphStateDelta {
    /// Replace (`None` leaves it; an empty list clears it only when `Some`).
    #[serde(default)]
    pub relevant_tables: Option<Vec<Value>>,
    /// Replace.
    #[serde(default)]
    pub ast_planner_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub logical_validator_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub physical_validator_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub generator_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub executor_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub refiner_response: Option<Value>,
    /// Replace.
    #[serde(default)]
    pub retry_count: Option<u32>,
    /// Append.
    #[serde(default)]
    pub errors: Vec<PipelineError>,
    /// Append.
    #[serde(default)]
    pub reasoning: Vec<ReasoningEntry>,
    /// Append.
    #[serde(default)]
    pub warnings: Vec<WarningEntry>,
    /// Append.
    #[serde(default)]
    pub attempts: Vec<Attempt>,
}

impl SubgraphExecutionState {
    /// Merges one delta with each field's reducer.
    pub fn apply(&mut self, delta: SubgraphStateDelta) {
        if let Some(tables) = delta.relevant_tables {
            self.relevant_tables = tables;
        }
        replace(&mut self.ast_planner_response, delta.ast_planner_response);
        replace(
            &mut self.logical_validator_response,
            delta.logical_validator_response,
        );
        replace(
            &mut self.physical_validator_response,
            delta.physical_validator_response,
        );
        replace(&mut self.generator_response, delta.generator_response);
        replace(&mut self.executor_response, delta.executor_response);
        replace(&mut self.refiner_response, delta.refiner_response);
        if let Some(n) = delta.retry_count {
            self.retry_count = n;
        }
        self.errors.extend(delta.errors);
        self.reasoning.extend(delta.reasoning);
        self.warnings.extend(delta.warnings);
        self.attempts.extend(delta.attempts);
    }
}
