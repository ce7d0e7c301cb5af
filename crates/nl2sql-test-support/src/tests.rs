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
