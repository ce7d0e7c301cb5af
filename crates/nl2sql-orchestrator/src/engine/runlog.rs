//! The run log (spec: graph-state.md §7): one JSON line per node execution and per planner
//! call, appended to `<data_dir>/runs/<trace_id>.jsonl` with one `write_all` per line, so
//! a crash leaves a readable prefix.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nl2sql_planner::{Step, cassette_line};
use nl2sql_state::{ErrorCode, PipelineError, Severity};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One line of a run log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunLogEntry {
    /// The run.
    pub trace_id: String,
    /// Per-run counter, from 0, in file order.
    pub seq: u64,
    /// The node (`datasource_resolver`, `decomposer`, `ast_planner`, …) or planner step
    /// (`planner:<step>`).
    pub node: String,
    /// `sql_agent:<node_id>:<trace_id>` for nodes of a scan.
    #[serde(default)]
    pub subgraph_id: Option<String>,
    /// The scan's planning attempt (1-based), for nodes of a scan.
    #[serde(default)]
    pub attempt: Option<u32>,
    /// UTC ISO-8601.
    pub started_at: String,
    /// Duration in milliseconds.
    pub duration_ms: u64,
    /// What the node produced (inputs and outputs; for planner calls `{step, request,
    /// response}` so a run can be replayed).
    pub delta: Value,
    /// The errors it produced.
    #[serde(default)]
    pub errors: Vec<PipelineError>,
}

/// The node of a run log's last entry, whose delta is the run's final state (seed 002's
/// `GraphState`; terminal rows are not inlined, their counts are).
pub const FINAL_STATE_NODE: &str = "graph_state";

/// Where the run log of `trace_id` lives under `data_dir`.
pub fn run_log_path(data_dir: &Path, trace_id: &str) -> PathBuf {
    data_dir.join("runs").join(format!("{trace_id}.jsonl"))
}

/// Reads a run log. A last line without its newline (cut by a crash) is left out.
/// Errors (`INVALID_STATE`): unreadable file or a whole line that is not an entry (the
/// message names the line).
pub fn read_run_log(path: &Path) -> Result<Vec<RunLogEntry>, PipelineError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        PipelineError::new(
            "run_log",
            ErrorCode::InvalidState,
            Severity::Error,
            format!("cannot read run log {}: {e}", path.display()),
        )
    })?;
    // A last line without its newline was cut by a crash (the process killed during the
    // write): the run ended there.
    let complete = match text.rfind('\n') {
        Some(end) => &text[..=end],
        None => "",
    };
    complete
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| {
                PipelineError::new(
                    "run_log",
                    ErrorCode::InvalidState,
                    Severity::Error,
                    format!("run log {} line {}: {e}", path.display(), i + 1),
                )
            })
        })
        .collect()
}

/// The question of a recorded run: the `question` of its first decomposer call.
pub fn recorded_question(entries: &[RunLogEntry]) -> Option<String> {
    entries
        .iter()
        .find(|e| e.node == "planner:decomposer")
        .and_then(|e| e.delta["request"]["question"].as_str())
        .map(str::to_owned)
}

/// Writes the planner calls a run log recorded (nodes `planner:<step>`) as a cassette at
/// `path`, so that `CassettePlanner::replay` answers a re-run of the same question exactly
/// as the recorded planner did. Returns the number of calls written.
pub fn write_replay_cassette(entries: &[RunLogEntry], path: &Path) -> Result<usize, PipelineError> {
    let fail = |message: String| {
        PipelineError::new("run_log", ErrorCode::InvalidState, Severity::Error, message)
    };
    let mut text = String::new();
    let mut calls = 0;
    for entry in entries {
        let Some(step) = entry.node.strip_prefix("planner:") else {
            continue;
        };
        let step: Step = serde_json::from_value(Value::String(step.to_owned()))
            .map_err(|e| fail(format!("unknown planner step '{step}' in the run log: {e}")))?;
        let request = entry.delta["request"].clone();
        let response = match entry.errors.first() {
            Some(e) => Err(e.clone()),
            None => Ok(entry.delta["response"].clone()),
        };
        let line = cassette_line(step, request, response)
            .map_err(|e| fail(format!("cannot write the cassette: {e}")))?;
        text.push_str(&line);
        text.push('\n');
        calls += 1;
    }
    std::fs::write(path, text)
        .map_err(|e| fail(format!("cannot write {}: {e}", path.display())))?;
    Ok(calls)
}

