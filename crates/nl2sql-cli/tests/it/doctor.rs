//! `nl2sql doctor` through the real binary: the configuration, policy and documentation
//! checks, datasource connectivity (a dead datasource fails), the data directory's
//! snapshots and index, the demo fallback, and the LLM endpoint check against a local
//! HTTP server (the API key is sent, never printed).

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::thread::JoinHandle;

use nl2sql_test_support::{TempDir, files_where};
use serde_json::{Value, json};

use crate::support::{fixture, json, nl2sql, temp_dir};

/// `nl2sql ARGS` in `dir`, with `env` set.
fn run_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = nl2sql();
    cmd.args(args).current_dir(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// Runs `doctor … --format json` in `dir`; returns the exit code and the report.
fn doctor(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, Value) {
    let mut all = vec!["doctor", "--data-dir", "data", "--format", "json"];
    all.extend_from_slice(args);
    let out = run_in(dir, &all, env);
    (out.status.code().unwrap(), json(&out))
}

/// The (check, target, status) of every check, in order.
fn statuses(report: &Value) -> Vec<(String, String, String)> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["check"].as_str().unwrap().to_owned(),
                c["target"].as_str().unwrap_or("").to_owned(),
                c["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn check<'a>(report: &'a Value, name: &str, target: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == name && c["target"].as_str().unwrap_or("") == target)
        .unwrap_or_else(|| panic!("no check {name} {target} in {report:#}"))
}

fn detail(report: &Value, name: &str, target: &str) -> String {
    check(report, name, target)["detail"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn row(check: &str, target: &str, status: &str) -> (String, String, String) {
    (check.to_owned(), target.to_owned(), status.to_owned())
}

const POLICY: &str = r#"{"version": 1, "roles": {"analyst": {"description": "Reads the plant",
    "role": "analyst", "allowed_datasources": ["plant"], "allowed_tables": ["plant.*"]}}}"#;

/// A directory with the fixture (`plant.db`), a policy and `nl2sql.toml` naming `plant`
/// and a datasource whose file does not exist (`gone`).
fn setup(name: &str) -> TempDir {
    let dir = temp_dir(name);
    std::fs::copy(fixture(), dir.join("plant.db")).unwrap();
    std::fs::write(dir.join("policy.json"), POLICY).unwrap();
    std::fs::write(
        dir.join("nl2sql.toml"),
        "version = 1\npolicy = \"policy.json\"\n\n[[datasources]]\nid = \"plant\"\nurl = \"sqlite://plant.db\"\n\n[[datasources]]\nid = \"gone\"\nurl = \"sqlite://missing.db\"\n",
    )
    .unwrap();
    dir
}

fn find_file(dir: &Path, name: &str) -> Option<PathBuf> {
    files_where(dir, |p| p.file_name().is_some_and(|n| n == name))
        .into_iter()
        .next()
}

