//! The settings of the binary (spec: config-and-security.md §1–§2): every environment
//! variable the spec names either takes effect or stops the command with a configuration
//! error naming it (exit 2). `docs/settings.md` lists each one: its default, its effect,
//! where it is read and the test that shows it.
//!
//! [`validate`] runs before every command and parses all of them, so a bad value is
//! refused at startup whatever the command; the commands then read the ones they use
//! through the same functions. Settings are read through an injected lookup (the process
//! environment in the binary, which the env file has been merged into by
//! [`crate::env_file`]), so tests can pass their own.
//!
//! This module owns the settings that only the binary can apply: where the configuration,
//! policy, example-question, LLM and benchmark files are (`DATASOURCE_CONFIG`,
//! `POLICIES_CONFIG`, `SAMPLE_QUESTIONS`, `LLM_CONFIG`, `BENCHMARK_CONFIG`), where the
//! schema store and the index live (`SCHEMA_STORE_BACKEND`, `SCHEMA_STORE_PATH`,
//! `VECTOR_STORE`, `VECTOR_STORE_COLLECTION`), the artifact store (`RESULT_ARTIFACT_*`)
//! and the variables of features this build does not have, which are refused.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use nl2sql_index::{IndexSettings, LexicalIndex, SchemaStore};
use nl2sql_orchestrator::{DatasourceRegistry, EngineOptions, PlannerChoice};
use nl2sql_planner_llm::LlmConfig;
use nl2sql_state::{ArtifactDurability, ArtifactsSection, Secret};

/// A source of settings: a variable's value, `None` when unset or blank.
pub(crate) type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment as a [`Lookup`]: blank values count as unset.
pub(crate) fn process_env(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.trim().is_empty())
}

/// Variables of features this build does not have: set, they stop every command, since
/// ignoring them would leave the operator believing they work.
const UNSUPPORTED: [(&str, &str); 3] = [
    (
        "EMBEDDING_MODEL",
        "this build has no embedding index: schema retrieval is lexical (BM25 over the schema documents) and uses no model; unset it",
    ),
    (
        "SECRETS_CONFIG",
        "this build has no secret providers besides the built-in `env` one (`${env:NAME}` references); unset it and put secrets in the environment or the env file",
    ),
    (
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "this build has no OTLP network exporter: OBSERVABILITY_EXPORTER=otlp writes one JSON record per line to standard error for a collector to read; unset it",
    ),
];

/// Parses every setting the binary knows, so that a bad value stops the command before it
/// does anything, whatever the command. Files are not read here (only named).
pub(crate) fn validate(lookup: Lookup<'_>) -> anyhow::Result<()> {
    for (key, why) in UNSUPPORTED {
        if lookup(key).is_some() {
            bail!("{key}: {why}");
        }
    }
    EngineOptions::default().with_env(lookup)?;
    DatasourceRegistry::empty().with_env(lookup)?;
    IndexSettings::default().with_env(lookup)?;
    Storage::of(lookup, Path::new("."))?;
    artifacts_setting(lookup, None, Path::new("."))?;
    config_path(None, lookup)?;
    offline_planner(lookup)?;
    Ok(())
}

/// The offline planner: `OFFLINE_MIN_CONFIDENCE` (a number from 0 to 1) replaces its
/// learned confidence threshold (0: it answers every reading it can place).
pub(crate) fn offline_planner(lookup: Lookup<'_>) -> anyhow::Result<PlannerChoice> {
    const KEY: &str = "OFFLINE_MIN_CONFIDENCE";
    let Some(v) = lookup(KEY) else {
        return Ok(PlannerChoice::Offline);
    };
    match v.trim().parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(PlannerChoice::OfflineMinConfidence(x)),
        _ => bail!("{KEY}: '{v}' is not a number from 0 to 1"),
    }
}

// ---------------------------------------------------------------------------------------
// Files.

