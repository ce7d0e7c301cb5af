//! The demo accuracy corpora (issue 6): the questions of `tests/data/demo_questions.toml`
//! and of the later held-out set `tests/data/demo_heldout.toml` (written without reading
//! the planner, after the planner's last tuning round), each asked through the whole `Engine` (offline planner, role `admin`) over the demo datasets
//! (`nl2sql_demo::create_demo`, written once into a temp dir), and their result tables compared
//! with the gold queries' result tables (or, for cross-source questions, with the literal
//! expected table).
//!
//! Results are compared with the gold results by `nl2sql_test_support::compare` (the
//! rule shared with the planner corpus: row counts, columns matched by values not names,
//! extra columns allowed, order only when the question asks for one, numbers to 6
//! decimals).
//!
//! A refusal question passes when no sub-query of the run succeeds (the planner refused
//! or mapped nothing). Accuracy is passes / questions.

#![allow(clippy::unwrap_used)] // reason: test helpers fail the test that calls them

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use nl2sql_orchestrator::{AskOptions, DatasourceRegistry, Engine, EngineOptions, RunResult};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::{ConfigFile, EnvSecrets, PolicyFile, ScanStatus};
use nl2sql_test_support::{
    Outcome as Expectation, Table, TempDir, check_expectations, compare, json_val, show_rows,
    table_of, toml_val,
};
use serde::Deserialize;

/// "Today" for the engine (the demo covers 2023-2024).
const TODAY: &str = "2024-12-31";

/// What one corpus file must hold. The questions the engine must pass are listed beside
/// it, in `<file>.expected` (held per question by `nl2sql_test_support::expect`).
struct Shape {
    file: &'static str,
    min_questions: usize,
    min_literal: usize,
    min_refusals: usize,
    min_cross: usize,
}

/// The first demo corpus. Measured 21/31 = 0.677 when it was written; 31/31 after the
/// planner was tuned on its failures.
const DEMO: Shape = Shape {
    file: "demo_questions.toml",
    min_questions: 30,
    min_literal: 10,
    min_refusals: 3,
    min_cross: 4,
};

/// The third demo corpus, written after the planner's second tuning round, without
/// reading the planner. Measured 15/30 = 0.500 on first contact; 29/30 = 0.967 after
/// tuning on its failure classes (21/30 before the last round).
const DEMO_HELDOUT_2: Shape = Shape {
    file: "demo_heldout_2.toml",
    min_questions: 30,
    min_literal: 25,
    min_refusals: 2,
    min_cross: 5,
};

/// The fourth demo corpus, written during the planner's third tuning round by someone who
/// did not read the planner, and measured once that round ended (nobody tuned on it).
/// Measured 20/30 = 0.667 on first contact.
const DEMO_HELDOUT_3: Shape = Shape {
    file: "demo_heldout_3.toml",
    min_questions: 30,
    min_literal: 25,
    min_refusals: 2,
    min_cross: 5,
};

/// The second, held-out demo corpus. Measured 14/24 = 0.583 on first contact; 20/24
/// after the planner was tuned on its failures.
const DEMO_HELDOUT: Shape = Shape {
    file: "demo_heldout.toml",
    min_questions: 24,
    min_literal: 20,
    min_refusals: 1,
    min_cross: 4,
};

const DATASOURCES: &[&str] = &["operations", "supply", "sales"];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Corpus {
    question: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: String,
    category: String,
    question: String,
    #[serde(default)]
    datasource: Option<String>,
    #[serde(default)]
    datasources: Option<Vec<String>>,
    #[serde(default)]
    ordered: bool,
    #[serde(default)]
    gold: Option<String>,
    #[serde(default)]
    parts: Option<BTreeMap<String, String>>,
    #[serde(default)]
    expected: Option<Vec<Vec<toml::Value>>>,
    #[serde(default)]
    refuse: bool,
    note: String,
}

impl Entry {
    /// The report group: the datasource, `cross_source` or `refuse`.
    fn group(&self) -> String {
        if self.refuse {
            "refuse".to_owned()
        } else if self.datasources.is_some() {
            "cross_source".to_owned()
        } else {
            self.datasource.clone().unwrap_or_default()
        }
    }
}

fn load_corpus(file: &str) -> Vec<Entry> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let corpus: Corpus = toml::from_str(&text).unwrap();
    corpus.question
}

// ------------------------------------------------------------------------ result tables

// --------------------------------------------------------------------------- the engine

