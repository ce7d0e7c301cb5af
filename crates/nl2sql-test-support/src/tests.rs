//! The comparison rule on small tables.

use super::{Table, Val, compare, json_val, num, text, toml_val};

fn table(columns: &[&str], rows: &[&[Val]]) -> Table {
    Table {
        columns: columns.iter().map(|c| (*c).to_owned()).collect(),
        rows: rows.iter().map(|r| r.to_vec()).collect(),
    }
}

fn t(s: &str) -> Val {
    Val::Text(s.to_owned())
}

#[test]
fn numbers_are_normalised_across_types() {
    assert_eq!(num(7.0), text("7"));
    assert_eq!(num(7.0), json_val(&serde_json::json!(7)));
    assert_eq!(num(0.1 + 0.2), num(0.3));
    assert_eq!(toml_val(&toml::Value::Boolean(true)), num(1.0));
    assert_eq!(text("007a"), t("007a"));
    assert_eq!(num(-0.0).to_string(), "0");
    assert_eq!(num(2.5).to_string(), "2.5");
    assert_ne!(Val::Null, num(0.0));
}

#[test]
fn names_order_and_extra_columns_are_ignored() {
    let gold = table(&["a", "b"], &[&[t("x"), num(1.0)], &[t("y"), num(2.0)]]);
    let got = table(
        &["count", "extra", "name"],
        &[&[num(2.0), t("q"), t("y")], &[num(1.0), t("r"), t("x")]],
    );
    assert_eq!(compare(&gold, &got, false), Ok(()));
    // In order, the rows are reversed: no.
    assert!(compare(&gold, &got, true).is_err());
}

#[test]
fn mismatches_say_why() {
    let gold = table(&["a"], &[&[num(1.0)], &[num(2.0)]]);
    let fewer = table(&["a"], &[&[num(1.0)]]);
    assert!(
        compare(&gold, &fewer, false)
            .unwrap_err()
            .starts_with("1 rows, expected 2")
    );
    let other = table(&["a"], &[&[num(1.0)], &[num(3.0)]]);
    assert!(
        compare(&gold, &other, false)
            .unwrap_err()
            .starts_with("no result column holds the values of expected column 1")
    );
    // Each column matches on its own, the pairs do not.
    let gold = table(&["a", "b"], &[&[t("x"), num(1.0)], &[t("y"), num(2.0)]]);
    let crossed = table(&["a", "b"], &[&[t("x"), num(2.0)], &[t("y"), num(1.0)]]);
    assert!(
        compare(&gold, &crossed, false)
            .unwrap_err()
            .starts_with("every column matches on its own")
    );
}

// Moved from the planner corpus harness.

fn tv(columns: &[&str], rows: Vec<Vec<Val>>) -> Table {
    Table {
        columns: columns.iter().map(|c| (*c).to_owned()).collect(),
        rows,
    }
}

fn s(x: &str) -> Val {
    text(x)
}

fn n(x: f64) -> Val {
    num(x)
}

/// The comparison rule accepts what it should and, above all, rejects wrong tables.
#[test]
fn comparison_rule_rejects_wrong_tables() {
    let gold = tv(
        &["category", "n"],
        vec![
            vec![s("Gadgets"), n(3.0)],
            vec![s("Gizmos"), n(1.0)],
            vec![s("Widgets"), n(4.0)],
        ],
    );
    // Accepted: other names, swapped columns, other row order, float vs int, an extra
    // column, numeric text.
    let swapped = tv(
        &["count", "cat"],
        vec![
            vec![n(4.0), s("Widgets")],
            vec![text("3"), s("Gadgets")],
            vec![n(1.000_000_000_1), s("Gizmos")],
        ],
    );
    assert_eq!(compare(&gold, &swapped, false), Ok(()));
    let extra = tv(
        &["id", "category", "n"],
        vec![
            vec![n(9.0), s("Widgets"), n(4.0)],
            vec![n(8.0), s("Gadgets"), n(3.0)],
            vec![n(7.0), s("Gizmos"), n(1.0)],
        ],
    );
    assert_eq!(compare(&gold, &extra, false), Ok(()));

    // Rejected: a wrong value, a missing row, an extra row, a missing column, values
    // shuffled across rows, text that only looks alike.
    let wrong_value = tv(
        &["category", "n"],
        vec![
            vec![s("Gadgets"), n(3.0)],
            vec![s("Gizmos"), n(1.0)],
            vec![s("Widgets"), n(5.0)],
        ],
    );
    assert!(compare(&gold, &wrong_value, false).is_err());
    let missing_row = tv(
        &["category", "n"],
        vec![vec![s("Gadgets"), n(3.0)], vec![s("Widgets"), n(4.0)]],
    );
    assert!(compare(&gold, &missing_row, false).is_err());
    let mut extra_row = gold.clone();
    extra_row.rows.push(vec![s("Other"), n(0.0)]);
    assert!(compare(&gold, &extra_row, false).is_err());
    let one_column = tv(
        &["category"],
        vec![vec![s("Gadgets")], vec![s("Gizmos")], vec![s("Widgets")]],
    );
    assert!(compare(&gold, &one_column, false).is_err());
    let crossed = tv(
        &["category", "n"],
        vec![
            vec![s("Gadgets"), n(4.0)],
            vec![s("Gizmos"), n(1.0)],
            vec![s("Widgets"), n(3.0)],
        ],
    );
    assert!(compare(&gold, &crossed, false).is_err());
    let case = tv(
        &["category", "n"],
        vec![
            vec![s("gadgets"), n(3.0)],
            vec![s("Gizmos"), n(1.0)],
            vec![s("Widgets"), n(4.0)],
        ],
    );
    assert!(compare(&gold, &case, false).is_err());
    let null = tv(
        &["category", "n"],
        vec![
            vec![s("Gadgets"), Val::Null],
            vec![s("Gizmos"), n(1.0)],
            vec![s("Widgets"), n(4.0)],
        ],
    );
    assert!(compare(&gold, &null, false).is_err());

    // Order: ignored unless the question orders, then enforced.
    let top = tv(
        &["id", "q"],
        vec![vec![n(1.0), n(500.0)], vec![n(3.0), n(480.0)]],
    );
    let reversed = tv(
        &["id", "q"],
        vec![vec![n(3.0), n(480.0)], vec![n(1.0), n(500.0)]],
    );
    assert_eq!(compare(&top, &reversed, false), Ok(()));
    assert!(compare(&top, &reversed, true).is_err());
    assert_eq!(compare(&top, &top, true), Ok(()));

    // Rounding: 6 decimals.
    assert_eq!(num(10.666_666_666_7), num(10.666_667));
    assert_ne!(num(10.6667), num(10.666_667));
    assert_eq!(text("SKU-200"), Val::Text("SKU-200".to_owned()));
    assert_eq!(text("2024"), num(2024.0));
    assert_eq!(text("2024-04-09"), Val::Text("2024-04-09".to_owned()));
}

/// A temporary directory is named after its label, reads as a path, and goes on drop.
#[test]
fn temp_dir_is_labelled_and_removed_on_drop() {
    let dir = super::temp_dir("kit");
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("nl2sql-test-kit-"), "{name}");
    assert!(dir.is_dir());
    std::fs::write(dir.join("file"), "x").unwrap();
    let path: &std::path::Path = &dir;
    assert_eq!(path, dir.path());
    let kept = path.to_path_buf();
    drop(dir);
    assert!(!kept.exists());
}
