//! Property test: arbitrary valid plans over the fixture schema pass the logical validator,
//! render in every dialect, pass the guard, and run on SQLite and on DuckDB (the same data,
//! loaded from the portable fixture), where both engines return the same number of rows.
//! Date columns are left out: comparing them with arbitrary text is a D1 finding by design.

use nl2sql_plan::{
    CaseWhen, Direction, Expr, GroupByItem, JoinSpec, JoinType, LiteralValue, Op, OrderItem,
    PlanModel, SelectItem, TableRef,
};
use nl2sql_sqlgen::SqlGenerator;
use proptest::prelude::*;

use crate::fixture::{
    DIALECTS, assert_guard_ok, connect, connect_duckdb, contract, run_duckdb, run_sqlite,
};

/// One table of a join path: name, alias, integer columns, text columns, and the join
/// condition columns `(left alias, left column, own column)` when it is not the first.
#[derive(Debug)]
struct PathTable {
    name: &'static str,
    alias: &'static str,
    ints: &'static [&'static str],
    texts: &'static [&'static str],
    join: Option<(&'static str, &'static str, &'static str)>,
}

const RUNS: PathTable = PathTable {
    name: "production_runs",
    alias: "r",
    ints: &["id", "quantity_produced", "scrap_count", "machine_id"],
    texts: &["operator", "shift"],
    join: None,
};
const MACHINES: PathTable = PathTable {
    name: "machines",
    alias: "m",
    ints: &["id", "factory_id"],
    texts: &["name", "line"],
    join: Some(("r", "machine_id", "id")),
};
const FACTORIES: PathTable = PathTable {
    name: "factories",
    alias: "f",
    ints: &["id", "capacity_index"],
    texts: &["name", "location"],
    join: Some(("m", "factory_id", "id")),
};
const PRODUCTS: PathTable = PathTable {
    name: "products",
    alias: "p",
    ints: &["id"],
    texts: &["sku", "name", "category"],
    join: Some(("r", "product_id", "id")),
};

fn paths() -> Vec<Vec<&'static PathTable>> {
    vec![
        vec![&RUNS],
        vec![&RUNS, &MACHINES],
        vec![&RUNS, &MACHINES, &FACTORIES],
        vec![&RUNS, &PRODUCTS],
    ]
}

fn col(a: &str, c: &str) -> Expr {
    Expr::column(Some(a), c)
}

fn columns(path: &[&PathTable], ints: bool) -> Vec<Expr> {
    path.iter()
        .flat_map(|t| {
            let cols = if ints { t.ints } else { t.texts };
            cols.iter().map(|c| col(t.alias, c))
        })
        .collect()
}

fn text_lit() -> impl Strategy<Value = Expr> {
    prop_oneof![
        Just("Line 1".to_owned()),
        Just("day".to_owned()),
        Just("O'Brien \\ %".to_owned()),
        "[a-zA-Z0-9 '%_-]{0,8}",
    ]
    .prop_map(|s| Expr::literal(LiteralValue::Str(s)))
}

fn int_lit() -> impl Strategy<Value = Expr> {
    prop_oneof![
        (-1000i64..1000).prop_map(|i| Expr::literal(LiteralValue::Int(i))),
        (-100.0f64..100.0).prop_map(|x| Expr::literal(LiteralValue::Float(x))),
    ]
}

fn int_expr(path: &[&PathTable]) -> BoxedStrategy<Expr> {
    let leaf = prop_oneof![
        3 => proptest::sample::select(columns(path, true)),
        1 => int_lit(),
    ];
    let texts = columns(path, false);
    leaf.prop_recursive(3, 12, 3, move |inner| {
        let texts = texts.clone();
        prop_oneof![
            (
                proptest::sample::select(vec![Op::Plus, Op::Minus, Op::Multiply]),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(op, l, r)| Expr::binary(op, l, r)),
            inner.clone().prop_map(|e| Expr::unary(Op::Minus, e)),
            inner.clone().prop_map(|e| Expr::unary(Op::Plus, e)),
            inner.clone().prop_map(|e| Expr::func("ABS", vec![e])),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::func("COALESCE", vec![a, b])),
            proptest::sample::select(texts).prop_map(|t| Expr::func("LENGTH", vec![t])),
            (bool_leaf_cmp(inner.clone()), inner.clone(), inner.clone()).prop_map(|(c, a, b)| {
                Expr::case(
                    vec![CaseWhen {
                        condition: c,
                        result: a,
                        ordinal: 0,
                    }],
                    Some(b),
                )
            }),
        ]
    })
    .boxed()
}

