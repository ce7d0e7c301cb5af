//! The guard's verdict: status, issues, feedback for a model, and renderings.

use std::fmt::Write as _;

use nl2sql_state::{ErrorCode, Severity};
use serde::Serialize;

use super::{ColumnResolution, GuardIssue, GuardedSql, TableRead};

/// Overall verdict on a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GuardStatus {
    /// Safe and valid: may run.
    Ok,
    /// Fixable (syntax, unknown or ambiguous names, unsupported constructs): a model may
    /// rewrite it.
    Rewrite,
    /// A security or policy violation: not retryable.
    Rejected,
}

impl GuardStatus {
    /// `ok`, `rewrite` or `rejected`.
    pub fn as_str(self) -> &'static str {
        match self {
            GuardStatus::Ok => "ok",
            GuardStatus::Rewrite => "rewrite",
            GuardStatus::Rejected => "rejected",
        }
    }
}

/// The guard's report on one SQL text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GuardReport {
    /// The verdict.
    pub status: GuardStatus,
    /// Every finding, in check order.
    pub issues: Vec<GuardIssue>,
    /// One text block a model can act on; `None` when the status is `ok`.
    pub feedback: Option<String>,
    /// The SQL text checked.
    pub sql: String,
    /// How each column reference resolved, in source order (not serialised in reports).
    #[serde(skip)]
    pub resolutions: Vec<ColumnResolution>,
    /// What the engine runs when the status is `ok`: the guard's rendering of the tree it
    /// checked (not serialised in reports).
    #[serde(skip)]
    pub guarded: Option<GuardedSql>,
    /// The datasource's tables the statement reads and their columns, as the guard
    /// resolved them (not serialised in reports; the differential tests compare them with
    /// what each engine reports reading).
    #[serde(skip)]
    pub reads: Vec<TableRead>,
}

impl GuardReport {
    pub(crate) fn new(
        sql: &str,
        issues: Vec<GuardIssue>,
        resolutions: Vec<ColumnResolution>,
        guarded: Option<GuardedSql>,
    ) -> Self {
        let rejected = issues.iter().any(|i| {
            i.code == ErrorCode::SecurityViolation
                || i.severity == Severity::Critical
                || i.code.is_fatal()
        });
        let status = if rejected {
            GuardStatus::Rejected
        } else if issues.is_empty() {
            GuardStatus::Ok
        } else {
            GuardStatus::Rewrite
        };
        let feedback = (!issues.is_empty()).then(|| {
            let mut text = String::from("SQL validation failed:");
            for issue in &issues {
                let _ = write!(text, "\n- {}", issue.message);
            }
            if status == GuardStatus::Rejected {
                text.push_str("\nThe statement was rejected for security or policy reasons; do not retry it with the same intent.");
            }
            text
        });
        GuardReport {
            status,
            issues,
            feedback,
            sql: sql.to_owned(),
            resolutions,
            guarded: if status == GuardStatus::Ok {
                guarded
            } else {
                None
            },
            reads: Vec::new(),
        }
    }

    /// True when the statement may run.
    pub fn is_ok(&self) -> bool {
        self.status == GuardStatus::Ok
    }

    /// The report as one JSON object: `{"status", "issues", "feedback", "sql"}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "status": self.status,
            "issues": self.issues,
            "feedback": self.feedback,
            "sql": self.sql,
        })
    }

    /// The report for people: the status line, then one line per issue with its code,
    /// severity and position.
    pub fn to_text(&self) -> String {
        let mut out = format!("status: {}\n", self.status.as_str());
        for issue in &self.issues {
            let at = issue
                .span
                .map(|s| format!(" at {}:{}", s.start.line, s.start.column))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{} [{}]{}: {}",
                issue.severity.as_str(),
                issue.code.as_str(),
                at,
                issue.message
            );
        }
        out
    }
}