/// The writer of one run's log (without a data dir it writes no file) and the sender of
/// its live events (when the caller asked for them, [`AskOptions::events`]).
///
/// [`AskOptions::events`]: super::options::AskOptions::events
#[derive(Debug)]
pub(crate) struct RunLog {
    trace_id: String,
    /// The file (if any) and the next sequence number, under one lock so lines are in
    /// `seq` order, in the file and on the event channel alike.
    file: Mutex<(Option<File>, u64)>,
    /// Whether there is a file (set once, at open): without one and without events,
    /// recording does nothing, not even take the lock.
    has_file: bool,
    events: Option<RunEvents>,
}

impl RunLog {
    /// A log under `data_dir` (no file when `None`); a file that cannot be created is a
    /// warning, and the run goes on without a log file.
    pub(crate) fn open(
        data_dir: Option<&Path>,
        trace_id: &str,
        events: Option<RunEvents>,
    ) -> (RunLog, Option<String>) {
        let mut log = RunLog {
            trace_id: trace_id.to_owned(),
            file: Mutex::new((None, 0)),
            has_file: false,
            events,
        };
        let Some(dir) = data_dir else {
            return (log, None);
        };
        let path = run_log_path(dir, trace_id);
        let opened = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| OpenOptions::new().create(true).append(true).open(&path));
        match opened {
            Ok(f) => {
                log.file = Mutex::new((Some(f), 0));
                log.has_file = true;
                (log, None)
            }
            Err(e) => (
                log,
                Some(format!("run log {} not written: {e}", path.display())),
            ),
        }
    }

    /// Tells a streaming caller that `node` starts (nothing is written to the file: its
    /// line, written when the node ends, carries the start time).
    pub(crate) fn started(
        &self,
        node: &str,
        subgraph_id: Option<&str>,
        attempt: Option<u32>,
        at: SystemTime,
    ) {
        if let Some(events) = &self.events {
            events.send(RunEvent::NodeStarted {
                trace_id: self.trace_id.clone(),
                node: node.to_owned(),
                subgraph_id: subgraph_id.map(str::to_owned),
                attempt,
                started_at: iso8601(at),
            });
        }
    }

    /// Appends one entry (and sends it to a streaming caller).
    pub(crate) fn record(&self, rec: Record<'_>) {
        if !self.has_file && self.events.is_none() {
            return;
        }
        self.append(rec, true);
    }

    /// Appends the run's final state (seed 002's `GraphState`, terminal rows left out) as
    /// the log's last entry, node [`FINAL_STATE_NODE`]. Written to the file only: a
    /// streaming caller has had every node's entry; `state` is not built without a file.
    pub(crate) fn final_state(&self, state: impl FnOnce() -> Value) {
        if !self.has_file {
            return;
        }
        let errors = [];
        self.append(
            Record {
                node: FINAL_STATE_NODE,
                subgraph_id: None,
                attempt: None,
                started_at: SystemTime::now(),
                duration: Duration::ZERO,
                delta: state(),
                errors: &errors,
            },
            false,
        );
    }

    fn append(&self, rec: Record<'_>, send: bool) {
        let Ok(mut guard) = self.file.lock() else {
            return;
        };
        let (file, seq) = &mut *guard;
        let entry = RunLogEntry {
            trace_id: self.trace_id.clone(),
            seq: *seq,
            node: rec.node.to_owned(),
            subgraph_id: rec.subgraph_id.map(str::to_owned),
            attempt: rec.attempt,
            started_at: iso8601(rec.started_at),
            duration_ms: millis(rec.duration),
            delta: rec.delta,
            errors: rec.errors.to_vec(),
        };
        let written = match file {
            Some(f) => write_line(f, &entry),
            None => true,
        };
        if written {
            *seq += 1;
            if send && let Some(events) = &self.events {
                events.send(RunEvent::NodeFinished(Box::new(entry)));
            }
        }
    }
}

