//! The datasource registry (spec: adapters.md §1): configured datasources by id, each with
//! its adapter (connected lazily, once) and its circuit breaker. A library user may also
//! register an adapter they built themselves ([`DatasourceRegistry::with_adapter`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nl2sql_adapter::{
    BreakerConfig, CircuitBreaker, DEFAULT_MAX_BYTES, DEFAULT_ROW_LIMIT,
    DEFAULT_STATEMENT_TIMEOUT_MS, DatasourceAdapter, Limits, ResultError, ResultErrorCode,
};
use nl2sql_state::{
    ConfigError, ConfigFile, DatasourceConfig, Dialect, Engine, Secret, SecretSource,
};
use tokio::sync::OnceCell;

/// One registered datasource.
struct Entry {
    config: DatasourceConfig,
    breaker: Arc<CircuitBreaker>,
    adapter: OnceCell<Arc<dyn DatasourceAdapter>>,
}

/// Datasources by id. Adapters are created on first use and then shared; a datasource
/// that cannot be reached fails only the calls that need it.
pub struct DatasourceRegistry {
    base_dir: PathBuf,
    entries: BTreeMap<String, Entry>,
}

impl std::fmt::Debug for DatasourceRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatasourceRegistry")
            .field("base_dir", &self.base_dir)
            .field("ids", &self.entries.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl DatasourceRegistry {
    /// A registry of every datasource of `file`, secrets resolved from `secrets`.
    /// Relative file paths in URLs are taken relative to `base_dir` (the configuration
    /// file's directory).
    pub fn from_config(
        file: &ConfigFile,
        base_dir: &Path,
        secrets: &dyn SecretSource,
    ) -> Result<Self, ConfigError> {
        let mut registry = DatasourceRegistry {
            base_dir: base_dir.to_path_buf(),
            entries: BTreeMap::new(),
        };
        for config in file.resolve(secrets)? {
            registry.insert(config);
        }
        Ok(registry)
    }

    /// A registry of the one ad-hoc datasource of `--db URL`, with default limits;
    /// relative paths are taken relative to the current directory.
    pub fn ad_hoc(url: &str) -> Result<Self, ConfigError> {
        let mut registry = DatasourceRegistry {
            base_dir: PathBuf::from("."),
            entries: BTreeMap::new(),
        };
        registry.insert(DatasourceConfig::ad_hoc(url)?);
        Ok(registry)
    }

    /// A registry with no datasource (add adapters with [`DatasourceRegistry::with_adapter`]).
    pub fn empty() -> Self {
        DatasourceRegistry {
            base_dir: PathBuf::from("."),
            entries: BTreeMap::new(),
        }
    }

    /// The same registry with `adapter`, already built, registered under `adapter.id()`
    /// (replacing a datasource of that id). Its configuration is derived from the adapter:
    /// the engine from its engine type (else its dialect), its limits, and a placeholder
    /// URL `<engine>://<id>` that holds no credential and is never connected to. It gets
    /// its own circuit breaker, like a configured datasource.
    #[must_use]
    pub fn with_adapter(mut self, adapter: Arc<dyn DatasourceAdapter>) -> Self {
        self.insert_adapter(adapter);
        self
    }

    /// Registers `adapter`, already built, under `adapter.id()`; see
    /// [`DatasourceRegistry::with_adapter`].
    pub fn insert_adapter(&mut self, adapter: Arc<dyn DatasourceAdapter>) {
        let config = config_of_adapter(adapter.as_ref());
        self.insert_with(config, OnceCell::new_with(Some(adapter)));
    }

    fn insert(&mut self, config: DatasourceConfig) {
        self.insert_with(config, OnceCell::new());
    }

    fn insert_with(
        &mut self,
        config: DatasourceConfig,
        adapter: OnceCell<Arc<dyn DatasourceAdapter>>,
    ) {
        let breaker = Arc::new(CircuitBreaker::new(
            format!("db:{}", config.id),
            BreakerConfig::default(),
        ));
        self.entries.insert(
            config.id.clone(),
            Entry {
                config,
                breaker,
                adapter,
            },
        );
    }

    /// The same registry with `defaults` (row limit, byte limit, statement timeout in ms,
    /// as [`default_limits_from`] reads them) for every datasource that sets none of its
    /// own. Adapters already connected keep the limits they were made with.
    #[must_use]
    pub fn with_default_limits(mut self, defaults: [Option<u64>; 3]) -> Self {
        let [rows, bytes, timeout] = defaults;
        for entry in self.entries.values_mut() {
            let c = &mut entry.config;
            c.row_limit = c.row_limit.or(rows);
            c.max_bytes = c.max_bytes.or(bytes);
            c.statement_timeout_ms = c.statement_timeout_ms.or(timeout);
        }
        self
    }

    /// The datasource ids, sorted.
    pub fn ids(&self) -> Vec<&str> {
        self.entries.keys().map(String::as_str).collect()
    }

    /// The configuration of `id`.
    pub fn config(&self, id: &str) -> Result<&DatasourceConfig, ConfigError> {
        self.entry(id).map(|e| &e.config)
    }

    /// The effective limits of `id`: its configured limits, defaults for the rest.
    pub fn limits(&self, id: &str) -> Result<Limits, ConfigError> {
        self.config(id).map(limits_of)
    }

    /// The circuit breaker of `id`.
    pub fn breaker(&self, id: &str) -> Result<Arc<CircuitBreaker>, ConfigError> {
        self.entry(id).map(|e| Arc::clone(&e.breaker))
    }

    fn entry(&self, id: &str) -> Result<&Entry, ConfigError> {
        self.entries
            .get(id)
            .ok_or_else(|| ConfigError::UnknownDatasource {
                id: id.to_owned(),
                known: self.ids().join(", "),
            })
    }

    /// The adapter of `id`, created on first use (through its circuit breaker: while the
    /// breaker is open, no connection is attempted).
    pub async fn adapter(&self, id: &str) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
        let entry = self.entry(id).map_err(|e| {
            ResultError::new(ResultErrorCode::ServiceUnavailable, e.to_string()).at("connect", id)
        })?;
        entry
            .adapter
            .get_or_try_init(|| async {
                entry.breaker.before_call()?;
                let made = connect(&entry.config, &self.base_dir).await;
                entry.breaker.record(made.as_ref().err());
                made.map_err(|e| e.at("connect", id))
            })
            .await
            .cloned()
    }
}

