//! Files for tests: a temporary directory removed on drop, and the manufacturing fixture.

use std::ffi::OsStr;
use std::ops::Deref;
use std::path::{Path, PathBuf};

/// A fresh directory under the system temp dir (a [`tempfile::TempDir`]), removed with its
/// contents on drop, even when the test panics. Its name starts with
/// `nl2sql-test-{label}-`, then random characters, so parallel tests and test binaries
/// never share one.
///
/// It reads as the directory's [`Path`] (through [`Deref`] and [`AsRef`]): `dir.join(..)`,
/// `&dir` where a `&Path` is wanted, `.arg(&dir)` and `dir.display()` work as on a
/// `PathBuf`.
#[derive(Debug)]
pub struct TempDir(tempfile::TempDir);

impl TempDir {
    /// A new, empty directory named after `label`.
    ///
    /// # Panics
    /// When the directory cannot be created (the test cannot run).
    pub fn new(label: &str) -> TempDir {
        let dir = tempfile::Builder::new()
            .prefix(&format!("nl2sql-test-{label}-"))
            .tempdir()
            .unwrap_or_else(|e| panic!("cannot create a temporary directory for {label}: {e}"));
        TempDir(dir)
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Deref for TempDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.path()
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        self.path()
    }
}

impl AsRef<OsStr> for TempDir {
    fn as_ref(&self) -> &OsStr {
        self.path().as_os_str()
    }
}

/// A new, empty temporary directory named after `label` ([`TempDir::new`]).
///
/// # Panics
/// When the directory cannot be created (the test cannot run).
pub fn temp_dir(label: &str) -> TempDir {
    TempDir::new(label)
}

/// The manufacturing fixture database (`tests/data/fixtures/manufacturing.db`).
pub fn manufacturing_db() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/fixtures/manufacturing.db")
}

/// Every file under `dir` (recursively) whose extension is `ext`; an unreadable or
/// missing directory has none.
pub fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    files_where(dir, |p| p.extension().is_some_and(|x| x == ext))
}

/// Every file under `dir` (recursively) that `keep` accepts; an unreadable or missing
/// directory has none.
pub fn files_where(dir: &Path, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if keep(&p) {
                out.push(p);
            }
        }
    }
    out
}
