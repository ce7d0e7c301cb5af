//! `nl2sql serve` through the real binary: it indexes a copy of the fixture, listens on a
//! free port, answers a question over HTTP with the right value, refuses a request
//! without a key, and stops cleanly (exit 0) on Ctrl-C, cancelling a run in flight.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{fixture, nl2sql, temp_dir};

pub(super) const KEY: &str = "serve-test-key-0123456789";

/// One HTTP/1.1 request (connection closed after it); returns the status and the JSON body.
fn http(addr: &str, method: &str, path: &str, key: Option<&str>, body: &str) -> (u16, Value) {
    let mut stream = TcpStream::connect(addr).unwrap();
    let auth = key.map_or(String::new(), |k| format!("Authorization: Bearer {k}\r\n"));
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap();
    let value = serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"));
    (status, value)
}

fn factories_in_fixture() -> i64 {
    let conn = rusqlite::Connection::open_with_flags(
        fixture(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    conn.query_row("SELECT count(*) FROM factories", [], |r| r.get(0))
        .unwrap()
}

/// The fixture as datasource `plant`, and an API key for role `analyst` (`KEY`).
pub(super) fn write_setup(dir: &Path) {
    std::fs::copy(fixture(), dir.join("plant.db")).unwrap();
    std::fs::write(
        dir.join("nl2sql.toml"),
        "version = 1\n\n[[datasources]]\nid = \"plant\"\nurl = \"sqlite://plant.db\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("keys.toml"),
        format!(
            "version = 1\n\n[[keys]]\nkey = \"{KEY}\"\nuser_id = \"alice\"\nroles = [\"analyst\"]\n"
        ),
    )
    .unwrap();
}

/// A running `nl2sql serve`: the child, its address and the reader of its standard error
/// (every line, once it exits).
pub(super) struct Served {
    pub(super) child: Child,
    pub(super) addr: String,
    stderr: std::thread::JoinHandle<Vec<String>>,
}

/// Starts `nl2sql serve` over the setup in `dir` on a free port, with `extra` arguments,
/// and waits until it listens.
pub(super) fn serve(dir: &Path, extra: &[&str]) -> Served {
    let mut child = nl2sql()
        .args(["serve", "--config"])
        .arg(dir.join("nl2sql.toml"))
        .arg("--api-keys")
        .arg(dir.join("keys.toml"))
        .arg("--data-dir")
        .arg(dir.join("data"))
        .args(["--bind", "127.0.0.1:0"])
        .args(extra)
        .env_remove("NL2SQL_API_KEYS")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The address is announced on standard error once the datasources are indexed.
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(stderr).lines() {
            let line = line.unwrap();
            if let Some(rest) = line.strip_prefix("listening on http://") {
                let addr = rest.split('/').next().unwrap().to_owned();
                let _ = tx.send(addr);
            }
            lines.push(line);
        }
        lines
    });
    match rx.recv_timeout(Duration::from_secs(300)) {
        Ok(addr) => Served {
            child,
            addr,
            stderr: reader,
        },
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server did not start ({e}): {:?}", reader.join());
        }
    }
}

impl Served {
    /// Ctrl-C; returns the exit code and standard error.
    pub(super) fn interrupt(mut self) -> (Option<i32>, Vec<String>) {
        let sent = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let exit = self.child.wait().unwrap();
        (exit.code(), self.stderr.join().unwrap())
    }
}

#[test]
fn serve_answers_a_question_over_http_and_stops_on_ctrl_c() {
    let dir = temp_dir("answer");
    write_setup(&dir);
    let served = serve(&dir, &[]);
    let addr = served.addr.clone();

    let question = json!({"natural_language": "How many factories do we have?"}).to_string();
    let (status, body) = http(&addr, "POST", "/api/v1/query", Some(KEY), &question);
    assert_eq!(status, 200, "{body:#}");
    assert_eq!(body["status"], "succeeded");
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{body:#}");
    let value = results[0].as_object().unwrap().values().next().unwrap();
    assert_eq!(value.as_i64(), Some(factories_in_fixture()));
    let trace = body["trace_id"].as_str().unwrap();
    // The run log is in the data directory, where `runs show` finds it.
    let (status, again) = http(
        &addr,
        "GET",
        &format!("/api/v1/query/{trace}"),
        Some(KEY),
        "",
    );
    assert_eq!((status, &again), (200, &body));

    let (status, body) = http(&addr, "POST", "/api/v1/query", None, &question);
    assert_eq!(
        (status, body["error_code"].as_str()),
        (401, Some("UNAUTHORIZED"))
    );

    let (code, lines) = served.interrupt();
    assert_eq!(code, Some(0), "{lines:#?}");
    assert!(
        lines.iter().any(|l| l.starts_with("indexed plant")),
        "{lines:#?}"
    );
    assert!(lines.iter().any(|l| l == "stopped"), "{lines:#?}");
}

#[test]
fn serve_refuses_to_start_without_api_keys() {
    let dir = temp_dir("nokeys");
    write_setup(&dir);
    let out = nl2sql()
        .args(["serve", "--config"])
        .arg(dir.join("nl2sql.toml"))
        .arg("--data-dir")
        .arg(dir.join("data"))
        .args(["--bind", "127.0.0.1:0"])
        .env_remove("NL2SQL_API_KEYS")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no API keys"), "{stderr}");
    // A CORS origin with a path is a usage error too.
    let out = nl2sql()
        .args(["serve", "--config"])
        .arg(dir.join("nl2sql.toml"))
        .arg("--api-keys")
        .arg(dir.join("keys.toml"))
        .args(["--cors-origin", "https://app.example.com/path"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cors-origin"));
}

/// A chat-completions endpoint that accepts connections and never answers; reports each
/// request on the channel.
pub(super) fn silent_llm_server() -> (u16, mpsc::Receiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut buf = [0_u8; 4096];
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
fn ctrl_c_cancels_a_run_in_flight_which_answers_503() {
    let dir = temp_dir("cancel");
    write_setup(&dir);
    let (port, accepted) = silent_llm_server();
    std::fs::write(
        dir.join("llm.toml"),
        format!(
            "[default]\nprovider = \"openai-compatible\"\nmodel = \"silent\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\napi_key_env = \"\"\ntimeout_sec = 100\nmax_retries = 0\n"
        ),
    )
    .unwrap();
    let llm = dir.join("llm.toml");
    let served = serve(
        &dir,
        &["--planner", "llm", "--llm-config", llm.to_str().unwrap()],
    );
    let addr = served.addr.clone();
    let asking = std::thread::spawn(move || {
        let question = json!({"natural_language": "How many factories do we have?"}).to_string();
        http(&addr, "POST", "/api/v1/query", Some(KEY), &question)
    });
    // The run is waiting on the model: stop the server.
    accepted
        .recv_timeout(Duration::from_secs(120))
        .expect("the planner called the model");
    let (code, lines) = served.interrupt();
    let (status, body) = asking.join().unwrap();
    assert_eq!(status, 503, "{body:#}");
    assert_eq!(body["error_code"], "SERVICE_UNAVAILABLE");
    assert_eq!(body["details"]["status"], "cancelled");
    assert!(body["details"]["trace_id"].is_string());
    assert_eq!(code, Some(0), "{lines:#?}");
    assert!(
        lines.iter().any(|l| l.starts_with("shutting down")),
        "{lines:#?}"
    );
}
