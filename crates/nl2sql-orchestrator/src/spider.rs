//! Spider-format benchmarks (`nl2sql benchmark --spider dev.json --db-dir database/`): every
//! question asked through the whole engine, as a user would, over the dataset's own SQLite
//! databases, and scored the way the field scores it.
//!
//! - **execution accuracy**: the answer's table equals the gold query's table by
//!   [`nl2sql_adapter::compare`] (same rows, in order only when the gold query orders
//!   them at its top level, extra columns tolerated), over every question whose gold query
//!   runs;
//! - **answered**: the engine returned a table (success); a refusal is not an answer;
//! - **precision**: correct answers over answered questions: how often a printed answer is
//!   right;
//! - per database, per failure class (a wrong answer by why the tables differ, a refusal
//!   by its error code), and the latency of each question (the whole `ask`, and the
//!   planner's share).
//!
//! The dataset is Spider's JSON: an array of `{db_id, question, query}`. A database is
//! `<db-dir>/<db_id>/<db_id>.sqlite` (Spider's layout) or `<db-dir>/<db_id>.sqlite`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use nl2sql_adapter::compare::{Table, compare, json_val, table_of};
use nl2sql_adapter::{ResultError, ResultErrorCode, ResultFrame};
use nl2sql_planner::Planner;
use nl2sql_state::{Dialect, ErrorCode, Node, PipelineError, Severity};
use nl2sql_validate::{GuardContext, SqlGuard};
use serde::{Deserialize, Serialize};
use sqlparser::ast::Statement;
use sqlparser::parser::Parser;

use crate::datasources::DatasourceRegistry;
use crate::engine::{AskOptions, Engine, EngineOptions, RunResult};

/// One question of a Spider-format dataset.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct SpiderCase {
    /// The database.
    pub db_id: String,
    /// The question.
    pub question: String,
    /// The gold SQL.
    pub query: String,
}

/// Reads a Spider-format dataset (a JSON array of `{db_id, question, query}`).
pub fn load_spider(path: &Path) -> Result<Vec<SpiderCase>, PipelineError> {
    let bad =
        |m: String| PipelineError::new("benchmark", ErrorCode::InvalidState, Severity::Error, m);
    let text = std::fs::read_to_string(path)
        .map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| {
        bad(format!(
            "{} is not a Spider dataset (an array of {{db_id, question, query}}): {e}",
            path.display()
        ))
    })
}

/// The SQLite file of `db_id` under `db_dir`, in Spider's layout or flat.
pub fn spider_database(db_dir: &Path, db_id: &str) -> Option<PathBuf> {
    [
        db_dir.join(db_id).join(format!("{db_id}.sqlite")),
        db_dir.join(format!("{db_id}.sqlite")),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// How one question went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SpiderOutcome {
    /// Answered, and the table equals the gold table.
    Correct,
    /// Answered with another table.
    Wrong {
        /// The failure class: `row_count`, `values` or `rows`.
        class: String,
        /// What differs.
        detail: String,
    },
    /// Not answered: the run's first error.
    Refused {
        /// Its code.
        code: String,
        /// Its message.
        message: String,
    },
    /// The gold query did not run (the question is not scored).
    GoldFailed {
        /// Why.
        message: String,
    },
}

/// One question's result.
#[derive(Debug, Clone, Serialize)]
pub struct SpiderResult {
    /// Position in the dataset (0-based).
    pub index: usize,
    /// The database.
    pub db_id: String,
    /// The question.
    pub question: String,
    /// The gold SQL.
    pub gold_sql: String,
    /// The SQL of each sub-query the engine ran (its last attempt).
    pub sql: Vec<String>,
    /// How it went.
    #[serde(flatten)]
    pub outcome: SpiderOutcome,
    /// The whole `ask`, in milliseconds.
    pub latency_ms: f64,
    /// The planner's steps (decomposition and planning), in milliseconds.
    pub planning_ms: u64,
    /// The words of the question the plans left unplaced (a lenient planner answers
    /// anyway; a strict one refuses).
    pub unplaced: Vec<String>,
    /// The words the plans placed only as learned fillers (what `cargo xtask
    /// learn-fillers` relearns from, with `unplaced`).
    pub fillers: Vec<String>,
    /// The schema context the planner got, against the tables the gold query reads:
    /// `None` when the run reached no schema retrieval (refused before).
    pub retrieval: Option<Retrieval>,
    /// The lowest confidence of the plans, when they carry one.
    pub confidence: Option<f64>,
    /// The traits the plans' confidence was computed from (what `cargo xtask
    /// learn-confidence` learns from), each once, sorted.
    pub signals: Vec<String>,
}

/// The tables a run's schema retrieval gave the planner, against the gold query's.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Retrieval {
    /// The retrieved tables (lower case, every scan's).
    pub tables: Vec<String>,
    /// The tables the gold query reads (lower case).
    pub gold_tables: Vec<String>,
    /// Gold tables the context lacked.
    pub missing: Vec<String>,
    /// How many columns the context held (every table's).
    pub columns: usize,
    /// The columns the gold query reads, `table.column` (lower case).
    pub gold_columns: Vec<String>,
    /// Gold columns the context lacked (a column of a missing table is missing too).
    pub missing_columns: Vec<String>,
}

