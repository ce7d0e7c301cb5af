//! Per-question expectations of an accuracy corpus: `<corpus>.expected`, beside the
//! corpus, lists the ids of the questions the planner passes (answers right, or refuses
//! where it should), one a line; `#` starts a comment.
//!
//! [`check_expectations`] fails on any difference. A question that stops passing is a
//! regression named by its id; one that starts passing must be added, so the list is a
//! ratchet per question and no regression hides behind an improvement elsewhere.
//! `NL2SQL_BLESS=1` rewrites the file from the run (review the diff).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

/// One question's outcome: its id, whether it passed, and why not.
pub struct Outcome<'a> {
    /// The question's id.
    pub id: &'a str,
    /// Whether it passed.
    pub passed: bool,
    /// What happened (shown for a regression).
    pub reason: String,
}

/// The ids `path` lists (none when it does not exist).
pub fn read_expectations(path: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// Holds `outcomes` to the expectations in `path` (after rewriting it under
/// `NL2SQL_BLESS`); the error lists every regression, unknown id and new pass.
pub fn check_expectations(path: &Path, outcomes: &[Outcome<'_>]) -> Result<(), String> {
    if std::env::var_os("NL2SQL_BLESS").is_some() {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let mut text = format!(
            "# {}: the questions the planner passes (nl2sql_test_support::expect).\n\
             # Written by NL2SQL_BLESS=1; review the diff.\n",
            name.unwrap_or_default()
        );
        for o in outcomes.iter().filter(|o| o.passed) {
            let _ = writeln!(text, "{}", o.id);
        }
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let expected = read_expectations(path);
    let regressed: Vec<String> = outcomes
        .iter()
        .filter(|o| expected.contains(o.id) && !o.passed)
        .map(|o| format!("{}: {}", o.id, o.reason))
        .collect();
    let unknown: Vec<&String> = expected
        .iter()
        .filter(|id| !outcomes.iter().any(|o| o.id == id.as_str()))
        .collect();
    let improved: Vec<&str> = outcomes
        .iter()
        .filter(|o| o.passed && !expected.contains(o.id))
        .map(|o| o.id)
        .collect();
    if regressed.is_empty() && unknown.is_empty() && improved.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{}: {} expected to pass regressed: {regressed:#?}\n\
         ids listed that are not questions: {unknown:?}\n\
         passing now, not yet listed (add them, or run with NL2SQL_BLESS=1): {improved:?}",
        path.display(),
        regressed.len(),
    ))
}
