//! `cargo xtask ci`: what CI runs, cheapest step first, stopping at the first failure and
//! printing the command that reproduces it.
//!
//! fmt → tidy → deps → clippy → tests (nextest when installed; snapshots must match:
//! `INSTA_UPDATE=no`) → leftover snapshot files → doc (`-D warnings`) → codegen --check.

use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::path::Path;
use std::process::Stdio;
use std::thread;
use std::time::Instant;

use anyhow::{Context, bail};

use crate::cmd::Cmd;
use crate::{codegen, deps, tidy};

/// What one step does.
enum Action {
    /// Run a cargo command with inherited stdio.
    Cargo(Cmd),
    /// Run the test command, echoing its output and keeping its summary lines.
    Tests(TestRunner, Cmd),
    /// Run a check inside this process.
    InProcess(fn(&Path) -> anyhow::Result<()>),
}

struct Step {
    name: &'static str,
    action: Action,
    /// The shell command that reproduces the step.
    reproduce: String,
}

/// Runs every step; fails at the first failing one.
pub(crate) fn run(root: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let steps = steps(root);
    let count = steps.len();
    let mut timings = Vec::new();
    let mut summary: Vec<String> = Vec::new();
    for (index, step) in steps.into_iter().enumerate() {
        println!(
            "\nxtask ci: [{}/{count}] {}: {}",
            index + 1,
            step.name,
            step.reproduce
        );
        flush();
        let step_started = Instant::now();
        let result = match &step.action {
            Action::Cargo(cmd) => cmd.run(root),
            Action::InProcess(check) => check(root),
            Action::Tests(runner, cmd) => run_tests(root, *runner, cmd, &mut summary),
        };
        let seconds = step_started.elapsed().as_secs_f64();
        match result {
            Ok(()) => {
                println!("xtask ci: {} ok in {seconds:.1}s", step.name);
                timings.push((step.name, seconds));
            }
            Err(err) => {
                print_timings(&timings);
                print_summary(&summary);
                println!(
                    "xtask ci: {} FAILED after {seconds:.1}s: {err:#}",
                    step.name
                );
                println!("xtask ci: reproduce with: {}", step.reproduce);
                flush();
                bail!("ci failed at step `{}`", step.name);
            }
        }
    }
    print_timings(&timings);
    println!(
        "xtask ci: all {count} steps passed in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    // CI reads nextest's summary line: repeat it last.
    print_summary(&summary);
    flush();
    Ok(())
}

fn steps(root: &Path) -> Vec<Step> {
    let cargo = |name, cmd: Cmd| Step {
        name,
        reproduce: cmd.to_string(),
        action: Action::Cargo(cmd),
    };
    let in_process = |name, check, reproduce: &str| Step {
        name,
        action: Action::InProcess(check),
        reproduce: reproduce.to_owned(),
    };
    let (runner, tests) = test_command(root);
    vec![
        cargo("fmt", Cmd::cargo(&["fmt", "--all", "--", "--check"])),
        in_process("tidy", tidy::run, "cargo xtask tidy"),
        in_process("deps", deps::run, "cargo xtask deps"),
        cargo(
            "clippy",
            Cmd::cargo(&[
                "clippy",
                "--workspace",
                "--all-targets",
                "--locked",
                "--",
                "-D",
                "warnings",
            ]),
        ),
        Step {
            name: "tests",
            reproduce: tests.to_string(),
            action: Action::Tests(runner, tests),
        },
        in_process(
            "leftover snapshots",
            check_no_leftover_snapshots,
            "find . -path ./target -prune -o \\( -name '*.snap.new' -o -name '*.pending-snap' \\) -print",
        ),
        cargo(
            "doc",
            Cmd::cargo(&["doc", "--workspace", "--no-deps", "--locked"])
                .env("RUSTDOCFLAGS", "-D warnings"),
        ),
        in_process(
            "codegen",
            |root| codegen::run(root, codegen::Mode::Check),
            "cargo xtask codegen --check",
        ),
    ]
}

/// Which tool runs the tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TestRunner {
    Nextest,
    CargoTest,
}

