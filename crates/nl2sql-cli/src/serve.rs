//! `nl2sql serve`: the REST API (`nl2sql-server`, documented in `docs/rest-api.md`) over
//! the datasources of `--config FILE`, `--db URL`, `$NL2SQL_CONFIG` or the demo, opened
//! as `ask` opens them (same data directory, so `index`, `ask` and `runs` share the
//! snapshots, index and run logs).
//!
//! API keys come from `--api-keys FILE` (else `$NL2SQL_API_KEYS`); without any the server
//! does not start. Datasources never indexed or whose schema changed are indexed before
//! listening. Ctrl-C (or SIGTERM) stops accepting connections, cancels the runs in flight
//! and exits 0 once the open requests are answered.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use nl2sql_orchestrator::{PlannerChoice, build_planner};
use nl2sql_planner_llm::LlmConfig;
use nl2sql_server::{
    ApiKeys, AppState, Catalog, DEFAULT_MAX_BODY_BYTES, DEFAULT_TENANT_ID, EngineFactory,
    PlannerInfo, ServerConfig,
};
use nl2sql_state::{ConfigFile, DatasourceConfig, DatasourceEntry, EngineSection, EnvSecrets};

use crate::ask::{PlannerKind, data_dir, engine_dir, load_source, open_engine};
use crate::settings::{self, process_env};
use crate::source::{Source, SourceArgs, read_config, registry_of};

/// What `serve` and `mcp` both take: the datasources, the data directory and the planner.
#[derive(Debug, clap::Args)]
pub(crate) struct EngineArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Where snapshots, the index, artifacts, run logs and the demo live (default:
    /// `$NL2SQL_DATA_DIR`, else `.nl2sql`).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Which planner answers (default: `llm` when `$LLM_CONFIG` names an LLM file, else
    /// `offline`).
    #[arg(long, value_enum)]
    planner: Option<PlannerKind>,
    /// The LLM file for `--planner llm` (TOML, or JSON by extension; default:
    /// `$LLM_CONFIG`).
    #[arg(long, value_name = "FILE")]
    llm_config: Option<PathBuf>,
    /// The cassette for `--planner replay`.
    #[arg(long, value_name = "FILE")]
    cassette: Option<PathBuf>,
    /// "Today" for relative dates (YYYY-MM-DD); default: the clock's date (UTC), or on the
    /// demo its last day (2024-12-31).
    #[arg(long, value_name = "DATE")]
    today: Option<String>,
    /// Give up on a question after this many seconds (default: `$GLOBAL_TIMEOUT_SEC`, else
    /// the configuration's `engine.global_timeout_sec`, else 60).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
}

/// Arguments of `serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    engine: EngineArgs,
    /// The address to listen on (port 0: any free port, printed at startup).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8000")]
    bind: SocketAddr,
    /// The API-keys file (TOML, see docs/rest-api.md; default: `$NL2SQL_API_KEYS`).
    #[arg(long, value_name = "FILE")]
    api_keys: Option<PathBuf>,
    /// An origin browsers may call the API from (repeatable); none = CORS closed.
    #[arg(long = "cors-origin", value_name = "URL")]
    cors_origins: Vec<String>,
    /// A `Host` the MCP endpoint (`/mcp`) accepts besides localhost, 127.0.0.1 and ::1
    /// (repeatable; `name` or `name:port`): the names clients reach this server by.
    #[arg(long = "mcp-allowed-host", value_name = "HOST")]
    mcp_allowed_hosts: Vec<String>,
    /// Development only: honour a `user_context` sent in the body of `POST /query`
    /// instead of the API key's identity.
    #[arg(long)]
    dev_trust_user_context: bool,
    /// The largest request body accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BODY_BYTES)]
    max_body_bytes: usize,
}