/// Retrieval recall over the questions that reached schema retrieval.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct RetrievalRecall {
    /// Questions whose run retrieved a schema context.
    pub questions: usize,
    /// Of those, the ones whose context held every gold table.
    pub complete: usize,
    /// Gold tables over all those questions, and how many the contexts held.
    pub gold_tables: usize,
    /// Of `gold_tables`, retrieved.
    pub retrieved_gold_tables: usize,
    /// Mean tables per context.
    pub mean_context_tables: f64,
    /// Of `questions`, the ones whose context held every gold column.
    pub complete_columns: usize,
    /// Gold columns over all those questions.
    pub gold_columns: usize,
    /// Of `gold_columns`, retrieved.
    pub retrieved_gold_columns: usize,
    /// Mean columns per context.
    pub mean_context_columns: f64,
}

/// Counts over a set of questions.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct SpiderCounts {
    /// Questions whose gold query ran.
    pub scored: usize,
    /// Of those, answered with a table.
    pub answered: usize,
    /// Of those, correct.
    pub correct: usize,
    /// Questions whose gold query did not run.
    pub gold_failed: usize,
}

impl SpiderCounts {
    fn add(&mut self, outcome: &SpiderOutcome) {
        match outcome {
            SpiderOutcome::GoldFailed { .. } => self.gold_failed += 1,
            SpiderOutcome::Correct => {
                self.scored += 1;
                self.answered += 1;
                self.correct += 1;
            }
            SpiderOutcome::Wrong { .. } => {
                self.scored += 1;
                self.answered += 1;
            }
            SpiderOutcome::Refused { .. } => self.scored += 1,
        }
    }

    /// Correct over scored, in percent.
    pub fn execution_accuracy(&self) -> f64 {
        percent(self.correct, self.scored)
    }

    /// Answered over scored, in percent.
    pub fn answered_rate(&self) -> f64 {
        percent(self.answered, self.scored)
    }

    /// Correct over answered, in percent.
    pub fn precision(&self) -> f64 {
        percent(self.correct, self.answered)
    }
}

