//! The REST API over real HTTP (127.0.0.1, a free port) against an engine over a copy of
//! the SQLite fixture with the offline planner and an RBAC policy: answers checked against
//! direct SQL, authentication, RBAC, run records, datasource management, plan-only runs,
//! readiness, CORS, development mode, body limits and the `/llm` routes.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use nl2sql_orchestrator::Planner;
use nl2sql_orchestrator::{DatasourceRegistry, Engine, EngineOptions};
use nl2sql_planner_llm::LlmConfig;
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_server::{
    ApiKeys, AppState, Catalog, EngineFactory, Identity, PlannerInfo, ServerConfig, serve,
};
use nl2sql_state::{ConfigFile, EnvSecrets, PolicyFile};
use nl2sql_test_support::TempDir;
use serde_json::{Value, json};

const ADMIN_KEY: &str = "admin-key-0123456789";
pub(crate) const ANALYST_KEY: &str = "analyst-key-0123456789";
const ANALYST2_KEY: &str = "analyst2-key-0123456789";
const GUEST_KEY: &str = "guest-key-0123456789";

const POLICY: &str = r#"{"version": 1, "roles": {
  "admin": {"description": "Everything", "role": "admin",
            "allowed_datasources": ["*"], "allowed_tables": ["*"]},
  "analyst": {"description": "Plant analyst", "role": "analyst",
              "allowed_datasources": ["plant", "plant2"], "allowed_tables": ["plant.*", "plant2.*"]},
  "guest": {"description": "Nothing", "role": "guest",
            "allowed_datasources": [], "allowed_tables": []}}}"#;

pub(crate) const COUNT_QUESTION: &str = "How many factories do we have?";

use nl2sql_test_support::manufacturing_db as fixture;

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

fn identity(user: &str, tenant: &str, role: &str, admin: bool) -> Identity {
    Identity {
        user_id: user.to_owned(),
        tenant_id: Some(tenant.to_owned()),
        roles: vec![role.to_owned()],
        admin,
    }
}

fn keys() -> ApiKeys {
    ApiKeys::empty()
        .with_key(ADMIN_KEY, identity("ops", "acme", "admin", true))
        .with_key(ANALYST_KEY, identity("alice", "acme", "analyst", false))
        .with_key(ANALYST2_KEY, identity("bob", "acme", "analyst", false))
        .with_key(GUEST_KEY, identity("gus", "acme", "guest", false))
}

