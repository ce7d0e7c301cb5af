//! The configuration file `nl2sql.toml` (spec: config-and-security.md §3.1 and §4,
//! adapters.md §1): datasources with their URLs and limits, and the policy file path.
//!
//! Parsing is strict: unknown keys, an unknown URL scheme, a duplicate id or a zero limit
//! is an error naming the key (`datasources[1].url`). Secrets are references
//! (`${env:NAME}`) resolved by [`ConfigFile::resolve`] into [`Secret`]s, whose `Debug` and
//! `Display` never print the value. Reading the file is the caller's job: this module
//! parses text.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::Dialect;

/// The configuration file format version this build reads.
pub const CONFIG_VERSION: u32 = 1;

/// The row limit of a datasource that sets none (`DEFAULT_ROW_LIMIT`, spec:
/// config-and-security.md §3). The SQL generator and the adapters both use it.
pub const DEFAULT_ROW_LIMIT: u64 = 10_000;

/// A value that must never be printed: a password, or a URL that may hold one.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `value`.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value, for the one place that needs it (the driver).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// The database engine behind a datasource, chosen by its URL scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// `duckdb://` (the embedded default).
    Duckdb,
    /// `sqlite://`.
    Sqlite,
    /// `postgres://` or `postgresql://`.
    Postgres,
    /// `mysql://` or `mariadb://`.
    Mysql,
}

impl Engine {
    /// Every engine, in a stable order.
    pub const ALL: [Engine; 4] = [
        Engine::Duckdb,
        Engine::Sqlite,
        Engine::Postgres,
        Engine::Mysql,
    ];

    /// The engine of `url`, from its scheme (case-insensitive); `None` for an unknown or
    /// missing scheme.
    pub fn from_url(url: &str) -> Option<Engine> {
        let (scheme, _) = url.split_once(':')?;
        let scheme = scheme.to_ascii_lowercase();
        Engine::ALL
            .into_iter()
            .find(|e| e.schemes().contains(&scheme.as_str()))
    }

    /// The URL schemes that select the engine, the canonical one first.
    pub fn schemes(self) -> &'static [&'static str] {
        match self {
            Engine::Duckdb => &["duckdb"],
            Engine::Sqlite => &["sqlite"],
            Engine::Postgres => &["postgres", "postgresql"],
            Engine::Mysql => &["mysql", "mariadb"],
        }
    }

    /// The engine's name (`duckdb`, `sqlite`, `postgres`, `mysql`).
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Duckdb => "duckdb",
            Engine::Sqlite => "sqlite",
            Engine::Postgres => "postgres",
            Engine::Mysql => "mysql",
        }
    }

    /// The SQL dialect the engine speaks.
    pub fn dialect(self) -> Dialect {
        match self {
            Engine::Duckdb => Dialect::DuckDb,
            Engine::Sqlite => Dialect::Sqlite,
            Engine::Postgres => Dialect::Postgres,
            Engine::Mysql => Dialect::MySql,
        }
    }

    /// Whether the engine is a server reached over the network (rather than a file).
    pub fn is_server(self) -> bool {
        matches!(self, Engine::Postgres | Engine::Mysql)
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a configuration cannot be used. Each variant names the key at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not valid TOML, or a key or value of the wrong shape.
    #[error("configuration is malformed: {0}")]
    Parse(String),
    /// A value is present but not acceptable.
    #[error("{key}: {message}")]
    Invalid {
        /// The key, such as `datasources[1].url`.
        key: String,
        /// What is wrong, and what would be right.
        message: String,
    },
    /// A secret reference cannot be resolved.
    #[error("{key}: {message}")]
    Secret {
        /// The key holding the reference.
        key: String,
        /// What is wrong (never the secret's value).
        message: String,
    },
    /// `--datasource ID` names no datasource of the file.
    #[error("unknown datasource '{id}' (configured: {known})")]
    UnknownDatasource {
        /// The id asked for.
        id: String,
        /// The configured ids, comma-separated.
        known: String,
    },
}

fn invalid(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        message: message.into(),
    }
}

