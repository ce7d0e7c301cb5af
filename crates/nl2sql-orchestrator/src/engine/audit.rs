//! The audit log (spec: config-and-security.md §7): JSON lines
//! `{timestamp, event_type, trace_id, tenant_id, data}` in their own file (`AUDIT_LOG_PATH`),
//! separate from application logs and run logs, rotated at 10 MiB with 5 backups.
//!
//! Events: `llm_interaction` `{agent, model, response_snippet, token_usage}` (only calls
//! that reached a model), `security_violation` `{code, node, roles, target}`,
//! `sql_executed` `{datasource_id, sql_sha256, row_count, truncated, duration_ms}` and
//! `run_completed` `{status, duration_ms}`. Result rows never go to the audit log; any
//! object key equal (case-insensitive) to `api_key`, `password`, `secret` or
//! `authorization`, at any depth, has its value replaced by `***REDACTED***` before the
//! line is written. Writing never fails a run: an IO error is a `tracing` warning.

use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde_json::{Map, Value, json};

use super::runlog::iso8601;

/// Rotate when a line would take the file past this size (10 MiB).
pub const AUDIT_MAX_BYTES: u64 = 10 * 1024 * 1024;
/// Rotated files kept (`<path>.1` … `<path>.5`).
pub const AUDIT_BACKUPS: u32 = 5;

/// What replaces a secret value.
const REDACTED: &str = "***REDACTED***";
/// Keys whose values are secrets, compared case-insensitively.
const SECRET_KEYS: [&str; 4] = ["api_key", "password", "secret", "authorization"];

/// An append-only, size-rotated JSON-lines audit file, shared by every run of an engine.
/// The file is opened on the first event.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    max_bytes: u64,
    backups: u32,
    /// The open file and its size.
    file: Mutex<Option<(File, u64)>>,
}

impl AuditLog {
    /// An audit log at `path` with the spec's rotation (10 MiB, 5 backups).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        AuditLog::with_rotation(path, AUDIT_MAX_BYTES, AUDIT_BACKUPS)
    }

    /// An audit log at `path` rotated before a line would take it past `max_bytes`,
    /// keeping `backups` rotated files.
    pub fn with_rotation(path: impl Into<PathBuf>, max_bytes: u64, backups: u32) -> Self {
        AuditLog {
            path: path.into(),
            max_bytes: max_bytes.max(1),
            backups,
            file: Mutex::new(None),
        }
    }

    /// The file events are appended to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event (redacted). Never fails: an IO error is logged and the event is
    /// dropped.
    pub fn write(&self, event_type: &str, trace_id: &str, tenant_id: &str, data: Value) {
        let event = json!({
            "timestamp": iso8601(SystemTime::now()),
            "event_type": event_type,
            "trace_id": trace_id,
            "tenant_id": tenant_id,
            "data": redact(data),
        });
        let mut line = event.to_string();
        line.push('\n');
        if let Err(e) = self.append(line.as_bytes()) {
            tracing::warn!(
                target: "resilience",
                path = %self.path.display(),
                error = %e,
                event_type,
                "audit event not written"
            );
        }
    }

    fn append(&self, line: &[u8]) -> std::io::Result<()> {
        let mut guard = self
            .file
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let len = line.len() as u64;
        if let Some((_, size)) = guard.as_ref()
            && *size > 0
            && size + len > self.max_bytes
        {
            *guard = None;
            self.rotate()?;
        }
        if guard.is_none() {
            if let Some(dir) = self.path.parent()
                && !dir.as_os_str().is_empty()
            {
                fs::create_dir_all(dir)?;
            }
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)?;
            let size = file.metadata()?.len();
            *guard = Some((file, size));
            // A file left larger by an earlier process rotates before the first line.
            if size > 0 && size + len > self.max_bytes {
                *guard = None;
                self.rotate()?;
                let file = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&self.path)?;
                *guard = Some((file, 0));
            }
        }
        if let Some((file, size)) = guard.as_mut() {
            file.write_all(line)?;
            *size += len;
        }
        Ok(())
    }

    /// `<path>.N-1` → `<path>.N` … `<path>` → `<path>.1`; the oldest falls off.
    fn rotate(&self) -> std::io::Result<()> {
        if self.backups == 0 {
            return fs::remove_file(&self.path).or_else(ignore_missing);
        }
        let numbered = |n: u32| {
            let mut name = self.path.as_os_str().to_owned();
            name.push(format!(".{n}"));
            PathBuf::from(name)
        };
        fs::remove_file(numbered(self.backups)).or_else(ignore_missing)?;
        for n in (1..self.backups).rev() {
            fs::rename(numbered(n), numbered(n + 1)).or_else(ignore_missing)?;
        }
        fs::rename(&self.path, numbered(1)).or_else(ignore_missing)
    }
}

