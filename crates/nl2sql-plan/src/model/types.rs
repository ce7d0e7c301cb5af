//! The PlanModel types and their serde form.

use std::fmt;

use schemars::JsonSchema;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

fn is_false(b: &bool) -> bool {
    !*b
}

/// An optional key given as `null` takes its default, like an absent one (spec: plan-model.md,
/// "Notation").
fn null_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// The names that always count as aggregates, whatever `is_aggregate` says.
pub const AGGREGATE_FUNCTIONS: [&str; 5] = ["COUNT", "SUM", "AVG", "MIN", "MAX"];

/// The statement kind: only `READ` exists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum QueryType {
    /// A read-only query.
    #[default]
    #[serde(rename = "READ")]
    Read,
}

/// A typed, SQL-free query for one datasource (spec: plan-model.md §2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanModel {
    /// Always `READ`.
    #[serde(default, deserialize_with = "null_default")]
    pub query_type: QueryType,
    /// `SELECT DISTINCT` when true.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "is_false"
    )]
    pub distinct: bool,
    /// Tables in ordinal order; ordinal 0 is the FROM table.
    #[serde(default, deserialize_with = "null_default")]
    pub tables: Vec<TableRef>,
    /// Joins in ordinal order.
    #[serde(default, deserialize_with = "null_default")]
    pub joins: Vec<JoinSpec>,
    /// Output columns in ordinal order.
    #[serde(default, deserialize_with = "null_default")]
    pub select_items: Vec<SelectItem>,
    /// The row filter.
    #[serde(default, rename = "where", skip_serializing_if = "Option::is_none")]
    pub where_: Option<Expr>,
    /// Grouping expressions.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub group_by: Vec<GroupByItem>,
    /// The group filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub having: Option<Expr>,
    /// Sort keys.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub order_by: Vec<OrderItem>,
    /// Maximum number of rows (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Rows to skip (≥ 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i64>,
    /// Free text for logs; never rendered into SQL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// How the planner read the question: each span and the plan element it became, and
    /// how sure it is. Never rendered into SQL; a planner may leave it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpretation: Option<Interpretation>,
}

/// How a planner read a question (spec: the offline planner accounts for every word).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Interpretation {
    /// The spans of the question, in order, with the plan element each became.
    #[serde(default, deserialize_with = "null_default")]
    pub spans: Vec<InterpretedSpan>,
    /// From 0 to 1: how likely the reading is right. The offline planner learns it from
    /// questions it answered right and wrong (see `signals`); 0 when a span is unplaced.
    #[serde(default, deserialize_with = "null_default")]
    pub confidence: f64,
    /// The traits of the question and the plan the confidence was computed from, each
    /// with its learned weight (negative lowers the confidence, 0 for traits the model
    /// has not learned). A planner may leave them out.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub signals: Vec<Signal>,
}

/// One trait of a reading and its weight in the confidence (log-odds).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Signal {
    /// What it is: `word:than`, `plan:tables=3`, `plan:aggregate=AVG`, ….
    pub name: String,
    /// Its learned weight (log-odds of a right answer).
    pub weight: f64,
}

/// One span of a question and what it became.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InterpretedSpan {
    /// The words, as written.
    pub text: String,
    /// The plan element: `table t`, `column t.c`, `the value 'x' of t.c`, `the value 10`,
    /// an operation.
    pub element: String,
}

/// A table of the plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TableRef {
    /// Table name as known to the schema (unqualified).
    pub name: String,
    /// Schema qualifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_name: Option<String>,
    /// Catalog qualifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// Alias, unique within the plan.
    pub alias: String,
    /// Position; 0 is the FROM table.
    pub ordinal: i64,
}

/// A join type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JoinType {
    /// `INNER JOIN`.
    #[default]
    Inner,
    /// `LEFT JOIN`.
    Left,
    /// `RIGHT JOIN`.
    Right,
    /// `FULL OUTER JOIN`.
    Full,
}

/// A join bringing `right_alias` into the query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JoinSpec {
    /// Alias of a table already introduced.
    pub left_alias: String,
    /// Alias of the table being joined in.
    pub right_alias: String,
    /// Join type.
    #[serde(default, deserialize_with = "null_default")]
    pub join_type: JoinType,
    /// The ON condition.
    pub condition: Expr,
    /// Position.
    pub ordinal: i64,
}

/// An output column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectItem {
    /// The value.
    pub expr: Expr,
    /// Output name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// Position.
    pub ordinal: i64,
}

/// A sort direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Ascending.
    #[default]
    Asc,
    /// Descending.
    Desc,
}

