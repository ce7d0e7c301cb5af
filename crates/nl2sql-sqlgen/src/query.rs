//! The statement layout (spec: sql-generation.md §2-3).

use nl2sql_plan::{Direction, Expr, ExprKind, JoinType, PlanModel, TableRef};
use nl2sql_state::{Dialect, PipelineError};
use sqlparser::ast::helpers::attached_token::AttachedToken;
use sqlparser::ast::{
    Distinct, GroupByExpr, Join, JoinConstraint, JoinOperator, LimitClause, Offset, OffsetRows,
    OrderBy, OrderByExpr, OrderByKind, OrderByOptions, Query, Select, SelectFlavor, SelectItem,
    SelectItemQualifiedWildcardKind, SetExpr, TableAlias, TableFactor, TableWithJoins,
    WildcardAdditionalOptions,
};

use crate::error::gen_error;
use crate::expr::{Cx, number, render_expr};
use crate::ident::{ident, object_name};

/// Builds the query of `plan`. `row_limit` is the datasource's (the LIMIT is then
/// `min(plan limit, row limit)`); `None` for a sub-query, whose LIMIT is its plan's own.
pub(crate) fn build_query(
    plan: &PlanModel,
    dialect: Dialect,
    row_limit: Option<u64>,
) -> Result<Query, PipelineError> {
    let cx = Cx {
        dialect,
        statement: |plan, dialect| build_query(plan, dialect, None),
    };
    let mut tables: Vec<&TableRef> = plan.tables.iter().collect();
    tables.sort_by_key(|t| t.ordinal);
    let Some(first) = tables.first() else {
        return Err(gen_error("Plan has no tables"));
    };
    if plan.select_items.is_empty() {
        return Err(gen_error("Plan has no select items"));
    }
    // Every other table enters through a join (rule J6); one that none introduces is an
    // error rather than a table silently left out of the statement.
    if let Some(stray) = tables
        .iter()
        .skip(1)
        .find(|t| !plan.joins.iter().any(|j| j.right_alias == t.alias))
    {
        return Err(gen_error(format!(
            "Table {} (alias '{}') is not introduced by any join",
            stray.name, stray.alias
        )));
    }
    let mut joins = Vec::with_capacity(plan.joins.len());
    let mut join_specs: Vec<_> = plan.joins.iter().collect();
    join_specs.sort_by_key(|j| j.ordinal);
    for j in join_specs {
        let Some(table) = tables.iter().find(|t| t.alias == j.right_alias) else {
            return Err(gen_error(format!(
                "Join references unknown alias {}",
                j.right_alias
            )));
        };
        let on = JoinConstraint::On(render_expr(&j.condition, cx)?);
        let join_operator = match j.join_type {
            JoinType::Inner => JoinOperator::Inner(on),
            JoinType::Left => JoinOperator::Left(on),
            JoinType::Right => JoinOperator::Right(on),
            JoinType::Full if dialect == Dialect::MySql => {
                return Err(gen_error(
                    "FULL OUTER JOIN is not supported by the mysql dialect",
                ));
            }
            JoinType::Full => JoinOperator::FullOuter(on),
        };
        joins.push(Join {
            relation: table_factor(table, dialect),
            global: false,
            join_operator,
        });
    }
    let mut items: Vec<_> = plan.select_items.iter().collect();
    items.sort_by_key(|s| s.ordinal);
    let mut projection = Vec::with_capacity(items.len());
    for item in items {
        let e = &item.expr;
        if e.kind == ExprKind::Column && e.column_name.as_deref() == Some("*") {
            if item.alias.is_some() {
                return Err(gen_error("a '*' select item cannot have an alias"));
            }
            projection.push(match &e.alias {
                Some(a) => SelectItem::QualifiedWildcard(
                    SelectItemQualifiedWildcardKind::ObjectName(object_name(dialect, [a.as_str()])),
                    WildcardAdditionalOptions::default(),
                ),
                None => SelectItem::Wildcard(WildcardAdditionalOptions::default()),
            });
            continue;
        }
        let expr = render_expr(e, cx)?;
        projection.push(match &item.alias {
            Some(a) => SelectItem::ExprWithAlias {
                expr,
                alias: ident(dialect, a),
            },
            None => SelectItem::UnnamedExpr(expr),
        });
    }
    let selection = plan
        .where_
        .as_ref()
        .map(|w| render_expr(w, cx))
        .transpose()?;
    let mut group_items: Vec<_> = plan.group_by.iter().collect();
    group_items.sort_by_key(|g| g.ordinal);
    let mut group_by = Vec::with_capacity(group_items.len());
    for g in group_items {
        if is_constant(&g.expr) {
            return Err(gen_error(format!(
                "group-by item {} is a constant; engines read a constant there as a column position",
                g.ordinal
            )));
        }
        group_by.push(render_expr(&g.expr, cx)?);
    }
    let having = plan
        .having
        .as_ref()
        .map(|h| render_expr(h, cx))
        .transpose()?;
    let mut order_items: Vec<_> = plan.order_by.iter().collect();
    order_items.sort_by_key(|o| o.ordinal);
    // A constant sort key orders nothing, and engines read a bare constant there as a
    // column position (or reject it): leave such keys out.
    let order_exprs = order_items
        .iter()
        .filter(|o| !is_constant(&o.expr))
        .map(|o| {
            Ok(OrderByExpr {
                expr: render_expr(&o.expr, cx)?,
                options: OrderByOptions {
                    sort: match o.direction {
                        Direction::Asc => None,
                        Direction::Desc => Some(sqlparser::ast::OrderBySort::Desc),
                    },
                    nulls_first: None,
                },
                with_fill: None,
            })
        })
        .collect::<Result<Vec<_>, PipelineError>>()?;

    let select = Select {
        select_token: AttachedToken::empty(),
        optimizer_hints: Vec::new(),
        distinct: plan.distinct.then_some(Distinct::Distinct),
        select_modifiers: None,
        top: None,
        top_before_distinct: false,
        projection,
        exclude: None,
        into: None,
        from: vec![TableWithJoins {
            relation: table_factor(first, dialect),
            joins,
        }],
        lateral_views: Vec::new(),
        prewhere: None,
        selection,
        connect_by: Vec::new(),
        group_by: GroupByExpr::Expressions(group_by, Vec::new()),
        cluster_by: Vec::new(),
        distribute_by: Vec::new(),
        sort_by: Vec::new(),
        having,
        named_window: Vec::new(),
        qualify: None,
        window_before_qualify: false,
        value_table_mode: None,
        flavor: SelectFlavor::Standard,
    };
    let limit = match row_limit {
        Some(row_limit) => Some(effective_limit(plan.limit, row_limit)),
        None => plan
            .limit
            .and_then(|l| u64::try_from(l).ok())
            .filter(|l| *l >= 1)
            // SQLite and MySQL accept no OFFSET without a LIMIT.
            .or_else(|| plan.offset.filter(|o| *o > 0).map(|_| i64::MAX as u64)),
    };
    let offset = match plan.offset {
        Some(o) if o > 0 => Some(Offset {
            value: number(o.to_string()),
            rows: OffsetRows::None,
        }),
        _ => None,
    };
    Ok(Query {
        with: None,
        body: Box::new(SetExpr::Select(Box::new(select))),
        order_by: (!order_exprs.is_empty()).then_some(OrderBy {
            kind: OrderByKind::Expressions(order_exprs),
            interpolate: None,
        }),
        limit_clause: (limit.is_some() || offset.is_some()).then(|| LimitClause::LimitOffset {
            limit: limit.map(|l| number(l.to_string())),
            offset,
            limit_by: Vec::new(),
        }),
        fetch: None,
        locks: Vec::new(),
        for_clause: None,
        settings: None,
        format_clause: None,
        pipe_operators: Vec::new(),
    })
}