/// The configuration of a pre-built adapter: its id, engine and limits, and a placeholder
/// URL (`<engine>://<id>`).
fn config_of_adapter(adapter: &dyn DatasourceAdapter) -> DatasourceConfig {
    let id = adapter.id().to_owned();
    let engine = Engine::from_url(&format!("{}://", adapter.engine_type())).unwrap_or(
        match adapter.dialect() {
            Dialect::DuckDb => Engine::Duckdb,
            Dialect::Postgres => Engine::Postgres,
            Dialect::MySql => Engine::Mysql,
            Dialect::Sqlite | Dialect::Generic => Engine::Sqlite,
        },
    );
    let limits = adapter.limits();
    DatasourceConfig {
        url: Secret::new(format!("{engine}://{id}")),
        id,
        description: None,
        engine,
        password: None,
        statement_timeout_ms: Some(limits.statement_timeout_ms),
        row_limit: Some(limits.row_limit),
        max_bytes: Some(limits.max_bytes),
        tags: BTreeMap::new(),
    }
}

/// The limits of `config`, defaults filled in.
/// The environment variables that set the limits of datasources that set none
/// (spec: config-and-security.md §2).
pub const DEFAULT_LIMIT_VARS: [&str; 3] = [
    "DEFAULT_ROW_LIMIT",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_STATEMENT_TIMEOUT_MS",
];

