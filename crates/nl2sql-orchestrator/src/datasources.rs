//! The datasource registry (spec: adapters.md §1): configured datasources by id, each with
//! its adapter (connected lazily, once) and its circuit breaker. A library user may also
//! register an adapter they built themselves ([`DatasourceRegistry::with_adapter`]).
//!
//! The registry's settings (spec: config-and-security.md §2) come from the environment
//! through [`DatasourceRegistry::with_env`]: the limits of datasources that set none
//! (`DEFAULT_ROW_LIMIT`, `DEFAULT_MAX_BYTES`, `DEFAULT_STATEMENT_TIMEOUT_MS`) and the
//! adapter options (`CONNECT_TIMEOUT_MS`, `SCHEMA_STATS_TIMEOUT_MS`,
//! `SCHEMA_STATS_SAMPLE_ROWS`), and the worker program of datasources with
//! `isolation = "process"` (`NL2SQL_WORKER_PROGRAM`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nl2sql_adapter::{
    AdapterOptions, BreakerConfig, CircuitBreaker, DEFAULT_MAX_BYTES, DEFAULT_ROW_LIMIT,
    DEFAULT_STATEMENT_TIMEOUT_MS, DatasourceAdapter, DatasourceBreaker as _, Limits,
    PermitOutcome as _, ResultError, ResultErrorCode,
};
use nl2sql_state::{
    ConfigError, ConfigFile, DatasourceConfig, Dialect, Engine, Isolation, Secret, SecretSource,
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
    /// Connect timeout and snapshot statistics budget of the adapters it creates.
    adapter_options: AdapterOptions,
    /// The worker program of `isolation = "process"` datasources; `None`: this
    /// executable's `worker` subcommand ([`WorkerCommand::this_executable`]).
    worker_command: Option<WorkerCommand>,
    /// The settings of each datasource's circuit breaker.
    breaker_config: BreakerConfig,
}

