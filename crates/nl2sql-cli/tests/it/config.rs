//! What a configuration file sets besides datasources, through the real binary: the
//! `[engine]` and `[artifacts]` sections, documentation files, re-indexing when a schema
//! changes, and `ask --no-execute` (plans and SQL, nothing run).

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::path::{Path, PathBuf};
use std::process::Output;

use nl2sql_test_support::TempDir;
use serde_json::{Value, json};

use crate::support::{fixture, json, nl2sql, stderr, temp_dir};

/// `nl2sql ARGS --data-dir DIR/data` in `dir`.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    nl2sql()
        .args(args)
        .arg("--data-dir")
        .arg(dir.join("data"))
        .current_dir(dir)
        .output()
        .unwrap()
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

const CONFIG: &str = r#"version = 1
schema_docs = "docs.json"
questions = "questions.json"

[engine]
max_parallel_scans = 2
max_retries = 1
global_timeout_sec = 30

[artifacts]
uri = "results"

[[datasources]]
id = "plant"
url = "sqlite://plant.db"
"#;

fn setup(name: &str) -> TempDir {
    let dir = temp_dir(name);
    std::fs::copy(fixture(), dir.join("plant.db")).unwrap();
    std::fs::write(dir.join("nl2sql.toml"), CONFIG).unwrap();
    std::fs::write(
        dir.join("docs.json"),
        r#"{"version": 1, "datasources": {"plant": {"tables": {"factories": {"description": "Our plants"}}}}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("questions.json"),
        r#"{"version": 1, "datasources": {"plant": ["How many plants do we run?"]}}"#,
    )
    .unwrap();
    dir
}

#[test]
fn configured_artifacts_docs_and_explain_only_mode() {
    let dir = setup("sections");
    let out = run_in(
        &dir,
        &[
            "ask",
            "--config",
            "nl2sql.toml",
            "--format",
            "json",
            "How many factories do we have?",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["rows"], serde_json::json!([[3]]));
    // The artifact went where `[artifacts]` says, relative to the configuration file.
    let written = files_with_extension(&dir.join("results"), "parquet");
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(files_with_extension(&dir.join("data"), "parquet").is_empty());
    // The schema docs were indexed: the stored snapshot carries the description.
    let snapshots = files_with_extension(&dir.join("data"), "json");
    let described = snapshots.iter().any(|p| {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .contains("Our plants")
    });
    assert!(described, "{snapshots:?}");

    // --no-execute: SQL, no rows, nothing written.
    let out = run_in(
        &dir,
        &[
            "ask",
            "--config",
            "nl2sql.toml",
            "--format",
            "json",
            "--no-execute",
            "How many machines are there?",
        ],
    );
    let v = json(&out);
    assert_eq!(v["success"], true, "{v}");
    let sql = v["subqueries"][0]["sql"].as_str().unwrap();
    assert!(
        sql.contains("COUNT(*)") && sql.contains("machines"),
        "{sql}"
    );
    assert!(
        v["rows"].is_null() || v["rows"] == serde_json::json!([]),
        "{v}"
    );
    assert_eq!(
        files_with_extension(&dir.join("results"), "parquet").len(),
        1,
        "no new artifact"
    );
}

#[test]
fn a_changed_schema_is_indexed_again_before_the_question() {
    let dir = setup("changed");
    let ask = |q: &str| {
        run_in(
            &dir,
            &["ask", "--config", "nl2sql.toml", "--format", "json", q],
        )
    };
    let first = ask("How many factories do we have?");
    let stderr = String::from_utf8_lossy(&first.stderr).into_owned();
    assert!(
        stderr.contains("indexed plant (schema version "),
        "{stderr}"
    );
    let second = ask("How many factories do we have?");
    let stderr = String::from_utf8_lossy(&second.stderr).into_owned();
    assert!(!stderr.contains("indexed plant"), "unchanged: {stderr}");

    let conn = rusqlite::Connection::open(dir.join("plant.db")).unwrap();
    conn.execute_batch("CREATE TABLE suppliers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);")
        .unwrap();
    drop(conn);
    let third = ask("How many suppliers are there?");
    let stderr = String::from_utf8_lossy(&third.stderr).into_owned();
    assert!(
        stderr.contains("indexed plant (schema version "),
        "{stderr}"
    );
    let v = json(&third);
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["rows"], serde_json::json!([[0]]));
}