#[test]
fn a_dead_datasource_fails_and_the_index_is_checked_per_datasource() {
    let dir = setup("dead");
    let (code, report) = doctor(&dir, &["--config", "nl2sql.toml"], &[]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["ok"], false);
    assert_eq!(
        statuses(&report),
        vec![
            row("config", "", "ok"),
            row("policy", "", "ok"),
            row("docs", "", "ok"),
            row("datasource", "gone", "fail"),
            row("datasource", "plant", "ok"),
            row("index", "gone", "warn"),
            row("index", "plant", "warn"),
        ]
    );
    assert_eq!(
        detail(&report, "config", ""),
        "configuration nl2sql.toml: 2 datasource(s): gone, plant"
    );
    assert_eq!(
        detail(&report, "policy", ""),
        "./policy.json: 1 role(s): analyst"
    );
    assert_eq!(
        detail(&report, "docs", ""),
        "no documentation files configured"
    );
    assert_eq!(
        detail(&report, "datasource", "gone"),
        "[SERVICE_UNAVAILABLE] the SQLite database file does not exist or is not a file"
    );
    assert_eq!(detail(&report, "datasource", "plant"), "reachable (sqlite)");
    assert!(check(&report, "datasource", "plant")["elapsed_ms"].is_u64());
    assert!(
        detail(&report, "index", "plant").starts_with("not indexed: nothing in "),
        "{report:#}"
    );
    assert_eq!(report["summary"], json!({"ok": 4, "warn": 2, "fail": 1}));
    // Nothing was created under the data directory.
    assert!(!dir.join("data").exists());

    // Indexed: the reachable datasource has a snapshot and documents; the dead one none.
    let out = run_in(
        &dir,
        &["index", "--config", "nl2sql.toml", "--data-dir", "data"],
        &[],
    );
    assert_eq!(out.status.code(), Some(3));
    let (code, report) = doctor(&dir, &["--config", "nl2sql.toml"], &[]);
    assert_eq!(code, 1);
    assert_eq!(check(&report, "index", "plant")["status"], "ok");
    let indexed = detail(&report, "index", "plant");
    assert!(
        indexed.starts_with("schema snapshot ") && indexed.contains(": 9 table(s), "),
        "{indexed}"
    );
    assert!(indexed.ends_with(" index document(s)"), "{indexed}");
    assert_eq!(check(&report, "index", "gone")["status"], "warn");
    assert_eq!(
        detail(&report, "index", "gone"),
        "no schema snapshot yet (`nl2sql index` or the first `ask` indexes it)"
    );

    // A snapshot whose index documents are gone fails.
    let index_file = find_file(&dir.join("data"), "lexical_index.json").unwrap();
    std::fs::remove_file(index_file).unwrap();
    let (code, report) = doctor(&dir, &["--config", "nl2sql.toml"], &[]);
    assert_eq!(code, 1);
    assert_eq!(check(&report, "index", "plant")["status"], "fail");
    assert!(
        detail(&report, "index", "plant")
            .ends_with(" is stored but the index has no documents for it (run `nl2sql index`)"),
        "{report:#}"
    );

    // Only the live datasource: nothing fails, the text report says so.
    let out = run_in(
        &dir,
        &["doctor", "--db", "sqlite://plant.db", "--data-dir", "data"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(
            "ok    config: --db: ad-hoc datasource plant\nok    datasource plant: reachable (sqlite)\nwarn  index plant: not indexed: nothing in "
        ),
        "{text}"
    );
    assert!(
        text.ends_with("\n\n2 ok, 1 warning(s), 0 failure(s)\n"),
        "{text}"
    );
}

#[test]
fn broken_policy_and_documentation_files_fail() {
    let dir = setup("broken");
    std::fs::write(
        dir.join("policy.json"),
        r#"{"version": 1, "roles": {"r": {"description": "d", "role": "r", "allowed_tables": ["machines"]}}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("nl2sql.toml"),
        "version = 1\npolicy = \"policy.json\"\nquestions = \"questions.json\"\n\n[[datasources]]\nid = \"plant\"\nurl = \"sqlite://plant.db\"\n",
    )
    .unwrap();
    let (code, report) = doctor(&dir, &["--config", "nl2sql.toml"], &[]);
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(
        statuses(&report)[..4],
        [
            row("config", "", "ok"),
            row("policy", "", "fail"),
            row("docs", "", "fail"),
            row("datasource", "plant", "ok"),
        ]
    );
    assert_eq!(
        detail(&report, "policy", ""),
        "invalid policy file './policy.json': invalid table 'machines' in role 'r': policy requires explicit 'datasource.table' format to prevent ambiguity"
    );
    assert!(
        detail(&report, "docs", "").starts_with("questions: './questions.json': "),
        "{report:#}"
    );

    // A configuration that does not parse stops the checks that need it.
    std::fs::write(
        dir.join("bad.toml"),
        "version = 1\n[[datasources]]\nid = \"x\"\n",
    )
    .unwrap();
    let (code, report) = doctor(&dir, &["--config", "bad.toml"], &[]);
    assert_eq!(code, 1);
    assert_eq!(statuses(&report), vec![row("config", "", "fail")]);
    assert!(
        detail(&report, "config", "").starts_with("invalid configuration file 'bad.toml': "),
        "{report:#}"
    );
}

#[test]
fn without_configuration_the_demo_is_checked_when_present() {
    let dir = temp_dir("demo");
    let (code, report) = doctor(&dir, &[], &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(statuses(&report), vec![row("config", "", "warn")]);
    assert_eq!(
        detail(&report, "config", ""),
        "no configuration (--config, --db or $NL2SQL_CONFIG) and no demo in data/demo (`nl2sql demo` creates it)"
    );
    // The doctor creates nothing, not even the demo.
    assert!(!dir.join("data").exists());

    // A demo directory (here a one-datasource stand-in) is what `ask` would use.
    let demo = dir.join("data/demo");
    std::fs::create_dir_all(&demo).unwrap();
    std::fs::copy(fixture(), demo.join("plant.db")).unwrap();
    std::fs::write(
        demo.join("nl2sql.toml"),
        "version = 1\n[[datasources]]\nid = \"plant\"\nurl = \"sqlite://plant.db\"\n",
    )
    .unwrap();
    let (code, report) = doctor(&dir, &[], &[]);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(
        statuses(&report),
        vec![
            row("config", "", "ok"),
            row("policy", "", "warn"),
            row("docs", "", "ok"),
            row("datasource", "plant", "ok"),
            row("index", "plant", "warn"),
        ]
    );
    assert_eq!(
        detail(&report, "config", ""),
        "demo configuration data/demo/nl2sql.toml: 1 datasource(s): plant"
    );
    assert_eq!(
        detail(&report, "policy", ""),
        "no policy file: every caller may read every datasource"
    );
}

/// A one-request HTTP server answering `status` with `body`; returns its base URL and
/// the request it received.
fn serve_once(status: &'static str, body: &'static str) -> (String, JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = Vec::new();
        let mut buf = [0u8; 1024];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            request.extend_from_slice(&buf[..n]);
        }
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(response.as_bytes()).unwrap();
        String::from_utf8_lossy(&request).into_owned()
    });
    (url, handle)
}

