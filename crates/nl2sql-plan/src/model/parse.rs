//! Parsing a PlanModel from JSON: serde with the JSON path of a failure, then the
//! per-kind rules and resource limits (spec: plan-model.md §1 R1-R4, §2.5).

use std::fmt;

use nl2sql_state::{ErrorCode, PipelineError, Severity};
use serde_json::json;

use super::types::{CaseWhen, Expr, ExprKind, Op, PlanModel};

/// Largest accepted document, in bytes.
pub const MAX_DOCUMENT_BYTES: usize = 1024 * 1024;
/// Deepest accepted expression nesting.
pub const MAX_DEPTH: usize = 64;
/// Most items in any list.
pub const MAX_LIST_LEN: usize = 256;
/// Longest accepted identifier, in characters.
pub const MAX_IDENT_LEN: usize = 128;

/// Why a PlanModel document was rejected, with the JSON path of the offending element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanParseError {
    /// JSON path such as `$.select_items[2].expr.left.kind`.
    pub path: String,
    /// A short reason.
    pub reason: String,
}

impl PlanParseError {
    fn new(path: &str, reason: impl Into<String>) -> Self {
        PlanParseError {
            path: path.to_owned(),
            reason: reason.into(),
        }
    }

    /// The error as a `PipelineError` with `code` (`PLANNING_FAILURE` for a planner's plan,
    /// `INVALID_PLAN_STRUCTURE` for a user's), severity ERROR and the path in `details`.
    pub fn to_pipeline_error(&self, node: &str, code: ErrorCode) -> PipelineError {
        PipelineError::new(node, code, Severity::Error, self.to_string())
            .with_details(json!({ "path": self.path }))
    }
}

impl fmt::Display for PlanParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid plan at {}: {}", self.path, self.reason)
    }
}

impl std::error::Error for PlanParseError {}

/// Parses and checks a PlanModel document.
pub fn parse_plan(json: &str) -> Result<PlanModel, PlanParseError> {
    if json.len() > MAX_DOCUMENT_BYTES {
        return Err(PlanParseError::new(
            "$",
            format!(
                "document is {} bytes, more than {MAX_DOCUMENT_BYTES}",
                json.len()
            ),
        ));
    }
    let mut de = serde_json::Deserializer::from_str(json);
    let plan: PlanModel = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." || path.is_empty() {
            "$".to_owned()
        } else {
            format!("$.{path}")
        };
        PlanParseError::new(&path, e.into_inner().to_string())
    })?;
    de.end()
        .map_err(|e| PlanParseError::new("$", e.to_string()))?;
    check_plan(&plan)?;
    Ok(plan)
}

/// The rules serde cannot express: per-kind fields, limits.
pub(crate) fn check_plan(plan: &PlanModel) -> Result<(), PlanParseError> {
    check_plan_at("$", plan, 0)
}

/// [`check_plan`] for the plan at JSON path `root` whose expressions start at nesting
/// `depth` (a sub-query's plan counts one level deeper than the expression holding it).
fn check_plan_at(root: &str, plan: &PlanModel, depth: usize) -> Result<(), PlanParseError> {
    list_len(&format!("{root}.tables"), plan.tables.len())?;
    list_len(&format!("{root}.joins"), plan.joins.len())?;
    list_len(&format!("{root}.select_items"), plan.select_items.len())?;
    list_len(&format!("{root}.group_by"), plan.group_by.len())?;
    list_len(&format!("{root}.order_by"), plan.order_by.len())?;
    for (i, t) in plan.tables.iter().enumerate() {
        ident(&format!("{root}.tables[{i}].name"), &t.name)?;
        ident(&format!("{root}.tables[{i}].alias"), &t.alias)?;
        if let Some(s) = &t.schema_name {
            ident(&format!("{root}.tables[{i}].schema_name"), s)?;
        }
        if let Some(d) = &t.database {
            ident(&format!("{root}.tables[{i}].database"), d)?;
        }
    }
    for (i, j) in plan.joins.iter().enumerate() {
        ident(&format!("{root}.joins[{i}].left_alias"), &j.left_alias)?;
        ident(&format!("{root}.joins[{i}].right_alias"), &j.right_alias)?;
    }
    for (i, s) in plan.select_items.iter().enumerate() {
        if let Some(a) = &s.alias {
            ident(&format!("{root}.select_items[{i}].alias"), a)?;
        }
    }
    for (path, e) in plan.expressions() {
        let path = format!("{root}{}", &path[1..]);
        check_expr(&path, e, depth + 1)?;
    }
    Ok(())
}

fn list_len(path: &str, len: usize) -> Result<(), PlanParseError> {
    if len > MAX_LIST_LEN {
        return Err(PlanParseError::new(
            path,
            format!("list has {len} items, more than {MAX_LIST_LEN}"),
        ));
    }
    Ok(())
}

fn ident(path: &str, s: &str) -> Result<(), PlanParseError> {
    if s.trim().is_empty() {
        return Err(PlanParseError::new(path, "must be a non-empty string"));
    }
    if s.chars().count() > MAX_IDENT_LEN {
        return Err(PlanParseError::new(
            path,
            format!("identifier longer than {MAX_IDENT_LEN} characters"),
        ));
    }
    Ok(())
}

fn foreign(path: &str, kind: ExprKind, field: &str) -> PlanParseError {
    PlanParseError::new(
        &format!("{path}.{field}"),
        format!(
            "field '{field}' does not belong to a '{}' expression",
            kind.as_str()
        ),
    )
}

fn missing(path: &str, kind: ExprKind, field: &str) -> PlanParseError {
    PlanParseError::new(
        &format!("{path}.{field}"),
        format!("a '{}' expression requires '{field}'", kind.as_str()),
    )
}

