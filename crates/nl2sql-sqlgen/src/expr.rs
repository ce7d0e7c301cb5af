//! Expressions, precedence parentheses and the dialect function map
//! (spec: sql-generation.md §4, §4.2).

use nl2sql_plan::{AGGREGATE_FUNCTIONS, CastType, Expr, ExprKind, LiteralValue, Op, PlanModel};
use nl2sql_state::{Dialect, PipelineError};
use sqlparser::ast::helpers::attached_token::AttachedToken;
use sqlparser::ast::{
    BinaryOperator, CaseWhen, CastKind, DataType, DateTimeField, DuplicateTreatment,
    ExactNumberInfo, Expr as Sql, ExtractSyntax, Function, FunctionArg, FunctionArgExpr,
    FunctionArgumentList, FunctionArguments, Ident, ObjectName, Query, UnaryOperator, Value,
};

use crate::error::gen_error;
use crate::ident::{ident, object_name};

/// Binding strength, lowest first (spec: sql-generation.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Prec {
    Or,
    And,
    Not,
    Cmp,
    Add,
    Mul,
    Neg,
    Atom,
}

/// What an expression is rendered with: the dialect, and how a sub-query's plan becomes a
/// statement (the statement layout's builder, passed in: expressions sit below
/// statements, and a sub-query is the one place an expression holds a statement).
#[derive(Clone, Copy)]
pub(crate) struct Cx {
    /// The target dialect.
    pub(crate) dialect: Dialect,
    /// Builds a sub-query's statement (with its plan's own LIMIT only).
    pub(crate) statement: fn(&PlanModel, Dialect) -> Result<Query, PipelineError>,
}

/// Renders one plan expression as a sqlparser expression.
pub(crate) fn render_expr(e: &Expr, cx: Cx) -> Result<Sql, PipelineError> {
    Ok(build(e, cx)?.0)
}

/// A numeric literal from its text.
pub(crate) fn number(text: String) -> Sql {
    Sql::Value(Value::Number(text, false).with_empty_span())
}

fn string(dialect: Dialect, s: &str) -> Sql {
    let text = if dialect == Dialect::MySql {
        s.replace('\\', "\\\\")
    } else {
        s.to_owned()
    };
    Sql::Value(Value::SingleQuotedString(text).with_empty_span())
}

fn nested(e: Sql) -> Sql {
    Sql::Nested(Box::new(e))
}

/// Wraps `child` in parentheses when `wrap` holds.
fn paren((e, p): (Sql, Prec), wrap: impl Fn(Prec) -> bool) -> Sql {
    if wrap(p) { nested(e) } else { e }
}

fn missing(what: &str) -> PipelineError {
    gen_error(format!("invalid plan expression: {what}"))
}

fn literal(e: &Expr, dialect: Dialect) -> Result<(Sql, Prec), PipelineError> {
    if e.is_null || e.value.is_none() {
        return Ok((Sql::Value(Value::Null.with_empty_span()), Prec::Atom));
    }
    Ok(match &e.value {
        Some(LiteralValue::Bool(b)) => {
            (Sql::Value(Value::Boolean(*b).with_empty_span()), Prec::Atom)
        }
        Some(LiteralValue::Int(i)) => (
            number(i.to_string()),
            if *i < 0 { Prec::Neg } else { Prec::Atom },
        ),
        Some(LiteralValue::Float(x)) => {
            if !x.is_finite() {
                return Err(gen_error(format!(
                    "float literal {x} cannot be written in SQL"
                )));
            }
            let prec = if x.is_sign_negative() {
                Prec::Neg
            } else {
                Prec::Atom
            };
            let text = number(format!("{x:?}"));
            if dialect == Dialect::DuckDb {
                // DuckDB reads `71.06554729085387` as DECIMAL(16,14), and decimal arithmetic
                // on it can overflow where the same double would not: a plan's float is an
                // IEEE double (as in SQLite), so say so.
                (
                    cast(text, DataType::Double(ExactNumberInfo::None)),
                    Prec::Atom,
                )
            } else {
                (text, prec)
            }
        }
        Some(LiteralValue::Str(s)) => (string(dialect, s), Prec::Atom),
        None => (Sql::Value(Value::Null.with_empty_span()), Prec::Atom),
    })
}

