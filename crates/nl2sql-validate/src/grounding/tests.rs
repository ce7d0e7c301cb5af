//! Value grounding's pure half: folding, matching a literal against stored values, finding
//! the probes of a plan and respelling it.

use nl2sql_plan::{Expr, LiteralValue, Op, PlanModel, TableRef};
use nl2sql_state::{Dialect, SchemaContract};

use super::{Grounding, Respelling, fold, ground_literal, respell, value_probes};
use crate::schema_from_ddl;

const DDL: &str = "
CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country VARCHAR(40),
    age INTEGER, born TEXT);
CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, singer_id INTEGER, venue TEXT);
";

fn contract() -> SchemaContract {
    schema_from_ddl(DDL, Dialect::Sqlite, "music").unwrap()
}

fn col(alias: &str, name: &str) -> Expr {
    Expr::column(Some(alias), name)
}

fn text(s: &str) -> Expr {
    Expr::literal(LiteralValue::Str(s.to_owned()))
}

fn list(items: &[&str]) -> Expr {
    Expr::func("LIST", items.iter().map(|s| text(s)).collect())
}

fn and(l: Expr, r: Expr) -> Expr {
    Expr::binary(Op::And, l, r)
}

fn plan(where_: Expr) -> PlanModel {
    PlanModel {
        tables: vec![
            TableRef {
                name: "singer".into(),
                schema_name: None,
                database: None,
                alias: "s".into(),
                ordinal: 0,
            },
            TableRef {
                name: "concert".into(),
                schema_name: None,
                database: None,
                alias: "c".into(),
                ordinal: 1,
            },
        ],
        where_: Some(where_),
        ..PlanModel::default()
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn change(table: &str, column: &str, literal: &str, stored: &[&str]) -> Respelling {
    let contract = contract();
    let table = contract
        .tables
        .values()
        .find(|t| t.table.table_name == table)
        .unwrap()
        .table
        .clone();
    Respelling {
        table,
        column: column.into(),
        literal: literal.into(),
        stored: strings(stored),
    }
}

#[test]
fn folding_ignores_case_accents_spacing_and_punctuation_only() {
    assert_eq!(fold("José  García"), "jose garcia");
    assert_eq!(fold(" north-america "), "north america");
    assert_eq!(fold("WH-Texas."), "wh texas");
    assert_eq!(fold("Ångström"), "angstrom");
    assert_ne!(fold("Dogs"), fold("Dog"));
    assert_eq!(fold("--"), "");
}

#[test]
fn literals_ground_exactly_by_respelling_or_not_at_all() {
    let stored = strings(&["France", "Netherlands", "United States", "united states"]);
    assert_eq!(ground_literal("France", &stored), Grounding::Exact);
    assert_eq!(
        ground_literal("france", &stored),
        Grounding::Respelled(strings(&["France"]))
    );
    assert_eq!(
        ground_literal("United-States", &stored),
        Grounding::Respelled(strings(&["United States", "united states"]))
    );
    // An exact spelling wins over folded ones.
    assert_eq!(ground_literal("united states", &stored), Grounding::Exact);
    match ground_literal("Frence", &stored) {
        Grounding::NotFound { nearest } => assert_eq!(nearest[0], "France", "{nearest:?}"),
        other => panic!("{other:?}"),
    }
    match ground_literal("States", &stored) {
        Grounding::NotFound { nearest } => {
            assert_eq!(nearest.len(), 3);
            assert!(
                nearest[0].eq_ignore_ascii_case("united states"),
                "{nearest:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    // An empty column has no nearest value to offer.
    assert_eq!(
        ground_literal("x", &[]),
        Grounding::NotFound {
            nearest: Vec::new()
        }
    );
}

#[test]
fn probes_are_the_text_columns_compared_with_strings() {
    let w = and(
        and(
            Expr::binary(Op::Eq, col("s", "country"), text("france")),
            Expr::binary(
                Op::Gt,
                col("s", "age"),
                Expr::literal(LiteralValue::Int(20)),
            ),
        ),
        and(
            and(
                Expr::binary(Op::In, col("s", "name"), list(&["Joe", "Ann", "Joe"])),
                // Literal on the left; an unqualified column of the only table holding it.
                Expr::binary(Op::NotEq, text("Hall"), Expr::column(None, "venue")),
            ),
            and(
                // Dates and times are left alone; so are LIKE patterns and numbers.
                Expr::binary(Op::Eq, col("s", "born"), text("2010-10-23")),
                Expr::binary(Op::Like, col("s", "country"), text("%an%")),
            ),
        ),
    );
    let probes = value_probes(&plan(w), &contract());
    let got: Vec<(String, Vec<String>)> = probes
        .iter()
        .map(|p| (p.label(), p.literals.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("singer.country".to_owned(), strings(&["france"])),
            ("singer.name".to_owned(), strings(&["Joe", "Ann"])),
            ("concert.venue".to_owned(), strings(&["Hall"])),
        ]
    );
}

#[test]
fn respelling_writes_the_stored_spelling_in_every_shape() {
    let contract = contract();
    let w = and(
        and(
            Expr::binary(Op::Eq, col("s", "country"), text("france")),
            Expr::binary(Op::NotEq, text("hall"), col("c", "venue")),
        ),
        and(
            Expr::binary(Op::In, col("s", "name"), list(&["joe", "Ann"])),
            Expr::binary(Op::NotEq, col("s", "country"), text("usa")),
        ),
    );
    let mut p = plan(w);
    let changes = vec![
        change("singer", "country", "france", &["France"]),
        change("concert", "venue", "hall", &["Hall"]),
        change("singer", "name", "joe", &["Joe", "JOE"]),
        change("singer", "country", "usa", &["USA", "Usa"]),
    ];
    assert_eq!(respell(&mut p, &contract, &changes), 4);
    let want = and(
        and(
            Expr::binary(Op::Eq, col("s", "country"), text("France")),
            Expr::binary(Op::NotEq, text("Hall"), col("c", "venue")),
        ),
        and(
            Expr::binary(Op::In, col("s", "name"), list(&["Joe", "JOE", "Ann"])),
            Expr::unary(
                Op::Not,
                Expr::binary(Op::In, col("s", "country"), list(&["USA", "Usa"])),
            ),
        ),
    );
    assert_eq!(p.where_, Some(want));

    // `=` with several stored spellings becomes IN; other columns are untouched.
    let mut p = plan(Expr::binary(Op::Eq, col("s", "country"), text("usa")));
    assert_eq!(respell(&mut p, &contract, &changes[3..]), 1);
    assert_eq!(
        p.where_,
        Some(Expr::binary(
            Op::In,
            col("s", "country"),
            list(&["USA", "Usa"])
        ))
    );
    let mut p = plan(Expr::binary(Op::Eq, col("s", "name"), text("usa")));
    assert_eq!(respell(&mut p, &contract, &changes), 0);
}