fn llm_file(dir: &Path, name: &str, base_url: &str, model: &str) -> String {
    std::fs::write(
        dir.join(name),
        format!(
            "[default]\nmodel = \"{model}\"\nbase_url = \"{base_url}\"\napi_key_env = \"NL2SQL_DOCTOR_TEST_KEY\"\n"
        ),
    )
    .unwrap();
    name.to_owned()
}

const KEY: (&str, &str) = ("NL2SQL_DOCTOR_TEST_KEY", "sk-doctor-must-not-print");

#[test]
fn the_llm_endpoint_is_asked_for_its_models() {
    let dir = temp_dir("llm");
    let db = format!("sqlite://{}", fixture().display());

    // An endpoint that lists the configured model.
    let (url, server) = serve_once("200 OK", r#"{"object": "list", "data": [{"id": "m1"}]}"#);
    let file = llm_file(&dir, "llm.toml", &url, "m1");
    let out = run_in(
        &dir,
        &[
            "doctor",
            "--db",
            &db,
            "--data-dir",
            "data",
            "--llm-config",
            &file,
            "--format",
            "json",
        ],
        &[KEY],
    );
    assert_eq!(out.status.code(), Some(0));
    let request = server.join().unwrap();
    assert!(
        request.starts_with("GET /v1/models HTTP/1.1\r\n"),
        "{request}"
    );
    assert!(
        request
            .to_lowercase()
            .contains("authorization: bearer sk-doctor-must-not-print\r\n"),
        "{request}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains(KEY.1));
    assert!(!String::from_utf8_lossy(&out.stderr).contains(KEY.1));
    let report = json(&out);
    assert_eq!(detail(&report, "llm-config", ""), "llm.toml: 1 endpoint(s)");
    assert_eq!(check(&report, "llm", &url)["status"], "ok");
    assert_eq!(
        detail(&report, "llm", &url),
        "answered (HTTP 200); model(s) listed: m1"
    );

    // An endpoint that does not serve the configured model: a warning.
    let (url, _server) = serve_once("200 OK", r#"{"data": [{"id": "other"}]}"#);
    let file = llm_file(&dir, "llm2.toml", &url, "m1");
    let (code, report) = doctor(&dir, &["--db", &db, "--llm-config", &file], &[KEY]);
    assert_eq!(code, 0);
    assert_eq!(check(&report, "llm", &url)["status"], "warn");
    assert_eq!(
        detail(&report, "llm", &url),
        "answered (HTTP 200), but its model list lacks: m1"
    );

    // A refused key fails.
    let (url, _server) = serve_once("401 Unauthorized", r#"{"error": {"message": "bad key"}}"#);
    let file = llm_file(&dir, "llm3.toml", &url, "m1");
    let (code, report) = doctor(&dir, &["--db", &db, "--llm-config", &file], &[KEY]);
    assert_eq!(code, 1);
    assert_eq!(
        detail(&report, "llm", &url),
        "the endpoint refused the API key (HTTP 401)"
    );

    // Nothing listening fails; so does a missing key, before any request.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/v1");
    let file = llm_file(&dir, "llm4.toml", &url, "m1");
    let (code, report) = doctor(&dir, &["--db", &db, "--llm-config", &file], &[KEY]);
    assert_eq!(code, 1);
    assert_eq!(check(&report, "llm", &url)["status"], "fail");
    assert!(
        detail(&report, "llm", &url).starts_with("cannot connect: "),
        "{report:#}"
    );
    let (code, report) = doctor(&dir, &["--db", &db, "--llm-config", &file], &[]);
    assert_eq!(code, 1);
    assert_eq!(
        detail(&report, "llm", &url),
        "api_key: secret not found: ${env:NL2SQL_DOCTOR_TEST_KEY}"
    );

    // An LLM file that does not parse fails its own check.
    std::fs::write(
        dir.join("bad.toml"),
        "[default]\nprovider = \"acme\"\nmodel = \"m\"\n",
    )
    .unwrap();
    let (code, report) = doctor(&dir, &["--db", &db, "--llm-config", "bad.toml"], &[]);
    assert_eq!(code, 1);
    assert_eq!(check(&report, "llm-config", "")["status"], "fail");
    assert!(
        detail(&report, "llm-config", "").contains("unsupported LLM provider 'acme'"),
        "{report:#}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let dir = temp_dir("usage");
    let out = run_in(&dir, &["doctor", "--format", "yaml"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let out = run_in(
        &dir,
        &["doctor", "--config", "a.toml", "--db", "sqlite://x.db"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
}
