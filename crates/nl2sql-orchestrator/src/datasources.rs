//! The datasource registry (spec: adapters.md §1): configured datasources by id, each with
//! its adapter (connected lazily, once, through the registry's [`Drivers`]) and its circuit
//! breaker. A library user may also register an adapter they built themselves
//! ([`DatasourceRegistry::with_adapter`]). Which engines a build can open is not this
//! crate's business: the caller passes the drivers (the `nl2sql` binary's come from
//! `nl2sql-drivers`, one cargo feature per engine).
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
    AdapterOptions, BreakerConfig, CircuitBreaker, ConnectRequest, DEFAULT_MAX_BYTES,
    DEFAULT_ROW_LIMIT, DEFAULT_STATEMENT_TIMEOUT_MS, DatasourceAdapter, DatasourceBreaker as _,
    Drivers, Limits, PermitOutcome as _, ResultError, ResultErrorCode, WorkerCommand,
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
    /// What opens the configured datasources.
    drivers: Drivers,
}

impl std::fmt::Debug for DatasourceRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatasourceRegistry")
            .field("base_dir", &self.base_dir)
            .field("ids", &self.entries.keys().collect::<Vec<_>>())
            .field("adapter_options", &self.adapter_options)
            .field("drivers", &self.drivers)
            .finish()
    }
}

impl DatasourceRegistry {
    /// A registry of every datasource of `file`, secrets resolved from `secrets`, opened
    /// with `drivers`. Relative file paths in URLs are taken relative to `base_dir` (the
    /// configuration file's directory).
    pub fn from_config(
        file: &ConfigFile,
        base_dir: &Path,
        secrets: &dyn SecretSource,
        drivers: Drivers,
    ) -> Result<Self, ConfigError> {
        let mut registry = DatasourceRegistry::empty().with_drivers(drivers);
        registry.base_dir = base_dir.to_path_buf();
        for config in file.resolve(secrets)? {
            registry.insert(config);
        }
        Ok(registry)
    }

    /// A registry of the one ad-hoc datasource of `--db URL`, with default limits, opened
    /// with `drivers`; relative paths are taken relative to the current directory.
    pub fn ad_hoc(url: &str, drivers: Drivers) -> Result<Self, ConfigError> {
        let mut registry = DatasourceRegistry::empty().with_drivers(drivers);
        registry.insert(DatasourceConfig::ad_hoc(url)?);
        Ok(registry)
    }

    /// A registry with no datasource and no driver (add adapters with
    /// [`DatasourceRegistry::with_adapter`], drivers with
    /// [`DatasourceRegistry::with_drivers`]).
    pub fn empty() -> Self {
        DatasourceRegistry {
            base_dir: PathBuf::from("."),
            entries: BTreeMap::new(),
            adapter_options: AdapterOptions::default(),
            worker_command: None,
            breaker_config: BreakerConfig::default(),
            drivers: Drivers::none(),
        }
    }

    /// The same registry opening its configured datasources with `drivers` (adapters
    /// already created are kept).
    #[must_use]
    pub fn with_drivers(mut self, drivers: Drivers) -> Self {
        self.drivers = drivers;
        self
    }

    /// The drivers the registry opens datasources with.
    pub fn drivers(&self) -> &Drivers {
        &self.drivers
    }

    /// Registers the configured datasource `config` (replacing a datasource of that id);
    /// it is connected on first use.
    pub fn insert(&mut self, config: DatasourceConfig) {
        self.insert_with(config, OnceCell::new());
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
                    self.connect_worker(&entry.config).await
                } else {
                    self.connect_fresh_config(&entry.config).await
                };
                permit.settle(made.as_ref().err());
                made.map_err(|e| e.at("connect", id))
            })
            .await
            .cloned()
    }
}

impl DatasourceRegistry {
    /// A new adapter of `id`, not the registry's shared one, opened in this process with
    /// the registry's drivers and adapter options (the readiness probe: a pooled handle
    /// can outlive the database it was opened on). The caller drops it when done.
    pub async fn connect_fresh(&self, id: &str) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
        let entry = self.entry(id).map_err(|e| {
            ResultError::new(ResultErrorCode::ServiceUnavailable, e.to_string()).at("connect", id)
        })?;
        self.connect_fresh_config(&entry.config).await
    }

    async fn connect_fresh_config(
        &self,
        config: &DatasourceConfig,
    ) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
        let url = effective_url(config, &self.base_dir);
        self.drivers.connect(&self.request(config, &url)).await
    }

    /// The adapter of an `isolation = "process"` datasource: worker processes run by the
    /// registry's worker command (default: this executable's `worker` subcommand).
    async fn connect_worker(
        &self,
        config: &DatasourceConfig,
    ) -> Result<Arc<dyn DatasourceAdapter>, ResultError> {
        let command = match &self.worker_command {
            Some(c) => c.clone(),
            None => WorkerCommand::this_executable().map_err(|e| {
                ResultError::new(
                    ResultErrorCode::ServiceUnavailable,
                    format!("cannot find this executable to run as the worker: {e}"),
                )
            })?,
        };
        let url = effective_url(config, &self.base_dir);
        self.drivers
            .connect_process(&self.request(config, &url), &command)
            .await
    }

    fn request<'a>(&self, config: &'a DatasourceConfig, url: &'a str) -> ConnectRequest<'a> {
        ConnectRequest {
            id: &config.id,
            engine: config.engine,
            url,
            limits: limits_of(config),
            options: self.adapter_options,
        }
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
