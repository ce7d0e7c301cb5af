//! sqlglot's column-qualification fixtures as golden tests of the guard's resolver.
//!
//! - `qualify_columns__invalid.sql`: every query must be refused.
//! - `qualify_columns.sql`: every case the guard can honour must pass the guard, and the
//!   guard's resolutions must agree with sqlglot's qualified output (see [`resolution`] for
//!   the comparison). Cases the spec makes the guard refuse (tables outside the schema,
//!   table functions, a CTE named like a table) must be refused instead. Cases in dialects
//!   we do not support, with sqlglot options we have no equivalent for, or that sqlparser
//!   cannot parse are not checked; the test prints how many, and why. Cases that fail are
//!   listed, each with its reason, in
//!   `data/sqlglot/known_failures.txt`; the test fails on any difference with that list,
//!   so a new failure fails it and so does a listed case that now passes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use nl2sql_state::{AccessPolicy, Dialect};
use nl2sql_tests::{
    FixturePair, KnownFailures, case_order, one_line, qualify_columns_invalid,
    qualify_columns_pairs, recursive_cte_policy, sqlglot_contract, truncate,
};
use nl2sql_validate::{GuardContext, GuardReport, GuardStatus, SqlGuard};
use sqlparser::ast::Statement;

use crate::resolution::{self, Expected, InputFacts, Oracle, parse_one, render_resolutions};

/// Where the known failures of the sqlglot suites are listed, relative to `tests/data`.
pub(crate) const KNOWN_FAILURES: &str = "sqlglot/known_failures.txt";

/// Options of a case that do not change what a correct resolver must do.
const NEUTRAL_OPTIONS: [&str; 4] = ["title", "execute", "note", "dialect"];

/// The tables of the sqlglot test schema, lower case.
fn schema_tables(contract: &nl2sql_state::SchemaContract) -> BTreeSet<String> {
    contract
        .tables
        .values()
        .map(|t| t.table.table_name.to_lowercase())
        .collect()
}

/// Our dialect for a sqlglot dialect name, when we support it.
pub(crate) fn dialect_named(name: &str) -> Option<Dialect> {
    match name.to_lowercase().as_str() {
        "duckdb" => Some(Dialect::DuckDb),
        "postgres" => Some(Dialect::Postgres),
        "mysql" => Some(Dialect::MySql),
        "sqlite" => Some(Dialect::Sqlite),
        _ => None,
    }
}

/// Why a case is not compared with sqlglot.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Skip {
    /// The group it is counted in.
    category: &'static str,
    /// The specifics, for the list.
    detail: String,
    /// When the guard must refuse the case (a rule of the spec forbids it), the dialect to
    /// check that in: such a case is still checked, for a refusal.
    must_refuse_in: Option<Dialect>,
}

fn skip(category: &'static str, detail: impl Into<String>) -> Skip {
    Skip {
        category,
        detail: detail.into(),
        must_refuse_in: None,
    }
}

fn refuse(dialect: Dialect, category: &'static str, detail: impl Into<String>) -> Skip {
    Skip {
        must_refuse_in: Some(dialect),
        ..skip(category, detail)
    }
}

/// A case the guard can honour, parsed.
struct Runnable {
    dialect: Dialect,
    input: InputFacts,
    expected: Statement,
    /// The policy to check it under: one allowing `WITH RECURSIVE` when it uses it.
    policy: Option<AccessPolicy>,
}

