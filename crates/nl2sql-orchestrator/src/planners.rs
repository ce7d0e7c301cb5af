//! Which planner a run uses: the offline planner (the default), an OpenAI-compatible LLM
//! configured by an LLM file, or a replay of a recorded cassette; optionally recording
//! every call of the chosen planner to a cassette.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nl2sql_planner::{CassettePlanner, Planner};
use nl2sql_planner_llm::{LlmConfig, LlmPlanner};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::ConfigError;

/// The planner behind a run.
#[derive(Debug, Clone, PartialEq)]
pub enum PlannerChoice {
    /// The offline deterministic planner (no network, no model), refusing readings below
    /// its learned confidence threshold.
    Offline,
    /// The offline planner refusing readings whose confidence is below this instead
    /// (`OFFLINE_MIN_CONFIDENCE`; 0 never refuses on confidence).
    OfflineMinConfidence(f64),
    /// The offline planner answering even when it cannot place every word (benchmarks
    /// and learning only).
    OfflineLenient,
    /// An OpenAI-compatible LLM configured by this LLM file (TOML, or JSON by extension).
    Llm(PathBuf),
    /// Answers from this cassette only; a call not recorded in it fails.
    Replay(PathBuf),
}

/// Builds the chosen planner; with `record`, every call is also appended to that cassette.
/// Errors name the file at fault.
pub fn build_planner(
    choice: &PlannerChoice,
    record: Option<&Path>,
) -> Result<Arc<dyn Planner>, ConfigError> {
    let planner: Arc<dyn Planner> = match choice {
        PlannerChoice::Offline => Arc::new(OfflinePlanner::new()),
        PlannerChoice::OfflineMinConfidence(min) => {
            Arc::new(OfflinePlanner::new().with_min_confidence(*min))
        }
        PlannerChoice::OfflineLenient => Arc::new(OfflinePlanner::lenient()),
        PlannerChoice::Llm(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| file_error("--llm-config", path, &e.to_string()))?;
            let config = if path.extension().is_some_and(|e| e == "json") {
                LlmConfig::from_json_str(&text)?
            } else {
                LlmConfig::from_toml_str(&text)?
            };
            Arc::new(LlmPlanner::from_config(&config)?)
        }
        PlannerChoice::Replay(path) => Arc::new(
            CassettePlanner::replay(path)
                .map_err(|e| file_error("--cassette", path, &e.to_string()))?,
        ),
    };
    match record {
        None => Ok(planner),
        Some(path) => Ok(Arc::new(
            CassettePlanner::record(planner, path)
                .map_err(|e| file_error("--record", path, &e.to_string()))?,
        )),
    }
}

fn file_error(key: &str, path: &Path, message: &str) -> ConfigError {
    ConfigError::Invalid {
        key: key.to_owned(),
        message: format!("'{}': {message}", path.display()),
    }
}