/// The file as written: `version`, an optional `policy` path and `[[datasources]]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Format version ([`CONFIG_VERSION`]).
    pub version: u32,
    /// Path of the RBAC policy file (JSON), relative to the configuration file.
    #[serde(default)]
    pub policy: Option<String>,
    /// Path of a schema-documentation file (JSON: table and column descriptions by
    /// datasource), relative to the configuration file; indexed with the schemas.
    #[serde(default)]
    pub schema_docs: Option<String>,
    /// Path of an example-questions file (JSON: questions by datasource), relative to the
    /// configuration file; indexed, and shown to the decomposer.
    #[serde(default)]
    pub questions: Option<String>,
    /// Pipeline settings (`[engine]`).
    #[serde(default)]
    pub engine: EngineSection,
    /// Where result artifacts go (`[artifacts]`); default: a local directory under the
    /// data directory.
    #[serde(default)]
    pub artifacts: Option<ArtifactsSection>,
    /// The datasources.
    #[serde(default)]
    pub datasources: Vec<DatasourceEntry>,
}

/// `SCHEMA_VERSION_MISMATCH_POLICY`: what a question does when the index was built from
/// another schema version than the schema store's latest (spec: pipeline.md §3 step 6).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MismatchPolicy {
    /// Go on, with a warning in the result (the default).
    #[default]
    Warn,
    /// Stop with `INVALID_STATE` naming the datasources.
    Fail,
    /// Go on silently.
    Ignore,
}

/// The `[engine]` section: pipeline settings; every key is optional (the spec's defaults).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineSection {
    /// `SCHEMA_VERSION_MISMATCH_POLICY`: `warn`, `fail` or `ignore`.
    #[serde(default)]
    pub schema_version_mismatch: Option<MismatchPolicy>,
    /// `MAX_PARALLEL_SCANS`: scans of one layer that run at once.
    #[serde(default)]
    pub max_parallel_scans: Option<usize>,
    /// `SQL_AGENT_MAX_RETRIES`: re-plans per scan after the first attempt.
    #[serde(default)]
    pub max_retries: Option<u32>,
    /// `GLOBAL_TIMEOUT_SEC`: the longest a question may take, in seconds.
    #[serde(default)]
    pub global_timeout_sec: Option<f64>,
    /// `PHYSICAL_MAX_COST`: a higher estimated cost blocks a query.
    #[serde(default)]
    pub max_cost: Option<f64>,
}

/// The `[artifacts]` section (spec: storage.md §1, config-and-security.md §3): the
/// `RESULT_ARTIFACT_*` settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactsSection {
    /// `RESULT_ARTIFACT_BASE_URI`: `file:///dir`, a relative or absolute directory,
    /// `s3://bucket/prefix`, `az://container/prefix`, `gs://bucket/prefix` or `memory://`.
    pub uri: String,
    /// `RESULT_ARTIFACT_PATH_TEMPLATE` (default: the spec's template).
    #[serde(default)]
    pub path_template: Option<String>,
    /// `RESULT_ARTIFACT_DURABILITY`: `atomic` (the default) or `synced`; local stores only.
    #[serde(default)]
    pub durability: ArtifactDurability,
}

/// How far a local artifact write goes before the scan counts as done. Both are atomic: an
/// artifact is written under a temporary name and renamed, so a crash or a cancellation
/// never leaves a partial file under the final name; a reader recomputes the content hash,
/// so even a file torn by a power loss is refused, never misread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactDurability {
    /// Write, rename: the file survives the process, not necessarily a power loss (the
    /// operating system writes it back later). About 1.3 ms less per scan than `Synced`.
    #[default]
    Atomic,
    /// Also `fsync` the file before the rename and the directory after it: the artifact
    /// survives a power loss once the scan reports it. For artifacts other systems consume.
    Synced,
}

impl ArtifactDurability {
    /// The setting's spelling in files and the environment.
    pub fn as_str(self) -> &'static str {
        match self {
            ArtifactDurability::Atomic => "atomic",
            ArtifactDurability::Synced => "synced",
        }
    }
}

