//! `cargo xtask deps`: checks every internal dependency edge against the "may use" column
//! table below (`MAY_USE`, which ARCHITECTURE.md describes), using `cargo metadata`.
//!
//! Only normal and build dependencies are checked: dev-dependencies may point anywhere
//! (tests sit above the crate they test), except that nothing may depend on the top
//! crates (`nl2sql-cli`, `nl2sql-bench`, `nl2sql-tests`) and `nl2sql-test-support` is
//! a dev-dependency only.

use std::path::Path;

use anyhow::{Context, bail};
use serde_json::Value;

use crate::cmd::Cmd;

/// Which internal crates a crate may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MayUse {
    /// Only the crates listed (short names: `state` is `nl2sql-state`).
    Only(&'static [&'static str]),
    /// Any internal library crate.
    Any,
}

/// Which internal crates each crate may use. Keys are short names; `adapter-*` covers every
/// adapter crate. Change this table and ARCHITECTURE.md ("Planned crates") in the same
/// commit.
const MAY_USE: &[(&str, MayUse)] = &[
    ("state", MayUse::Only(&[])),
    ("plan", MayUse::Only(&["state"])),
    ("validate", MayUse::Only(&["state", "plan"])),
    ("sqlgen", MayUse::Only(&["state", "plan"])),
    ("adapter", MayUse::Only(&["state", "validate"])),
    ("adapter-*", MayUse::Only(&["state", "validate", "adapter"])),
    ("artifacts", MayUse::Only(&["state"])),
    ("aggregate", MayUse::Only(&["state", "plan", "artifacts"])),
    ("index", MayUse::Only(&["state", "adapter"])),
    ("planner", MayUse::Only(&["state", "plan"])),
    (
        "planner-offline",
        MayUse::Only(&["state", "plan", "planner"]),
    ),
    (
        "planner-llm",
        MayUse::Only(&["state", "plan", "planner", "planner-offline"]),
    ),
    (
        "worker",
        MayUse::Only(&[
            "state",
            "validate",
            "adapter",
            "adapter-sqlite",
            "adapter-duckdb",
        ]),
    ),
    (
        "drivers",
        MayUse::Only(&[
            "state",
            "adapter",
            "adapter-sqlite",
            "adapter-duckdb",
            "adapter-postgres",
            "adapter-mysql",
            "worker",
        ]),
    ),
    (
        "demo",
        MayUse::Only(&["state", "adapter", "adapter-sqlite", "adapter-duckdb"]),
    ),
    // The pipeline sees datasources only through the adapter SPI: no adapter crate, no
    // worker (the binary's drivers are `drivers`).
    (
        "orchestrator",
        MayUse::Only(&[
            "state",
            "plan",
            "validate",
            "sqlgen",
            "adapter",
            "artifacts",
            "aggregate",
            "index",
            "planner",
            "planner-offline",
            "planner-llm",
        ]),
    ),
    (
        "server",
        MayUse::Only(&[
            "state",
            "validate",
            "planner",
            "planner-llm",
            "orchestrator",
        ]),
    ),
    ("cli", MayUse::Any),
    ("test-support", MayUse::Any),
    ("bench", MayUse::Any),
    ("tests", MayUse::Any),
];

/// Crates that nothing may depend on, in any kind of dependency.
const TOP: &[&str] = &["cli", "bench", "tests"];

/// Crates that may only be dev-dependencies.
const DEV_ONLY: &[&str] = &["test-support"];

/// The crates that link DuckDB (its bundled C++ build is most of a cold build): the DuckDB
/// adapter and what may turn it on (the worker's `duckdb` feature, the binary's drivers,
/// the demo).
const DUCKDB: &[&str] = &["adapter-duckdb", "worker", "drivers", "demo"];

/// The external crates that are DuckDB itself.
const DUCKDB_BINDINGS: &[&str] = &["duckdb", "libduckdb-sys"];

/// Crates whose builds, tests included, never link DuckDB: no dependency of any kind
/// reaches a crate of [`DUCKDB`] or [`DUCKDB_BINDINGS`], directly or through the normal
/// dependencies of the crates it uses. (Cargo unifies features across a workspace build,
/// so a dev-dependency on the worker alone would link DuckDB into these tests.) Not here:
/// `sqlgen`, whose tests run the generated SQL on DuckDB itself, and the crates above.
const DUCKDB_FREE: &[&str] = &[
    "state",
    "plan",
    "validate",
    "adapter",
    "adapter-sqlite",
    "adapter-postgres",
    "adapter-mysql",
    "artifacts",
    "aggregate",
    "index",
    "planner",
    "planner-offline",
    "planner-llm",
    "orchestrator",
    "server",
];

const PREFIX: &str = "nl2sql-";

/// Reads `cargo metadata` and prints the violations.
pub(crate) fn run(root: &Path) -> anyhow::Result<()> {
    let metadata = cargo_metadata(root)?;
    let violations = check(&metadata)?;
    if violations.is_empty() {
        println!("deps: ok");
        return Ok(());
    }
    for violation in &violations {
        eprintln!("deps: {violation}");
    }
    bail!(
        "{} dependency edge(s) break the \"may use\" table (`MAY_USE` in xtask/src/deps.rs)",
        violations.len()
    )
}

