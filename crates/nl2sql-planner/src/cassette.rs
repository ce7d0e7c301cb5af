//! Record and replay of planner calls: [`CassettePlanner`] wraps a planner and writes each
//! call to a JSON-lines file (`Record`), or answers only from such a file (`Replay`), so a
//! run with a model can be repeated without the model, byte for byte.
//!
//! A line is `{"key", "step", "request", "response"}` where `response` is `{"ok": value}`
//! or `{"error": PipelineError}`: errors are recorded and replayed too. The key is the
//! SHA-256 hex of the canonical JSON of `{"step", "request"}`. Each line is written with one
//! `write_all` of the line and its newline under a lock, then flushed. Loading rejects a
//! malformed line with its line number; when a key appears twice, the later line wins.

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::future::Future;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use nl2sql_plan::{DecomposerResponse, PlanModel};
use nl2sql_state::{ErrorCode, PipelineError, Severity, canonical_json, sha256_hex};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{
    AnswerRequest, DecomposeRequest, FinalAnswer, PlanRequest, Planner, RefineRequest, Step,
};

/// What a cassette does with calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CassetteMode {
    /// Call the inner planner and append every call to the file.
    Record,
    /// Answer from the file only; a call not in it is an error.
    Replay,
    /// Call the inner planner; the file is neither read nor written.
    Passthrough,
}

/// Why a cassette could not be opened or loaded.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    /// The file cannot be read or opened for appending.
    #[error("cassette {path}: {source}")]
    Io {
        /// The cassette file.
        path: PathBuf,
        /// The IO error.
        #[source]
        source: std::io::Error,
    },
    /// A line is not a cassette entry.
    #[error("cassette {path}, line {line}: {reason}")]
    Malformed {
        /// The cassette file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
}

impl From<CassetteError> for PipelineError {
    fn from(e: CassetteError) -> Self {
        PipelineError::new(
            "planner",
            ErrorCode::PlanningFailure,
            Severity::Critical,
            e.to_string(),
        )
    }
}

/// One recorded call, as one line of the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    key: String,
    step: Step,
    request: Value,
    response: Response,
}

/// A recorded outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
enum Response {
    Ok(Value),
    Error(PipelineError),
}

/// A planner that records calls of another planner to a file, or replays them from it.
pub struct CassettePlanner {
    mode: CassetteMode,
    path: PathBuf,
    inner: Option<Arc<dyn Planner>>,
    /// Replay: the loaded entries by key, with their line numbers.
    entries: HashMap<String, (usize, Entry)>,
    /// Record: the file, opened for appending.
    writer: Option<Mutex<File>>,
}

impl std::fmt::Debug for CassettePlanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CassettePlanner")
            .field("mode", &self.mode)
            .field("path", &self.path)
            .field("inner", &self.inner.as_ref().map(|p| p.name()))
            .field("entries", &self.entries.len())
            .finish()
    }
}

impl CassettePlanner {
    /// Records every call of `inner`, appending to `path` (created if missing).
    pub fn record(
        inner: Arc<dyn Planner>,
        path: impl AsRef<Path>,
    ) -> Result<CassettePlanner, CassetteError> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|source| CassetteError::Io {
                path: path.clone(),
                source,
            })?;
        Ok(CassettePlanner {
            mode: CassetteMode::Record,
            path,
            inner: Some(inner),
            entries: HashMap::new(),
            writer: Some(Mutex::new(file)),
        })
    }

    /// Answers every call from the file at `path`; nothing else is ever called.
    pub fn replay(path: impl AsRef<Path>) -> Result<CassettePlanner, CassetteError> {
        let path = path.as_ref().to_path_buf();
        let text = std::fs::read_to_string(&path).map_err(|source| CassetteError::Io {
            path: path.clone(),
            source,
        })?;
        let entries = parse_lines(&path, &text)?;
        Ok(CassettePlanner {
            mode: CassetteMode::Replay,
            path,
            inner: None,
            entries,
            writer: None,
        })
    }

    /// Calls `inner` and records nothing (the cassette switched off).
    pub fn passthrough(inner: Arc<dyn Planner>) -> CassettePlanner {
        CassettePlanner {
            mode: CassetteMode::Passthrough,
            path: PathBuf::new(),
            inner: Some(inner),
            entries: HashMap::new(),
            writer: None,
        }
    }

    /// Builds a cassette in `mode` (`inner` is required unless replaying).
    pub fn open(
        mode: CassetteMode,
        inner: Option<Arc<dyn Planner>>,
        path: impl AsRef<Path>,
    ) -> Result<CassettePlanner, PipelineError> {
        match (mode, inner) {
            (CassetteMode::Replay, _) => Ok(CassettePlanner::replay(path)?),
            (CassetteMode::Record, Some(inner)) => Ok(CassettePlanner::record(inner, path)?),
            (CassetteMode::Passthrough, Some(inner)) => Ok(CassettePlanner::passthrough(inner)),
            (mode, None) => Err(PipelineError::new(
                "planner",
                ErrorCode::InvalidState,
                Severity::Error,
                format!("cassette mode {mode:?} needs a planner to wrap"),
            )),
        }
    }

    /// The mode.
    pub fn mode(&self) -> CassetteMode {
        self.mode
    }

    /// The number of entries loaded for replay.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no entry is loaded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    async fn run<Req, Resp, Fut>(
        &self,
        step: Step,
        request: &Req,
        call: impl FnOnce(Arc<dyn Planner>) -> Fut,
    ) -> Result<Resp, PipelineError>
    where
        Req: Serialize + Sync,
        Resp: Serialize + DeserializeOwned,
        Fut: Future<Output = Result<Resp, PipelineError>>,
    {
        let request_value = serde_json::to_value(request).map_err(|e| {
            cassette_error(
                step,
                format!("cannot serialise the {} request: {e}", step.as_str()),
            )
        })?;
        let key = cassette_key(step, &request_value);
        match self.mode {
            CassetteMode::Replay => self.replayed(step, &key),
            CassetteMode::Passthrough | CassetteMode::Record => {
                let Some(inner) = self.inner.clone() else {
                    return Err(cassette_error(step, "no planner to call".to_owned()));
                };
                let result = call(inner).await;
                if self.mode == CassetteMode::Record {
                    let response = match &result {
                        Ok(value) => Response::Ok(serde_json::to_value(value).map_err(|e| {
                            cassette_error(step, format!("cannot serialise the response: {e}"))
                        })?),
                        Err(e) => Response::Error(e.clone()),
                    };
                    self.append(&Entry {
                        key,
                        step,
                        request: request_value,
                        response,
                    })?;
                }
                result
            }
        }
    }

    fn replayed<Resp: DeserializeOwned>(
        &self,
        step: Step,
        key: &str,
    ) -> Result<Resp, PipelineError> {
        let Some((line, entry)) = self.entries.get(key) else {
            return Err(cassette_error(
                step,
                format!(
                    "cassette {} has no recorded {} call with key {key}",
                    self.path.display(),
                    step.as_str()
                ),
            ));
        };
        if entry.step != step {
            return Err(cassette_error(
                step,
                format!(
                    "cassette {}, line {line}: key {key} was recorded for step {}, not {}",
                    self.path.display(),
                    entry.step.as_str(),
                    step.as_str()
                ),
            ));
        }
        match &entry.response {
            Response::Error(e) => Err(e.clone()),
            Response::Ok(value) => serde_json::from_value(value.clone()).map_err(|e| {
                cassette_error(
                    step,
                    format!(
                        "cassette {}, line {line}: the recorded {} response does not parse: {e}",
                        self.path.display(),
                        step.as_str()
                    ),
                )
            }),
        }
    }

    fn append(&self, entry: &Entry) -> Result<(), PipelineError> {
        let Some(writer) = &self.writer else {
            return Ok(());
        };
        let mut line = serde_json::to_string(entry)
            .map_err(|e| cassette_error(entry.step, format!("cannot serialise the entry: {e}")))?;
        line.push('\n');
        // A poisoned lock holds a file whose lines are whole (one write_all per line).
        let mut file = writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        file.write_all(line.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|e| {
                cassette_error(
                    entry.step,
                    format!("cannot write cassette {}: {e}", self.path.display()),
                )
            })
    }
}

