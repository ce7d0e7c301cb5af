//! The test server: an engine over a copy of the SQLite fixture with the offline planner
//! (or a given one) and an RBAC policy, served on 127.0.0.1 on a free port, with API keys
//! for an administrator, two analysts and a guest; and the readers the tests share.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use nl2sql_orchestrator::Planner;
use nl2sql_orchestrator::{DatasourceRegistry, Engine, EngineOptions};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_server::{
    ApiKeys, AppState, Catalog, EngineFactory, Identity, PlannerInfo, ServerConfig, serve,
};
use nl2sql_state::{ConfigFile, EnvSecrets, PolicyFile};
use nl2sql_test_support::TempDir;
use serde_json::Value;

pub(crate) const ADMIN_KEY: &str = "admin-key-0123456789";
pub(crate) const ANALYST_KEY: &str = "analyst-key-0123456789";
pub(crate) const ANALYST2_KEY: &str = "analyst2-key-0123456789";
pub(crate) const GUEST_KEY: &str = "guest-key-0123456789";

pub(crate) const POLICY: &str = r#"{"version": 1, "roles": {
  "admin": {"description": "Everything", "role": "admin",
            "allowed_datasources": ["*"], "allowed_tables": ["*"]},
  "analyst": {"description": "Plant analyst", "role": "analyst",
              "allowed_datasources": ["plant", "plant2"], "allowed_tables": ["plant.*", "plant2.*"]},
  "guest": {"description": "Nothing", "role": "guest",
            "allowed_datasources": [], "allowed_tables": []}}}"#;

pub(crate) const COUNT_QUESTION: &str = "How many factories do we have?";

pub(crate) use nl2sql_test_support::{files_with_extension, manufacturing_db as fixture};

/// A direct SQL count on the fixture.
pub(crate) fn sql_count(table: &str) -> i64 {
    let conn = rusqlite::Connection::open_with_flags(
        fixture(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

pub(crate) fn identity(user: &str, tenant: &str, role: &str, admin: bool) -> Identity {
    Identity {
        user_id: user.to_owned(),
        tenant_id: Some(tenant.to_owned()),
        roles: vec![role.to_owned()],
        admin,
    }
}

pub(crate) fn keys() -> ApiKeys {
    ApiKeys::empty()
        .with_key(ADMIN_KEY, identity("ops", "acme", "admin", true))
        .with_key(ANALYST_KEY, identity("alice", "acme", "analyst", false))
        .with_key(ANALYST2_KEY, identity("bob", "acme", "analyst", false))
        .with_key(GUEST_KEY, identity("gus", "acme", "guest", false))
}

/// A running server over `<dir>/plant.db` (a copy of the fixture), indexed.
pub(crate) struct Server {
    pub(crate) base: String,
    pub(crate) dir: TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    pub(crate) client: reqwest::Client,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

pub(crate) async fn start(name: &str, adjust: impl FnOnce(&mut ServerConfig)) -> Server {
    start_with(name, PlannerInfo::Offline, adjust).await
}

pub(crate) async fn start_with(
    name: &str,
    planner: PlannerInfo,
    adjust: impl FnOnce(&mut ServerConfig),
) -> Server {
    start_full(name, planner, Arc::new(OfflinePlanner::new()), adjust).await
}

/// A server whose engine plans with `engine_planner` (`info` is what `/llm` shows).
pub(crate) async fn start_full(
    name: &str,
    planner: PlannerInfo,
    engine_planner: Arc<dyn Planner>,
    adjust: impl FnOnce(&mut ServerConfig),
) -> Server {
    let dir = TempDir::new(name);
    std::fs::copy(fixture(), dir.join("plant.db")).unwrap();
    let file = ConfigFile::from_toml_str(
        "version = 1\n[[datasources]]\nid = \"plant\"\nurl = \"sqlite://plant.db\"\n",
    )
    .unwrap();
    let catalog = Catalog {
        file,
        base_dir: dir.to_path_buf(),
    };
    let data = dir.join("data");
    let policy = PolicyFile::from_json_str(POLICY).unwrap();
    let factory: EngineFactory = Arc::new(move |file: &ConfigFile, base: &Path| {
        let registry = DatasourceRegistry::from_config(
            file,
            base,
            &EnvSecrets,
            nl2sql_orchestrator::Drivers::none().with(nl2sql_adapter_sqlite::SqliteDriver),
        )
        .map_err(|e| e.to_string())?;
        let options = EngineOptions {
            retry_base_delay: Duration::from_millis(5),
            retry_max_delay: Duration::from_millis(20),
            retry_jitter: Duration::from_millis(5),
            jitter_seed: Some(7),
            today: Some("2024-06-30".to_owned()),
            ..EngineOptions::default()
        };
        Ok(Engine::open(registry, Arc::clone(&engine_planner), &data)
            .map_err(|e| e.safe_message().to_owned())?
            .with_options(options)
            .with_policy_file(policy.clone()))
    });
    let mut config = ServerConfig::new(keys());
    adjust(&mut config);
    let state = AppState::new(config, catalog, factory, planner).unwrap();
    let report = state.index_all().await.unwrap();
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/api/v1", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve(listener, state, async {
        let _ = rx.await;
    }));
    Server {
        base,
        dir,
        stop: Some(tx),
        client: reqwest::Client::new(),
    }
}

impl Server {
    pub(crate) async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        key: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = self.client.request(method, format!("{}{path}", self.base));
        if let Some(k) = key {
            req = req.bearer_auth(k);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        let value = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
        };
        (status, value)
    }

    pub(crate) async fn get(&self, path: &str, key: Option<&str>) -> (u16, Value) {
        self.call(reqwest::Method::GET, path, key, None).await
    }

    pub(crate) async fn post(&self, path: &str, key: Option<&str>, body: Value) -> (u16, Value) {
        self.call(reqwest::Method::POST, path, key, Some(body))
            .await
    }

    pub(crate) async fn delete(&self, path: &str, key: Option<&str>) -> (u16, Value) {
        self.call(reqwest::Method::DELETE, path, key, None).await
    }

    pub(crate) async fn ask(&self, key: &str, body: Value) -> (u16, Value) {
        self.post("/query", Some(key), body).await
    }
}

/// The one value of a one-row, one-column result.
pub(crate) fn single_value(body: &Value) -> i64 {
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{body:#}");
    let row = results[0].as_object().unwrap();
    assert_eq!(row.len(), 1, "{body:#}");
    row.values().next().unwrap().as_i64().unwrap()
}