/// A sort key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderItem {
    /// The key.
    pub expr: Expr,
    /// Direction.
    #[serde(default, deserialize_with = "null_default")]
    pub direction: Direction,
    /// Position.
    pub ordinal: i64,
}

/// A grouping expression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupByItem {
    /// The expression.
    pub expr: Expr,
    /// Position.
    pub ordinal: i64,
}

/// One `WHEN … THEN …` of a CASE.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseWhen {
    /// The condition.
    pub condition: Expr,
    /// The result when it holds.
    pub result: Expr,
    /// Position within `whens`.
    pub ordinal: i64,
}

/// The kind of an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExprKind {
    /// A constant.
    Literal,
    /// A column reference.
    Column,
    /// A function call.
    Func,
    /// A binary operation.
    Binary,
    /// A unary operation.
    Unary,
    /// A CASE expression.
    Case,
    /// A sub-query: a whole plan of its own, uncorrelated, selecting one column; a scalar
    /// when its plan yields one row (`x > (SELECT AVG(…) …)`), a list on the right of `IN`.
    Subquery,
    /// A conversion of `expr` to the type `cast_to` (`CAST(x AS REAL)`): numbers a
    /// database keeps as text, added up, averaged, compared or ordered as numbers.
    Cast,
}

impl ExprKind {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ExprKind::Literal => "literal",
            ExprKind::Column => "column",
            ExprKind::Func => "func",
            ExprKind::Binary => "binary",
            ExprKind::Unary => "unary",
            ExprKind::Case => "case",
            ExprKind::Subquery => "subquery",
            ExprKind::Cast => "cast",
        }
    }
}

/// The type a `cast` expression converts to, each written in the dialect's own spelling
/// (`REAL`, `DOUBLE PRECISION`, `DOUBLE`; `INTEGER`, `SIGNED`; `TEXT`, `CHAR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CastType {
    /// A floating-point number.
    Real,
    /// An integer.
    Integer,
    /// Text.
    Text,
}

impl CastType {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CastType::Real => "real",
            CastType::Integer => "integer",
            CastType::Text => "text",
        }
    }
}

/// An operator of a binary or unary expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum Op {
    /// `=`.
    #[serde(rename = "=")]
    Eq,
    /// `!=`.
    #[serde(rename = "!=")]
    NotEq,
    /// `>`.
    #[serde(rename = ">")]
    Gt,
    /// `<`.
    #[serde(rename = "<")]
    Lt,
    /// `>=`.
    #[serde(rename = ">=")]
    GtEq,
    /// `<=`.
    #[serde(rename = "<=")]
    LtEq,
    /// `+`.
    #[serde(rename = "+")]
    Plus,
    /// `-`.
    #[serde(rename = "-")]
    Minus,
    /// `*`.
    #[serde(rename = "*")]
    Multiply,
    /// `/`.
    #[serde(rename = "/")]
    Divide,
    /// `%`.
    #[serde(rename = "%")]
    Modulo,
    /// `AND`.
    #[serde(rename = "AND")]
    And,
    /// `OR`.
    #[serde(rename = "OR")]
    Or,
    /// `LIKE`.
    #[serde(rename = "LIKE")]
    Like,
    /// `IN`.
    #[serde(rename = "IN")]
    In,
    /// `NOT` (unary only).
    #[serde(rename = "NOT")]
    Not,
    /// `IS`.
    #[serde(rename = "IS")]
    Is,
    /// `IS NOT`.
    #[serde(rename = "IS NOT")]
    IsNot,
}

impl Op {
    /// The JSON spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::NotEq => "!=",
            Op::Gt => ">",
            Op::Lt => "<",
            Op::GtEq => ">=",
            Op::LtEq => "<=",
            Op::Plus => "+",
            Op::Minus => "-",
            Op::Multiply => "*",
            Op::Divide => "/",
            Op::Modulo => "%",
            Op::And => "AND",
            Op::Or => "OR",
            Op::Like => "LIKE",
            Op::In => "IN",
            Op::Not => "NOT",
            Op::Is => "IS",
            Op::IsNot => "IS NOT",
        }
    }

    /// True for `= != > < >= <=`.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            Op::Eq | Op::NotEq | Op::Gt | Op::Lt | Op::GtEq | Op::LtEq
        )
    }

    /// True for `+ - * / %`.
    pub fn is_arithmetic(self) -> bool {
        matches!(
            self,
            Op::Plus | Op::Minus | Op::Multiply | Op::Divide | Op::Modulo
        )
    }
}

/// The value of a literal: string, integer (fits i64), float or boolean.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum LiteralValue {
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
}