fn percent(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

/// The whole benchmark.
#[derive(Debug, Clone, Serialize)]
pub struct SpiderReport {
    /// Over every question.
    pub total: SpiderCounts,
    /// Per database.
    pub per_database: BTreeMap<String, SpiderCounts>,
    /// Wrong answers by class and refusals by code: how many of each.
    pub failure_classes: BTreeMap<String, usize>,
    /// Whether the schema context held the gold query's tables.
    pub retrieval: RetrievalRecall,
    /// p50 and p90 of the whole `ask`, in milliseconds.
    pub latency_ms: (f64, f64),
    /// p50 and p90 of the planner's steps, in milliseconds.
    pub planning_ms: (f64, f64),
    /// Every question.
    pub results: Vec<SpiderResult>,
}

/// How the benchmark runs.
#[derive(Debug, Clone)]
pub struct SpiderOptions {
    /// Snapshots, index, artifacts and run logs, one sub-directory per database.
    pub data_dir: PathBuf,
    /// The engine's options (its `today`, timeouts).
    pub engine: EngineOptions,
    /// Only the questions at these positions, when given.
    pub only: Option<Vec<usize>>,
    /// What opens the SQLite databases (a set with a `sqlite` driver).
    pub drivers: nl2sql_adapter::Drivers,
}

/// Runs `cases` over the databases of `db_dir`, calling `progress` after each question.
/// Fails only when a database is missing or cannot be indexed.
pub async fn run_spider(
    cases: &[SpiderCase],
    db_dir: &Path,
    planner: Arc<dyn Planner>,
    options: &SpiderOptions,
    mut progress: impl FnMut(&SpiderResult),
) -> Result<SpiderReport, PipelineError> {
    let mut by_db: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, case) in cases.iter().enumerate() {
        if options.only.as_ref().is_none_or(|o| o.contains(&i)) {
            by_db.entry(case.db_id.as_str()).or_default().push(i);
        }
    }
    let mut results = Vec::new();
    for (db_id, indices) in by_db {
        let engine = open_engine(db_dir, db_id, Arc::clone(&planner), options).await?;
        let adapter = engine
            .registry()
            .adapter(db_id)
            .await
            .map_err(|e| e.to_pipeline_error("benchmark"))?;
        // Gold queries go through the guard with the schema: it knows which double-quoted
        // names SQLite would read as strings (Spider's gold queries rely on that).
        let contract = adapter
            .schema_contract()
            .await
            .map_err(|e| e.to_pipeline_error("benchmark"))?;
        let guard = SqlGuard::new(GuardContext::new(db_id, adapter.dialect(), &contract));
        for i in indices {
            let case = &cases[i];
            let mut checked = guard.check(&case.query);
            // The tables the gold query reads: what the planner's context must hold.
            let gold_tables: Vec<String> = checked
                .reads
                .iter()
                .map(|r| r.table.to_lowercase())
                .collect();
            let gold_columns: Vec<String> = checked
                .reads
                .iter()
                .flat_map(|r| {
                    r.columns
                        .iter()
                        .map(|c| format!("{}.{}", r.table, c).to_lowercase())
                })
                .collect::<std::collections::BTreeSet<String>>()
                .into_iter()
                .collect();
            let gold = match checked.guarded.take() {
                Some(sql) => adapter.run_sql(&sql, adapter.limits()).await,
                None => ResultFrame::failed(
                    ResultError::new(
                        ResultErrorCode::SecurityViolation,
                        format!("the guard refused the gold query: {}", checked.to_text()),
                    ),
                    0.0,
                ),
            };
            let started = Instant::now();
            let run = engine.ask(&case.question, AskOptions::default()).await;
            let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
            let outcome = if gold.success {
                score(&table_of(&gold), &run, ordered(&case.query))
            } else {
                SpiderOutcome::GoldFailed {
                    message: gold.error.map(|e| e.safe_message).unwrap_or_default(),
                }
            };
            let interpretations: Vec<&serde_json::Value> = run
                .subqueries
                .iter()
                .filter_map(|s| s.plan.as_ref())
                .filter_map(|p| p.get("interpretation"))
                .collect();
            let unplaced = spans_where(&interpretations, |e| e == "not placed");
            let fillers = spans_where(&interpretations, |e| e.starts_with("nothing ("));
            let confidence = interpretations
                .iter()
                .filter_map(|i| i.get("confidence").and_then(serde_json::Value::as_f64))
                .reduce(f64::min);
            let signals: Vec<String> = interpretations
                .iter()
                .filter_map(|i| i.get("signals").and_then(serde_json::Value::as_array))
                .flatten()
                .filter_map(|s| s.get("name").and_then(serde_json::Value::as_str))
                .map(str::to_owned)
                .collect::<std::collections::BTreeSet<String>>()
                .into_iter()
                .collect();
            let retrieved = retrieved_tables(&options.data_dir.join(db_id), &run.trace_id);
            let retrieval = retrieved.map(|(tables, columns)| Retrieval {
                missing: gold_tables
                    .iter()
                    .filter(|g| !tables.contains(g))
                    .cloned()
                    .collect(),
                missing_columns: gold_columns
                    .iter()
                    .filter(|g| !columns.contains(g))
                    .cloned()
                    .collect(),
                gold_tables: gold_tables.clone(),
                gold_columns: gold_columns.clone(),
                columns: columns.len(),
                tables,
            });
            let result = SpiderResult {
                retrieval,
                unplaced,
                fillers,
                confidence,
                signals,
                index: i,
                db_id: db_id.to_owned(),
                question: case.question.clone(),
                gold_sql: case.query.clone(),
                sql: run
                    .subqueries
                    .iter()
                    .filter_map(|s| s.sql.clone())
                    .collect(),
                outcome,
                latency_ms,
                planning_ms: run
                    .timings
                    .iter()
                    .filter(|(k, _)| k.contains("planner") || k.contains("decomposer"))
                    .map(|(_, v)| *v)
                    .sum(),
            };
            progress(&result);
            results.push(result);
        }
    }
    Ok(report(results))
}