impl std::str::FromStr for ArtifactDurability {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "atomic" => Ok(ArtifactDurability::Atomic),
            "synced" => Ok(ArtifactDurability::Synced),
            other => Err(format!(
                "'{other}' is not an artifact durability (expected atomic or synced)"
            )),
        }
    }
}

/// One `[[datasources]]` entry as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasourceEntry {
    /// Unique id: letters, digits, `_` and `-`.
    pub id: String,
    /// What the datasource holds (shown to planners and in `datasources list`).
    #[serde(default)]
    pub description: Option<String>,
    /// `duckdb:///path`, `sqlite:///path`, `postgres://user@host:port/db`,
    /// `mysql://user@host:port/db`, or a whole secret reference `${env:NAME}`.
    pub url: String,
    /// The password, normally a secret reference such as `${env:PGPASSWORD}`; it is
    /// added to the URL's user info when the adapter connects.
    #[serde(default)]
    pub password: Option<String>,
    /// Statement timeout in milliseconds.
    #[serde(default)]
    pub statement_timeout_ms: Option<u64>,
    /// Row limit of one result.
    #[serde(default)]
    pub row_limit: Option<u64>,
    /// Byte limit of one result.
    #[serde(default)]
    pub max_bytes: Option<u64>,
    /// Free-form tags.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Where the datasource's statements run: `"in-process"` (the default) or
    /// `"process"` (a disposable worker process, for the embedded engines only).
    #[serde(default, skip_serializing_if = "Isolation::is_default")]
    pub isolation: Isolation,
}

/// Where a datasource's statements run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    /// In the engine's own process (the adapter's sandbox guards it).
    #[default]
    InProcess,
    /// In a pool of child processes speaking the worker protocol (`nl2sql worker`): a
    /// crash, a hang or runaway memory in the embedded engine kills a child, never the
    /// caller. SQLite and DuckDB only.
    Process,
}

impl Isolation {
    /// `in-process` or `process`, as written in the configuration file.
    pub fn as_str(self) -> &'static str {
        match self {
            Isolation::InProcess => "in-process",
            Isolation::Process => "process",
        }
    }

    fn is_default(&self) -> bool {
        *self == Isolation::InProcess
    }
}

/// A datasource ready to connect: the secrets resolved, the engine known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasourceConfig {
    /// Unique id.
    pub id: String,
    /// What the datasource holds.
    pub description: Option<String>,
    /// The engine, from the URL's scheme.
    pub engine: Engine,
    /// The URL; may hold credentials, so it is a [`Secret`].
    pub url: Secret,
    /// The password, when given apart from the URL.
    pub password: Option<Secret>,
    /// Statement timeout in milliseconds; `None` means the default.
    pub statement_timeout_ms: Option<u64>,
    /// Row limit; `None` means the default.
    pub row_limit: Option<u64>,
    /// Byte limit; `None` means the default.
    pub max_bytes: Option<u64>,
    /// Free-form tags.
    pub tags: BTreeMap<String, String>,
    /// Where its statements run.
    pub isolation: Isolation,
}

impl DatasourceConfig {
    /// An ad-hoc datasource for `--db URL`: default limits, and an id taken from the
    /// URL (the database name, or the file stem).
    pub fn ad_hoc(url: &str) -> Result<DatasourceConfig, ConfigError> {
        let engine = Engine::from_url(url).ok_or_else(|| {
            invalid(
                "--db",
                "unknown or missing URL scheme: expected duckdb://, sqlite://, postgres:// or mysql://",
            )
        })?;
        let id =
            ad_hoc_id(url).ok_or_else(|| invalid("--db", "the URL names no database or file"))?;
        Ok(DatasourceConfig {
            id,
            description: None,
            engine,
            url: Secret::new(url),
            password: None,
            statement_timeout_ms: None,
            row_limit: None,
            max_bytes: None,
            tags: BTreeMap::new(),
            isolation: Isolation::InProcess,
        })
    }

    /// The URL with every credential removed, safe for logs and `datasources list`.
    pub fn redacted_url(&self) -> String {
        redact_url(self.url.expose())
    }
}

