//! Progressive validation of decomposer output (spec: validators.md §1, seed 004, GAP-22):
//! cheap to expensive, stopping at the first level with findings.
//!
//! 1. **Syntactic**: JSON, types, required keys, enums, unknown keys, limits, with the JSON
//!    path of the offending element.
//! 2. **Static**: ids unique, references resolve, combine arity, roles and join keys, filter
//!    values, op parameters, the semantic-only rule; then normalisation and DAG
//!    construction (cycles, unknown endpoints).
//! 3. **Data flow**: walking the DAG layer by layer, every attribute a combine or post op
//!    reads is produced by its inputs, and schemas are consistent.
//!
//! Every finding is `INVALID_PLAN_STRUCTURE` (severity ERROR, retryable) and names the node
//! and key with a hint a model can act on. The entry point is [`validate_decomposition`].

mod flow;
mod static_checks;

#[cfg(test)]
mod tests;

use std::fmt::Write as _;

use nl2sql_plan::{DatasourceResolution, ExecutionDag, Normalized, normalize, parse_decomposition};
use nl2sql_state::{ErrorCode, Node, PipelineError, Severity};
use serde::Serialize;

/// Hint of level 1 findings.
const SYNTACTIC_HINT: &str = "Return JSON that matches the DecomposerResponse schema exactly.";

/// The three levels, cheapest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(into = "u8")]
pub enum ValidationLevel {
    /// JSON and types.
    Syntactic,
    /// References, ids, roles, the semantic-only rule.
    Static,
    /// Columns available at each DAG node.
    DataFlow,
}

impl From<ValidationLevel> for u8 {
    fn from(level: ValidationLevel) -> u8 {
        match level {
            ValidationLevel::Syntactic => 1,
            ValidationLevel::Static => 2,
            ValidationLevel::DataFlow => 3,
        }
    }
}

impl ValidationLevel {
    /// `syntactic`, `static` or `data flow`.
    pub fn as_str(self) -> &'static str {
        match self {
            ValidationLevel::Syntactic => "syntactic",
            ValidationLevel::Static => "static",
            ValidationLevel::DataFlow => "data flow",
        }
    }
}

/// One finding of progressive validation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DecompositionFinding {
    /// Always `INVALID_PLAN_STRUCTURE`.
    pub code: ErrorCode,
    /// Always `ERROR`.
    pub severity: Severity,
    /// What is wrong, naming the element.
    pub message: String,
    /// The DAG node (or the model's sub-query id, or `combine_<group>`) at fault.
    pub node_id: Option<String>,
    /// JSON path in the decomposer's document.
    pub path: Option<String>,
    /// The missing or offending key (attribute or id).
    pub key: Option<String>,
    /// What a model should do about it.
    pub hint: String,
}

impl DecompositionFinding {
    pub(crate) fn new(message: String, hint: &str) -> Self {
        DecompositionFinding {
            code: ErrorCode::InvalidPlanStructure,
            severity: Severity::Error,
            message,
            node_id: None,
            path: None,
            key: None,
            hint: hint.to_owned(),
        }
    }

    pub(crate) fn node(mut self, node_id: impl Into<String>) -> Self {
        self.node_id = Some(node_id.into());
        self
    }

    pub(crate) fn path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    pub(crate) fn key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The finding as a `PipelineError` from the `decomposer` node, details holding node,
    /// path, key and hint.
    pub fn to_pipeline_error(&self) -> PipelineError {
        PipelineError::new(
            Node::Decomposer,
            self.code,
            self.severity,
            self.message.clone(),
        )
        .with_details(serde_json::json!({
            "node_id": self.node_id,
            "path": self.path,
            "key": self.key,
            "hint": self.hint,
        }))
    }
}

/// The verdict of progressive validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DecompositionStatus {
    /// Valid: the DAG may run.
    Ok,
    /// Findings a model can fix: re-prompt the decomposer.
    Rewrite,
}