impl fmt::Display for LiteralValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LiteralValue::Bool(b) => write!(f, "{b}"),
            LiteralValue::Int(i) => write!(f, "{i}"),
            LiteralValue::Float(x) => write!(f, "{x}"),
            LiteralValue::Str(s) => f.write_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for LiteralValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LiteralVisitor;
        impl Visitor<'_> for LiteralVisitor {
            type Value = LiteralValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, integer, float or boolean")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<LiteralValue, E> {
                Ok(LiteralValue::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<LiteralValue, E> {
                Ok(LiteralValue::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LiteralValue, E> {
                i64::try_from(v)
                    .map(LiteralValue::Int)
                    .map_err(|_| E::custom(format!("integer {v} does not fit in i64")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<LiteralValue, E> {
                Ok(LiteralValue::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<LiteralValue, E> {
                Ok(LiteralValue::Str(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<LiteralValue, E> {
                Ok(LiteralValue::Str(v))
            }
        }
        deserializer.deserialize_any(LiteralVisitor)
    }
}

/// An expression: one struct with a `kind` and the fields that kind uses
/// (spec: plan-model.md §2.5). [`crate::parse_plan`] rejects foreign fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expr {
    /// Which kind of expression.
    pub kind: ExprKind,
    /// Literal value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<LiteralValue>,
    /// Literal: SQL NULL when true.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "is_false"
    )]
    pub is_null: bool,
    /// Column: the table alias.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// Column: its name, or `*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column_name: Option<String>,
    /// Func: the function name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub func_name: Option<String>,
    /// Func: arguments.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub args: Vec<Expr>,
    /// Func: declared aggregate (the name list also counts).
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "is_false"
    )]
    pub is_aggregate: bool,
    /// Func: `DISTINCT` before the argument of an aggregate (`COUNT(DISTINCT x)`): the
    /// aggregate sees each distinct non-null value once. Aggregates of one argument only.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "is_false"
    )]
    pub distinct: bool,
    /// Binary or unary operator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<Op>,
    /// Binary: left operand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<Box<Expr>>,
    /// Binary: right operand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub right: Option<Box<Expr>>,
    /// Unary or cast: the operand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expr: Option<Box<Expr>>,
    /// Cast: the type converted to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cast_to: Option<CastType>,
    /// Case: the branches.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub whens: Vec<CaseWhen>,
    /// Case: the ELSE result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub else_expr: Option<Box<Expr>>,
    /// Subquery: the plan it runs. Its columns name only its own tables' aliases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<Box<PlanModel>>,
}

impl Expr {
    fn empty(kind: ExprKind) -> Expr {
        Expr {
            kind,
            value: None,
            is_null: false,
            alias: None,
            column_name: None,
            func_name: None,
            args: Vec::new(),
            is_aggregate: false,
            distinct: false,
            op: None,
            left: None,
            right: None,
            expr: None,
            cast_to: None,
            whens: Vec::new(),
            else_expr: None,
            query: None,
        }
    }

    /// A literal.
    pub fn literal(value: LiteralValue) -> Expr {
        Expr {
            value: Some(value),
            ..Expr::empty(ExprKind::Literal)
        }
    }

    /// The NULL literal.
    pub fn null() -> Expr {
        Expr {
            is_null: true,
            ..Expr::empty(ExprKind::Literal)
        }
    }

    /// A column `alias.name` (or unqualified when `alias` is `None`).
    pub fn column(alias: Option<&str>, name: &str) -> Expr {
        Expr {
            alias: alias.map(str::to_owned),
            column_name: Some(name.to_owned()),
            ..Expr::empty(ExprKind::Column)
        }
    }

    /// A function call.
    pub fn func(name: &str, args: Vec<Expr>) -> Expr {
        Expr {
            func_name: Some(name.to_owned()),
            args,
            ..Expr::empty(ExprKind::Func)
        }
    }

    /// An aggregate of the distinct values of `arg`: `COUNT(DISTINCT arg)` for `"COUNT"`.
    pub fn distinct_aggregate(name: &str, arg: Expr) -> Expr {
        Expr {
            func_name: Some(name.to_owned()),
            args: vec![arg],
            is_aggregate: true,
            distinct: true,
            ..Expr::empty(ExprKind::Func)
        }
    }

    /// A binary operation.
    pub fn binary(op: Op, left: Expr, right: Expr) -> Expr {
        Expr {
            op: Some(op),
            left: Some(Box::new(left)),
            right: Some(Box::new(right)),
            ..Expr::empty(ExprKind::Binary)
        }
    }

    /// A unary operation.
    pub fn unary(op: Op, operand: Expr) -> Expr {
        Expr {
            op: Some(op),
            expr: Some(Box::new(operand)),
            ..Expr::empty(ExprKind::Unary)
        }
    }

    /// `CAST(operand AS to)`.
    pub fn cast(operand: Expr, to: CastType) -> Expr {
        Expr {
            expr: Some(Box::new(operand)),
            cast_to: Some(to),
            ..Expr::empty(ExprKind::Cast)
        }
    }

    /// A CASE expression.
    pub fn case(whens: Vec<CaseWhen>, else_expr: Option<Expr>) -> Expr {
        Expr {
            whens,
            else_expr: else_expr.map(Box::new),
            ..Expr::empty(ExprKind::Case)
        }
    }

    /// A sub-query running `plan` (one select item; uncorrelated).
    pub fn subquery(plan: PlanModel) -> Expr {
        Expr {
            query: Some(Box::new(plan)),
            ..Expr::empty(ExprKind::Subquery)
        }
    }

    /// True for a SQL NULL literal.
    pub fn is_null_literal(&self) -> bool {
        self.kind == ExprKind::Literal && (self.is_null || self.value.is_none())
    }

    /// True for a function that aggregates: `is_aggregate` or an aggregate name.
    pub fn is_aggregate_call(&self) -> bool {
        self.kind == ExprKind::Func
            && (self.is_aggregate
                || self.func_name.as_deref().is_some_and(|n| {
                    AGGREGATE_FUNCTIONS
                        .iter()
                        .any(|a| a.eq_ignore_ascii_case(n.trim()))
                }))
    }

    /// True for a `TUPLE`/`LIST` pseudo-function (an IN list).
    pub fn is_list(&self) -> bool {
        self.kind == ExprKind::Func
            && self.func_name.as_deref().is_some_and(|n| {
                n.trim().eq_ignore_ascii_case("TUPLE") || n.trim().eq_ignore_ascii_case("LIST")
            })
    }

    /// The direct children, in pre-order: left, right, args, unary operand, each when's
    /// condition and result, else. A sub-query's plan is a scope of its own: its
    /// expressions are not children (see [`PlanModel::subqueries`]).
    pub fn children(&self) -> Vec<&Expr> {
        let mut out: Vec<&Expr> = Vec::new();
        out.extend(self.left.as_deref());
        out.extend(self.right.as_deref());
        out.extend(self.args.iter());
        out.extend(self.expr.as_deref());
        for w in &self.whens {
            out.push(&w.condition);
            out.push(&w.result);
        }
        out.extend(self.else_expr.as_deref());
        out
    }

    /// Visits this expression and every descendant in pre-order.
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        f(self);
        for child in self.children() {
            child.walk(f);
        }
    }

    /// Visits this expression and every descendant in pre-order, mutably: `f` sees a node
    /// before its children, so the children visited are those `f` leaves in place.
    pub fn walk_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        f(self);
        for child in [
            self.left.as_deref_mut(),
            self.right.as_deref_mut(),
            self.expr.as_deref_mut(),
        ]
        .into_iter()
        .flatten()
        {
            child.walk_mut(f);
        }
        for arg in &mut self.args {
            arg.walk_mut(f);
        }
        for w in &mut self.whens {
            w.condition.walk_mut(f);
            w.result.walk_mut(f);
        }
        if let Some(e) = self.else_expr.as_deref_mut() {
            e.walk_mut(f);
        }
    }
}