impl std::fmt::Debug for DatasourceRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatasourceRegistry")
            .field("base_dir", &self.base_dir)
            .field("ids", &self.entries.keys().collect::<Vec<_>>())
            .field("adapter_options", &self.adapter_options)
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
            adapter_options: AdapterOptions::default(),
            worker_command: None,
            breaker_config: BreakerConfig::default(),
        };
        for config in file.resolve(secrets)? {
            registry.insert(config);
        }
        Ok(registry)
    }

    /// A registry of the one ad-hoc datasource of `--db URL`, with default limits;
    /// relative paths are taken relative to the current directory.
    pub fn ad_hoc(url: &str) -> Result<Self, ConfigError> {
        let mut registry = DatasourceRegistry::empty();
        registry.insert(DatasourceConfig::ad_hoc(url)?);
        Ok(registry)
    }

    /// A registry with no datasource (add adapters with [`DatasourceRegistry::with_adapter`]).
    pub fn empty() -> Self {
        DatasourceRegistry {
            base_dir: PathBuf::from("."),
            entries: BTreeMap::new(),
            adapter_options: AdapterOptions::default(),
            worker_command: None,
            breaker_config: BreakerConfig::default(),
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

    /// The same registry whose datasources' circuit breakers (one per datasource, around
    /// every dry run, cost estimate and execution) open after `config.fail_max` counted
    /// failures and try again after `config.reset_timeout` (default: 5 failures, 30 s).
    /// Applies to the datasources registered so far and to those registered later.
    pub fn with_breaker_config(mut self, config: BreakerConfig) -> Self {
        for entry in self.entries.values_mut() {
            entry.breaker = Arc::new(CircuitBreaker::new(
                format!("db:{}", entry.config.id),
                config,
            ));
        }
        self.breaker_config = config;
        self
    }

    /// Registers `adapter`, already built, under `adapter.id()`; see
    /// [`DatasourceRegistry::with_adapter`].
    pub fn insert_adapter(&mut self, adapter: Arc<dyn DatasourceAdapter>) {
        let config = config_of_adapter(adapter.as_ref());
        self.insert_with(config, OnceCell::new_with(Some(adapter)));
    }

    pub(crate) fn insert(&mut self, config: DatasourceConfig) {
        self.insert_with(config, OnceCell::new());
    }

    fn insert_with(
        &mut self,
        config: DatasourceConfig,
        adapter: OnceCell<Arc<dyn DatasourceAdapter>>,
    ) {
        let breaker = Arc::new(CircuitBreaker::new(
            format!("db:{}", config.id),
            self.breaker_config,
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

    /// The same registry with the settings `lookup` finds ([`DatasourceRegistry::ENV_VARS`]):
    /// `DEFAULT_ROW_LIMIT`, `DEFAULT_MAX_BYTES` and `DEFAULT_STATEMENT_TIMEOUT_MS` become the
    /// limits of every datasource that sets none of its own
    /// ([`DatasourceRegistry::with_default_limits`]); `CONNECT_TIMEOUT_MS`,
    /// `SCHEMA_STATS_TIMEOUT_MS` and `SCHEMA_STATS_SAMPLE_ROWS` the options of the adapters
    /// it creates ([`DatasourceRegistry::with_adapter_options`]). A value that is not a
    /// whole number above 0 is an error naming the variable.
    pub fn with_env(self, lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let defaults = default_limits_from(&lookup)?;
        let [connect, stats_timeout, sample_rows] = whole_numbers(&lookup, ADAPTER_OPTION_VARS)?;
        let mut options = self.adapter_options;
        if let Some(ms) = connect {
            options.connect_timeout_ms = ms;
        }
        if let Some(ms) = stats_timeout {
            options.schema_stats_timeout_ms = ms;
        }
        if let Some(rows) = sample_rows {
            options.schema_stats_sample_rows = rows;
        }
        let mut registry = self
            .with_default_limits(defaults)
            .with_adapter_options(options);
        if let Some(program) = lookup(WORKER_PROGRAM_VAR).filter(|v| !v.trim().is_empty()) {
            registry = registry.with_worker_command(WorkerCommand::new(program));
        }
        Ok(registry)
    }

    /// The environment variables [`DatasourceRegistry::with_env`] reads.
    pub const ENV_VARS: [&'static str; 7] = [
        DEFAULT_LIMIT_VARS[0],
        DEFAULT_LIMIT_VARS[1],
        DEFAULT_LIMIT_VARS[2],
        ADAPTER_OPTION_VARS[0],
        ADAPTER_OPTION_VARS[1],
        ADAPTER_OPTION_VARS[2],
        WORKER_PROGRAM_VAR,
    ];

    /// The same registry running the workers of its `isolation = "process"` datasources
    /// with `command` (given the worker arguments: `--engine`, `--url`, `--id`, limits).
    /// Adapters already created keep theirs.
    #[must_use]
    pub fn with_worker_command(mut self, command: WorkerCommand) -> Self {
        self.worker_command = Some(command);
        self
    }

    /// The same registry creating its adapters with `options` (connect timeout, snapshot
    /// statistics budget and sample size). Adapters already created keep theirs.
    #[must_use]
    pub fn with_adapter_options(mut self, options: AdapterOptions) -> Self {
        self.adapter_options = options;
        self
    }

    /// The options the registry creates adapters with.
    pub fn adapter_options(&self) -> AdapterOptions {
        self.adapter_options
    }

    /// The same registry with `defaults` (row limit, byte limit, statement timeout in ms,
    /// as [`default_limits_from`] reads them) for every datasource that sets none of its
    /// own: they become those datasources' configured limits, so [`limits_of`], the
    /// adapters and every reader of [`DatasourceRegistry::config`] see them. Adapters
    /// already connected keep the limits they were made with.
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
                let permit = entry.breaker.enter()?;
                let made = if entry.config.isolation == Isolation::Process {
                    connect_worker(
                        &entry.config,
                        &self.base_dir,
                        self.adapter_options,
                        self.worker_command.as_ref(),
                    )
                    .await
                } else {
                    connect_configured(&entry.config, &self.base_dir, self.adapter_options).await
                };
                permit.settle(made.as_ref().err());
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
        isolation: Isolation::InProcess,
    }
}

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
    whole_numbers(&lookup, DEFAULT_LIMIT_VARS)
}

/// The environment variable naming the worker program of `isolation = "process"`
/// datasources (default: this executable's `worker` subcommand).
pub const WORKER_PROGRAM_VAR: &str = "NL2SQL_WORKER_PROGRAM";

/// The program (and its leading arguments) that runs a worker process of a datasource
/// with `isolation = "process"`; the worker arguments follow them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCommand {
    /// The executable.
    pub program: PathBuf,
    /// Arguments before the worker arguments (`["worker"]` for `nl2sql worker`).
    pub args: Vec<String>,
}

impl WorkerCommand {
    /// `program` with no leading argument (e.g. the `nl2sql-worker` binary).
    pub fn new(program: impl Into<PathBuf>) -> Self {
        WorkerCommand {
            program: program.into(),
            args: Vec::new(),
        }
    }

    /// This executable's `worker` subcommand (`nl2sql worker …`): the default, right for
    /// the `nl2sql` binary; a library user running process isolation sets their own.
    pub fn this_executable() -> std::io::Result<Self> {
        Ok(WorkerCommand {
            program: std::env::current_exe()?,
            args: vec!["worker".to_owned()],
        })
    }
}

/// The adapter of an `isolation = "process"` datasource: a pool of worker processes
/// (`nl2sql_worker::ProcessAdapter`) each serving the datasource over the worker
/// protocol, with the datasource's limits and the registry's adapter `options`. The first
/// one is started here, so a worker that cannot start or open its database fails the
/// connection.
#[cfg(feature = "sqlite")]
async fn connect_worker(
    config: &DatasourceConfig,
    base_dir: &Path,
    options: AdapterOptions,
    command: Option<&WorkerCommand>,
) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
    let unavailable = |m: String| ResultError::new(ResultErrorCode::ServiceUnavailable, m);
    let command = match command {
        Some(c) => c.clone(),
        None => WorkerCommand::this_executable().map_err(|e| {
            unavailable(format!(
                "cannot find this executable to run as the worker: {e}"
            ))
        })?,
    };
    if config.engine.is_server() {
        return Err(unavailable(format!(
            "isolation = \"process\" runs only the embedded engines (sqlite, duckdb), not {}",
            config.engine
        )));
    }
    let args = nl2sql_worker::WorkerArgs {
        engine: config.engine,
        id: config.id.clone(),
        url: effective_url(config, base_dir),
        limits: limits_of(config),
        options,
    };
    let mut process = std::process::Command::new(&command.program);
    process.args(&command.args).args(args.to_args());
    let adapter =
        nl2sql_worker::ProcessAdapter::spawn(process, nl2sql_worker::WorkerOptions::default())
            .await?;
    Ok(Arc::new(adapter))
}

