//! `nl2sql ask "question"`: answers a question through the whole pipeline and prints the
//! answer sentence and the result table (`--format table|json|csv|markdown`), with
//! `--explain` the DAG, each sub-query's plan, SQL and findings, and per-stage timings.
//!
//! Datasources come from `--config FILE`, `--db URL`, `$NL2SQL_CONFIG`, or else the
//! embedded demo, created on first use under the data directory. Datasources the data
//! directory has no snapshot of, or whose structure changed since it was taken, are
//! snapshotted and indexed first. Exit codes: 0 = answered
//! in full, 3 = partial (some part is missing, and the output says which), 1 = failed or
//! timed out, 130 = cancelled (Ctrl-C), 2 = usage or configuration error.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use nl2sql_index::{LexicalIndex, SchemaIndex};
use nl2sql_orchestrator::{
    AskOptions, Engine, EngineOptions, PlannerChoice, RunResult, build_planner,
};
use nl2sql_state::{ArtifactDurability, ArtifactsSection, RunStatus, UserContext, sha256_hex};
use serde_json::Value;

use crate::settings::{self, Storage};
use crate::source::{Source, SourceArgs};

/// Output formats of `ask`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AskFormat {
    /// The answer, then an aligned text table.
    Table,
    /// One JSON object (answer, columns, rows, success, errors, trace_id, subqueries, …).
    Json,
    /// The result table as CSV (RFC 4180), nothing else.
    Csv,
    /// The answer, then a Markdown table.
    Markdown,
}

/// Which planner answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PlannerKind {
    /// The offline deterministic planner (no network, no model).
    Offline,
    /// An OpenAI-compatible LLM configured by `--llm-config FILE`.
    Llm,
    /// Answers from a recorded cassette (`--cassette FILE`) only.
    Replay,
}

/// Arguments of `ask`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The question, in plain English.
    #[arg(value_name = "QUESTION")]
    question: String,
    #[command(flatten)]
    source: SourceArgs,
    /// Where snapshots, the index, artifacts, run logs and the demo live (default:
    /// `$NL2SQL_DATA_DIR`, else `.nl2sql`).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: AskFormat,
    /// Also print the DAG, each sub-query's plan, SQL and findings, and stage timings (on
    /// standard error with `--format csv`).
    #[arg(long)]
    explain: bool,
    /// A role of the caller (repeatable); the policy file decides what it may read.
    #[arg(long = "role", value_name = "ROLE")]
    roles: Vec<String>,
    /// Use only this datasource.
    #[arg(long, value_name = "ID")]
    datasource: Option<String>,
    /// Which planner answers (default: `llm` when `$LLM_CONFIG` names an LLM file, else
    /// `offline`).
    #[arg(long, value_enum)]
    planner: Option<PlannerKind>,
    /// The LLM file for `--planner llm` (TOML, or JSON by extension; default:
    /// `$LLM_CONFIG`).
    #[arg(long, value_name = "FILE")]
    llm_config: Option<PathBuf>,
    /// The cassette for `--planner replay`.
    #[arg(long, value_name = "FILE")]
    cassette: Option<PathBuf>,
    /// Also record every planner call to this cassette (JSON lines).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// "Today" for relative dates (YYYY-MM-DD); default: the clock's date (UTC), or on the
    /// demo its last day (2024-12-31).
    #[arg(long, value_name = "DATE")]
    today: Option<String>,
    /// Give up after this many seconds (default: `$GLOBAL_TIMEOUT_SEC`, else the
    /// configuration's `engine.global_timeout_sec`, else 60).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
    /// Plan, validate and generate SQL (with the database's dry run and cost estimate) but
    /// run nothing: the sub-queries' SQL is the output. `--no-exec` is the same flag.
    #[arg(long, visible_alias = "no-exec")]
    no_execute: bool,
}

