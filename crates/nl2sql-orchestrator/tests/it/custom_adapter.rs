//! A library user's own adapter, registered pre-built with
//! `DatasourceRegistry::with_adapter`: the derived configuration (id, engine, limits,
//! a placeholder URL), the adapter handed back as is (never connected again), its own
//! circuit breaker, and a whole question answered through it.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use nl2sql_adapter::{
    CapabilitySet, CostEstimate, DatasourceAdapter, DryRunResult, Limits, QueryPlan, ResultError,
    ResultErrorCode, ResultFrame,
};
use nl2sql_adapter_sqlite::SqliteAdapter;
use nl2sql_orchestrator::{AskOptions, DatasourceRegistry, Engine};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::{Dialect, Engine as EngineKind, SchemaContract, SchemaSnapshot};
use nl2sql_test_support::TempDir;
use serde_json::json;

use crate::support::fixture;

/// The fixture through the SQLite adapter, counting the statements executed; the engine
/// type and dialect it reports can be overridden.
struct Counting {
    inner: SqliteAdapter,
    engine_type: &'static str,
    dialect: Dialect,
    executed: AtomicUsize,
}

impl Counting {
    fn new(id: &str, limits: Limits) -> Counting {
        Counting {
            inner: SqliteAdapter::open(id, &fixture(), limits).expect("open the fixture"),
            engine_type: "sqlite",
            dialect: Dialect::Sqlite,
            executed: AtomicUsize::new(0),
        }
    }
}

#[async_trait]
impl DatasourceAdapter for Counting {
    fn id(&self) -> &str {
        self.inner.id()
    }
    fn engine_type(&self) -> &str {
        self.engine_type
    }
    fn dialect(&self) -> Dialect {
        self.dialect
    }
    fn capabilities(&self) -> &CapabilitySet {
        self.inner.capabilities()
    }
    fn limits(&self) -> Limits {
        self.inner.limits()
    }
    async fn test_connection(&self) -> Result<(), ResultError> {
        self.inner.test_connection().await
    }
    async fn schema_snapshot(&self) -> Result<SchemaSnapshot, ResultError> {
        self.inner.schema_snapshot().await
    }
    async fn schema_contract(&self) -> Result<SchemaContract, ResultError> {
        self.inner.schema_contract().await
    }
    async fn run_sql(&self, sql: &nl2sql_validate::GuardedSql, limits: Limits) -> ResultFrame {
        self.inner.run_sql(sql, limits).await
    }
    async fn dry_run(&self, sql: &nl2sql_validate::GuardedSql) -> DryRunResult {
        self.inner.dry_run(sql).await
    }
    async fn cost_estimate(
        &self,
        sql: &nl2sql_validate::GuardedSql,
    ) -> Result<CostEstimate, ResultError> {
        self.inner.cost_estimate(sql).await
    }
    async fn explain(&self, sql: &nl2sql_validate::GuardedSql) -> Result<QueryPlan, ResultError> {
        self.inner.explain(sql).await
    }
    fn details(&self) -> serde_json::Value {
        self.inner.details()
    }
    async fn execute_guarded(
        &self,
        sql: &nl2sql_validate::GuardedSql,
        limits: &nl2sql_adapter::RequestLimits,
    ) -> ResultFrame {
        self.executed.fetch_add(1, Ordering::SeqCst);
        self.inner.execute_guarded(sql, limits).await
    }
}

fn limits() -> Limits {
    Limits {
        row_limit: 500,
        statement_timeout_ms: 4_000,
        max_bytes: 1 << 20,
    }
}

#[tokio::test]
async fn a_registered_adapter_gets_a_derived_configuration_and_is_handed_back() {
    let adapter = Arc::new(Counting::new("plant", limits()));
    let registry = DatasourceRegistry::empty()
        .with_adapter(Arc::clone(&adapter) as Arc<dyn DatasourceAdapter>);
    assert_eq!(registry.ids(), vec!["plant"]);
    let config = registry.config("plant").expect("registered");
    assert_eq!(config.id, "plant");
    assert_eq!(config.engine, EngineKind::Sqlite);
    assert_eq!(config.redacted_url(), "sqlite://plant");
    assert_eq!(config.password, None);
    assert_eq!(registry.limits("plant").expect("limits"), limits());
    assert!(registry.breaker("plant").is_ok());

    let got = registry.adapter("plant").await.expect("the adapter");
    let given: Arc<dyn DatasourceAdapter> = adapter;
    assert!(
        Arc::ptr_eq(&got, &given),
        "the registry must hand back the given adapter"
    );
}