impl PlanModel {
    /// Every top-level expression of the plan with its JSON path: join conditions, select
    /// items, `where`, group-by items, `having`, order-by items.
    pub fn expressions(&self) -> Vec<(String, &Expr)> {
        let mut out: Vec<(String, &Expr)> = Vec::new();
        for (i, j) in self.joins.iter().enumerate() {
            out.push((format!("$.joins[{i}].condition"), &j.condition));
        }
        for (i, s) in self.select_items.iter().enumerate() {
            out.push((format!("$.select_items[{i}].expr"), &s.expr));
        }
        if let Some(w) = &self.where_ {
            out.push(("$.where".to_owned(), w));
        }
        for (i, g) in self.group_by.iter().enumerate() {
            out.push((format!("$.group_by[{i}].expr"), &g.expr));
        }
        if let Some(h) = &self.having {
            out.push(("$.having".to_owned(), h));
        }
        for (i, o) in self.order_by.iter().enumerate() {
            out.push((format!("$.order_by[{i}].expr"), &o.expr));
        }
        out
    }

    /// The plans of the sub-queries this plan's expressions hold directly (not those
    /// nested in them), in [`PlanModel::expressions`] order.
    pub fn subqueries(&self) -> Vec<&PlanModel> {
        let mut out: Vec<&PlanModel> = Vec::new();
        for (_, e) in self.expressions() {
            e.walk(&mut |x| out.extend(x.query.as_deref()));
        }
        out
    }
}