/// Runs the command; returns the exit code.
pub(crate) fn run(args: &Args) -> anyhow::Result<u8> {
    let data_dir = data_dir(args.data_dir.as_ref());
    let (source, demo) = load_source(&args.source, &data_dir)?;
    let today = today_for(args.today.as_ref(), demo);
    let mut roles = args.roles.clone();
    if demo && roles.is_empty() {
        // The demo's policy fails closed like any other: ask as its analyst by default.
        eprintln!("asking the demo as role '{DEMO_ROLE}' (pass --role to change)");
        roles.push(DEMO_ROLE.to_owned());
    }
    let planner = planner_of(
        args.planner,
        args.llm_config.as_ref(),
        args.cassette.as_ref(),
        args.record.as_deref(),
    )?;

    // One engine directory per set of datasources, so two configurations never share
    // snapshots under the same datasource id.
    let engine_dir = engine_dir(&data_dir, &source);
    let engine = open_engine(source, planner, &engine_dir, |options| {
        options.today.clone_from(&today);
        options.execute = !args.no_execute;
        if let Some(secs) = args.timeout {
            options.global_timeout = Duration::from_secs(secs);
        }
    })?;
    let engine = Arc::new(engine);

    let rt = crate::source::runtime()?;
    let result = rt.block_on(async {
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
        let opts = AskOptions {
            user: UserContext {
                roles: roles.clone(),
                ..UserContext::default()
            },
            datasource: args.datasource.clone(),
            ..AskOptions::default()
        };
        let cancel = opts.cancel.clone();
        // Ctrl-C cancels the run: every stage stops at its next await point and no
        // partial artifact is left under a final name.
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("cancelling (Ctrl-C) …");
                cancel.cancel();
            }
        });
        engine.ask(&args.question, opts).await
    });
    // A statement still running on a blocking thread (an engine that cannot be
    // interrupted mid-call) must not hold the process after a cancel or a timeout.
    rt.shutdown_background();
    // What `runs replay` needs to ask again: the question, the caller and the source.
    let recorded = RecordedAsk {
        question: args.question.clone(),
        roles,
        datasource: args.datasource.clone(),
        today,
        config: args
            .source
            .config
            .as_ref()
            .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())),
        db: args.source.db.clone(),
    };
    let runs = engine_dir.join("runs");
    if runs.is_dir() {
        let path = runs.join(format!("{}.ask.json", result.trace_id));
        if let Err(e) = std::fs::write(&path, serde_json::to_vec_pretty(&recorded)?) {
            eprintln!("warning: cannot record the run's question: {e}");
        }
    }
    print_result(&result, args.format, args.explain)?;
    Ok(exit_code(&result))
}

/// The exit code of a run (spec: interfaces.md §3): 0 succeeded, 3 partial, 130
/// cancelled, 1 failed or timed out.
pub(crate) fn exit_code(result: &RunResult) -> u8 {
    match result.status {
        RunStatus::Succeeded => 0,
        RunStatus::Partial => 3,
        RunStatus::Cancelled => 130,
        RunStatus::Failed | RunStatus::TimedOut => 1,
    }
}

/// The planner of `--planner` (default: `llm` when `--llm-config` or `$LLM_CONFIG` names
/// an LLM file, else `offline`), recording its calls to `record` when given. Errors name
/// the flag or variable at fault.
pub(crate) fn planner_of(
    kind: Option<PlannerKind>,
    llm_config: Option<&PathBuf>,
    cassette: Option<&PathBuf>,
    record: Option<&Path>,
) -> anyhow::Result<Arc<dyn nl2sql_orchestrator::Planner>> {
    let llm = settings::llm_config_path(llm_config, &settings::process_env);
    let kind = kind.unwrap_or(if llm.is_some() {
        PlannerKind::Llm
    } else {
        PlannerKind::Offline
    });
    let (choice, key) = match kind {
        PlannerKind::Offline => (settings::offline_planner(&settings::process_env)?, None),
        PlannerKind::Llm => match llm {
            Some((p, key)) => (PlannerChoice::Llm(p), Some(key)),
            None => bail!("--planner llm needs --llm-config FILE (or LLM_CONFIG)"),
        },
        PlannerKind::Replay => match cassette {
            Some(p) => (PlannerChoice::Replay(p.clone()), None),
            None => bail!("--planner replay needs --cassette FILE"),
        },
    };
    build_planner(&choice, record).map_err(|e| match key {
        Some("LLM_CONFIG") => anyhow::anyhow!("LLM_CONFIG: {e}"),
        _ => e.into(),
    })
}