/// The server's state over `args`' datasources and planner, with `config`.
pub(crate) fn app_state(args: &EngineArgs, config: ServerConfig) -> anyhow::Result<AppState> {
    let data_dir = data_dir(args.data_dir.as_ref());
    let (source, demo) = load_source(&args.source, &data_dir)?;
    let (catalog, config_path) = catalog_of(&args.source, &data_dir)?;
    // The engine directory of the datasources served at startup; it stays the same when
    // datasources are added or removed over the API.
    let dir = engine_dir(&data_dir, &source);
    let llm = settings::llm_config_path(args.llm_config.as_ref(), &process_env);
    let kind = args.planner.unwrap_or(if llm.is_some() {
        PlannerKind::Llm
    } else {
        PlannerKind::Offline
    });
    let (choice, info) = match kind {
        PlannerKind::Offline => (
            settings::offline_planner(&process_env)?,
            PlannerInfo::Offline,
        ),
        PlannerKind::Llm => match llm {
            Some((p, key)) => {
                let config = read_llm(&p).with_context(|| key.to_owned())?;
                (PlannerChoice::Llm(p), PlannerInfo::Llm(Box::new(config)))
            }
            None => bail!("--planner llm needs --llm-config FILE (or LLM_CONFIG)"),
        },
        PlannerKind::Replay => match &args.cassette {
            Some(p) => (PlannerChoice::Replay(p.clone()), PlannerInfo::Replay),
            None => bail!("--planner replay needs --cassette FILE"),
        },
    };
    let planner = build_planner(&choice, None)?;
    let Source {
        registry: _,
        policy,
        docs,
        engine: engine_section,
        artifacts,
    } = source;
    let today = crate::ask::today_for(args.today.as_ref(), demo);
    let timeout = args.timeout;
    let factory: EngineFactory = Arc::new(move |file: &ConfigFile, base: &Path| {
        let registry = registry_of(file, base, &config_path).map_err(|e| format!("{e:#}"))?;
        let source = Source {
            registry,
            policy: policy.clone(),
            docs: docs.clone(),
            engine: engine_section.clone(),
            artifacts: artifacts.clone(),
        };
        open_engine(source, Arc::clone(&planner), &dir, |options| {
            options.today.clone_from(&today);
            if let Some(secs) = timeout {
                options.global_timeout = Duration::from_secs(secs);
            }
        })
        .map_err(|e| format!("{e:#}"))
    });
    AppState::new(config, catalog, factory, info).map_err(|e| anyhow::anyhow!(e))
}

/// Indexes the datasources never indexed or whose schema changed, saying so on standard
/// error.
pub(crate) async fn index_stale(state: &AppState) -> anyhow::Result<()> {
    let report = state
        .index_stale()
        .await
        .map_err(|e| anyhow::anyhow!("indexing failed: {}", e.body.message))?;
    for stats in &report.indexed {
        eprintln!(
            "indexed {} (schema version {})",
            stats.datasource_id, stats.schema_version
        );
    }
    for (id, err) in &report.failed {
        eprintln!("warning: cannot index {id}: {}", err.safe_message());
    }
    Ok(())
}

/// The default tenant: `$TENANT_ID`, else `default`.
pub(crate) fn default_tenant() -> String {
    process_env("TENANT_ID")
        .map(|t| t.trim().to_owned())
        .unwrap_or_else(|| DEFAULT_TENANT_ID.to_owned())
}

