//! `nl2sql demo`, `nl2sql index` and `nl2sql runs show`: create the demo datasets, snapshot
//! and index datasources, and print a run's log.

use std::io::IsTerminal as _;
use std::path::PathBuf;

use anyhow::{Context as _, bail};
use clap::Subcommand;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use nl2sql_orchestrator::{
    AskOptions, IndexProgress, IndexStep, PlannerChoice, read_run_log, write_replay_cassette,
};
use nl2sql_state::UserContext;
use serde_json::json;

use crate::ask::{
    AskFormat, RecordedAsk, data_dir, engine_dir, exit_code, load_source, open_engine,
    open_engine_parts, print_result,
};
use crate::source::SourceArgs;
use crate::validate_sql::Format;

/// Arguments of `demo`.
#[derive(Debug, clap::Args)]
pub(crate) struct DemoArgs {
    /// Where to create it (default: `<data dir>/demo`); an existing demo is replaced.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The data directory (default: `$NL2SQL_DATA_DIR`, else `.nl2sql`).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
}

/// Creates the demo datasets; prints what it wrote.
pub(crate) fn demo(args: &DemoArgs) -> anyhow::Result<u8> {
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| data_dir(args.data_dir.as_ref()).join("demo"));
    let layout = nl2sql_demo::create_demo(&dir)
        .map_err(|e| anyhow::anyhow!("cannot create the demo: {e}"))?;
    println!("demo created in {}", layout.dir.display());
    for db in &layout.databases {
        println!(
            "  {} ({}): {}",
            db.id,
            db.engine.as_str(),
            db.path.display()
        );
        for (table, rows) in &db.tables {
            println!("    {table}: {rows} rows");
        }
    }
    println!("config: {}", layout.config.display());
    println!("policy: {}", layout.policy.display());
    Ok(0)
}

/// Arguments of `index`.
#[derive(Debug, clap::Args)]
pub(crate) struct IndexArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// The data directory (default: `$NL2SQL_DATA_DIR`, else `.nl2sql`).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

/// Snapshots and indexes every datasource (the demo when none is given), at most
/// `SANDBOX_INDEX_WORKERS` (default 2) at once; exit 3 when one could not be indexed.
pub(crate) fn index(args: &IndexArgs) -> anyhow::Result<u8> {
    let data_dir = data_dir(args.data_dir.as_ref());
    let (source, _) = load_source(&args.source, &data_dir)?;
    let dir = engine_dir(&data_dir, &source);
    let planner = nl2sql_orchestrator::build_planner(&PlannerChoice::Offline, None)?;
    let (engine, _, _) = open_engine_parts(source, planner, &dir, |_| {})?;
    let total = engine.registry().ids().len();
    let rt = crate::source::runtime()?;
    let mut progress = IndexProgressView::new(total);
    let report = rt.block_on(engine.index_all_with_progress(&mut |p| progress.show(&p)));
    progress.finish();
    match args.format {
        Format::Json => {
            let failed: Vec<_> = report
                .failed
                .iter()
                .map(|(id, e)| json!({"datasource_id": id, "code": e.code, "message": e.safe_message()}))
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(
                    &json!({"indexed": report.indexed, "failed": failed})
                )?
            );
        }
        Format::Text => {
            for (i, stats) in report.indexed.iter().enumerate() {
                let chunks: usize = stats.chunks.values().sum();
                println!(
                    "[{}/{total}] {}: schema version {}, {chunks} chunks",
                    i + 1,
                    stats.datasource_id,
                    stats.schema_version
                );
            }
            for (id, e) in &report.failed {
                println!("failed {id}: [{}] {}", e.code, e.safe_message());
            }
        }
    }
    Ok(if report.failed.is_empty() { 0 } else { 3 })
}

/// Arguments of `runs`.
#[derive(Debug, clap::Args)]
pub(crate) struct RunsArgs {
    #[command(subcommand)]
    command: RunsSub,
}

#[derive(Debug, Subcommand)]
enum RunsSub {
    /// Asks a recorded run's question again with the planner answering from the run's log
    /// (no model is called), over the same datasources, and prints the result.
    Replay {
        /// The run's trace id.
        #[arg(value_name = "TRACE_ID")]
        trace_id: String,
        /// The data directory (default: `$NL2SQL_DATA_DIR`, else `.nl2sql`).
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        format: AskFormat,
    },
    /// Prints a run's log: every node with its timing, outputs and errors.
    Show {
        /// The run's trace id (printed by `ask --explain` and in `--format json`).
        #[arg(value_name = "TRACE_ID")]
        trace_id: String,
        /// The data directory (default: `$NL2SQL_DATA_DIR`, else `.nl2sql`).
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
        /// Output format (`json`: one log entry per line, as stored).
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
}

/// Runs `runs …`.
pub(crate) fn runs(args: &RunsArgs) -> anyhow::Result<u8> {
    match &args.command {
        RunsSub::Show {
            trace_id,
            data_dir,
            format,
        } => show(trace_id, data_dir.as_ref(), *format),
        RunsSub::Replay {
            trace_id,
            data_dir,
            format,
        } => replay(trace_id, data_dir.as_ref(), *format),
    }
}

/// The log file of run `trace_id` under the data directory.
fn find_log(trace_id: &str, flag: Option<&PathBuf>) -> anyhow::Result<PathBuf> {
    if nl2sql_state::TraceId::parse(trace_id).is_err() {
        bail!("'{trace_id}' is not a trace id (a UUID)");
    }
    let engines = data_dir(flag).join("engines");
    let found = std::fs::read_dir(&engines)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("runs").join(format!("{trace_id}.jsonl")))
        .find(|p| p.is_file());
    match found {
        Some(path) => Ok(path),
        None => bail!("no run {trace_id} under {}", engines.display()),
    }
}