/// The configuration file: `--config`, else `NL2SQL_CONFIG`, else `DATASOURCE_CONFIG` (the
/// spec's name for the datasource file; here the datasources live in `nl2sql.toml`). Both
/// variables naming different files is an error.
pub(crate) fn config_path(
    flag: Option<&PathBuf>,
    lookup: Lookup<'_>,
) -> anyhow::Result<Option<PathBuf>> {
    if let Some(path) = flag {
        return Ok(Some(path.clone()));
    }
    match (lookup("NL2SQL_CONFIG"), lookup("DATASOURCE_CONFIG")) {
        (Some(a), Some(b)) if a.trim() != b.trim() => bail!(
            "DATASOURCE_CONFIG: '{}' is another file than NL2SQL_CONFIG '{}': set one of them",
            b.trim(),
            a.trim()
        ),
        (Some(path), _) | (None, Some(path)) => Ok(Some(PathBuf::from(path.trim()))),
        (None, None) => Ok(None),
    }
}

/// `POLICIES_CONFIG`: the RBAC policy file (relative to the working directory); it wins
/// over the configuration's `policy` key.
pub(crate) fn policy_path(lookup: Lookup<'_>) -> Option<PathBuf> {
    lookup("POLICIES_CONFIG").map(|p| PathBuf::from(p.trim()))
}

/// `SAMPLE_QUESTIONS`: the example-questions file (relative to the working directory); it
/// wins over the configuration's `questions` key.
pub(crate) fn questions_path(lookup: Lookup<'_>) -> Option<PathBuf> {
    lookup("SAMPLE_QUESTIONS").map(|p| PathBuf::from(p.trim()))
}

/// The LLM file: `--llm-config`, else `LLM_CONFIG`, with the name to put in errors.
pub(crate) fn llm_config_path(
    flag: Option<&PathBuf>,
    lookup: Lookup<'_>,
) -> Option<(PathBuf, &'static str)> {
    match flag {
        Some(path) => Some((path.clone(), "--llm-config")),
        None => lookup("LLM_CONFIG").map(|p| (PathBuf::from(p.trim()), "LLM_CONFIG")),
    }
}

/// The benchmark matrix (`--bench-config`, else `BENCHMARK_CONFIG`): a map from a
/// configuration name to the content of an LLM file (spec: config-and-security.md §3.5),
/// as a TOML file with one table per configuration, or JSON by extension. Each entry is
/// checked as an LLM file is; errors name the variable (or flag), the file and the entry.
pub(crate) fn benchmark_matrix(
    flag: Option<&PathBuf>,
    lookup: Lookup<'_>,
) -> anyhow::Result<Vec<(String, LlmConfig)>> {
    let (path, key) = match flag {
        Some(path) => (path.clone(), "--bench-config"),
        None => match lookup("BENCHMARK_CONFIG") {
            Some(p) => (PathBuf::from(p.trim()), "BENCHMARK_CONFIG"),
            None => return Ok(Vec::new()),
        },
    };
    let at = || format!("{key}: '{}'", path.display());
    let text = std::fs::read_to_string(&path).with_context(at)?;
    let entries = parse_matrix(&text, path.extension().is_some_and(|e| e == "json"))
        .map_err(|e| anyhow::anyhow!("{}: {e}", at()))?;
    if entries.is_empty() {
        bail!("{}: names no configuration", at());
    }
    Ok(entries)
}

