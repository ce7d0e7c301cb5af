//! Unit tests of the generator.

use nl2sql_plan::{CaseWhen, CastType, Expr, LiteralValue, Op, PlanModel, SelectItem, TableRef};
use nl2sql_state::{Dialect, ErrorCode};

use super::*;

fn col(a: &str, c: &str) -> Expr {
    Expr::column(Some(a), c)
}

fn int(i: i64) -> Expr {
    Expr::literal(LiteralValue::Int(i))
}

fn text(s: &str) -> Expr {
    Expr::literal(LiteralValue::Str(s.into()))
}

fn plan_with(expr: Expr) -> PlanModel {
    PlanModel {
        tables: vec![TableRef {
            name: "t".into(),
            schema_name: None,
            database: None,
            alias: "t".into(),
            ordinal: 0,
        }],
        select_items: vec![SelectItem {
            expr,
            alias: None,
            ordinal: 0,
        }],
        ..PlanModel::default()
    }
}

/// Renders `expr` as the only select item and returns the text between SELECT and FROM.
fn check(dialect: Dialect, expr: Expr, expected: &str) {
    let sql = SqlGenerator::new(dialect)
        .generate(&plan_with(expr))
        .unwrap();
    let got = sql
        .strip_prefix("SELECT ")
        .and_then(|s| s.split(" FROM t AS t").next())
        .unwrap();
    assert_eq!(got, expected, "full SQL: {sql}");
}

#[test]
fn right_operand_of_equal_precedence_keeps_parentheses() {
    let e = Expr::binary(
        Op::Minus,
        col("t", "a"),
        Expr::binary(Op::Minus, col("t", "b"), col("t", "c")),
    );
    check(Dialect::Sqlite, e, "t.a - (t.b - t.c)");
    let e = Expr::binary(
        Op::Minus,
        Expr::binary(Op::Minus, col("t", "a"), col("t", "b")),
        col("t", "c"),
    );
    check(Dialect::Sqlite, e, "t.a - t.b - t.c");
}

#[test]
fn or_under_and_is_parenthesised_and_and_chains_are_flat() {
    let a = Expr::binary(Op::Eq, col("t", "a"), int(1));
    let b = Expr::binary(Op::Eq, col("t", "b"), int(2));
    let or = Expr::binary(Op::Or, a.clone(), b.clone());
    check(
        Dialect::Postgres,
        Expr::binary(Op::And, or, a.clone()),
        "(t.a = 1 OR t.b = 2) AND t.a = 1",
    );
    let chain = Expr::binary(Op::And, Expr::binary(Op::And, a.clone(), b.clone()), a);
    check(Dialect::Postgres, chain, "t.a = 1 AND t.b = 2 AND t.a = 1");
}

#[test]
fn casts_spell_each_dialects_types() {
    let real = || Expr::cast(col("t", "speed"), CastType::Real);
    check(Dialect::Sqlite, real(), "CAST(t.speed AS REAL)");
    check(
        Dialect::Postgres,
        real(),
        "CAST(t.speed AS DOUBLE PRECISION)",
    );
    check(Dialect::MySql, real(), "CAST(t.speed AS DOUBLE)");
    check(Dialect::DuckDb, real(), "CAST(t.speed AS DOUBLE)");
    let int = || Expr::cast(col("t", "n"), CastType::Integer);
    check(Dialect::Sqlite, int(), "CAST(t.n AS INTEGER)");
    check(Dialect::Postgres, int(), "CAST(t.n AS BIGINT)");
    check(Dialect::MySql, int(), "CAST(t.n AS SIGNED)");
    let text = || Expr::cast(col("t", "n"), CastType::Text);
    check(Dialect::Sqlite, text(), "CAST(t.n AS TEXT)");
    check(Dialect::MySql, text(), "CAST(t.n AS CHAR)");
    // An operand of a cast needs no parentheses of its own.
    check(
        Dialect::Sqlite,
        Expr::cast(
            Expr::binary(Op::Plus, col("t", "a"), col("t", "b")),
            CastType::Real,
        ),
        "CAST(t.a + t.b AS REAL)",
    );
}