fn bool_leaf_cmp(ints: impl Strategy<Value = Expr> + Clone) -> impl Strategy<Value = Expr> {
    (
        proptest::sample::select(vec![Op::Eq, Op::NotEq, Op::Lt, Op::LtEq, Op::Gt, Op::GtEq]),
        ints.clone(),
        ints,
    )
        .prop_map(|(op, l, r)| Expr::binary(op, l, r))
}

fn text_expr(path: &[&PathTable]) -> BoxedStrategy<Expr> {
    let cols = proptest::sample::select(columns(path, false));
    prop_oneof![
        3 => cols.clone(),
        1 => cols.clone().prop_map(|c| Expr::func("UPPER", vec![c])),
        1 => cols.clone().prop_map(|c| Expr::func("LOWER", vec![c])),
        1 => (cols.clone(), text_lit()).prop_map(|(a, b)| Expr::func("CONCAT", vec![a, b])),
    ]
    .boxed()
}

fn bool_expr(path: &[&PathTable]) -> BoxedStrategy<Expr> {
    let ints = int_expr(path);
    let texts = text_expr(path);
    let text_cols = proptest::sample::select(columns(path, false));
    let all_cols = proptest::sample::select(
        columns(path, true)
            .into_iter()
            .chain(columns(path, false))
            .collect::<Vec<_>>(),
    );
    let leaf = prop_oneof![
        bool_leaf_cmp(ints.clone()),
        (texts.clone(), text_lit()).prop_map(|(l, r)| Expr::binary(Op::Eq, l, r)),
        (text_cols.clone(), text_lit()).prop_map(|(l, r)| Expr::binary(Op::Like, l, r)),
        (text_cols, proptest::collection::vec(text_lit(), 1..4))
            .prop_map(|(l, items)| Expr::binary(Op::In, l, Expr::func("LIST", items))),
        (ints, int_lit()).prop_map(|(l, r)| Expr::binary(Op::In, l, r)),
        (all_cols, any::<bool>()).prop_map(|(c, not)| {
            Expr::binary(if not { Op::IsNot } else { Op::Is }, c, Expr::null())
        }),
    ];
    leaf.prop_recursive(3, 10, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(l, r)| Expr::binary(Op::And, l, r)),
            (inner.clone(), inner.clone()).prop_map(|(l, r)| Expr::binary(Op::Or, l, r)),
            inner.prop_map(|e| Expr::unary(Op::Not, e)),
        ]
    })
    .boxed()
}

fn base_plan(path: &[&PathTable], join_types: &[JoinType]) -> PlanModel {
    let tables = path
        .iter()
        .enumerate()
        .map(|(i, t)| TableRef {
            name: t.name.into(),
            schema_name: None,
            database: None,
            alias: t.alias.into(),
            ordinal: i as i64,
        })
        .collect();
    let joins = path
        .iter()
        .skip(1)
        .enumerate()
        .filter_map(|(i, t)| {
            let (la, lc, rc) = t.join?;
            Some(JoinSpec {
                left_alias: la.into(),
                right_alias: t.alias.into(),
                join_type: join_types[i % join_types.len()],
                condition: Expr::binary(Op::Eq, col(la, lc), col(t.alias, rc)),
                ordinal: i as i64,
            })
        })
        .collect();
    PlanModel {
        tables,
        joins,
        ..PlanModel::default()
    }
}

