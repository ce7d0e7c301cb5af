//! The local filesystem backend: `<base>/<rendered template>`, written through a temporary
//! file in the same directory, then renamed (with `fsync`s of the file and the directory
//! when the store's [`ArtifactDurability`] is `Synced`). The file work is blocking and runs
//! on tokio's blocking pool (inline when there is no runtime).

use std::fs::{self, File};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use async_trait::async_trait;
use bytes::Bytes;
use nl2sql_state::{
    ArtifactDurability, ArtifactRef, ErrorCode, Node, PipelineError, Severity, sha256_hex,
};

use crate::integrity::{read_error, verify_and_decode};
use crate::{
    ArtifactMeta, ArtifactStore, ArtifactTable, PathTemplate, parquet_io, run_blocking, time,
};

/// Marker in the names of temporary files.
const TMP_MARKER: &str = ".tmp-";

/// Artifacts as parquet files under one base directory.
#[derive(Debug, Clone)]
pub struct LocalArtifactStore {
    base: PathBuf,
    template: PathTemplate,
    durability: ArtifactDurability,
}

impl LocalArtifactStore {
    /// A store under `base` (created if missing) with `template`, writing with the default
    /// durability ([`ArtifactDurability::Atomic`]). Temporary files that a process which
    /// no longer runs left behind (it was killed during a write) are removed first.
    pub fn new(base: impl AsRef<Path>, template: PathTemplate) -> Result<Self, PipelineError> {
        let base = base.as_ref();
        fs::create_dir_all(base)
            .and_then(|()| base.canonicalize())
            .map(|base| {
                if let Err(e) = remove_tmp(&base, &is_orphan) {
                    tracing::warn!(error = %e, "cannot remove temporary artifact files");
                }
                LocalArtifactStore {
                    base,
                    template,
                    durability: ArtifactDurability::default(),
                }
            })
            .map_err(|e| {
                PipelineError::new(
                    Node::ArtifactStore,
                    ErrorCode::InvalidState,
                    Severity::Error,
                    format!("cannot use artifact directory '{}': {e}", base.display()),
                )
            })
    }

    /// The same store writing with `durability`.
    #[must_use]
    pub fn with_durability(mut self, durability: ArtifactDurability) -> Self {
        self.durability = durability;
        self
    }

    /// How far a write goes before it returns.
    pub fn durability(&self) -> ArtifactDurability {
        self.durability
    }

    /// The absolute base directory.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Removes temporary files left by interrupted writes; returns how many. Run it at
    /// start-up, when no write is in flight. Blocking: call it before serving, or from
    /// `spawn_blocking`.
    pub fn remove_temporary_files(&self) -> Result<usize, PipelineError> {
        remove_tmp(&self.base, &|_| true).map_err(|e| write_error(&self.base, &e.to_string()))
    }

    fn resolve(&self, artifact: &ArtifactRef) -> Result<PathBuf, PipelineError> {
        let Some(path) = artifact.uri.strip_prefix("file://") else {
            return Err(read_error(format!(
                "Unsupported local URI: '{}'",
                artifact.uri
            )));
        };
        let path = Path::new(path)
            .canonicalize()
            .map_err(|e| read_error(format!("artifact '{}' is missing: {e}", artifact.uri)))?;
        if !path.starts_with(&self.base) {
            return Err(read_error(format!(
                "artifact '{}' is outside the store",
                artifact.uri
            )));
        }
        Ok(path)
    }
}

#[async_trait]
impl ArtifactStore for LocalArtifactStore {
    fn backend(&self) -> &'static str {
        "local"
    }

    async fn write(
        &self,
        meta: &ArtifactMeta,
        schema: SchemaRef,
        batches: &[RecordBatch],
    ) -> Result<ArtifactRef, PipelineError> {
        let relative = self.template.render(meta)?;
        let path = self.base.join(&relative);
        let columns = schema.fields().iter().map(|f| f.name().clone()).collect();
        let row_count: usize = batches.iter().map(RecordBatch::num_rows).sum();
        let batches = batches.to_vec();
        let target = path.clone();
        let durability = self.durability;
        let (size, content_hash) = run_blocking(
            move || {
                let bytes = parquet_io::encode(schema, &batches)
                    .map_err(|e| write_error(&target, &format!("cannot encode parquet: {e}")))?;
                write_atomically(&target, &bytes, durability)
                    .map_err(|e| write_error(&target, &e.to_string()))?;
                Ok((bytes.len(), sha256_hex(&bytes)))
            },
            |panic| write_error(&path, &format!("the writer stopped: {panic}")),
        )
        .await?;
        Ok(ArtifactRef {
            uri: format!("file://{}", path.display()),
            backend: "local".to_owned(),
            format: "parquet".to_owned(),
            row_count: row_count as u64,
            columns,
            bytes: size as u64,
            content_hash,
            created_at: time::now_utc(),
            schema_version: meta.schema_version.clone(),
            path_template: self.template.as_str().to_owned(),
        })
    }

    async fn read(&self, artifact: &ArtifactRef) -> Result<ArtifactTable, PipelineError> {
        let store = self.clone();
        let artifact = artifact.clone();
        run_blocking(
            move || {
                let path = store.resolve(&artifact)?;
                let bytes = fs::read(&path).map_err(|e| {
                    read_error(format!("cannot read artifact '{}': {e}", artifact.uri))
                })?;
                verify_and_decode(&artifact.uri, &artifact.content_hash, Bytes::from(bytes))
            },
            |panic| read_error(format!("the artifact reader stopped: {panic}")),
        )
        .await
    }
}

/// Writes `<path>.tmp-<pid>-<uuid>` and renames it to `path`; with `Synced`, syncs the file
/// before the rename and the directory after it.
fn write_atomically(
    path: &Path,
    bytes: &[u8],
    durability: ArtifactDurability,
) -> std::io::Result<()> {
    let synced = durability == ArtifactDurability::Synced;
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        "{name}{TMP_MARKER}{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        if synced {
            file.sync_all()?;
        }
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result?;
    // Make the rename durable; not every platform can sync a directory.
    if synced && let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Removes the temporary files under `dir` whose name `doomed` accepts.
fn remove_tmp(dir: &Path, doomed: &dyn Fn(&str) -> bool) -> std::io::Result<usize> {
    let mut removed = 0;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_dir() {
            removed += remove_tmp(&path, doomed)?;
        } else if name.contains(TMP_MARKER) && doomed(&name) {
            fs::remove_file(&path)?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Whether a temporary file was left by a process that no longer runs: its name holds
/// the writer's pid (`….tmp-<pid>-<uuid>`), and `/proc/<pid>` does not exist. Where
/// that cannot be told (no `/proc`, a name without a pid), the file is left alone: a
/// write in flight in another process must never lose its file.
pub(crate) fn is_orphan(name: &str) -> bool {
    let Some((_, rest)) = name.rsplit_once(TMP_MARKER) else {
        return false;
    };
    let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
        return false;
    };
    let proc_dir = Path::new("/proc");
    proc_dir.join("self").exists()
        && pid != std::process::id()
        && !proc_dir.join(pid.to_string()).exists()
}

fn write_error(path: &Path, message: &str) -> PipelineError {
    crate::integrity::write_error(&path.display().to_string(), message)
}