/// The entries of a benchmark matrix: in file order for JSON, in name order for TOML.
fn parse_matrix(text: &str, json: bool) -> Result<Vec<(String, LlmConfig)>, String> {
    let entries: Vec<(String, Result<LlmConfig, nl2sql_state::ConfigError>)> = if json {
        let map: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(text).map_err(|e| e.to_string())?;
        map.into_iter()
            .map(|(name, value)| {
                let config = LlmConfig::from_json_str(&value.to_string());
                (name, config)
            })
            .collect()
    } else {
        let table: toml::Table =
            toml::from_str(text).map_err(|e| e.to_string().trim().to_owned())?;
        let mut out = Vec::new();
        for (name, value) in table {
            let Some(entry) = value.as_table() else {
                return Err(format!(
                    "configuration '{name}' is not a table (one table of LLM settings per configuration)"
                ));
            };
            // Checked as an LLM file is, through its JSON form.
            let json = serde_json::to_value(entry).map_err(|e| e.to_string())?;
            out.push((name, LlmConfig::from_json_str(&json.to_string())));
        }
        out
    };
    entries
        .into_iter()
        .map(|(name, config)| {
            if name.trim().is_empty() {
                return Err("a configuration has an empty name".to_owned());
            }
            config
                .map(|c| (name.clone(), c))
                .map_err(|e| format!("configuration '{name}': {e}"))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// The schema store and the index.

/// Where an engine's schema store and index live, and their settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Storage {
    /// The schema store's directory; `None` keeps snapshots in memory
    /// (`SCHEMA_STORE_BACKEND=memory`).
    pub(crate) store_dir: Option<PathBuf>,
    /// The lexical index file.
    pub(crate) index_file: PathBuf,
    /// Versions kept, indexing workers, router thresholds, schema context limits.
    pub(crate) settings: IndexSettings,
}

/// The index file's name when `VECTOR_STORE_COLLECTION` sets none.
const DEFAULT_COLLECTION: &str = "lexical_index";

impl Storage {
    /// The storage of the engine whose directory is `engine_dir`:
    /// - `SCHEMA_STORE_BACKEND`: `file` (the default: one JSON file per datasource) or
    ///   `memory` (nothing written; every question re-indexes). `sqlite`, the reference's
    ///   default, is not available and is refused.
    /// - `SCHEMA_STORE_PATH`: the store's directory, instead of `<engine dir>/schema_store`;
    ///   each configuration gets its own subdirectory (the engine directory's name).
    /// - `VECTOR_STORE`: the index's directory, instead of `<engine dir>/index`; again one
    ///   subdirectory per configuration.
    /// - `VECTOR_STORE_COLLECTION`: the index file's name (`<collection>.json`; default
    ///   `lexical_index`): letters, digits, `_`, `-` and `.`.
    /// - the [`IndexSettings`] variables.
    pub(crate) fn of(lookup: Lookup<'_>, engine_dir: &Path) -> anyhow::Result<Storage> {
        let settings = IndexSettings::default().with_env(lookup)?;
        let key = engine_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "default".to_owned());
        let memory = match lookup("SCHEMA_STORE_BACKEND")
            .map(|v| v.trim().to_ascii_lowercase())
            .as_deref()
        {
            None | Some("file") => false,
            Some("memory") => true,
            Some("sqlite") => bail!(
                "SCHEMA_STORE_BACKEND: 'sqlite' is not available in this build: snapshots are JSON files (file, the default) or kept in memory (memory)"
            ),
            Some(other) => bail!("SCHEMA_STORE_BACKEND: '{other}': expected file or memory"),
        };
        let store_path = lookup("SCHEMA_STORE_PATH").map(|p| PathBuf::from(p.trim()));
        let store_dir = match (memory, store_path) {
            (true, Some(_)) => bail!(
                "SCHEMA_STORE_PATH: set, but SCHEMA_STORE_BACKEND is memory: nothing would be written there"
            ),
            (true, None) => None,
            (false, Some(path)) => {
                if path.is_file() {
                    bail!(
                        "SCHEMA_STORE_PATH: '{}' is a file; the schema store is a directory of JSON files",
                        path.display()
                    );
                }
                Some(path.join(&key))
            }
            (false, None) => Some(engine_dir.join("schema_store")),
        };
        let collection = match lookup("VECTOR_STORE_COLLECTION") {
            Some(name) => {
                let name = name.trim().to_owned();
                if !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
                    || name.starts_with('.')
                {
                    bail!(
                        "VECTOR_STORE_COLLECTION: '{name}': use letters, digits, '_', '-' and '.' (it names the index file)"
                    );
                }
                name
            }
            None => DEFAULT_COLLECTION.to_owned(),
        };
        let index_dir = match lookup("VECTOR_STORE") {
            Some(dir) => {
                let dir = PathBuf::from(dir.trim());
                if dir.is_file() {
                    bail!(
                        "VECTOR_STORE: '{}' is a file; the index lives in a directory",
                        dir.display()
                    );
                }
                dir.join(&key)
            }
            None => engine_dir.join("index"),
        };
        Ok(Storage {
            store_dir,
            index_file: index_dir.join(format!("{collection}.json")),
            settings,
        })
    }

    /// The schema store, keeping `SCHEMA_STORE_MAX_VERSIONS` versions.
    pub(crate) fn open_store(&self) -> nl2sql_state::Result<SchemaStore> {
        let store = match &self.store_dir {
            Some(dir) => SchemaStore::open_dir(dir)?,
            None => SchemaStore::in_memory(),
        };
        Ok(store.with_max_versions(self.settings.store_max_versions))
    }

    /// The index, with the router thresholds and schema context limits.
    pub(crate) fn open_index(&self) -> nl2sql_state::Result<LexicalIndex> {
        Ok(LexicalIndex::open_file(&self.index_file)?
            .with_retrieval_settings(self.settings.retrieval))
    }

    /// Whether anything was indexed here yet (the store's directory or the index file
    /// exists).
    pub(crate) fn exists(&self) -> bool {
        self.index_file.is_file() || self.store_dir.as_ref().is_some_and(|d| d.is_dir())
    }
}

// ---------------------------------------------------------------------------------------
// The artifact store.

/// `RESULT_ARTIFACT_BACKEND`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Local,
    S3,
    Adls,
    Gcs,
    Memory,
}