/// Decides whether the guard can honour a case, and parses it if so.
fn prepare(pair: &FixturePair, tables: &BTreeSet<String>) -> Result<Runnable, Skip> {
    for (key, value) in &pair.meta {
        if !NEUTRAL_OPTIONS.contains(&key.as_str()) {
            return Err(skip(
                "sqlglot option the guard has no equivalent for",
                format!("{key}: {value}"),
            ));
        }
    }
    let dialect = match pair.meta.get("dialect") {
        None => Dialect::Generic,
        Some(name) => dialect_named(name)
            .ok_or_else(|| skip("dialect we do not support", name.to_lowercase()))?,
    };
    let statement = parse_one(&pair.input, dialect).map_err(|e| {
        skip(
            "input does not parse with sqlparser in the dialect",
            format!("{dialect:?}: {e}"),
        )
    })?;
    let input = InputFacts::of(&statement, dialect);
    if !input.table_functions.is_empty() {
        return Err(refuse(
            dialect,
            "table function or UNNEST (must be refused: rule G4)",
            input.table_functions.join(", "),
        ));
    }
    let unknown = input.unknown_relations(tables);
    if !unknown.is_empty() {
        return Err(refuse(
            dialect,
            "tables outside the test schema (sqlglot qualifies them blind; must be refused: rule G3)",
            unknown.join(", "),
        ));
    }
    let shadowing: Vec<&str> = input
        .ctes
        .intersection(tables)
        .map(String::as_str)
        .collect();
    if !shadowing.is_empty() {
        return Err(refuse(
            dialect,
            "CTE named like a table of the schema (must be refused: rule G3)",
            shadowing.join(", "),
        ));
    }
    let policy = input.recursive.then(recursive_cte_policy);
    let expected = parse_one(&pair.expected, dialect).map_err(|e| {
        skip(
            "sqlglot's expected output does not parse with sqlparser",
            format!("{dialect:?}: {e}"),
        )
    })?;
    Ok(Runnable {
        dialect,
        input,
        expected,
        policy,
    })
}

