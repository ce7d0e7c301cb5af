//! The run's state as the pipeline's stages grow it (kept outside the raced future so
//! that a cancelled or timed-out run still reports what it had).

use std::collections::BTreeMap;

use nl2sql_plan::ExecutionDag;
use nl2sql_planner::FinalAnswer;
use nl2sql_state::{ArtifactRef, PipelineError};
use serde_json::Value;

use super::result::{ErrorReport, SubQueryReport, TerminalTable};

/// The run's state as it grows (kept outside the raced future so that a cancelled or
/// timed-out run still reports what it had).
#[derive(Default)]
pub(super) struct State {
    pub(super) errors: Vec<ErrorReport>,
    pub(super) warnings: Vec<String>,
    pub(super) timings: BTreeMap<String, u64>,
    pub(super) unmapped: Vec<Value>,
    pub(super) unmapped_typed: Vec<nl2sql_plan::UnmappedSubQuery>,
    pub(super) dag: Option<ExecutionDag>,
    pub(super) subqueries: Vec<SubQueryReport>,
    pub(super) artifacts: BTreeMap<String, ArtifactRef>,
    pub(super) terminal: Vec<TerminalTable>,
    pub(super) aggregator_ran: bool,
    pub(super) answer: Option<FinalAnswer>,
    /// Run-level blocking errors (for the answer step).
    pub(super) blocking: Vec<PipelineError>,
}

impl State {
    pub(super) fn error(&mut self, e: &PipelineError) {
        self.errors.push(ErrorReport::of(e));
        if e.is_blocking() {
            self.blocking.push(e.clone());
        }
    }
}