/// Runs the command; returns the exit code (0 after a clean shutdown).
pub(crate) fn run(args: &Args) -> anyhow::Result<u8> {
    let api_keys = load_keys(args.api_keys.as_ref())?;
    for origin in &args.cors_origins {
        check_origin(origin)?;
    }
    let mut config = ServerConfig {
        bind: args.bind,
        api_keys,
        cors_origins: args.cors_origins.clone(),
        dev_trust_user_context: args.dev_trust_user_context,
        max_body_bytes: args.max_body_bytes,
        default_tenant_id: default_tenant(),
        ..ServerConfig::new(ApiKeys::empty())
    };
    config
        .mcp_allowed_hosts
        .extend(args.mcp_allowed_hosts.iter().cloned());
    if config.dev_trust_user_context {
        eprintln!(
            "warning: development mode: a user_context in a request body replaces the API key's identity"
        );
    }
    let keys = config.api_keys.len();
    let state = app_state(&args.engine, config)?;

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let served = rt.block_on(async {
        index_stale(&state).await?;
        let listener = tokio::net::TcpListener::bind(args.bind)
            .await
            .with_context(|| format!("cannot listen on {}", args.bind))?;
        let addr = listener.local_addr().context("cannot read the bound address")?;
        let datasources = state.engine().registry().ids().len();
        eprintln!(
            "listening on http://{addr}/api/v1 and MCP on http://{addr}/mcp ({datasources} datasources, {keys} API keys; Ctrl-C stops)"
        );
        nl2sql_server::serve(listener, state, shutdown_signal())
            .await
            .context("the server failed")
    });
    // A statement still running on a blocking thread must not hold the process.
    rt.shutdown_timeout(Duration::from_secs(5));
    served?;
    eprintln!("stopped");
    Ok(0)
}

/// Ctrl-C or (on Unix) SIGTERM; a signal that cannot be watched never fires.
pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
    eprintln!("shutting down: cancelling the runs in flight …");
}

/// The keys of `--api-keys FILE`, else `$NL2SQL_API_KEYS`; at least one.
fn load_keys(flag: Option<&PathBuf>) -> anyhow::Result<ApiKeys> {
    let Some(path) = flag
        .cloned()
        .or_else(|| process_env("NL2SQL_API_KEYS").map(PathBuf::from))
    else {
        bail!("no API keys: pass --api-keys FILE (the format is in docs/rest-api.md)");
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read API-keys file '{}'", path.display()))?;
    let keys = ApiKeys::from_toml_str(&text, &EnvSecrets)
        .with_context(|| format!("invalid API-keys file '{}'", path.display()))?;
    if keys.is_empty() {
        bail!("the API-keys file '{}' lists no key", path.display());
    }
    Ok(keys)
}

/// An origin is `http(s)://host[:port]`, nothing else.
fn check_origin(origin: &str) -> anyhow::Result<()> {
    let rest = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"));
    let ok = rest.is_some_and(|host| {
        !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'))
    });
    if !ok {
        bail!("--cors-origin '{origin}': expected http(s)://host[:port] with no path");
    }
    Ok(())
}

fn read_llm(path: &Path) -> anyhow::Result<LlmConfig> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read LLM file '{}'", path.display()))?;
    let config = if path.extension().is_some_and(|e| e == "json") {
        LlmConfig::from_json_str(&text)
    } else {
        LlmConfig::from_toml_str(&text)
    };
    config.with_context(|| format!("invalid LLM file '{}'", path.display()))
}

/// The catalog the server starts with, and the path named in configuration errors.
fn catalog_of(args: &SourceArgs, data_dir: &Path) -> anyhow::Result<(Catalog, PathBuf)> {
    if let Some(url) = &args.db {
        let config = DatasourceConfig::ad_hoc(url)?;
        let file = ConfigFile {
            version: 1,
            policy: None,
            schema_docs: None,
            questions: None,
            engine: EngineSection::default(),
            artifacts: None,
            datasources: vec![DatasourceEntry {
                id: config.id,
                description: None,
                url: url.clone(),
                password: None,
                statement_timeout_ms: None,
                row_limit: None,
                max_bytes: None,
                tags: BTreeMap::new(),
                isolation: nl2sql_state::Isolation::InProcess,
            }],
        };
        let catalog = Catalog {
            file,
            base_dir: PathBuf::from("."),
        };
        return Ok((catalog, PathBuf::from("--db")));
    }
    let path = args
        .config_path()?
        .unwrap_or_else(|| data_dir.join("demo").join("nl2sql.toml"));
    let (file, base_dir) = read_config(&path)?;
    Ok((Catalog { file, base_dir }, path))
}