/// `cargo metadata --format-version 1 --no-deps`, parsed.
pub(crate) fn cargo_metadata(root: &Path) -> anyhow::Result<Value> {
    let text = Cmd::cargo(&["metadata", "--format-version", "1", "--no-deps"]).read(root)?;
    serde_json::from_str(&text).context("cannot parse `cargo metadata` output")
}

/// The violations found in `cargo metadata` JSON.
fn check(metadata: &Value) -> anyhow::Result<Vec<String>> {
    let packages = metadata["packages"]
        .as_array()
        .context("`cargo metadata` output has no `packages` array")?;
    let mut violations = Vec::new();
    for package in packages {
        let Some(from) = package["name"].as_str() else {
            continue;
        };
        let Some(from_short) = from.strip_prefix(PREFIX) else {
            continue;
        };
        let Some(rule) = rule_for(from_short) else {
            violations.push(format!(
                "{from}: not in the \"may use\" table (add it to `MAY_USE` in xtask/src/deps.rs and to ARCHITECTURE.md)"
            ));
            continue;
        };
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            let Some(to) = dep["name"].as_str() else {
                continue;
            };
            let Some(to_short) = to.strip_prefix(PREFIX) else {
                continue;
            };
            let kind = dep["kind"].as_str().unwrap_or("normal");
            if let Some(violation) = edge_violation(from_short, rule, to_short, kind) {
                violations.push(format!("{from} -> {to} ({kind}): {violation}"));
            }
        }
    }
    violations.extend(duckdb_violations(packages));
    Ok(violations)
}

/// The crates of [`DUCKDB_FREE`] whose builds reach a crate of [`DUCKDB`], each with the
/// path that reaches it.
fn duckdb_violations(packages: &[Value]) -> Vec<String> {
    // Internal crates by short name; the DuckDB bindings themselves as `=duckdb`.
    let internal = |dep: &Value| -> Option<(String, bool)> {
        let name = dep["name"].as_str()?;
        let short = match name.strip_prefix(PREFIX) {
            Some(short) => short.to_owned(),
            None if DUCKDB_BINDINGS.contains(&name) => format!("={name}"),
            None => return None,
        };
        let normal = dep["kind"].as_str().is_none_or(|k| k == "normal");
        Some((short, normal))
    };
    let deps_of = |short: &str| -> Vec<(String, bool)> {
        packages
            .iter()
            .find(|p| p["name"].as_str() == Some(&format!("{PREFIX}{short}")))
            .and_then(|p| p["dependencies"].as_array())
            .into_iter()
            .flatten()
            .filter_map(internal)
            .collect()
    };
    let mut violations = Vec::new();
    for &root in DUCKDB_FREE {
        // Breadth first: every dependency of the root, then the normal ones of each crate
        // reached (a dependency's own dev-dependencies are not built).
        let mut paths: Vec<Vec<String>> = deps_of(root)
            .into_iter()
            .map(|(name, _)| vec![root.to_owned(), name])
            .collect();
        let mut seen: Vec<String> = Vec::new();
        while let Some(path) = (!paths.is_empty()).then(|| paths.remove(0)) {
            let Some(last) = path.last().cloned() else {
                continue;
            };
            if seen.contains(&last) {
                continue;
            }
            seen.push(last.clone());
            if DUCKDB.contains(&last.as_str()) || last.starts_with('=') {
                let shown: Vec<String> = path
                    .iter()
                    .map(|c| match c.strip_prefix('=') {
                        Some(external) => external.to_owned(),
                        None => format!("{PREFIX}{c}"),
                    })
                    .collect();
                violations.push(format!(
                    "{PREFIX}{root}: its builds link DuckDB ({}); use a driver without DuckDB",
                    shown.join(" -> ")
                ));
                break;
            }
            for (next, normal) in deps_of(&last) {
                if normal {
                    let mut longer = path.clone();
                    longer.push(next);
                    paths.push(longer);
                }
            }
        }
    }
    violations
}

/// The table entry for a short crate name.
fn rule_for(short: &str) -> Option<MayUse> {
    MAY_USE.iter().find_map(|&(key, rule)| {
        let matches = match key.strip_suffix('*') {
            Some(prefix) => short.starts_with(prefix),
            None => short == key,
        };
        matches.then_some(rule)
    })
}

/// Why the edge `from -> to` of `kind` (`normal`, `dev` or `build`) is not allowed.
fn edge_violation(from: &str, rule: MayUse, to: &str, kind: &str) -> Option<String> {
    if TOP.contains(&to) {
        return Some(format!("nothing may depend on nl2sql-{to}"));
    }
    if kind == "dev" {
        return None;
    }
    if DEV_ONLY.contains(&to) {
        return Some(format!("nl2sql-{to} may only be a dev-dependency"));
    }
    match rule {
        MayUse::Any => None,
        MayUse::Only(allowed) if allowed.contains(&to) => None,
        MayUse::Only([]) => Some(format!("nl2sql-{from} may use no internal crate")),
        MayUse::Only(allowed) => {
            let allowed: Vec<String> = allowed.iter().map(|a| format!("{PREFIX}{a}")).collect();
            Some(format!("nl2sql-{from} may use only {}", allowed.join(", ")))
        }
    }
}

#[cfg(test)]
mod tests;