/// A running server over `<dir>/plant.db` (a copy of the fixture), indexed.
pub(crate) struct Server {
    pub(crate) base: String,
    dir: TempDir,
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

async fn start(name: &str, adjust: impl FnOnce(&mut ServerConfig)) -> Server {
    start_with(name, PlannerInfo::Offline, adjust).await
}

async fn start_with(
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
        let registry =
            DatasourceRegistry::from_config(file, base, &EnvSecrets).map_err(|e| e.to_string())?;
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
    async fn call(
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

    async fn post(&self, path: &str, key: Option<&str>, body: Value) -> (u16, Value) {
        self.call(reqwest::Method::POST, path, key, Some(body))
            .await
    }

    async fn delete(&self, path: &str, key: Option<&str>) -> (u16, Value) {
        self.call(reqwest::Method::DELETE, path, key, None).await
    }

    async fn ask(&self, key: &str, body: Value) -> (u16, Value) {
        self.post("/query", Some(key), body).await
    }
}

/// The one value of a one-row, one-column result.
fn single_value(body: &Value) -> i64 {
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{body:#}");
    let row = results[0].as_object().unwrap();
    assert_eq!(row.len(), 1, "{body:#}");
    row.values().next().unwrap().as_i64().unwrap()
}

fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_a_question_and_returns_it_again_by_trace_id() {
    let server = start("answer", |_| {}).await;
    let (status, body) = server
        .ask(ANALYST_KEY, json!({"natural_language": COUNT_QUESTION}))
        .await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(body["status"], "succeeded");
    assert_eq!(single_value(&body), sql_count("factories"));
    assert_eq!(body["columns"].as_array().unwrap().len(), 1);
    let sql = body["sql"].as_str().unwrap().to_uppercase();
    assert!(sql.contains("COUNT") && sql.contains("FACTORIES"), "{sql}");
    assert!(
        body["final_answer"].as_str().unwrap().contains('3'),
        "{body:#}"
    );
    assert_eq!(body["errors"], json!([]));
    assert_eq!(body["subqueries"][0]["datasource_id"], "plant");
    assert_eq!(body["subqueries"][0]["row_count"], 1);
    let nodes: Vec<&str> = body["reasoning"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["node"].as_str().unwrap())
        .collect();
    for node in [
        "datasource_resolver",
        "decomposer",
        "executor",
        "answer_synthesizer",
    ] {
        assert!(nodes.contains(&node), "{node} missing from {nodes:?}");
    }
    let trace = body["trace_id"].as_str().unwrap().to_owned();
    assert_eq!(trace.len(), 36, "{trace}");

    // The same response again, from the run log and its record.
    let (status, again) = server
        .get(&format!("/query/{trace}"), Some(ANALYST_KEY))
        .await;
    assert_eq!(status, 200, "{again:#}");
    assert_eq!(again, body);

    // Nobody else's, and nothing unknown.
    let (status, other) = server
        .get(&format!("/query/{trace}"), Some(ANALYST2_KEY))
        .await;
    assert_eq!(
        (status, other["error_code"].as_str()),
        (404, Some("NOT_FOUND"))
    );
    let unknown = "3f2b8c1e-0d4a-4b6f-9a51-2c7e8d9f0a1b";
    let (status, body) = server
        .get(&format!("/query/{unknown}"), Some(ANALYST_KEY))
        .await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (404, Some("NOT_FOUND"))
    );
    let (status, _) = server.get("/query/not-a-trace-id", Some(ANALYST_KEY)).await;
    assert_eq!(status, 404);

    // A grouped question: one object per row, checked against SQL.
    let (status, body) = server
        .ask(
            ANALYST_KEY,
            json!({
                "natural_language": "How many products are there in each category?",
                "datasource_id": "plant",
            }),
        )
        .await;
    assert_eq!(status, 200, "{body:#}");
    let columns: Vec<&str> = body["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(columns.len(), 2, "{body:#}");
    let mut got: Vec<(String, i64)> = body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let row = row.as_object().unwrap();
            let keys: Vec<&String> = row.keys().collect();
            assert_eq!(keys, columns, "row keys follow the columns");
            let text = row.values().find_map(Value::as_str).unwrap().to_owned();
            let count = row.values().find_map(Value::as_i64).unwrap();
            (text, count)
        })
        .collect();
    got.sort();
    assert_eq!(got, products_per_category());
}

/// `SELECT category, COUNT(*) FROM products GROUP BY category` on the fixture, sorted.
fn products_per_category() -> Vec<(String, i64)> {
    let conn = rusqlite::Connection::open_with_flags(
        fixture(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut stmt = conn
        .prepare("SELECT category, COUNT(*) FROM products GROUP BY category ORDER BY category")
        .unwrap();
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
        .unwrap();
    rows.map(Result::unwrap).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_requests_without_a_known_key() {
    let server = start("auth", |_| {}).await;
    let question = json!({"natural_language": COUNT_QUESTION});
    let resp = server
        .client
        .post(format!("{}/query", server.base))
        .json(&question)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401);
    assert_eq!(
        resp.headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok()),
        Some("Bearer")
    );
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error_code"], "UNAUTHORIZED");
    let (status, body) = server
        .ask("not-a-key-of-this-server", question.clone())
        .await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (401, Some("UNAUTHORIZED"))
    );
    for path in [
        "/datasource",
        "/index/status",
        "/llm",
        "/query/3f2b8c1e-0d4a-4b6f-9a51-2c7e8d9f0a1b",
    ] {
        assert_eq!(server.get(path, None).await.0, 401, "{path}");
    }
    // X-API-Key works as well as a bearer token.
    let resp = server
        .client
        .get(format!("{}/datasource", server.base))
        .header("X-API-Key", ANALYST_KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body, json!({"datasources": ["plant"]}));
    // Health needs no key.
    let (status, body) = server.get("/health", None).await;
    assert_eq!((status, body["success"].as_bool()), (200, Some(true)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_refuses_a_role_without_the_datasource() {
    let server = start("rbac", |_| {}).await;
    let (status, body) = server
        .ask(GUEST_KEY, json!({"natural_language": COUNT_QUESTION}))
        .await;
    assert_eq!(status, 403, "{body:#}");
    assert_eq!(body["error_code"], "SECURITY_VIOLATION");
    assert_eq!(body["details"]["status"], "failed");
    assert!(body["details"]["trace_id"].is_string());
    assert!(body.get("results").is_none());
    let (status, body) = server
        .ask(
            GUEST_KEY,
            json!({"natural_language": COUNT_QUESTION, "datasource_id": "plant"}),
        )
        .await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (403, Some("SECURITY_VIOLATION"))
    );
    // The guest sees no datasource; the analyst sees the one it may read.
    assert_eq!(
        server.get("/datasource", Some(GUEST_KEY)).await,
        (200, json!({"datasources": []}))
    );
    assert_eq!(
        server.get("/datasource/plant", Some(GUEST_KEY)).await.0,
        404
    );
    let (status, body) = server.get("/datasource/plant", Some(ANALYST_KEY)).await;
    assert_eq!(status, 200);
    assert_eq!(body["exists"], true);
    assert_eq!(body["engine"], "sqlite");
    assert!(body.get("url").is_none(), "{body}");
    // Managing datasources and indexes needs an administrator key.
    let entry = json!({"config": {"id": "x", "url": "sqlite:///nowhere.db"}});
    for (status, body) in [
        server.post("/datasource", Some(ANALYST_KEY), entry).await,
        server
            .post("/index-all", Some(ANALYST_KEY), json!({}))
            .await,
        server
            .post("/index/plant", Some(ANALYST_KEY), json!({}))
            .await,
        server.delete("/datasource/plant", Some(ANALYST_KEY)).await,
    ] {
        assert_eq!(
            (status, body["error_code"].as_str()),
            (403, Some("SECURITY_VIOLATION"))
        );
    }
    assert_eq!(
        server.get("/datasource", Some(ANALYST_KEY)).await.1["datasources"],
        json!(["plant"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datasources_are_added_indexed_and_removed() {
    let server = start("datasources", |_| {}).await;
    let copy = server.dir.join("plant2.db");
    std::fs::copy(fixture(), &copy).unwrap();
    let entry = json!({"config": {
        "id": "plant2",
        "description": "A second plant",
        "url": format!("sqlite://{}", copy.display()),
    }});
    let (status, body) = server
        .post("/datasource", Some(ADMIN_KEY), entry.clone())
        .await;
    assert_eq!(status, 201, "{body:#}");
    assert_eq!(body["success"], true);
    assert_eq!(body["datasource_id"], "plant2");
    let (status, body) = server.post("/datasource", Some(ADMIN_KEY), entry).await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (409, Some("CONFLICT"))
    );
    assert_eq!(
        server.get("/datasource", Some(ADMIN_KEY)).await,
        (200, json!({"datasources": ["plant", "plant2"]}))
    );
    let (status, body) = server.get("/datasource/plant2", Some(ADMIN_KEY)).await;
    assert_eq!(status, 200);
    assert_eq!(body["description"], "A second plant");
    assert_eq!(body["schema_version"], Value::Null);
    assert!(body["url"].as_str().unwrap().ends_with("plant2.db"));

    // Not indexed yet: not ready.
    let (status, body) = server.get("/ready", None).await;
    assert_eq!(status, 503, "{body:#}");
    assert_eq!(
        body["details"]["checks"]["index"],
        json!({"total": 2, "indexed": 1})
    );

    let (status, body) = server
        .post("/index/plant2", Some(ADMIN_KEY), json!({}))
        .await;
    assert_eq!(status, 200, "{body:#}");
    let version = body["indexing_stats"]["schema_version"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, body) = server.get("/datasource/plant2", Some(ADMIN_KEY)).await;
    assert_eq!(body["schema_version"], version.as_str());
    let (status, body) = server.get("/index/status", Some(ADMIN_KEY)).await;
    assert_eq!(status, 200);
    assert_eq!(body["status"], "operational");
    assert_eq!(body["indexed_datasources"], json!(["plant", "plant2"]));
    assert_eq!(body["total_indexes"], 2);
    assert_eq!(server.get("/ready", None).await.0, 200);

    let (status, body) = server
        .ask(
            ANALYST_KEY,
            json!({"natural_language": COUNT_QUESTION, "datasource_id": "plant2"}),
        )
        .await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(body["subqueries"][0]["datasource_id"], "plant2");
    assert_eq!(single_value(&body), sql_count("factories"));

    let (status, body) = server.delete("/datasource/plant2", Some(ADMIN_KEY)).await;
    assert_eq!(
        (status, body["success"].as_bool()),
        (200, Some(true)),
        "{body:#}"
    );
    assert_eq!(
        server.get("/datasource/plant2", Some(ADMIN_KEY)).await.0,
        404
    );
    let (status, body) = server.delete("/datasource/plant2", Some(ADMIN_KEY)).await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (404, Some("NOT_FOUND"))
    );
    let (status, _) = server
        .ask(
            ANALYST_KEY,
            json!({"natural_language": COUNT_QUESTION, "datasource_id": "plant2"}),
        )
        .await;
    assert_eq!(status, 404);
    assert_eq!(
        server
            .post("/index/plant2", Some(ADMIN_KEY), json!({}))
            .await
            .0,
        404
    );
    assert_eq!(
        server.get("/datasource", Some(ADMIN_KEY)).await.1,
        json!({"datasources": ["plant"]})
    );
    // The remaining datasource still answers.
    let (status, body) = server
        .ask(ANALYST_KEY, json!({"natural_language": COUNT_QUESTION}))
        .await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(single_value(&body), sql_count("factories"));

    // Invalid entries: the reference shape, an unknown scheme, a bad id.
    for bad in [
        json!({"config": {"id": "x", "connection": {"type": "sqlite", "database": "x.db"}}}),
        json!({"config": {"id": "x", "url": "oracle://db"}}),
        json!({"config": {"id": "no spaces", "url": "sqlite:///x.db"}}),
    ] {
        let (status, body) = server.post("/datasource", Some(ADMIN_KEY), bad).await;
        assert_eq!(
            (status, body["error_code"].as_str()),
            (400, Some("BAD_REQUEST")),
            "{body}"
        );
    }

    // Re-indexing everything reports each datasource.
    let (status, body) = server.post("/index-all", Some(ADMIN_KEY), json!({})).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(body["success"], true);
    assert_eq!(
        body["indexing_results"]["indexed"][0]["datasource_id"],
        "plant"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn execute_false_returns_sql_and_no_rows() {
    let server = start("noexec", |_| {}).await;
    let (status, body) = server
        .ask(
            ANALYST_KEY,
            json!({"natural_language": COUNT_QUESTION, "execute": false}),
        )
        .await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(body["status"], "succeeded");
    let sql = body["sql"].as_str().unwrap().to_uppercase();
    assert!(sql.contains("COUNT") && sql.contains("FACTORIES"), "{sql}");
    assert_eq!(body["results"], json!([]));
    assert_eq!(body["subqueries"][0]["row_count"], Value::Null);
    assert!(files_with_extension(&server.dir.join("data"), "parquet").is_empty());
    // The engine that executes is untouched: the next question runs.
    let (status, body) = server
        .ask(ANALYST_KEY, json!({"natural_language": COUNT_QUESTION}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(single_value(&body), sql_count("factories"));
    assert_eq!(
        files_with_extension(&server.dir.join("data"), "parquet").len(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_fails_when_the_datasource_file_is_gone() {
    let server = start("ready", |_| {}).await;
    let (status, body) = server.get("/ready", None).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(body["success"], true);
    assert_eq!(
        body["checks"]["datasources"],
        json!({"total": 1, "reachable": 1})
    );
    std::fs::remove_file(server.dir.join("plant.db")).unwrap();
    let (status, body) = server.get("/ready", None).await;
    assert_eq!(status, 503, "{body:#}");
    assert_eq!(body["error_code"], "SERVICE_UNAVAILABLE");
    assert_eq!(
        body["details"]["checks"]["datasources"],
        json!({"total": 1, "reachable": 0})
    );
    // The body names no datasource and no path.
    assert!(!body.to_string().contains("plant"), "{body}");
    // Health is about the process only.
    assert_eq!(server.get("/health", None).await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_allows_only_configured_origins() {
    let allowed = "https://app.example.com";
    let server = start("cors", |c| c.cors_origins = vec![allowed.to_owned()]).await;
    let origin_of = |resp: &reqwest::Response| {
        resp.headers()
            .get("access-control-allow-origin")
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let get = |origin: &'static str| {
        server
            .client
            .get(format!("{}/health", server.base))
            .header("Origin", origin)
            .send()
    };
    let resp = get(allowed).await.unwrap();
    assert_eq!(origin_of(&resp).as_deref(), Some(allowed));
    let resp = get("https://evil.example.com").await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(origin_of(&resp), None);
    // A preflight for an authenticated POST.
    let resp = server
        .client
        .request(reqwest::Method::OPTIONS, format!("{}/query", server.base))
        .header("Origin", allowed)
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "authorization,content-type",
        )
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    assert_eq!(origin_of(&resp).as_deref(), Some(allowed));
    let headers = resp
        .headers()
        .get("access-control-allow-headers")
        .unwrap()
        .to_str()
        .unwrap()
        .to_lowercase();
    assert!(headers.contains("authorization"), "{headers}");

    // Closed by default.
    let closed = start("cors-closed", |_| {}).await;
    let resp = closed
        .client
        .get(format!("{}/health", closed.base))
        .header("Origin", allowed)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(origin_of(&resp), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_user_context_counts_only_in_development_mode() {
    let strict = start("ctx-strict", |_| {}).await;
    let as_admin = json!({
        "natural_language": COUNT_QUESTION,
        "user_context": {"user_id": "root", "tenant_id": "acme", "roles": ["admin"]},
    });
    let (status, body) = strict.ask(GUEST_KEY, as_admin.clone()).await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (403, Some("SECURITY_VIOLATION"))
    );
    let as_guest = json!({
        "natural_language": COUNT_QUESTION,
        "user_context": {"roles": ["guest"]},
    });
    let (status, body) = strict.ask(ANALYST_KEY, as_guest).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(single_value(&body), sql_count("factories"));
    assert!(
        body["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("user_context in the request was ignored")),
        "{body:#}"
    );

    let dev = start("ctx-dev", |c| c.dev_trust_user_context = true).await;
    let (status, body) = dev.ask(GUEST_KEY, as_admin).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(single_value(&body), sql_count("factories"));
    let (status, body) = dev
        .ask(
            ANALYST_KEY,
            json!({"natural_language": COUNT_QUESTION, "user_context": {"roles": ["guest"]}}),
        )
        .await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (403, Some("SECURITY_VIOLATION"))
    );
    // The run still belongs to the key that started it.
    let trace = body["details"]["trace_id"].as_str().unwrap();
    let (status, body) = dev.get(&format!("/query/{trace}"), Some(ANALYST_KEY)).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(body["status"], "failed");
    assert!(
        body["errors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["code"] == "SECURITY_VIOLATION"),
        "{body:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_error_responses() {
    let server = start("bad", |c| c.max_body_bytes = 1024).await;
    let (status, body) = server
        .ask(ANALYST_KEY, json!({"natural_language": "x".repeat(4000)}))
        .await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (413, Some("PAYLOAD_TOO_LARGE"))
    );
    let (status, body) = server
        .ask(ANALYST_KEY, json!({"natural_language": "  "}))
        .await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (400, Some("BAD_REQUEST"))
    );
    let (status, body) = server
        .ask(ANALYST_KEY, json!({"question": COUNT_QUESTION}))
        .await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (400, Some("BAD_REQUEST"))
    );
    let resp = server
        .client
        .post(format!("{}/query", server.base))
        .bearer_auth(ANALYST_KEY)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let (status, body) = server
        .ask(
            ANALYST_KEY,
            json!({"natural_language": COUNT_QUESTION, "datasource_id": "nowhere"}),
        )
        .await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (404, Some("NOT_FOUND"))
    );
    let (status, body) = server
        .ask(
            ANALYST_KEY,
            json!({"natural_language": "Delete all factories"}),
        )
        .await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (403, Some("INTENT_VIOLATION")),
        "{body:#}"
    );
    let (status, body) = server.get("/no/such/route", Some(ANALYST_KEY)).await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (404, Some("NOT_FOUND"))
    );
    let (status, body) = server.delete("/health", None).await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (405, Some("METHOD_NOT_ALLOWED"))
    );
    let (status, body) = server.delete("/index", Some(ADMIN_KEY)).await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (501, Some("NOT_IMPLEMENTED"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_routes_show_settings_without_keys() {
    let offline = start("llm-offline", |_| {}).await;
    let (status, body) = offline.get("/llm", Some(ANALYST_KEY)).await;
    assert_eq!(status, 200);
    assert_eq!(body["llms"]["default"]["provider"], "offline");
    let (status, body) = offline.get("/llm/decomposer", Some(ANALYST_KEY)).await;
    assert_eq!((status, body["provider"].as_str()), (200, Some("offline")));

    let config = LlmConfig::from_toml_str(
        "[default]\nmodel = \"gpt-test\"\nbase_url = \"https://user:hunter2@llm.example.com/v1\"\napi_key = \"${env:NL2SQL_SERVER_TEST_KEY}\"\n\n[agents.ast_planner]\nmodel = \"gpt-test-mini\"\n",
    )
    .unwrap();
    let llm = start_with("llm", PlannerInfo::Llm(Box::new(config)), |_| {}).await;
    let (status, body) = llm.get("/llm", Some(ANALYST_KEY)).await;
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(body["llms"]["default"]["model"], "gpt-test");
    assert_eq!(body["llms"]["decomposer"]["model"], "gpt-test");
    assert_eq!(body["llms"]["ast_planner"]["model"], "gpt-test-mini");
    assert_eq!(
        body["llms"]["default"]["base_url"],
        "https://user:***@llm.example.com/v1"
    );
    let text = body.to_string();
    assert!(
        !text.contains("hunter2")
            && !text.contains("api_key")
            && !text.contains("NL2SQL_SERVER_TEST_KEY"),
        "{text}"
    );
    let (_, body) = llm.get("/llm/ast_planner", Some(ANALYST_KEY)).await;
    assert_eq!(body["model"], "gpt-test-mini");
    let (_, body) = llm.get("/llm/unknown", Some(ANALYST_KEY)).await;
    assert_eq!(body["model"], "gpt-test");
    let (status, body) = llm
        .post("/llm", Some(ADMIN_KEY), json!({"config": {"model": "x"}}))
        .await;
    assert_eq!(
        (status, body["error_code"].as_str()),
        (501, Some("NOT_IMPLEMENTED"))
    );
}
