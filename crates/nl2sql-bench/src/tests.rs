//! The bench corpora stay valid: every query passes the guard.

use nl2sql_validate::GuardStatus;

use super::*;

#[test]
fn statements_split_at_line_ending_semicolons() {
    let text = "-- one\nSELECT 1;\n\n-- two\n-- more\nSELECT ';'\nFROM t;\nSELECT 3";
    assert_eq!(
        split_statements(text),
        ["SELECT 1", "SELECT ';'\nFROM t", "SELECT 3"]
    );
    assert_eq!(split_statements("SELECT 1;"), ["SELECT 1"]);
    assert!(split_statements("-- only a comment\n").is_empty());
}

#[test]
fn corpus_is_large_and_every_statement_passes_the_guard() {
    let statements = corpus();
    assert!(statements.len() >= 30, "{} statements", statements.len());
    let guard = guard();
    let failures: Vec<String> = statements
        .iter()
        .enumerate()
        .filter_map(|(i, sql)| {
            let report = guard.check(sql);
            (report.status != GuardStatus::Ok)
                .then(|| format!("statement {}:\n{sql}\n{}", i + 1, report.to_text()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