/// `url` with the user-info part's password replaced by `***` and the query string
/// dropped (it may carry credentials).
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "***".to_owned();
    };
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or_default();
            if userinfo.contains(':') {
                format!("{user}:***@{host}")
            } else {
                format!("{user}@{host}")
            }
        }
        None => authority.to_owned(),
    };
    format!("{scheme}://{authority}{path}")
}

/// The id of an ad-hoc datasource: the last path segment without its extension (a file
/// stem or a database name), made of id characters only.
fn ad_hoc_id(url: &str) -> Option<String> {
    let (_, rest) = url.split_once(':')?;
    let rest = rest.trim_start_matches('/');
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let last = rest.rsplit('/').next().unwrap_or_default();
    let last = last.rsplit_once('@').map_or(last, |(_, host)| host);
    let stem = match last.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => last,
    };
    let stem = if stem == ":memory:" { "memory" } else { stem };
    let id: String = stem
        .chars()
        .map(|c| if is_id_char(c) { c } else { '_' })
        .collect();
    (!id.is_empty() && id.chars().any(|c| c.is_ascii_alphanumeric())).then_some(id)
}

fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Where secret references are resolved. `env` is built in ([`EnvSecrets`]); other
/// providers (cloud secret managers) plug in here.
pub trait SecretSource {
    /// The value of `key` from `provider`, `Ok(None)` when the provider has no such key,
    /// `Err` when the provider is unknown.
    fn lookup(&self, provider: &str, key: &str) -> Result<Option<String>, String>;
}

/// The `env` provider: `${env:NAME}` is the environment variable `NAME`.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnvSecrets;

impl SecretSource for EnvSecrets {
    fn lookup(&self, provider: &str, key: &str) -> Result<Option<String>, String> {
        if provider == "env" {
            Ok(std::env::var(key).ok())
        } else {
            Err(format!("unknown secret provider '{provider}'"))
        }
    }
}

/// Resolves `value` if it is, as a whole, a secret reference `${provider:key}`; any other
/// value is returned as is (no interpolation inside longer strings).
pub fn resolve_secret(
    value: &str,
    key: &str,
    secrets: &dyn SecretSource,
) -> Result<Secret, ConfigError> {
    let Some(inner) = value.strip_prefix("${").and_then(|v| v.strip_suffix('}')) else {
        return Ok(Secret::new(value));
    };
    let err = |message: String| ConfigError::Secret {
        key: key.to_owned(),
        message,
    };
    let (provider, name) = inner
        .split_once(':')
        .ok_or_else(|| err("invalid secret format: expected ${provider:key}".to_owned()))?;
    match secrets.lookup(provider, name) {
        Ok(Some(v)) => Ok(Secret::new(v)),
        Ok(None) => Err(err(format!("secret not found: ${{{provider}:{name}}}"))),
        Err(e) => Err(err(e)),
    }
}

impl ConfigFile {
    /// Parses and checks a configuration file's text.
    pub fn from_toml_str(text: &str) -> Result<ConfigFile, ConfigError> {
        let file: ConfigFile = toml::from_str(text)
            .map_err(|e| ConfigError::Parse(e.to_string().trim().to_owned()))?;
        file.check()?;
        Ok(file)
    }

