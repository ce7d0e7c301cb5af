//! `nl2sql benchmark --dataset FILE`: runs a golden dataset through the engine, once per
//! planner configuration and `--iterations` times per case, and prints per-case results and
//! the metrics of `interfaces.md` §1 (also written to `--export-path`, JSON or CSV).
//!
//! A golden case is `{id, question, datasource: [ids], difficulty?, expected_routing_layer?,
//! expected_sql?}`; the dataset is a JSON array of cases or JSON lines (one case a line).
//! Metrics, per planner configuration, over every run (case × iteration):
//! - routing accuracy: the datasources the run's sub-queries were assigned to are exactly
//!   the case's `datasource` ids;
//! - execution accuracy (runs of cases with `expected_sql`): `expected_sql`, run on the
//!   case's first datasource, and the run's result are the same result set — same row
//!   count, the same column names compared case-insensitively and sorted, rows compared
//!   order-insensitively, numbers equal within 1e-5 (relative to the larger magnitude when
//!   it is above 1);
//! - semantic SQL accuracy (runs of cases with `expected_sql`): the run has one sub-query,
//!   and its SQL and `expected_sql` have the same normalised sqlparser parse tree
//!   (identifiers and keywords lower-cased, identifier quotes dropped, the generator's
//!   safety `LIMIT` equal to the datasource's row limit removed);
//! - valid-SQL rate: the run has at least one sub-query and each one's last attempt has SQL
//!   that passed the physical validator (the database's dry run);
//! - routing layers: how the resolver found the candidates. The engine has no layered
//!   router, so this is its resolver's method: `retrieval` (ranked datasource documents),
//!   `all_indexed` (no document matched: every indexed datasource was a candidate) or
//!   `none` (the resolver did not run or failed);
//! - latency p50 and p95 (nearest rank) of the engine's answer, in milliseconds.
//!
//! `--routing-only` runs without executing (the engine's no-execute mode: it still plans
//! and validates, as it cannot stop after decomposition) and reports routing accuracy,
//! routing layers and latency only. Exit codes: 0 = the benchmark ran (whatever the
//! scores), 2 = usage, configuration or dataset error, 130 = cancelled (Ctrl-C).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context as _, bail};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use nl2sql_adapter::AdapterRequest;
use nl2sql_orchestrator::{AskOptions, Engine, Planner, PlannerChoice, RunResult, build_planner};
use nl2sql_planner_llm::{LlmConfig, LlmPlanner};
use nl2sql_state::{Dialect, Node, UserContext};
use nl2sql_validate::parser_dialect;
use serde::Serialize;
use serde_json::Value;
use sqlparser::ast::{LimitClause, Statement};
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::ask::{DEMO_ROLE, PlannerKind, data_dir, engine_dir, load_source, open_engine};
use crate::settings::{self, process_env};
use crate::source::SourceArgs;

/// Output formats of `benchmark`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum BenchFormat {
    /// Per-case lines and a metrics summary per planner configuration.
    Table,
    /// The whole report as one JSON object (the same as a `.json` export).
    Json,
}

/// Arguments of `benchmark`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The golden dataset: a JSON array of cases, or JSON lines.
    #[arg(long, value_name = "PATH", required_unless_present = "spider")]
    dataset: Option<PathBuf>,
    /// A Spider-format dataset instead (a JSON array of `{db_id, question, query}`, e.g.
    /// Spider's `dev.json`), asked over the SQLite databases of `--db-dir`.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["dataset", "routing_only", "include_ids"], requires = "db_dir")]
    pub(crate) spider: Option<PathBuf>,
    /// The databases of `--spider`: `DIR/<db_id>/<db_id>.sqlite` or `DIR/<db_id>.sqlite`.
    #[arg(long, value_name = "DIR", requires = "spider")]
    pub(crate) db_dir: Option<PathBuf>,
    /// With `--spider`: only the questions of this database (repeatable).
    #[arg(long = "db-id", value_name = "ID", requires = "spider")]
    pub(crate) db_ids: Vec<String>,
    /// With `--spider`: only the first N questions (after `--db-id`).
    #[arg(long, value_name = "N", requires = "spider")]
    pub(crate) limit: Option<usize>,
    /// With `--spider`: the offline planner answers even where it cannot place every word
    /// (listing them as `not placed`): to measure what refusing costs, and to learn the
    /// filler words (`cargo xtask learn-fillers`).
    #[arg(long, requires = "spider")]
    pub(crate) lenient: bool,
    #[command(flatten)]
    source: SourceArgs,
    /// Where snapshots, the index, run logs and the demo live (default:
    /// `$NL2SQL_DATA_DIR`, else `.nl2sql`).
    #[arg(long, value_name = "DIR")]
    pub(crate) data_dir: Option<PathBuf>,
    /// A planner configuration to benchmark (repeatable; default: offline). `llm` runs
    /// once per `--llm-config` file, `replay` once per `--cassette` file.
    #[arg(long = "planner", value_enum, value_name = "PLANNER")]
    pub(crate) planners: Vec<PlannerKind>,
    /// An LLM file for `--planner llm` (repeatable: one configuration each; default:
    /// `$LLM_CONFIG`).
    #[arg(long = "llm-config", value_name = "FILE")]
    llm_configs: Vec<PathBuf>,
    /// A benchmark matrix: one LLM configuration per named table (TOML, or JSON by
    /// extension), each benchmarked as planner `llm:<name>` (default: `$BENCHMARK_CONFIG`).
    #[arg(long, value_name = "FILE")]
    bench_config: Option<PathBuf>,
    /// A cassette for `--planner replay` (repeatable: one configuration each).
    #[arg(long = "cassette", value_name = "FILE")]
    cassettes: Vec<PathBuf>,
    /// Runs per case and planner configuration.
    #[arg(long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..))]
    iterations: u32,
    /// Stop before execution: report routing accuracy, routing layers and latency only.
    #[arg(long)]
    routing_only: bool,
    /// Run only the case with this id (repeatable).
    #[arg(long = "include-ids", value_name = "ID")]
    include_ids: Vec<String>,
    /// Also write the report here: `.json` (the whole report) or `.csv` (one row per run).
    #[arg(long, value_name = "PATH")]
    pub(crate) export_path: Option<PathBuf>,
    /// A role of the caller (repeatable; on the demo, default `analyst`).
    #[arg(long = "role", value_name = "ROLE")]
    roles: Vec<String>,
    /// "Today" for relative dates (YYYY-MM-DD); default: the clock's date (UTC), or on the
    /// demo its last day (2024-12-31).
    #[arg(long, value_name = "DATE")]
    pub(crate) today: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub(crate) format: BenchFormat,
}

