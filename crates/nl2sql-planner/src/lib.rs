//! Planners: the four model-driven steps of the pipeline (decompose a question, write a
//! `PlanModel` for one scan, refine a failed plan from feedback, phrase the final answer)
//! behind one [`Planner`] trait (spec: pipeline.md §1), with the typed request and reply
//! of each step.
//!
//! This crate holds the contract and one wrapper; the planners are crates of their own:
//! - `nl2sql-planner-offline`: the deterministic planner, the embedded default (no
//!   network, no model);
//! - `nl2sql-planner-llm`: an OpenAI-compatible chat-completions client with structured
//!   output (steps without a model run on the offline planner);
//! - [`cassette`] (here): a record/replay wrapper around any planner.
//!
//! Every step takes a typed, serialisable request and returns a typed value or a
//! `PipelineError` (`PLANNING_FAILURE` for decompose and plan, `REFINER_FAILED` for refine,
//! `AGGREGATOR_FAILED` with node `answer_synthesizer` for answers).

pub mod cassette;
mod request;

pub use cassette::{CassetteError, CassetteMode, CassettePlanner, cassette_key, cassette_line};

pub use request::{
    AnswerFormat, AnswerRequest, DatasourceInfo, DecomposeRequest, FinalAnswer, PlanRequest,
    RefineRequest, Step, TerminalResult,
};

use async_trait::async_trait;
use nl2sql_plan::{DecomposerResponse, PlanModel};
use nl2sql_state::PipelineError;

/// The model-driven steps of the pipeline. Implementations are cheap to share
/// (`Send + Sync`) and never panic on bad model output: it becomes a `PipelineError`.
#[async_trait]
pub trait Planner: Send + Sync + std::fmt::Debug {
    /// A short name for logs and run records (`offline`, `llm:<model>`, `replay`).
    fn name(&self) -> String;

    /// Splits a question into sub-queries, one per datasource, and says how to combine
    /// them. The response is not yet normalised or validated: the caller does both.
    async fn decompose(
        &self,
        request: &DecomposeRequest,
    ) -> Result<DecomposerResponse, PipelineError>;

    /// Writes the typed plan of one sub-query over its relevant tables.
    async fn plan(&self, request: &PlanRequest) -> Result<PlanModel, PipelineError>;

    /// Turns a failed attempt into short, actionable feedback for the next `plan` call.
    async fn refine(&self, request: &RefineRequest) -> Result<String, PipelineError>;

    /// Phrases the final answer from the terminal results.
    async fn answer(&self, request: &AnswerRequest) -> Result<FinalAnswer, PipelineError>;

    /// True when [`Planner::plan`] ignores the refiner's feedback, so a re-plan writes the
    /// same plan again: the engine then retries an attempt only when every error was a
    /// passing fault (`ErrorCode::is_transient`), never to hear the same plan twice.
    fn ignores_feedback(&self) -> bool {
        false
    }
}
