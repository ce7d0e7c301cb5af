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

/// Runs the command over a `--dataset` file (`--spider` runs `benchmark_spider::run`);
/// returns the exit code.
pub(crate) fn run(args: &Args) -> anyhow::Result<u8> {
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

mod compare;
mod dataset;
mod report;

use compare::*;
use dataset::*;
use report::*;

// ---------------------------------------------------------------------------------------
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

#[cfg(test)]
mod tests;