/// One golden case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct GoldenCase {
    pub(crate) id: String,
    pub(crate) question: String,
    /// The datasources the question should be routed to.
    pub(crate) datasource: Vec<String>,
    pub(crate) difficulty: Option<String>,
    pub(crate) expected_routing_layer: Option<String>,
    pub(crate) expected_sql: Option<String>,
    /// The dataset line the case starts on (1-based).
    #[serde(skip)]
    pub(crate) line: usize,
}

/// What an export path asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExportKind {
    Json,
    Csv,
}

/// Runs the command; returns the exit code.
pub(crate) fn run(args: &Args) -> anyhow::Result<u8> {
    if args.spider.is_some() {
        return crate::benchmark_spider::run(args);
    }
    let export = match &args.export_path {
        Some(p) => Some((p.clone(), export_kind(p)?)),
        None => None,
    };
    let Some(dataset) = &args.dataset else {
        bail!("--dataset or --spider is required");
    };
    let text = std::fs::read_to_string(dataset)
        .with_context(|| format!("cannot read dataset '{}'", dataset.display()))?;
    let all = parse_dataset(&text)
        .map_err(|e| anyhow::anyhow!("invalid dataset '{}': {e}", dataset.display()))?;
    let cases = select(all, &args.include_ids)?;
    let configs = planner_configs(args)?;

    let data_dir = data_dir(args.data_dir.as_ref());
    let (source, demo) = load_source(&args.source, &data_dir)?;
    let known: BTreeSet<String> = source
        .registry
        .ids()
        .into_iter()
        .map(str::to_owned)
        .collect();
    for case in &cases {
        for id in &case.datasource {
            if !known.contains(id) {
                bail!(
                    "invalid dataset '{}': line {} (case '{}'): field 'datasource' names '{id}', which is not a configured datasource ({})",
                    dataset.display(),
                    case.line,
                    case.id,
                    known.iter().cloned().collect::<Vec<_>>().join(", ")
                );
            }
        }
    }
    let mut roles = args.roles.clone();
    if demo && roles.is_empty() {
        eprintln!("benchmarking the demo as role '{DEMO_ROLE}' (pass --role to change)");
        roles.push(DEMO_ROLE.to_owned());
    }
    let engine_dir = engine_dir(&data_dir, &source);
    drop(source);

    let rt = crate::source::runtime()?;
    let base = AskOptions {
        user: UserContext {
            roles,
            ..UserContext::default()
        },
        ..AskOptions::default()
    };
    let cancel = base.cancel.clone();
    let mut expected: BTreeMap<String, Result<ResultSet, String>> = BTreeMap::new();
    let mut reports = Vec::new();
    for (label, choice) in &configs {
        eprintln!(
            "benchmarking planner {label}: {} case{} × {} iteration{}",
            cases.len(),
            plural(cases.len()),
            args.iterations,
            plural(args.iterations as usize)
        );
        let planner: Arc<dyn Planner> = match choice {
            BenchPlanner::Choice(choice) => build_planner(choice, None)?,
            BenchPlanner::Matrix(config) => Arc::new(
                LlmPlanner::from_config(config)
                    .with_context(|| format!("benchmark configuration '{label}'"))?,
            ),
        };
        let (source, demo) = load_source(&args.source, &data_dir)?;
        let today = crate::ask::today_for(args.today.as_ref(), demo);
        let engine = open_engine(source, planner, &engine_dir, |options| {
            options.today.clone_from(&today);
            options.execute = !args.routing_only;
        })?;
        let watch = cancel.clone();
        let records = rt.block_on(async {
            tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    eprintln!("cancelling (Ctrl-C) …");
                    watch.cancel();
                }
            });
            let report = engine.index_stale().await;
            for stats in &report.indexed {
                eprintln!(
                    "indexed {} (schema version {})",
                    stats.datasource_id, stats.schema_version
                );
            }
            for (id, err) in &report.failed {
                eprintln!("warning: cannot index {id}: {}", err.safe_message());
            }
            let mut records = Vec::new();
            for case in &cases {
                if !args.routing_only
                    && let Some(sql) = &case.expected_sql
                    && !expected.contains_key(&case.id)
                {
                    let ds = case.datasource.first().map_or("", String::as_str);
                    let set = expected_result(&engine, ds, sql).await;
                    if let Err(e) = &set {
                        eprintln!(
                            "warning: the expected_sql of case '{}' failed: {e}",
                            case.id
                        );
                    }
                    expected.insert(case.id.clone(), set);
                }
                for iteration in 1..=args.iterations {
                    if cancel.is_cancelled() {
                        return records;
                    }
                    let started = Instant::now();
                    let result = engine.ask(&case.question, base.clone()).await;
                    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
                    let record = score(
                        &engine,
                        label,
                        case,
                        iteration,
                        &result,
                        latency_ms,
                        args.routing_only,
                        expected.get(&case.id),
                    )
                    .await;
                    records.push(record);
                }
            }
            records
        });
        drop(engine);
        if cancel.is_cancelled() {
            rt.shutdown_background();
            eprintln!("benchmark cancelled");
            return Ok(130);
        }
        let metrics = Metrics::of(&records, args.routing_only);
        reports.push(PlannerReport {
            planner: label.clone(),
            metrics,
            results: records,
        });
    }
    rt.shutdown_background();

    let report = Report {
        dataset: dataset.display().to_string(),
        cases: cases.len(),
        iterations: args.iterations,
        routing_only: args.routing_only,
        planners: reports,
    };
    match args.format {
        BenchFormat::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        BenchFormat::Table => print!("{}", text_report(&report)),
    }
    if let Some((path, kind)) = export {
        let body = match kind {
            ExportKind::Json => serde_json::to_string_pretty(&report)? + "\n",
            ExportKind::Csv => csv_report(&report),
        };
        std::fs::write(&path, body)
            .with_context(|| format!("cannot write '{}'", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(0)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The export format from the path's extension.
fn export_kind(path: &Path) -> anyhow::Result<ExportKind> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("json") => Ok(ExportKind::Json),
        Some("csv") => Ok(ExportKind::Csv),
        _ => bail!(
            "--export-path '{}': the file name must end in .json or .csv",
            path.display()
        ),
    }
}

/// The cases `--include-ids` selects (all when none is given); an id that no case has is
/// an error.
fn select(cases: Vec<GoldenCase>, include: &[String]) -> anyhow::Result<Vec<GoldenCase>> {
    if include.is_empty() {
        return Ok(cases);
    }
    for id in include {
        if !cases.iter().any(|c| &c.id == id) {
            bail!("--include-ids: the dataset has no case with id '{id}'");
        }
    }
    Ok(cases
        .into_iter()
        .filter(|c| include.contains(&c.id))
        .collect())
}

/// The planner configurations: a label and how to build it, in command-line order.
/// A planner configuration of the benchmark.
pub(crate) enum BenchPlanner {
    /// From `--planner` (and `--llm-config` or `--cassette`).
    Choice(PlannerChoice),
    /// An entry of the benchmark matrix (`--bench-config`, `$BENCHMARK_CONFIG`).
    Matrix(Box<LlmConfig>),
}

/// The planner configurations to benchmark, with their labels: one per `--planner`
/// (`llm` once per `--llm-config` file, else `$LLM_CONFIG`; `replay` once per
/// `--cassette`), then one per entry of the benchmark matrix (`llm:<name>`). Without
/// `--planner` and without a matrix: `offline`.
pub(crate) fn planner_configs(args: &Args) -> anyhow::Result<Vec<(String, BenchPlanner)>> {
    let mut kinds: Vec<PlannerKind> = Vec::new();
    for k in &args.planners {
        if !kinds.contains(k) {
            kinds.push(*k);
        }
    }
    let matrix = settings::benchmark_matrix(args.bench_config.as_ref(), &process_env)?;
    if kinds.is_empty() && matrix.is_empty() {
        kinds.push(PlannerKind::Offline);
    }
    if !args.llm_configs.is_empty() && !kinds.contains(&PlannerKind::Llm) {
        bail!("--llm-config is only used with --planner llm");
    }
    if !args.cassettes.is_empty() && !kinds.contains(&PlannerKind::Replay) {
        bail!("--cassette is only used with --planner replay");
    }
    let mut out = Vec::new();
    for kind in kinds {
        match kind {
            PlannerKind::Offline => out.push((
                "offline".to_owned(),
                BenchPlanner::Choice(settings::offline_planner(&process_env)?),
            )),
            PlannerKind::Llm => {
                let files = if args.llm_configs.is_empty() {
                    match settings::llm_config_path(None, &process_env) {
                        Some((p, _)) => vec![p],
                        None => bail!("--planner llm needs --llm-config FILE (or LLM_CONFIG)"),
                    }
                } else {
                    args.llm_configs.clone()
                };
                for p in files {
                    out.push((
                        format!("llm:{}", p.display()),
                        BenchPlanner::Choice(PlannerChoice::Llm(p)),
                    ));
                }
            }
            PlannerKind::Replay => {
                if args.cassettes.is_empty() {
                    bail!("--planner replay needs --cassette FILE");
                }
                for p in &args.cassettes {
                    out.push((
                        format!("replay:{}", p.display()),
                        BenchPlanner::Choice(PlannerChoice::Replay(p.clone())),
                    ));
                }
            }
        }
    }
    for (name, config) in matrix {
        out.push((
            format!("llm:{name}"),
            BenchPlanner::Matrix(Box::new(config)),
        ));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// The dataset.

/// Parses a dataset: a JSON array of cases, or one case per line (JSON lines). Errors name
/// the line and the field.
pub(crate) fn parse_dataset(text: &str) -> Result<Vec<GoldenCase>, String> {
    let mut cases = Vec::new();
    if text.trim_start().starts_with('[') {
        let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
        let lines = element_lines(text);
        for (i, item) in items.iter().enumerate() {
            let line = lines.get(i).copied().unwrap_or(1);
            cases.push(case_from(item, line).map_err(|e| format!("line {line}: {e}"))?);
        }
    } else {
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            if raw.trim().is_empty() {
                continue;
            }
            let item: Value = serde_json::from_str(raw)
                .map_err(|e| format!("line {line}: not a JSON object: {e}"))?;
            cases.push(case_from(&item, line).map_err(|e| format!("line {line}: {e}"))?);
        }
    }
    if cases.is_empty() {
        return Err("it has no cases".to_owned());
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for c in &cases {
        if let Some(first) = seen.insert(&c.id, c.line) {
            return Err(format!(
                "line {}: field 'id': '{}' is already the id of the case on line {first}",
                c.line, c.id
            ));
        }
    }
    Ok(cases)
}

/// The 1-based line each element of a top-level JSON array starts on (the text is valid
/// JSON: the caller parsed it).
fn element_lines(text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut line = 1;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut expect_element = false;
    for ch in text.chars() {
        if ch == '\n' {
            line += 1;
        }
        if in_string {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                in_string = false;
            }
            continue;
        }
        if ch.is_whitespace() {
            continue;
        }
        if expect_element && ch != ']' {
            lines.push(line);
        }
        expect_element = false;
        match ch {
            '"' => in_string = true,
            '[' | '{' => {
                depth += 1;
                expect_element = depth == 1;
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            ',' => expect_element = depth == 1,
            _ => {}
        }
    }
    lines
}

/// One case from its JSON; the error names the field.
fn case_from(item: &Value, line: usize) -> Result<GoldenCase, String> {
    let Some(obj) = item.as_object() else {
        return Err("a case must be a JSON object".to_owned());
    };
    let id = match obj.get("id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => return Err("field 'id' must be a non-empty string or a number".to_owned()),
        None => return Err("field 'id' is missing".to_owned()),
    };
    let at = |msg: String| format!("case '{id}': {msg}");
    let question = match obj.get("question") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(_) => return Err(at("field 'question' must be a non-empty string".to_owned())),
        None => return Err(at("field 'question' is missing".to_owned())),
    };
    let datasource = match obj.get("datasource").or_else(|| obj.get("datasources")) {
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.clone()],
        Some(Value::Array(ids)) if !ids.is_empty() => {
            let mut out = Vec::new();
            for v in ids {
                match v.as_str() {
                    Some(s) if !s.trim().is_empty() => out.push(s.to_owned()),
                    _ => {
                        return Err(at(
                            "field 'datasource' must list datasource ids (non-empty strings)"
                                .to_owned(),
                        ));
                    }
                }
            }
            out
        }
        Some(_) => {
            return Err(at(
                "field 'datasource' must be a datasource id or a non-empty list of them".to_owned(),
            ));
        }
        None => return Err(at("field 'datasource' is missing".to_owned())),
    };
    let text_field = |name: &str| -> Result<Option<String>, String> {
        match obj.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(_) => Err(at(format!("field '{name}' must be a string"))),
        }
    };
    let expected_sql = match obj.get("expected_sql") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(_) => {
            return Err(at(
                "field 'expected_sql' must be a non-empty string".to_owned()
            ));
        }
    };
    Ok(GoldenCase {
        difficulty: text_field("difficulty")?,
        expected_routing_layer: text_field("expected_routing_layer")?,
        id,
        question,
        datasource,
        expected_sql,
        line,
    })
}

