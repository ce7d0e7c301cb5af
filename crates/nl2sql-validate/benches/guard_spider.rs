//! The SQL guard over Spider dev's 1,034 gold queries with their schemas (issue 20): the
//! full check (`SqlGuard::check`: parse, shape, relations, functions, columns, policy) in
//! the SQLite dialect, one core, one guard per database built before timing; and
//! sqlparser alone on the same statements, for comparison.
//!
//! - `guard_spider/check`: every statement checked once per iteration; throughput counts
//!   statements.
//! - `guard_spider/parse_only`: `Parser::parse_sql` on the same statements.
//!
//! The data are the repository's copy of Spider dev (`tests/data/spider`: `dev_gold.sql`,
//! one `SQL<TAB>db_id` a line, and `schemas/<db_id>.sql`). Before timing, the bench asserts
//! the count and that every statement gets a report. Run with `cargo xtask bench
//! guard_spider`, which also times the peer (sqlglot) on the same statements when Python is
//! present. This bench lives in nl2sql-validate so that measuring the guard never builds
//! the database drivers.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput};
use nl2sql_state::Dialect;
use nl2sql_validate::{GuardContext, SqlGuard, parser_dialect, schema_from_ddl};
use sqlparser::parser::Parser;

/// The `nl2sql` binary's allocator, so the bench measures the guard as `validate-sql
/// --batch` runs it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One gold query and its database.
struct Query {
    sql: String,
    db: String,
}

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/spider")
}

fn queries() -> Vec<Query> {
    let text = std::fs::read_to_string(data().join("dev_gold.sql")).expect("read dev_gold.sql");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (sql, db) = l.rsplit_once('\t').expect("SQL<TAB>db_id");
            Query {
                sql: sql.to_owned(),
                db: db.trim().to_owned(),
            }
        })
        .collect()
}

fn guard_spider(c: &mut Criterion) {
    let queries = queries();
    assert_eq!(queries.len(), 1034, "Spider dev has 1,034 gold queries");
    let mut guards: BTreeMap<String, SqlGuard> = BTreeMap::new();
    for q in &queries {
        guards.entry(q.db.clone()).or_insert_with(|| {
            let ddl = std::fs::read_to_string(data().join("schemas").join(format!("{}.sql", q.db)))
                .expect("read the schema");
            let contract = schema_from_ddl(&ddl, Dialect::Sqlite, &q.db).expect("parse the schema");
            SqlGuard::new(GuardContext::new(&q.db, Dialect::Sqlite, &contract))
        });
    }
    let pairs: Vec<(&SqlGuard, &str)> = queries
        .iter()
        .map(|q| (&guards[&q.db], q.sql.as_str()))
        .collect();
    // Every statement gets a report (the peers' test checks their verdicts).
    let checked = pairs
        .iter()
        .filter(|(g, sql)| !g.check(sql).status.as_str().is_empty())
        .count();
    assert_eq!(checked, pairs.len());

    let mut group = c.benchmark_group("guard_spider");
    group.throughput(Throughput::Elements(pairs.len() as u64));
    group.sample_size(20);
    group.bench_function("check", |b| {
        b.iter(|| {
            for (guard, sql) in &pairs {
                black_box(guard.check(black_box(sql)));
            }
        });
    });
    let dialect = parser_dialect(Dialect::Sqlite);
    group.bench_function("parse_only", |b| {
        b.iter(|| {
            for (_, sql) in &pairs {
                let _ = black_box(Parser::parse_sql(dialect.as_ref(), black_box(sql)));
            }
        });
    });
    group.finish();
}

// What `criterion_group!` and `criterion_main!` expand to, without their undocumented
// `pub fn`.
fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    guard_spider(&mut criterion);
    criterion.final_summary();
}
