//! Planning latency of the offline planner: `decompose` then `plan` of every sub-query, for
//! each answerable question of the planner's accuracy corpus
//! (`crates/nl2sql-planner-offline/tests/data/manufacturing_questions.toml`) over the schema
//! snapshot of `tests/data/fixtures/manufacturing.db` (taken once by the SQLite adapter,
//! with its column statistics and sample values).
//!
//! - `planner/offline`: one iteration plans the whole corpus; throughput counts questions,
//!   so time per question is the iteration time divided by the question count.
//!
//! Run with `cargo xtask bench planner`.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput};
use nl2sql_adapter::{DatasourceAdapter, Limits};
use nl2sql_planner::{DatasourceInfo, DecomposeRequest, PlanRequest};
use nl2sql_planner_offline::OfflinePlanner;
use nl2sql_state::{Dialect, SchemaSnapshot};
use serde::Deserialize;

#[derive(Deserialize)]
struct Corpus {
    question: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    question: String,
    #[serde(default)]
    today: Option<String>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn snapshot() -> SchemaSnapshot {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let path = root().join("tests/data/fixtures/manufacturing.db");
    let adapter =
        nl2sql_adapter_sqlite::SqliteAdapter::open("manufacturing", &path, Limits::default())
            .expect("open the fixture");
    rt.block_on(adapter.schema_snapshot()).expect("snapshot")
}

/// Decomposes and plans one question; the number of plans made.
fn plan_question(planner: &OfflinePlanner, snapshot: &SchemaSnapshot, entry: &Entry) -> usize {
    let request = DecomposeRequest {
        question: entry.question.clone(),
        datasources: vec![DatasourceInfo {
            id: "manufacturing".to_owned(),
            description: None,
            domains: Vec::new(),
            examples: Vec::new(),
            schema_version: None,
            snapshot: Some(snapshot.clone()),
        }],
        feedback: None,
        today: entry.today.clone(),
    };
    let Ok(decomposition) = planner.decompose_sync(&request) else {
        return 0;
    };
    let mut plans = 0;
    for sub_query in decomposition.sub_queries {
        let request = PlanRequest {
            question: entry.question.clone(),
            sub_query,
            dialect: Dialect::Sqlite,
            schema: snapshot.clone(),
            feedback: None,
            today: entry.today.clone(),
        };
        if planner.plan_sync(&request).is_ok() {
            plans += 1;
        }
    }
    plans
}

fn planner(c: &mut Criterion) {
    let text = std::fs::read_to_string(
        root().join("crates/nl2sql-planner-offline/tests/data/manufacturing_questions.toml"),
    )
    .expect("read the corpus");
    let corpus: Corpus = toml::from_str(&text).expect("parse the corpus");
    // Every question, the ones the planner refuses too: a refusal costs a user as much
    // time as an answer.
    let entries: Vec<Entry> = corpus.question;
    let snapshot = snapshot();
    let planner = OfflinePlanner::new();
    let planned: usize = entries
        .iter()
        .map(|e| plan_question(&planner, &snapshot, e))
        .sum();
    // Most questions plan (the accuracy test checks which, and their results): a bench of
    // a planner that refuses everything would time only its refusals.
    assert!(
        planned * 2 >= entries.len(),
        "only {planned} of {} planned",
        entries.len()
    );
    eprintln!(
        "planner/offline: {planned} of {} questions planned",
        entries.len()
    );

    let mut group = c.benchmark_group("planner");
    group.throughput(Throughput::Elements(entries.len() as u64));
    group.sample_size(20);
    group.bench_function("offline", |b| {
        b.iter(|| {
            for entry in &entries {
                black_box(plan_question(&planner, &snapshot, black_box(entry)));
            }
        });
    });
    group.finish();
}

// What `criterion_group!` and `criterion_main!` expand to, without their undocumented
// `pub fn`.
fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    planner(&mut criterion);
    criterion.final_summary();
}