/// Without the `sqlite` feature there is no worker crate: process isolation is
/// unavailable.
#[cfg(not(feature = "sqlite"))]
async fn connect_worker(
    config: &DatasourceConfig,
    _base_dir: &Path,
    _options: AdapterOptions,
    _command: Option<&WorkerCommand>,
) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
    Err(ResultError::new(
        ResultErrorCode::ServiceUnavailable,
        format!(
            "datasource '{}': this build of nl2sql has no worker processes (cargo feature 'sqlite')",
            config.id
        ),
    ))
}

/// The environment variables of the adapter options (spec: config-and-security.md §2,
/// "New in Rust"): connect timeout, snapshot statistics budget, statistics sample size.
const ADAPTER_OPTION_VARS: [&str; 3] = [
    "CONNECT_TIMEOUT_MS",
    "SCHEMA_STATS_TIMEOUT_MS",
    "SCHEMA_STATS_SAMPLE_ROWS",
];

/// The values of `keys` that `lookup` sets (empty counts as unset), each a whole number
/// above 0; anything else is an error naming the variable.
fn whole_numbers(
    lookup: &impl Fn(&str) -> Option<String>,
    keys: [&str; 3],
) -> Result<[Option<u64>; 3], ConfigError> {
    let mut out = [None; 3];
    for (slot, key) in out.iter_mut().zip(keys) {
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

/// The effective limits of `config`: its own, else the built-in defaults. A registry's
/// configurations already hold its default limits
/// ([`DatasourceRegistry::with_default_limits`]).
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
/// engine) with the default adapter options. An engine whose feature is off is
/// `SERVICE_UNAVAILABLE` with a message saying so.
pub async fn connect(
    config: &DatasourceConfig,
    base_dir: &Path,
) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
    connect_configured(config, base_dir, AdapterOptions::default()).await
}

/// [`connect`] with `options` (`CONNECT_TIMEOUT_MS`, `SCHEMA_STATS_TIMEOUT_MS`,
/// `SCHEMA_STATS_SAMPLE_ROWS`, parsed by [`DatasourceRegistry::with_env`]): the single
/// place where the adapter options reach the adapters.
async fn connect_configured(
    config: &DatasourceConfig,
    base_dir: &Path,
    options: AdapterOptions,
) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
    let url = effective_url(config, base_dir);
    let limits = limits_of(config);
    let id = config.id.as_str();
    match config.engine {
        #[cfg(feature = "sqlite")]
        Engine::Sqlite => {
            let adapter = nl2sql_adapter_sqlite::SqliteAdapter::from_url_with_options(
                id, &url, limits, options,
            )?;
            Ok(Arc::new(adapter))
        }
        #[cfg(feature = "duckdb")]
        Engine::Duckdb => {
            let adapter = nl2sql_adapter_duckdb::DuckDbAdapter::from_url_with_options(
                id, &url, limits, options,
            )?;
            Ok(Arc::new(adapter))
        }
        #[cfg(feature = "postgres")]
        Engine::Postgres => {
            let adapter = nl2sql_adapter_postgres::PostgresAdapter::from_url_with_options(
                id, &url, limits, options,
            )
            .await?;
            Ok(Arc::new(adapter))
        }
        #[cfg(feature = "mysql")]
        Engine::Mysql => {
            let adapter = nl2sql_adapter_mysql::MySqlAdapter::from_url_with_options(
                id, &url, limits, options,
            )
            .await?;
            Ok(Arc::new(adapter))
        }
        #[allow(unreachable_patterns)] // reason: reachable when an engine's feature is off
        engine => Err(ResultError::new(
            ResultErrorCode::ServiceUnavailable,
            format!("this build of nl2sql has no {engine} adapter (cargo feature '{engine}')"),
        )),
    }
}