/// One cassette line (without the newline) for a call of `step` with `request` (its JSON)
/// that answered `response`: how a run log's recorded planner calls become a cassette.
pub fn cassette_line(
    step: Step,
    request: Value,
    response: Result<Value, PipelineError>,
) -> Result<String, serde_json::Error> {
    let entry = Entry {
        key: cassette_key(step, &request),
        step,
        request,
        response: match response {
            Ok(v) => Response::Ok(v),
            Err(e) => Response::Error(e),
        },
    };
    serde_json::to_string(&entry)
}

/// The key of a call: SHA-256 hex of the canonical JSON of `{"step", "request"}`.
pub fn cassette_key(step: Step, request: &Value) -> String {
    let value = json!({"step": step.as_str(), "request": request});
    sha256_hex(canonical_json(&value).as_bytes())
}

fn cassette_error(step: Step, message: String) -> PipelineError {
    PipelineError::new(
        step.as_str(),
        ErrorCode::PlanningFailure,
        Severity::Critical,
        message,
    )
}

fn parse_lines(path: &Path, text: &str) -> Result<HashMap<String, (usize, Entry)>, CassetteError> {
    let mut entries = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let malformed = |reason: String| CassetteError::Malformed {
            path: path.to_path_buf(),
            line: number,
            reason,
        };
        let entry: Entry = serde_json::from_str(line).map_err(|e| malformed(e.to_string()))?;
        let expected = cassette_key(entry.step, &entry.request);
        if entry.key != expected {
            return Err(malformed(format!(
                "key {} does not match its step and request (expected {expected})",
                entry.key
            )));
        }
        entries.insert(entry.key.clone(), (number, entry));
    }
    Ok(entries)
}

#[async_trait]
impl Planner for CassettePlanner {
    fn name(&self) -> String {
        match (self.mode, &self.inner) {
            (CassetteMode::Replay, _) | (_, None) => "replay".to_owned(),
            (CassetteMode::Record, Some(inner)) => format!("record:{}", inner.name()),
            (CassetteMode::Passthrough, Some(inner)) => inner.name(),
        }
    }

    fn ignores_feedback(&self) -> bool {
        // A replay answers each request as recorded, so it re-plans as the recorded
        // planner did only when that planner read feedback; with a planner inside, its
        // own answer holds.
        self.inner.as_ref().is_some_and(|p| p.ignores_feedback())
    }

    async fn decompose(
        &self,
        request: &DecomposeRequest,
    ) -> Result<DecomposerResponse, PipelineError> {
        self.run(Step::Decomposer, request, |p| async move {
            p.decompose(request).await
        })
        .await
    }

    async fn plan(&self, request: &PlanRequest) -> Result<PlanModel, PipelineError> {
        self.run(Step::AstPlanner, request, |p| async move {
            p.plan(request).await
        })
        .await
    }

    async fn refine(&self, request: &RefineRequest) -> Result<String, PipelineError> {
        self.run(Step::Refiner, request, |p| async move {
            p.refine(request).await
        })
        .await
    }

    async fn answer(&self, request: &AnswerRequest) -> Result<FinalAnswer, PipelineError> {
        self.run(Step::AnswerSynthesizer, request, |p| async move {
            p.answer(request).await
        })
        .await
    }
}