#[test]
fn not_and_unary_minus_parenthesise_non_atomic_operands() {
    check(
        Dialect::DuckDb,
        Expr::unary(Op::Not, Expr::binary(Op::Eq, col("t", "x"), int(1))),
        "NOT (t.x = 1)",
    );
    check(
        Dialect::DuckDb,
        Expr::unary(
            Op::Minus,
            Expr::binary(Op::Plus, col("t", "a"), col("t", "b")),
        ),
        "-(t.a + t.b)",
    );
    check(Dialect::DuckDb, Expr::unary(Op::Minus, int(-5)), "-(-5)");
    check(
        Dialect::DuckDb,
        Expr::unary(Op::Plus, col("t", "a")),
        "(t.a)",
    );
}

#[test]
fn is_and_is_not_render_null_and_boolean_tests() {
    let n = Expr::binary(Op::Is, col("t", "notes"), Expr::null());
    check(Dialect::Sqlite, n, "t.notes IS NULL");
    let nn = Expr::binary(Op::IsNot, col("t", "notes"), Expr::null());
    check(Dialect::Sqlite, nn, "t.notes IS NOT NULL");
    let t = Expr::binary(
        Op::Is,
        col("t", "ok"),
        Expr::literal(LiteralValue::Bool(true)),
    );
    check(Dialect::Sqlite, t, "t.ok IS TRUE");
}

#[test]
fn in_list_and_single_literal_in() {
    let list = Expr::func("LIST", vec![text("Widgets"), text("Gadgets")]);
    check(
        Dialect::Postgres,
        Expr::binary(Op::In, col("p", "category"), list),
        "p.category IN ('Widgets', 'Gadgets')",
    );
    check(
        Dialect::Postgres,
        Expr::binary(Op::In, col("p", "id"), int(3)),
        "p.id IN (3)",
    );
}

#[test]
fn case_renders_every_branch_in_ordinal_order() {
    let e = Expr::case(
        vec![
            CaseWhen {
                condition: Expr::binary(Op::Eq, col("m", "line"), text("Line 2")),
                result: text("L2"),
                ordinal: 1,
            },
            CaseWhen {
                condition: Expr::binary(Op::Eq, col("m", "line"), text("Line 1")),
                result: text("L1"),
                ordinal: 0,
            },
        ],
        Some(text("other")),
    );
    check(
        Dialect::MySql,
        e,
        "CASE WHEN m.line = 'Line 1' THEN 'L1' WHEN m.line = 'Line 2' THEN 'L2' ELSE 'other' END",
    );
}

#[test]
fn string_literals_are_escaped_per_dialect() {
    check(Dialect::Sqlite, text(r"O'Brien\x"), r"'O''Brien\x'");
    check(Dialect::MySql, text(r"O'Brien\x"), r"'O''Brien\\x'");
}

