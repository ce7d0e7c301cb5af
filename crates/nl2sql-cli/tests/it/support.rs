//! Helpers shared by this test binary's modules: the repository root, the fixture
//! database, temporary directories, a clean `nl2sql` command, and readers of its output.

use std::path::PathBuf;
use std::process::{Command, Output};

pub(crate) use nl2sql_test_support::temp_dir;

/// The repository root.
pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The manufacturing fixture database (`tests/data/fixtures/manufacturing.db`).
pub(crate) fn fixture() -> PathBuf {
    nl2sql_test_support::manufacturing_db()
}

/// The `nl2sql` binary under test, with no `NL2SQL_CONFIG`, `NL2SQL_DATA_DIR` or
/// `OFFLINE_MIN_CONFIDENCE` from the environment of the test run.
pub(crate) fn nl2sql() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_nl2sql"));
    command
        .env_remove("NL2SQL_CONFIG")
        .env_remove("NL2SQL_DATA_DIR")
        .env_remove("OFFLINE_MIN_CONFIDENCE");
    command
}

/// The standard output, as JSON.
///
/// # Panics
/// When it is not JSON (the message shows standard output and standard error).
pub(crate) fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", stdout(o), stderr(o)))
}

/// The standard output, as text.
pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The standard error, as text.
pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts that the command exited with status 0, showing its standard error if not.
#[track_caller]
pub(crate) fn assert_succeeded(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
}