/// An engine over the demo configuration, indexed, with its state under `data`.
async fn demo_engine(config: &Path, data: &Path) -> Engine {
    let base = config.parent().unwrap();
    let file = ConfigFile::from_toml_str(&std::fs::read_to_string(config).unwrap()).unwrap();
    let registry =
        DatasourceRegistry::from_config(&file, base, &EnvSecrets, nl2sql_demo::drivers()).unwrap();
    let policy_path = base.join(file.policy.as_deref().unwrap());
    let policy = PolicyFile::from_json_str(&std::fs::read_to_string(policy_path).unwrap()).unwrap();
    // As `nl2sql ask` does: the demo's schema docs and example questions are indexed.
    let docs = nl2sql_orchestrator::load_docs(&file, base).unwrap();
    let engine = Engine::open(registry, Arc::new(OfflinePlanner::new()), data)
        .unwrap()
        .with_policy_file(policy)
        .with_docs(docs)
        .with_options(EngineOptions {
            today: Some(TODAY.to_owned()),
            answer_rows: 100_000,
            ..EngineOptions::default()
        });
    let report = engine.index_all().await;
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert_eq!(report.indexed.len(), DATASOURCES.len());
    engine
}

/// Runs a gold query on `datasource` (no guard: the corpus is trusted).
async fn run_gold(engine: &Engine, datasource: &str, sql: &str) -> Result<Table, String> {
    let registry = engine.registry();
    let adapter = registry
        .adapter(datasource)
        .await
        .map_err(|e| format!("{e:?}"))?;
    let limits = registry.limits(datasource).map_err(|e| e.to_string())?;
    let sql = nl2sql_adapter::shape_check(adapter.id(), adapter.dialect(), sql)
        .map_err(|e| format!("the guard refused the gold query: {e:?}"))?;
    let frame = adapter.run_sql(&sql, limits).await;
    if !frame.success {
        return Err(format!("{:?}", frame.error));
    }
    if frame.truncated {
        return Err("the gold result was truncated".to_owned());
    }
    Ok(table_of(&frame))
}

fn literal_table(rows: &[Vec<toml::Value>]) -> Table {
    let width = rows.first().map_or(0, Vec::len);
    Table {
        columns: (1..=width).map(|i| format!("expected_{i}")).collect(),
        rows: rows
            .iter()
            .map(|r| r.iter().map(toml_val).collect())
            .collect(),
    }
}