#[test]
fn identifiers_are_quoted_only_when_needed() {
    check(Dialect::Postgres, col("t", "Name"), r#"t."Name""#);
    check(Dialect::Sqlite, col("t", "Name"), "t.Name");
    check(Dialect::MySql, col("t", "order"), "t.`order`");
    check(Dialect::DuckDb, col("t", r#"we"ird"#), r#"t."we""ird""#);
    check(Dialect::MySql, col("t", "we`ird"), "t.`we``ird`");
}

#[test]
fn literals_render_as_sql_constants() {
    check(Dialect::DuckDb, Expr::null(), "NULL");
    check(
        Dialect::DuckDb,
        Expr::literal(LiteralValue::Bool(false)),
        "false",
    );
    check(Dialect::DuckDb, int(-42), "-42");
    check(
        Dialect::Sqlite,
        Expr::literal(LiteralValue::Float(2.5)),
        "2.5",
    );
    check(
        Dialect::Postgres,
        Expr::literal(LiteralValue::Float(1.0)),
        "1.0",
    );
    // DuckDB would read a decimal literal as DECIMAL, whose arithmetic can overflow.
    check(
        Dialect::DuckDb,
        Expr::literal(LiteralValue::Float(-71.06554729085387)),
        "CAST(-71.06554729085387 AS DOUBLE)",
    );
}

#[test]
fn like_is_case_insensitive_in_every_dialect() {
    let e = Expr::binary(
        Op::Like,
        col("t", "a"),
        Expr::literal(LiteralValue::Str("x%".into())),
    );
    check(Dialect::Sqlite, e.clone(), "t.a LIKE 'x%'");
    check(Dialect::MySql, e.clone(), "t.a LIKE 'x%'");
    check(Dialect::DuckDb, e.clone(), "t.a ILIKE 'x%'");
    check(Dialect::Postgres, e, "t.a ILIKE 'x%'");
}

#[test]
fn non_finite_float_is_a_generation_error() {
    let err = SqlGenerator::new(Dialect::DuckDb)
        .generate(&plan_with(Expr::literal(LiteralValue::Float(f64::NAN))))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::SqlGenFailed);
}

#[test]
fn count_star_and_dialect_functions_are_mapped() {
    let count = Expr::func("count", vec![Expr::column(None, "*")]);
    check(Dialect::Sqlite, count, "COUNT(*)");
    let year = || Expr::func("YEAR", vec![col("r", "started_at")]);
    check(Dialect::DuckDb, year(), "YEAR(r.started_at)");
    check(Dialect::MySql, year(), "YEAR(r.started_at)");
    check(
        Dialect::Sqlite,
        year(),
        "CAST(STRFTIME('%Y', r.started_at) AS INTEGER)",
    );
    check(
        Dialect::Postgres,
        year(),
        "CAST(EXTRACT(YEAR FROM r.started_at) AS INTEGER)",
    );
    let concat = || Expr::func("CONCAT", vec![col("t", "a"), text("-"), col("t", "b")]);
    check(Dialect::Sqlite, concat(), "(t.a || '-' || t.b)");
    // NULL in, NULL out everywhere: DuckDB's and PostgreSQL's CONCAT would skip NULLs.
    check(Dialect::Postgres, concat(), "(t.a || '-' || t.b)");
    check(Dialect::DuckDb, concat(), "(t.a || '-' || t.b)");
    let len = || Expr::func("LENGTH", vec![col("t", "a")]);
    check(Dialect::MySql, len(), "CHAR_LENGTH(t.a)");
    let trunc = || Expr::func("DATE_TRUNC", vec![text("month"), col("t", "d")]);
    check(Dialect::Sqlite, trunc(), "DATE(t.d, 'start of month')");
    check(Dialect::MySql, trunc(), "DATE_FORMAT(t.d, '%Y-%m-01')");
    check(Dialect::DuckDb, trunc(), "DATE_TRUNC('month', t.d)");
    let date = || Expr::func("DATE", vec![col("t", "d")]);
    check(Dialect::Postgres, date(), "CAST(t.d AS DATE)");
    check(Dialect::Sqlite, date(), "DATE(t.d)");
    let strf = || Expr::func("STRFTIME", vec![text("%Y"), col("t", "d")]);
    check(Dialect::DuckDb, strf(), "STRFTIME(t.d, '%Y')");
    check(Dialect::Sqlite, strf(), "STRFTIME('%Y', t.d)");
    check(
        Dialect::Sqlite,
        Expr::func("CEIL", vec![col("t", "x")]),
        "(CAST(t.x AS INTEGER) + (t.x > CAST(t.x AS INTEGER)))",
    );
}

#[test]
fn distinct_aggregates_render_the_same_in_every_dialect() {
    for dialect in [
        Dialect::Sqlite,
        Dialect::DuckDb,
        Dialect::Postgres,
        Dialect::MySql,
        Dialect::Generic,
    ] {
        check(
            dialect,
            Expr::distinct_aggregate("count", col("t", "kind")),
            "COUNT(DISTINCT t.kind)",
        );
        check(
            dialect,
            Expr::distinct_aggregate("SUM", Expr::binary(Op::Multiply, col("t", "a"), int(2))),
            "SUM(DISTINCT t.a * 2)",
        );
    }
    // A dialect function inside keeps its dialect spelling.
    check(
        Dialect::Sqlite,
        Expr::distinct_aggregate("COUNT", Expr::func("YEAR", vec![col("t", "d")])),
        "COUNT(DISTINCT CAST(STRFTIME('%Y', t.d) AS INTEGER))",
    );
}

#[test]
fn distinct_outside_an_aggregate_of_one_column_is_a_generation_error() {
    let fail = |e: Expr| {
        SqlGenerator::new(Dialect::Sqlite)
            .generate(&plan_with(e))
            .unwrap_err()
    };
    let mut lower = Expr::func("LOWER", vec![col("t", "a")]);
    lower.distinct = true;
    let err = fail(lower);
    assert_eq!(err.code, ErrorCode::SqlGenFailed);
    assert!(
        err.message.contains("only to an aggregate"),
        "{}",
        err.message
    );
    let err = fail(Expr::distinct_aggregate("COUNT", Expr::column(None, "*")));
    assert!(err.message.contains("COUNT(DISTINCT *)"), "{}", err.message);
    let mut two = Expr::distinct_aggregate("COUNT", col("t", "a"));
    two.args.push(col("t", "b"));
    assert!(fail(two).message.contains("exactly one argument"));
}

#[test]
fn unsupported_constructs_fail_with_sql_gen_failed() {
    let strf = Expr::func("STRFTIME", vec![text("%Y"), col("t", "d")]);
    let err = SqlGenerator::new(Dialect::Postgres)
        .generate(&plan_with(strf))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::SqlGenFailed);
    assert!(err.message.contains("postgres"), "{}", err.message);
    let err = SqlGenerator::new(Dialect::Sqlite)
        .generate(&plan_with(Expr::func("pg_sleep", vec![int(1)])))
        .unwrap_err();
    assert!(err.message.contains("PG_SLEEP"), "{}", err.message);
    let err = SqlGenerator::new(Dialect::Sqlite)
        .generate(&PlanModel::default())
        .unwrap_err();
    assert_eq!(err.message, "Plan has no tables");
}

#[test]
fn row_limit_caps_the_plan_limit_and_applies_without_one() {
    let mut plan = plan_with(col("t", "a"));
    let g = SqlGenerator::new(Dialect::Sqlite).with_row_limit(100);
    assert!(g.generate(&plan).unwrap().ends_with(" LIMIT 100"));
    plan.limit = Some(10);
    assert!(g.generate(&plan).unwrap().ends_with(" LIMIT 10"));
    plan.limit = Some(5000);
    plan.offset = Some(20);
    assert!(g.generate(&plan).unwrap().ends_with(" LIMIT 100 OFFSET 20"));
}

#[test]
fn constant_sort_keys_are_left_out_and_constant_group_keys_fail() {
    let mut plan = plan_with(col("t", "a"));
    plan.order_by = vec![
        nl2sql_plan::OrderItem {
            expr: int(-3),
            direction: nl2sql_plan::Direction::Desc,
            ordinal: 0,
        },
        nl2sql_plan::OrderItem {
            expr: col("t", "a"),
            direction: nl2sql_plan::Direction::Asc,
            ordinal: 1,
        },
    ];
    let sql = SqlGenerator::new(Dialect::Sqlite).generate(&plan).unwrap();
    assert_eq!(sql, "SELECT t.a FROM t AS t ORDER BY t.a LIMIT 10000");
    plan.group_by = vec![nl2sql_plan::GroupByItem {
        expr: int(1),
        ordinal: 0,
    }];
    let err = SqlGenerator::new(Dialect::Sqlite)
        .generate(&plan)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::SqlGenFailed);
}