fn column(e: &Expr, dialect: Dialect) -> Result<Sql, PipelineError> {
    let name = e
        .column_name
        .as_deref()
        .ok_or_else(|| missing("column without column_name"))?;
    Ok(match (&e.alias, name) {
        (Some(a), "*") => {
            Sql::QualifiedWildcard(object_name(dialect, [a.as_str()]), AttachedToken::empty())
        }
        (None, "*") => Sql::Wildcard(AttachedToken::empty()),
        (Some(a), n) => Sql::CompoundIdentifier(vec![ident(dialect, a), ident(dialect, n)]),
        (None, n) => Sql::Identifier(ident(dialect, n)),
    })
}

fn build(e: &Expr, cx: Cx) -> Result<(Sql, Prec), PipelineError> {
    match e.kind {
        ExprKind::Literal => literal(e, cx.dialect),
        ExprKind::Column => Ok((column(e, cx.dialect)?, Prec::Atom)),
        ExprKind::Func => Ok((function(e, cx)?, Prec::Atom)),
        ExprKind::Case => {
            let mut whens: Vec<_> = e.whens.iter().collect();
            whens.sort_by_key(|w| w.ordinal);
            if whens.is_empty() {
                return Err(missing("case without whens"));
            }
            let conditions = whens
                .into_iter()
                .map(|w| {
                    Ok(CaseWhen {
                        condition: render_expr(&w.condition, cx)?,
                        result: render_expr(&w.result, cx)?,
                    })
                })
                .collect::<Result<Vec<_>, PipelineError>>()?;
            let else_result = e
                .else_expr
                .as_deref()
                .map(|x| render_expr(x, cx).map(Box::new))
                .transpose()?;
            Ok((
                Sql::Case {
                    case_token: AttachedToken::empty(),
                    end_token: AttachedToken::empty(),
                    operand: None,
                    conditions,
                    else_result,
                },
                Prec::Atom,
            ))
        }
        ExprKind::Unary => {
            let operand = e
                .expr
                .as_deref()
                .ok_or_else(|| missing("unary without expr"))?;
            let inner = build(operand, cx)?;
            match e.op {
                Some(Op::Not) => Ok((
                    Sql::UnaryOp {
                        op: UnaryOperator::Not,
                        expr: Box::new(paren(inner, |p| p != Prec::Atom)),
                    },
                    Prec::Not,
                )),
                Some(Op::Minus) => Ok((
                    Sql::UnaryOp {
                        op: UnaryOperator::Minus,
                        expr: Box::new(paren(inner, |p| p != Prec::Atom)),
                    },
                    Prec::Neg,
                )),
                Some(Op::Plus) => Ok((nested(inner.0), Prec::Atom)),
                other => Err(gen_error(format!(
                    "'{}' is not a unary operator",
                    other.map_or("<none>", Op::as_str)
                ))),
            }
        }
        ExprKind::Binary => binary(e, cx),
        ExprKind::Subquery => Ok((Sql::Subquery(Box::new(subquery(e, cx)?)), Prec::Atom)),
        ExprKind::Cast => {
            let operand = e
                .expr
                .as_deref()
                .ok_or_else(|| missing("cast without expr"))?;
            let to = e.cast_to.ok_or_else(|| missing("cast without cast_to"))?;
            let inner = render_expr(operand, cx)?;
            Ok((cast(inner, cast_type(to, cx.dialect)), Prec::Atom))
        }
    }
}

