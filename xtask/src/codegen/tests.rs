//! Tests of the error-code table rendering.

use super::*;

#[test]
fn table_rows_escape_pipes_and_newlines() {
    let rows = [
        CodeRow {
            code: "SECURITY_VIOLATION".to_owned(),
            severity: "critical".to_owned(),
            fatal: true,
            safe_message: Some("the query was refused".to_owned()),
            description: "a statement writes,\nor reads a | denied table".to_owned(),
        },
        CodeRow {
            code: "TIMEOUT".to_owned(),
            severity: "error".to_owned(),
            fatal: false,
            safe_message: None,
            description: "a step ran out of time".to_owned(),
        },
    ];
    let doc = render_error_codes(&rows);
    let table: Vec<&str> = doc.lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(
        table,
        [
            "| `SECURITY_VIOLATION` | critical | yes | the query was refused | a statement writes, or reads a \\| denied table |",
            "| `TIMEOUT` | error | no | – | a step ran out of time |",
        ]
    );
}

#[test]
fn every_code_is_in_the_table() {
    let rows = error_codes();
    let doc = render_error_codes(&rows);
    for row in &rows {
        assert!(doc.contains(&format!("| `{}` |", row.code)), "{}", row.code);
    }
}