/// A schema with one table `"Orders"` of columns `id` and `"Total"`.
fn orders_contract() -> SchemaContract {
    use nl2sql_state::{ColumnContract, TableContract};
    let mut contract = SchemaContract::new("ds", "postgres");
    let mut table = TableContract::default();
    table.table.schema_name = "public".into();
    table.table.table_name = "Orders".into();
    for name in ["id", "Total"] {
        table.columns.insert(
            name.into(),
            ColumnContract {
                name: name.into(),
                data_type: "INTEGER".into(),
                is_nullable: true,
                is_primary_key: false,
            },
        );
    }
    contract.add_table(table);
    contract
}

#[test]
fn names_follow_the_schema_spelling_when_a_schema_is_given() {
    let contract = orders_contract();
    let mut plan = plan_with(col("o", "TOTAL"));
    plan.tables[0].name = "orders".into();
    plan.tables[0].alias = "o".into();
    plan.select_items.push(SelectItem {
        expr: Expr::column(None, "ID"),
        alias: Some("Key".into()),
        ordinal: 1,
    });
    let g = SqlGenerator::new(Dialect::Postgres).with_schema(&contract);
    assert_eq!(
        g.generate(&plan).unwrap(),
        r#"SELECT o."Total", id AS "Key" FROM "Orders" AS o LIMIT 10000"#
    );
    let plain = SqlGenerator::new(Dialect::Postgres)
        .generate(&plan)
        .unwrap();
    assert_eq!(
        plain,
        r#"SELECT o."TOTAL", "ID" AS "Key" FROM orders AS o LIMIT 10000"#
    );
}

