//! Typed, serialisable requests and responses of the planner steps. They serialise to
//! canonical JSON so that a request can be hashed (the cassette keys on it) and logged.

use nl2sql_plan::{PlanModel, SubQuery, UnmappedSubQuery};
use nl2sql_state::{Dialect, PipelineError, SchemaSnapshot};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The model-driven steps, by their spec names (also the keys of per-step model
/// configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Question → DecomposerResponse.
    Decomposer,
    /// Sub-query → PlanModel.
    AstPlanner,
    /// Failed attempt → feedback.
    Refiner,
    /// Results → answer.
    AnswerSynthesizer,
}

impl Step {
    /// The pipeline node the step runs as.
    pub fn node(self) -> nl2sql_state::Node {
        match self {
            Step::Decomposer => nl2sql_state::Node::Decomposer,
            Step::AstPlanner => nl2sql_state::Node::AstPlanner,
            Step::Refiner => nl2sql_state::Node::Refiner,
            Step::AnswerSynthesizer => nl2sql_state::Node::AnswerSynthesizer,
        }
    }

    /// The step's name, its node's (`decomposer`, `ast_planner`, `refiner`,
    /// `answer_synthesizer`).
    pub fn as_str(self) -> &'static str {
        self.node().as_str()
    }
}

/// A datasource the caller may use, as the decomposer sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasourceInfo {
    /// Datasource id.
    pub id: String,
    /// What it holds.
    #[serde(default)]
    pub description: Option<String>,
    /// Business domains.
    #[serde(default)]
    pub domains: Vec<String>,
    /// Example questions it answers.
    #[serde(default)]
    pub examples: Vec<String>,
    /// The schema version the index holds.
    #[serde(default)]
    pub schema_version: Option<String>,
    /// Its schema snapshot (contract and metadata with statistics), when known. The offline
    /// planner links question words against it; LLM prompts show only the metadata above.
    #[serde(default)]
    pub snapshot: Option<SchemaSnapshot>,
}

/// Input of [`crate::Planner::decompose`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecomposeRequest {
    /// The user's question.
    pub question: String,
    /// The datasources the caller may use, in resolver order.
    pub datasources: Vec<DatasourceInfo>,
    /// Findings of the previous attempt (progressive validation), for a re-prompt.
    #[serde(default)]
    pub feedback: Option<String>,
    /// "Today" for relative dates (`YYYY-MM-DD`), so plans are reproducible.
    #[serde(default)]
    pub today: Option<String>,
}

/// Input of [`crate::Planner::plan`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanRequest {
    /// The user's whole question (context; the sub-query's intent is what to plan).
    pub question: String,
    /// The sub-query to plan.
    pub sub_query: SubQuery,
    /// The datasource's SQL dialect.
    pub dialect: Dialect,
    /// The relevant tables: a snapshot restricted to what retrieval found, with metadata
    /// (descriptions, statistics, sample values) where known.
    pub schema: SchemaSnapshot,
    /// The refiner's latest feedback and the blocking errors of the previous attempt.
    #[serde(default)]
    pub feedback: Option<String>,
    /// "Today" for relative dates (`YYYY-MM-DD`).
    #[serde(default)]
    pub today: Option<String>,
}

/// Input of [`crate::Planner::refine`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefineRequest {
    /// The attempt that failed.
    pub plan_request: PlanRequest,
    /// The plan that failed, if the planner produced one.
    #[serde(default)]
    pub failed_plan: Option<PlanModel>,
    /// The blocking errors of the latest attempt.
    pub errors: Vec<PipelineError>,
    /// Reasoning history as `[node]: content` lines.
    #[serde(default)]
    pub history: Vec<String>,
}

/// One terminal node's result, as the answer step sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TerminalResult {
    /// DAG node id.
    pub node_id: String,
    /// Column names.
    pub columns: Vec<String>,
    /// The first rows (at most 200), as JSON values per column.
    pub rows: Vec<Vec<Value>>,
    /// The node's total row count.
    pub total_rows: u64,
}

/// Input of [`crate::Planner::answer`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerRequest {
    /// The user's question.
    pub question: String,
    /// Terminal results, in DAG order.
    pub results: Vec<TerminalResult>,
    /// Parts of the question no datasource answered.
    #[serde(default)]
    pub unmapped: Vec<UnmappedSubQuery>,
    /// Errors of the run (for explain-only answers and partial results).
    #[serde(default)]
    pub errors: Vec<PipelineError>,
}

/// How the answer's content is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AnswerFormat {
    /// Narrative.
    Text,
    /// An enumeration.
    List,
    /// Structured records or comparisons.
    Table,
}

/// The final answer (spec: `answer_synthesizer_response.final_answer`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FinalAnswer {
    /// One or two sentences.
    pub summary: String,
    /// Layout of `content`.
    pub format_type: AnswerFormat,
    /// The answer in that layout.
    pub content: String,
    /// A user-facing warning per skipped part or error.
    #[serde(default)]
    pub warnings: Vec<String>,
}
