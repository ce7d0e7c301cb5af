//! The test data and its loaders: the copies under `tests/data` are complete and parse.

use std::collections::BTreeSet;

use nl2sql_tests::{
    KnownFailures, data_dir, parse_fixture_pairs, qualify_columns_invalid, qualify_columns_pairs,
    spider_contract, spider_gold, sqlglot_contract, tpch_contract, tpch_pairs,
};

use nl2sql_state::Dialect;

#[test]
fn fixture_pairs_follow_sqlglot_splitting() {
    let text = "--------\n-- Section\n--------\nSELECT a FROM x;\nSELECT x.a AS a FROM x AS x;\n\n\
                # execute: false\n# Title: Two\nSELECT\n  b\nFROM y;\n-- note\nSELECT y.b AS b FROM y AS y;\n";
    let pairs = parse_fixture_pairs("f.sql", text);
    assert_eq!(pairs.len(), 2);
    assert_eq!(pairs[0].line, 4);
    assert_eq!(pairs[0].input, "SELECT a FROM x");
    assert_eq!(pairs[0].expected, "SELECT x.a AS a FROM x AS x");
    assert_eq!(pairs[1].line, 9);
    assert_eq!(pairs[1].title(), Some("Two"));
    assert_eq!(
        pairs[1].meta.get("execute").map(String::as_str),
        Some("false")
    );
    assert_eq!(pairs[1].input, "SELECT\n  b\nFROM y");
    assert_eq!(pairs[1].expected, "SELECT y.b AS b FROM y AS y");
    assert_eq!(pairs[1].key(), "f.sql:9");
}

#[test]
fn known_failures_need_a_reason() {
    let ok = KnownFailures::parse("# comment\n\nf.sql:3 guard rejects X\n").unwrap();
    assert!(ok.contains("f.sql:3"));
    assert_eq!(ok.reason("f.sql:3"), Some("guard rejects X"));
    assert!(KnownFailures::parse("f.sql:3\n").is_err());
    assert!(KnownFailures::parse("f.sql:3 a\nf.sql:3 b\n").is_err());
}

#[test]
fn known_failures_check_reports_new_fixed_and_stale_cases() {
    let known =
        KnownFailures::parse("f.sql:1 a\nf.sql:2 b\nf.sql:9 gone\ng.sql:1 other file\n").unwrap();
    let evaluated: BTreeSet<String> = ["f.sql:1", "f.sql:2", "f.sql:3"].map(String::from).into();
    let failing: BTreeSet<String> = ["f.sql:1", "f.sql:3"].map(String::from).into();
    let check = known.check("f.sql:", &evaluated, &failing);
    assert_eq!(check.new_failures, ["f.sql:3"]);
    assert_eq!(check.now_passing, ["f.sql:2"]);
    assert_eq!(check.not_evaluated, ["f.sql:9"]);
    assert!(!check.is_clean());
}

#[test]
fn known_failures_file_parses() {
    let known = KnownFailures::load(crate::sqlglot::KNOWN_FAILURES);
    for key in known.reasons.keys() {
        assert!(
            key.starts_with("qualify_columns.sql:") || key.starts_with("tpc-h_tpc-h.sql:"),
            "known failure `{key}` names no fixture file we run"
        );
    }
}

#[test]
fn spider_data_is_complete() {
    let queries = spider_gold();
    assert_eq!(queries.len(), 1034);
    let used: BTreeSet<&str> = queries.iter().map(|q| q.db_id.as_str()).collect();
    assert_eq!(used.len(), 20, "the dev set uses 20 databases");
    let copied: BTreeSet<String> = std::fs::read_dir(data_dir().join("spider/schemas"))
        .unwrap()
        .map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .trim_end_matches(".sql")
                .to_owned()
        })
        .collect();
    let used_owned: BTreeSet<String> = used.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(
        copied, used_owned,
        "schemas/ should hold exactly the databases dev_gold.sql uses"
    );
    for db in used {
        assert!(!spider_contract(db).tables.is_empty(), "{db} has no tables");
    }
}

#[test]
fn sqlglot_data_is_complete() {
    assert_eq!(qualify_columns_invalid().len(), 20);
    assert_eq!(tpch_pairs().len(), 22);
    let pairs = qualify_columns_pairs();
    assert!(
        pairs.len() > 250,
        "only {} qualify_columns pairs",
        pairs.len()
    );
    assert!(
        pairs
            .iter()
            .all(|p| p.line > 0 && !p.input.is_empty() && !p.expected.is_empty())
    );
    let tables: BTreeSet<String> = sqlglot_contract()
        .tables
        .values()
        .map(|t| t.table.table_name.clone())
        .collect();
    let expected: BTreeSet<String> = [
        "x",
        "y",
        "z",
        "w",
        "temporal",
        "structs",
        "t_bool",
        "unpivotable",
        "pivotable",
    ]
    .map(String::from)
    .into();
    assert_eq!(tables, expected);
    for dialect in [Dialect::Generic, Dialect::DuckDb] {
        assert_eq!(tpch_contract(dialect).tables.len(), 8);
    }
}

#[test]
fn data_files_are_small() {
    fn walk(dir: &std::path::Path) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path);
            } else {
                let size = std::fs::metadata(&path).unwrap().len();
                assert!(
                    size < 1_000_000,
                    "{} is {size} bytes (limit 1 MB)",
                    path.display()
                );
            }
        }
    }
    walk(&data_dir());
}