/// The dialect's spelling of a cast's type: a double for `real` (`REAL` in SQLite, whose
/// only float it is), a 64-bit integer for `integer` (MySQL spells it `SIGNED`), text.
fn cast_type(to: CastType, dialect: Dialect) -> DataType {
    match (to, dialect) {
        (CastType::Real, Dialect::Sqlite) => DataType::Real,
        (CastType::Real, Dialect::Postgres | Dialect::Generic) => DataType::DoublePrecision,
        (CastType::Real, Dialect::MySql | Dialect::DuckDb) => {
            DataType::Double(ExactNumberInfo::None)
        }
        (CastType::Integer, Dialect::Sqlite) => DataType::Integer(None),
        (CastType::Integer, Dialect::Postgres | Dialect::DuckDb | Dialect::Generic) => {
            DataType::BigInt(None)
        }
        (CastType::Integer, Dialect::MySql) => DataType::Signed,
        (CastType::Text, Dialect::MySql) => DataType::Char(None),
        (CastType::Text, _) => DataType::Text,
    }
}

/// The query of a sub-query expression: its plan's own LIMIT only, never the datasource's
/// row limit (a cut list of `IN` members, or a cut set a scalar is computed from, would
/// change the outer query's rows silently; the outer statement's limit bounds the output).
fn subquery(e: &Expr, cx: Cx) -> Result<Query, PipelineError> {
    let plan = e
        .query
        .as_deref()
        .ok_or_else(|| missing("subquery without query"))?;
    if plan.select_items.len() != 1 {
        return Err(gen_error(format!(
            "a sub-query selects exactly one column (it selects {})",
            plan.select_items.len()
        )));
    }
    (cx.statement)(plan, cx.dialect)
}

