//! The REST API over real HTTP: answers checked against direct SQL, authentication,
//! RBAC, run records, plan-only runs, CORS, development mode and bad requests.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use serde_json::{Value, json};

use crate::support::{
    ADMIN_KEY, ANALYST_KEY, ANALYST2_KEY, COUNT_QUESTION, GUEST_KEY, files_with_extension, fixture,
    single_value, sql_count, start,
};

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
