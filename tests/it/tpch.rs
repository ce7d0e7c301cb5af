//! The 22 TPC-H queries of sqlglot's `tpc-h_tpc-h.sql` through the guard.
//!
//! Each query must pass in the generic and DuckDB dialects against the TPC-H schema, and
//! its column resolutions must agree with sqlglot's qualified form (the comparison of
//! [`crate::resolution`], with the known failures of `data/sqlglot/known_failures.txt`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use nl2sql_state::Dialect;
use nl2sql_tests::{FixturePair, KnownFailures, one_line, tpch_contract, tpch_pairs, truncate};
use nl2sql_validate::{GuardContext, GuardStatus, SqlGuard};

use crate::resolution::{self, Expected, InputFacts, Oracle, parse_one, render_resolutions};
use crate::sqlglot::{KNOWN_FAILURES, failure_table, render_issues};

fn label(index: usize, pair: &FixturePair) -> String {
    format!(
        "TPC-H {} ({})",
        index + 1,
        truncate(&one_line(&pair.input), 70)
    )
}

#[test]
fn tpch_queries_pass_the_guard() {
    let pairs = tpch_pairs();
    assert_eq!(
        pairs.len(),
        22,
        "tpc-h_tpc-h.sql should hold 22 query pairs"
    );
    let mut failures = Vec::new();
    for dialect in [Dialect::Generic, Dialect::DuckDb] {
        let contract = tpch_contract(dialect);
        let guard = SqlGuard::new(GuardContext::new("tpch", dialect, &contract));
        for (i, pair) in pairs.iter().enumerate() {
            let report = guard.check(&pair.input);
            if report.status != GuardStatus::Ok {
                failures.push(format!(
                    "{dialect:?} {} [{}] {:?}: {}",
                    label(i, pair),
                    pair.key(),
                    report.status,
                    render_issues(&report)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 44 (22 queries × 2 dialects) TPC-H checks were not ok:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn tpch_resolutions_agree_with_sqlglot() {
    let dialect = Dialect::Generic;
    let contract = tpch_contract(dialect);
    let guard = SqlGuard::new(GuardContext::new("tpch", dialect, &contract));
    let known = KnownFailures::load(KNOWN_FAILURES);
    let pairs = tpch_pairs();
    let mut evaluated = BTreeSet::new();
    let mut failures: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    for (i, pair) in pairs.iter().enumerate() {
        evaluated.insert(pair.key());
        let problems = match (
            parse_one(&pair.input, dialect),
            parse_one(&pair.expected, dialect),
        ) {
            (Err(e), _) => vec![format!("input does not parse with sqlparser: {e}")],
            (_, Err(e)) => vec![format!(
                "sqlglot's output does not parse with sqlparser: {e}"
            )],
            (Ok(input), Ok(expected)) => {
                let report = guard.check(&pair.input);
                if report.status == GuardStatus::Ok {
                    let facts = InputFacts::of(&input, dialect);
                    let expected = Expected::of(&expected, dialect);
                    let findings = resolution::compare(
                        dialect,
                        Oracle::Optimized,
                        &facts,
                        &expected,
                        &resolution::resolved(&report.resolutions),
                    );
                    let mut problems: Vec<String> =
                        findings.iter().map(ToString::to_string).collect();
                    if !problems.is_empty() {
                        problems.push(format!(
                            "resolutions: {}",
                            render_resolutions(&report.resolutions)
                        ));
                    }
                    problems
                } else {
                    vec![format!(
                        "guard status {:?}: {}",
                        report.status,
                        render_issues(&report)
                    )]
                }
            }
        };
        if !problems.is_empty() {
            failures.insert(pair.key(), (label(i, pair), problems));
        }
    }
    eprintln!(
        "tpc-h_tpc-h.sql: {} queries, {} agree with sqlglot, {} do not",
        pairs.len(),
        pairs.len() - failures.len(),
        failures.len()
    );
    if !failures.is_empty() {
        eprintln!("failing cases:\n{}", failure_table(&failures, &known));
    }
    let failing: BTreeSet<String> = failures.keys().cloned().collect();
    let check = known.check("tpc-h_tpc-h.sql:", &evaluated, &failing);
    let mut paste = String::new();
    for key in &check.new_failures {
        if let Some((label, problems)) = failures.get(key) {
            let first = problems.first().map_or("", String::as_str);
            let _ = writeln!(
                paste,
                "{key} {} — {}",
                truncate(label, 40),
                truncate(first, 120)
            );
        }
    }
    assert!(
        check.is_clean(),
        "tpc-h_tpc-h.sql differs from {KNOWN_FAILURES}:\n{check}\nLines to add once understood:\n{paste}"
    );
}
