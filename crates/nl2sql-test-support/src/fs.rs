//! Files for tests: a temporary directory removed on drop, and the manufacturing fixture.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// A fresh directory under the system temp dir, removed (with its contents) on drop. The
/// name holds the caller's label, the process id and a counter, so parallel tests and
/// test binaries never share one.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new, empty directory named after `label`.
    ///
    /// # Panics
    /// When the directory cannot be created (the test cannot run).
    pub fn new(label: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "nl2sql-test-{label}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        if let Err(e) = std::fs::create_dir_all(&dir) {
            panic!("cannot create {}: {e}", dir.display());
        }
        TempDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The manufacturing fixture database (`tests/data/fixtures/manufacturing.db`).
pub fn manufacturing_db() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/fixtures/manufacturing.db")
}
