//! Atomic JSON files: a file either holds a complete document or keeps its previous one
//! (write `<name>.tmp-<uuid>`, sync, rename, sync the directory).

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use nl2sql_state::{ErrorCode, Node, PipelineError, Severity};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The marker in temporary file names.
const TMP_MARKER: &str = ".tmp-";

/// The node name errors of this crate carry.
pub(crate) const NODE: &str = Node::SchemaIndex.as_str();

/// A `SCHEMA_RETRIEVAL_FAILED` error about `path`.
pub(crate) fn io_error(action: &str, path: &Path, err: &dyn std::fmt::Display) -> PipelineError {
    PipelineError::new(
        NODE,
        ErrorCode::SchemaRetrievalFailed,
        Severity::Error,
        format!("cannot {action} '{}': {err}", path.display()),
    )
}

/// Serialises `value` as pretty JSON and writes it to `path` atomically, creating the
/// parent directory.
pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> nl2sql_state::Result<()> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| io_error("serialise", path, &e))?;
    write_atomically(path, &bytes).map_err(|e| io_error("write", path, &e))
}

/// Reads the JSON document at `path`; `None` when the file does not exist.
pub(crate) fn read_json<T: DeserializeOwned>(path: &Path) -> nl2sql_state::Result<Option<T>> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error("read", path, &e)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| io_error("parse", path, &e))
}

/// Removes leftover temporary files in `dir` (a crash between write and rename).
pub(crate) fn remove_leftovers(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().contains(TMP_MARKER) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        "{name}{TMP_MARKER}{}",
        uuid::Uuid::new_v4().simple()
    ));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result?;
    // Make the rename durable; not every platform can sync a directory.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
