//! Reading the model's answer strictly: the JSON object is the whole reply or the one
//! fenced block (```json … ```) in it, then the step's parser with JSON paths
//! (`nl2sql_plan::parse_plan`, `parse_decomposition`, a strict [`FinalAnswer`]).

use nl2sql_plan::{DecomposerResponse, PlanModel, parse_decomposition, parse_plan};
use nl2sql_state::{ErrorCode, PipelineError, Severity};
use serde_json::json;

use nl2sql_planner::{FinalAnswer, Step};

/// The code a failed call of `step` reports (spec: lib.rs docs, pipeline.md §2.6, §3.1).
pub(crate) fn failure_code(step: Step) -> ErrorCode {
    match step {
        Step::Decomposer | Step::AstPlanner => ErrorCode::PlanningFailure,
        Step::Refiner => ErrorCode::RefinerFailed,
        Step::AnswerSynthesizer => ErrorCode::AggregatorFailed,
    }
}

/// What a failure of `step` is called at the start of its message.
pub(crate) fn failure_prefix(step: Step) -> &'static str {
    match step {
        Step::Decomposer => "decomposition failed",
        Step::AstPlanner => "planning failed",
        Step::Refiner => "refinement failed",
        Step::AnswerSynthesizer => "answer synthesis failed",
    }
}

/// The JSON text of a reply: the trimmed reply when it is an object, else the content
/// of its single fenced block.
pub(crate) fn extract_json(reply: &str) -> Result<&str, String> {
    let trimmed = reply.trim();
    if trimmed.is_empty() {
        return Err("the reply is empty".to_owned());
    }
    if trimmed.starts_with('{') {
        return Ok(trimmed);
    }
    let Some(open) = trimmed.find("```") else {
        return Err("the reply is neither a JSON object nor a ```json fenced block".to_owned());
    };
    let after = &trimmed[open + 3..];
    let Some(newline) = after.find('\n') else {
        return Err("the reply's fenced block is not closed".to_owned());
    };
    let lang = after[..newline].trim();
    if !(lang.is_empty() || lang.eq_ignore_ascii_case("json")) {
        return Err(format!("the reply's fenced block is `{lang}`, not json"));
    }
    let body = &after[newline + 1..];
    let Some(close) = body.find("```") else {
        return Err("the reply's fenced block is not closed".to_owned());
    };
    if body[close + 3..].contains("```") {
        return Err("the reply holds more than one fenced block".to_owned());
    }
    Ok(body[..close].trim())
}

fn invalid(step: Step, what: &str, reason: String, path: Option<String>) -> PipelineError {
    let error = PipelineError::new(
        step.as_str(),
        failure_code(step),
        Severity::Error,
        format!(
            "{}: the model's {what} is invalid: {reason}",
            failure_prefix(step)
        ),
    );
    match path {
        Some(path) => error.with_details(json!({ "path": path })),
        None => error,
    }
}

/// Parses a plan reply.
pub(crate) fn plan(reply: &str) -> Result<PlanModel, PipelineError> {
    let step = Step::AstPlanner;
    let text = extract_json(reply).map_err(|r| invalid(step, "plan", r, None))?;
    parse_plan(text).map_err(|e| invalid(step, "plan", e.to_string(), Some(e.path)))
}

/// Parses a decomposition reply.
pub(crate) fn decomposition(reply: &str) -> Result<DecomposerResponse, PipelineError> {
    let step = Step::Decomposer;
    let text = extract_json(reply).map_err(|r| invalid(step, "decomposition", r, None))?;
    parse_decomposition(text).map_err(|e| {
        invalid(
            step,
            "decomposition",
            format!("invalid decomposition at {}: {}", e.path, e.reason),
            Some(e.path),
        )
    })
}

/// Parses an answer reply.
pub(crate) fn final_answer(reply: &str) -> Result<FinalAnswer, PipelineError> {
    let step = Step::AnswerSynthesizer;
    let text = extract_json(reply).map_err(|r| invalid(step, "answer", r, None))?;
    serde_json::from_str(text).map_err(|e| invalid(step, "answer", e.to_string(), None))
}

/// Reads refiner feedback: trimmed, non-empty text.
pub(crate) fn feedback(reply: &str) -> Result<String, PipelineError> {
    let text = reply.trim();
    if text.is_empty() {
        return Err(invalid(
            Step::Refiner,
            "feedback",
            "the reply is empty".to_owned(),
            None,
        ));
    }
    Ok(text.to_owned())
}
