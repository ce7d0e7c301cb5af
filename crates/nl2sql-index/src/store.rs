//! The schema store: versioned schema snapshots per datasource (spec: storage.md §2), kept
//! in memory and, when opened on a data directory, as one JSON file per datasource under
//! `<data_dir>/schema_store/`, written atomically.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{PoisonError, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use nl2sql_state::{
    ErrorCode, PipelineError, SchemaContract, SchemaSnapshot, Severity, TableContract,
    TableMetadata, sha256_hex,
};
use serde::{Deserialize, Serialize};

use crate::fsio::{self, NODE};

/// How many versions of a datasource the store keeps by default
/// (`SCHEMA_STORE_MAX_VERSIONS`).
pub const DEFAULT_MAX_VERSIONS: usize = 3;

/// How many hex characters of the contract fingerprint make a schema version.
pub const SCHEMA_VERSION_LEN: usize = 12;

/// The folder of the store under the data directory.
const STORE_DIR: &str = "schema_store";

/// The format of the store's files.
const FORMAT_VERSION: u32 = 1;

/// The schema version of a contract: the first [`SCHEMA_VERSION_LEN`] hex characters of
/// [`SchemaContract::fingerprint`]. The same contract always gets the same version.
pub fn schema_version_of(contract: &SchemaContract) -> String {
    let fingerprint = contract.fingerprint();
    fingerprint
        .get(..SCHEMA_VERSION_LEN)
        .unwrap_or(&fingerprint)
        .to_owned()
}

/// What [`SchemaStore::register_snapshot`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Registration {
    /// The version of the registered snapshot.
    pub schema_version: String,
    /// Versions dropped because the datasource had more than the store keeps, oldest
    /// first; the caller deletes their index documents.
    pub evicted_versions: Vec<String>,
    /// True when the contract was already stored: its metadata was replaced and it became
    /// the latest version again.
    pub updated: bool,
}

/// One stored version.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredVersion {
    version: String,
    fingerprint: String,
    created_at_ms: u64,
    snapshot: SchemaSnapshot,
}

/// Every stored version of one datasource, oldest first: the file format.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct DatasourceVersions {
    format_version: u32,
    datasource_id: String,
    versions: Vec<StoredVersion>,
}

/// Versioned schema snapshots per datasource.
///
/// A version is derived from the contract's fingerprint ([`schema_version_of`]), so
/// registering the same contract again returns the same version; "latest" is the most
/// recently registered version. Safe to share between threads.
#[derive(Debug)]
pub struct SchemaStore {
    dir: Option<PathBuf>,
    max_versions: usize,
    inner: RwLock<BTreeMap<String, DatasourceVersions>>,
}

impl SchemaStore {
    /// A store that lives in memory only.
    pub fn in_memory() -> Self {
        SchemaStore {
            dir: None,
            max_versions: DEFAULT_MAX_VERSIONS,
            inner: RwLock::new(BTreeMap::new()),
        }
    }

    /// Opens (or creates) the store under `data_dir` (`schema_store/`) and loads every
    /// stored datasource. Leftover temporary files are removed.
    pub fn open(data_dir: &Path) -> nl2sql_state::Result<Self> {
        SchemaStore::open_dir(&data_dir.join(STORE_DIR))
    }