// ---------------------------------------------------------------------------------------
// Scoring one run.

/// One run of one case.
#[derive(Debug, Clone, Serialize)]
struct RunRecord {
    planner: String,
    case_id: String,
    iteration: u32,
    question: String,
    difficulty: Option<String>,
    status: Value,
    trace_id: String,
    expected_datasources: Vec<String>,
    /// The resolver's candidates (from the run log).
    resolved_datasources: Vec<String>,
    /// The datasources of the run's sub-queries.
    used_datasources: Vec<String>,
    routing_correct: bool,
    routing_layer: String,
    expected_routing_layer: Option<String>,
    /// The sub-queries' SQL, in order.
    sql: Vec<String>,
    /// `None` with `--routing-only`.
    valid_sql: Option<bool>,
    /// `None` with `--routing-only` or without `expected_sql`.
    execution_correct: Option<bool>,
    /// Why the result sets differ (or the expected SQL failed).
    execution_detail: Option<String>,
    /// `None` with `--routing-only` or without `expected_sql`.
    semantic_correct: Option<bool>,
    latency_ms: f64,
}

/// Scores one run against its case.
#[allow(clippy::too_many_arguments)] // reason: one call site; a struct would only rename them
async fn score(
    engine: &Engine,
    planner: &str,
    case: &GoldenCase,
    iteration: u32,
    result: &RunResult,
    latency_ms: f64,
    routing_only: bool,
    expected: Option<&Result<ResultSet, String>>,
) -> RunRecord {
    let used: BTreeSet<String> = result
        .subqueries
        .iter()
        .map(|s| s.datasource_id.clone())
        .collect();
    let wanted: BTreeSet<String> = case.datasource.iter().cloned().collect();
    let routing_correct = !used.is_empty() && used == wanted;
    let valid = !result.subqueries.is_empty()
        && result.subqueries.iter().all(|s| {
            s.sql.is_some()
                && s.attempt_log.last().is_none_or(|a| {
                    !a.errors
                        .iter()
                        .any(|e| e.node == Node::PhysicalValidator || e.node == Node::SqlGenerator)
                })
        });
    let (mut execution_correct, mut execution_detail, mut semantic_correct) = (None, None, None);
    if !routing_only && let Some(expected_sql) = &case.expected_sql {
        let comparison = match expected {
            Some(Ok(want)) => match (&result.columns, &result.rows) {
                (Some(columns), Some(rows)) => {
                    let got = ResultSet::from_json(columns, rows);
                    same_result(&got, want)
                }
                _ => Err("the run produced no result".to_owned()),
            },
            Some(Err(e)) => Err(format!("expected_sql failed: {e}")),
            None => Err("expected_sql was not run".to_owned()),
        };
        execution_correct = Some(comparison.is_ok());
        execution_detail = comparison.err();
        let ds = case.datasource.first().map_or("", String::as_str);
        semantic_correct = Some(match result.subqueries.as_slice() {
            [only] => match &only.sql {
                Some(sql) => {
                    let (dialect, row_limit) = dialect_and_limit(engine, &only.datasource_id).await;
                    only.datasource_id == ds && same_sql(sql, expected_sql, dialect, row_limit)
                }
                None => false,
            },
            _ => false,
        });
    }
    RunRecord {
        planner: planner.to_owned(),
        case_id: case.id.clone(),
        iteration,
        question: case.question.clone(),
        difficulty: case.difficulty.clone(),
        status: serde_json::to_value(result.status).unwrap_or(Value::Null),
        trace_id: result.trace_id.clone(),
        expected_datasources: case.datasource.clone(),
        resolved_datasources: resolved(engine, &result.trace_id),
        used_datasources: used.into_iter().collect(),
        routing_correct,
        routing_layer: routing_layer(result).to_owned(),
        expected_routing_layer: case.expected_routing_layer.clone(),
        sql: result
            .subqueries
            .iter()
            .filter_map(|s| s.sql.clone())
            .collect(),
        valid_sql: (!routing_only).then_some(valid),
        execution_correct,
        execution_detail,
        semantic_correct,
        latency_ms,
    }
}