/// `sales.orders AS o` joined with `Warehouse.CRM.customers AS c` (catalog, schema) and
/// `crm.regions AS r` (schema only).
fn qualified_join_plan() -> PlanModel {
    use nl2sql_plan::{JoinSpec, JoinType};
    let table =
        |name: &str, schema: Option<&str>, database: Option<&str>, alias: &str, ordinal| TableRef {
            name: name.into(),
            schema_name: schema.map(Into::into),
            database: database.map(Into::into),
            alias: alias.into(),
            ordinal,
        };
    let join = |left: &str, right: &str, on: (&str, &str), join_type, ordinal| JoinSpec {
        left_alias: left.into(),
        right_alias: right.into(),
        join_type,
        condition: Expr::binary(Op::Eq, col(left, on.0), col(right, on.1)),
        ordinal,
    };
    PlanModel {
        tables: vec![
            table("orders", Some("sales"), None, "o", 0),
            table("customers", Some("CRM"), Some("Warehouse"), "c", 1),
            table("regions", Some("crm"), None, "r", 2),
        ],
        joins: vec![
            join("o", "c", ("customer_id", "id"), JoinType::Inner, 0),
            join("c", "r", ("region_id", "id"), JoinType::Left, 1),
        ],
        select_items: vec![
            SelectItem {
                expr: col("c", "name"),
                alias: None,
                ordinal: 0,
            },
            SelectItem {
                expr: col("r", "name"),
                alias: Some("region".into()),
                ordinal: 1,
            },
        ],
        ..PlanModel::default()
    }
}

