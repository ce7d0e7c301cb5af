//! The terms a plan is assembled from: table aliases, literals, comparison operators and
//! conjunctions, and the error of an assembly that fails.

use nl2sql_plan::{Expr, LiteralValue, Op};
use serde_json::Value;

use crate::intent::CmpOp;
use crate::link::SchemaIndex;
use crate::text::split_ident;

/// Why a plan could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BuildError {
    /// Nothing in the schema builds it (no foreign-key path between its tables).
    Failed(String),
    /// The schema builds it more than one way and the question does not say which (two
    /// keys join the same tables): a refusal of the question, naming the ways.
    Ambiguous(String),
}

/// Table aliases: the initials of the table's words (`production_runs` → `pr`), made
/// unique with a digit and kept away from SQL keywords.
pub(super) fn aliases(index: &SchemaIndex, tables: &[usize]) -> Vec<String> {
    const KEYWORDS: [&str; 30] = [
        "as", "at", "by", "do", "go", "if", "in", "is", "no", "of", "on", "or", "to", "all", "and",
        "any", "asc", "end", "for", "key", "not", "set", "top", "use", "desc", "from", "case",
        "when", "then", "else",
    ];
    let mut out: Vec<String> = Vec::new();
    for &t in tables {
        let initials: String = split_ident(&index.tables[t].name)
            .iter()
            .filter_map(|w| w.chars().find(char::is_ascii_alphabetic))
            .collect();
        let base = if initials.is_empty() {
            "t".to_owned()
        } else {
            initials
        };
        let mut alias = if KEYWORDS.contains(&base.as_str()) {
            format!("{base}_t")
        } else {
            base.clone()
        };
        let mut k = 2;
        while out.contains(&alias) {
            alias = format!("{base}{k}");
            k += 1;
        }
        out.push(alias);
    }
    out
}

pub(super) fn literal(v: &Value) -> LiteralValue {
    match v {
        Value::Bool(b) => LiteralValue::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => LiteralValue::Int(i),
            None => LiteralValue::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => LiteralValue::Str(s.clone()),
        other => LiteralValue::Str(other.to_string()),
    }
}

pub(super) fn number_literal(x: f64) -> LiteralValue {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        LiteralValue::Int(x as i64)
    } else {
        LiteralValue::Float(x)
    }
}

pub(super) fn op_of(op: CmpOp) -> Op {
    match op {
        CmpOp::Eq => Op::Eq,
        CmpOp::NotEq => Op::NotEq,
        CmpOp::Gt => Op::Gt,
        CmpOp::GtEq => Op::GtEq,
        CmpOp::Lt => Op::Lt,
        CmpOp::LtEq => Op::LtEq,
    }
}

pub(super) fn negate(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Eq => CmpOp::NotEq,
        CmpOp::NotEq => CmpOp::Eq,
        CmpOp::Gt => CmpOp::LtEq,
        CmpOp::GtEq => CmpOp::Lt,
        CmpOp::Lt => CmpOp::GtEq,
        CmpOp::LtEq => CmpOp::Gt,
    }
}

pub(super) fn and(exprs: Vec<Expr>) -> Option<Expr> {
    exprs.into_iter().reduce(|l, r| Expr::binary(Op::And, l, r))
}