/// The engine over `source` under `dir`: the configuration's documentation, artifact
/// store and policy; settings from the defaults, then the `[engine]` section, then the
/// spec's environment variables, then `adjust` (the command line).
pub(crate) fn open_engine(
    source: Source,
    planner: Arc<dyn nl2sql_orchestrator::Planner>,
    dir: &Path,
    adjust: impl FnOnce(&mut EngineOptions),
) -> anyhow::Result<Engine> {
    Ok(open_engine_parts(source, planner, dir, adjust)?.0)
}

/// [`open_engine`], and the index the engine searches and the storage settings (for
/// `nl2sql index`, which indexes through them): the schema store and the index are
/// placed and configured by the settings (`SCHEMA_STORE_*`, `VECTOR_STORE*`,
/// `ROUTER_*`, `SCHEMA_CONTEXT_*`; [`settings::Storage`]).
pub(crate) fn open_engine_parts(
    source: Source,
    planner: Arc<dyn nl2sql_orchestrator::Planner>,
    dir: &Path,
    adjust: impl FnOnce(&mut EngineOptions),
) -> anyhow::Result<(Engine, Arc<LexicalIndex>, Storage)> {
    let env = settings::process_env;
    let mut options = EngineOptions::default()
        .with_section(&source.engine)
        .with_env(env)?;
    let storage = Storage::of(&env, dir)?;
    options.index_workers = storage.settings.index_workers;
    adjust(&mut options);
    let opened = || -> nl2sql_state::Result<_> {
        let store = storage.open_store()?;
        let index = Arc::new(storage.open_index()?);
        // Relative to `dir`, as `Engine::open` places it.
        let default_artifacts = ArtifactsSection {
            uri: "artifacts".to_owned(),
            path_template: None,
            durability: ArtifactDurability::default(),
        };
        let artifacts = nl2sql_orchestrator::artifact_store(&default_artifacts, dir, &[])?;
        Ok((store, index, artifacts))
    };
    let (store, index, artifacts) = opened()
        .map_err(|e| anyhow::anyhow!("{}", e.safe_message()))
        .with_context(|| format!("cannot open the data directory '{}'", dir.display()))?;
    let searched: Arc<dyn SchemaIndex> = index.clone();
    let mut engine = Engine::new(source.registry, store, searched, planner, artifacts)
        .with_data_dir(dir)
        .with_options(options)
        .with_docs(source.docs);
    if let Some(setting) = settings::artifacts_setting(&env, source.artifacts, dir)? {
        let store =
            nl2sql_orchestrator::artifact_store(&setting.section, &setting.base, &setting.options)
                .map_err(|e| anyhow::anyhow!("{}", e.safe_message()))?;
        engine = engine.with_artifacts(store);
    }
    if let Some(policy) = source.policy {
        engine = engine.with_policy_file(policy);
    }
    Ok((engine, index, storage))
}

/// "Today" for a run: `--today`, else on the demo its own last day, else none (the
/// engine then reads the clock when the run starts).
pub(crate) fn today_for(given: Option<&String>, demo: bool) -> Option<String> {
    given
        .cloned()
        .or_else(|| demo.then(|| nl2sql_demo::TODAY.to_owned()))
}

/// A run's question, caller and source, stored beside its log for `runs replay`.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct RecordedAsk {
    pub(crate) question: String,
    pub(crate) roles: Vec<String>,
    pub(crate) datasource: Option<String>,
    pub(crate) today: Option<String>,
    /// The configuration file (absolute), when one was given.
    pub(crate) config: Option<PathBuf>,
    /// The ad-hoc URL, when one was given; neither means the demo.
    pub(crate) db: Option<String>,
}

/// `--data-dir`, else `$NL2SQL_DATA_DIR`, else `.nl2sql`.
pub(crate) fn data_dir(flag: Option<&PathBuf>) -> PathBuf {
    flag.cloned()
        .or_else(|| settings::process_env("NL2SQL_DATA_DIR").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(".nl2sql"))
}

/// The engine directory (snapshots, index, artifacts, run logs) of `source` under
/// `data_dir`.
pub(crate) fn engine_dir(data_dir: &Path, source: &Source) -> PathBuf {
    data_dir.join("engines").join(source_key(source))
}