impl Backend {
    fn parse(v: &str) -> anyhow::Result<Backend> {
        Ok(match v.trim().to_ascii_lowercase().as_str() {
            "local" => Backend::Local,
            "s3" => Backend::S3,
            "adls" | "azure" => Backend::Adls,
            "gcs" => Backend::Gcs,
            "memory" => Backend::Memory,
            other => {
                bail!("RESULT_ARTIFACT_BACKEND: '{other}': expected local, s3, adls, gcs or memory")
            }
        })
    }

    fn name(self) -> &'static str {
        match self {
            Backend::Local => "local",
            Backend::S3 => "s3",
            Backend::Adls => "adls",
            Backend::Gcs => "gcs",
            Backend::Memory => "memory",
        }
    }

    /// Whether `uri` is a location of this backend.
    fn accepts(self, uri: &str) -> bool {
        let scheme = uri.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        matches!(
            (self, scheme.as_deref()),
            (Backend::Local, None | Some("file"))
                | (Backend::S3, Some("s3" | "s3a"))
                | (
                    Backend::Adls,
                    Some("az" | "azure" | "abfs" | "abfss" | "adl")
                )
                | (Backend::Gcs, Some("gs"))
                | (Backend::Memory, Some("memory"))
        )
    }
}

/// The artifact store to open: the section, the directory relative URIs start from, and
/// object-store options (credentials never come from a file).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ArtifactSetting {
    pub(crate) section: ArtifactsSection,
    pub(crate) base: PathBuf,
    pub(crate) options: Vec<(String, Secret)>,
}

/// The variables of one backend.
const BACKEND_VARS: [(&str, Backend); 5] = [
    ("RESULT_ARTIFACT_S3_BUCKET", Backend::S3),
    ("RESULT_ARTIFACT_S3_PREFIX", Backend::S3),
    ("RESULT_ARTIFACT_ADLS_ACCOUNT", Backend::Adls),
    ("RESULT_ARTIFACT_ADLS_CONTAINER", Backend::Adls),
    ("RESULT_ARTIFACT_ADLS_CONNECTION_STRING", Backend::Adls),
];