/// The result of [`validate_decomposition`].
#[derive(Debug, Clone, PartialEq)]
pub struct DecompositionReport {
    /// `ok` when there are no findings.
    pub status: DecompositionStatus,
    /// The level that failed, or `DataFlow` when all passed.
    pub level: ValidationLevel,
    /// The findings of that level.
    pub findings: Vec<DecompositionFinding>,
    /// What normalisation dropped (severity WARNING); never blocking.
    pub warnings: Vec<PipelineError>,
    /// The normalised response, once level 2 passed.
    pub normalized: Option<Normalized>,
    /// The DAG, when every level passed.
    pub dag: Option<ExecutionDag>,
}

impl DecompositionReport {
    fn failed(level: ValidationLevel, findings: Vec<DecompositionFinding>) -> Self {
        DecompositionReport {
            status: DecompositionStatus::Rewrite,
            level,
            findings,
            warnings: Vec::new(),
            normalized: None,
            dag: None,
        }
    }

    /// True when the DAG may run.
    pub fn is_ok(&self) -> bool {
        self.status == DecompositionStatus::Ok
    }

    /// One text block for the decomposer's re-prompt; `None` when ok.
    pub fn feedback(&self) -> Option<String> {
        if self.is_ok() {
            return None;
        }
        let mut text = format!(
            "Decomposition validation failed at level {} ({}):",
            u8::from(self.level),
            self.level.as_str()
        );
        for f in &self.findings {
            let at = f
                .path
                .as_deref()
                .map(|p| format!(" at {p}"))
                .unwrap_or_default();
            let _ = write!(text, "\n- {}{at}. Hint: {}", f.message, f.hint);
        }
        Some(text)
    }

    /// The report as the validators' JSON envelope:
    /// `{"status", "level", "issues", "warnings", "feedback", "dag_id"}`.
    pub fn to_json(&self) -> serde_json::Value {
        let warnings: Vec<serde_json::Value> = self
            .warnings
            .iter()
            .map(|w| {
                serde_json::json!({
                    "code": w.code,
                    "severity": w.severity,
                    "message": w.message,
                })
            })
            .collect();
        serde_json::json!({
            "status": self.status,
            "level": self.level,
            "issues": self.findings,
            "warnings": warnings,
            "feedback": self.feedback(),
            "dag_id": self.dag.as_ref().and_then(|d| d.dag_id.clone()),
        })
    }
}

/// Validates a DecomposerResponse document level by level and, when it is valid, plans
/// its DAG. Never fails: every problem is a finding in the report.
pub fn validate_decomposition(
    json: &str,
    resolution: &DatasourceResolution,
) -> DecompositionReport {
    let response = match parse_decomposition(json) {
        Ok(r) => r,
        Err(e) => {
            let finding = DecompositionFinding::new(
                format!("the document does not parse: {}", e.reason),
                SYNTACTIC_HINT,
            )
            .path(e.path);
            return DecompositionReport::failed(ValidationLevel::Syntactic, vec![finding]);
        }
    };
    let findings = static_checks::check(&response);
    if !findings.is_empty() {
        return DecompositionReport::failed(ValidationLevel::Static, findings);
    }
    let normalized = normalize(&response, resolution);
    let planned = match ExecutionDag::plan(&normalized.response) {
        Ok(p) => p,
        Err(e) => {
            let finding = DecompositionFinding::new(e.message, static_checks::PLANNER_HINT);
            let mut report = DecompositionReport::failed(ValidationLevel::Static, vec![finding]);
            report.warnings = normalized.warnings.clone();
            report.normalized = Some(normalized);
            return report;
        }
    };
    let findings = flow::findings(&response, &normalized, &planned.flow_issues);
    let ok = findings.is_empty();
    DecompositionReport {
        status: if ok {
            DecompositionStatus::Ok
        } else {
            DecompositionStatus::Rewrite
        },
        level: ValidationLevel::DataFlow,
        findings,
        warnings: normalized.warnings.clone(),
        normalized: Some(normalized),
        dag: ok.then_some(planned.dag),
    }
}
