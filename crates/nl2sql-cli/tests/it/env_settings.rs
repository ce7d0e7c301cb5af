//! Settings from the environment and from files through the real binary: default limits,
//! the env file, bad settings, where the store, index, configuration, policy, LLM file,
//! data directory and API keys come from, and process-isolated datasources.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::config::setup;
use crate::support::{json, nl2sql, stderr};
use nl2sql_test_support::files_with_extension;

/// `nl2sql ARGS` in `dir`, with the configuration variables and `unset` removed from the
/// environment and `vars` set; the data directory is `DIR/data`.
fn run_with(dir: &Path, args: &[&str], unset: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = nl2sql();
    cmd.args(args)
        .current_dir(dir)
        .env("NL2SQL_DATA_DIR", dir.join("data"))
        .env_remove("DATASOURCE_CONFIG")
        .env_remove("ENV_FILE_PATH")
        .env_remove("ENV")
        .env_remove("APP_ENV")
        .env_remove("NL2SQL_ENV_FILE_APPLIED");
    for k in unset {
        cmd.env_remove(k);
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The row limit `datasources list` shows for the ad-hoc `plant` datasource.
fn listed_row_limit(o: &Output) -> Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    json(o)["datasources"][0]["row_limit"].clone()
}

const LIST: &[&str] = &[
    "datasources",
    "list",
    "--db",
    "sqlite://plant.db",
    "--format",
    "json",
];

#[test]
fn default_limits_from_the_environment_cap_what_a_question_reads() {
    let dir = setup("default-limits");
    let limits = [
        "DEFAULT_ROW_LIMIT",
        "DEFAULT_MAX_BYTES",
        "DEFAULT_STATEMENT_TIMEOUT_MS",
    ];
    let out = run_with(&dir, LIST, &limits, &[]);
    assert_eq!(listed_row_limit(&out), 10_000, "the built-in default");
    let vars = [
        ("DEFAULT_ROW_LIMIT", "2"),
        ("DEFAULT_MAX_BYTES", "65536"),
        ("DEFAULT_STATEMENT_TIMEOUT_MS", "4000"),
    ];
    let out = run_with(&dir, LIST, &limits, &vars);
    let listed = &json(&out)["datasources"][0];
    assert_eq!(
        (
            &listed["row_limit"],
            &listed["max_bytes"],
            &listed["statement_timeout_ms"]
        ),
        (&json!(2), &json!(65536), &json!(4000))
    );
    // The question's SQL is capped by the default row limit, and so is its result.
    let out = run_with(
        &dir,
        &[
            "ask",
            "--db",
            "sqlite://plant.db",
            "--format",
            "json",
            "List the machines",
        ],
        &limits,
        &vars,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let sql = v["subqueries"][0]["sql"].as_str().unwrap();
    assert!(sql.ends_with("LIMIT 2"), "{sql}");
    assert_eq!(v["rows"].as_array().unwrap().len(), 2, "{v}");
    for key in limits.iter().chain(&[
        "CONNECT_TIMEOUT_MS",
        "SCHEMA_STATS_TIMEOUT_MS",
        "SCHEMA_STATS_SAMPLE_ROWS",
    ]) {
        let out = run_with(&dir, LIST, &[], &[(key, "0")]);
        assert_eq!(out.status.code(), Some(2), "{key}");
        assert!(stderr(&out).contains(key), "{key}: {}", stderr(&out));
    }
}

#[test]
fn an_env_file_supplies_settings_and_the_real_environment_wins() {
    let dir = setup("env-file");
    let limit = ["DEFAULT_ROW_LIMIT"];
    std::fs::write(
        dir.join(".env"),
        "# local settings\nDEFAULT_ROW_LIMIT=2\nexport PLANT_URL=\"sqlite://plant.db\"\n",
    )
    .unwrap();
    std::fs::write(dir.join(".env.staging"), "DEFAULT_ROW_LIMIT=4\n").unwrap();
    std::fs::write(dir.join("custom.env"), "DEFAULT_ROW_LIMIT=5\n").unwrap();
    assert_eq!(listed_row_limit(&run_with(&dir, LIST, &limit, &[])), 2);
    assert_eq!(
        listed_row_limit(&run_with(&dir, LIST, &limit, &[("DEFAULT_ROW_LIMIT", "3")])),
        3,
        "the real environment wins"
    );
    assert_eq!(
        listed_row_limit(&run_with(&dir, LIST, &limit, &[("ENV", "staging")])),
        4
    );
    assert_eq!(
        listed_row_limit(&run_with(&dir, LIST, &limit, &[("APP_ENV", "staging")])),
        4
    );
    assert_eq!(
        listed_row_limit(&run_with(
            &dir,
            LIST,
            &limit,
            &[("ENV_FILE_PATH", "custom.env"), ("ENV", "staging")]
        )),
        5
    );
    // A secret reference sees the file's variables too.
    std::fs::write(
        dir.join("secret.toml"),
        "version = 1\n[[datasources]]\nid = \"plant\"\nurl = \"${env:PLANT_URL}\"\n",
    )
    .unwrap();
    let out = run_with(
        &dir,
        &[
            "datasources",
            "list",
            "--config",
            "secret.toml",
            "--format",
            "json",
        ],
        &["PLANT_URL"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["datasources"][0]["url"], "sqlite://plant.db");

    // A named file that is missing, and a malformed line, stop the command.
    let out = run_with(&dir, LIST, &[], &[("ENV_FILE_PATH", "nowhere.env")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("ENV_FILE_PATH"), "{}", stderr(&out));
    std::fs::write(dir.join("bad.env"), "A=1\nthis is not a setting\n").unwrap();
    let out = run_with(&dir, LIST, &[], &[("ENV_FILE_PATH", "bad.env")]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("bad.env") && err.contains("line 2"), "{err}");
}

#[test]
fn unsupported_or_bad_settings_stop_every_command_naming_the_key() {
    let dir = setup("refused");
    for (vars, key) in [
        (
            &[("EMBEDDING_MODEL", "text-embedding-3-small")][..],
            "EMBEDDING_MODEL",
        ),
        (
            &[("SECRETS_CONFIG", "configs/secrets.yaml")][..],
            "SECRETS_CONFIG",
        ),
        (
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://localhost:4317")][..],
            "OTEL_EXPORTER_OTLP_ENDPOINT",
        ),
        (
            &[("RESULT_ARTIFACT_BACKEND", "hdfs")][..],
            "RESULT_ARTIFACT_BACKEND",
        ),
        (
            &[("RESULT_ARTIFACT_BACKEND", "adls")][..],
            "RESULT_ARTIFACT_BACKEND",
        ),
        (
            &[("RESULT_ARTIFACT_S3_BUCKET", "results")][..],
            "RESULT_ARTIFACT_S3_BUCKET",
        ),
        (
            &[("SCHEMA_STORE_BACKEND", "sqlite")][..],
            "SCHEMA_STORE_BACKEND",
        ),
        (
            &[("SANDBOX_INDEX_WORKERS", "0")][..],
            "SANDBOX_INDEX_WORKERS",
        ),
        (&[("ROUTER_L1_THRESHOLD", "0.9")][..], "ROUTER_L1_THRESHOLD"),
        (
            &[("SCHEMA_CONTEXT_MAX_COLUMNS", "none")][..],
            "SCHEMA_CONTEXT_MAX_COLUMNS",
        ),
        (
            &[("NL2SQL_CONFIG", "a.toml"), ("DATASOURCE_CONFIG", "b.toml")][..],
            "DATASOURCE_CONFIG",
        ),
    ] {
        // A command that needs no setting at all is stopped too.
        let out = run_with(&dir, &["list-adapters"], &[], vars);
        assert_eq!(out.status.code(), Some(2), "{vars:?}");
        let err = stderr(&out);
        assert!(err.contains(key), "{vars:?}: {err}");
    }
}

#[test]
fn the_store_and_index_go_where_the_settings_say_with_the_versions_they_keep() {
    let dir = setup("storage");
    std::fs::write(
        dir.join("sample.json"),
        r#"{"version": 1, "datasources": {"plant": ["How many zebras graze per plant?"]}}"#,
    )
    .unwrap();
    let vars = [
        ("SCHEMA_STORE_PATH", "snapshots"),
        ("VECTOR_STORE", "vectors"),
        ("VECTOR_STORE_COLLECTION", "nl2sql_store"),
        ("SAMPLE_QUESTIONS", "sample.json"),
        ("SCHEMA_STORE_MAX_VERSIONS", "1"),
    ];
    let index = |vars: &[(&str, &str)]| {
        let out = run_with(
            &dir,
            &["index", "--db", "sqlite://plant.db", "--format", "json"],
            &["SCHEMA_STORE_BACKEND"],
            vars,
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        json(&out)
    };
    index(&vars);
    let stores = files_with_extension(&dir.join("snapshots"), "json");
    assert_eq!(stores.len(), 1, "{stores:?}");
    let indexes = files_with_extension(&dir.join("vectors"), "json");
    assert_eq!(indexes.len(), 1, "{indexes:?}");
    assert_eq!(
        indexes[0].file_name().and_then(|n| n.to_str()),
        Some("nl2sql_store.json")
    );
    // The example question of SAMPLE_QUESTIONS was indexed.
    assert!(
        std::fs::read_to_string(&indexes[0])
            .unwrap()
            .contains("zebras graze"),
        "{indexes:?}"
    );
    // Nothing under the data directory's usual places.
    assert!(files_with_extension(&dir.join("data"), "json").is_empty());

    let versions = |store: &Path| {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(store).unwrap()).unwrap();
        v["versions"].as_array().unwrap().len()
    };
    let add_table = |name: &str| {
        let conn = rusqlite::Connection::open(dir.join("plant.db")).unwrap();
        conn.execute_batch(&format!("CREATE TABLE {name} (id INTEGER PRIMARY KEY);"))
            .unwrap();
    };
    // A changed schema: one version kept with SCHEMA_STORE_MAX_VERSIONS=1 ...
    add_table("suppliers");
    index(&vars);
    assert_eq!(versions(&stores[0]), 1);
    // ... and two with the default of 3.
    add_table("carriers");
    let defaults: Vec<(&str, &str)> = vars
        .iter()
        .copied()
        .filter(|(k, _)| *k != "SCHEMA_STORE_MAX_VERSIONS")
        .collect();
    index(&defaults);
    assert_eq!(versions(&stores[0]), 2);

    // In memory: nothing is written for the store.
    let out = run_with(
        &dir,
        &["index", "--db", "sqlite://plant.db", "--format", "json"],
        &[],
        &[
            ("SCHEMA_STORE_BACKEND", "memory"),
            ("VECTOR_STORE", "memory-vectors"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(files_with_extension(&dir.join("data"), "json").is_empty());
    assert_eq!(
        files_with_extension(&dir.join("memory-vectors"), "json").len(),
        1
    );
}

#[test]
fn configuration_policy_and_llm_files_come_from_the_environment() {
    let dir = setup("files");
    let ask = |extra: &[&str], vars: &[(&str, &str)]| {
        let mut args = vec!["ask", "--format", "json"];
        args.extend_from_slice(extra);
        args.push("How many factories do we have?");
        run_with(&dir, &args, &["LLM_CONFIG", "POLICIES_CONFIG"], vars)
    };
    // DATASOURCE_CONFIG names the configuration file.
    let out = ask(&[], &[("DATASOURCE_CONFIG", "nl2sql.toml")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["rows"], json!([[3]]));

    // POLICIES_CONFIG: a policy that gives the role nothing refuses the question.
    std::fs::write(
        dir.join("deny.json"),
        r#"{"version": 1, "roles": {"clerk": {"description": "d", "role": "clerk", "allowed_datasources": []}}}"#,
    )
    .unwrap();
    let out = ask(
        &["--role", "clerk"],
        &[
            ("DATASOURCE_CONFIG", "nl2sql.toml"),
            ("POLICIES_CONFIG", "deny.json"),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["errors"][0]["code"], "SECURITY_VIOLATION", "{v}");
    let out = ask(
        &["--role", "clerk"],
        &[
            ("POLICIES_CONFIG", "missing.json"),
            ("DATASOURCE_CONFIG", "nl2sql.toml"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("POLICIES_CONFIG"), "{}", stderr(&out));

    // LLM_CONFIG: the LLM planner answers by default (here a server that is not there,
    // so the question fails), unless --planner says otherwise.
    std::fs::write(
        dir.join("llm.toml"),
        "[default]\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"\"\nmax_retries = 0\ntimeout_sec = 5\n",
    )
    .unwrap();
    let llm = [
        ("DATASOURCE_CONFIG", "nl2sql.toml"),
        ("LLM_CONFIG", "llm.toml"),
        ("SQL_AGENT_MAX_RETRIES", "0"),
    ];
    let out = ask(&[], &llm);
    let v = json(&out);
    assert_eq!(v["success"], false, "{v}");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = ask(&["--planner", "offline"], &llm);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = ask(
        &[],
        &[
            ("LLM_CONFIG", "missing.toml"),
            ("DATASOURCE_CONFIG", "nl2sql.toml"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("LLM_CONFIG"), "{}", stderr(&out));
}

#[test]
fn the_data_directory_and_api_keys_file_come_from_the_environment() {
    let dir = setup("data-dir-env");
    let out = nl2sql()
        .args(["index", "--db", "sqlite://plant.db", "--format", "json"])
        .current_dir(&dir)
        .env("NL2SQL_DATA_DIR", "elsewhere")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!files_with_extension(&dir.join("elsewhere"), "json").is_empty());
    assert!(!dir.join(".nl2sql").exists());

    let out = nl2sql()
        .args([
            "serve",
            "--db",
            "sqlite://plant.db",
            "--bind",
            "127.0.0.1:0",
        ])
        .current_dir(&dir)
        .env("NL2SQL_DATA_DIR", "elsewhere")
        .env("NL2SQL_API_KEYS", "no-such-keys.toml")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no-such-keys.toml"),
        "{}",
        stderr(&out)
    );
}

/// `isolation = "process"`: the datasource runs in `nl2sql worker` child processes and
/// answers as in process; a worker program that cannot start fails the question with a
/// message saying so (the proof that the process path was taken).
#[test]
fn a_process_isolated_datasource_answers_through_worker_processes() {
    let dir = setup("isolation");
    std::fs::write(
        dir.join("isolated.toml"),
        "version = 1\n\n[[datasources]]\nid = \"plant\"\nurl = \"sqlite://plant.db\"\nisolation = \"process\"\n",
    )
    .unwrap();
    let question = [
        "ask",
        "--config",
        "isolated.toml",
        "--format",
        "json",
        "How many factories do we have?",
    ];
    let out = run_with(&dir, &question, &["NL2SQL_WORKER_PROGRAM"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["rows"], json!([[3]]), "{v}\n{}", stderr(&out));

    // The adapter options reach the worker: indexed again with a one-row statistics
    // sample, the 3 factories' ids show one distinct value, where they showed 3.
    let factory_ids = |dir: &Path| -> Value {
        let stored = files_with_extension(&dir.join("data"), "json")
            .into_iter()
            .find(|p| p.to_string_lossy().contains("schema_store"))
            .unwrap();
        let stored: Value =
            serde_json::from_str(&std::fs::read_to_string(stored).unwrap()).unwrap();
        stored["versions"][0]["snapshot"]["metadata"]["tables"]["main.factories"]["columns"]["id"]
            ["statistics"]["distinct_count"]
            .clone()
    };
    assert_eq!(factory_ids(&dir), json!(3));
    let out = run_with(
        &dir,
        &["index", "--config", "isolated.toml"],
        &["NL2SQL_WORKER_PROGRAM"],
        &[("SCHEMA_STATS_SAMPLE_ROWS", "1")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(factory_ids(&dir), json!(1));

    let missing = dir.join("no-such-worker");
    let out = run_with(
        &dir,
        &question,
        &["NL2SQL_LOG"],
        &[("NL2SQL_WORKER_PROGRAM", missing.to_str().unwrap())],
    );
    assert_ne!(out.status.code(), Some(0));
    let v = json(&out);
    assert_eq!(v["success"], json!(false), "{v}");
    let unavailable = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["code"] == "SERVICE_UNAVAILABLE")
        .unwrap_or_else(|| panic!("{v}"));
    let message = unavailable["message"].as_str().unwrap();
    assert!(message.contains("worker process failed"), "{message}");
    // The first attempt to index said so on standard error.
    assert!(
        stderr(&out).contains("cannot index plant"),
        "{}",
        stderr(&out)
    );

    // A server engine cannot be isolated in a worker: a configuration error naming the key.
    std::fs::write(
        dir.join("server.toml"),
        "version = 1\n\n[[datasources]]\nid = \"pg\"\nurl = \"postgres://u@127.0.0.1/db\"\nisolation = \"process\"\n",
    )
    .unwrap();
    let out = run_with(
        &dir,
        &["datasources", "list", "--config", "server.toml"],
        &[],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("datasources[0].isolation"),
        "{}",
        stderr(&out)
    );
}