fn binary(e: &Expr, cx: Cx) -> Result<(Sql, Prec), PipelineError> {
    let op = e.op.ok_or_else(|| missing("binary without op"))?;
    let l = e
        .left
        .as_deref()
        .ok_or_else(|| missing("binary without left"))?;
    let r = e
        .right
        .as_deref()
        .ok_or_else(|| missing("binary without right"))?;
    let cmp_child = |p: Prec| p <= Prec::Cmp;
    match op {
        Op::And | Op::Or => {
            let (sql_op, p) = if op == Op::And {
                (BinaryOperator::And, Prec::And)
            } else {
                (BinaryOperator::Or, Prec::Or)
            };
            Ok((
                Sql::BinaryOp {
                    left: Box::new(paren(build(l, cx)?, |c| c < p)),
                    op: sql_op,
                    right: Box::new(paren(build(r, cx)?, |c| c < p)),
                },
                p,
            ))
        }
        Op::Eq | Op::NotEq | Op::Gt | Op::Lt | Op::GtEq | Op::LtEq => {
            let sql_op = match op {
                Op::Eq => BinaryOperator::Eq,
                Op::NotEq => BinaryOperator::NotEq,
                Op::Gt => BinaryOperator::Gt,
                Op::Lt => BinaryOperator::Lt,
                Op::GtEq => BinaryOperator::GtEq,
                _ => BinaryOperator::LtEq,
            };
            Ok((
                Sql::BinaryOp {
                    left: Box::new(paren(build(l, cx)?, cmp_child)),
                    op: sql_op,
                    right: Box::new(paren(build(r, cx)?, cmp_child)),
                },
                Prec::Cmp,
            ))
        }
        // A plan's LIKE is case-insensitive in every dialect, as a question means it and
        // as SQLite's LIKE (ASCII) and MySQL's default collations already are: DuckDB and
        // PostgreSQL render it as ILIKE, so all engines return the same rows.
        Op::Like => {
            let expr = Box::new(paren(build(l, cx)?, cmp_child));
            let pattern = Box::new(paren(build(r, cx)?, cmp_child));
            let sql = match cx.dialect {
                Dialect::DuckDb | Dialect::Postgres => Sql::ILike {
                    negated: false,
                    any: false,
                    expr,
                    pattern,
                    escape_char: None,
                },
                _ => Sql::Like {
                    negated: false,
                    any: false,
                    expr,
                    pattern,
                    escape_char: None,
                },
            };
            Ok((sql, Prec::Cmp))
        }
        // MySQL and MariaDB reject a LIMIT inside an IN sub-query (error 1235).
        Op::In
            if r.kind == ExprKind::Subquery
                && cx.dialect == Dialect::MySql
                && r.query
                    .as_deref()
                    .is_some_and(|q| q.limit.is_some() || q.offset.is_some_and(|o| o > 0)) =>
        {
            Err(gen_error(
                "an IN sub-query with a LIMIT or OFFSET is not supported by the mysql dialect",
            ))
        }
        Op::In if r.kind == ExprKind::Subquery => Ok((
            Sql::InSubquery {
                expr: Box::new(paren(build(l, cx)?, cmp_child)),
                subquery: Box::new(subquery(r, cx)?),
                negated: false,
            },
            Prec::Cmp,
        )),
        Op::In => {
            let members: Vec<&Expr> = if r.is_list() {
                r.args.iter().collect()
            } else {
                vec![r]
            };
            if members.is_empty() {
                return Err(gen_error("IN list is empty"));
            }
            let list = members
                .into_iter()
                .map(|m| render_expr(m, cx))
                .collect::<Result<Vec<_>, _>>()?;
            Ok((
                Sql::InList {
                    expr: Box::new(paren(build(l, cx)?, cmp_child)),
                    list,
                    negated: false,
                },
                Prec::Cmp,
            ))
        }
        Op::Is | Op::IsNot => {
            let left = Box::new(paren(build(l, cx)?, cmp_child));
            let not = op == Op::IsNot;
            let sql = if r.is_null_literal() {
                if not {
                    Sql::IsNotNull(left)
                } else {
                    Sql::IsNull(left)
                }
            } else {
                match (&r.value, not) {
                    (Some(LiteralValue::Bool(true)), false) => Sql::IsTrue(left),
                    (Some(LiteralValue::Bool(true)), true) => Sql::IsNotTrue(left),
                    (Some(LiteralValue::Bool(false)), false) => Sql::IsFalse(left),
                    (Some(LiteralValue::Bool(false)), true) => Sql::IsNotFalse(left),
                    _ => {
                        return Err(gen_error(format!(
                            "the right side of {} must be NULL or a boolean literal",
                            op.as_str()
                        )));
                    }
                }
            };
            Ok((sql, Prec::Cmp))
        }
        Op::Plus | Op::Minus | Op::Multiply | Op::Divide | Op::Modulo => {
            let (sql_op, p) = match op {
                Op::Plus => (BinaryOperator::Plus, Prec::Add),
                Op::Minus => (BinaryOperator::Minus, Prec::Add),
                Op::Multiply => (BinaryOperator::Multiply, Prec::Mul),
                Op::Divide => (BinaryOperator::Divide, Prec::Mul),
                _ => (BinaryOperator::Modulo, Prec::Mul),
            };
            Ok((
                Sql::BinaryOp {
                    left: Box::new(paren(build(l, cx)?, |c| c < p)),
                    op: sql_op,
                    right: Box::new(paren(build(r, cx)?, |c| c <= p)),
                },
                p,
            ))
        }
        Op::Not => Err(gen_error("'NOT' is not a binary operator")),
    }
}

/// A call `NAME(args…)`.
fn call(name: &str, args: Vec<Sql>) -> Sql {
    call_args(
        name,
        args.into_iter()
            .map(|a| FunctionArg::Unnamed(FunctionArgExpr::Expr(a)))
            .collect(),
    )
}

fn call_args(name: &str, args: Vec<FunctionArg>) -> Sql {
    Sql::Function(Function {
        name: ObjectName::from(vec![Ident::new(name)]),
        uses_odbc_syntax: false,
        parameters: FunctionArguments::None,
        args: FunctionArguments::List(FunctionArgumentList {
            duplicate_treatment: None,
            args,
            clauses: Vec::new(),
        }),
        within_group: Vec::new(),
        filter: None,
        null_treatment: None,
        over: None,
    })
}

