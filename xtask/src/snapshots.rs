//! `cargo xtask snapshots`: runs the tests accepting snapshot changes, then lists the new,
//! changed and orphaned `.snap` files so that they get reviewed like code.
//!
//! With cargo-insta installed it runs `cargo insta test --workspace` and then
//! `cargo insta review` (when there is a terminal). Without it, the tests run with
//! `INSTA_UPDATE=always` (file snapshots are rewritten in place) and `INSTA_FORCE_PASS=1`
//! (so one changed snapshot does not hide the next); changed inline snapshots are left as
//! `.pending-snap` files, which only cargo-insta can apply.

use std::collections::BTreeSet;
use std::fs;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::bail;

use crate::cmd::Cmd;
use crate::tidy;

/// Runs the tests, accepts snapshot changes and prints what changed.
pub(crate) fn run(root: &Path) -> anyhow::Result<()> {
    let references =
        std::env::temp_dir().join(format!("nl2sql-snapshot-refs-{}", std::process::id()));
    let _ = fs::remove_file(&references);
    let test_result = if Cmd::cargo(&["insta", "--version"]).succeeds_quietly(root) {
        run_with_cargo_insta(root)
    } else {
        let cmd = Cmd::cargo(&["test", "--workspace", "--no-fail-fast"])
            .env("INSTA_UPDATE", "always")
            .env("INSTA_FORCE_PASS", "1")
            .env(
                "INSTA_SNAPSHOT_REFERENCES_FILE",
                &references.display().to_string(),
            );
        println!("snapshots: {cmd}");
        cmd.run(root)
    };

    let changed = git_changed_snapshots(root)?;
    if changed.is_empty() {
        println!("\nsnapshots: no new or changed .snap files");
    } else {
        println!("\nsnapshots: new or changed .snap files (review them like code):");
        for line in &changed {
            println!("  {line}");
        }
    }

    let pending = tidy::leftover_snapshot_files(root);
    if !pending.is_empty() {
        println!("\nsnapshots: pending snapshots (inline snapshots, or not yet reviewed):");
        for path in &pending {
            println!("  {}", tidy::rel(root, path));
        }
        println!(
            "  apply them with cargo-insta (`cargo install cargo-insta --locked`, then `cargo insta review`),\n  \
             or edit the `@\"...\"` literals by hand and delete these files"
        );
    }

    match fs::read_to_string(&references) {
        Ok(text) if test_result.is_ok() => {
            let orphans = orphaned_snapshots(root, &text);
            if orphans.is_empty() {
                println!("\nsnapshots: no orphaned .snap files");
            } else {
                println!(
                    "\nsnapshots: .snap files no assertion used in this run (orphaned, or their test was skipped):"
                );
                for path in &orphans {
                    println!("  {}", tidy::rel(root, path));
                }
            }
        }
        Ok(_) => {
            println!("\nsnapshots: some tests failed, so orphaned snapshots cannot be told apart")
        }
        Err(_) if test_result.is_ok() => {
            let all = all_snapshots(root);
            if !all.is_empty() {
                println!(
                    "\nsnapshots: orphan detection needs the run without cargo-insta (`INSTA_SNAPSHOT_REFERENCES_FILE`)"
                );
            }
        }
        Err(_) => {}
    }
    let _ = fs::remove_file(&references);
    test_result?;
    if !pending.is_empty() {
        bail!("{} pending snapshot file(s) left", pending.len());
    }
    Ok(())
}

fn run_with_cargo_insta(root: &Path) -> anyhow::Result<()> {
    let test = Cmd::cargo(&["insta", "test", "--workspace", "--unreferenced=warn"]);
    println!("snapshots: {test}");
    // A failed run can still leave snapshots to review.
    let result = test.run(root);
    if std::io::stdin().is_terminal() {
        Cmd::cargo(&["insta", "review"]).run(root)?;
    } else {
        println!(
            "snapshots: no terminal: run `cargo insta review` to accept or reject the changes"
        );
    }
    result
}

/// `git status --porcelain` lines for `*.snap` files (new ones as `??`).
fn git_changed_snapshots(root: &Path) -> anyhow::Result<Vec<String>> {
    let text = Cmd::new(
        "git",
        &[
            "status",
            "--porcelain",
            "--untracked-files=all",
            "--",
            "*.snap",
        ],
    )
    .read(root)?;
    Ok(text.lines().map(str::to_owned).collect())
}

/// Every `*.snap` file in the tree that is not listed in `references` (one path a line, as
/// insta writes `INSTA_SNAPSHOT_REFERENCES_FILE`).
fn orphaned_snapshots(root: &Path, references: &str) -> Vec<PathBuf> {
    let referenced: BTreeSet<PathBuf> = references
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| canonical(Path::new(l)))
        .collect();
    all_snapshots(root)
        .into_iter()
        .filter(|path| !referenced.contains(&canonical(path)))
        .collect()
}

fn all_snapshots(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    tidy::walk(root, &mut |path| {
        if path.extension().is_some_and(|e| e == "snap") {
            found.push(path.to_path_buf());
        }
    });
    found
}

fn canonical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}
