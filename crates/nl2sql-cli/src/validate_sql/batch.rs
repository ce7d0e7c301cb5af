//! `validate-sql --batch FILE|-`: the guard over JSON lines `{"id", "sql", "datasource"?,
//! "dialect"?}`, one JSON report per line in input order, checked on every core.
//!
//! The schema and the policy are loaded once; the guard of each distinct dialect is built
//! once. A line that cannot be checked (not JSON, no `sql`, an unknown datasource or
//! dialect) gets an error report of its own and the other lines are still checked.

use std::io::{Read as _, Write as _};
use std::num::NonZeroUsize;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context as _, anyhow, bail};
use nl2sql_state::{Dialect, ErrorCode};
use nl2sql_validate::{GuardStatus, SqlGuard};
use serde_json::{Map, Value, json};

use super::{Args, Format, Setup};

/// Stack of each worker thread: the main thread's usual 8 MiB, not the 2 MiB of spawned
/// threads, since the guard walks syntax trees recursively (inputs above 4 KiB get a
/// larger stack from the guard itself).
const WORKER_STACK_BYTES: usize = 8 * 1024 * 1024;

/// A line that cannot be checked: its id (when it has a usable one), a stable code and
/// a message.
struct BadLine {
    id: Value,
    code: ErrorCode,
    message: String,
}

impl BadLine {
    fn new(id: Value, code: ErrorCode, message: impl Into<String>) -> Self {
        BadLine {
            id,
            code,
            message: message.into(),
        }
    }
}

/// One line to check.
struct Request {
    id: Value,
    sql: String,
    datasource: Option<String>,
    dialect: Option<Dialect>,
}

/// A statement handed to the workers: where its report goes, and with which guard.
struct Job {
    slot: usize,
    line: usize,
    id: Value,
    sql: String,
    guard: usize,
}

/// The verdict on one line, for the summary and the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Ok,
    Refused,
    Bad,
}

/// Runs `--batch PATH` (`-`: standard input); returns the exit code.
pub(crate) fn run(args: &Args, path: &Path) -> anyhow::Result<u8> {
    let started = Instant::now();
    if args.source.is_given() || args.datasource.is_some() || args.max_cost.is_some() {
        bail!(
            "--batch checks statements against --schema (or no schema) only; a live \
             datasource (--config, --db, --datasource, --max-cost) is not supported with \
             --batch: run validate-sql once per statement for a dry run"
        );
    }
    if args.format == Some(Format::Text) {
        bail!("--batch writes one JSON report per line; --format text does not apply");
    }
    let (setup, default_guard) = Setup::load(args)?;
    let cli_dialect = args
        .dialect
        .as_deref()
        .map(super::parse_dialect)
        .transpose()?;
    let input = read_batch(path)?;

    // Parse every line, and build each distinct dialect's guard once.
    let mut guards: Vec<(Option<Dialect>, Result<SqlGuard, String>)> =
        vec![(cli_dialect, Ok(default_guard))];
    let mut outputs: Vec<Option<(String, Verdict)>> = Vec::new();
    let mut jobs = Vec::new();
    for (index, raw) in input.split(|&b| b == b'\n').enumerate() {
        let line = index + 1;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let raw = if index == 0 {
            raw.strip_prefix("\u{feff}".as_bytes()).unwrap_or(raw)
        } else {
            raw
        };
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let slot = outputs.len();
        let prepared = parse_line(raw).and_then(|request| {
            if let Some(ds) = &request.datasource
                && *ds != setup.datasource_id
            {
                return Err(BadLine::new(
                    request.id,
                    ErrorCode::InvalidState,
                    format!(
                        "unknown datasource '{ds}': this batch is checked against datasource \
                         '{}' (--schema, --datasource-id)",
                        setup.datasource_id
                    ),
                ));
            }
            let dialect = request.dialect.or(cli_dialect);
            let guard = guard_index(&mut guards, &setup, dialect);
            match &guards[guard].1 {
                Ok(_) => Ok((request, guard)),
                Err(message) => Err(BadLine::new(
                    request.id,
                    ErrorCode::SchemaRetrievalFailed,
                    message.clone(),
                )),
            }
        });
        match prepared {
            Ok((request, guard)) => {
                outputs.push(None);
                jobs.push(Job {
                    slot,
                    line,
                    id: request.id,
                    sql: request.sql,
                    guard,
                });
            }
            Err(bad) => outputs.push(Some((bad_report(&bad, line)?, Verdict::Bad))),
        }
    }

    let guards: Vec<Option<&SqlGuard>> = guards.iter().map(|(_, g)| g.as_ref().ok()).collect();
    let threads = std::thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(jobs.len())
        .max(1);
    for (slot, report, verdict) in check_all(&guards, &jobs, threads)? {
        if let Some(out) = outputs.get_mut(slot) {
            *out = Some((report, verdict));
        }
    }
    let outputs: Vec<(String, Verdict)> = outputs
        .into_iter()
        .collect::<Option<_>>()
        .context("internal error: a statement of the batch was not checked")?;

    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for (report, _) in &outputs {
        writeln!(out, "{report}").context("cannot write to standard output")?;
    }
    out.flush().context("cannot write to standard output")?;
    let count = |v: Verdict| outputs.iter().filter(|(_, verdict)| *verdict == v).count();
    let ok = count(Verdict::Ok);
    eprintln!(
        "validate-sql --batch: {} statements, {ok} ok, {} refused, {} bad lines in {:.2} s \
         ({threads} threads)",
        outputs.len(),
        count(Verdict::Refused),
        count(Verdict::Bad),
        started.elapsed().as_secs_f64()
    );
    Ok(u8::from(ok != outputs.len()))
}