fn plan_for(path: Vec<&'static PathTable>) -> BoxedStrategy<PlanModel> {
    let scalar = prop_oneof![int_expr(&path), text_expr(&path)];
    let select = proptest::collection::vec(scalar.clone(), 1..4);
    let where_ = proptest::option::of(bool_expr(&path));
    let join_types = proptest::collection::vec(
        proptest::sample::select(vec![JoinType::Inner, JoinType::Left, JoinType::Right]),
        1..3,
    );
    let group_col = proptest::sample::select(
        columns(&path, true)
            .into_iter()
            .chain(columns(&path, false))
            .collect::<Vec<_>>(),
    );
    let agg_arg = int_expr(&path);
    let aggregate = proptest::option::of((
        group_col,
        proptest::sample::select(vec!["SUM", "AVG", "MIN", "MAX", "COUNT"]),
        agg_arg,
        any::<bool>(),
        any::<bool>(),
    ));
    let order = proptest::collection::vec((scalar, any::<bool>()), 0..3);
    let limit = proptest::option::of(1i64..50);
    let offset = proptest::option::of(0i64..5);
    (
        select,
        where_,
        join_types,
        aggregate,
        order,
        (limit, offset, any::<bool>()),
    )
        .prop_map(
            move |(select, where_, join_types, aggregate, order, (limit, offset, distinct))| {
                let mut plan = base_plan(&path, &join_types);
                plan.where_ = where_;
                plan.limit = limit;
                plan.offset = offset;
                plan.distinct = distinct;
                match aggregate {
                    Some((group, func, arg, having, distinct_agg)) => {
                        let agg = if distinct_agg {
                            Expr::distinct_aggregate(func, arg)
                        } else {
                            Expr::func(func, vec![arg])
                        };
                        plan.group_by = vec![GroupByItem {
                            expr: group.clone(),
                            ordinal: 0,
                        }];
                        plan.select_items = vec![
                            SelectItem {
                                expr: group,
                                alias: Some("g".into()),
                                ordinal: 0,
                            },
                            SelectItem {
                                expr: agg.clone(),
                                alias: Some("agg".into()),
                                ordinal: 1,
                            },
                        ];
                        if having {
                            plan.having = Some(Expr::binary(
                                Op::Gt,
                                agg,
                                Expr::literal(LiteralValue::Int(0)),
                            ));
                        }
                        plan.order_by = vec![OrderItem {
                            expr: Expr::column(None, "agg"),
                            direction: Direction::Desc,
                            ordinal: 0,
                        }];
                    }
                    None => {
                        plan.select_items = select
                            .into_iter()
                            .enumerate()
                            .map(|(i, expr)| SelectItem {
                                expr,
                                alias: Some(format!("c{i}")),
                                ordinal: i as i64,
                            })
                            .collect();
                        plan.order_by = order
                            .into_iter()
                            .enumerate()
                            .map(|(i, (expr, desc))| OrderItem {
                                expr,
                                direction: if desc {
                                    Direction::Desc
                                } else {
                                    Direction::Asc
                                },
                                ordinal: i as i64,
                            })
                            .collect();
                        // SELECT DISTINCT needs its ORDER BY keys among the output columns.
                        if plan.distinct {
                            plan.order_by.clear();
                        }
                    }
                }
                plan
            },
        )
        .boxed()
}

fn any_plan() -> impl Strategy<Value = PlanModel> {
    proptest::sample::select(paths()).prop_flat_map(plan_for)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn generated_plans_render_pass_the_guard_and_run_on_sqlite_and_duckdb(plan in any_plan()) {
        thread_local! {
            static CONTRACTS: Vec<nl2sql_state::SchemaContract> =
                DIALECTS.iter().map(|d| contract(*d)).collect();
            static CONN: rusqlite::Connection = connect();
            static DUCK: duckdb::Connection = connect_duckdb();
        }
        let json = serde_json::to_string(&plan).unwrap();
        prop_assert_eq!(&nl2sql_plan::parse_plan(&json).unwrap(), &plan);
        CONTRACTS.with(|contracts| {
            let mut counts = Vec::new();
            for (dialect, contract) in DIALECTS.iter().zip(contracts) {
                let sql = SqlGenerator::new(*dialect)
                    .with_schema(contract).with_row_limit(100).generate(&plan).unwrap();
                assert_guard_ok(contract, *dialect, &sql);
                if *dialect == nl2sql_state::Dialect::Sqlite {
                    let ctx = nl2sql_validate::LogicalContext::new("manufacturing", contract);
                    let report = nl2sql_validate::validate_plan(Some(&plan), &ctx);
                    assert!(report.is_ok(), "logical validator rejected a valid plan: {:?}", report.findings);
                }
                if *dialect == nl2sql_state::Dialect::Sqlite {
                    counts.push(("sqlite", CONN.with(|conn| run_sqlite(conn, &sql)).unwrap(), sql.clone()));
                }
                if *dialect == nl2sql_state::Dialect::DuckDb {
                    counts.push(("duckdb", DUCK.with(|conn| run_duckdb(conn, &sql)).unwrap(), sql.clone()));
                }
            }
            assert_eq!(counts.len(), 2);
            assert_eq!(counts[0].1, counts[1].1, "engines disagree on the row count: {counts:?}");
        });
    }
}
