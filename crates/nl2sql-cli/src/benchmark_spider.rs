//! `nl2sql benchmark --spider dev.json --db-dir database/`: a Spider-format dataset through
//! the whole engine (`nl2sql_orchestrator::spider`), printed as a summary, per database and
//! per failure class, or as the JSON report (`--format json`, `--export-path x.json`).

use std::fmt::Write as _;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use nl2sql_orchestrator::spider::{
    SpiderCounts, SpiderOptions, SpiderOutcome, SpiderReport, load_spider, run_spider,
};
use nl2sql_orchestrator::{EngineOptions, Planner, PlannerChoice, build_planner};
use nl2sql_planner_llm::LlmPlanner;

use crate::ask::{PlannerKind, data_dir};
use crate::benchmark::{Args, BenchFormat, BenchPlanner, planner_configs};

/// Runs the command; returns the exit code.
pub(crate) fn run(args: &Args) -> anyhow::Result<u8> {
    let (Some(dataset), Some(db_dir)) = (&args.spider, &args.db_dir) else {
        bail!("--spider needs --db-dir");
    };
    let cases = load_spider(dataset).map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let mut only: Vec<usize> = (0..cases.len())
        .filter(|&i| args.db_ids.is_empty() || args.db_ids.contains(&cases[i].db_id))
        .collect();
    if let Some(limit) = args.limit {
        only.truncate(limit);
    }
    for id in &args.db_ids {
        if !cases.iter().any(|c| &c.db_id == id) {
            bail!(
                "--db-id {id}: no question of {} is about it",
                dataset.display()
            );
        }
    }
    let configs = planner_configs(args)?;
    let Some((label, choice)) = configs.into_iter().next() else {
        bail!("no planner to benchmark");
    };
    let (label, choice) =
        match choice {
            BenchPlanner::Choice(
                PlannerChoice::Offline | PlannerChoice::OfflineMinConfidence(_),
            ) if args.lenient => (
                "offline (lenient)".to_owned(),
                BenchPlanner::Choice(PlannerChoice::OfflineLenient),
            ),
            other => (label, other),
        };
    let planner: Arc<dyn Planner> = match choice {
        BenchPlanner::Choice(choice) => build_planner(&choice, None)?,
        BenchPlanner::Matrix(config) => Arc::new(
            LlmPlanner::from_config(&config)
                .with_context(|| format!("benchmark configuration '{label}'"))?,
        ),
    };
    let options = SpiderOptions {
        data_dir: data_dir(args.data_dir.as_ref()).join("spider"),
        engine: EngineOptions {
            today: args.today.clone(),
            // The offline planner reads the same question the same way every time: a
            // retry through the refiner cannot change its answer, only delay it.
            max_retries: if args.planners.iter().all(|p| *p == PlannerKind::Offline) {
                0
            } else {
                EngineOptions::default().max_retries
            },
            ..EngineOptions::default()
        },
        only: Some(only.clone()),
        drivers: nl2sql_drivers::compiled(),
    };
    eprintln!(
        "benchmarking planner {label} on {} question{} of {}",
        only.len(),
        if only.len() == 1 { "" } else { "s" },
        dataset.display()
    );
    let rt = crate::source::runtime()?;
    let mut done = 0usize;
    let report = rt
        .block_on(run_spider(&cases, db_dir, planner, &options, |_| {
            done += 1;
            if done.is_multiple_of(100) {
                eprintln!("… {done} of {}", only.len());
            }
        }))
        .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    if let Some(path) = &args.export_path {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, json).with_context(|| format!("cannot write {}", path.display()))?;
    }
    rt.shutdown_background();
    match args.format {
        BenchFormat::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        BenchFormat::Table => print!("{}", render(&report, &label)),
    }
    Ok(0)
}

fn line(name: &str, c: &SpiderCounts) -> String {
    format!(
        "{name:<28} {:>5} {:>6.1}% {:>6.1}% {:>6.1}%  ({} correct, {} answered)",
        c.scored,
        c.execution_accuracy(),
        c.answered_rate(),
        c.precision(),
        c.correct,
        c.answered
    )
}

/// The summary for people.
fn render(report: &SpiderReport, label: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "planner {label}");
    let _ = writeln!(
        out,
        "{:<28} {:>5} {:>7} {:>7} {:>7}",
        "database", "n", "EX", "answer", "prec."
    );
    for (db, counts) in &report.per_database {
        let _ = writeln!(out, "{}", line(db, counts));
    }
    let _ = writeln!(out, "{}", line("TOTAL", &report.total));
    if report.total.gold_failed > 0 {
        let _ = writeln!(
            out,
            "{} question(s) not scored: their gold query did not run",
            report.total.gold_failed
        );
    }
    let _ = writeln!(out, "\nfailure classes:");
    let mut classes: Vec<(&String, &usize)> = report.failure_classes.iter().collect();
    classes.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (class, n) in classes {
        let _ = writeln!(out, "  {n:>5}  {class}");
    }
    let r = &report.retrieval;
    let _ = writeln!(
        out,
        "\nschema context: every gold table in {} of {} contexts; {} of {} gold tables ({:.1}%); {:.1} tables per context",
        r.complete,
        r.questions,
        r.retrieved_gold_tables,
        r.gold_tables,
        if r.gold_tables == 0 {
            0.0
        } else {
            100.0 * r.retrieved_gold_tables as f64 / r.gold_tables as f64
        },
        r.mean_context_tables
    );
    let _ = writeln!(
        out,
        "every gold column in {} of {} contexts; {} of {} gold columns ({:.1}%); {:.1} columns per context",
        r.complete_columns,
        r.questions,
        r.retrieved_gold_columns,
        r.gold_columns,
        if r.gold_columns == 0 {
            0.0
        } else {
            100.0 * r.retrieved_gold_columns as f64 / r.gold_columns as f64
        },
        r.mean_context_columns
    );
    let _ = writeln!(
        out,
        "\nlatency per question: p50 {:.1} ms, p90 {:.1} ms (planner: p50 {} ms, p90 {} ms)",
        report.latency_ms.0, report.latency_ms.1, report.planning_ms.0, report.planning_ms.1
    );
    let wrong = report
        .results
        .iter()
        .filter(|r| matches!(r.outcome, SpiderOutcome::Wrong { .. }))
        .count();
    let _ = writeln!(
        out,
        "wrong answers: {wrong} (see --format json for each question, its SQL and why)"
    );
    out
}
