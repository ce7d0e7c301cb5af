//! Datasource management (add, index, remove), readiness, and the `/llm` routes.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use nl2sql_planner_llm::LlmConfig;
use nl2sql_server::PlannerInfo;
use serde_json::{Value, json};

use crate::support::{
    ADMIN_KEY, ANALYST_KEY, COUNT_QUESTION, fixture, single_value, sql_count, start, start_with,
};

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
