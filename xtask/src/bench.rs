//! `cargo xtask bench [filter]`: runs the criterion benches of nl2sql-bench and merges
//! their results, with the machine and the commit, into `docs/benchmarks.md`.
//!
//! Criterion leaves one `new/benchmark.json` (id, throughput) and `new/estimates.json`
//! (times in nanoseconds) per benchmark under `<target dir>/criterion/`. Only the results
//! this run wrote are read. The table between the `bench:start` and `bench:end` markers
//! keeps the rows of benchmarks this run did not measure and replaces those it did; each
//! row says when and at which commit it was measured. The hand-written text around the
//! markers is kept.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use serde_json::Value;

use crate::cmd::Cmd;
use crate::deps;
use crate::tidy;

/// The benchmark report, relative to the workspace root.
pub(crate) const BENCHMARKS_DOC: &str = "docs/benchmarks.md";
const START: &str = "<!-- bench:start -->";
const END: &str = "<!-- bench:end -->";

/// One benchmark's result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BenchResult {
    /// `group/function[/value]`.
    pub(crate) id: String,
    /// Time of one iteration in nanoseconds (criterion's slope estimate, else the mean),
    /// with its 95% confidence interval.
    pub(crate) time_ns: f64,
    pub(crate) lower_ns: f64,
    pub(crate) upper_ns: f64,
    /// What one iteration processes, when the bench declares a throughput.
    pub(crate) throughput: Option<Throughput>,
}

/// Criterion's `Throughput`, as its JSON names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Throughput {
    /// Statements (our benches count SQL statements as elements).
    Elements(u64),
    /// Bytes, reported in binary units.
    Bytes(u64),
    /// Bytes, reported in decimal units.
    BytesDecimal(u64),
    /// Bits.
    Bits(u64),
}

/// Where and on what the benches ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Machine {
    pub(crate) cpus: String,
    pub(crate) cpu_model: String,
    pub(crate) rustc: String,
    /// The short commit of `HEAD`.
    pub(crate) commit: String,
    /// Whether tracked files had uncommitted changes.
    pub(crate) dirty: bool,
    pub(crate) date: String,
    pub(crate) command: String,
}

/// One row of the table: a benchmark's rendered cells and when it was measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    /// `group/function[/value]`.
    pub(crate) id: String,
    /// Time per iteration with its 95% CI, throughput, time per item.
    pub(crate) time: String,
    pub(crate) throughput: String,
    pub(crate) per_item: String,
    /// `YYYY-MM-DD, `commit``, with ` (uncommitted changes)` when the tree was dirty.
    pub(crate) measured: String,
}

/// Runs the benches and rewrites the generated part of `docs/benchmarks.md`.
pub(crate) fn run(root: &Path, filter: Option<&str>) -> anyhow::Result<()> {
    // Criterion rewrites `new/` for each benchmark it runs; older files are not ours.
    let started = SystemTime::now() - Duration::from_secs(2);
    // The guard's Spider bench lives in nl2sql-validate, so that measuring the guard
    // alone never builds the database drivers (DuckDB's release build takes long).
    let guard_only = filter.is_some_and(|f| f.starts_with(GUARD_SPIDER));
    let runs_guard = filter.is_none_or(|f| f.starts_with(GUARD_SPIDER) || GUARD_SPIDER.contains(f));
    let mut commands = Vec::new();
    if !guard_only {
        commands.push(Cmd::cargo(&["bench", "-p", "nl2sql-bench"]));
    }
    if runs_guard {
        commands.push(Cmd::cargo(&[
            "bench",
            "-p",
            "nl2sql-validate",
            "--bench",
            GUARD_SPIDER,
        ]));
    }
    for mut cmd in commands {
        if let Some(filter) = filter {
            cmd = cmd.arg("--").arg(filter);
        }
        println!("bench: {cmd}");
        cmd.run(root)?;
    }

    let metadata = deps::cargo_metadata(root)?;
    let target = metadata["target_directory"]
        .as_str()
        .context("`cargo metadata` gives no target_directory")?;
    let criterion = Path::new(target).join("criterion");
    let results = read_results(&criterion, started)?;
    if results.is_empty() {
        bail!(
            "no criterion results were written under {} (does the filter match a benchmark?)",
            criterion.display()
        );
    }
    let mut command = String::from("cargo xtask bench");
    if let Some(filter) = filter {
        command.push(' ');
        command.push_str(&crate::cmd::shell_quote(filter));
    }
    let machine = Machine::detect(root, command);
    let path = root.join(BENCHMARKS_DOC);
    let doc = fs::read_to_string(&path).unwrap_or_else(|_| DEFAULT_INTRO.to_owned());
    let earlier = generated_section(&doc).map(parse_rows).unwrap_or_default();
    let measured = measured_text(&machine);
    let fresh: Vec<Row> = results.iter().map(|r| row_of(r, &measured)).collect();
    let generated = render(&merge(earlier, fresh), &machine);
    fs::write(&path, splice(&doc, &generated))
        .with_context(|| format!("cannot write {BENCHMARKS_DOC}"))?;
    println!("\n{generated}");
    println!("bench: wrote {BENCHMARKS_DOC}");
    if runs_guard {
        let ours = results
            .iter()
            .find(|r| r.id == format!("{GUARD_SPIDER}/check"))
            .and_then(|r| match r.throughput {
                Some(Throughput::Elements(n)) if r.time_ns > 0.0 => {
                    Some(n as f64 * 1e9 / r.time_ns)
                }
                _ => None,
            });
        peer_sqlglot(root, Path::new(target), ours);
    }
    Ok(())
}

