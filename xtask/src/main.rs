//! Project automation for nl2sql, run as `cargo xtask <command>` (the alias lives in
//! `.cargo/config.toml`).
//!
//! Commands, cheapest first:
//! - `tidy`: fast checks on the tree (file headers, lints tables, dependency style,
//!   forbidden test attributes, leftover snapshot files, fixture sizes, error-code docs);
//!   also a `#[test]`, so a plain `cargo test` runs it.
//! - `deps`: the internal dependency graph against the "may use" table (`deps.rs`).
//! - `codegen [--check]`: regenerates `docs/error-codes.md` from `nl2sql_state::ErrorCode`.
//! - `ci`: everything CI runs, stopping at the first failure with the command that
//!   reproduces it.
//! - `snapshots`: runs the tests accepting snapshot changes, then lists what changed.
//! - `bench [filter]`: runs the criterion benches and writes `docs/benchmarks.md`; with the
//!   guard's Spider bench (`guard_spider`), also times the peer (sqlglot) when Python is
//!   present and prints the ratio.
//! - `mcp-load [SESSIONS [SECONDS]]`: concurrent MCP sessions against `nl2sql serve`,
//!   driven by the official Python SDK (see `mcp_load.rs`).
//! - `learn-fillers --from RESULTS.json`: learns the offline planner's filler words from a
//!   lenient benchmark run over the Spider train split (see `fillers.rs`).
//! - `learn-confidence --from RESULTS.json`: learns the offline planner's confidence model
//!   from the same run (see `confidence.rs`).
//!
//! The crate uses only std (plus anyhow and serde_json): every tool is run with
//! `std::process::Command`.

#![allow(clippy::print_stdout)] // reason: xtask is a CLI

mod bench;
mod ci;
mod cmd;
mod codegen;
mod confidence;
mod deps;
mod fillers;
mod mcp_load;
mod snapshots;
mod tidy;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  ci                 what CI runs: fmt, tidy, deps, clippy, tests, doc, codegen --check
  tidy               checks on the tree (headers, lints, dependencies, test attributes, fixtures)
  deps               checks the internal dependency graph against the MAY_USE table
  codegen [--check]  regenerates docs/error-codes.md (--check: fail if it is stale)
  snapshots          runs the tests accepting snapshot changes and lists changed snapshots
  bench [filter]     runs the criterion benches and writes docs/benchmarks.md
  mcp-load [SESSIONS [SECONDS]]
                     load on the MCP endpoint (default 32 sessions, 60 s) with the Python SDK
  learn-fillers --from RESULTS.json
                     learns the offline planner's filler words from a lenient Spider-train run
  learn-confidence --from RESULTS.json
                     learns the offline planner's confidence model from the same run";

/// A positive count from the command line.
fn count(text: &str) -> anyhow::Result<u32> {
    match text.parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => anyhow::bail!("expected a positive whole number, got '{text}'"),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let root = project_root();
    let result = match args.as_slice() {
        ["ci"] => ci::run(&root),
        ["tidy"] => tidy::run(&root),
        ["deps"] => deps::run(&root),
        ["codegen"] => codegen::run(&root, codegen::Mode::Write),
        ["codegen", "--check"] => codegen::run(&root, codegen::Mode::Check),
        ["snapshots"] => snapshots::run(&root),
        ["bench"] => bench::run(&root, None),
        ["bench", filter] => bench::run(&root, Some(filter)),
        ["mcp-load"] => mcp_load::run(&root, 32, 60),
        ["mcp-load", sessions] => count(sessions).and_then(|n| mcp_load::run(&root, n, 60)),
        ["mcp-load", sessions, seconds] => count(sessions)
            .and_then(|n| count(seconds).map(|s| (n, s)))
            .and_then(|(n, s)| mcp_load::run(&root, n, s)),
        ["learn-fillers", "--from", from] => fillers::run(&root, Path::new(from)),
        ["learn-confidence", "--from", from] => confidence::run(&root, Path::new(from)),
        ["help" | "--help" | "-h"] => {
            println!("{USAGE}");
            Ok(())
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root: the parent of this crate's manifest directory.
///
/// Read at run time (`cargo run` and `cargo test` set `CARGO_MANIFEST_DIR`), not baked in
/// with `env!`: clones that share one target directory also share the xtask binary.
/// Without the variable, the nearest folder above the current one whose `Cargo.toml`
/// has a `[workspace]` table.
fn project_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR") {
        let dir = PathBuf::from(dir);
        if let Some(parent) = dir.parent() {
            return parent.to_path_buf();
        }
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    cwd.ancestors()
        .find(|dir| {
            std::fs::read_to_string(dir.join("Cargo.toml"))
                .is_ok_and(|manifest| manifest.lines().any(|l| l.trim() == "[workspace]"))
        })
        .map_or(cwd.clone(), Path::to_path_buf)
}