fn run_table(r: &RunResult) -> Option<Table> {
    let columns = r.columns.clone()?;
    let rows = r.rows.as_ref()?;
    Some(Table {
        columns,
        rows: rows
            .iter()
            .map(|row| row.iter().map(json_val).collect())
            .collect(),
    })
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn run_errors(r: &RunResult) -> String {
    let errors: Vec<String> = r
        .errors
        .iter()
        .filter(|e| e.is_blocking())
        .map(|e| format!("{:?}: {}", e.code, one_line(&e.message)))
        .collect();
    if errors.is_empty() {
        format!("status {:?}, no blocking error", r.status)
    } else {
        errors.join("; ")
    }
}

fn run_sql_text(r: &RunResult) -> String {
    r.subqueries
        .iter()
        .map(|s| {
            format!(
                "[{}] {}",
                s.datasource_id,
                one_line(s.sql.as_deref().unwrap_or("-"))
            )
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The outcome of one question: passed, and why not.
fn judge(entry: &Entry, gold: Option<&Table>, r: &RunResult) -> (bool, String) {
    let succeeded = r
        .subqueries
        .iter()
        .any(|s| s.status == ScanStatus::Succeeded);
    if entry.refuse {
        return if succeeded {
            (
                false,
                format!("answered, should refuse: {}", run_sql_text(r)),
            )
        } else {
            (true, format!("refused ({})", run_errors(r)))
        };
    }
    let Some(gold) = gold else {
        return (false, "no gold table".to_owned());
    };
    let Some(got) = run_table(r) else {
        return (false, format!("no result table: {}", run_errors(r)));
    };
    match compare(gold, &got, entry.ordered) {
        Ok(()) => (true, "pass".to_owned()),
        Err(why) => (
            false,
            format!("wrong result: {why}; sql: {}", run_sql_text(r)),
        ),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_corpus_accuracy() {
    run_corpus(&DEMO).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_heldout_accuracy() {
    run_corpus(&DEMO_HELDOUT).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_heldout_2_accuracy() {
    run_corpus(&DEMO_HELDOUT_2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_heldout_3_accuracy() {
    run_corpus(&DEMO_HELDOUT_3).await;
}

#[allow(clippy::print_stdout)] // reason: the per-question report is the test's output
async fn run_corpus(shape: &Shape) {
    let corpus = load_corpus(shape.file);
    // The corpus's shape.
    let ids: BTreeSet<&str> = corpus.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids.len(), corpus.len(), "duplicate ids");
    assert!(
        corpus.len() >= shape.min_questions,
        "{} questions",
        corpus.len()
    );
    let literal = corpus
        .iter()
        .filter(|e| e.expected.as_ref().is_some_and(|x| !x.is_empty()))
        .count();
    assert!(corpus.iter().filter(|e| e.refuse).count() >= shape.min_refusals);
    assert!(corpus.iter().filter(|e| e.datasources.is_some()).count() >= shape.min_cross);
    for e in &corpus {
        assert!(!e.note.is_empty(), "{}: no note", e.id);
        if e.refuse {
            assert!(
                e.gold.is_none() && e.parts.is_none(),
                "{}: refusal with gold",
                e.id
            );
        } else if let Some(sources) = &e.datasources {
            let parts = e.parts.as_ref().unwrap();
            let keys: BTreeSet<&String> = parts.keys().collect();
            assert_eq!(keys, sources.iter().collect(), "{}: parts", e.id);
            assert!(
                e.expected.is_some(),
                "{}: cross-source needs expected",
                e.id
            );
        } else {
            let ds = e.datasource.as_deref().unwrap();
            assert!(DATASOURCES.contains(&ds), "{}: datasource {ds}", e.id);
            assert!(e.gold.is_some(), "{}: no gold", e.id);
        }
    }

    let dir = TempDir::new("demo-corpus");
    let layout = nl2sql_demo::create_demo(&dir.join("demo")).unwrap();
    let engine = demo_engine(&layout.config, &dir.join("engine")).await;

    // The gold side: every gold query runs, literal expectations match.
    let mut gold_problems = Vec::new();
    let mut golds: Vec<Option<Table>> = Vec::new();
    for e in &corpus {
        let mut gold = None;
        if let (Some(ds), Some(sql)) = (&e.datasource, &e.gold) {
            match run_gold(&engine, ds, sql).await {
                Ok(t) => {
                    println!("gold {}: {}", e.id, show_rows(&t.rows, 12));
                    gold = Some(t);
                }
                Err(why) => gold_problems.push(format!("{}: gold fails: {why}", e.id)),
            }
        }
        if let Some(parts) = &e.parts {
            for (ds, sql) in parts {
                match run_gold(&engine, ds, sql).await {
                    Ok(t) => println!("gold {} [{ds}]: {}", e.id, show_rows(&t.rows, 12)),
                    Err(why) => gold_problems.push(format!("{} [{ds}]: part fails: {why}", e.id)),
                }
            }
        }
        if let Some(rows) = &e.expected {
            let lit = literal_table(rows);
            match &gold {
                Some(g) => {
                    if let Err(why) = compare(&lit, g, e.ordered) {
                        gold_problems.push(format!("{}: gold != expected: {why}", e.id));
                    }
                }
                None => gold = Some(lit),
            }
        }
        golds.push(gold);
    }

    // The pipeline.
    let mut report = String::new();
    let mut by_group: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut by_category: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut passed = 0usize;
    let mut outcomes = Vec::with_capacity(corpus.len());
    for (e, gold) in corpus.iter().zip(&golds) {
        let r = engine
            .ask(&e.question, AskOptions::with_roles(["admin"]))
            .await;
        let (ok, why) = judge(e, gold.as_ref(), &r);
        passed += usize::from(ok);
        outcomes.push(Expectation {
            id: &e.id,
            passed: ok,
            reason: why.clone(),
        });
        for (map, key) in [
            (&mut by_group, e.group()),
            (&mut by_category, e.category.clone()),
        ] {
            let slot = map.entry(key).or_default();
            slot.0 += usize::from(ok);
            slot.1 += 1;
        }
        let mark = if ok { "PASS" } else { "FAIL" };
        writeln!(
            report,
            "{mark} {} [{}] {:?}: {why}",
            e.id,
            e.group(),
            e.question
        )
        .unwrap();
        if ok && !e.refuse {
            writeln!(report, "     sql: {}", run_sql_text(&r)).unwrap();
        }
    }
    let accuracy = passed as f64 / corpus.len() as f64;
    writeln!(
        report,
        "\n{}: accuracy {passed}/{} = {accuracy:.3}",
        shape.file,
        corpus.len()
    )
    .unwrap();
    for (title, map) in [("datasource", &by_group), ("category", &by_category)] {
        writeln!(report, "by {title}:").unwrap();
        for (k, (p, n)) in map {
            writeln!(report, "  {k}: {p}/{n}").unwrap();
        }
    }
    println!("{report}");

    assert!(gold_problems.is_empty(), "{gold_problems:#?}");
    assert!(
        literal >= shape.min_literal,
        "{literal} literal expectations"
    );
    let expectations = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(format!("{}.expected", shape.file));
    if let Err(e) = check_expectations(&expectations, &outcomes) {
        panic!("{e}");
    }
}