/// Appends `entry` as one line; false (and the file cut back to its last whole line)
/// when it could not be written whole.
fn write_line(f: &mut File, entry: &RunLogEntry) -> bool {
    let mut line = match serde_json::to_string(entry) {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "run log entry not serialisable");
            return false;
        }
    };
    line.push('\n');
    // One write per line; when it fails part way (a full disk), the file is cut back to
    // its last whole line, so a line is in the log whole or not at all.
    let before = f.metadata().map(|m| m.len()).ok();
    match f.write_all(line.as_bytes()).and_then(|()| f.flush()) {
        Ok(()) => true,
        Err(e) => {
            if let Some(len) = before {
                let _ = f.set_len(len);
            }
            tracing::warn!(error = %e, "run log line not written");
            false
        }
    }
}

/// What a streaming caller receives while a run happens: each node as it starts, and
/// each run-log entry as it is written. The channel is unbounded (a run has a bounded
/// number of nodes: its scans times their attempts); a receiver that is dropped costs
/// the run nothing.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunEvent {
    /// A node starts.
    NodeStarted {
        /// The run.
        trace_id: String,
        /// The node (`datasource_resolver`, `ast_planner`, …).
        node: String,
        /// `sql_agent:<node_id>:<trace_id>` for nodes of a scan.
        subgraph_id: Option<String>,
        /// The scan's planning attempt, for nodes of a scan.
        attempt: Option<u32>,
        /// UTC ISO-8601.
        started_at: String,
    },
    /// A node ended: its run-log entry (timing, delta, errors).
    NodeFinished(Box<RunLogEntry>),
}

/// The sending half of a run's event channel ([`RunEvents::channel`]).
#[derive(Debug, Clone)]
pub struct RunEvents(tokio::sync::mpsc::UnboundedSender<RunEvent>);

impl RunEvents {
    /// A channel: give the sender to [`AskOptions::events`](super::options::AskOptions::events),
    /// read the run's events from the receiver.
    pub fn channel() -> (RunEvents, tokio::sync::mpsc::UnboundedReceiver<RunEvent>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (RunEvents(tx), rx)
    }

    fn send(&self, event: RunEvent) {
        // A receiver that went away (a client that disconnected) is not an error of the
        // run: its cancellation, if any, comes through the run's token.
        let _ = self.0.send(event);
    }
}

/// One node execution to record.
pub(crate) struct Record<'a> {
    pub(crate) node: &'a str,
    pub(crate) subgraph_id: Option<&'a str>,
    pub(crate) attempt: Option<u32>,
    pub(crate) started_at: SystemTime,
    pub(crate) duration: Duration,
    pub(crate) delta: Value,
    pub(crate) errors: &'a [PipelineError],
}

/// Whole milliseconds, saturating.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` in UTC.
pub(crate) fn iso8601(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let (y, m, day) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Days since 1970-01-01 → (year, month, day) (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_timestamps() {
        let t = UNIX_EPOCH + Duration::from_millis(1_709_210_096_789);
        assert_eq!(iso8601(t), "2024-02-29T12:34:56.789Z");
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn a_line_cut_by_a_crash_is_left_out_and_a_whole_bad_line_is_an_error() {
        let dir = std::env::temp_dir().join(format!("nl2sql-runlog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (log, warning) = RunLog::open(Some(&dir), "t-cut", None);
        assert_eq!(warning, None);
        for node in ["datasource_resolver", "decomposer"] {
            log.record(Record {
                node,
                subgraph_id: None,
                attempt: None,
                started_at: UNIX_EPOCH,
                duration: Duration::ZERO,
                delta: serde_json::json!({"ok": true}),
                errors: &[],
            });
        }
        let path = run_log_path(&dir, "t-cut");
        // A crash in the middle of the third line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"trace_id\":\"t-cut\",\"seq\":2,\"no")
            .unwrap();
        let entries = read_run_log(&path).unwrap();
        assert_eq!(
            entries.iter().map(|e| e.node.as_str()).collect::<Vec<_>>(),
            ["datasource_resolver", "decomposer"]
        );
        // The same bytes with a newline are a whole line that is not an entry.
        f.write_all(b"\n").unwrap();
        let err = read_run_log(&path).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidState);
        assert!(err.message.contains("line 3"), "{}", err.message);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