/// The default limits `lookup` sets (`DEFAULT_ROW_LIMIT`, `DEFAULT_MAX_BYTES`,
/// `DEFAULT_STATEMENT_TIMEOUT_MS`), each `None` when unset. A value that is not a whole
/// number above 0 is an error naming the variable.
pub fn default_limits_from(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<[Option<u64>; 3], ConfigError> {
    let mut out = [None; 3];
    for (slot, key) in out.iter_mut().zip(DEFAULT_LIMIT_VARS) {
        if let Some(v) = lookup(key).filter(|v| !v.trim().is_empty()) {
            match v.trim().parse::<u64>() {
                Ok(n) if n > 0 => *slot = Some(n),
                _ => {
                    return Err(ConfigError::Invalid {
                        key: key.to_owned(),
                        message: format!("'{v}' is not a whole number > 0"),
                    });
                }
            }
        }
    }
    Ok(out)
}

/// The effective limits of `config`: its own, else the built-in defaults.
pub fn limits_of(config: &DatasourceConfig) -> Limits {
    Limits {
        row_limit: config.row_limit.unwrap_or(DEFAULT_ROW_LIMIT),
        statement_timeout_ms: config
            .statement_timeout_ms
            .unwrap_or(DEFAULT_STATEMENT_TIMEOUT_MS),
        max_bytes: config.max_bytes.unwrap_or(DEFAULT_MAX_BYTES),
    }
}

/// The URL the adapter receives: relative file paths made absolute against `base_dir`,
/// and a separately configured password put into the user info (percent-encoded).
pub fn effective_url(config: &DatasourceConfig, base_dir: &Path) -> String {
    let url = config.url.expose();
    if !config.engine.is_server() {
        return absolute_file_url(url, base_dir);
    }
    match &config.password {
        Some(password) => with_password(url, password.expose()),
        None => url.to_owned(),
    }
}

fn absolute_file_url(url: &str, base_dir: &Path) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    if rest.starts_with('/') || rest.starts_with(':') || rest.is_empty() {
        return url.to_owned();
    }
    let path = base_dir.join(rest);
    format!("{scheme}://{}", path.display())
}

fn with_password(url: &str, password: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    if userinfo.contains(':') {
        return url.to_owned();
    }
    format!(
        "{scheme}://{userinfo}:{}@{host}{tail}",
        percent_encode(password)
    )
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Creates the adapter of `config` (the compile-time registry: one cargo feature per
/// engine). An engine whose feature is off is `SERVICE_UNAVAILABLE` with a message
/// saying so.
pub async fn connect(
    config: &DatasourceConfig,
    base_dir: &Path,
) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
    let url = effective_url(config, base_dir);
    let limits = limits_of(config);
    let id = config.id.as_str();
    match config.engine {
        #[cfg(feature = "sqlite")]
        Engine::Sqlite => {
            let adapter = nl2sql_adapter_sqlite::SqliteAdapter::from_url(id, &url, limits)?;
            Ok(Arc::new(adapter))
        }
        #[cfg(feature = "duckdb")]
        Engine::Duckdb => {
            let adapter = nl2sql_adapter_duckdb::DuckDbAdapter::from_url(id, &url, limits)?;
            Ok(Arc::new(adapter))
        }
        #[cfg(feature = "postgres")]
        Engine::Postgres => {
            let adapter =
                nl2sql_adapter_postgres::PostgresAdapter::from_url(id, &url, limits).await?;
            Ok(Arc::new(adapter))
        }
        #[cfg(feature = "mysql")]
        Engine::Mysql => {
            let adapter = nl2sql_adapter_mysql::MySqlAdapter::from_url(id, &url, limits).await?;
            Ok(Arc::new(adapter))
        }
        #[allow(unreachable_patterns)] // reason: reachable when an engine's feature is off
        engine => Err(ResultError::new(
            ResultErrorCode::ServiceUnavailable,
            format!("this build of nl2sql has no {engine} adapter (cargo feature '{engine}')"),
        )),
    }
}