/// The guard's bench over Spider dev's gold queries (`crates/nl2sql-validate/benches`).
const GUARD_SPIDER: &str = "guard_spider";

/// The peer's version, pinned so that runs compare.
const SQLGLOT: &str = "sqlglot==30.30.0";

/// When Python is present: sqlglot's `parse_one` + `qualify` on the same 1,034 statements
/// (`xtask/peers/sqlglot_guard.py`, in a virtual environment under the target directory),
/// printed beside the guard's rate with the ratio. Without Python, or if the install fails
/// (no network), it says so and the bench still succeeds.
fn peer_sqlglot(root: &Path, target: &Path, ours: Option<f64>) {
    let venv = target.join("peer-venv");
    let python = venv.join("bin/python");
    let step = || -> anyhow::Result<Value> {
        if !python.is_file() {
            Cmd::new("python3", &["-m", "venv", &venv.to_string_lossy()]).run(root)?;
        }
        Cmd::new(
            &python.to_string_lossy(),
            &["-m", "pip", "install", "-q", SQLGLOT],
        )
        .run(root)?;
        let out = Cmd::new(
            &python.to_string_lossy(),
            &[
                &root.join("xtask/peers/sqlglot_guard.py").to_string_lossy(),
                &root.join("tests/data/spider").to_string_lossy(),
            ],
        )
        .read(root)?;
        Ok(serde_json::from_str(out.trim())?)
    };
    match step() {
        Ok(peer) => {
            let theirs = peer["per_second"].as_f64().unwrap_or(0.0);
            println!(
                "bench: peer {} parse_one + qualify: {:.0} statements/s ({} of {} qualified)",
                peer["sqlglot"].as_str().unwrap_or("sqlglot"),
                theirs,
                peer["qualified"],
                peer["statements"]
            );
            if let Some(ours) = ours.filter(|_| theirs > 0.0) {
                println!(
                    "bench: {GUARD_SPIDER}/check: {ours:.0} statements/s, {:.1}x the peer's",
                    ours / theirs
                );
            }
        }
        Err(e) => println!("bench: the sqlglot comparison did not run: {e:#}"),
    }
}

const DEFAULT_INTRO: &str = "# Benchmarks\n\nThe table below is written by `cargo xtask bench`.\n";

/// Results whose `new/benchmark.json` was written at or after `since`, sorted by id.
fn read_results(criterion: &Path, since: SystemTime) -> anyhow::Result<Vec<BenchResult>> {
    let mut files: Vec<PathBuf> = Vec::new();
    tidy::walk(criterion, &mut |path| {
        let in_new = path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == "new");
        if in_new && path.file_name().is_some_and(|n| n == "benchmark.json") {
            files.push(path.to_path_buf());
        }
    });
    let mut results = Vec::new();
    for file in files {
        let fresh = fs::metadata(&file)
            .and_then(|m| m.modified())
            .is_ok_and(|modified| modified >= since);
        if !fresh {
            continue;
        }
        let benchmark = read_json(&file)?;
        let estimates = read_json(&file.with_file_name("estimates.json"))?;
        results.push(
            parse_result(&benchmark, &estimates)
                .with_context(|| format!("unexpected criterion output in {}", file.display()))?,
        );
    }
    results.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(results)
}

fn read_json(path: &Path) -> anyhow::Result<Value> {
    let text =
        fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("cannot parse {}", path.display()))
}