fn replay(trace_id: &str, flag: Option<&PathBuf>, format: AskFormat) -> anyhow::Result<u8> {
    let log = find_log(trace_id, flag)?;
    let entries = read_run_log(&log).map_err(|e| anyhow::anyhow!("{e}"))?;
    let ask_file = log.with_file_name(format!("{trace_id}.ask.json"));
    let text = std::fs::read_to_string(&ask_file)
        .with_context(|| format!("cannot read {}", ask_file.display()))?;
    let recorded: RecordedAsk =
        serde_json::from_str(&text).with_context(|| format!("invalid {}", ask_file.display()))?;
    let cassette = log.with_file_name(format!("{trace_id}.replay.jsonl"));
    write_replay_cassette(&entries, &cassette).map_err(|e| anyhow::anyhow!("{e}"))?;
    let data_dir = data_dir(flag);
    let source_args = SourceArgs {
        config: recorded.config.clone(),
        db: recorded.db.clone(),
    };
    let (source, _) = load_source(&source_args, &data_dir)?;
    let dir = engine_dir(&data_dir, &source);
    let planner = nl2sql_orchestrator::build_planner(&PlannerChoice::Replay(cassette), None)?;
    let engine = open_engine(source, planner, &dir, |options| {
        options.today.clone_from(&recorded.today);
    })?;
    let rt = crate::source::runtime()?;
    let opts = AskOptions {
        user: UserContext {
            roles: recorded.roles.clone(),
            ..UserContext::default()
        },
        datasource: recorded.datasource.clone(),
        ..AskOptions::default()
    };
    let result = rt.block_on(engine.ask(&recorded.question, opts));
    print_result(&result, format, false)?;
    Ok(exit_code(&result))
}

fn show(trace_id: &str, flag: Option<&PathBuf>, format: Format) -> anyhow::Result<u8> {
    let path = find_log(trace_id, flag)?;
    let entries = read_run_log(&path).map_err(|e| anyhow::anyhow!("{e}"))?;
    for entry in &entries {
        match format {
            Format::Json => println!("{}", serde_json::to_string(entry)?),
            Format::Text => {
                let scan = entry
                    .subgraph_id
                    .as_deref()
                    .map(|s| format!(" [{s}]"))
                    .unwrap_or_default();
                let attempt = entry
                    .attempt
                    .map(|a| format!(" attempt {a}"))
                    .unwrap_or_default();
                println!(
                    "{:>3} {}{scan}{attempt} ({} ms)",
                    entry.seq, entry.node, entry.duration_ms
                );
                for e in &entry.errors {
                    println!("      [{}] {}", e.code, e.message);
                }
            }
        }
    }
    Ok(0)
}

/// Indexing progress on standard error: a progress bar on a terminal, else one line per
/// step (so logs and tests see the same events).
struct IndexProgressView {
    bar: Option<ProgressBar>,
}

impl IndexProgressView {
    fn new(total: usize) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(
                Some(u64::try_from(total).unwrap_or(u64::MAX)),
                ProgressDrawTarget::stderr(),
            );
            if let Ok(style) =
                ProgressStyle::with_template("{bar:30} {pos}/{len} datasources  {msg}")
            {
                bar.set_style(style);
            }
            bar
        });
        IndexProgressView { bar }
    }

    fn show(&mut self, p: &IndexProgress) {
        let line = match p {
            IndexProgress::Step {
                datasource_id,
                position,
                total,
                step,
            } => {
                let step = match step {
                    IndexStep::Snapshot => "reading the schema and statistics",
                    IndexStep::Register => "storing the snapshot",
                    IndexStep::Chunk => "building documents",
                    IndexStep::Refresh => "updating the index",
                };
                format!("[{position}/{total}] {datasource_id}: {step}")
            }
            IndexProgress::Done {
                position,
                total,
                stats,
            } => format!(
                "[{position}/{total}] {}: done (schema version {})",
                stats.datasource_id, stats.schema_version
            ),
            IndexProgress::Failed {
                datasource_id,
                position,
                total,
                message,
            } => format!("[{position}/{total}] {datasource_id}: failed: {message}"),
        };
        match &self.bar {
            Some(bar) => {
                if matches!(p, IndexProgress::Done { .. } | IndexProgress::Failed { .. }) {
                    bar.inc(1);
                }
                bar.set_message(line);
            }
            None => eprintln!("{line}"),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