/// An engine over one database, indexed.
async fn open_engine(
    db_dir: &Path,
    db_id: &str,
    planner: Arc<dyn Planner>,
    options: &SpiderOptions,
) -> Result<Engine, PipelineError> {
    let fail =
        |m: String| PipelineError::new("benchmark", ErrorCode::InvalidState, Severity::Error, m);
    let path = spider_database(db_dir, db_id).ok_or_else(|| {
        fail(format!(
            "no database '{db_id}' under {} (expected {db_id}/{db_id}.sqlite or {db_id}.sqlite)",
            db_dir.display()
        ))
    })?;
    let path = path
        .canonicalize()
        .map_err(|e| fail(format!("{}: {e}", path.display())))?;
    let mut config =
        nl2sql_state::DatasourceConfig::ad_hoc(&format!("sqlite://{}", path.display()))
            .map_err(|e| fail(e.to_string()))?;
    config.id = db_id.to_owned();
    let mut registry = DatasourceRegistry::empty().with_drivers(options.drivers.clone());
    registry.insert(config);
    let engine = Engine::open(registry, planner, &options.data_dir.join(db_id))?
        .with_options(options.engine.clone());
    let indexed = engine.index_all().await;
    if let Some((_, e)) = indexed.failed.into_iter().next() {
        return Err(e);
    }
    Ok(engine)
}

/// Whether the gold query orders its result at the top level.
fn ordered(sql: &str) -> bool {
    let dialect = nl2sql_validate::parser_dialect(Dialect::Sqlite);
    match Parser::parse_sql(dialect.as_ref(), sql) {
        Ok(statements) => matches!(
            statements.first(),
            Some(Statement::Query(q)) if q.order_by.is_some()
        ),
        Err(_) => false,
    }
}

/// The outcome of a run against the gold table.
fn score(gold: &Table, run: &RunResult, ordered: bool) -> SpiderOutcome {
    let (true, Some(columns), Some(rows)) = (run.success, &run.columns, &run.rows) else {
        let (code, message) = run.errors.first().map_or_else(
            || {
                (
                    "NO_TABLE".to_owned(),
                    "the run returned no table".to_owned(),
                )
            },
            |e| (e.code.as_str().to_owned(), e.message.clone()),
        );
        return SpiderOutcome::Refused { code, message };
    };
    let got = Table {
        columns: columns.clone(),
        rows: rows
            .iter()
            .map(|r| r.iter().map(json_val).collect())
            .collect(),
    };
    match compare(gold, &got, ordered) {
        Ok(()) => SpiderOutcome::Correct,
        Err(detail) => {
            let class = if detail.contains(" rows, expected ") {
                "row_count"
            } else if detail.contains("columns [") {
                "columns"
            } else if detail.starts_with("no result column") {
                "values"
            } else {
                "rows"
            };
            SpiderOutcome::Wrong {
                class: class.to_owned(),
                detail,
            }
        }
    }
}

