//! The server's shared state: the current engine and the datasource catalog it was built
//! from, swapped together when datasources change.
//!
//! The engine's registry is immutable, so adding or removing a datasource builds a new
//! engine from the changed catalog through the [`EngineFactory`] and swaps it in; runs in
//! flight finish on the engine they started with. Changes and indexing are serialised by
//! one lock, so only one engine writes the schema store and the index at a time; a factory
//! that opens the same data directory each time (`Engine::open`) gives the new engine
//! everything indexed so far. Changes live in memory: the configuration file is never
//! rewritten, so a restart serves the file's datasources again.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use nl2sql_orchestrator::{Drivers, Engine, IndexReport};
use nl2sql_planner_llm::LlmConfig;
use nl2sql_state::{ConfigFile, DatasourceEntry};
use tokio_util::sync::CancellationToken;

use crate::config::ServerConfig;
use crate::error::ApiError;

/// Builds an engine over a catalog: the configuration file (its datasources changed by
/// the API) and the directory its relative paths start from. The error is a message safe
/// to show to an administrator (no secret values).
pub type EngineFactory = Arc<dyn Fn(&ConfigFile, &Path) -> Result<Engine, String> + Send + Sync>;

/// The datasources the server serves: a configuration file and its base directory.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// The configuration (datasources, policy path, engine settings, …).
    pub file: ConfigFile,
    /// The directory relative paths in `file` start from.
    pub base_dir: PathBuf,
}

/// The planner behind the engine, as `GET /llm` shows it.
#[derive(Debug, Clone)]
pub enum PlannerInfo {
    /// The offline deterministic planner.
    Offline,
    /// An OpenAI-compatible model configured by an LLM file.
    Llm(Box<LlmConfig>),
    /// Answers replayed from a cassette.
    Replay,
}

struct Current {
    engine: Arc<Engine>,
    catalog: Arc<Catalog>,
}

struct Inner {
    config: ServerConfig,
    current: RwLock<Current>,
    /// Serialises datasource changes and indexing.
    admin: tokio::sync::Mutex<()>,
    factory: EngineFactory,
    planner: PlannerInfo,
    shutdown: CancellationToken,
}