#[test]
fn bad_sections_are_configuration_errors_naming_the_key() {
    let dir = setup("bad");
    for (text, key) in [
        (
            "[engine]\nmax_parallel_scans = 0\n",
            "engine.max_parallel_scans",
        ),
        (
            "[engine]\nschema_version_mismatch = \"maybe\"\n",
            "schema_version_mismatch",
        ),
        ("[artifacts]\nuri = \"ftp://nowhere\"\n", "artifacts.uri"),
        ("[engine]\nturbo = true\n", "turbo"),
    ] {
        let config = format!(
            "version = 1\n\n{text}\n[[datasources]]\nid = \"plant\"\nurl = \"sqlite://plant.db\"\n"
        );
        std::fs::write(dir.join("bad.toml"), config).unwrap();
        let out = run_in(
            &dir,
            &["ask", "--config", "bad.toml", "How many factories?"],
        );
        assert_eq!(out.status.code(), Some(2), "{text}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(key), "{text}: {stderr}");
    }
}

/// `nl2sql ask --db sqlite://plant.db --format json` in `dir`, with `unset` and the
/// configuration variables removed from the environment and `vars` set.
fn ask_db(dir: &Path, unset: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = nl2sql();
    cmd.args([
        "ask",
        "--db",
        "sqlite://plant.db",
        "--format",
        "json",
        "How many factories are there?",
    ])
    .arg("--data-dir")
    .arg(dir.join("data"))
    .current_dir(dir);
    for k in unset {
        cmd.env_remove(k);
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn artifact_settings_from_the_environment_reach_the_default_store_or_are_refused() {
    let dir = setup("artifact-env");
    let ask = |vars: &[(&str, &str)]| ask_db(&dir, &["RESULT_ARTIFACT_BASE_URI"], vars);
    // A value that does not parse is a configuration error naming the variable.
    let out = ask(&[("RESULT_ARTIFACT_DURABILITY", "eventually")]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("RESULT_ARTIFACT_DURABILITY") && stderr.contains("eventually"),
        "{stderr}"
    );
    // Without `[artifacts]`, the durability and the template apply to the default store
    // under the data directory.
    let out = ask(&[
        ("RESULT_ARTIFACT_DURABILITY", "synced"),
        ("RESULT_ARTIFACT_PATH_TEMPLATE", "env/<dag_node_id>.parquet"),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = json(&out);
    assert_eq!(result["rows"], serde_json::json!([[3]]));
    let written = files_with_extension(&dir.join("data"), "parquet");
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(
        written[0]
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str()),
        Some("env"),
        "{written:?}"
    );
    assert!(written[0].starts_with(dir.join("data")), "{written:?}");
}

#[test]
fn logs_carry_the_trace_and_tenant_and_audit_events_reach_their_file() {
    let dir = setup("observability");
    let ask = |vars: &[(&str, &str)]| ask_db(&dir, &["NL2SQL_LOG", "OBSERVABILITY_EXPORTER"], vars);
    // By default no log records: standard error has only the command's own notes (the
    // first question indexes the datasource).
    let quiet = ask(&[]);
    assert_eq!(quiet.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&quiet.stderr);
    assert!(
        stderr.lines().all(|l| l.starts_with("indexed plant")),
        "{stderr}"
    );

    // Human-readable records, each inside the run's span.
    let out = ask(&[
        ("OBSERVABILITY_EXPORTER", "console"),
        ("NL2SQL_LOG", "nl2sql::node=debug,nl2sql::run=info"),
        ("TENANT_ID", "plant-7"),
        ("AUDIT_LOG_PATH", "audit/events.log"),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let trace = json(&out)["trace_id"].as_str().unwrap().to_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let span = format!("run{{trace_id={trace} tenant_id=plant-7}}");
    let records: Vec<&str> = stderr.lines().collect();
    assert!(records.len() >= 5, "{stderr}");
    assert!(records.iter().all(|l| l.contains(&span)), "{stderr}");
    assert!(
        stderr.contains("node=executor") && stderr.contains("run completed"),
        "{stderr}"
    );
    // The audit log went where AUDIT_LOG_PATH said (relative to the working directory).
    let audit = std::fs::read_to_string(dir.join("audit/events.log")).unwrap();
    let events: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event_type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["sql_executed", "run_completed"]);
    assert!(
        events
            .iter()
            .all(|e| e["trace_id"] == trace.as_str() && e["tenant_id"] == "plant-7")
    );

    // otlp: one JSON object per record, with the span's fields.
    let out = ask(&[
        ("OBSERVABILITY_EXPORTER", "otlp"),
        ("NL2SQL_LOG", "nl2sql::run=info"),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let trace = json(&out)["trace_id"].as_str().unwrap().to_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let record: Value = serde_json::from_str(stderr.lines().next().unwrap()).unwrap();
    assert_eq!(record["span"]["trace_id"], trace.as_str(), "{stderr}");
    assert_eq!(record["span"]["tenant_id"], "default_tenant");
    assert_eq!(record["fields"]["message"], "run completed");

    // Unknown values are configuration errors naming the variable.
    for (k, v) in [
        ("OBSERVABILITY_EXPORTER", "jaeger"),
        ("NL2SQL_LOG", "nl2sql=loud"),
    ] {
        let out = ask(&[(k, v)]);
        assert_eq!(out.status.code(), Some(2), "{k}={v}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(k), "{k}={v}");
    }
}

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
