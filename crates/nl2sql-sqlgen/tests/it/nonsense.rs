//! Property test: plans that ignore every rule (unknown aliases, wrong kinds, missing
//! operands, foreign fields, broken ordinals) give findings or errors, never panics.

use nl2sql_plan::{
    CaseWhen, Expr, ExprKind, GroupByItem, JoinSpec, JoinType, LiteralValue, Op, OrderItem,
    PlanModel, SelectItem, TableRef,
};
use nl2sql_sqlgen::SqlGenerator;
use nl2sql_validate::{LogicalContext, validate_plan};
use proptest::prelude::*;

use crate::fixture::{DIALECTS, contract};

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("m".to_owned()),
        Just("machines".to_owned()),
        Just("id".to_owned()),
        Just("*".to_owned()),
        Just("LIST".to_owned()),
        Just("count".to_owned()),
        Just("DATE_TRUNC".to_owned()),
        "[a-zA-Z_\"`'\\\\ é]{0,6}",
    ]
}

fn op() -> impl Strategy<Value = Option<Op>> {
    proptest::option::of(proptest::sample::select(vec![
        Op::Eq,
        Op::NotEq,
        Op::Gt,
        Op::Lt,
        Op::GtEq,
        Op::LtEq,
        Op::Plus,
        Op::Minus,
        Op::Multiply,
        Op::Divide,
        Op::Modulo,
        Op::And,
        Op::Or,
        Op::Like,
        Op::In,
        Op::Not,
        Op::Is,
        Op::IsNot,
    ]))
}

fn value() -> impl Strategy<Value = Option<LiteralValue>> {
    proptest::option::of(prop_oneof![
        any::<bool>().prop_map(LiteralValue::Bool),
        any::<i64>().prop_map(LiteralValue::Int),
        any::<f64>().prop_map(LiteralValue::Float),
        "[ -~é]{0,12}".prop_map(LiteralValue::Str),
    ])
}

fn kind() -> impl Strategy<Value = ExprKind> {
    proptest::sample::select(vec![
        ExprKind::Literal,
        ExprKind::Column,
        ExprKind::Func,
        ExprKind::Binary,
        ExprKind::Unary,
        ExprKind::Case,
    ])
}

fn expr() -> impl Strategy<Value = Expr> {
    let leaf = (
        kind(),
        value(),
        any::<bool>(),
        proptest::option::of(name()),
        proptest::option::of(name()),
    )
        .prop_map(|(kind, value, is_null, alias, column)| {
            let mut e = Expr::column(alias.as_deref(), column.as_deref().unwrap_or(""));
            e.kind = kind;
            e.value = value;
            e.is_null = is_null;
            e.column_name = column;
            e
        });
    leaf.prop_recursive(4, 24, 3, |inner| {
        (
            kind(),
            op(),
            proptest::option::of(inner.clone()),
            proptest::option::of(inner.clone()),
            proptest::collection::vec(inner.clone(), 0..3),
            proptest::option::of(name()),
            proptest::collection::vec((inner.clone(), inner.clone(), -1i64..3), 0..2),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(
                |(kind, op, left, right, args, func, whens, agg, distinct)| {
                    let mut e = Expr::func(func.as_deref().unwrap_or(""), args);
                    e.kind = kind;
                    e.func_name = func;
                    e.op = op;
                    e.is_aggregate = agg;
                    e.distinct = distinct;
                    e.left = left.clone().map(Box::new);
                    e.right = right.map(Box::new);
                    e.expr = left.map(Box::new);
                    e.whens = whens
                        .into_iter()
                        .map(|(condition, result, ordinal)| CaseWhen {
                            condition,
                            result,
                            ordinal,
                        })
                        .collect();
                    e
                },
            )
    })
}

fn plan() -> impl Strategy<Value = PlanModel> {
    (
        proptest::collection::vec((name(), name(), -1i64..3), 0..4),
        proptest::collection::vec((name(), name(), expr(), -1i64..3), 0..3),
        proptest::collection::vec((expr(), proptest::option::of(name()), -1i64..3), 0..3),
        proptest::option::of(expr()),
        proptest::collection::vec(expr(), 0..2),
        proptest::option::of(expr()),
        proptest::collection::vec(expr(), 0..2),
        (
            proptest::option::of(-2i64..5),
            proptest::option::of(-2i64..5),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(tables, joins, select, where_, group, having, order, (limit, offset, distinct))| {
                PlanModel {
                    distinct,
                    tables: tables
                        .into_iter()
                        .map(|(name, alias, ordinal)| TableRef {
                            name,
                            schema_name: None,
                            database: None,
                            alias,
                            ordinal,
                        })
                        .collect(),
                    joins: joins
                        .into_iter()
                        .map(|(l, r, condition, ordinal)| JoinSpec {
                            left_alias: l,
                            right_alias: r,
                            join_type: JoinType::Full,
                            condition,
                            ordinal,
                        })
                        .collect(),
                    select_items: select
                        .into_iter()
                        .map(|(expr, alias, ordinal)| SelectItem {
                            expr,
                            alias,
                            ordinal,
                        })
                        .collect(),
                    where_,
                    group_by: group
                        .into_iter()
                        .enumerate()
                        .map(|(i, expr)| GroupByItem {
                            expr,
                            ordinal: i as i64,
                        })
                        .collect(),
                    having,
                    order_by: order
                        .into_iter()
                        .enumerate()
                        .map(|(i, expr)| OrderItem {
                            expr,
                            direction: nl2sql_plan::Direction::Desc,
                            ordinal: i as i64,
                        })
                        .collect(),
                    limit,
                    offset,
                    ..PlanModel::default()
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn nonsense_plans_give_findings_not_panics(plan in plan()) {
        thread_local! {
            static CONTRACT: nl2sql_state::SchemaContract = contract(nl2sql_state::Dialect::Sqlite);
        }
        CONTRACT.with(|contract| {
            let report = validate_plan(Some(&plan), &LogicalContext::new("manufacturing", contract));
            for f in &report.findings {
                assert!(!f.message.is_empty());
            }
            for dialect in DIALECTS {
                let _ = SqlGenerator::new(dialect).generate(&plan);
                let _ = SqlGenerator::new(dialect).with_schema(contract).generate(&plan);
            }
        });
        // The JSON form of any plan either parses back or names a path.
        let json = serde_json::to_string(&plan).unwrap();
        if let Err(e) = nl2sql_plan::parse_plan(&json) {
            prop_assert!(e.path.starts_with('$'));
        }
    }

    #[test]
    fn arbitrary_text_never_panics_the_parser(text in "[ -~]{0,200}") {
        if let Err(e) = nl2sql_plan::parse_plan(&text) {
            prop_assert!(e.path.starts_with('$'));
        }
    }
}
