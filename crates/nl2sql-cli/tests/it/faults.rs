//! Faults, through the real binary: a disk that fills while an artifact is written, and
//! `nl2sql serve` killed with SIGKILL in the middle of runs. Afterwards no partial
//! artifact sits under a final name, no run log is corrupt, the next start is clean and
//! answers, and every request affected got a clear error.
//!
//! The full disk is a small tmpfs mounted for the test (root only: CI runs as root; a
//! run without the privilege says it skipped, and fails under `CI`).

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use nl2sql_test_support::TempDir;
use serde_json::Value;

use super::serve::{KEY, serve, write_setup};
use crate::support::{fixture, nl2sql, temp_dir};

/// A tmpfs of `bytes` mounted at a fresh directory, unmounted (and the directory removed)
/// when dropped.
struct SmallDisk {
    path: TempDir,
}

impl SmallDisk {
    /// `None` (the test is skipped, with a message) when mounting is not permitted here
    /// and `CI` is unset.
    fn mount(name: &str, bytes: u64) -> Option<SmallDisk> {
        let path = temp_dir(&format!("disk-{name}"));
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(&path)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(SmallDisk { path }),
            other => {
                let why = match other {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
                    Err(e) => e.to_string(),
                };
                assert!(
                    std::env::var_os("CI").is_none(),
                    "a tmpfs is needed under CI (run as root): {why}"
                );
                eprintln!("skipped: cannot mount a tmpfs here: {why}");
                None
            }
        }
    }

    /// Fills the disk with one file, leaving nothing free.
    fn fill(&self) {
        let mut f = std::fs::File::create(self.path.join("filler")).unwrap();
        let block = vec![0u8; 4096];
        while f.write_all(&block).is_ok() {}
        let _ = f.flush();
    }

    fn free(&self) {
        std::fs::remove_file(self.path.join("filler")).unwrap();
    }

    /// Every file under the disk, as paths relative to it.
    fn files(&self) -> Vec<String> {
        let mut out = Vec::new();
        walk(&self.path, &self.path, &mut out);
        out.sort();
        out
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(root, &path, out);
        } else {
            out.push(path.strip_prefix(root).unwrap().display().to_string());
        }
    }
}

/// `nl2sql ask --format json` over the configuration and data directory in `dir`.
fn ask_command(dir: &Path, question: &str) -> Command {
    let mut command = nl2sql();
    command
        .args(["ask", "--format", "json", "--config"])
        .arg(dir.join("nl2sql.toml"))
        .arg("--data-dir")
        .arg(dir.join("data"))
        .arg(question)
        .stdin(Stdio::null());
    command
}

fn ask(dir: &Path, question: &str) -> Output {
    ask_command(dir, question).output().unwrap()
}

/// Every run log under `data` (`engines/<key>/runs/*.jsonl`) reads back through
/// `nl2sql runs show`.
fn assert_run_logs_read_back(data: &Path) -> usize {
    let mut files = Vec::new();
    walk(data, data, &mut files);
    let logs: Vec<&String> = files
        .iter()
        .filter(|f| f.contains("/runs/") && f.ends_with(".jsonl"))
        .collect();
    for log in &logs {
        let trace_id = log.rsplit('/').next().unwrap().trim_end_matches(".jsonl");
        let out = nl2sql()
            .args(["runs", "show", trace_id, "--data-dir"])
            .arg(data)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "run log {log}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    logs.len()
}

/// Parquet files start and end with `PAR1`: a file cut short does not.
fn assert_parquet_whole(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    assert!(
        bytes.len() >= 8 && bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
        "{} is not a whole parquet file ({} bytes)",
        path.display(),
        bytes.len()
    );
}

#[test]
fn a_full_disk_while_writing_an_artifact_fails_the_question_cleanly() {
    let Some(disk) = SmallDisk::mount("artifacts", 256 * 1024) else {
        return;
    };
    let dir = temp_dir("full-disk");
    std::fs::copy(fixture(), dir.join("plant.db")).unwrap();
    std::fs::write(
        dir.join("nl2sql.toml"),
        format!(
            "version = 1\n\n[artifacts]\nuri = \"{}\"\n\n[[datasources]]\nid = \"plant\"\nurl = \"sqlite://plant.db\"\n",
            disk.path.display()
        ),
    )
    .unwrap();
    let question = "List the operator and quantity produced of every production run";
    disk.fill();
    let out = ask(&dir, question);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let answer: Value = serde_json::from_str(&stdout).unwrap();
    let errors = answer["errors"].to_string();
    assert!(
        errors.contains("No space left on device") || errors.contains("ENOSPC"),
        "the error says why: {errors}"
    );
    // Nothing but the filler on the disk: no artifact, whole or partial, no temporary
    // file.
    assert_eq!(disk.files(), ["filler"]);
    assert!(assert_run_logs_read_back(&dir.join("data")) >= 1);

    // With space again, the same question answers, and its artifact is whole.
    disk.free();
    let out = ask(&dir, question);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let files = disk.files();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].ends_with(".parquet"), "{files:?}");
    assert_parquet_whole(&disk.path.join(&files[0]));
}

