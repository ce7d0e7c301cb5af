//! The Spider 1.0 dev gold queries through the guard.
//!
//! Every gold query is a valid read-only query over its database (all 1,034 pass SQLite's
//! own `EXPLAIN` against these DDL files), so the guard must accept each one in the SQLite
//! dialect: any other verdict is a false positive.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use nl2sql_state::Dialect;
use nl2sql_tests::{spider_contract, spider_gold, truncate};
use nl2sql_validate::{GuardContext, GuardReport, GuardStatus, SqlGuard};

use crate::sqlglot::render_issues;

/// A short grouping key for an issue message: the message with quoted names and numbers
/// blanked, so that one guard bug shows up as one group.
fn issue_shape(report: &GuardReport) -> String {
    let Some(issue) = report.issues.first() else {
        return format!("{:?} without issues", report.status);
    };
    let mut shape = String::new();
    let mut in_quote = false;
    for c in issue.message.chars() {
        match c {
            '\'' | '`' | '"' => {
                in_quote = !in_quote;
                shape.push_str(if in_quote { "'…" } else { "'" });
            }
            _ if in_quote => {}
            d if d.is_ascii_digit() => {
                if !shape.ends_with('#') {
                    shape.push('#');
                }
            }
            _ => shape.push(c),
        }
    }
    format!("[{:?}] {}", issue.code, truncate(&shape, 100))
}

#[test]
fn spider_gold_queries_pass_the_guard() {
    let queries = spider_gold();
    assert_eq!(
        queries.len(),
        1034,
        "dev_gold.sql should hold 1,034 queries"
    );
    let mut guards: BTreeMap<String, SqlGuard> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut by_shape: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_db: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for query in &queries {
        let guard = guards.entry(query.db_id.clone()).or_insert_with(|| {
            let contract = spider_contract(&query.db_id);
            SqlGuard::new(GuardContext::new(&query.db_id, Dialect::Sqlite, &contract))
        });
        let report = guard.check(&query.sql);
        let counts = by_db.entry(&query.db_id).or_default();
        counts.0 += 1;
        if report.status != GuardStatus::Ok {
            counts.1 += 1;
            *by_shape.entry(issue_shape(&report)).or_default() += 1;
            failures.push(format!(
                "dev_gold.sql:{} [{}] {:?}\n    sql:    {}\n    issues: {}",
                query.line,
                query.db_id,
                report.status,
                query.sql,
                render_issues(&report)
            ));
        }
    }
    if failures.is_empty() {
        return;
    }
    let mut report = format!(
        "{} of {} Spider gold queries were not ok with --dialect sqlite\n\nby cause (first issue, names blanked):\n",
        failures.len(),
        queries.len()
    );
    let mut shapes: Vec<_> = by_shape.into_iter().collect();
    shapes.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    for (shape, count) in shapes {
        let _ = writeln!(report, "  {count:>4}  {shape}");
    }
    let _ = writeln!(report, "\nby database (failing / total):");
    for (db, (total, failing)) in by_db.iter().filter(|(_, (_, f))| *f > 0) {
        let _ = writeln!(report, "  {failing:>4} / {total:<4} {db}");
    }
    let _ = writeln!(report, "\nevery failing query:");
    for failure in &failures {
        let _ = writeln!(report, "{failure}");
    }
    panic!("{report}");
}