/// One result from criterion's `benchmark.json` and `estimates.json`.
pub(crate) fn parse_result(benchmark: &Value, estimates: &Value) -> anyhow::Result<BenchResult> {
    let id = benchmark["full_id"]
        .as_str()
        .or_else(|| benchmark["title"].as_str())
        .context("no full_id")?
        .to_owned();
    // Criterion reports the slope of time against iterations when it has one (linear
    // sampling), else the mean: report the same figure.
    let estimate = match &estimates["slope"] {
        Value::Object(_) => &estimates["slope"],
        _ => &estimates["mean"],
    };
    let number = |v: &Value, what: &str| v.as_f64().with_context(|| format!("no {what}"));
    let throughput = match &benchmark["throughput"] {
        Value::Object(map) => map.iter().find_map(|(kind, n)| {
            let n = n.as_u64()?;
            match kind.as_str() {
                "Elements" => Some(Throughput::Elements(n)),
                "Bytes" => Some(Throughput::Bytes(n)),
                "BytesDecimal" => Some(Throughput::BytesDecimal(n)),
                "Bits" => Some(Throughput::Bits(n)),
                _ => None,
            }
        }),
        _ => None,
    };
    Ok(BenchResult {
        id,
        time_ns: number(&estimate["point_estimate"], "point estimate")?,
        lower_ns: number(
            &estimate["confidence_interval"]["lower_bound"],
            "lower bound",
        )?,
        upper_ns: number(
            &estimate["confidence_interval"]["upper_bound"],
            "upper bound",
        )?,
        throughput,
    })
}

impl Machine {
    fn detect(root: &Path, command: String) -> Machine {
        let read = |cmd: Cmd| cmd.read(root).map(|s| s.trim().to_owned()).ok();
        let cpus = read(Cmd::new("nproc", &[]))
            .or_else(|| {
                std::thread::available_parallelism()
                    .ok()
                    .map(|n| n.to_string())
            })
            .unwrap_or_else(|| "?".to_owned());
        let cpu_model = fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| {
                info.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, model)| model.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown CPU".to_owned());
        let rustc = read(Cmd::new("rustc", &["-V"])).unwrap_or_else(|| "rustc ?".to_owned());
        let commit = read(Cmd::new("git", &["rev-parse", "--short=12", "HEAD"]))
            .unwrap_or_else(|| "unknown".to_owned());
        let dirty = read(Cmd::new(
            "git",
            &["status", "--porcelain", "--untracked-files=no"],
        ))
        .is_some_and(|s| !s.is_empty());
        let date = utc_date(SystemTime::now());
        Machine {
            cpus,
            cpu_model,
            rustc,
            commit,
            dirty,
            date,
            command,
        }
    }
}

/// When a run measured: `YYYY-MM-DD, `commit``, marked when the tree was dirty.
pub(crate) fn measured_text(machine: &Machine) -> String {
    let dirty = if machine.dirty {
        " (uncommitted changes)"
    } else {
        ""
    };
    format!("{}, `{}`{dirty}", machine.date, machine.commit)
}

/// The table row of `r`, measured at `measured`.
pub(crate) fn row_of(r: &BenchResult, measured: &str) -> Row {
    let (throughput, per_item) = match r.throughput {
        Some(t) => {
            let (n, rate) = throughput_text(t, r.time_ns, element_unit(&r.id));
            let per_item = match t {
                Throughput::Elements(_) => format_ns(r.time_ns / n),
                _ => "–".to_owned(),
            };
            (rate, per_item)
        }
        None => ("–".to_owned(), "–".to_owned()),
    };
    Row {
        id: r.id.clone(),
        time: format!(
            "{} ({} – {})",
            format_ns(r.time_ns),
            format_ns(r.lower_ns),
            format_ns(r.upper_ns)
        ),
        throughput,
        per_item,
        measured: measured.to_owned(),
    }
}

/// The rows of `earlier` that `fresh` does not measure again, and the `fresh` rows,
/// sorted by id.
pub(crate) fn merge(earlier: Vec<Row>, fresh: Vec<Row>) -> Vec<Row> {
    let mut rows: BTreeMap<String, Row> = earlier.into_iter().map(|r| (r.id.clone(), r)).collect();
    for row in fresh {
        rows.insert(row.id.clone(), row);
    }
    rows.into_values().collect()
}

/// The text between the markers of `doc`, when it has both.
pub(crate) fn generated_section(doc: &str) -> Option<&str> {
    let start = doc.find(START)? + START.len();
    let end = doc[start..].find(END)? + start;
    Some(&doc[start..end])
}

