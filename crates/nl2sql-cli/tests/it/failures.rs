//! `nl2sql ask` when things go wrong, through the real binary on the demo: a datasource
//! that died after indexing (a partial answer naming the missing part) and Ctrl-C while
//! the planner is still thinking (a prompt, clean cancellation with no artifact left).

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::io::Read as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{assert_succeeded, json, nl2sql, temp_dir};

/// `nl2sql` with `NL2SQL_DATA_DIR` = `data_dir`.
fn with_data_dir(data_dir: &Path) -> Command {
    let mut cmd = nl2sql();
    cmd.env("NL2SQL_DATA_DIR", data_dir);
    cmd
}

/// Every `.parquet` file under `dir`, at any depth.
fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "parquet") {
                out.push(p);
            }
        }
    }
    out
}

const COMPARE: &str = "Compare the number of orders per factory in sales with the number of purchase orders per factory in supply";

#[test]
fn a_datasource_that_died_gives_a_partial_answer_naming_it() {
    let dir = temp_dir("partial");
    // The first ask creates and indexes the demo and answers in full.
    let out = with_data_dir(&dir)
        .args(["ask", "--format", "json", COMPARE])
        .output()
        .unwrap();
    let v = json(&out);
    assert_eq!(v["success"], true, "{v}");
    assert_eq!(v["rows"].as_array().unwrap().len(), 6);

    // Then the sales database is gone.
    std::fs::remove_file(dir.join("demo/sales.sqlite")).unwrap();
    let out = with_data_dir(&dir)
        .args(["ask", "--format", "json", COMPARE])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "a partial answer exits 3");
    let v = json(&out);
    assert_eq!(v["success"], false);
    assert_eq!(v["status"], "partial", "{v}");
    let subqueries = v["subqueries"].as_array().unwrap();
    let status_of = |ds: &str| {
        subqueries
            .iter()
            .find(|s| s["datasource_id"] == ds)
            .unwrap_or_else(|| panic!("no sub-query on {ds}: {v}"))["status"]
            .clone()
    };
    assert_eq!(status_of("supply"), "succeeded");
    assert_eq!(status_of("sales"), "failed");
    // The error names the dead datasource, with a stable code and the node it came from.
    let errors = v["errors"].as_array().unwrap();
    let sales_errors: Vec<&Value> = errors
        .iter()
        .filter(|e| e["datasource_id"] == "sales")
        .collect();
    assert!(!sales_errors.is_empty(), "{errors:?}");
    assert_eq!(sales_errors[0]["code"], "SERVICE_UNAVAILABLE");
    assert!(sales_errors[0]["node"].as_str().is_some());
    assert!(
        !errors.iter().any(|e| e["datasource_id"] == "supply"),
        "{errors:?}"
    );
    // What could be answered is shown: supply's purchase orders per factory.
    assert_eq!(v["rows"].as_array().unwrap().len(), 6, "{v}");
    assert!(
        v["columns"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c.as_str().unwrap().contains("purchase_order")),
        "{v}"
    );
    // The missing part is said in words, not only in the error list.
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("sales")),
        "{warnings:?}"
    );
    // The text format says it too.
    let out = with_data_dir(&dir).args(["ask", COMPARE]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("error [SERVICE_UNAVAILABLE]"), "{text}");
}

/// A chat-completions endpoint that accepts connections and never answers; reports each
/// accepted connection on the channel.
fn silent_llm_server() -> (u16, mpsc::Receiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut buf = [0_u8; 4096];
                // The request has arrived once something is read; then hold the line.
                if stream.read(&mut buf).is_ok_and(|n| n > 0) {
                    let _ = tx.send(());
                }
                std::thread::sleep(Duration::from_secs(120));
            });
        }
    });
    (port, rx)
}

#[test]
fn ctrl_c_stops_a_run_waiting_on_the_planner_and_leaves_no_artifact() {
    let dir = temp_dir("cancel");
    // Create the demo first so the run below spends its time waiting on the model.
    let out = with_data_dir(&dir).args(["demo"]).output().unwrap();
    assert_succeeded(&out);
    let (port, accepted) = silent_llm_server();
    let llm = dir.join("llm.toml");
    std::fs::write(
        &llm,
        format!(
            "[default]\nprovider = \"openai-compatible\"\nmodel = \"silent\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\napi_key_env = \"\"\ntimeout_sec = 100\nmax_retries = 0\n"
        ),
    )
    .unwrap();
    let child = with_data_dir(&dir)
        .args([
            "ask",
            "--format",
            "json",
            "--planner",
            "llm",
            "--llm-config",
        ])
        .arg(&llm)
        .arg("How many machines are there?")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the planner's request reached the model: the run is mid-flight.
    accepted
        .recv_timeout(Duration::from_secs(120))
        .expect("the planner called the model");
    let sent = Instant::now();
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let waited = sent.elapsed();
    // Prompt: far below the 100 s model timeout.
    assert!(
        waited < Duration::from_secs(20),
        "took {waited:?} after Ctrl-C"
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    assert_eq!(v["success"], false);
    assert_eq!(v["status"], "cancelled", "{v}");
    let codes: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"CANCELLED"), "{codes:?}");
    assert!(v["trace_id"].as_str().is_some_and(|t| t.len() == 36));
    assert!(parquet_files(&dir).is_empty(), "{:?}", parquet_files(&dir));
}