/// The role `ask` uses on the demo when none is given.
pub(crate) const DEMO_ROLE: &str = "analyst";

/// The source given on the command line or in `$NL2SQL_CONFIG` (or `$DATASOURCE_CONFIG`),
/// else the demo (created under `data_dir/demo` when missing); true when it is the demo.
pub(crate) fn load_source(args: &SourceArgs, data_dir: &Path) -> anyhow::Result<(Source, bool)> {
    if args.db.is_some() || args.config_path()?.is_some() {
        return Ok((args.load()?, false));
    }
    let demo_dir = data_dir.join("demo");
    let config = demo_dir.join("nl2sql.toml");
    if !config.is_file() {
        eprintln!("creating the demo datasets in {} …", demo_dir.display());
        let layout = nl2sql_demo::create_demo(&demo_dir)
            .map_err(|e| anyhow::anyhow!("cannot create the demo: {e}"))?;
        for db in &layout.databases {
            let rows: u64 = db.tables.iter().map(|(_, n)| n).sum();
            eprintln!("  {} ({} tables, {rows} rows)", db.id, db.tables.len());
        }
    }
    let source = SourceArgs {
        config: Some(config),
        db: None,
    }
    .load()?;
    Ok((source, true))
}

/// A short stable key of the source's datasources (ids and redacted URLs).
fn source_key(source: &Source) -> String {
    let mut text = String::new();
    for id in source.registry.ids() {
        let url = source
            .registry
            .config(id)
            .map(|c| c.redacted_url())
            .unwrap_or_default();
        let _ = writeln!(text, "{id} {url}");
    }
    sha256_hex(text.as_bytes())[..16].to_owned()
}

pub(crate) fn print_result(
    result: &RunResult,
    format: AskFormat,
    explain: bool,
) -> anyhow::Result<()> {
    let columns = result.columns.clone().unwrap_or_default();
    let rows = result.rows.clone().unwrap_or_default();
    match format {
        AskFormat::Json => {
            let mut value = serde_json::to_value(result)?;
            if !explain && let Some(obj) = value.as_object_mut() {
                obj.remove("dag");
            }
            println!("{}", serde_json::to_string_pretty(&value)?);
        }
        AskFormat::Csv => {
            print!("{}", csv(&columns, &rows));
            if explain {
                eprint!("{}", explanation(result));
            }
        }
        AskFormat::Table | AskFormat::Markdown => {
            let mut out = String::new();
            if let Some(answer) = &result.answer {
                let _ = writeln!(out, "{}", answer.summary);
            }
            if !columns.is_empty() {
                out.push('\n');
                if format == AskFormat::Table {
                    out.push_str(&text_table(&columns, &rows));
                } else {
                    out.push_str(&markdown(&columns, &rows));
                }
            }
            if let Some(answer) = &result.answer {
                for w in &answer.warnings {
                    let _ = writeln!(out, "\nwarning: {w}");
                }
            }
            for e in &result.errors {
                let _ = writeln!(out, "\nerror [{}] {}: {}", e.code, e.node, e.message);
            }
            if explain {
                out.push('\n');
                out.push_str(&explanation(result));
            }
            print!("{out}");
        }
    }
    Ok(())
}

/// A cell as text: strings as they are, null as empty, the rest as JSON.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn text_table(columns: &[String], rows: &[Vec<Value>]) -> String {
    let cells: Vec<Vec<String>> = rows.iter().map(|r| r.iter().map(cell).collect()).collect();
    let mut widths: Vec<usize> = columns.iter().map(|c| c.chars().count()).collect();
    for row in &cells {
        for (i, c) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(c.chars().count());
            }
        }
    }
    let line = |values: &[String]| {
        let padded: Vec<String> = values
            .iter()
            .zip(&widths)
            .map(|(v, w)| format!("{v:<w$}"))
            .collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    let mut out = line(columns);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&line(&rule));
    for row in &cells {
        out.push_str(&line(row));
    }
    let _ = writeln!(
        out,
        "({} row{})",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" }
    );
    out
}