/// How the resolver found its candidates (see the module documentation).
fn routing_layer(result: &RunResult) -> &'static str {
    let failed = result
        .errors
        .iter()
        .any(|e| e.node == Node::DatasourceResolver || e.node == Node::IntentGuard);
    if failed
        || !result
            .timings
            .contains_key(Node::DatasourceResolver.as_str())
    {
        "none"
    } else if result
        .warnings
        .iter()
        .any(|w| w.starts_with("No datasource document matched the question"))
    {
        "all_indexed"
    } else {
        "retrieval"
    }
}

/// The resolver's candidates, from the run log (empty when there is none).
fn resolved(engine: &Engine, trace_id: &str) -> Vec<String> {
    let Some(path) = engine.run_log_path(trace_id) else {
        return Vec::new();
    };
    let Ok(entries) = nl2sql_orchestrator::read_run_log(&path) else {
        return Vec::new();
    };
    entries
        .iter()
        .find(|e| e.node == Node::DatasourceResolver)
        .and_then(|e| e.delta.get("resolved"))
        .and_then(Value::as_array)
        .map(|ids| {
            ids.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The dialect and row limit of datasource `id` (generic and none when unknown).
async fn dialect_and_limit(engine: &Engine, id: &str) -> (Dialect, Option<u64>) {
    let limit = engine.registry().limits(id).ok().map(|l| l.row_limit);
    match engine.registry().adapter(id).await {
        Ok(adapter) => (adapter.dialect(), limit),
        Err(_) => (Dialect::Generic, limit),
    }
}

/// Runs `sql` on datasource `id` (through the adapter's guarded `execute`).
async fn expected_result(engine: &Engine, id: &str, sql: &str) -> Result<ResultSet, String> {
    let adapter = engine
        .registry()
        .adapter(id)
        .await
        .map_err(|e| e.safe_message.clone())?;
    let frame = adapter.execute(AdapterRequest::sql(sql)).await;
    if !frame.success {
        return Err(frame
            .error
            .map_or_else(|| "the statement failed".to_owned(), |e| e.safe_message));
    }
    let columns: Vec<String> = match (&frame.schema, frame.batches.first()) {
        (Some(schema), _) => schema.fields().iter().map(|f| f.name().clone()).collect(),
        (None, Some(batch)) => batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect(),
        (None, None) => Vec::new(),
    };
    let options = FormatOptions::default();
    let mut rows = Vec::new();
    for batch in &frame.batches {
        let mut formatted = Vec::new();
        for col in batch.columns() {
            let f = ArrayFormatter::try_new(col.as_ref(), &options).map_err(|e| e.to_string())?;
            formatted.push((col.as_ref(), f));
        }
        for i in 0..batch.num_rows() {
            rows.push(
                formatted
                    .iter()
                    .map(|(col, f)| {
                        if col.is_null(i) {
                            Cell::Null
                        } else {
                            Cell::from_text(&f.value(i).to_string())
                        }
                    })
                    .collect(),
            );
        }
    }
    Ok(ResultSet { columns, rows })
}

// ---------------------------------------------------------------------------------------
// Result-set comparison.

/// Numbers closer than this (relative to the larger magnitude above 1) are equal.
pub(crate) const TOLERANCE: f64 = 1e-5;

/// One value, normalised for comparison: text that reads as a number is a number.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Null,
    Num(f64),
    Text(String),
}

impl Cell {
    /// A value written as text (a database's display of it).
    pub(crate) fn from_text(s: &str) -> Cell {
        match s.trim().parse::<f64>() {
            Ok(n) if n.is_finite() => Cell::Num(n),
            _ => Cell::Text(s.to_owned()),
        }
    }

    /// A value of a run's JSON rows.
    pub(crate) fn from_json(v: &Value) -> Cell {
        match v {
            Value::Null => Cell::Null,
            Value::Number(n) => n
                .as_f64()
                .map_or_else(|| Cell::Text(n.to_string()), Cell::Num),
            Value::String(s) => Cell::from_text(s),
            Value::Bool(b) => Cell::Text(b.to_string()),
            other => Cell::Text(other.to_string()),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Cell::Null => 0,
            Cell::Num(_) => 1,
            Cell::Text(_) => 2,
        }
    }

    /// A total order (null, then numbers, then text), for sorting rows.
    fn order(&self, other: &Cell) -> Ordering {
        match (self, other) {
            (Cell::Num(a), Cell::Num(b)) => a.total_cmp(b),
            (Cell::Text(a), Cell::Text(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }

    /// Equal, numbers within [`TOLERANCE`].
    fn matches(&self, other: &Cell) -> bool {
        match (self, other) {
            (Cell::Num(a), Cell::Num(b)) => {
                (a - b).abs() <= TOLERANCE * a.abs().max(b.abs()).max(1.0)
            }
            _ => self == other,
        }
    }
}

/// A result: column names and rows of cells.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResultSet {
    pub(crate) columns: Vec<String>,
    pub(crate) rows: Vec<Vec<Cell>>,
}

impl ResultSet {
    /// A run's columns and JSON rows.
    pub(crate) fn from_json(columns: &[String], rows: &[Vec<Value>]) -> ResultSet {
        ResultSet {
            columns: columns.to_vec(),
            rows: rows
                .iter()
                .map(|r| r.iter().map(Cell::from_json).collect())
                .collect(),
        }
    }

    /// The lower-cased column names, sorted, and every row's cells in that order.
    fn canonical(&self) -> (Vec<String>, Vec<Vec<Cell>>) {
        let mut order: Vec<usize> = (0..self.columns.len()).collect();
        let names: Vec<String> = self.columns.iter().map(|c| c.to_lowercase()).collect();
        order.sort_by(|&a, &b| names[a].cmp(&names[b]));
        let sorted_names = order.iter().map(|&i| names[i].clone()).collect();
        let rows = self
            .rows
            .iter()
            .map(|r| {
                order
                    .iter()
                    .map(|&i| r.get(i).cloned().unwrap_or(Cell::Null))
                    .collect()
            })
            .collect();
        (sorted_names, rows)
    }
}

fn row_order(a: &[Cell], b: &[Cell]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = x.order(y);
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

fn rows_match(a: &[Cell], b: &[Cell]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.matches(y))
}

/// Whether two results are the same result set (`interfaces.md` §1): same row count,
/// the same column names compared case-insensitively and sorted, rows compared
/// order-insensitively, numbers within [`TOLERANCE`]. The error says how they differ.
pub(crate) fn same_result(got: &ResultSet, want: &ResultSet) -> Result<(), String> {
    if got.rows.len() != want.rows.len() {
        return Err(format!(
            "{} row{} instead of {}",
            got.rows.len(),
            plural(got.rows.len()),
            want.rows.len()
        ));
    }
    let (got_names, mut got_rows) = got.canonical();
    let (want_names, mut want_rows) = want.canonical();
    if got_names != want_names {
        return Err(format!(
            "columns [{}] instead of [{}]",
            got_names.join(", "),
            want_names.join(", ")
        ));
    }
    got_rows.sort_by(|a, b| row_order(a, b));
    want_rows.sort_by(|a, b| row_order(a, b));
    if got_rows
        .iter()
        .zip(&want_rows)
        .all(|(a, b)| rows_match(a, b))
    {
        return Ok(());
    }
    // Values within the tolerance may sort differently: match the rows one by one.
    let mut unused: Vec<bool> = vec![true; want_rows.len()];
    for (n, row) in got_rows.iter().enumerate() {
        let found = want_rows
            .iter()
            .enumerate()
            .position(|(i, w)| unused[i] && rows_match(row, w));
        match found {
            Some(i) => unused[i] = false,
            None => {
                return Err(format!(
                    "row {} of the result is not in the expected result: [{}]",
                    n + 1,
                    row.iter().map(cell_text).collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    Ok(())
}

fn cell_text(c: &Cell) -> String {
    match c {
        Cell::Null => "NULL".to_owned(),
        Cell::Num(n) => n.to_string(),
        Cell::Text(s) => s.clone(),
    }
}

// ---------------------------------------------------------------------------------------
// Semantic SQL comparison.

/// The normalised parse tree of `sql`: keywords and identifiers lower-cased, identifier
/// quotes dropped, and a top-level `LIMIT` equal to `row_limit` (the generator's safety
/// cap) removed.
pub(crate) fn normalized_sql(
    sql: &str,
    dialect: Dialect,
    row_limit: Option<u64>,
) -> Result<Vec<Statement>, String> {
    let d = parser_dialect(dialect);
    let tokens = Tokenizer::new(d.as_ref(), sql)
        .tokenize()
        .map_err(|e| e.to_string())?;
    let tokens: Vec<Token> = tokens
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .map(|t| match t {
            Token::Word(mut w) => {
                w.value = w.value.to_lowercase();
                if w.quote_style.is_some() {
                    // A quoted identifier is an identifier, never a keyword.
                    w.quote_style = None;
                    w.keyword = Keyword::NoKeyword;
                }
                Token::Word(w)
            }
            other => other,
        })
        .collect();
    let mut statements = Parser::new(d.as_ref())
        .with_tokens(tokens)
        .parse_statements()
        .map_err(|e| e.to_string())?;
    if let Some(limit) = row_limit {
        for s in &mut statements {
            if let Statement::Query(q) = s
                && let Some(LimitClause::LimitOffset {
                    limit: Some(l),
                    offset: None,
                    limit_by,
                }) = &q.limit_clause
                && limit_by.is_empty()
                && l.to_string() == limit.to_string()
            {
                q.limit_clause = None;
            }
        }
    }
    Ok(statements)
}

/// Whether two statements have the same normalised parse tree (false when either does not
/// parse).
pub(crate) fn same_sql(a: &str, b: &str, dialect: Dialect, row_limit: Option<u64>) -> bool {
    match (
        normalized_sql(a, dialect, row_limit),
        normalized_sql(b, dialect, row_limit),
    ) {
        (Ok(x), Ok(y)) => !x.is_empty() && x == y,
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------
// Metrics and reports.

/// `correct` of `total`, and their ratio (none when `total` is 0).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
struct Ratio {
    correct: u64,
    total: u64,
    rate: Option<f64>,
}

impl Ratio {
    fn of(values: impl Iterator<Item = Option<bool>>) -> Ratio {
        let (mut correct, mut total) = (0u64, 0u64);
        for v in values.flatten() {
            total += 1;
            correct += u64::from(v);
        }
        Ratio {
            correct,
            total,
            rate: (total > 0).then(|| correct as f64 / total as f64),
        }
    }

    fn text(&self) -> String {
        match self.rate {
            Some(r) => format!("{:.4} ({}/{})", r, self.correct, self.total),
            None => "n/a".to_owned(),
        }
    }
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
struct Latency {
    p50: f64,
    p95: f64,
}

/// The metrics of one planner configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct Metrics {
    runs: usize,
    routing_accuracy: Ratio,
    /// `None` with `--routing-only`.
    execution_accuracy: Option<Ratio>,
    /// `None` with `--routing-only`.
    semantic_sql_accuracy: Option<Ratio>,
    /// `None` with `--routing-only`.
    valid_sql_rate: Option<Ratio>,
    routing_layers: BTreeMap<String, u64>,
    latency_ms: Latency,
}

/// The nearest-rank percentile `p` of sorted `values` (0 when empty).
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

impl Metrics {
    fn of(records: &[RunRecord], routing_only: bool) -> Metrics {
        let mut layers = BTreeMap::new();
        for r in records {
            *layers.entry(r.routing_layer.clone()).or_insert(0) += 1;
        }
        let mut latencies: Vec<f64> = records.iter().map(|r| r.latency_ms).collect();
        latencies.sort_by(f64::total_cmp);
        Metrics {
            runs: records.len(),
            routing_accuracy: Ratio::of(records.iter().map(|r| Some(r.routing_correct))),
            execution_accuracy: (!routing_only)
                .then(|| Ratio::of(records.iter().map(|r| r.execution_correct))),
            semantic_sql_accuracy: (!routing_only)
                .then(|| Ratio::of(records.iter().map(|r| r.semantic_correct))),
            valid_sql_rate: (!routing_only).then(|| Ratio::of(records.iter().map(|r| r.valid_sql))),
            routing_layers: layers,
            latency_ms: Latency {
                p50: percentile(&latencies, 50.0),
                p95: percentile(&latencies, 95.0),
            },
        }
    }
}

/// The results and metrics of one planner configuration.
#[derive(Debug, Clone, Serialize)]
struct PlannerReport {
    planner: String,
    metrics: Metrics,
    results: Vec<RunRecord>,
}

/// The whole benchmark.
#[derive(Debug, Clone, Serialize)]
struct Report {
    dataset: String,
    cases: usize,
    iterations: u32,
    routing_only: bool,
    planners: Vec<PlannerReport>,
}

fn verdict(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "ok",
        Some(false) => "FAIL",
        None => "-",
    }
}

/// The `--format table` report.
fn text_report(report: &Report) -> String {
    let mut out = format!(
        "benchmark of {}: {} case{} × {} iteration{}{}\n",
        report.dataset,
        report.cases,
        plural(report.cases),
        report.iterations,
        plural(report.iterations as usize),
        if report.routing_only {
            " (routing only)"
        } else {
            ""
        }
    );
    for p in &report.planners {
        let _ = writeln!(out, "\nplanner {}", p.planner);
        let mut rows = vec![[
            "case".to_owned(),
            "iter".to_owned(),
            "status".to_owned(),
            "routing".to_owned(),
            "layer".to_owned(),
            "valid sql".to_owned(),
            "execution".to_owned(),
            "semantic".to_owned(),
            "ms".to_owned(),
            "detail".to_owned(),
        ]];
        for r in &p.results {
            let mut detail = Vec::new();
            if !r.routing_correct {
                detail.push(format!(
                    "used [{}], expected [{}]",
                    r.used_datasources.join(", "),
                    r.expected_datasources.join(", ")
                ));
            }
            if let Some(d) = &r.execution_detail {
                detail.push(d.clone());
            }
            rows.push([
                r.case_id.clone(),
                r.iteration.to_string(),
                r.status.as_str().unwrap_or("").to_owned(),
                verdict(Some(r.routing_correct)).to_owned(),
                r.routing_layer.clone(),
                verdict(r.valid_sql).to_owned(),
                verdict(r.execution_correct).to_owned(),
                verdict(r.semantic_correct).to_owned(),
                format!("{:.1}", r.latency_ms),
                detail.join("; "),
            ]);
        }
        out.push_str(&crate::columns::aligned(&rows));
        let m = &p.metrics;
        let optional = |r: &Option<Ratio>| r.as_ref().map_or_else(|| "n/a".to_owned(), Ratio::text);
        let layers: Vec<String> = m
            .routing_layers
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = write!(
            out,
            "\nmetrics ({}, {} run{}):\n  routing accuracy:      {}\n  execution accuracy:    {}\n  semantic SQL accuracy: {}\n  valid SQL rate:        {}\n  routing layers:        {}\n  latency p50 / p95:     {:.1} ms / {:.1} ms\n",
            p.planner,
            m.runs,
            plural(m.runs),
            m.routing_accuracy.text(),
            optional(&m.execution_accuracy),
            optional(&m.semantic_sql_accuracy),
            optional(&m.valid_sql_rate),
            layers.join(", "),
            m.latency_ms.p50,
            m.latency_ms.p95,
        );
    }
    out
}

/// The CSV export: a header, then one row per run (RFC 4180, CRLF line ends); lists are
/// joined with `;`, unknown values are empty.
fn csv_report(report: &Report) -> String {
    let field = |s: String| {
        if s.contains([',', '"', '\r', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s
        }
    };
    let opt = |v: Option<bool>| v.map(|b| b.to_string()).unwrap_or_default();
    let mut out = String::from(
        "planner,case_id,iteration,difficulty,status,expected_datasources,resolved_datasources,used_datasources,routing_correct,routing_layer,expected_routing_layer,valid_sql,execution_correct,semantic_correct,latency_ms,trace_id,sql,execution_detail\r\n",
    );
    for p in &report.planners {
        for r in &p.results {
            let cells = [
                r.planner.clone(),
                r.case_id.clone(),
                r.iteration.to_string(),
                r.difficulty.clone().unwrap_or_default(),
                r.status.as_str().unwrap_or("").to_owned(),
                r.expected_datasources.join(";"),
                r.resolved_datasources.join(";"),
                r.used_datasources.join(";"),
                r.routing_correct.to_string(),
                r.routing_layer.clone(),
                r.expected_routing_layer.clone().unwrap_or_default(),
                opt(r.valid_sql),
                opt(r.execution_correct),
                opt(r.semantic_correct),
                format!("{:.3}", r.latency_ms),
                r.trace_id.clone(),
                r.sql.join(";\n"),
                r.execution_detail.clone().unwrap_or_default(),
            ];
            let cells: Vec<String> = cells.into_iter().map(field).collect();
            let _ = write!(out, "{}\r\n", cells.join(","));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(columns: &[&str], rows: Vec<Vec<Cell>>) -> ResultSet {
        ResultSet {
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            rows,
        }
    }

    fn t(s: &str) -> Cell {
        Cell::Text(s.to_owned())
    }

    #[test]
    fn numbers_are_equal_within_the_tolerance() {
        let want = set(
            &["n"],
            vec![vec![Cell::Num(0.5)], vec![Cell::Num(1_000_000.0)]],
        );
        let close = set(
            &["n"],
            vec![vec![Cell::Num(0.500_009)], vec![Cell::Num(1_000_009.0)]],
        );
        assert_eq!(same_result(&close, &want), Ok(()));
        let far = set(
            &["n"],
            vec![vec![Cell::Num(0.500_02)], vec![Cell::Num(1_000_000.0)]],
        );
        assert!(same_result(&far, &want).is_err());
        // Text that reads as a number is a number: "3" (a DECIMAL's display) equals 3.0.
        assert_eq!(Cell::from_text("3"), Cell::Num(3.0));
        assert_eq!(Cell::from_json(&serde_json::json!("2.50")), Cell::Num(2.5));
        assert_eq!(Cell::from_text("2024-01-31"), t("2024-01-31"));
    }

    #[test]
    fn column_names_are_compared_case_insensitively_and_sorted() {
        let want = set(&["Factory", "total"], vec![vec![t("DET"), Cell::Num(3.0)]]);
        let swapped = set(&["TOTAL", "factory"], vec![vec![Cell::Num(3.0), t("DET")]]);
        assert_eq!(same_result(&swapped, &want), Ok(()));
        let renamed = set(&["factory", "n"], vec![vec![t("DET"), Cell::Num(3.0)]]);
        assert_eq!(
            same_result(&renamed, &want),
            Err("columns [factory, n] instead of [factory, total]".to_owned())
        );
    }

    #[test]
    fn rows_are_compared_in_any_order_but_counted() {
        let want = set(
            &["a", "b"],
            vec![
                vec![t("x"), Cell::Num(1.0)],
                vec![t("y"), Cell::Null],
                vec![t("x"), Cell::Num(1.0)],
            ],
        );
        let shuffled = set(
            &["a", "b"],
            vec![
                vec![t("y"), Cell::Null],
                vec![t("x"), Cell::Num(1.0)],
                vec![t("x"), Cell::Num(1.000_001)],
            ],
        );
        assert_eq!(same_result(&shuffled, &want), Ok(()));
        // Same rows as a set, different multiset.
        let other = set(
            &["a", "b"],
            vec![
                vec![t("y"), Cell::Null],
                vec![t("y"), Cell::Null],
                vec![t("x"), Cell::Num(1.0)],
            ],
        );
        assert!(same_result(&other, &want).is_err());
        let fewer = set(&["a", "b"], vec![vec![t("y"), Cell::Null]]);
        assert_eq!(
            same_result(&fewer, &want),
            Err("1 row instead of 3".to_owned())
        );
        // Null is not zero and not empty text.
        let zero = set(&["v"], vec![vec![Cell::Num(0.0)]]);
        let null = set(&["v"], vec![vec![Cell::Null]]);
        assert!(same_result(&zero, &null).is_err());
    }

    #[test]
    fn values_close_enough_match_even_when_they_sort_differently() {
        // 1.000001 sorts after 1.0000005 on one side and before on the other.
        let want = set(
            &["k", "v"],
            vec![
                vec![Cell::Num(1.000_001), t("a")],
                vec![Cell::Num(1.0), t("b")],
            ],
        );
        let got = set(
            &["k", "v"],
            vec![
                vec![Cell::Num(0.999_999_9), t("a")],
                vec![Cell::Num(1.000_000_5), t("b")],
            ],
        );
        assert_eq!(same_result(&got, &want), Ok(()));
    }

    #[test]
    fn normalised_sql_ignores_case_quotes_spacing_and_the_safety_limit() {
        let generated = "SELECT \"factory_code\", COUNT(*) AS \"n\" FROM \"machines\" GROUP BY \"factory_code\" LIMIT 10000";
        let written = "select factory_code,\n  count(*) as n\nfrom MACHINES group by factory_code";
        assert!(same_sql(generated, written, Dialect::DuckDb, Some(10_000)));
        // Without knowing the row limit, the LIMIT is part of the query.
        assert!(!same_sql(generated, written, Dialect::DuckDb, None));
        // A plan's own limit stays.
        assert!(!same_sql(
            "SELECT a FROM t LIMIT 5",
            "SELECT a FROM t",
            Dialect::Sqlite,
            Some(10_000)
        ));
        // String literals keep their case.
        assert!(!same_sql(
            "SELECT a FROM t WHERE s = 'Offline'",
            "SELECT a FROM t WHERE s = 'offline'",
            Dialect::Sqlite,
            None
        ));
        assert!(!same_sql(
            "SELECT a FROM t",
            "SELECT b FROM t",
            Dialect::Sqlite,
            None
        ));
        assert!(!same_sql("SELEC a", "SELEC a", Dialect::Sqlite, None));
    }

    #[test]
    fn datasets_are_json_arrays_or_json_lines_and_errors_name_the_line() {
        let array = "[\n  {\"id\": \"a\", \"question\": \"q1\", \"datasource\": [\"x\"]},\n  {\"id\": 2,\n   \"question\": \"q2\", \"datasource\": \"y\", \"expected_sql\": \"SELECT 1\", \"difficulty\": \"easy\"}\n]\n";
        let cases = parse_dataset(array).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!((cases[0].id.as_str(), cases[0].line), ("a", 2));
        assert_eq!((cases[1].id.as_str(), cases[1].line), ("2", 3));
        assert_eq!(cases[1].datasource, ["y"]);
        assert_eq!(cases[1].expected_sql.as_deref(), Some("SELECT 1"));

        let lines = "{\"id\": \"a\", \"question\": \"q\", \"datasource\": [\"x\"]}\n\n{\"id\": \"b\", \"datasource\": [\"x\"]}\n";
        assert_eq!(
            parse_dataset(lines).unwrap_err(),
            "line 3: case 'b': field 'question' is missing"
        );
        let bad_array = "[\n {\"id\": \"a\", \"question\": \"q\", \"datasource\": [\"x\"]},\n {\"id\": \"b\", \"question\": \"q\", \"datasource\": [1]}\n]";
        assert_eq!(
            parse_dataset(bad_array).unwrap_err(),
            "line 3: case 'b': field 'datasource' must list datasource ids (non-empty strings)"
        );
        let duplicate = "{\"id\": \"a\", \"question\": \"q\", \"datasource\": \"x\"}\n{\"id\": \"a\", \"question\": \"r\", \"datasource\": \"x\"}";
        assert_eq!(
            parse_dataset(duplicate).unwrap_err(),
            "line 2: field 'id': 'a' is already the id of the case on line 1"
        );
        assert!(
            parse_dataset("{\"id\": \"a\",")
                .unwrap_err()
                .starts_with("line 1: not a JSON object")
        );
        assert_eq!(parse_dataset("[]").unwrap_err(), "it has no cases");
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 10.0);
        assert_eq!(percentile(&v, 95.0), 19.0);
        assert_eq!(percentile(&[7.0], 95.0), 7.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
    }
}