fn report(results: Vec<SpiderResult>) -> SpiderReport {
    let mut total = SpiderCounts::default();
    let mut per_database: BTreeMap<String, SpiderCounts> = BTreeMap::new();
    let mut failure_classes: BTreeMap<String, usize> = BTreeMap::new();
    for r in &results {
        total.add(&r.outcome);
        per_database
            .entry(r.db_id.clone())
            .or_default()
            .add(&r.outcome);
        let class = match &r.outcome {
            SpiderOutcome::Wrong { class, .. } => Some(format!("wrong: {class}")),
            SpiderOutcome::Refused { code, .. } => Some(format!("refused: {code}")),
            _ => None,
        };
        if let Some(class) = class {
            *failure_classes.entry(class).or_default() += 1;
        }
    }
    let quantiles = |mut v: Vec<f64>| -> (f64, f64) {
        v.sort_by(f64::total_cmp);
        let at = |q: f64| {
            if v.is_empty() {
                0.0
            } else {
                let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
                v[rank - 1]
            }
        };
        (at(0.5), at(0.9))
    };
    SpiderReport {
        total,
        per_database,
        failure_classes,
        retrieval: recall(&results),
        latency_ms: quantiles(results.iter().map(|r| r.latency_ms).collect()),
        planning_ms: quantiles(results.iter().map(|r| r.planning_ms as f64).collect()),
        results,
    }
}

/// The texts of the interpretation spans whose element satisfies `keep`.
fn spans_where(interpretations: &[&serde_json::Value], keep: impl Fn(&str) -> bool) -> Vec<String> {
    interpretations
        .iter()
        .filter_map(|i| i.get("spans").and_then(serde_json::Value::as_array))
        .flatten()
        .filter(|s| {
            s.get("element")
                .and_then(serde_json::Value::as_str)
                .is_some_and(&keep)
        })
        .filter_map(|s| s.get("text").and_then(serde_json::Value::as_str))
        .map(str::to_owned)
        .collect()
}

/// The tables the schema retrievals of run `trace_id` gave the planner (lower case, bare
/// names) and their columns (`table.column`, lower case, sorted), from its run log under
/// `data_dir`; `None` when it has no retrieval.
fn retrieved_tables(data_dir: &Path, trace_id: &str) -> Option<(Vec<String>, Vec<String>)> {
    let entries =
        crate::engine::read_run_log(&crate::engine::run_log_path(data_dir, trace_id)).ok()?;
    let bare = |name: &str| name.rsplit('.').next().unwrap_or(name).to_lowercase();
    let mut tables: Vec<String> = Vec::new();
    let mut columns: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let mut any = false;
    for e in entries.iter().filter(|e| e.node == Node::SchemaRetriever) {
        any = true;
        for t in e.delta["tables"].as_array().into_iter().flatten() {
            if let Some(name) = t.as_str()
                && !tables.contains(&bare(name))
            {
                tables.push(bare(name));
            }
        }
        for (table, cols) in e.delta["columns"].as_object().into_iter().flatten() {
            for c in cols
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c.as_str())
            {
                columns.insert(format!("{}.{}", bare(table), c.to_lowercase()));
            }
        }
    }
    any.then(|| (tables, columns.into_iter().collect()))
}

/// Retrieval recall over `results`.
fn recall(results: &[SpiderResult]) -> RetrievalRecall {
    let reached: Vec<&Retrieval> = results
        .iter()
        .filter_map(|r| r.retrieval.as_ref())
        .collect();
    let gold_tables: usize = reached.iter().map(|r| r.gold_tables.len()).sum();
    let missing: usize = reached.iter().map(|r| r.missing.len()).sum();
    let context: usize = reached.iter().map(|r| r.tables.len()).sum();
    let gold_columns: usize = reached.iter().map(|r| r.gold_columns.len()).sum();
    let missing_columns: usize = reached.iter().map(|r| r.missing_columns.len()).sum();
    let context_columns: usize = reached.iter().map(|r| r.columns).sum();
    let mean = |n: usize| {
        if reached.is_empty() {
            0.0
        } else {
            n as f64 / reached.len() as f64
        }
    };
    RetrievalRecall {
        questions: reached.len(),
        complete: reached.iter().filter(|r| r.missing.is_empty()).count(),
        gold_tables,
        retrieved_gold_tables: gold_tables - missing,
        mean_context_tables: mean(context),
        complete_columns: reached
            .iter()
            .filter(|r| r.missing_columns.is_empty())
            .count(),
        gold_columns,
        retrieved_gold_columns: gold_columns - missing_columns,
        mean_context_columns: mean(context_columns),
    }
}