/// True when `e` has no column reference and no function call: its value is the same on
/// every row.
fn is_constant(e: &Expr) -> bool {
    let mut constant = true;
    e.walk(&mut |x| {
        if matches!(
            x.kind,
            ExprKind::Column | ExprKind::Func | ExprKind::Subquery
        ) {
            constant = false;
        }
    });
    constant
}

/// `min(plan limit, row limit)`; a plan limit below 1 counts as absent.
pub(crate) fn effective_limit(plan_limit: Option<i64>, row_limit: u64) -> u64 {
    match plan_limit
        .and_then(|l| u64::try_from(l).ok())
        .filter(|l| *l >= 1)
    {
        Some(l) => l.min(row_limit),
        None => row_limit,
    }
}

fn table_factor(t: &TableRef, dialect: Dialect) -> TableFactor {
    let parts: Vec<&str> = [
        t.database.as_deref(),
        t.schema_name.as_deref(),
        Some(&t.name),
    ]
    .into_iter()
    .flatten()
    .collect();
    TableFactor::Table {
        name: object_name(dialect, parts),
        alias: Some(TableAlias {
            explicit: true,
            name: ident(dialect, &t.alias),
            columns: Vec::new(),
            at: None,
        }),
        args: None,
        with_hints: Vec::new(),
        version: None,
        with_ordinality: false,
        partitions: Vec::new(),
        json_path: None,
        sample: None,
        index_hints: Vec::new(),
    }
}