fn ignore_missing(e: std::io::Error) -> std::io::Result<()> {
    if e.kind() == std::io::ErrorKind::NotFound {
        Ok(())
    } else {
        Err(e)
    }
}

/// `value` with every secret-named key's value replaced, at any depth.
pub fn redact(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| {
                    if SECRET_KEYS.iter().any(|s| k.eq_ignore_ascii_case(s)) {
                        (k, Value::String(REDACTED.to_owned()))
                    } else {
                        (k, redact(v))
                    }
                })
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(redact).collect()),
        other => other,
    }
}

/// The first `max` characters of `text`.
pub(crate) fn snippet(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use nl2sql_test_support::TempDir;

    fn lines(path: &Path) -> Vec<Value> {
        fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn redacts_secret_keys_at_any_depth_and_keeps_the_rest() {
        let data = json!({
            "API_KEY": "sk-1",
            "model": "m",
            "nested": {"Password": "p", "list": [{"authorization": "Bearer x"}, {"n": 1}]},
            "secret": {"deep": "value"},
            "secrets": "kept: not the same key",
        });
        assert_eq!(
            redact(data),
            json!({
                "API_KEY": REDACTED,
                "model": "m",
                "nested": {"Password": REDACTED, "list": [{"authorization": REDACTED}, {"n": 1}]},
                "secret": REDACTED,
                "secrets": "kept: not the same key",
            })
        );
    }

    #[test]
    fn writes_one_json_line_per_event_with_trace_and_tenant() {
        let dir = TempDir::new("lines");
        let log = AuditLog::new(dir.join("logs/audit_events.log"));
        log.write(
            "run_completed",
            "t-1",
            "acme",
            json!({"status": "succeeded", "duration_ms": 5}),
        );
        log.write(
            "sql_executed",
            "t-2",
            "beta",
            json!({"password": "x", "row_count": 3}),
        );
        let events = lines(log.path());
        assert_eq!(events.len(), 2);
        assert_eq!(events[0]["event_type"], "run_completed");
        assert_eq!(events[0]["trace_id"], "t-1");
        assert_eq!(events[0]["tenant_id"], "acme");
        assert_eq!(
            events[0]["data"],
            json!({"status": "succeeded", "duration_ms": 5})
        );
        let ts = events[0]["timestamp"].as_str().unwrap();
        assert!(
            ts.len() == 24 && ts.ends_with('Z') && ts.as_bytes()[10] == b'T',
            "{ts}"
        );
        assert_eq!(
            events[1]["data"],
            json!({"password": REDACTED, "row_count": 3})
        );
    }

    #[test]
    fn rotates_before_the_limit_and_keeps_the_newest_backups() {
        let dir = TempDir::new("rotate");
        let path = dir.join("audit.log");
        // Each line is 121 bytes: two fit under 300, the third rotates.
        let log = AuditLog::with_rotation(&path, 300, 2);
        for n in 0..7 {
            log.write("run_completed", &format!("t-{n}"), "acme", json!({"n": n}));
        }
        let traces = |p: &Path| -> Vec<String> {
            lines(p)
                .iter()
                .map(|e| e["trace_id"].as_str().unwrap().to_owned())
                .collect()
        };
        // Oldest first across files: .2, .1, current; t-0 and t-1 fell off.
        assert_eq!(traces(&dir.join("audit.log.2")), ["t-2", "t-3"]);
        assert_eq!(traces(&dir.join("audit.log.1")), ["t-4", "t-5"]);
        assert_eq!(traces(&path), ["t-6"]);
        assert!(!dir.join("audit.log.3").exists());
        for p in [&path, &dir.join("audit.log.1"), &dir.join("audit.log.2")] {
            assert!(fs::metadata(p).unwrap().len() <= 300);
        }
        // A new writer (a later process) continues the current file and its rotation.
        let again = AuditLog::with_rotation(&path, 300, 2);
        again.write("run_completed", "t-7", "acme", json!({"n": 7}));
        assert_eq!(traces(&path), ["t-6", "t-7"]);
        again.write("run_completed", "t-8", "acme", json!({"n": 8}));
        assert_eq!(traces(&path), ["t-8"]);
        assert_eq!(traces(&dir.join("audit.log.1")), ["t-6", "t-7"]);
    }

    #[test]
    fn an_unwritable_path_drops_the_event_without_failing() {
        let dir = TempDir::new("unwritable");
        // A directory where the file should be.
        fs::create_dir_all(dir.join("audit.log")).unwrap();
        let log = AuditLog::new(dir.join("audit.log"));
        log.write("run_completed", "t", "acme", json!({}));
        assert!(dir.join("audit.log").is_dir());
    }

    #[test]
    fn snippets_cut_on_characters() {
        assert_eq!(snippet("héllo", 2), "hé");
        assert_eq!(snippet("ab", 10), "ab");
    }
}