    /// Opens (or creates) the store in the directory `dir` itself and loads every stored
    /// datasource. Leftover temporary files are removed.
    pub fn open_dir(dir: &Path) -> nl2sql_state::Result<Self> {
        let dir = dir.to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|e| fsio::io_error("create", &dir, &e))?;
        fsio::remove_leftovers(&dir);
        let mut map = BTreeMap::new();
        let entries = std::fs::read_dir(&dir).map_err(|e| fsio::io_error("list", &dir, &e))?;
        let mut paths: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        paths.sort();
        for path in paths {
            if let Some(file) = fsio::read_json::<DatasourceVersions>(&path)? {
                map.insert(file.datasource_id.clone(), file);
            }
        }
        Ok(SchemaStore {
            dir: Some(dir),
            max_versions: DEFAULT_MAX_VERSIONS,
            inner: RwLock::new(map),
        })
    }

    /// How many versions per datasource the store keeps.
    pub fn max_versions(&self) -> usize {
        self.max_versions
    }

    /// The directory the store writes to, when it has one.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The same store keeping at most `max_versions` (at least 1) versions per datasource
    /// (`SCHEMA_STORE_MAX_VERSIONS`). Datasources holding more are trimmed at their next
    /// registration.
    #[must_use]
    pub fn with_max_versions(mut self, max_versions: usize) -> Self {
        self.max_versions = max_versions.max(1);
        self
    }

    /// Registers `snapshot` under its contract's version (storage.md §2.3): an already
    /// stored contract has its metadata replaced and becomes the latest version again;
    /// a new one is appended and the oldest versions beyond the limit are evicted.
    pub fn register_snapshot(
        &self,
        snapshot: SchemaSnapshot,
    ) -> nl2sql_state::Result<Registration> {
        let ds = snapshot.contract.datasource_id.clone();
        if ds.is_empty() {
            return Err(PipelineError::new(
                NODE,
                ErrorCode::InvalidState,
                Severity::Error,
                "cannot register a schema snapshot without a datasource id",
            ));
        }
        let fingerprint = snapshot.contract.fingerprint();
        let version = schema_version_of(&snapshot.contract);
        let mut inner = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        let mut entry = inner
            .get(&ds)
            .cloned()
            .unwrap_or_else(|| DatasourceVersions {
                format_version: FORMAT_VERSION,
                datasource_id: ds.clone(),
                versions: Vec::new(),
            });
        let updated = match entry.versions.iter().position(|v| v.version == version) {
            Some(pos) => {
                entry.versions.remove(pos);
                true
            }
            None => false,
        };
        entry.versions.push(StoredVersion {
            version: version.clone(),
            fingerprint,
            created_at_ms: now_ms(),
            snapshot,
        });
        let excess = entry.versions.len().saturating_sub(self.max_versions);
        let evicted_versions: Vec<String> =
            entry.versions.drain(..excess).map(|v| v.version).collect();
        if let Some(dir) = &self.dir {
            fsio::write_json(&dir.join(file_name(&ds)), &entry)?;
        }
        inner.insert(ds, entry);
        Ok(Registration {
            schema_version: version,
            evicted_versions,
            updated,
        })
    }

    /// The snapshot of `datasource_id` at `version`.
    pub fn get_snapshot(&self, datasource_id: &str, version: &str) -> Option<SchemaSnapshot> {
        self.read(datasource_id, |versions| {
            versions
                .iter()
                .find(|v| v.version == version)
                .map(|v| v.snapshot.clone())
        })
    }

    /// The most recently registered snapshot of `datasource_id`.
    pub fn latest_snapshot(&self, datasource_id: &str) -> Option<SchemaSnapshot> {
        self.read(datasource_id, |versions| {
            versions.last().map(|v| v.snapshot.clone())
        })
    }

    /// The most recently registered version of `datasource_id`.
    pub fn latest_version(&self, datasource_id: &str) -> Option<String> {
        self.read(datasource_id, |versions| {
            versions.last().map(|v| v.version.clone())
        })
    }

    /// The stored versions of `datasource_id`, oldest first.
    pub fn list_versions(&self, datasource_id: &str) -> Vec<String> {
        self.read(datasource_id, |versions| {
            Some(versions.iter().map(|v| v.version.clone()).collect())
        })
        .unwrap_or_default()
    }

    /// The datasources with at least one stored version, sorted.
    pub fn datasource_ids(&self) -> Vec<String> {
        let inner = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        inner.keys().cloned().collect()
    }

    /// One table's contract at `version`.
    pub fn get_table_contract(
        &self,
        datasource_id: &str,
        version: &str,
        table_key: &str,
    ) -> Option<TableContract> {
        self.get_snapshot(datasource_id, version)
            .and_then(|s| s.contract.tables.get(table_key).cloned())
    }

    /// One table's metadata at `version`.
    pub fn get_table_metadata(
        &self,
        datasource_id: &str,
        version: &str,
        table_key: &str,
    ) -> Option<TableMetadata> {
        self.get_snapshot(datasource_id, version)
            .and_then(|s| s.metadata.and_then(|m| m.tables.get(table_key).cloned()))
    }

    fn read<T>(
        &self,
        datasource_id: &str,
        f: impl FnOnce(&[StoredVersion]) -> Option<T>,
    ) -> Option<T> {
        let inner = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        inner.get(datasource_id).and_then(|e| f(&e.versions))
    }
}

/// `<path-safe id>-<8 hex of sha256(id)>.json`, so that two ids that sanitise alike never
/// share a file.
fn file_name(datasource_id: &str) -> String {
    let safe: String = datasource_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let hash = sha256_hex(datasource_id.as_bytes());
    format!("{safe}-{}.json", hash.get(..8).unwrap_or(&hash))
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
