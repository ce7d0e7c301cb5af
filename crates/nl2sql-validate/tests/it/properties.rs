//! Property tests: the guard never panics or hangs on arbitrary input, and accepts every
//! query generated from a grammar of valid queries over the fixture schema.

use nl2sql_state::Dialect;
use nl2sql_validate::{GuardContext, GuardStatus, SqlGuard, schema_from_ddl};
use proptest::prelude::*;

const DDL: &str = "
CREATE TABLE factories (id INTEGER PRIMARY KEY, name TEXT NOT NULL, location TEXT);
CREATE TABLE machines (id INTEGER PRIMARY KEY, factory_id INTEGER REFERENCES factories(id), name TEXT, line TEXT);
CREATE TABLE production_runs (id INTEGER PRIMARY KEY, machine_id INTEGER REFERENCES machines(id),
    operator TEXT, quantity_produced INTEGER, scrap_count INTEGER);
";

/// A fixture table: name, alias, columns, and (foreign key column, parent table index).
type FixtureTable = (
    &'static str,
    &'static str,
    &'static [&'static str],
    Option<(&'static str, usize)>,
);

const TABLES: &[FixtureTable] = &[
    ("factories", "f", &["id", "name", "location"], None),
    (
        "machines",
        "m",
        &["id", "factory_id", "name", "line"],
        Some(("factory_id", 0)),
    ),
    (
        "production_runs",
        "r",
        &[
            "id",
            "machine_id",
            "operator",
            "quantity_produced",
            "scrap_count",
        ],
        Some(("machine_id", 1)),
    ),
];

fn guard(dialect: Dialect) -> SqlGuard {
    let contract = schema_from_ddl(DDL, Dialect::Generic, "plant").expect("fixture parses");
    SqlGuard::new(GuardContext::new("plant", dialect, &contract))
}

fn dialect() -> impl Strategy<Value = Dialect> {
    prop::sample::select(Dialect::ALL.to_vec())
}

/// A scalar expression over the columns of `alias`.
fn expr(alias: &'static str, cols: &'static [&'static str]) -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        prop::sample::select(cols.to_vec()).prop_map(move |c| format!("{alias}.{c}")),
        (0i64..1000).prop_map(|n| n.to_string()),
        "[a-z ]{0,8}".prop_map(|s| format!("'{s}'")),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec!["+", "-", "*", "=", "<>", "<", ">=", "AND", "OR"]),
                inner.clone()
            )
                .prop_map(|(l, op, r)| format!("({l} {op} {r})")),
            inner.clone().prop_map(|e| format!("COALESCE({e}, 0)")),
            inner.clone().prop_map(|e| format!("({e}) IS NULL")),
            (inner.clone(), inner.clone(), inner)
                .prop_map(|(c, a, b)| format!("CASE WHEN {c} THEN {a} ELSE {b} END")),
        ]
    })
}

/// A valid query over the fixture schema.
fn query() -> impl Strategy<Value = String> {
    (0..TABLES.len(), any::<bool>(), any::<bool>(), 1usize..4, any::<bool>(), 0u8..3).prop_flat_map(
        |(t, join, group, n_cols, order, wrap)| {
            let (table, alias, cols, fk) = TABLES[t];
            let select = prop::collection::vec(prop::sample::select(cols.to_vec()), n_cols);
            (Just((table, alias, cols, fk, join, group, order, wrap)), select, expr(alias, cols))
        },
    )
    .prop_map(|((table, alias, cols, fk, join, group, order, wrap), picked, predicate)| {
        let mut from = format!("{table} AS {alias}");
        if let (true, Some((fk_col, parent))) = (join, fk) {
            let (ptable, palias, _, _) = TABLES[parent];
            from.push_str(&format!(" JOIN {ptable} AS {palias} ON {palias}.id = {alias}.{fk_col}"));
        }
        let items: Vec<String> = picked.iter().enumerate().map(|(i, c)| format!("{alias}.{c} AS c{i}")).collect();
        let mut sql = if group {
            format!(
                "SELECT {alias}.{} AS g, COUNT(*) AS n FROM {from} WHERE {predicate} GROUP BY {alias}.{} HAVING COUNT(*) > 0",
                cols[0], cols[0]
            )
        } else {
            format!("SELECT {} FROM {from} WHERE {predicate}", items.join(", "))
        };
        if order {
            sql.push_str(if group { " ORDER BY n DESC" } else { " ORDER BY c0" });
        }
        match wrap {
            1 => format!("WITH q AS ({sql}) SELECT * FROM q"),
            2 => format!("SELECT * FROM ({sql}) AS d LIMIT 10"),
            _ => sql,
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}", d in dialect()) {
        let report = guard(d).check(&text);
        prop_assert_eq!(report.sql, text);
        prop_assert_eq!(report.status == GuardStatus::Ok, report.issues.is_empty());
    }

    #[test]
    fn sql_shaped_noise_never_panics(parts in prop::collection::vec(prop::sample::select(vec![
        "SELECT", "FROM", "WHERE", "(", ")", ",", "machines", "m", "id", "*", "JOIN", "ON", "=", "'x'", "1",
        "UNION", "WITH", "AS", "GROUP BY", "ORDER BY", "LIMIT", ";", "DROP", "read_csv", "@@v", "\"q\"", "--", "/*",
    ]), 0..40), d in dialect()) {
        let sql = parts.join(" ");
        let report = guard(d).check(&sql);
        prop_assert_eq!(report.status == GuardStatus::Ok, report.issues.is_empty());
    }

    #[test]
    fn generated_valid_queries_are_accepted(sql in query(), d in dialect()) {
        let report = guard(d).check(&sql);
        prop_assert_eq!(report.status, GuardStatus::Ok, "{}\n{}", sql, report.to_text());
    }

    #[test]
    fn mutated_valid_queries_never_panic(sql in query(), cut in 0usize..400, insert in "\\PC{0,3}", d in dialect()) {
        let mut chars: Vec<char> = sql.chars().collect();
        let at = cut.min(chars.len());
        chars.splice(at..at, insert.chars());
        let mutated: String = chars.into_iter().collect();
        let _ = guard(d).check(&mutated);
    }
}

#[test]
fn deep_nesting_in_every_position_is_bounded() {
    let g = guard(Dialect::Postgres);
    let cases = [
        format!(
            "SELECT {}1{} FROM machines",
            "(".repeat(400),
            ")".repeat(400)
        ),
        format!(
            "SELECT 1 FROM machines WHERE id IN {}SELECT 1{}",
            "(".repeat(150)
                .replace('(', "(SELECT 1 FROM machines WHERE id IN ("),
            ")".repeat(300)
        ),
        format!("SELECT {} 1 FROM machines", "NOT ".repeat(5000)),
        format!("SELECT {}", "-".repeat(50_000)),
    ];
    for sql in cases {
        let report = g.check(&sql);
        assert_ne!(
            report.status,
            GuardStatus::Ok,
            "{}",
            &sql[..80.min(sql.len())]
        );
    }
    // A long flat operator chain is deep as a tree but fine as SQL: accepted, no overflow.
    let chain = format!("SELECT 1 {} AS total FROM machines", "+ id ".repeat(20_000));
    let report = g.check(&chain);
    assert_eq!(report.status, GuardStatus::Ok, "{}", report.to_text());
}