/// One question over HTTP: `Ok((status, body))`, or the transport error.
fn post_query(addr: &str, question: &str) -> Result<(u16, Value), String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let body = serde_json::json!({ "natural_language": question }).to_string();
    write!(
        stream,
        "POST /api/v1/query HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {KEY}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .map_err(|e| e.to_string())?;
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .map_err(|e| e.to_string())?;
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("cut response: {response:?}"))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("no status: {head}"))?;
    let value = serde_json::from_str(body).map_err(|e| format!("cut body ({e}): {body}"))?;
    Ok((status, value))
}

#[test]
fn sigkill_during_runs_leaves_no_partial_state_and_the_next_start_answers() {
    let dir = temp_dir("sigkill");
    write_setup(&dir);
    let mut served = serve(&dir, &[]);
    let addr = served.addr.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let questions = [
        "How many machines are there?",
        "List the operator and quantity produced of every production run",
        "What is the total quantity produced per shift?",
        "How many defects are there for each defect type?",
    ];
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let addr = addr.clone();
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut outcomes = Vec::new();
                let mut i = w;
                while !stop.load(Ordering::SeqCst) {
                    let outcome = post_query(&addr, questions[i % questions.len()]);
                    let failed = outcome.is_err();
                    outcomes.push(outcome);
                    if failed {
                        break;
                    }
                    i += 1;
                }
                outcomes
            })
        })
        .collect();
    // Let the runs overlap for a while, then kill the server without warning.
    std::thread::sleep(Duration::from_millis(1500));
    served.child.kill().unwrap();
    let _ = served.child.wait();
    stop.store(true, Ordering::SeqCst);
    let mut answered = 0;
    let mut cut = 0;
    for worker in workers {
        for outcome in worker.join().unwrap() {
            match outcome {
                Ok((200, body)) => {
                    assert_eq!(body["status"], "succeeded", "{body}");
                    answered += 1;
                }
                Ok((status, body)) => panic!("a run before the kill failed: {status} {body}"),
                // The connection of a run in flight was cut: the client sees a transport
                // error, not a made-up answer.
                Err(_) => cut += 1,
            }
        }
    }
    assert!(
        answered >= 4,
        "the server answered before the kill: {answered}"
    );
    assert!(
        cut >= 1,
        "some run was in flight when the server was killed"
    );

    // What the killed server left: every run log reads back; every artifact under a final
    // name is a whole parquet file.
    let data = dir.join("data");
    assert!(assert_run_logs_read_back(&data) >= answered);
    let mut files = Vec::new();
    walk(&data, &data, &mut files);
    for file in files.iter().filter(|f| f.ends_with(".parquet")) {
        assert_parquet_whole(&data.join(file));
    }

    // The next start is clean (temporary files of the killed writer gone) and answers.
    let served = serve(&dir, &[]);
    let mut files = Vec::new();
    walk(&data, &data, &mut files);
    assert!(
        files.iter().all(|f| !f.contains(".tmp-")),
        "temporary files left: {files:?}"
    );
    let (status, body) = post_query(&served.addr, "How many machines are there?").unwrap();
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "succeeded", "{body}");
    let mut child = served.child;
    let _ = child.kill();
    let _ = child.wait();
}