/// The state every route shares (cheap to clone).
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("config", &self.inner.config)
            .field("planner", &self.inner.planner)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// The state over `catalog`: its first engine is built by `factory` now.
    pub fn new(
        config: ServerConfig,
        catalog: Catalog,
        factory: EngineFactory,
        planner: PlannerInfo,
    ) -> Result<Self, String> {
        let engine = factory(&catalog.file, &catalog.base_dir)?;
        Ok(AppState {
            inner: Arc::new(Inner {
                config,
                current: RwLock::new(Current {
                    engine: Arc::new(engine),
                    catalog: Arc::new(catalog),
                }),
                admin: tokio::sync::Mutex::new(()),
                factory,
                planner,
                shutdown: CancellationToken::new(),
            }),
        })
    }

    /// The settings.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// The planner description.
    pub fn planner(&self) -> &PlannerInfo {
        &self.inner.planner
    }

    /// The current engine.
    pub fn engine(&self) -> Arc<Engine> {
        let current = self
            .inner
            .current
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        Arc::clone(&current.engine)
    }

    /// The current catalog.
    pub fn catalog(&self) -> Arc<Catalog> {
        let current = self
            .inner
            .current
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        Arc::clone(&current.catalog)
    }

    /// Cancelled when the server shuts down: every run in flight is cancelled with it.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.inner.shutdown.clone()
    }

    fn swap(&self, engine: Engine, catalog: Catalog) {
        let mut current = self
            .inner
            .current
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        *current = Current {
            engine: Arc::new(engine),
            catalog: Arc::new(catalog),
        };
    }

    /// Indexes the datasources never indexed or whose schema changed (as `ask` does
    /// before answering).
    pub async fn index_stale(&self) -> Result<IndexReport, ApiError> {
        let _lock = self.inner.admin.lock().await;
        let engine = self.engine();
        on_blocking_thread(move || async move { engine.index_stale().await }).await
    }

    /// Snapshots and indexes every datasource.
    pub async fn index_all(&self) -> Result<IndexReport, ApiError> {
        let _lock = self.inner.admin.lock().await;
        let engine = self.engine();
        on_blocking_thread(move || async move { engine.index_all().await }).await
    }

    /// Snapshots and indexes datasource `id` (404 when unknown), then serves an engine
    /// that sees the new snapshot.
    pub async fn index_one(&self, id: &str) -> Result<IndexReport, ApiError> {
        let _lock = self.inner.admin.lock().await;
        let catalog = self.catalog();
        let Some(entry) = catalog.file.datasources.iter().find(|d| d.id == id) else {
            return Err(unknown_datasource(id));
        };
        // An engine over that datasource only indexes it; the serving engine is then
        // rebuilt so that it reads what was written.
        let mut one = catalog.file.clone();
        one.datasources = vec![entry.clone()];
        let engine = (self.inner.factory)(&one, &catalog.base_dir).map_err(|e| {
            tracing::warn!(error = %e, "cannot build an engine to index a datasource");
            ApiError::internal()
        })?;
        let report = on_blocking_thread(move || async move { engine.index_all().await }).await?;
        let rebuilt = (self.inner.factory)(&catalog.file, &catalog.base_dir).map_err(|e| {
            tracing::warn!(error = %e, "cannot rebuild the engine after indexing");
            ApiError::internal()
        })?;
        self.swap(rebuilt, Catalog::clone(&catalog));
        Ok(report)
    }

    /// Registers a datasource (409 when the id exists, 400 when the entry is invalid).
    /// It is not indexed: `POST /index/{id}` does that.
    pub async fn add_datasource(&self, entry: DatasourceEntry) -> Result<(), ApiError> {
        let _lock = self.inner.admin.lock().await;
        let catalog = self.catalog();
        check_entry(&entry, self.engine().registry().drivers())?;
        if catalog.file.datasources.iter().any(|d| d.id == entry.id) {
            return Err(ApiError::conflict(format!(
                "Datasource '{}' already exists.",
                entry.id
            )));
        }
        let mut changed = Catalog::clone(&catalog);
        changed.file.datasources.push(entry);
        let engine = (self.inner.factory)(&changed.file, &changed.base_dir)
            .map_err(|e| ApiError::bad_request(format!("Invalid datasource: {e}")))?;
        self.swap(engine, changed);
        Ok(())
    }

    /// Removes datasource `id` (404 when unknown). Its snapshots and index documents stay
    /// on disk but are never used: questions only consider registered datasources.
    pub async fn remove_datasource(&self, id: &str) -> Result<(), ApiError> {
        let _lock = self.inner.admin.lock().await;
        let catalog = self.catalog();
        if !catalog.file.datasources.iter().any(|d| d.id == id) {
            return Err(unknown_datasource(id));
        }
        let mut changed = Catalog::clone(&catalog);
        changed.file.datasources.retain(|d| d.id != id);
        let engine = (self.inner.factory)(&changed.file, &changed.base_dir).map_err(|e| {
            tracing::warn!(error = %e, "cannot rebuild the engine after a removal");
            ApiError::internal()
        })?;
        self.swap(engine, changed);
        Ok(())
    }
}

/// Runs the future `make` returns on a blocking thread, driven by the current runtime:
/// indexing futures are not `Send` (they hold a progress callback across awaits), so they
/// cannot run on a worker thread of a multi-threaded runtime.
async fn on_blocking_thread<F, Fut, T>(make: F) -> Result<T, ApiError>
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T>,
    T: Send + 'static,
{
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || handle.block_on(make()))
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "indexing panicked");
            ApiError::internal()
        })
}

/// 404 for datasource `id`.
pub(crate) fn unknown_datasource(id: &str) -> ApiError {
    ApiError::not_found(format!("Datasource '{id}' not found."))
}

/// The checks `ConfigFile` makes on an entry it reads (id, URL scheme, limits), plus:
/// the engine is compiled into this build.
fn check_entry(entry: &DatasourceEntry, drivers: &Drivers) -> Result<(), ApiError> {
    let id_ok = !entry.id.is_empty()
        && entry
            .id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !id_ok {
        return Err(ApiError::bad_request(format!(
            "Invalid datasource id '{}': use letters, digits, '_' and '-'.",
            entry.id
        )));
    }
    let url = entry.url.trim();
    let secret_ref = url.starts_with("${") && url.ends_with('}');
    if !secret_ref {
        let Some(engine) = nl2sql_state::Engine::from_url(url) else {
            return Err(ApiError::bad_request(
                "Unknown or missing URL scheme: expected duckdb://, sqlite://, postgres:// or mysql://.",
            ));
        };
        if !drivers.has(engine) {
            return Err(ApiError::bad_request(format!(
                "This server has no {engine} adapter."
            )));
        }
    }
    for (name, v) in [
        ("statement_timeout_ms", entry.statement_timeout_ms),
        ("row_limit", entry.row_limit),
        ("max_bytes", entry.max_bytes),
    ] {
        if v == Some(0) {
            return Err(ApiError::bad_request(format!(
                "{name} must be greater than 0."
            )));
        }
    }
    Ok(())
}
