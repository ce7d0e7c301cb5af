//! Snapshots of the guard's reports (text and JSON) over the corpus in `data/reports`.

use nl2sql_state::{Dialect, PolicyFile};
use nl2sql_validate::{GuardContext, SqlGuard, schema_from_ddl};

fn header(sql: &str, key: &str) -> Option<String> {
    sql.lines()
        .filter_map(|l| l.trim().strip_prefix("--"))
        .filter_map(|l| l.trim().strip_prefix(key))
        .filter_map(|l| l.trim().strip_prefix(':'))
        .map(|v| v.trim().to_owned())
        .next()
}

#[test]
fn guard_reports_match_snapshots() {
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let ddl = std::fs::read_to_string(examples.join("manufacturing.sql")).expect("schema");
    let contract = schema_from_ddl(&ddl, Dialect::Sqlite, "manufacturing").expect("schema parses");
    let policy = PolicyFile::from_json_str(
        &std::fs::read_to_string(examples.join("policy.json")).expect("policy"),
    )
    .expect("policy parses");
    insta::glob!("../data/reports", "cases/*.sql", |path| {
        let sql = std::fs::read_to_string(path).expect("case");
        let dialect: Dialect = header(&sql, "dialect")
            .as_deref()
            .unwrap_or("generic")
            .parse()
            .expect("dialect");
        let mut ctx = GuardContext::new("manufacturing", dialect, &contract);
        if let Some(role) = header(&sql, "role") {
            ctx = ctx.with_policy(policy.access_for(&[role]));
        }
        let report = SqlGuard::new(ctx).check(&sql);
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let expected = name.split('_').next().unwrap_or_default();
        assert_eq!(
            report.status.as_str(),
            expected,
            "{name}:\n{}",
            report.to_text()
        );
        let json = serde_json::to_string_pretty(&report.to_json()).expect("json");
        insta::assert_snapshot!(format!("{}\n{}", report.to_text(), json));
    });
}