/// The artifact store setting, from the environment over the configuration's
/// `[artifacts]` section (`configured`, with the directory its relative URI starts from):
/// - `RESULT_ARTIFACT_BASE_URI` (relative to the working directory) wins over the
///   section's `uri`;
/// - `RESULT_ARTIFACT_BACKEND` (`local`, `s3`, `adls`, `gcs`, `memory`) says which kind of
///   store; the URI, from the environment or the section, must be one of its locations.
///   `s3` builds `s3://<RESULT_ARTIFACT_S3_BUCKET>[/<RESULT_ARTIFACT_S3_PREFIX>]` and
///   `adls` `az://<RESULT_ARTIFACT_ADLS_CONTAINER>` (account from
///   `RESULT_ARTIFACT_ADLS_ACCOUNT`, key-based auth from
///   `RESULT_ARTIFACT_ADLS_CONNECTION_STRING`) when no base URI is set; the variables of a
///   backend other than the chosen one are errors;
/// - `RESULT_ARTIFACT_PATH_TEMPLATE` and `RESULT_ARTIFACT_DURABILITY` win over the
///   section's keys, and alone apply to the default store under `data_dir`.
///
/// `None` keeps the engine's default store (`<data_dir>/artifacts`).
pub(crate) fn artifacts_setting(
    lookup: Lookup<'_>,
    configured: Option<(ArtifactsSection, PathBuf)>,
    data_dir: &Path,
) -> anyhow::Result<Option<ArtifactSetting>> {
    let durability = lookup("RESULT_ARTIFACT_DURABILITY")
        .map(|v| {
            v.parse::<ArtifactDurability>()
                .map_err(|e| anyhow::anyhow!("RESULT_ARTIFACT_DURABILITY: {e}"))
        })
        .transpose()?;
    let template = lookup("RESULT_ARTIFACT_PATH_TEMPLATE");
    let base_uri = lookup("RESULT_ARTIFACT_BASE_URI").map(|u| u.trim().to_owned());
    let backend = lookup("RESULT_ARTIFACT_BACKEND")
        .map(|v| Backend::parse(&v))
        .transpose()?;
    for (key, wants) in BACKEND_VARS {
        if lookup(key).is_some() && backend != Some(wants) {
            bail!(
                "{key}: only used with RESULT_ARTIFACT_BACKEND={}, but the backend is {}",
                wants.name(),
                backend.map_or("not set (local)", Backend::name)
            );
        }
    }
    if let (Some(b), Some(uri)) = (backend, &base_uri)
        && !b.accepts(uri)
    {
        bail!(
            "RESULT_ARTIFACT_BASE_URI: '{}' is not a location of the {} backend (RESULT_ARTIFACT_BACKEND)",
            nl2sql_state::redact_url(uri),
            b.name()
        );
    }
    let mut options: Vec<(String, Secret)> = Vec::new();
    let built: Option<String> = match backend {
        Some(Backend::S3) => match (
            lookup("RESULT_ARTIFACT_S3_BUCKET"),
            lookup("RESULT_ARTIFACT_S3_PREFIX"),
        ) {
            (Some(_), _) | (None, Some(_)) if base_uri.is_some() => bail!(
                "RESULT_ARTIFACT_S3_BUCKET: give the location either as RESULT_ARTIFACT_BASE_URI or as the bucket and prefix, not both"
            ),
            (Some(bucket), prefix) => {
                let bucket = bucket.trim();
                if bucket.contains(['/', ':']) {
                    bail!("RESULT_ARTIFACT_S3_BUCKET: '{bucket}' is not a bucket name");
                }
                let prefix = prefix
                    .map(|p| p.trim().trim_matches('/').to_owned())
                    .filter(|p| !p.is_empty());
                Some(match prefix {
                    Some(p) => format!("s3://{bucket}/{p}"),
                    None => format!("s3://{bucket}"),
                })
            }
            (None, Some(_)) => {
                bail!("RESULT_ARTIFACT_S3_PREFIX: set, but RESULT_ARTIFACT_S3_BUCKET is not")
            }
            (None, None) => None,
        },
        Some(Backend::Adls) => {
            if let Some(account) = lookup("RESULT_ARTIFACT_ADLS_ACCOUNT") {
                options.push((
                    "azure_storage_account_name".to_owned(),
                    Secret::new(account.trim()),
                ));
            }
            if let Some(conn) = lookup("RESULT_ARTIFACT_ADLS_CONNECTION_STRING") {
                options.push(("connection_string".to_owned(), Secret::new(conn.trim())));
            }
            match lookup("RESULT_ARTIFACT_ADLS_CONTAINER") {
                Some(_) if base_uri.is_some() => bail!(
                    "RESULT_ARTIFACT_ADLS_CONTAINER: give the location either as RESULT_ARTIFACT_BASE_URI or as the container, not both"
                ),
                Some(container) => {
                    let container = container.trim();
                    if container.contains(['/', ':', '@']) {
                        bail!(
                            "RESULT_ARTIFACT_ADLS_CONTAINER: '{container}' is not a container name"
                        );
                    }
                    Some(format!("az://{container}"))
                }
                None => None,
            }
        }
        Some(Backend::Memory) if base_uri.is_none() => Some("memory://".to_owned()),
        _ => None,
    };
    let env_uri = base_uri.or(built);
    let setting = match (env_uri, configured) {
        (Some(uri), _) => Some(ArtifactSetting {
            section: ArtifactsSection {
                uri,
                path_template: template,
                durability: durability.unwrap_or_default(),
            },
            base: PathBuf::from("."),
            options,
        }),
        (None, Some((mut section, base))) => {
            if let Some(b) = backend
                && !b.accepts(&section.uri)
            {
                bail!(
                    "RESULT_ARTIFACT_BACKEND: {} does not match the configuration's [artifacts] uri '{}'",
                    b.name(),
                    nl2sql_state::redact_url(&section.uri)
                );
            }
            if let Some(t) = template {
                section.path_template = Some(t);
            }
            if let Some(d) = durability {
                section.durability = d;
            }
            Some(ArtifactSetting {
                section,
                base,
                options,
            })
        }
        (None, None) => match backend {
            Some(Backend::S3) => bail!(
                "RESULT_ARTIFACT_BACKEND: s3 needs a location: RESULT_ARTIFACT_S3_BUCKET (and RESULT_ARTIFACT_S3_PREFIX) or RESULT_ARTIFACT_BASE_URI=s3://bucket/prefix"
            ),
            Some(Backend::Adls) => bail!(
                "RESULT_ARTIFACT_BACKEND: adls needs a location: RESULT_ARTIFACT_ADLS_CONTAINER or RESULT_ARTIFACT_BASE_URI=az://container/prefix"
            ),
            Some(Backend::Gcs) => bail!(
                "RESULT_ARTIFACT_BACKEND: gcs needs a location: RESULT_ARTIFACT_BASE_URI=gs://bucket/prefix"
            ),
            Some(Backend::Local | Backend::Memory) | None
                if durability.is_some() || template.is_some() =>
            {
                // Relative to the data directory (which may itself be relative).
                Some(ArtifactSetting {
                    section: ArtifactsSection {
                        uri: "artifacts".to_owned(),
                        path_template: template,
                        durability: durability.unwrap_or_default(),
                    },
                    base: data_dir.to_path_buf(),
                    options,
                })
            }
            _ => None,
        },
    };
    Ok(setting)
}

#[cfg(test)]
mod tests;