/// nextest when `cargo nextest --version` works, else `cargo test`; snapshots must match.
fn test_command(root: &Path) -> (TestRunner, Cmd) {
    let (runner, cmd) = if Cmd::cargo(&["nextest", "--version"]).succeeds_quietly(root) {
        let cmd = Cmd::cargo(&[
            "nextest",
            "run",
            "--workspace",
            "--locked",
            "--no-fail-fast",
        ]);
        (TestRunner::Nextest, cmd)
    } else {
        let cmd = Cmd::cargo(&["test", "--workspace", "--locked", "--no-fail-fast"]);
        (TestRunner::CargoTest, cmd)
    };
    (
        runner,
        cmd.env("INSTA_UPDATE", "no").env("INSTA_FORCE_PASS", "0"),
    )
}

/// Runs the tests, echoing their output and keeping the summary lines (nextest's
/// `Summary [...]`, or libtest's `test result:` lines under `cargo test`).
fn run_tests(
    root: &Path,
    runner: TestRunner,
    cmd: &Cmd,
    summary: &mut Vec<String>,
) -> anyhow::Result<()> {
    let mut command = cmd.command(root);
    if std::env::var_os("CARGO_TERM_COLOR").is_none() && io::stderr().is_terminal() {
        command.env("CARGO_TERM_COLOR", "always");
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start `{cmd}`"))?;
    let stdout = child.stdout.take().context("no stdout pipe")?;
    let stderr = child.stderr.take().context("no stderr pipe")?;
    let out_thread = thread::spawn(move || echo_lines(stdout, io::stdout()));
    let err_lines = echo_lines(stderr, io::stderr());
    let out_lines = out_thread.join().unwrap_or_default();
    let status = child.wait().context("cannot wait for the tests")?;
    summary.extend(
        err_lines
            .into_iter()
            .chain(out_lines)
            .filter(|line| is_summary_line(runner, line)),
    );
    if !status.success() {
        bail!("`{cmd}` failed ({status})");
    }
    Ok(())
}

/// Copies `input` to `output` line by line, returning the lines without colour codes.
fn echo_lines(input: impl Read, mut output: impl Write) -> Vec<String> {
    let mut reader = BufReader::new(input);
    let mut lines = Vec::new();
    let mut buf = Vec::new();
    while reader.read_until(b'\n', &mut buf).is_ok_and(|n| n > 0) {
        let _ = output.write_all(&buf);
        let _ = output.flush();
        let line = strip_ansi(&String::from_utf8_lossy(&buf));
        lines.push(line.trim_end().to_owned());
        buf.clear();
    }
    lines
}

/// True for nextest's final `Summary [ 1.2s] 10 tests run: ...` line, or libtest's
/// `test result: ok. 3 passed; ...` lines (nextest echoes those of failing tests: not
/// summaries).
fn is_summary_line(runner: TestRunner, line: &str) -> bool {
    match runner {
        TestRunner::Nextest => line.trim_start().starts_with("Summary ["),
        TestRunner::CargoTest => line.starts_with("test result:"),
    }
}

/// `text` without ANSI escape sequences (`ESC [ ... letter`).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn check_no_leftover_snapshots(root: &Path) -> anyhow::Result<()> {
    let leftovers = tidy::leftover_snapshot_files(root);
    if leftovers.is_empty() {
        return Ok(());
    }
    for path in &leftovers {
        eprintln!("leftover snapshot file: {}", tidy::rel(root, path));
    }
    bail!(
        "{} new or pending snapshot file(s): review them with `cargo xtask snapshots`",
        leftovers.len()
    )
}

fn print_timings(timings: &[(&str, f64)]) {
    if timings.is_empty() {
        return;
    }
    let line: Vec<String> = timings
        .iter()
        .map(|(name, s)| format!("{name} {s:.1}s"))
        .collect();
    println!("\nxtask ci: timings: {}", line.join(", "));
}

fn print_summary(summary: &[String]) {
    for line in summary {
        println!("{line}");
    }
}

fn flush() {
    let _ = io::stdout().flush();
}