fn markdown(columns: &[String], rows: &[Vec<Value>]) -> String {
    let escape = |s: String| s.replace('|', "\\|").replace('\n', " ");
    let mut out = format!(
        "| {} |\n|{}|\n",
        columns
            .iter()
            .map(|c| escape(c.clone()))
            .collect::<Vec<_>>()
            .join(" | "),
        columns.iter().map(|_| "---").collect::<Vec<_>>().join("|")
    );
    for row in rows {
        let cells: Vec<String> = row.iter().map(|v| escape(cell(v))).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

/// RFC 4180: fields with a comma, quote, CR or LF are quoted, quotes doubled; CRLF ends
/// each record.
fn csv(columns: &[String], rows: &[Vec<Value>]) -> String {
    let field = |s: String| {
        if s.contains([',', '"', '\r', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s
        }
    };
    let mut out = String::new();
    let header: Vec<String> = columns.iter().map(|c| field(c.clone())).collect();
    let _ = write!(out, "{}\r\n", header.join(","));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|v| field(cell(v))).collect();
        let _ = write!(out, "{}\r\n", cells.join(","));
    }
    out
}

/// The `--explain` text: DAG, sub-queries (plan, SQL, attempts and their findings) and
/// timings.
fn explanation(result: &RunResult) -> String {
    let mut out = format!(
        "trace id: {}\nstatus: {:?}\n",
        result.trace_id, result.status
    );
    if let Some(dag) = &result.dag {
        let _ = writeln!(
            out,
            "\nDAG:\n{}",
            serde_json::to_string_pretty(dag).unwrap_or_default()
        );
    }
    for sq in &result.subqueries {
        let _ = writeln!(
            out,
            "\nsub-query {} on {} ({:?}, {} attempt{}): {}",
            sq.id,
            sq.datasource_id,
            sq.status,
            sq.attempts,
            if sq.attempts == 1 { "" } else { "s" },
            sq.intent
        );
        for attempt in &sq.attempt_log {
            let _ = writeln!(out, "  attempt {}:", attempt.attempt);
            if let Some(plan) = &attempt.plan {
                let _ = writeln!(
                    out,
                    "    plan: {}",
                    serde_json::to_string(plan).unwrap_or_default()
                );
                // How the planner read the question: each span and what it became.
                if let Some(reading) = plan.get("interpretation") {
                    let spans: Vec<String> = reading["spans"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|s| {
                            format!(
                                "'{}' → {}",
                                s["text"].as_str().unwrap_or_default(),
                                s["element"].as_str().unwrap_or_default()
                            )
                        })
                        .collect();
                    let confidence = reading["confidence"].as_f64().unwrap_or(0.0);
                    let _ = writeln!(
                        out,
                        "    interpretation (confidence {confidence:.2}): {}",
                        spans.join("; ")
                    );
                    // The learned traits that weighed most, either way.
                    let mut signals: Vec<(String, f64)> = reading["signals"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|s| {
                            Some((s["name"].as_str()?.to_owned(), s["weight"].as_f64()?))
                        })
                        .filter(|(_, w)| *w != 0.0)
                        .collect();
                    signals.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()).then(a.0.cmp(&b.0)));
                    if !signals.is_empty() {
                        let shown: Vec<String> = signals
                            .iter()
                            .take(6)
                            .map(|(name, w)| format!("{name} {w:+.2}"))
                            .collect();
                        let _ = writeln!(out, "    confidence weighed: {}", shown.join(", "));
                    }
                }
            }
            if let Some(sql) = &attempt.sql {
                let _ = writeln!(out, "    sql: {sql}");
            }
            for e in &attempt.errors {
                let _ = writeln!(out, "    finding [{}] {}: {}", e.code, e.node, e.message);
            }
            if let Some(feedback) = &attempt.feedback {
                let _ = writeln!(out, "    feedback: {}", feedback.replace('\n', " "));
            }
        }
    }
    if !result.warnings.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in &result.warnings {
            let _ = writeln!(out, "  {w}");
        }
    }
    out.push_str("\ntimings (ms):\n");
    for (stage, ms) in &result.timings {
        let _ = writeln!(out, "  {stage}: {ms}");
    }
    out
}