/// `NAME(DISTINCT arg)`: an aggregate of the distinct values of one argument, spelled the
/// same in every dialect.
fn distinct_aggregate(e: &Expr, name: &str, cx: Cx) -> Result<Sql, PipelineError> {
    if !AGGREGATE_FUNCTIONS.contains(&name) {
        return Err(gen_error(format!(
            "DISTINCT applies only to an aggregate, not to {name}"
        )));
    }
    let [arg] = e.args.as_slice() else {
        return Err(gen_error(format!(
            "{name}(DISTINCT …) takes exactly one argument, got {}",
            e.args.len()
        )));
    };
    if arg.kind == ExprKind::Column && arg.column_name.as_deref() == Some("*") {
        return Err(gen_error(format!("{name}(DISTINCT *) is not valid SQL")));
    }
    let mut call = call(name, vec![render_expr(arg, cx)?]);
    if let Sql::Function(Function {
        args: FunctionArguments::List(list),
        ..
    }) = &mut call
    {
        list.duplicate_treatment = Some(DuplicateTreatment::Distinct);
    }
    Ok(call)
}

fn cast(e: Sql, data_type: DataType) -> Sql {
    Sql::Cast {
        kind: CastKind::Cast,
        expr: Box::new(e),
        data_type,
        format: None,
    }
}

/// Functions rendered under the same name in every dialect.
const SAME_NAME: &[&str] = &[
    "COUNT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "ABS",
    "ROUND",
    "FLOOR",
    "LOWER",
    "UPPER",
    "TRIM",
    "LTRIM",
    "RTRIM",
    "SUBSTR",
    "SUBSTRING",
    "REPLACE",
    "COALESCE",
    "NULLIF",
];

fn arity(name: &str, args: &[Sql], n: usize) -> Result<(), PipelineError> {
    if args.len() == n {
        Ok(())
    } else {
        Err(gen_error(format!(
            "function {name} takes {n} argument(s), got {}",
            args.len()
        )))
    }
}