/// The whole batch, from the file or standard input (`-`).
fn read_batch(path: &Path) -> anyhow::Result<Vec<u8>> {
    if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("cannot read the batch from standard input")?;
        return Ok(bytes);
    }
    std::fs::read(path).with_context(|| format!("cannot read batch file '{}'", path.display()))
}

/// The index in `guards` of the guard for `dialect`, built (once) when it is not there.
fn guard_index(
    guards: &mut Vec<(Option<Dialect>, Result<SqlGuard, String>)>,
    setup: &Setup,
    dialect: Option<Dialect>,
) -> usize {
    if let Some(i) = guards.iter().position(|(d, _)| *d == dialect) {
        return i;
    }
    let guard = setup.guard(dialect).map_err(|e| format!("{e:#}"));
    guards.push((dialect, guard));
    guards.len() - 1
}

/// Reads one non-blank line: a JSON object with `sql` (a string), and optionally `id` (a
/// string or a number), `datasource` and `dialect` (strings). Other fields are ignored.
fn parse_line(raw: &[u8]) -> Result<Request, BadLine> {
    let invalid = |id: Value, message: String| BadLine::new(id, ErrorCode::InvalidState, message);
    let text = std::str::from_utf8(raw)
        .map_err(|e| invalid(Value::Null, format!("the line is not valid UTF-8: {e}")))?;
    let value: Value = serde_json::from_str(text)
        .map_err(|e| invalid(Value::Null, format!("the line is not valid JSON: {e}")))?;
    let Value::Object(mut fields) = value else {
        return Err(invalid(
            Value::Null,
            "the line is not a JSON object {\"id\", \"sql\", \"datasource\"?, \"dialect\"?}"
                .to_owned(),
        ));
    };
    let id = match fields.remove("id") {
        None | Some(Value::Null) => Value::Null,
        Some(id @ (Value::String(_) | Value::Number(_))) => id,
        Some(_) => {
            return Err(invalid(
                Value::Null,
                "`id` must be a string or a number".to_owned(),
            ));
        }
    };
    let mut text_field = |name: &str| match fields.remove(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("`{name}` must be a string")),
    };
    let sql = match text_field("sql") {
        Ok(Some(sql)) => sql,
        Ok(None) => {
            return Err(BadLine::new(
                id,
                ErrorCode::MissingSql,
                "the line has no `sql` to check",
            ));
        }
        Err(message) => return Err(BadLine::new(id, ErrorCode::MissingSql, message)),
    };
    let datasource = text_field("datasource").map_err(|m| invalid(id.clone(), m))?;
    let dialect = text_field("dialect")
        .map_err(|m| invalid(id.clone(), m))?
        .map(|name| name.parse::<Dialect>())
        .transpose()
        .map_err(|e| invalid(id.clone(), e.to_string()))?;
    Ok(Request {
        id,
        sql,
        datasource,
        dialect,
    })
}

/// The report of a line that could not be checked.
fn bad_report(bad: &BadLine, line: usize) -> anyhow::Result<String> {
    let report = json!({
        "id": bad.id,
        "line": line,
        "ok": false,
        "error": { "code": bad.code.as_str(), "message": bad.message },
    });
    Ok(serde_json::to_string(&report)?)
}

/// Checks every job on `threads` workers taking the next job from a shared counter;
/// returns each job's slot, JSON report and verdict (in no particular order).
fn check_all(
    guards: &[Option<&SqlGuard>],
    jobs: &[Job],
    threads: usize,
) -> anyhow::Result<Vec<(usize, String, Verdict)>> {
    let next = AtomicUsize::new(0);
    let work = || -> anyhow::Result<Vec<(usize, String, Verdict)>> {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(job) = jobs.get(i) else {
                return Ok(done);
            };
            done.push(check_one(guards, job)?);
        }
    };
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(threads);
        for n in 0..threads {
            let handle = std::thread::Builder::new()
                .name(format!("validate-sql-{n}"))
                .stack_size(WORKER_STACK_BYTES)
                .spawn_scoped(scope, work)
                .context("cannot start a worker thread")?;
            handles.push(handle);
        }
        let joined: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        let mut all = Vec::with_capacity(jobs.len());
        for result in joined {
            all.extend(result.map_err(|_| anyhow!("a worker thread panicked"))??);
        }
        Ok(all)
    })
}

/// One statement's report: the `--format json` report with `id` and `line` in front, or,
/// if the guard panics, a `VALIDATOR_CRASH` error for this line alone.
fn check_one(guards: &[Option<&SqlGuard>], job: &Job) -> anyhow::Result<(usize, String, Verdict)> {
    let Some(guard) = guards.get(job.guard).copied().flatten() else {
        bail!("internal error: no guard for line {}", job.line);
    };
    let checked = std::panic::catch_unwind(AssertUnwindSafe(|| guard.check(&job.sql)));
    let Ok(report) = checked else {
        let bad = BadLine::new(
            job.id.clone(),
            ErrorCode::ValidatorCrash,
            "the guard failed unexpectedly on this statement",
        );
        return Ok((job.slot, bad_report(&bad, job.line)?, Verdict::Bad));
    };
    let mut fields = Map::new();
    fields.insert("id".to_owned(), job.id.clone());
    fields.insert("line".to_owned(), json!(job.line));
    if let Value::Object(body) = report.to_json() {
        fields.extend(body);
    }
    let verdict = if report.status == GuardStatus::Ok {
        Verdict::Ok
    } else {
        Verdict::Refused
    };
    Ok((
        job.slot,
        serde_json::to_string(&Value::Object(fields))?,
        verdict,
    ))
}