#[test]
fn joined_tables_keep_their_schema_and_catalog_in_every_dialect() {
    let plan = qualified_join_plan();
    let cases = [
        (
            Dialect::Postgres,
            r#"SELECT c.name, r.name AS region FROM sales.orders AS o INNER JOIN "Warehouse"."CRM".customers AS c ON o.customer_id = c.id LEFT JOIN crm.regions AS r ON c.region_id = r.id LIMIT 10000"#,
        ),
        (
            Dialect::DuckDb,
            r#"SELECT c.name, r.name AS region FROM sales.orders AS o INNER JOIN "Warehouse"."CRM".customers AS c ON o.customer_id = c.id LEFT JOIN crm.regions AS r ON c.region_id = r.id LIMIT 10000"#,
        ),
        (
            Dialect::Generic,
            r#"SELECT c.name, r.name AS region FROM sales.orders AS o INNER JOIN "Warehouse"."CRM".customers AS c ON o.customer_id = c.id LEFT JOIN crm.regions AS r ON c.region_id = r.id LIMIT 10000"#,
        ),
        (
            Dialect::Sqlite,
            "SELECT c.name, r.name AS region FROM sales.orders AS o INNER JOIN Warehouse.CRM.customers AS c ON o.customer_id = c.id LEFT JOIN crm.regions AS r ON c.region_id = r.id LIMIT 10000",
        ),
        (
            Dialect::MySql,
            "SELECT c.name, r.name AS region FROM sales.orders AS o INNER JOIN Warehouse.CRM.customers AS c ON o.customer_id = c.id LEFT JOIN crm.regions AS r ON c.region_id = r.id LIMIT 10000",
        ),
    ];
    for (dialect, expected) in cases {
        let sql = SqlGenerator::new(dialect).generate(&plan).unwrap();
        assert_eq!(sql, expected, "{dialect:?}");
        // Every table appears once, qualified as the plan says.
        for t in &plan.tables {
            let alias = format!(" AS {} ", t.alias);
            assert_eq!(sql.matches(alias.as_str()).count(), 1, "{dialect:?}: {sql}");
        }
    }
    // A quoted qualifier follows the dialect's quote character.
    let mut plan = qualified_join_plan();
    plan.tables[1].schema_name = Some("crm data".into());
    let sql = SqlGenerator::new(Dialect::MySql).generate(&plan).unwrap();
    assert!(
        sql.contains("INNER JOIN Warehouse.`crm data`.customers AS c ON"),
        "{sql}"
    );
    let sql = SqlGenerator::new(Dialect::Sqlite).generate(&plan).unwrap();
    assert!(
        sql.contains(r#"INNER JOIN Warehouse."crm data".customers AS c ON"#),
        "{sql}"
    );
}

#[test]
fn joined_tables_keep_their_qualifier_with_the_schema_spelling() {
    use nl2sql_state::{ColumnContract, TableContract};
    let mut contract = SchemaContract::new("ds", "postgres");
    for (schema, name) in [
        ("Sales", "Orders"),
        ("CRM", "Customers"),
        ("crm", "regions"),
    ] {
        let mut table = TableContract::default();
        table.table.schema_name = schema.into();
        table.table.table_name = name.into();
        for column in ["id", "customer_id", "region_id", "name"] {
            table.columns.insert(
                column.into(),
                ColumnContract {
                    name: column.into(),
                    data_type: "INTEGER".into(),
                    is_nullable: true,
                    is_primary_key: column == "id",
                },
            );
        }
        contract.add_table(table);
    }
    let mut plan = qualified_join_plan();
    plan.tables[0].schema_name = Some("sales".into());
    plan.tables[1].schema_name = Some("crm".into());
    plan.tables[1].database = None;
    let sql = SqlGenerator::new(Dialect::Postgres)
        .with_schema(&contract)
        .generate(&plan)
        .unwrap();
    assert_eq!(
        sql,
        r#"SELECT c.name, r.name AS region FROM "Sales"."Orders" AS o INNER JOIN "CRM"."Customers" AS c ON o.customer_id = c.id LEFT JOIN crm.regions AS r ON c.region_id = r.id LIMIT 10000"#
    );
}

#[test]
fn a_table_no_join_introduces_is_a_generation_error_not_dropped() {
    let mut plan = qualified_join_plan();
    plan.joins.truncate(1);
    let err = SqlGenerator::new(Dialect::Postgres)
        .generate(&plan)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::SqlGenFailed);
    assert!(err.message.contains("'r'"), "{}", err.message);
}

/// `SELECT AVG(s.price) FROM t AS s` with the given filter, as a sub-query plan.
fn average_price(filter: Option<Expr>) -> PlanModel {
    let mut inner = plan_with(Expr::func("AVG", vec![col("s", "price")]));
    inner.tables[0].alias = "s".into();
    inner.where_ = filter;
    inner
}