/// A PostgreSQL cluster of its own (`pg_createcluster`, on a free port), so that
/// restarting it disturbs no other test; dropped with the value.
struct PrivateCluster {
    name: String,
    port: u16,
}

impl PrivateCluster {
    /// `None` (skipped, with a message) where the Debian cluster tools or root are
    /// missing and `CI` is unset.
    fn create() -> Option<PrivateCluster> {
        let version = std::fs::read_dir("/etc/postgresql")
            .ok()
            .and_then(|d| d.flatten().map(|e| e.file_name()).max())
            .map(|v| v.to_string_lossy().into_owned());
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let name = format!("nl2sql_fault_{}", std::process::id());
        let created = version.as_deref().and_then(|v| {
            let ok = Command::new("pg_createcluster")
                .args([v, &name, "-p", &port.to_string(), "--", "--auth=trust"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .ok()?
                .success()
                && Command::new("pg_ctlcluster")
                    .args([v, &name, "start"])
                    .status()
                    .ok()?
                    .success();
            ok.then_some(())
        });
        if created.is_none() {
            assert!(
                std::env::var_os("CI").is_none(),
                "pg_createcluster (as root) is needed under CI"
            );
            eprintln!("skipped: cannot create a private PostgreSQL cluster here");
            return None;
        }
        Some(PrivateCluster { name, port })
    }

    fn version() -> String {
        std::fs::read_dir("/etc/postgresql")
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .max()
            .unwrap()
    }

    fn psql(&self, sql: &str) -> String {
        let out = Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
            ])
            .args(["-d", "postgres", "-tAc", sql])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    fn restart(&self) {
        let status = Command::new("pg_ctlcluster")
            .args([
                &PrivateCluster::version(),
                &self.name,
                "restart",
                "-m",
                "immediate",
            ])
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        let _ = Command::new("pg_dropcluster")
            .args([&PrivateCluster::version(), &self.name, "--stop"])
            .status();
    }
}

#[test]
fn a_database_restarted_during_a_run_gives_an_answer_or_a_clear_error() {
    let Some(cluster) = PrivateCluster::create() else {
        return;
    };
    cluster.psql(
        "CREATE TABLE orders AS SELECT g AS id, 'customer ' || (g % 5000) AS customer, \
         (g % 1000)::numeric AS amount FROM generate_series(1, 2000000) AS g; \
         ALTER TABLE orders ADD PRIMARY KEY (id); ANALYZE orders",
    );
    let expected_customers = 5000;
    let dir = temp_dir("restart");
    std::fs::write(
        dir.join("nl2sql.toml"),
        format!(
            "version = 1\n\n[[datasources]]\nid = \"shop\"\nurl = \"postgres://postgres@127.0.0.1:{}/postgres\"\n",
            cluster.port
        ),
    )
    .unwrap();
    let question = "What is the total amount per customer?";
    // Index first, so that the run below spends its time in the statement.
    let first = ask(&dir, question);
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stdout)
    );
    let answered: Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(
        answered["rows"].as_array().map(Vec::len),
        Some(expected_customers),
        "{answered}"
    );

    // Ask again, and restart the server while the statement runs.
    let child = ask_command(&dir, question)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut restarted = false;
    for _ in 0..600 {
        let active = cluster.psql(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'nl2sql' \
             AND state = 'active' AND query ILIKE '%GROUP BY%'",
        );
        if active != "0" {
            cluster.restart();
            restarted = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    assert!(restarted, "the statement was never seen running");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    match out.status.code() {
        // The statement ran again on a new connection once the server was back.
        Some(0) => assert_eq!(
            result["rows"].as_array().map(Vec::len),
            Some(expected_customers)
        ),
        // Or the run failed, saying the database could not be reached.
        Some(1) => {
            let errors = result["errors"].to_string();
            assert!(
                errors.contains("SERVICE_UNAVAILABLE") || errors.contains("EXECUTION_FAILED"),
                "{errors}"
            );
        }
        other => panic!("exit {other:?}: {stdout}"),
    }
    assert!(assert_run_logs_read_back(&dir.join("data")) >= 2);
    // The next question answers.
    let after = ask(&dir, question);
    assert_eq!(
        after.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&after.stdout)
    );
}