#[tokio::test]
async fn the_engine_falls_back_on_the_dialect_and_a_registered_adapter_replaces_one_of_its_id() {
    let url = format!(
        "sqlite://{}",
        fixture().canonicalize().expect("fixture").display()
    );
    let registry = DatasourceRegistry::ad_hoc(&url, crate::support::drivers()).expect("ad hoc");
    assert_eq!(registry.ids(), vec!["manufacturing"]);
    let mut custom = Counting::new("manufacturing", limits());
    custom.engine_type = "custom-engine";
    custom.dialect = Dialect::DuckDb;
    let mut registry = registry;
    registry.insert_adapter(Arc::new(custom));
    assert_eq!(registry.ids(), vec!["manufacturing"]);
    let config = registry.config("manufacturing").expect("registered");
    assert_eq!(config.engine, EngineKind::Duckdb);
    assert_eq!(config.redacted_url(), "duckdb://manufacturing");
    assert_eq!(config.row_limit, Some(500));
    let got = registry
        .adapter("manufacturing")
        .await
        .expect("the adapter");
    assert_eq!(got.engine_type(), "custom-engine");
}

#[tokio::test]
async fn configured_datasources_open_only_through_the_drivers_the_registry_was_given() {
    let url = format!(
        "sqlite://{}",
        fixture().canonicalize().expect("fixture").display()
    );
    // No SQLite driver: the datasource is configured but cannot be opened, and the error
    // says which engine is missing (the URL is not echoed).
    let bare =
        DatasourceRegistry::ad_hoc(&url, nl2sql_orchestrator::Drivers::none()).expect("ad hoc");
    let Err(e) = bare.adapter("manufacturing").await else {
        panic!("a registry without drivers opened a datasource");
    };
    assert_eq!(e.error_code, ResultErrorCode::ServiceUnavailable);
    assert_eq!(
        e.safe_message,
        "this build of nl2sql has no sqlite adapter (cargo feature 'sqlite')"
    );
    assert_eq!(e.stage.as_deref(), Some("connect"));
    // The same registry given the driver opens it; a fresh connection is a new adapter,
    // the shared one stays the same.
    let registry = bare.with_drivers(crate::support::drivers());
    let shared = registry.adapter("manufacturing").await.expect("shared");
    let again = registry
        .adapter("manufacturing")
        .await
        .expect("shared again");
    let fresh = registry
        .connect_fresh("manufacturing")
        .await
        .expect("fresh");
    assert!(Arc::ptr_eq(&shared, &again));
    assert!(!Arc::ptr_eq(&shared, &fresh));
    assert_eq!(fresh.engine_type(), "sqlite");
    fresh
        .test_connection()
        .await
        .expect("the fresh adapter answers");
    let Err(unknown) = registry.connect_fresh("nowhere").await else {
        panic!("an unknown datasource was opened");
    };
    assert!(
        unknown.safe_message.contains("nowhere"),
        "{}",
        unknown.safe_message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_is_answered_through_a_registered_adapter() {
    let dir = TempDir::new("ask");
    let adapter = Arc::new(Counting::new("manufacturing", Limits::default()));
    let registry = DatasourceRegistry::empty()
        .with_adapter(Arc::clone(&adapter) as Arc<dyn DatasourceAdapter>);
    let engine =
        Engine::in_memory(registry, Arc::new(OfflinePlanner::new()), dir.path()).expect("engine");
    let report = engine.index_all().await;
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!(report.indexed.len(), 1);

    let r = engine
        .ask("How many factories do we have?", AskOptions::default())
        .await;
    assert!(r.success, "{:#?}", r.errors);
    assert_eq!(r.rows, Some(vec![vec![json!(3)]]));
    assert_eq!(r.subqueries.len(), 1);
    assert_eq!(r.subqueries[0].datasource_id, "manufacturing");
    assert_eq!(adapter.executed.load(Ordering::SeqCst), 1);
}

#[test]
fn default_limits_fill_only_what_a_datasource_leaves_unset() {
    use nl2sql_orchestrator::default_limits_from;
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    let defaults = default_limits_from(env(&[
        ("DEFAULT_ROW_LIMIT", "25"),
        ("DEFAULT_STATEMENT_TIMEOUT_MS", "1500"),
    ]))
    .unwrap();
    assert_eq!(defaults, [Some(25), None, Some(1500)]);
    let config = nl2sql_state::ConfigFile::from_toml_str(
        "version = 1\n[[datasources]]\nid = \"a\"\nurl = \"sqlite://a.db\"\nrow_limit = 7\n\n[[datasources]]\nid = \"b\"\nurl = \"sqlite://b.db\"\n",
    )
    .unwrap();
    let registry = DatasourceRegistry::from_config(
        &config,
        Path::new("."),
        &nl2sql_state::EnvSecrets,
        crate::support::drivers(),
    )
    .unwrap()
    .with_default_limits(defaults);
    let a = registry.limits("a").unwrap();
    let b = registry.limits("b").unwrap();
    assert_eq!(
        (a.row_limit, a.statement_timeout_ms),
        (7, 1500),
        "its own row limit wins"
    );
    assert_eq!((b.row_limit, b.statement_timeout_ms), (25, 1500));
    assert_eq!(
        b.max_bytes,
        nl2sql_adapter::DEFAULT_MAX_BYTES,
        "unset: built in"
    );
    for bad in ["0", "-3", "lots"] {
        let pairs: &'static [(&'static str, &'static str)] =
            Box::leak(vec![("DEFAULT_MAX_BYTES", bad)].into_boxed_slice());
        let err = default_limits_from(env(pairs)).unwrap_err();
        assert!(err.to_string().starts_with("DEFAULT_MAX_BYTES"), "{err}");
    }
}

#[test]
fn registry_settings_come_from_the_environment_and_bad_values_name_the_variable() {
    let env = |pairs: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            pairs
                .iter()
                .find(|(key, _)| *key == k)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    let config = nl2sql_state::ConfigFile::from_toml_str(
        "version = 1\n[[datasources]]\nid = \"a\"\nurl = \"sqlite://a.db\"\nmax_bytes = 99\n\n[[datasources]]\nid = \"b\"\nurl = \"sqlite://b.db\"\n",
    )
    .unwrap();
    let registry = || {
        DatasourceRegistry::from_config(
            &config,
            Path::new("."),
            &nl2sql_state::EnvSecrets,
            crate::support::drivers(),
        )
        .unwrap()
    };
    // Unset: the built-in limits and adapter options.
    let plain = registry().with_env(env(&[])).unwrap();
    assert_eq!(plain.limits("b").unwrap(), Limits::default());
    assert_eq!(
        plain.adapter_options(),
        nl2sql_adapter::AdapterOptions::default()
    );

    let set = registry()
        .with_env(env(&[
            ("DEFAULT_ROW_LIMIT", "25"),
            ("DEFAULT_MAX_BYTES", "4096"),
            ("DEFAULT_STATEMENT_TIMEOUT_MS", "1500"),
            ("CONNECT_TIMEOUT_MS", "250"),
            ("SCHEMA_STATS_TIMEOUT_MS", " 900 "),
            ("SCHEMA_STATS_SAMPLE_ROWS", "50"),
        ]))
        .unwrap();
    let b = set.limits("b").unwrap();
    assert_eq!(
        (b.row_limit, b.max_bytes, b.statement_timeout_ms),
        (25, 4096, 1500)
    );
    // The datasource's configuration holds them, so every reader of it sees them.
    assert_eq!(set.config("b").unwrap().row_limit, Some(25));
    assert_eq!(set.limits("a").unwrap().max_bytes, 99, "its own limit wins");
    let options = set.adapter_options();
    assert_eq!(
        (
            options.connect_timeout_ms,
            options.schema_stats_timeout_ms,
            options.schema_stats_sample_rows
        ),
        (250, 900, 50)
    );

    assert_eq!(
        DatasourceRegistry::ENV_VARS,
        [
            "DEFAULT_ROW_LIMIT",
            "DEFAULT_MAX_BYTES",
            "DEFAULT_STATEMENT_TIMEOUT_MS",
            "CONNECT_TIMEOUT_MS",
            "SCHEMA_STATS_TIMEOUT_MS",
            "SCHEMA_STATS_SAMPLE_ROWS",
            "NL2SQL_WORKER_PROGRAM",
        ]
    );
    // Every number among them (the last one names a program).
    for key in &DatasourceRegistry::ENV_VARS[..6] {
        let key = *key;
        for bad in ["0", "-5", "soon", "1.5"] {
            let pairs: &'static [(&'static str, &'static str)] =
                Box::leak(vec![(key, bad)].into_boxed_slice());
            let err = registry().with_env(env(pairs)).unwrap_err();
            assert!(err.to_string().starts_with(key), "{key}={bad}: {err}");
        }
    }
}

/// The adapter options a registry is given (`SCHEMA_STATS_SAMPLE_ROWS` here) reach the
/// adapters it connects: statistics over a one-row sample see at most one distinct value,
/// where the default sample sees the fixture's many.
#[tokio::test]
async fn the_registrys_adapter_options_reach_the_adapters_it_connects() {
    let config = nl2sql_state::ConfigFile::from_toml_str(&format!(
        "version = 1\n[[datasources]]\nid = \"m\"\nurl = \"sqlite://{}\"\n",
        fixture().display()
    ))
    .unwrap();
    let distinct_counts = |sample: Option<&'static str>| {
        let config = &config;
        async move {
            let registry = DatasourceRegistry::from_config(
                config,
                Path::new("."),
                &nl2sql_state::EnvSecrets,
                crate::support::drivers(),
            )
            .unwrap()
            .with_env(move |k: &str| {
                (k == "SCHEMA_STATS_SAMPLE_ROWS")
                    .then(|| sample.map(str::to_owned))
                    .flatten()
            })
            .unwrap();
            let snapshot = registry
                .adapter("m")
                .await
                .unwrap()
                .schema_snapshot()
                .await
                .unwrap();
            let metadata = snapshot.metadata.expect("a full snapshot");
            let mut counts = Vec::new();
            for table in metadata.tables.values() {
                if table.row_count.unwrap_or(0) > 1 {
                    for column in table.columns.values() {
                        if let Some(s) = &column.statistics {
                            counts.push(s.distinct_count);
                        }
                    }
                }
            }
            counts
        }
    };
    let sampled = distinct_counts(Some("1")).await;
    assert!(!sampled.is_empty());
    assert!(sampled.iter().all(|&n| n <= 1), "{sampled:?}");
    let whole = distinct_counts(None).await;
    assert!(whole.iter().any(|&n| n > 1), "{whole:?}");
}
