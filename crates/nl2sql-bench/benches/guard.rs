//! The SQL guard's throughput: statements checked per second on one core, for a mixed
//! corpus of analytics queries (joins, grouping, CTEs, window functions, subqueries) over
//! a small sales and manufacturing schema (`data/`), against parsing alone.
//!
//! Run with `cargo xtask bench` (or `cargo bench -p nl2sql-bench -- guard/`). Before
//! timing, every statement must pass the guard, so the bench cannot measure rejections.

use std::hint::black_box;

use criterion::{Criterion, Throughput};
use nl2sql_validate::GuardStatus;
use sqlparser::dialect::SQLiteDialect;
use sqlparser::parser::Parser;

/// The `nl2sql` binary's allocator, so the bench measures the guard as `validate-sql`
/// and `ask` run it (as `guard_spider` does).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn guard(c: &mut Criterion) {
    let statements = nl2sql_bench::corpus();
    let guard = nl2sql_bench::guard();
    for (i, sql) in statements.iter().enumerate() {
        let report = guard.check(sql);
        assert!(
            report.status == GuardStatus::Ok,
            "corpus statement {} does not pass the guard:\n{sql}\n{}",
            i + 1,
            report.to_text()
        );
        assert!(
            Parser::parse_sql(&SQLiteDialect {}, sql).is_ok(),
            "statement {} does not parse",
            i + 1
        );
    }

    let mut group = c.benchmark_group("guard");
    group.throughput(Throughput::Elements(statements.len() as u64));
    // One iteration checks the whole corpus (about 2 ms): 50 samples fit criterion's 5 s.
    group.sample_size(50);
    group.bench_function("check", |b| {
        b.iter(|| {
            for sql in &statements {
                black_box(guard.check(black_box(sql)));
            }
        });
    });
    group.bench_function("parse_only", |b| {
        b.iter(|| {
            for sql in &statements {
                let _ = black_box(Parser::parse_sql(&SQLiteDialect {}, black_box(sql)));
            }
        });
    });
    group.finish();
}

// What `criterion_group!` and `criterion_main!` expand to, without their undocumented
// `pub fn`.
fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    guard(&mut criterion);
    criterion.final_summary();
}