    fn check(&self) -> Result<(), ConfigError> {
        if self.version != CONFIG_VERSION {
            return Err(invalid(
                "version",
                format!(
                    "unsupported version {} (this build reads version {CONFIG_VERSION})",
                    self.version
                ),
            ));
        }
        if self.engine.max_parallel_scans == Some(0) {
            return Err(invalid(
                "engine.max_parallel_scans",
                "must be greater than 0",
            ));
        }
        for (key, v) in [
            ("engine.global_timeout_sec", self.engine.global_timeout_sec),
            ("engine.max_cost", self.engine.max_cost),
        ] {
            if v.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
                return Err(invalid(key, "must be a number greater than 0"));
            }
        }
        // A timeout no `Duration` holds would otherwise be dropped without a word.
        if self
            .engine
            .global_timeout_sec
            .is_some_and(|v| std::time::Duration::try_from_secs_f64(v).is_err())
        {
            return Err(invalid("engine.global_timeout_sec", "is out of range"));
        }
        if let Some(a) = &self.artifacts
            && a.uri.trim().is_empty()
        {
            return Err(invalid("artifacts.uri", "must not be empty"));
        }
        let mut seen = BTreeSet::new();
        for (i, ds) in self.datasources.iter().enumerate() {
            let at = |k: &str| format!("datasources[{i}].{k}");
            if ds.id.is_empty() || !ds.id.chars().all(is_id_char) {
                return Err(invalid(
                    at("id"),
                    format!("invalid id '{}': use letters, digits, '_' and '-'", ds.id),
                ));
            }
            if !seen.insert(ds.id.as_str()) {
                return Err(invalid(at("id"), format!("duplicate id '{}'", ds.id)));
            }
            if !is_secret_ref(&ds.url) && Engine::from_url(&ds.url).is_none() {
                return Err(invalid(
                    at("url"),
                    "unknown or missing URL scheme: expected duckdb://, sqlite://, postgres:// or mysql://",
                ));
            }
            for (name, v) in [
                ("statement_timeout_ms", ds.statement_timeout_ms),
                ("row_limit", ds.row_limit),
                ("max_bytes", ds.max_bytes),
            ] {
                if v == Some(0) {
                    return Err(invalid(at(name), "must be greater than 0"));
                }
            }
            if ds.isolation == Isolation::Process
                && Engine::from_url(&ds.url).is_some_and(Engine::is_server)
            {
                return Err(invalid(
                    at("isolation"),
                    "\"process\" runs only the embedded engines (sqlite, duckdb) in worker processes",
                ));
            }
        }
        Ok(())
    }

    /// The datasource ids, in file order.
    pub fn ids(&self) -> Vec<&str> {
        self.datasources.iter().map(|d| d.id.as_str()).collect()
    }

    /// Every datasource with its secrets resolved from `secrets`.
    pub fn resolve(
        &self,
        secrets: &dyn SecretSource,
    ) -> Result<Vec<DatasourceConfig>, ConfigError> {
        (0..self.datasources.len())
            .map(|i| self.resolve_entry(i, secrets))
            .collect()
    }

    /// The datasource `id` with its secrets resolved from `secrets`.
    pub fn datasource(
        &self,
        id: &str,
        secrets: &dyn SecretSource,
    ) -> Result<DatasourceConfig, ConfigError> {
        let i = self
            .datasources
            .iter()
            .position(|d| d.id == id)
            .ok_or_else(|| ConfigError::UnknownDatasource {
                id: id.to_owned(),
                known: self.ids().join(", "),
            })?;
        self.resolve_entry(i, secrets)
    }

    fn resolve_entry(
        &self,
        i: usize,
        secrets: &dyn SecretSource,
    ) -> Result<DatasourceConfig, ConfigError> {
        let ds = &self.datasources[i];
        let url_key = format!("datasources[{i}].url");
        let url = resolve_secret(&ds.url, &url_key, secrets)?;
        let engine = Engine::from_url(url.expose()).ok_or_else(|| {
            invalid(
                &url_key,
                "the secret's URL has an unknown or missing scheme: expected duckdb://, sqlite://, postgres:// or mysql://",
            )
        })?;
        let password = ds
            .password
            .as_deref()
            .map(|p| resolve_secret(p, &format!("datasources[{i}].password"), secrets))
            .transpose()?;
        Ok(DatasourceConfig {
            id: ds.id.clone(),
            description: ds.description.clone(),
            engine,
            url,
            password,
            statement_timeout_ms: ds.statement_timeout_ms,
            row_limit: ds.row_limit,
            max_bytes: ds.max_bytes,
            tags: ds.tags.clone(),
            isolation: ds.isolation,
        })
    }
}

fn is_secret_ref(value: &str) -> bool {
    value.starts_with("${") && value.ends_with('}')
}

#[cfg(test)]
mod tests;