/// The rows of a generated section. A table written before rows carried their own date
/// (four columns) takes it from the section's `Measured on DATE … at commit `COMMIT``
/// line.
pub(crate) fn parse_rows(section: &str) -> Vec<Row> {
    let legacy = legacy_measured(section).unwrap_or_else(|| "earlier run".to_owned());
    let mut rows = Vec::new();
    for line in section.lines() {
        let line = line.trim();
        if !line.starts_with("| `") {
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let measured = match cells.len() {
            4 => legacy.clone(),
            5 => cells[4].to_owned(),
            _ => continue,
        };
        rows.push(Row {
            id: cells[0].trim_matches('`').to_owned(),
            time: cells[1].to_owned(),
            throughput: cells[2].to_owned(),
            per_item: cells[3].to_owned(),
            measured,
        });
    }
    rows
}

/// `date, `commit`` from the machine line of a table without a "measured" column.
fn legacy_measured(section: &str) -> Option<String> {
    let line = section.lines().find(|l| l.starts_with("Measured on "))?;
    let date = line
        .strip_prefix("Measured on ")?
        .split_whitespace()
        .next()?;
    let (_, after) = line.split_once("at commit `")?;
    let (commit, _) = after.split_once('`')?;
    let dirty = if commit.contains("uncommitted") {
        " (uncommitted changes)"
    } else {
        ""
    };
    let commit = commit.split_whitespace().next()?;
    Some(format!("{date}, `{commit}`{dirty}"))
}

/// The generated section (without the markers).
pub(crate) fn render(rows: &[Row], machine: &Machine) -> String {
    let dirty = if machine.dirty {
        " with uncommitted changes"
    } else {
        ""
    };
    let mut out = format!(
        "<!-- Written by `cargo xtask bench`: edit only outside the bench markers. -->\n\
         \n\
         Last run on {date} by `{command}` at commit `{commit}`{dirty}, {rustc}, on {cpus} CPUs ({model}).\n\
         Rows of benchmarks that run did not measure are kept from earlier runs: the last column says when and at which commit each was measured.\n\
         Each benchmark runs on one core unless its description says otherwise.\n\
         \n\
         | benchmark | time per iteration (95% CI) | throughput | time per item | measured |\n\
         |---|---|---|---|---|\n",
        date = machine.date,
        command = machine.command,
        commit = machine.commit,
        rustc = machine.rustc,
        cpus = machine.cpus,
        model = machine.cpu_model,
    );
    for r in rows {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            r.id, r.time, r.throughput, r.per_item, r.measured,
        ));
    }
    out
}

/// What a benchmark group counts as one element: SQL statements for the guard, rows for
/// adapters and aggregation, sub-queries for DAG planning.
pub(crate) fn element_unit(id: &str) -> &'static str {
    match id.split('/').next().unwrap_or_default() {
        "adapter" | "aggregate" | "aggregate_duckdb" | "artifacts" => "rows",
        "dag" => "sub-queries",
        "planner" => "questions",
        _ => "statements",
    }
}

/// `(items per iteration, rate text)` for a throughput at `time_ns` per iteration.
fn throughput_text(t: Throughput, time_ns: f64, unit: &str) -> (f64, String) {
    let per_second = |n: u64| n as f64 / (time_ns * 1e-9);
    match t {
        Throughput::Elements(n) => (
            n as f64,
            format!("{} {unit}/s", group_thousands(per_second(n))),
        ),
        Throughput::Bytes(n) => (
            n as f64,
            format!("{:.1} MiB/s", per_second(n) / (1024.0 * 1024.0)),
        ),
        Throughput::BytesDecimal(n) => (n as f64, format!("{:.1} MB/s", per_second(n) / 1e6)),
        Throughput::Bits(n) => (n as f64, format!("{:.1} Mbit/s", per_second(n) / 1e6)),
    }
}

/// A duration in nanoseconds with a readable unit and three significant digits.
pub(crate) fn format_ns(ns: f64) -> String {
    let (value, unit) = if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "µs")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let decimals = if value < 10.0 {
        2
    } else if value < 100.0 {
        1
    } else {
        0
    };
    format!("{value:.decimals$} {unit}")
}

/// A rate rounded to a whole number, with commas between thousands: `12,345`.
pub(crate) fn group_thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `doc` with the text between the markers replaced by `generated` (the markers are
/// appended when missing).
pub(crate) fn splice(doc: &str, generated: &str) -> String {
    let section = format!("{START}\n{generated}{END}");
    match (doc.find(START), doc.find(END)) {
        (Some(start), Some(end)) if start < end => {
            format!("{}{section}{}", &doc[..start], &doc[end + END.len()..])
        }
        _ => {
            let separator = if doc.ends_with('\n') { "\n" } else { "\n\n" };
            format!("{doc}{separator}{section}\n")
        }
    }
}

/// `YYYY-MM-DD` (UTC) of `time`.
pub(crate) fn utc_date(time: SystemTime) -> String {
    let days = time
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400);
    // Howard Hinnant's `civil_from_days`, for days since 1970-01-01.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests;