/// Checks one expression: only its kind's fields are set, required ones present.
fn check_expr(path: &str, e: &Expr, depth: usize) -> Result<(), PlanParseError> {
    use ExprKind as K;
    if depth > MAX_DEPTH {
        return Err(PlanParseError::new(
            path,
            format!("expression nested deeper than {MAX_DEPTH}"),
        ));
    }
    let k = e.kind;
    // Foreign fields, in JSON key order of the spec table.
    let present: [(&str, bool, &[K]); 16] = [
        ("value", e.value.is_some(), &[K::Literal]),
        ("is_null", e.is_null, &[K::Literal]),
        ("alias", e.alias.is_some(), &[K::Column]),
        ("column_name", e.column_name.is_some(), &[K::Column]),
        ("func_name", e.func_name.is_some(), &[K::Func]),
        ("args", !e.args.is_empty(), &[K::Func]),
        ("is_aggregate", e.is_aggregate, &[K::Func]),
        ("distinct", e.distinct, &[K::Func]),
        ("op", e.op.is_some(), &[K::Binary, K::Unary]),
        ("left", e.left.is_some(), &[K::Binary]),
        ("right", e.right.is_some(), &[K::Binary]),
        ("expr", e.expr.is_some(), &[K::Unary, K::Cast]),
        ("cast_to", e.cast_to.is_some(), &[K::Cast]),
        ("whens", !e.whens.is_empty(), &[K::Case]),
        ("else_expr", e.else_expr.is_some(), &[K::Case]),
        ("query", e.query.is_some(), &[K::Subquery]),
    ];
    for (field, set, kinds) in present {
        if set && !kinds.contains(&k) {
            return Err(foreign(path, k, field));
        }
    }
    match k {
        K::Literal => {
            if e.value.is_none() && !e.is_null {
                return Err(PlanParseError::new(
                    &format!("{path}.value"),
                    "a 'literal' expression requires a non-null 'value' or 'is_null': true",
                ));
            }
            if e.is_null && e.value.is_some() {
                return Err(PlanParseError::new(
                    &format!("{path}.value"),
                    "a null literal ('is_null': true) must not carry a 'value'",
                ));
            }
        }
        K::Column => match &e.column_name {
            None => return Err(missing(path, k, "column_name")),
            Some(c) => {
                ident(&format!("{path}.column_name"), c)?;
                if let Some(a) = &e.alias {
                    ident(&format!("{path}.alias"), a)?;
                }
            }
        },
        K::Func => {
            match &e.func_name {
                None => return Err(missing(path, k, "func_name")),
                Some(f) => ident(&format!("{path}.func_name"), f)?,
            }
            list_len(&format!("{path}.args"), e.args.len())?;
            for (i, a) in e.args.iter().enumerate() {
                check_expr(&format!("{path}.args[{i}]"), a, depth + 1)?;
            }
        }
        K::Binary => {
            let Some(op) = e.op else {
                return Err(missing(path, k, "op"));
            };
            if op == Op::Not {
                return Err(PlanParseError::new(
                    &format!("{path}.op"),
                    "'NOT' is a unary operator; a 'binary' expression cannot use it",
                ));
            }
            let Some(left) = &e.left else {
                return Err(missing(path, k, "left"));
            };
            let Some(right) = &e.right else {
                return Err(missing(path, k, "right"));
            };
            check_expr(&format!("{path}.left"), left, depth + 1)?;
            check_expr(&format!("{path}.right"), right, depth + 1)?;
        }
        K::Unary => {
            let Some(op) = e.op else {
                return Err(missing(path, k, "op"));
            };
            if !matches!(op, Op::Not | Op::Plus | Op::Minus) {
                return Err(PlanParseError::new(
                    &format!("{path}.op"),
                    format!(
                        "'{}' is not a unary operator (expected NOT, + or -)",
                        op.as_str()
                    ),
                ));
            }
            let Some(operand) = &e.expr else {
                return Err(missing(path, k, "expr"));
            };
            check_expr(&format!("{path}.expr"), operand, depth + 1)?;
        }
        K::Cast => {
            if e.cast_to.is_none() {
                return Err(missing(path, k, "cast_to"));
            }
            let Some(operand) = &e.expr else {
                return Err(missing(path, k, "expr"));
            };
            check_expr(&format!("{path}.expr"), operand, depth + 1)?;
        }
        K::Case => {
            if e.whens.is_empty() {
                return Err(PlanParseError::new(
                    &format!("{path}.whens"),
                    "a 'case' expression requires at least one element in 'whens'",
                ));
            }
            list_len(&format!("{path}.whens"), e.whens.len())?;
            for (
                i,
                CaseWhen {
                    condition, result, ..
                },
            ) in e.whens.iter().enumerate()
            {
                check_expr(
                    &format!("{path}.whens[{i}].condition"),
                    condition,
                    depth + 1,
                )?;
                check_expr(&format!("{path}.whens[{i}].result"), result, depth + 1)?;
            }
            if let Some(x) = &e.else_expr {
                check_expr(&format!("{path}.else_expr"), x, depth + 1)?;
            }
        }
        K::Subquery => {
            let Some(q) = &e.query else {
                return Err(missing(path, k, "query"));
            };
            let root = format!("{path}.query");
            if q.select_items.len() != 1 {
                return Err(PlanParseError::new(
                    &format!("{root}.select_items"),
                    format!(
                        "a sub-query selects exactly one column (it selects {})",
                        q.select_items.len()
                    ),
                ));
            }
            check_plan_at(&root, q, depth)?;
        }
    }
    Ok(())
}
