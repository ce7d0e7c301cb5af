//! `cargo xtask mcp-load [SESSIONS [SECONDS]]`: load on the MCP endpoint over loopback
//! (default 32 sessions for 60 s), with the official Python MCP SDK driving
//! `nl2sql serve` (`xtask/peers/mcp_load.py`). Prints the script's JSON report: calls and
//! their outcomes, latency, the server's memory over time and the checks of what it wrote.
//! The numbers go to `docs/benchmarks.md` by hand, with the command.
//!
//! The SDK lives in a virtual environment under the target directory (`mcp-venv`, the one
//! `.ci/run` makes). The server is the debug build the tests use (a release build would
//! compile DuckDB again).

use std::path::Path;

use anyhow::{Context as _, bail};

use crate::cmd::Cmd;
use crate::deps;

/// The SDK version, the one the tests pin in `.ci/run`.
const MCP_SDK: &str = "mcp==2.3.0";

/// Runs the load and prints its report; fails when any call failed outside a tool result
/// or the data directory was not left whole.
pub(crate) fn run(root: &Path, sessions: u32, seconds: u32) -> anyhow::Result<()> {
    let build = Cmd::cargo(&["build", "--locked", "-p", "nl2sql-cli"]);
    println!("mcp-load: {build}");
    build.run(root)?;
    let metadata = deps::cargo_metadata(root)?;
    let target = Path::new(
        metadata["target_directory"]
            .as_str()
            .context("`cargo metadata` gives no target_directory")?,
    )
    .to_path_buf();
    let venv = target.join("mcp-venv");
    let python = venv.join("bin/python");
    if !python.is_file() {
        Cmd::new("python3", &["-m", "venv", &venv.to_string_lossy()]).run(root)?;
    }
    Cmd::new(
        &python.to_string_lossy(),
        &[
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            MCP_SDK,
        ],
    )
    .run(root)?;
    let binary = target.join("debug/nl2sql");
    let out = Cmd::new(
        &python.to_string_lossy(),
        &[
            &root.join("xtask/peers/mcp_load.py").to_string_lossy(),
            &binary.to_string_lossy(),
            &root
                .join("tests/data/fixtures/manufacturing.db")
                .to_string_lossy(),
            &sessions.to_string(),
            &seconds.to_string(),
        ],
    )
    .read(root)?;
    println!("{}", out.trim());
    let report: serde_json::Value =
        serde_json::from_str(out.trim()).context("the load script's report is not JSON")?;
    let failures = report["failures"].as_object().map_or(0, |f| f.len());
    let data = &report["data"];
    let broken = [
        "run_log_lines_not_whole",
        "run_records_not_whole",
        "answered_runs_without_record",
        "temporary_files_left",
        "artifacts_empty",
    ]
    .iter()
    .filter(|k| data[**k].as_u64() != Some(0))
    .collect::<Vec<_>>();
    if failures > 0 || !broken.is_empty() {
        bail!("mcp-load: {failures} kinds of failed calls; data checks that failed: {broken:?}");
    }
    println!(
        "mcp-load: every call answered or failed with a tool error; the data directory is whole"
    );
    Ok(())
}