fn function(e: &Expr, cx: Cx) -> Result<Sql, PipelineError> {
    let raw = e
        .func_name
        .as_deref()
        .ok_or_else(|| missing("func without func_name"))?;
    let name = raw.trim().to_ascii_uppercase();
    if e.distinct {
        return distinct_aggregate(e, &name, cx);
    }
    if name == "COUNT"
        && e.args.len() == 1
        && e.args[0].kind == ExprKind::Column
        && e.args[0].column_name.as_deref() == Some("*")
    {
        return Ok(call_args(
            "COUNT",
            vec![FunctionArg::Unnamed(FunctionArgExpr::Wildcard)],
        ));
    }
    if e.is_list() {
        return Err(gen_error(format!(
            "{name} is only valid as the right side of IN"
        )));
    }
    let args = e
        .args
        .iter()
        .map(|a| render_expr(a, cx))
        .collect::<Result<Vec<_>, _>>()?;
    if SAME_NAME.contains(&name.as_str()) {
        return Ok(call(&name, args));
    }
    let d = cx.dialect;
    match name.as_str() {
        "YEAR" | "MONTH" | "DAY" => {
            arity(&name, &args, 1)?;
            let x = args.into_iter().next().ok_or_else(|| missing("argument"))?;
            Ok(match d {
                Dialect::Sqlite => {
                    let fmt = match name.as_str() {
                        "YEAR" => "%Y",
                        "MONTH" => "%m",
                        _ => "%d",
                    };
                    cast(
                        call("STRFTIME", vec![string(d, fmt), x]),
                        DataType::Integer(None),
                    )
                }
                Dialect::Postgres => {
                    let field = match name.as_str() {
                        "YEAR" => DateTimeField::Year,
                        "MONTH" => DateTimeField::Month,
                        _ => DateTimeField::Day,
                    };
                    cast(
                        Sql::Extract {
                            field,
                            syntax: ExtractSyntax::From,
                            expr: Box::new(x),
                        },
                        DataType::Integer(None),
                    )
                }
                _ => call(&name, vec![x]),
            })
        }
        "DATE" => {
            arity(&name, &args, 1)?;
            let x = args.into_iter().next().ok_or_else(|| missing("argument"))?;
            Ok(match d {
                Dialect::Sqlite | Dialect::MySql => call("DATE", vec![x]),
                _ => cast(x, DataType::Date),
            })
        }
        "DATE_TRUNC" => {
            arity(&name, &args, 2)?;
            let unit = match &e.args[0].value {
                Some(LiteralValue::Str(u)) => u.trim().to_ascii_lowercase(),
                _ => {
                    return Err(gen_error(
                        "DATE_TRUNC needs a string unit ('day', 'month' or 'year') as its first argument",
                    ));
                }
            };
            if !matches!(unit.as_str(), "day" | "month" | "year") {
                return Err(gen_error(format!(
                    "DATE_TRUNC unit '{unit}' is not supported (expected day, month or year)"
                )));
            }
            let x = args.into_iter().nth(1).ok_or_else(|| missing("argument"))?;
            Ok(match (d, unit.as_str()) {
                (Dialect::Sqlite | Dialect::MySql, "day") => call("DATE", vec![x]),
                (Dialect::Sqlite, u) => call("DATE", vec![x, string(d, &format!("start of {u}"))]),
                (Dialect::MySql, "month") => call("DATE_FORMAT", vec![x, string(d, "%Y-%m-01")]),
                (Dialect::MySql, _) => call("DATE_FORMAT", vec![x, string(d, "%Y-01-01")]),
                (_, u) => call("DATE_TRUNC", vec![string(d, u), x]),
            })
        }
        "STRFTIME" => {
            arity(&name, &args, 2)?;
            match d {
                Dialect::Sqlite | Dialect::Generic => Ok(call("STRFTIME", args)),
                Dialect::DuckDb => Ok(call("STRFTIME", args.into_iter().rev().collect())),
                _ => Err(gen_error(format!(
                    "function STRFTIME is not supported by the {d} dialect"
                ))),
            }
        }
        "CONCAT" => {
            if args.is_empty() {
                return Err(gen_error("CONCAT needs at least one argument"));
            }
            // `||` is NULL in, NULL out on SQLite, DuckDB and PostgreSQL, as MySQL's CONCAT
            // is; DuckDB's and PostgreSQL's CONCAT skip NULLs instead, so they use `||`.
            if matches!(d, Dialect::MySql | Dialect::Generic) {
                return Ok(call("CONCAT", args));
            }
            let mut it = args.into_iter();
            let first = it.next().ok_or_else(|| missing("argument"))?;
            Ok(nested(it.fold(first, |acc, x| Sql::BinaryOp {
                left: Box::new(acc),
                op: BinaryOperator::StringConcat,
                right: Box::new(x),
            })))
        }
        "LENGTH" => {
            arity(&name, &args, 1)?;
            Ok(call(
                if d == Dialect::MySql {
                    "CHAR_LENGTH"
                } else {
                    "LENGTH"
                },
                args,
            ))
        }
        "CEIL" | "CEILING" => {
            arity(&name, &args, 1)?;
            if d != Dialect::Sqlite {
                return Ok(call("CEIL", args));
            }
            let x = build(&e.args[0], cx)?;
            let x_cmp = paren(x.clone(), |p| p <= Prec::Cmp);
            let int_x = || cast(x.0.clone(), DataType::Integer(None));
            Ok(nested(Sql::BinaryOp {
                left: Box::new(int_x()),
                op: BinaryOperator::Plus,
                right: Box::new(nested(Sql::BinaryOp {
                    left: Box::new(x_cmp),
                    op: BinaryOperator::Gt,
                    right: Box::new(int_x()),
                })),
            }))
        }
        _ => Err(gen_error(format!(
            "function {name} is not supported by the {d} dialect"
        ))),
    }
}
