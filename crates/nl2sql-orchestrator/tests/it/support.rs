//! Helpers shared by this test binary's modules (temporary directories are
//! `nl2sql_test_support::TempDir`).

use std::path::PathBuf;

/// The manufacturing fixture database (`tests/data/fixtures/manufacturing.db`).
pub(crate) fn fixture() -> PathBuf {
    nl2sql_test_support::manufacturing_db()
}