#[test]
fn scalar_subquery_renders_its_plan_without_the_row_limit() {
    let mut plan = plan_with(col("t", "name"));
    plan.where_ = Some(Expr::binary(
        Op::Gt,
        col("t", "price"),
        Expr::subquery(average_price(Some(Expr::binary(
            Op::Eq,
            col("s", "kind"),
            text("x"),
        )))),
    ));
    let sql = SqlGenerator::new(Dialect::Sqlite)
        .with_row_limit(50)
        .generate(&plan)
        .unwrap();
    assert_eq!(
        sql,
        "SELECT t.name FROM t AS t WHERE t.price > (SELECT AVG(s.price) FROM t AS s WHERE s.kind = 'x') LIMIT 50"
    );
}

#[test]
fn in_subquery_and_its_negation_render_as_in_select() {
    let mut keys = plan_with(col("o", "customer_id"));
    keys.tables[0].name = "orders".into();
    keys.tables[0].alias = "o".into();
    keys.limit = Some(3);
    let member = Expr::binary(Op::In, col("t", "id"), Expr::subquery(keys));
    check(
        Dialect::Postgres,
        member.clone(),
        "t.id IN (SELECT o.customer_id FROM orders AS o LIMIT 3)",
    );
    check(
        Dialect::Sqlite,
        Expr::unary(Op::Not, member.clone()),
        "NOT (t.id IN (SELECT o.customer_id FROM orders AS o LIMIT 3))",
    );
    // MySQL and MariaDB reject a LIMIT there (error 1235): a generation error, not a
    // statement the server refuses.
    let err = SqlGenerator::new(Dialect::MySql)
        .generate(&plan_with(member))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::SqlGenFailed);
    assert!(err.message.contains("mysql"), "{}", err.message);
}

#[test]
fn subquery_offset_without_limit_gets_a_limit_every_engine_accepts() {
    let mut inner = average_price(None);
    inner.offset = Some(2);
    let mut plan = plan_with(col("t", "name"));
    plan.where_ = Some(Expr::binary(
        Op::Lt,
        col("t", "price"),
        Expr::subquery(inner),
    ));
    let sql = SqlGenerator::new(Dialect::Sqlite).generate(&plan).unwrap();
    assert!(
        sql.contains("(SELECT AVG(s.price) FROM t AS s LIMIT 9223372036854775807 OFFSET 2)"),
        "{sql}"
    );
}

#[test]
fn subquery_of_several_columns_is_a_generation_error() {
    let mut inner = average_price(None);
    inner.select_items.push(SelectItem {
        expr: col("s", "name"),
        alias: None,
        ordinal: 1,
    });
    let mut plan = plan_with(col("t", "name"));
    plan.where_ = Some(Expr::binary(
        Op::Gt,
        col("t", "price"),
        Expr::subquery(inner),
    ));
    let err = SqlGenerator::new(Dialect::Sqlite)
        .generate(&plan)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::SqlGenFailed);
    assert!(
        err.message.contains("exactly one column"),
        "{}",
        err.message
    );
}

#[test]
fn subquery_names_follow_the_schema_spelling_in_their_own_scope() {
    let contract = orders_contract();
    let mut inner = plan_with(Expr::func("MAX", vec![col("p", "TOTAL")]));
    inner.tables[0].name = "ORDERS".into();
    inner.tables[0].alias = "p".into();
    let mut plan = plan_with(col("o", "ID"));
    plan.tables[0].name = "orders".into();
    plan.tables[0].alias = "o".into();
    plan.where_ = Some(Expr::binary(
        Op::Eq,
        col("o", "total"),
        Expr::subquery(inner),
    ));
    let g = SqlGenerator::new(Dialect::Postgres).with_schema(&contract);
    assert_eq!(
        g.generate(&plan).unwrap(),
        r#"SELECT o.id FROM "Orders" AS o WHERE o."Total" = (SELECT MAX(p."Total") FROM "Orders" AS p) LIMIT 10000"#
    );
}