/// The issues of a report on one line.
pub(crate) fn render_issues(report: &GuardReport) -> String {
    report
        .issues
        .iter()
        .map(|i| format!("[{:?}] {}", i.code, i.message))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Checks one runnable case; returns what is wrong with it, if anything.
fn check_case(
    pair: &FixturePair,
    case: &Runnable,
    contract: &nl2sql_state::SchemaContract,
) -> Vec<String> {
    let mut context = GuardContext::new("sqlglot", case.dialect, contract);
    if let Some(policy) = &case.policy {
        context = context.with_policy(policy.clone());
    }
    let guard = SqlGuard::new(context);
    let report = guard.check(&pair.input);
    if report.status != GuardStatus::Ok {
        return vec![format!(
            "guard status {:?}: {}",
            report.status,
            render_issues(&report)
        )];
    }
    let expected = Expected::of(&case.expected, case.dialect);
    let findings = resolution::compare(
        case.dialect,
        Oracle::Qualified,
        &case.input,
        &expected,
        &resolution::resolved(&report.resolutions),
    );
    if findings.is_empty() {
        return Vec::new();
    }
    let mut problems: Vec<String> = findings.iter().map(ToString::to_string).collect();
    problems.push(format!(
        "resolutions: {}",
        render_resolutions(&report.resolutions)
    ));
    problems.push(format!(
        "expected: {}",
        truncate(&one_line(&pair.expected), 300)
    ));
    problems
}

/// A table of failing cases: key, case, then one line per problem.
pub(crate) fn failure_table(
    failures: &BTreeMap<String, (String, Vec<String>)>,
    known: &KnownFailures,
) -> String {
    let mut out = String::new();
    let mut cases: Vec<_> = failures.iter().collect();
    cases.sort_by(|a, b| case_order(a.0).cmp(&case_order(b.0)));
    for (key, (label, problems)) in cases {
        let status = match known.reason(key) {
            Some(reason) => format!("known: {reason}"),
            None => "NEW".to_owned(),
        };
        let _ = writeln!(out, "{key:<28} {label}\n{:<28} ({status})", "");
        for problem in problems {
            let _ = writeln!(out, "{:<28}   - {problem}", "");
        }
    }
    out
}

#[test]
fn qualify_columns_cases_agree_with_sqlglot() {
    let contract = sqlglot_contract();
    let tables = schema_tables(&contract);
    let known = KnownFailures::load(KNOWN_FAILURES);
    let pairs = qualify_columns_pairs();
    assert!(
        pairs.len() > 250,
        "qualify_columns.sql: only {} cases parsed",
        pairs.len()
    );

    let mut skipped: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    let mut evaluated = BTreeSet::new();
    let mut failures: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    for pair in &pairs {
        let case = match prepare(pair, &tables) {
            Ok(case) => case,
            Err(why) => {
                let entry = format!("{} {} ({})", pair.key(), pair.label(60), why.detail);
                skipped.entry(why.category).or_default().push(entry);
                if let Some(dialect) = why.must_refuse_in {
                    evaluated.insert(pair.key());
                    let guard = SqlGuard::new(GuardContext::new("sqlglot", dialect, &contract));
                    let report = guard.check(&pair.input);
                    if report.status == GuardStatus::Ok {
                        let problem = format!(
                            "guard accepted a query it must refuse ({}): resolutions {}",
                            why.category,
                            render_resolutions(&report.resolutions)
                        );
                        failures.insert(pair.key(), (pair.label(100), vec![problem]));
                    }
                }
                continue;
            }
        };
        evaluated.insert(pair.key());
        let problems = check_case(pair, &case, &contract);
        if !problems.is_empty() {
            failures.insert(pair.key(), (pair.label(100), problems));
        }
    }

    let skipped_total: usize = skipped.values().map(Vec::len).sum();
    let refusals = evaluated.len() + skipped_total - pairs.len();
    let mut summary = format!(
        "qualify_columns.sql: {} cases; {} compared with sqlglot, {refusals} checked for a \
         refusal, {} not checked; {} pass, {} fail\n",
        pairs.len(),
        pairs.len() - skipped_total,
        skipped_total - refusals,
        evaluated.len() - failures.len(),
        failures.len(),
    );
    for (category, cases) in &skipped {
        let _ = writeln!(summary, "  not compared {:>3}: {category}", cases.len());
        for case in cases {
            let _ = writeln!(summary, "      {}", truncate(case, 160));
        }
    }
    eprintln!("{summary}");
    if !failures.is_empty() {
        eprintln!("failing cases:\n{}", failure_table(&failures, &known));
    }

    let failing: BTreeSet<String> = failures.keys().cloned().collect();
    let check = known.check("qualify_columns.sql:", &evaluated, &failing);
    if !check.is_clean() {
        let new: BTreeMap<String, (String, Vec<String>)> = failures
            .iter()
            .filter(|(k, _)| check.new_failures.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut paste = String::new();
        for key in &check.new_failures {
            let Some((label, problems)) = new.get(key) else {
                continue;
            };
            let first = problems.first().map_or("", String::as_str);
            let _ = writeln!(
                paste,
                "{key} {} — {}",
                truncate(label, 60),
                truncate(first, 120)
            );
        }
        panic!(
            "qualify_columns.sql differs from {KNOWN_FAILURES}:\n{check}\n{}\
             Lines to add to {KNOWN_FAILURES} once each failure is understood (edit the reason):\n{paste}",
            failure_table(&new, &known)
        );
    }
}

#[test]
fn qualify_columns_invalid_queries_are_refused() {
    let contract = sqlglot_contract();
    let guard = SqlGuard::new(GuardContext::new("sqlglot", Dialect::Generic, &contract));
    let queries = qualify_columns_invalid();
    assert_eq!(
        queries.len(),
        20,
        "qualify_columns__invalid.sql should hold 20 queries"
    );
    let mut accepted = Vec::new();
    let mut summary = String::new();
    for query in &queries {
        let report = guard.check(&query.sql);
        let _ = writeln!(
            summary,
            "  line {:>2} {:?}: {} → {}",
            query.line,
            report.status,
            truncate(&query.sql, 70),
            truncate(&render_issues(&report), 140)
        );
        if report.status == GuardStatus::Ok {
            accepted.push(format!(
                "  line {:>2}: {}\n           resolutions: {}",
                query.line,
                query.sql,
                render_resolutions(&report.resolutions)
            ));
        }
    }
    eprintln!("qualify_columns__invalid.sql:\n{summary}");
    assert!(
        accepted.is_empty(),
        "{} of {} invalid queries were accepted (status ok):\n{}",
        accepted.len(),
        queries.len(),
        accepted.join("\n")
    );
}
